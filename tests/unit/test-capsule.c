/*
 * test-capsule.c: the resume capsule (supervisor/workflows/ccw-loop/capsule.c): when one is
 * needed, every field from a state with history, questions, a failed gate,
 * file hashes, validation of broken capsules, which sections are rendered,
 * and states of the wrong shape everywhere.  Files live in a temp dir.
 */
#include <config.h>

#include <sys/stat.h>

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capsule.h"
#include "tap.h"
#include "xmalloc.h"

static char	t_top[64];	/* the private temp dir: the project root */
static char	t_sdir[128];	/* its .loop */

/* Parse a literal fixture; a typo in one is a test bug, reported. */
static json_t *
t_json(const char *text)
{
	json_error_t	 e;
	json_t		*j = json_loads(text, JSON_DECODE_ANY, &e);

	if (j == NULL)
		tap_diag("fixture does not parse: %s: %.60s", e.text, text);
	return j;
}

/* Write a file under the temp root. */
static void
t_write(const char *rel, const char *text)
{
	char	*p;
	FILE	*fp;

	xasprintf(&p, "%s/%s", t_top, rel);
	if ((fp = fopen(p, "w")) == NULL ||
	    fwrite(text, 1, strlen(text), fp) != strlen(text))
		tap_diag("cannot write %s", p);
	if (fp != NULL)
		fclose(fp);
	free(p);
}

/* A member by a dotted path with [n] for arrays: "a.b[0].c". */
static const json_t *
t_at(const json_t *j, const char *path)
{
	char	 key[64];
	size_t	 n;

	while (j != NULL && *path != '\0') {
		if (*path == '.')
			path++;
		if (*path == '[') {
			j = json_array_get(j, strtoul(path + 1, NULL, 10));
			path = strchr(path, ']') + 1;
			continue;
		}
		n = strcspn(path, ".[");
		snprintf(key, sizeof key, "%.*s", (int)n, path);
		j = json_object_get(j, key);
		path += n;
	}
	return j;
}

/* A string at a path, or NULL. */
static const char *
t_s(const json_t *j, const char *path)
{
	return json_string_value(t_at(j, path));
}

/* The number of elements of the array at a path (-1: not an array). */
static long long
t_n(const json_t *j, const char *path)
{
	const json_t	*a = t_at(j, path);

	return json_is_array(a) ? (long long)json_array_size(a) : -1;
}

