/*
 * test-bqqueue.c: CCW queue files written as CCW's tools write them
 * (bqqueue.c): item statuses, failure_details and failure_history,
 * _metadata counts, the queue's status, index.json, unknown members
 * kept, concurrent writers; issues.jsonl and issue-history.jsonl in
 * step (bqissue.c); and batch's JUnit report (batch-junit.c),
 * checked exactly and parsed back by python3's xml.etree.
 */
#include <config.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "batch-junit.h"
#include "bqfix.h"
#include "bqinput.h"
#include "bqqueue.h"
#include "tap.h"
#include "xmalloc.h"

/* item i of the queue on disk (a new reference to the whole queue in *qp) */
static json_t *
item(const char *dir, size_t i, json_t **qp)
{
	*qp = bqfix_load(dir, QUE_REL);
	return json_array_get(json_object_get(*qp, "solutions"), i);
}

/* One update; 0 or -1, the error freed (or said). */
static int
upd(const char *dir, const char *id, const char *status, const char *fd)
{
	char	*p, *err = NULL;
	json_t	*f = fd != NULL ? bqfix_J(fd) : NULL;
	int	 rc;

	xasprintf(&p, "%s/%s", dir, QUE_REL);
	rc = bqqueue_update(p, id, status, f, &err);
	if (rc != 0)
		tap_diag("update %s %s: %s", id, status, err);
	json_decref(f);
	free(err);
	free(p);
	return rc;
}

/* A member as a compact string ("" when absent). */
static char *
str(const json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	return v == NULL ? xstrdup("") : json_dumps(v, JSON_COMPACT |
	    JSON_ENCODE_ANY);
}

/* a member's compact text against want */
static void
is_member(const json_t *o, const char *key, const char *want,
    const char *what)
{
	char	*s = str(o, key);

	tap_is_str(s, want, "%s", what);
	free(s);
}

/* An ISO timestamp as JavaScript's toISOString writes it. */
static int
iso(const json_t *v)
{
	const char	*s = json_string_value(v);

	return s != NULL && strlen(s) == 24 && s[4] == '-' && s[10] == 'T' &&
	    s[19] == '.' && s[23] == 'Z';
}

/* executing, completed, _metadata, unknown members, the file's text. */
static void
t_status(const char *dir)
{
	json_t	*q, *orig, *it, *m, *ix, *e;
	char	*text, *p;
	FILE	*f;
	size_t	 n;

	q = bqfix_load(dir, QUE_REL);
	json_object_set_new(q, "x_custom", bqfix_J("{\"a\": [1, 2.5]}"));
	json_object_set_new(json_array_get(json_object_get(q, "solutions"), 0),
	    "x_note", bqfix_J("\"keep me\""));
	bqfix_put_json(dir, QUE_REL, q);
	orig = q;
	tap_is_int(upd(dir, "S-1", "executing", NULL), 0, "S-1 executing");
	it = item(dir, 0, &q);
	is_member(it, "status", "\"executing\"", "status");
	tap_ok(iso(json_object_get(it, "started_at")), "started_at as "
	    "toISOString");
	is_member(it, "x_note", "\"keep me\"", "an unknown item member kept");
	is_member(q, "x_custom", "{\"a\":[1,2.5]}", "an unknown member kept");
	m = json_object_get(q, "_metadata");
	is_member(m, "pending_count", "3", "pending_count");
	is_member(m, "executing_count", "1", "executing_count");
	is_member(m, "total_tasks", "4", "total_tasks");
	is_member(m, "version", "\"2.1\"", "version kept");
	is_member(m, "queue_type", "\"solution\"", "other _metadata kept");
	tap_ok(iso(json_object_get(m, "updated_at")) && strcmp(
	    json_string_value(json_object_get(m, "updated_at")),
	    "2026-01-10T09:30:00.000Z") != 0, "updated_at now");
	is_member(q, "status", "\"active\"", "queue still active");
	/* everything else as it was */
	json_object_del(it, "status");
	json_object_del(it, "started_at");
	json_object_del(json_array_get(json_object_get(orig, "solutions"), 0),
	    "status");
	json_object_del(q, "_metadata");
	json_object_del(orig, "_metadata");
	tap_ok(json_equal(q, orig), "no other member changed");
	json_decref(q);
	json_decref(orig);
	/* the text: JSON.stringify(q, null, 2) */
	xasprintf(&p, "%s/%s", dir, QUE_REL);
	text = xmalloc(1 << 16);
	f = fopen(p, "r");
	n = f != NULL ? fread(text, 1, (1 << 16) - 1, f) : 0;
	if (f != NULL)
		fclose(f);
	text[n] = '\0';
	tap_ok(strstr(text, "{\n  \"id\": \"QUE-20260110-093000\",\n  "
	    "\"status\": \"active\",\n  \"issue_ids\": [\n    \"ISS-") == text,
	    "indented by two, members in order");
	tap_ok(strstr(text, "\"semantic_priority\": 0.8,\n") != NULL &&
	    strstr(text, "\"a\": [\n      1,\n      2.5\n    ]") != NULL,
	    "reals as JavaScript prints them");
	tap_ok(n > 0 && text[n - 1] == '}', "no newline at the end (as CCW)");
	free(text);
	free(p);
	/* a resumed item keeps its started_at (nextAction) */
	it = item(dir, 0, &q);
	p = str(it, "started_at");
	json_decref(q);
	upd(dir, "S-1", "executing", NULL);
	it = item(dir, 0, &q);
	is_member(it, "started_at", p, "executing again keeps started_at");
	json_decref(q);
	free(p);
	tap_is_int(upd(dir, "S-1", "completed", NULL), 0, "S-1 completed");
	it = item(dir, 0, &q);
	tap_ok(iso(json_object_get(it, "completed_at")), "completed_at");
	is_member(json_object_get(q, "_metadata"), "completed_count", "1",
	    "completed_count");
	is_member(json_object_get(q, "_metadata"), "executing_count", "0",
	    "executing_count");
	json_decref(q);
	/* index.json: writeQueue's entry, our kept members */
	ix = bqfix_load(dir, ".workflow/issues/queues/index.json");
	e = json_array_get(json_object_get(ix, "queues"), 0);
	is_member(e, "id", "\"QUE-20260110-093000\"", "index: the entry");
	is_member(e, "completed_solutions", "1", "index: completed_solutions");
	is_member(e, "total_solutions", "4", "index: total_solutions");
	is_member(e, "priority", "1", "index: priority kept");
	is_member(e, "created_at", "\"20260110-093000\"", "index: created_at "
	    "kept");
	is_member(ix, "active_queue_id", "\"QUE-20260110-093000\"",
	    "index: active_queue_id");
	is_member(json_array_get(json_object_get(ix, "queues"), 1),
	    "completed_solutions", "1", "index: the other queue untouched");
	tap_is_int((long long)json_array_size(json_object_get(ix, "queues")),
	    2, "index: no entry added");
	json_decref(ix);
}