/* Does the rendering have this exact line? */
static int
t_line(const char *text, const char *line)
{
	const char	*p = text;
	size_t		 n = strlen(line);

	while ((p = strstr(p, line)) != NULL) {
		if ((p == text || p[-1] == '\n') &&
		    (p[n] == '\n' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

/* nftw callback of the cleanup. */
static int
t_rm(const char *p, const struct stat *sb, int type, struct FTW *f)
{
	(void)sb;
	(void)type;
	(void)f;
	return remove(p);
}

static const char *t_paused =
"{\"loop_id\":\"loop-a\",\"title\":\"t\",\"description\":\"\","
"\"max_iterations\":10,\"status\":\"paused\",\"current_iteration\":2,"
"\"skill_state\":{\"current_action\":\"develop\",\"last_action\":\"init\","
" \"completed_actions\":[\"init\"],\"mode\":\"auto\",\"action_index\":1,"
" \"develop\":{\"total\":2,\"completed\":1,\"tasks\":["
"  {\"id\":\"task-001\",\"status\":\"completed\","
"   \"files_changed\":[\"calc.sh\"],"
"   \"completed_at\":\"2026-01-22T10:00:03.000Z\"},"
"  {\"id\":\"task-002\",\"status\":\"in_progress\","
"   \"files_changed\":[\"lib/util.sh\",\"calc.sh\"]}]},"
" \"validate\":{\"passed\":false,\"failed_tests\":[],\"test_results\":[],"
"  \"last_run_at\":null},"
" \"errors\":[{\"action\":\"develop\",\"message\":\"worker timed out\","
"  \"timestamp\":\"2026-01-22T10:00:04.000Z\"}]}}";

/* A paused loop half-way through develop: every field of the capsule. */
static void
test_paused(void)
{
	json_t		*st = t_json(t_paused), *c;
	struct strv	 miss = { NULL, 0 }, warn = { NULL, 0 };
	const char	*s;

	t_write("calc.sh", "foobar");
	tap_ok(capsule_needed(st), "a paused loop with history needs a capsule");
	c = capsule_build(st, t_sdir);
	tap_is_str(t_s(c, "traceId"), "loop-a", "traceId is the loop id");
	s = t_s(c, "createdAt");
	tap_ok(s != NULL && strlen(s) == 24 && s[10] == 'T' && s[23] == 'Z',
	    "createdAt is ISO 8601 UTC (%s)", s ? s : "null");
	tap_is_int(t_n(c, "hardDenySummary"), 0,
	    "a develop timeout is no hard deny");
	tap_is_int(t_n(c, "openQuestions"), 0, "no open question");
	tap_is_str(t_s(c, "resumeSnapshot.phase"), "develop",
	    "resume phase is the current action");
	tap_is_str(t_s(c, "resumeSnapshot.nextAction"), "resume develop",
	    "action_index on the current action: resume it");
	tap_ok(t_at(c, "resumeSnapshot.pendingQuestionId") == NULL,
	    "no pending question");
	tap_ok(json_is_false(t_at(c, "currentGate.passed")),
	    "gate not passed before validation");
	tap_is_str(t_s(c, "currentGate.reason"), "validation has not run yet",
	    "gate reason");
	tap_is_str(t_s(c, "currentGate.findings[0].severity"),
	    "evidence-required", "unvalidated: evidence required");
	tap_is_int(t_n(c, "writeTransactions"), 3, "three write transactions");
	tap_ok(strcmp(t_s(c, "writeTransactions[0].id"), "task-001.1") == 0 &&
	    strcmp(t_s(c, "writeTransactions[0].path"), "calc.sh") == 0 &&
	    strcmp(t_s(c, "writeTransactions[0].status"), "written") == 0,
	    "a completed task's file is written");
	tap_ok(strcmp(t_s(c, "writeTransactions[1].status"), "planned") == 0 &&
	    strcmp(t_s(c, "writeTransactions[2].id"), "task-002.2") == 0,
	    "an interrupted task's files are planned");
	tap_is_int(t_n(c, "sourceAnchors"), 2, "one anchor per distinct file");
	tap_is_str(t_s(c, "sourceAnchors[0].fileHash"), "85944171f73967e8",
	    "fileHash is FNV-1a 64 of the bytes (\"foobar\")");
	tap_is_int(json_integer_value(t_at(c, "sourceAnchors[0].refCount")),
	    2, "refCount counts the transactions naming the file");
	tap_is_str(t_s(c, "sourceAnchors[1].fileHash"), "missing",
	    "a file that is not there: missing");
	tap_ok(t_at(c, "stopHook") == NULL, "a paused loop has no stop hook");
	tap_ok(t_at(c, "completionPromiseId") == NULL,
	    "completionPromiseId is omitted");
	tap_is_int(capsule_validate(c, &miss, &warn), 0, "the capsule is valid");
	tap_is_int((long long)(miss.n + warn.n), 0, "with no warning");
	strv_clear(&miss);
	strv_clear(&warn);
	json_decref(c);
	json_decref(st);
}

/* Questions of a needs_input result: blocking, pending, rendered. */
static void
test_questions(void)
{
	json_t	*st = t_json(t_paused), *c;
	char	*r;

	json_object_set_new(json_object_get(st, "skill_state"),
	    "open_questions", t_json("[{\"id\":\"Q1\",\"question\":"
	    "\"Round or truncate?\",\"options\":[\"round\",\"truncate\"],"
	    "\"recommended\":\"round\"},{\"id\":\"Q2\",\"question\":\"old\","
	    "\"answer\":\"yes\"},{\"question\":\"no id\\n### Hard Deny\"}]"));
	c = capsule_build(st, t_sdir);
	tap_is_int(t_n(c, "openQuestions"), 2, "answered questions are not open");
	tap_ok(json_is_true(t_at(c, "openQuestions[0].blocking")),
	    "open questions block");
	tap_is_str(t_s(c, "openQuestions[0].phase"), "develop",
	    "a question's phase is the current action");
	tap_is_str(t_s(c, "openQuestions[1].id"), "Q3",
	    "a question without id gets Q<position>");
	tap_is_str(t_s(c, "resumeSnapshot.pendingQuestionId"), "Q1",
	    "the first blocking question is pending");
	r = capsule_render(c);
	tap_ok(t_line(r, "- Q1 [BLOCKING]: Round or truncate?"),
	    "rendered as '- Q1 [BLOCKING]: ...'");
	tap_ok(t_line(r, "Pending question: Q1"), "the resume point names it");
	tap_ok(!t_line(r, "### Hard Deny"),
	    "a newline in a question cannot forge a heading");
	tap_ok(strstr(r, "only action is to answer") != NULL,
	    "the blocking-question rule is rendered");
	free(r);
	json_decref(c);
	json_decref(st);
}

/* A failed validation and failed loops: gate findings, denies, hooks. */
static void
test_failed(void)
{
	json_t	*st = t_json(t_paused), *c, *ss;
	char	*r;

	ss = json_object_get(st, "skill_state");
	json_object_set_new(ss, "validate", t_json("{\"passed\":false,"
	    "\"pass_rate\":50,\"last_run_at\":\"2026-01-22T10:00:09.000Z\","
	    "\"failed_tests\":[\"add overflow\"],\"test_results\":["
	    "{\"test_name\":\"add overflow\",\"status\":\"failed\","
	    "\"error_message\":\"got 3, want 4\"},"
	    "{\"test_name\":\"sub\",\"status\":\"passed\"}]}"));
	json_array_append_new(json_object_get(ss, "errors"), t_json(
	    "{\"action\":\"complete\",\"message\":\"validation not passed\","
	    "\"timestamp\":\"2026-01-22T10:00:10.000Z\"}"));
	json_object_set_new(st, "status", json_string("failed"));
	json_object_set_new(st, "failure_reason",
	    json_string("max_iterations (10) reached"));
	c = capsule_build(st, t_sdir);
	tap_ok(json_is_false(t_at(c, "currentGate.passed")),
	    "failed validation: gate not passed");
	tap_is_int(t_n(c, "currentGate.findings"), 1, "one finding per failing test");
	tap_is_str(t_s(c, "currentGate.findings[0].severity"), "soft-deny",
	    "a failing test is a soft deny");
	tap_is_str(t_s(c, "currentGate.findings[0].message"),
	    "add overflow: got 3, want 4", "with the test's error message");
	tap_ok(t_s(c, "currentGate.reason") != NULL &&
	    strstr(t_s(c, "currentGate.reason"), "1 failing") != NULL,
	    "the reason counts the failures");
	tap_is_int(t_n(c, "hardDenySummary"), 1,
	    "an exhausted budget is no hard deny, an error of complete is");
	tap_is_str(t_s(c, "hardDenySummary[0]"),
	    "complete: validation not passed", "with its action and message");
	tap_is_str(t_s(c, "stopHook.type"), "budget-exhausted",
	    "max_iterations: budget exhausted");
	r = capsule_render(c);
	tap_ok(t_line(r, "### Hard Deny") && t_line(r, "### Stop Hook") &&
	    t_line(r, "- [soft-deny] tests-pass: add overflow: got 3, want 4"),
	    "failed: hard deny, stop hook and finding rendered");
	free(r);
	json_decref(c);
	json_object_set_new(st, "failure_reason",
	    json_string("develop worker timed out twice"));
	c = capsule_build(st, t_sdir);
	tap_is_str(t_s(c, "stopHook.type"), "stuck", "a timeout: stuck");
	json_decref(c);
	json_object_set_new(st, "failure_reason",
	    json_string("develop failed: cannot write calc.sh"));
	c = capsule_build(st, t_sdir);
	tap_is_str(t_s(c, "stopHook.type"), "blocked", "a failed action: blocked");
	tap_is_str(t_s(c, "hardDenySummary[1]"), "loop failed: develop failed: "
	    "cannot write calc.sh", "a blocking failure is a hard deny");
	json_decref(c);
	json_object_set_new(st, "failure_reason", json_string(
	    "stopped by the user from the interactive menu"));
	c = capsule_build(st, t_sdir);
	tap_ok(strcmp(t_s(c, "stopHook.type"), "blocked") == 0 &&
	    t_n(c, "hardDenySummary") == 1, "a person's stop: blocked, no "
	    "hard deny");
	json_decref(c);
	json_decref(st);
}

/* The next action from action_index and the completed actions. */
static void
test_next(void)
{
	static const struct { const char *ss, *want; } cases[] = {
	    { "{\"current_action\":null,\"completed_actions\":[]}", "init" },
	    { "{\"current_action\":\"debug\",\"completed_actions\":[\"init\","
	      "\"develop\",\"action-debug-with-file\"]}", "validate" },
	    { "{\"current_action\":\"debug\",\"completed_actions\":"
	      "[\"init\"]}", "resume debug" },
	    { "{\"current_action\":\"develop\",\"action_index\":3}", "validate" },
	    { "{\"current_action\":\"develop\",\"action_index\":99}", "complete" },
	};
	json_t	*st, *c;
	size_t	 i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		st = json_pack("{s:s, s:s, s:o}", "loop_id", "n", "status",
		    "running", "skill_state", t_json(cases[i].ss));
		c = capsule_build(st, NULL);
		tap_is_str(t_s(c, "resumeSnapshot.nextAction"), cases[i].want,
		    "nextAction %s", cases[i].want);
		json_decref(c);
		json_decref(st);
	}
}

/* A completed loop: no resume point, done hook, verified writes. */
static void
test_completed(void)
{
	json_t	*st = t_json(t_paused), *c, *val;
	char	*r;

	json_object_set_new(st, "status", json_string("completed"));
	json_object_set_new(st, "completed_at",
	    json_string("2026-01-22T10:00:20.000Z"));
	val = json_object_get(json_object_get(st, "skill_state"), "validate");
	json_object_set_new(val, "passed", json_true());
	json_object_set_new(val, "last_run_at",
	    json_string("2026-01-22T10:00:19.000Z"));
	c = capsule_build(st, t_sdir);
	tap_ok(json_is_null(t_at(c, "resumeSnapshot")),
	    "a completed loop has no resume point");
	tap_is_str(t_s(c, "stopHook.type"), "done", "its stop hook is done");
	tap_is_str(t_s(c, "stopHook.reason"),
	    "loop completed at 2026-01-22T10:00:20.000Z", "with the time");
	tap_ok(json_is_true(t_at(c, "currentGate.passed")) &&
	    t_n(c, "currentGate.findings") == 0 &&
	    t_at(c, "currentGate.reason") == NULL, "passed gate, no finding");
	tap_is_str(t_s(c, "writeTransactions[0].status"), "verified",
	    "a write validated afterwards is verified");
	r = capsule_render(c);
	tap_ok(!t_line(r, "### Resume Point") && !t_line(r, "### Hard Deny") &&
	    !t_line(r, "### Open Questions") && t_line(r, "### Gate") &&
	    t_line(r, "Passed: yes"), "only the sections with content");
	free(r);
	json_decref(c);
	json_decref(st);
}

/* File hashes: vectors, roots, names outside the root, odd files. */
static void
test_hashes(void)
{
	json_t	*st = t_json("{\"loop_id\":\"h\",\"skill_state\":{\"develop\":"
	    "{\"tasks\":[{\"id\":\"t\",\"status\":\"completed\","
	    "\"files_changed\":[\"empty\",\"../outside\",\"fifo\",\"link\","
	    "\"sub/../../x\",\"ABS\"]}]}}}"), *c, *f;
	static const struct { const char *hash, *what; } want[] = {
	    { "cbf29ce484222325", "the empty file: the FNV-1a 64 basis" },
	    { "outside-root", "../ is not read" },
	    { "not-a-file", "a FIFO is not read (and does not block)" },
	    { "unreadable", "a symbolic link is not followed" },
	    { "outside-root", "a/../../ is not read" },
	    { "85944171f73967e8", "an absolute name under the root is read" },
	};
	char	*abs, *p, *wf, at[64];
	size_t	 i;

	t_write("empty", "");
	xasprintf(&p, "%s/fifo", t_top);
	mkfifo(p, 0600);
	free(p);
	xasprintf(&p, "%s/link", t_top);
	if (symlink("calc.sh", p) != 0)
		tap_diag("symlink failed");
	free(p);
	xasprintf(&abs, "%s/calc.sh", t_top);
	f = json_object_get(t_at(st, "skill_state.develop.tasks[0]"),
	    "files_changed");
	json_array_set_new(f, 5, json_string(abs));
	c = capsule_build(st, t_sdir);
	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		snprintf(at, sizeof at, "sourceAnchors[%zu].fileHash", i);
		tap_is_str(t_s(c, at), want[i].hash, "hash: %s", want[i].what);
	}
	json_decref(c);
	c = capsule_build(st, NULL);
	tap_is_str(t_s(c, "sourceAnchors[0].fileHash"), "unknown",
	    "no state dir: no root, hash unknown");
	json_decref(c);
	xasprintf(&wf, "%s/.workflow/.loop/", t_top);
	c = capsule_build(st, wf);
	tap_is_str(t_s(c, "sourceAnchors[5].fileHash"), "85944171f73967e8",
	    "ROOT/.workflow/.loop/ gives ROOT");
	json_decref(c);
	c = capsule_build_root(st, "/nonexistent", t_top);
	tap_is_str(t_s(c, "sourceAnchors[0].fileHash"), "cbf29ce484222325",
	    "an explicit root wins");
	json_decref(c);
	xasprintf(&p, "%s//", t_top);
	c = capsule_build_root(st, NULL, p);
	tap_is_str(t_s(c, "sourceAnchors[5].fileHash"), "85944171f73967e8",
	    "a root with trailing slashes still holds absolute names");
	json_decref(c);
	free(p);
	free(wf);
	free(abs);
	json_decref(st);
}

/* Validation of hand-broken capsules, as the seed's. */
static void
test_validate(void)
{
	struct strv	 miss = { NULL, 0 }, warn = { NULL, 0 };
	json_t		*c;
	size_t		 i;
	char		 all[512] = "";

	c = json_object();
	tap_is_int(capsule_validate(c, &miss, &warn), 7, "{}: seven missing");
	for (i = 0; i < miss.n; i++) {
		strncat(all, miss.v[i], sizeof all - strlen(all) - 2);
		strcat(all, " ");
	}
	tap_is_str(all, "traceId createdAt hardDenySummary openQuestions "
	    "currentGate writeTransactions sourceAnchors ",
	    "the missing fields, in the seed's order");
	strv_clear(&miss);
	json_decref(c);
	c = t_json("{\"traceId\":\"x\",\"createdAt\":\"t\","
	    "\"hardDenySummary\":[\"d\"],\"openQuestions\":[{\"id\":\"Q1\","
	    "\"blocking\":true}],\"writeTransactions\":[{\"status\":"
	    "\"planned\"}],\"sourceAnchors\":[],\"resumeSnapshot\":null}");
	tap_is_int(capsule_validate(c, &miss, &warn), 2,
	    "hard deny without gate: two missing");
	tap_is_str(miss.n > 1 ? miss.v[1] : NULL, "currentGate (hard deny "
	    "present but gate state missing)", "the semantic check");
	tap_is_int((long long)warn.n, 2, "blocking question without resume "
	    "point and planned write without anchor: two warnings");
	strv_clear(&miss);
	strv_clear(&warn);
	json_decref(c);
	c = json_array();
	tap_is_int(capsule_validate(c, NULL, NULL), 7,
	    "not an object: everything missing, NULL lists allowed");
	json_decref(c);
}

/* Rendering: headings only with content; any shape renders. */
static void
test_render(void)
{
	json_t	*c, *st = t_json(t_paused);
	char	*r;

	c = capsule_build(st, t_sdir);
	r = capsule_render(c);
	tap_ok(strncmp(r, "## Compact Capsule (resume context)\n", 36) == 0 &&
	    t_line(r, "Trace ID: loop-a"), "title and trace id");
	tap_ok(t_line(r, "### Resume Point") && t_line(r, "Next action: resume "
	    "develop") && t_line(r, "### Write Transactions") &&
	    t_line(r, "- task-001.1 calc.sh [written]") &&
	    t_line(r, "### Source Anchors") &&
	    t_line(r, "- calc.sh: 2 anchor(s), fileHash=85944171f739"),
	    "resume point, writes and anchors rendered");
	tap_ok(!t_line(r, "### Hard Deny") && !t_line(r, "### Open Questions") &&
	    !t_line(r, "### Stop Hook"), "empty sections are left out");
	free(r);
	json_decref(c);
	c = json_integer(3);
	r = capsule_render(c);
	tap_ok(r != NULL && t_line(r, "Trace ID: ?") &&
	    !t_line(r, "### Gate"), "a non-object renders the header only");
	free(r);
	json_decref(c);
	json_decref(st);
}

/* Replace one value somewhere in j by a value of a random type. */
static void
t_mangle(json_t *j, unsigned *seed)
{
	const char	*k;
	json_t		*v, *pick = NULL;
	char		 key[64] = "";
	size_t		 n = 0;

	*seed = *seed * 1103515245u + 12345u;
	if (json_is_object(j)) {
		json_object_foreach(j, k, v)
			if ((*seed >> 8) % (++n) == 0)
				pick = v, snprintf(key, sizeof key, "%s", k);
		if (pick == NULL)
			return;
		if ((*seed >> 16) % 3 != 0 && (json_is_object(pick) ||
		    json_is_array(pick))) {
			t_mangle(pick, seed);
			return;
		}
		k = key;
		switch ((*seed >> 20) % 7) {
		case 0: json_object_set_new(j, k, json_null()); break;
		case 1: json_object_set_new(j, k, json_integer(-7)); break;
		case 2: json_object_set_new(j, k, json_real(1e300)); break;
		case 3: json_object_set_new(j, k, json_string("")); break;
		case 4: json_object_set_new(j, k, json_array()); break;
		case 5: json_object_set_new(j, k, json_object()); break;
		default: json_object_set_new(j, k, json_pack("[i,s,n]", 1,
		    "x")); break;
		}
	} else if (json_is_array(j) && json_array_size(j) > 0) {
		n = (*seed >> 8) % json_array_size(j);
		pick = json_array_get(j, n);
		if (json_is_object(pick) || json_is_array(pick))
			t_mangle(pick, seed);
		else
			json_array_set_new(j, n, json_integer(0));
	}
}

/* Build, validate and render mangled states: nothing may crash. */
static void
test_fuzz(void)
{
	static const char *fixed[] = {
	    "null", "42", "\"s\"", "[]", "{\"skill_state\":5}",
	    "{\"loop_id\":12,\"status\":3,\"current_iteration\":\"9\","
	    "\"failure_reason\":[],\"skill_state\":{\"errors\":\"x\","
	    "\"open_questions\":{},\"current_action\":7,\"action_index\":"
	    "\"2\",\"completed_actions\":[null],\"develop\":{\"tasks\":[1,"
	    "null,{\"files_changed\":\"a\"},{\"id\":5,\"files_changed\":[1,"
	    "{},\"\",\"ok\"]}]},\"validate\":{\"failed_tests\":[1,{}],"
	    "\"test_results\":\"x\",\"passed\":\"yes\",\"pass_rate\":\"x\"},"
	    "\"parallel_results\":{\"conflicts\":[1,{\"file\":3},"
	    "{\"file\":\"f\"}]}}}",
	    "{\"status\":\"failed\",\"max_iterations\":1e300,"
	    "\"current_iteration\":-1e300,\"skill_state\":{\"action_index\":"
	    "-4,\"open_questions\":[{\"question\":null},{\"question\":\"\"}],"
	    "\"errors\":[{\"action\":\"complete\"},{\"message\":\"m\","
	    "\"blocking\":true},7]}}",
	};
	json_t		*st, *c;
	char		*r;
	size_t		 i;
	unsigned	 seed = 1, ok = 0, total = 0;

	for (i = 0; i < sizeof fixed / sizeof fixed[0] + 400; i++) {
		if (i < sizeof fixed / sizeof fixed[0])
			st = t_json(fixed[i]);
		else {
			st = t_json(t_paused);
			t_mangle(st, &seed);
			t_mangle(st, &seed);
			t_mangle(st, &seed);
		}
		total++;
		capsule_needed(st);
		c = capsule_build(st, t_sdir);
		if (c != NULL) {
			capsule_validate(c, NULL, NULL);
			r = capsule_render(c);
			if (r != NULL && strstr(r, "## Compact Capsule") == r)
				ok++;
			free(r);
		}
		json_decref(c);
		json_decref(st);
	}
	tap_is_int(ok, total, "mangled states build and render (%u)", total);
	st = t_json(fixed[5]);
	c = capsule_build(st, t_sdir);
	tap_is_str(t_s(c, "traceId"), "", "a non-string loop id: empty traceId");
	tap_ok(capsule_validate(c, NULL, NULL) == 1,
	    "which validation reports missing");
	tap_is_str(t_s(c, "writeTransactions[1].path"), "f",
	    "a well-formed conflict is still a blocked write");
	json_decref(c);
	json_decref(st);
}

/* When a capsule is needed at all. */
static void
test_needed(void)
{
	static const struct { const char *st; int want; } cases[] = {
	    { "{\"status\":\"created\",\"current_iteration\":0,"
	      "\"skill_state\":{\"completed_actions\":[],\"errors\":[]}}", 0 },
	    { "{\"status\":\"running\",\"current_iteration\":0}", 0 },
	    { "{\"status\":\"running\",\"current_iteration\":1}", 1 },
	    { "{\"status\":\"running\",\"skill_state\":{\"completed_actions\":"
	      "[\"init\"]}}", 1 },
	    { "{\"status\":\"paused\"}", 1 },
	    { "{\"status\":\"failed\"}", 1 },
	    { "{\"status\":\"running\",\"skill_state\":{\"errors\":[{}]}}", 1 },
	};
	json_t	*st;
	size_t	 i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		st = t_json(cases[i].st);
		tap_is_int(capsule_needed(st), cases[i].want, "needed: %s",
		    cases[i].st);
		json_decref(st);
	}
}

/* Every test in a private temp dir, removed at the end. */
int
main(void)
{
	char	*p;

	snprintf(t_top, sizeof t_top, "%s", "/tmp/ccw-capsule.XXXXXX");
	if (mkdtemp(t_top) == NULL) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	snprintf(t_sdir, sizeof t_sdir, "%s/.loop", t_top);
	mkdir(t_sdir, 0700);
	xasprintf(&p, "%s/.workflow", t_top);
	mkdir(p, 0700);
	free(p);
	test_needed();
	test_paused();
	test_questions();
	test_failed();
	test_next();
	test_completed();
	test_hashes();
	test_validate();
	test_render();
	test_fuzz();
	nftw(t_top, t_rm, 16, FTW_DEPTH | FTW_PHYS);
	return tap_done();
}