/* failed, failed again, retried: details, reason, history (CCW's). */
static void
t_failure(const char *dir)
{
	json_t	*q, *it, *d, *h;
	char	*s;

	tap_is_int(upd(dir, "S-2", "failed", "{\"task_id\": \"T1\", "
	    "\"error_type\": \"test_failure\", \"message\": \"2 tests failed\"}"),
	    0, "S-2 failed");
	it = item(dir, 1, &q);
	is_member(it, "failure_reason", "\"2 tests failed\"", "failure_reason");
	d = json_object_get(it, "failure_details");
	s = json_dumps(d, JSON_COMPACT);
	tap_ok(s != NULL && strncmp(s, "{\"task_id\":\"T1\",\"error_type\":"
	    "\"test_failure\",\"message\":\"2 tests failed\",\"timestamp\":\"",
	    83) == 0 && iso(json_object_get(d, "timestamp")),
	    "failure_details as parseFailureReason: %s", s);
	free(s);
	tap_ok(json_object_get(it, "failure_history") == NULL,
	    "no history on a first failure");
	tap_ok(iso(json_object_get(it, "completed_at")), "completed_at");
	is_member(json_object_get(q, "_metadata"), "failed_count", "1",
	    "failed_count");
	is_member(q, "status", "\"active\"", "queue active: items pending");
	json_decref(q);
	upd(dir, "S-2", "failed", NULL);
	it = item(dir, 1, &q);
	d = json_object_get(it, "failure_details");
	is_member(d, "error_type", "\"execution_error\"", "plain failure: "
	    "execution_error");
	is_member(d, "message", "\"Unknown failure\"", "done --fail's default");
	h = json_object_get(it, "failure_history");
	tap_ok(json_array_size(h) == 1 && strcmp(json_string_value(
	    json_object_get(json_array_get(h, 0), "error_type")),
	    "test_failure") == 0, "the earlier failure kept in history");
	json_decref(q);
	tap_is_int(upd(dir, "S-2", "pending", NULL), 0, "S-2 retried");
	it = item(dir, 1, &q);
	h = json_object_get(it, "failure_history");
	tap_is_int((long long)json_array_size(h), 2, "retry: history of two");
	tap_ok(json_object_get(it, "failure_details") == NULL &&
	    json_object_get(it, "failure_reason") == NULL &&
	    json_object_get(it, "started_at") == NULL &&
	    json_object_get(it, "completed_at") == NULL,
	    "retry: reason, details, started_at, completed_at gone");
	is_member(json_object_get(q, "_metadata"), "failed_count", "0",
	    "failed_count back to 0");
	json_decref(q);
}

/* The queue's status when every item ended; index completed_at. */
static void
t_queue_end(const char *dir)
{
	json_t	*q, *ix, *e;

	upd(dir, "S-2", "completed", NULL);
	upd(dir, "S-3", "completed", NULL);
	upd(dir, "S-4", "failed", "{\"message\": \"no docs dir\"}");
	q = bqfix_load(dir, QUE_REL);
	is_member(q, "status", "\"failed\"", "every item ended, one failed: "
	    "failed");
	json_decref(q);
	upd(dir, "S-4", "pending", NULL);
	q = bqfix_load(dir, QUE_REL);
	is_member(q, "status", "\"active\"", "a retry makes it active again");
	json_decref(q);
	upd(dir, "S-4", "completed", NULL);
	q = bqfix_load(dir, QUE_REL);
	is_member(q, "status", "\"completed\"", "all completed: completed");
	is_member(json_object_get(q, "_metadata"), "completed_count", "4",
	    "completed_count 4");
	json_decref(q);
	ix = bqfix_load(dir, ".workflow/issues/queues/index.json");
	e = json_array_get(json_object_get(ix, "queues"), 0);
	is_member(e, "status", "\"completed\"", "index: completed");
	tap_ok(iso(json_object_get(e, "completed_at")), "index: completed_at");
	json_decref(ix);
}

/* Refusals leave the file as it was; no temp file is left behind. */
static void
t_errors(const char *dir)
{
	char	*p, *err = NULL, *before, *after;
	json_t	*q, *f;
	struct dirent *de;
	DIR	*d;
	int	 n = 0, rc;

	xasprintf(&p, "%s/%s", dir, QUE_REL);
	q = bqfix_load(dir, QUE_REL);
	before = json_dumps(q, JSON_COMPACT);
	json_decref(q);
	rc = bqqueue_update(p, "S-9", "completed", NULL, &err);
	tap_ok(rc == -1 &&
	    strstr(err, "no item S-9 in the queue") != NULL, "an unknown "
	    "item: %s", err);
	free(err);
	rc = bqqueue_update(p, "S-1", "done", NULL, &err);
	tap_ok(rc == -1 &&
	    strcmp(err, "invalid item status \"done\"") == 0, "a bad status");
	free(err);
	f = bqfix_J("[1]");
	tap_ok(bqqueue_update(p, "S-1", "failed", f, &err) == -1,
	    "failure_details not an object");
	json_decref(f);
	free(err);
	q = bqfix_load(dir, QUE_REL);
	after = json_dumps(q, JSON_COMPACT);
	json_decref(q);
	tap_is_str(after, before, "the file unchanged");
	free(before);
	free(after);
	free(p);
	xasprintf(&p, "%s/nope.json", dir);
	rc = bqqueue_update(p, "S-1", "completed", NULL, &err);
	tap_ok(rc == -1 &&
	    strstr(err, "nope.json: No such file") != NULL, "a missing queue");
	free(err);
	free(p);
	bqfix_put(dir, "bad.json", "{\"solutions\": [");
	xasprintf(&p, "%s/bad.json", dir);
	rc = bqqueue_update(p, "S-1", "completed", NULL, &err);
	tap_ok(rc == -1 &&
	    strstr(err, "bad.json") != NULL, "a malformed queue: %s", err);
	free(err);
	free(p);
	xasprintf(&p, "%s/.workflow/issues/queues", dir);
	if ((d = opendir(p)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] != '.')
				n++;
		closedir(d);
	}
	tap_is_int(n, 2, "queues/: the queue and index.json, no temp file");
	free(p);
}

/* Four writers at once lose no update (the flock); no index: made. */
static void
t_concurrent(const char *dir)
{
	static const char *const ids[] = { "S-1", "S-2", "S-3", "S-4" };
	json_t	*q, *ix;
	pid_t	 pid[4];
	int	 i, k, st, bad = 0;
	char	*p;

	xasprintf(&p, "%s/.workflow/issues/queues/index.json", dir);
	unlink(p);
	free(p);
	for (i = 0; i < 4; i++)
		upd(dir, ids[i], "pending", NULL);
	for (i = 0; i < 4; i++) {
		if ((pid[i] = fork()) == 0) {
			for (k = 0; k < 15; k++)
				if (upd(dir, ids[i], k % 2 ? "pending" :
				    "executing", NULL) != 0)
					_exit(1);
			_exit(upd(dir, ids[i], "completed", NULL) != 0);
		}
	}
	for (i = 0; i < 4; i++)
		if (waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			bad++;
	tap_is_int(bad, 0, "four writers succeeded");
	q = bqfix_load(dir, QUE_REL);
	is_member(json_object_get(q, "_metadata"), "completed_count", "4",
	    "no update lost");
	is_member(q, "status", "\"completed\"", "the queue completed");
	json_decref(q);
	ix = bqfix_load(dir, ".workflow/issues/queues/index.json");
	tap_ok(ix != NULL && json_array_size(json_object_get(ix, "queues")) ==
	    1, "a missing index.json is made (readQueueIndex's default)");
	is_member(json_array_get(json_object_get(ix, "queues"), 0),
	    "created_at", "\"20260110-093000\"", "created_at as CCW derives "
	    "it from this id");
	json_decref(ix);
}

/* The lines of dir/rel, NUL-separated count; the text in *textp. */
static int
lines(const char *dir, const char *rel, char **textp)
{
	char	*p, buf[65536];
	FILE	*f;
	size_t	 n = 0;
	int	 c = 0;

	xasprintf(&p, "%s/%s", dir, rel);
	if ((f = fopen(p, "r")) != NULL) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	free(p);
	for (p = buf; *p != '\0'; p++)
		c += *p == '\n';
	*textp = xstrdup(buf);
	return c;
}

/* issues.jsonl in step with the items (updateIssue, moveIssueToHistory). */
static void
t_issues(const char *dir)
{
	struct bq_input	 in;
	char		*idir, *err = NULL, *text, *before;
	int		 rc;

	xasprintf(&idir, "%s/.workflow/issues", dir);
	bqfix_put(dir, ".workflow/issues/issue-history.jsonl",
	    "{\"id\":\"ISS-20251201-009\",\"status\":\"completed\"}");
	lines(dir, ".workflow/issues/issues.jsonl", &before);
	tap_is_int(bqqueue_issue_update(idir, "ISS-20260110-002", "executing",
	    &err), 0, "issue executing");
	tap_is_int(lines(dir, ".workflow/issues/issues.jsonl", &text), 4,
	    "still four issues");
	tap_ok(strstr(text, "\n{\"id\":\"ISS-20260110-002\",\"title\":\"Add "
	    "rate limit headers to the API\",\"status\":\"executing\",") !=
	    NULL, "status in place, one JSON.stringify line");
	tap_ok(strstr(text, "\"updated_at\":\"2026-01-10T09:29:40.010Z\"") ==
	    NULL, "updated_at now");
	tap_ok(strncmp(text, before, strchr(before, '\n') - before + 1) == 0,
	    "the other lines as they were");
	free(text);
	bqqueue_issue_update(idir, "ISS-20260110-003", "failed", &err);
	bqqueue_issue_update(idir, "ISS-20260110-004", "pending", &err);
	lines(dir, ".workflow/issues/issues.jsonl", &text);
	tap_ok(strstr(text, "\"ISS-20260110-003\",\"title\":\"Session store "
	    "leaks expired entries\",\"status\":\"failed\"") != NULL &&
	    strstr(text, "\"ISS-20260110-004\",\"title\":\"Document the "
	    "session lifecycle\",\"status\":\"queued\"") != NULL,
	    "failed -> failed, a retry (pending) -> queued");
	free(text);
	tap_is_int(bqqueue_issue_update(idir, "ISS-20260110-001", "completed",
	    &err), 0, "issue completed");
	tap_is_int(lines(dir, ".workflow/issues/issues.jsonl", &text), 3,
	    "it left issues.jsonl");
	tap_ok(strstr(text, "ISS-20260110-001") == NULL, "gone from it");
	free(text);
	bqqueue_issue_update(idir, "ISS-20260110-002", "completed", &err);
	tap_is_int(lines(dir, ".workflow/issues/issue-history.jsonl", &text), 3,
	    "appended to issue-history.jsonl (a newline added first)");
	tap_ok(strstr(text, "\"completed\"}\n{\"id\":\"ISS-20260110-001\",")
	    != NULL && strstr(text, "}\n{\"id\":\"ISS-20260110-002\",") != NULL &&
	    strstr(text, "\"status\":\"completed\"") != NULL &&
	    strstr(text, "\"completed_at\":\"20") != NULL,
	    "with status completed and completed_at");
	free(text);
	free(before);
	lines(dir, ".workflow/issues/issues.jsonl", &before);
	tap_is_int(bqqueue_issue_update(idir, "ISS-20990101-001", "failed",
	    &err), 0, "an unknown issue: nothing to do");
	lines(dir, ".workflow/issues/issues.jsonl", &text);
	tap_is_str(text, before, "issues.jsonl unchanged");
	free(text);
	free(before);
	tap_is_int(bqqueue_issue_update(idir, "ISS-20260110-003", "blocked",
	    &err), 0, "blocked: no issue status for it");
	free(idir);
	xasprintf(&idir, "%s/nowhere", dir);
	tap_is_int(bqqueue_issue_update(idir, "ISS-20260110-003", "failed",
	    &err), 0, "no issues.jsonl: nothing to do");
	free(idir);
	xasprintf(&idir, "%s/%s", dir, QUE_REL);
	rc = bqinput_load(idir, NULL, &in, &err);
	tap_ok(rc == 0 && in.nitems == 4, "the queue still loads: finished "
	    "issues found in issue-history.jsonl: %s", err ? err : "");
	bqinput_free(&in);
	free(err);
	free(idir);
}

/* The JUnit report: exact text, escaping, then python3's parser. */
static void
t_junit(const char *dir)
{
	json_t	*items = bqfix_J("[{\"id\": \"S-1\", \"title\": \"a & <b>\", "
	    "\"status\": \"completed\", \"failure_reason\": null, "
	    "\"duration_ms\": 1500}, {\"id\": \"S-2\", \"title\": \"it's \\\"q\\\"\", "
	    "\"status\": \"failed\", \"failure_reason\": \"tests\\u0001 failed\\n"
	    "x < y\", \"duration_ms\": 250}, {\"id\": \"S-3\", \"title\": \"t\", "
	    "\"status\": \"blocked\", \"failure_reason\": null, \"duration_ms\": 0}]");
	char	*err = NULL, *text, *p, *cmd;
	int	 rc;
	const char *want =
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<testsuites tests=\"3\" failures=\"1\" skipped=\"1\" time=\"1.750\">\n"
	    "  <testsuite name=\"q&amp;1\" tests=\"3\" failures=\"1\" errors=\"0\" "
	    "skipped=\"1\" time=\"1.750\">\n"
	    "    <testcase classname=\"q&amp;1\" name=\"S-1: a &amp; &lt;b&gt;\" "
	    "time=\"1.500\"/>\n"
	    "    <testcase classname=\"q&amp;1\" "
	    "name=\"S-2: it&apos;s &quot;q&quot;\" "
	    "time=\"0.250\">\n"
	    "      <failure message=\"tests failed&#10;x &lt; y\" type=\"failed\">"
	    "tests failed\nx &lt; y</failure>\n"
	    "    </testcase>\n"
	    "    <testcase classname=\"q&amp;1\" name=\"S-3: t\" time=\"0.000\">\n"
	    "      <skipped message=\"blocked\"/>\n"
	    "    </testcase>\n"
	    "  </testsuite>\n</testsuites>\n";

	text = junit_text("q&1", items, &err);
	tap_is_str(text, want, "junit: the exact report");
	free(text);
	xasprintf(&p, "%s/report.xml", dir);
	tap_is_int(junit_write(p, "q&1", items, &err), 0, "junit written");
	json_decref(items);
	xasprintf(&cmd, "python3 -c 'import sys, xml.etree.ElementTree as E; "
	    "r = E.parse(sys.argv[1]).getroot(); s = r.find(\"testsuite\"); "
	    "c = s.findall(\"testcase\"); "
	    "sys.exit(0 if (s.get(\"tests\"), s.get(\"failures\"), "
	    "s.get(\"skipped\"), len(c), c[1].find(\"failure\").get(\"message\"), "
	    "c[0].get(\"name\")) == (\"3\", \"1\", \"1\", 3, "
	    "\"tests failed\\nx < y\", "
	    "\"S-1: a & <b>\") else 1)' '%s'", p);
	if (system("command -v python3 >/dev/null") != 0)
		tap_skip("python3 not installed");
	else
		tap_is_int(system(cmd), 0, "junit: python3's xml.etree reads it "
		    "back");
	free(cmd);
	items = bqfix_J("[{\"id\": \"x\", \"title\": \"bad \\u0002 utf8\", "
	    "\"status\": \"running\"}]");
	text = junit_text("s", items, &err);
	tap_ok(text != NULL && strstr(text, "name=\"x: bad  utf8\"") != NULL &&
	    strstr(text, "<failure message=\"running\" type=\"running\">") !=
	    NULL, "junit: an unfinished item fails; control characters dropped");
	free(text);
	json_decref(items);
	items = bqfix_J("{}");
	rc = junit_write(p, "s", items, &err);
	tap_ok(rc == -1 && err != NULL,
	    "junit: items must be an array");
	free(err);
	json_decref(items);
	free(p);
}

int
main(void)
{
	char	*dir = bqfix_project();

	t_status(dir);
	t_failure(dir);
	t_queue_end(dir);
	t_errors(dir);
	t_concurrent(dir);
	t_issues(dir);
	t_junit(dir);
	bqfix_rm(dir);
	free(dir);
	return tap_done();
}
