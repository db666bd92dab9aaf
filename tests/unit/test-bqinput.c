/*
 * test-bqinput.c: the batch FILE read into items (bqinput.c, bqinputq.c,
 * bqdesc.c): JSONL lines and every error with its line number, the CCW
 * queue of tests/fixtures/queue (a parallel group, a sequential group, a
 * dependency, descriptions from issues and solutions), cycles, unknown
 * ids, missing files, executors, hostile input.
 */
#include <config.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bqfix.h"
#include "bqforecast.h"
#include "bqinput.h"
#include "tap.h"
#include "xmalloc.h"

/* Load dir/rel; the error (or "") into *errp, freed by the caller. */
static int
load(const char *dir, const char *rel, const char *root, struct bq_input *in,
    char **errp)
{
	char	*p, *err = NULL;
	int	 rc;

	xasprintf(&p, "%s/%s", dir, rel);
	rc = bqinput_load(p, root, in, &err);
	free(p);
	*errp = err != NULL ? err : xstrdup("");
	return rc;
}

/* FILE with text must fail with exactly "DIR/FILE" + want. */
static void
jsonl_err(const char *dir, const char *text, const char *want,
    const char *what)
{
	struct bq_input	 in;
	char		*err, *exp;
	int		 rc;

	bqfix_put(dir, "b.jsonl", text);
	rc = load(dir, "b.jsonl", NULL, &in, &err);
	xasprintf(&exp, "%s/b.jsonl%s", dir, want);
	tap_ok(rc == -1 && in.nitems == 0 && in.items == NULL, "%s: refused",
	    what);
	/* jansson's own words (after a "*") vary with its version */
	if (exp[strlen(exp) - 1] == '*')
		tap_ok(strncmp(err, exp, strlen(exp) - 1) == 0, "%s: the error: "
		    "%s", what, err);
	else
		tap_is_str(err, exp, "%s: the error", what);
	free(exp);
	free(err);
}

/* JSONL: keys, defaults, line numbers, the one parallel group. */
static void
t_jsonl(const char *dir)
{
	struct bq_input	 in;
	char		*err;

	xasprintf(&err, "%s/sub", dir);
	if (mkdir(err, 0755) != 0)
		tap_diag("mkdir %s failed", err);
	free(err);
	bqfix_put(dir, "b.jsonl",
	    "{\"title\": \"one\"}\n"
	    "\n   \t\r\n"
	    "{\"title\": \"two\", \"description\": \"do two\", \"mode\": "
	    "\"parallel\", \"max_iterations\": 7, \"tool\": \"codex\", "
	    "\"model\": \"gpt-5\", \"root\": \"sub\"}\r\n"
	    "{\"title\": \"three\", \"kind\": \"worker\", \"role\": "
	    "\"validate\", \"tool\": null}");
	tap_is_int(load(dir, "b.jsonl", NULL, &in, &err), 0, "jsonl loads");
	tap_is_str(err, "", "no error");
	tap_is_int((long long)in.nitems, 3, "three items");
	tap_ok(!in.is_queue, "not a queue");
	tap_is_str(in.items[0].id, "item-001", "ids by order");
	tap_is_str(in.items[2].id, "item-003", "ids by order (3)");
	tap_is_int(in.items[0].line, 1, "line of the first");
	tap_is_int(in.items[1].line, 4, "blank lines count");
	tap_is_int(in.items[2].line, 5, "line of the third");
	tap_is_str(in.items[0].description, "one", "description = title");
	tap_is_str(in.items[0].mode, "auto", "mode auto by default");
	tap_ok(in.items[0].tool == NULL && in.items[0].root == NULL &&
	    in.items[0].max_iterations == 0, "defaults left to the batch");
	tap_is_str(in.items[1].mode, "parallel", "mode");
	tap_is_int(in.items[1].max_iterations, 7, "max_iterations");
	tap_is_str(in.items[1].tool, "codex", "tool");
	tap_is_str(in.items[1].model, "gpt-5", "model");
	tap_ok(in.items[1].root != NULL && strstr(in.items[1].root, "/sub") &&
	    in.items[1].root[0] == '/', "root relative to FILE: %s",
	    in.items[1].root);
	tap_ok(in.items[1].kind == BQ_LOOP && in.items[2].kind == BQ_WORKER,
	    "kinds");
	tap_is_str(in.items[2].role, "validate", "a worker's role");
	tap_ok(in.ngroups == 1 && in.groups[0].parallel &&
	    in.groups[0].nitems == 3 && in.groups[0].items[2] == 2 &&
	    in.items[2].group == 0 && in.items[1].ndeps == 0,
	    "one parallel group, no deps");
	tap_ok(in.path[0] == '/', "path absolute");
	bqinput_free(&in);
	free(err);
	bqfix_put(dir, "b.jsonl", "{\"title\": \"w\", \"kind\": \"worker\"}\n");
	load(dir, "b.jsonl", NULL, &in, &err);
	tap_is_str(in.nitems == 1 ? in.items[0].role : "", "develop",
	    "a worker's role defaults to develop");
	bqinput_free(&in);
	free(err);
}

/* Every JSONL error names its line. */
static void
t_jsonl_errors(const char *dir)
{
	jsonl_err(dir, "{\"title\":\"a\"}\n{\"title\":\"b\"}\n"
	    "{\"title\":\"c\",\"foo\":1}\n", ":3: unknown key \"foo\"",
	    "unknown key");
	jsonl_err(dir, "{\"title\":\"a\"}\n{\"title\":\n",
	    ":2: malformed JSON: *", "malformed");
	jsonl_err(dir, "\n\n[1, 2]\n", ":3: not a JSON object", "an array");
	jsonl_err(dir, "{\"title\":\"a\",\"title\":\"b\"}",
	    ":1: malformed JSON: duplicate object key*", "a duplicate key");
	jsonl_err(dir, "{\"description\":\"x\"}", ":1: \"title\" is required",
	    "no title");
	jsonl_err(dir, "{\"title\":5}", ":1: \"title\" must be a string",
	    "title a number");
	jsonl_err(dir, "{\"title\":\"\"}", ":1: \"title\" must be 1 to 65536 "
	    "bytes", "title empty");
	jsonl_err(dir, "{\"title\":\"a\",\"model\":[]}",
	    ":1: \"model\" must be a string", "model an array");
	jsonl_err(dir, "{\"title\":\"a\",\"mode\":\"fast\"}",
	    ":1: mode \"fast\" is not auto or parallel", "mode");
	jsonl_err(dir, "{\"title\":\"a\",\"mode\":\"interactive\"}",
	    ":1: mode \"interactive\" is not auto or parallel",
	    "mode interactive (needs a terminal)");
	jsonl_err(dir, "{\"title\":\"a\",\"max_iterations\":0}",
	    ":1: max_iterations must be a positive integer (at most 1000000)",
	    "max_iterations 0");
	jsonl_err(dir, "{\"title\":\"a\"}\n{\"title\":\"a\",\"max_iterations\":"
	    "-3}", ":2: max_iterations must be a positive integer (at most "
	    "1000000)", "max_iterations negative");
	jsonl_err(dir, "{\"title\":\"a\",\"max_iterations\":2.5}",
	    ":1: max_iterations must be a positive integer (at most 1000000)",
	    "max_iterations a real");
	jsonl_err(dir, "{\"title\":\"a\",\"max_iterations\":\"3\"}",
	    ":1: max_iterations must be a positive integer (at most 1000000)",
	    "max_iterations a string");
	jsonl_err(dir, "{\"title\":\"a\",\"root\":\"nope\"}",
	    ":1: root \"nope\" is not an existing directory", "root missing");
	jsonl_err(dir, "{\"title\":\"a\",\"root\":\"b.jsonl\"}",
	    ":1: root \"b.jsonl\" is not an existing directory",
	    "root a file");
	jsonl_err(dir, "{\"title\":\"a\",\"tool\":\"co dex\"}",
	    ":1: tool \"co dex\" is not a tool name", "tool");
	jsonl_err(dir, "{\"title\":\"a\",\"kind\":\"team\"}",
	    ":1: kind \"team\" is not loop or worker", "kind");
	jsonl_err(dir, "{\"title\":\"a\",\"role\":\"debug\"}",
	    ":1: role needs \"kind\": \"worker\" and a role name",
	    "role without kind worker");
	jsonl_err(dir, "{\"title\":\"a\",\"files\":\"x.c\"}",
	    ":1: \"files\" must be an array of at most 1000 paths",
	    "files a string");
	jsonl_err(dir, "{\"title\":\"a\",\"files\":[\"/etc/x\"]}",
	    ":1: \"files\"[0] must be a relative path", "files absolute");
	jsonl_err(dir, "{\"title\":\"a\",\"worktree\":true}",
	    ":1: \"worktree\" must be true or false, true only with \"kind\": "
	    "\"worker\"", "worktree on a loop item");
	jsonl_err(dir, "", ": empty: no items", "an empty file");
	jsonl_err(dir, "\n  \n\t\n", ": empty: no items", "blank lines only");
}

/* Input built to hurt: it is refused cleanly, never a crash. */
static void
t_hostile(const char *dir)
{
	struct bq_input	 in;
	char		*err, *big, *p;
	size_t		 i;
	int		 fd, rc;

	jsonl_err(dir, "{\"title\":\"a\xff\"}",
	    ":1: malformed JSON: *", "invalid UTF-8");
	jsonl_err(dir, "{\"title\":\"a\\u0000b\"}",
	    ":1: malformed JSON: *", "an escaped NUL");
	big = xmalloc(300001);
	memset(big, '[', 300000);
	big[300000] = '\0';
	bqfix_put(dir, "b.jsonl", big);
	rc = load(dir, "b.jsonl", NULL, &in, &err);
	tap_ok(rc == -1 &&
	    strstr(err, ":1: malformed JSON: maximum parsing depth") != NULL,
	    "300000 nested arrays: %s", err);
	free(err);
	free(big);
	big = xmalloc(10001 * 16 + 1);
	for (p = big, i = 0; i < 10001; i++)
		p += sprintf(p, "{\"title\":\"t\"}\n");
	bqfix_put(dir, "b.jsonl", big);
	free(big);
	rc = load(dir, "b.jsonl", NULL, &in, &err);
	tap_ok(rc == -1 &&
	    strstr(err, "b.jsonl:10001: more than 10000 items") != NULL,
	    "10001 items: %s", err);
	free(err);
	xasprintf(&p, "%s/b.jsonl", dir);
	if ((fd = open(p, O_WRONLY | O_TRUNC)) < 0 ||
	    ftruncate(fd, 17 * 1024 * 1024) != 0)
		tap_diag("ftruncate failed");
	if (fd >= 0)
		close(fd);
	free(p);
	rc = load(dir, "b.jsonl", NULL, &in, &err);
	tap_ok(rc == -1 &&
	    strstr(err, "larger than 16777216 bytes") != NULL,
	    "a 17 MiB file: %s", err);
	free(err);
	rc = load(dir, "nope.jsonl", NULL, &in, &err);
	tap_ok(rc == -1 &&
	    strstr(err, "nope.jsonl: No such file") != NULL,
	    "a missing FILE: %s", err);
	free(err);
	rc = load(dir, ".workflow", NULL, &in, &err);
	tap_ok(rc == -1 &&
	    strstr(err, "not a regular file") != NULL,
	    "a directory: %s", err);
	free(err);
}

/*
 * The forecast of the fixture's queue: the bound solutions' tasks' files
 * are the hints; S-1 and S-3 both name src/auth/session.ts, the others
 * are disjoint.
 */
static void
t_queue_forecast(const struct bq_input *in)
{
	json_t	*f;
	size_t	**clash, *nclash, i;
	char	*s;

	tap_ok(in->items[2].nfiles == 2 &&
	    strcmp(in->items[2].files[0], "src/auth/store.ts") == 0 &&
	    strcmp(in->items[2].files[1], "src/auth/session.ts") == 0,
	    "forecast: S-3's hints are its tasks' files, once each");
	f = bqforecast_make(in, &clash, &nclash);
	s = json_dumps(f, JSON_COMPACT);
	tap_is_str(s, "[{\"items\":[\"S-1\",\"S-3\"],\"files\":"
	    "[\"src/auth/session.ts\"]}]", "forecast: S-1 and S-3 only");
	tap_ok(nclash[0] == 1 && clash[0][0] == 2 && nclash[2] == 1 &&
	    clash[2][0] == 0 && nclash[1] == 0 && nclash[3] == 0,
	    "forecast: the clash lists");
	for (i = 0; i < in->nitems; i++)
		free(clash[i]);
	free(clash);
	free(nclash);
	free(s);
	json_decref(f);
}

/* The fixture's queue: groups, the dependency, real instructions. */
static void
t_queue(const char *dir)
{
	struct bq_input	 in;
	struct bq_item	*it;
	char		*err;

	tap_is_int(load(dir, QUE_REL, NULL, &in, &err), 0, "the queue loads");
	tap_is_str(err, "", "no error");
	tap_ok(in.is_queue, "detected as a queue");
	tap_is_str(in.queue_id, "QUE-20260110-093000", "queue id");
	tap_is_int((long long)in.nitems, 4, "four items");
	tap_is_int((long long)in.ngroups, 2, "two groups");
	tap_ok(in.ngroups == 2 && strcmp(in.groups[0].id, "P1") == 0 &&
	    in.groups[0].parallel && in.groups[0].nitems == 2 &&
	    in.groups[0].items[0] == 0 && in.groups[0].items[1] == 1,
	    "P1: parallel, S-1 and S-2");
	tap_ok(in.ngroups == 2 && strcmp(in.groups[1].id, "S2") == 0 &&
	    !in.groups[1].parallel && in.groups[1].nitems == 2 &&
	    in.groups[1].items[0] == 2 && in.groups[1].items[1] == 3,
	    "S2: sequential, S-3 then S-4");
	it = &in.items[2];
	tap_ok(it->ndeps == 1 && it->deps[0] == 0, "S-3 depends on S-1");
	tap_ok(in.items[3].ndeps == 0 && in.items[3].group == 1, "S-4");
	tap_is_str(it->id, "S-3", "item_id");
	tap_is_str(it->issue_id, "ISS-20260110-003", "issue_id");
	tap_is_str(it->solution_id, "SOL-ISS-20260110-003-2", "solution_id");
	tap_is_str(it->status, "pending", "status");
	tap_is_str(it->title, "Session store leaks expired entries", "title");
	tap_ok(it->kind == BQ_LOOP && it->tool == NULL && it->root == NULL &&
	    strcmp(it->mode, "auto") == 0 && it->line == 0, "a loop, defaults");
	tap_ok(strstr(it->description, "Execute solution SOL-ISS-20260110-003-2 "
	    "for issue ISS-20260110-003 (queue QUE-20260110-093000, item S-3)")
	    != NULL, "description: what to do");
	tap_ok(strstr(it->description, "memory grows by ~40 MB") != NULL,
	    "description: the issue's context");
	tap_ok(strstr(it->description, "Approach: Store the expiry") != NULL,
	    "description: the bound solution's approach (not SOL-...-1)");
	tap_ok(strstr(it->description, "### T2: Evict expired entries [Update "
	    "auth]") != NULL, "description: the tasks");
	tap_ok(strstr(it->description, "- src/auth/store.ts (modify) at "
	    "SessionStore.get: drop and return undefined when expired") != NULL,
	    "description: files");
	tap_ok(strstr(it->description, "Implementation:\n1. Check expiresAt in "
	    "get\n2. Sweep") != NULL, "description: implementation steps");
	tap_ok(strstr(it->description, "Convergence criteria:\n- Memory stays "
	    "flat over a 24 h soak") != NULL, "description: convergence");
	tap_ok(strstr(it->description, "Test commands:\n- npm test -- session")
	    != NULL, "description: test commands");
	tap_ok(strstr(in.items[0].description, "Expected behaviour: Redirect "
	    "to /login") != NULL, "description: expected behaviour");
	tap_ok(strstr(in.items[0].description, "Commit: fix(client): ") !=
	    NULL, "description: commit");
	t_queue_forecast(&in);
	bqinput_free(&in);
	free(err);
}

/* The fixture's queue changed by edit, then loaded; the error or "". */
static char *
qload(const char *dir, const char *edit_key, const char *edit_json,
    int item, struct bq_input *in)
{
	json_t	*q = bqfix_load(dir, QUE_REL), *items;
	char	*err;

	items = json_object_get(q, "solutions");
	if (item >= 0)
		json_object_set_new(json_array_get(items, (size_t)item),
		    edit_key, bqfix_J(edit_json));
	else if (edit_key != NULL)
		json_object_set_new(q, edit_key, bqfix_J(edit_json));
	bqfix_put_json(dir, "q2.json", q);
	json_decref(q);
	/* the issues are found through ROOT: q2.json is outside queues/ */
	load(dir, "q2.json", dir, in, &err);
	return err;
}

/* A queue that must be refused with msg in its error. */
static void
q_refused(const char *dir, const char *key, const char *json, int item,
    const char *msg, const char *what)
{
	struct bq_input	 in;
	char		*err = qload(dir, key, json, item, &in);

	tap_ok(in.nitems == 0 && strstr(err, msg) != NULL, "%s: %s", what, err);
	free(err);
}

/* Dependencies, groups, executors: accepted and refused. */
static void
t_queue_edits(const char *dir)
{
	struct bq_input	 in;
	char		*err;

	err = qload(dir, NULL, NULL, -1, &in);
	tap_ok(in.nitems == 4 && err[0] == '\0', "a queue outside queues/ "
	    "finds its issues under ROOT");
	bqinput_free(&in);
	free(err);
	q_refused(dir, "depends_on", "[\"S-3\"]", 0,
	    "dependency cycle: S-1 -> S-3 -> S-1", "a cycle");
	q_refused(dir, "depends_on", "[\"S-4\"]", 3,
	    "dependency cycle: S-4 -> S-4", "depends on itself");
	q_refused(dir, "depends_on", "[\"S-9\"]", 1,
	    "item S-2: depends on \"S-9\", which is no item of the queue",
	    "an unknown dependency");
	q_refused(dir, "depends_on", "\"S-1\"", 1,
	    "depends_on must be an array", "depends_on a string");
	q_refused(dir, "item_id", "\"S-1\"", 1, "two items S-1", "twice S-1");
	q_refused(dir, "item_id", "\"../x\"", 1, "item 2: \"item_id\" must be "
	    "an id", "a path as item_id");
	q_refused(dir, "issue_id", "\"../../etc\"", 1, "\"issue_id\" must be an "
	    "id", "a path as issue_id");
	q_refused(dir, "status", "\"done\"", 0, "status is not one of",
	    "an unknown status");
	q_refused(dir, "executor", "\"robot\"", 0, "executor must be loop",
	    "an unknown executor");
	q_refused(dir, "role", "\"debug\"", 0, "\"role\" needs an executor",
	    "role of a loop");
	q_refused(dir, "execution_groups", "[{\"id\":\"P1\",\"type\":\"both\","
	    "\"solutions\":[\"S-1\"]}]", -1, "execution group 1 needs an id and "
	    "a type", "a group type");
	q_refused(dir, "execution_groups", "[{\"id\":\"P1\",\"type\":"
	    "\"parallel\",\"solutions\":[\"S-7\"]}]", -1,
	    "execution group P1 lists \"S-7\", which is no item", "a group id");
	q_refused(dir, "execution_groups", "[{\"id\":\"P1\",\"type\":"
	    "\"parallel\",\"solutions\":[\"S-1\"]},{\"id\":\"S2\",\"type\":"
	    "\"sequential\",\"solutions\":[\"S-1\"]}]", -1,
	    "item S-1 is in two execution groups", "an item in two groups");
	q_refused(dir, "solutions", "[]", -1, "empty: the queue has no items",
	    "no items");
	q_refused(dir, "solutions", "{}", -1, "needs a \"solutions\"",
	    "solutions an object");
	q_refused(dir, "solution_id", "\"SOL-ISS-20260110-001-9\"", 0,
	    "solution SOL-ISS-20260110-001-9 is not in", "an unknown solution");
	q_refused(dir, "issue_id", "\"ISS-20990101-001\"", 0,
	    "issue ISS-20990101-001 is not in", "an unknown issue");
	/* depends_on by solution id (queue-schema.json's wording) */
	err = qload(dir, "depends_on", "[\"SOL-ISS-20260110-002-1\"]", 3, &in);
	tap_ok(in.nitems == 4 && in.items[3].ndeps == 1 &&
	    in.items[3].deps[0] == 1, "depends_on by solution id: %s", err);
	bqinput_free(&in);
	free(err);
	/* an item no group lists joins its execution_group, else a new one */
	err = qload(dir, "execution_groups", "[{\"id\":\"P1\",\"type\":"
	    "\"parallel\",\"solutions\":[\"S-1\"]}]", -1, &in);
	tap_ok(in.ngroups == 2 && in.groups[0].nitems == 2 &&
	    in.groups[0].items[1] == 1 && strcmp(in.groups[1].id, "S2") == 0 &&
	    !in.groups[1].parallel && in.groups[1].nitems == 2,
	    "ungrouped items join their execution_group: %s", err);
	bqinput_free(&in);
	free(err);
	err = qload(dir, "executor", "\"agent\"", 1, &in);
	tap_ok(in.nitems == 4 && in.items[1].kind == BQ_WORKER &&
	    strcmp(in.items[1].tool, "claude") == 0 &&
	    strcmp(in.items[1].role, "develop") == 0, "executor agent: one "
	    "claude worker");
	bqinput_free(&in);
	free(err);
	err = qload(dir, "executor", "\"worker\"", 1, &in);
	tap_ok(in.nitems == 4 && in.items[1].kind == BQ_WORKER &&
	    in.items[1].tool == NULL, "executor worker: the configured tool");
	bqinput_free(&in);
	free(err);
}

/* Missing issues and solutions files, a legacy task-level queue. */
static void
t_queue_files(const char *dir)
{
	struct bq_input	 in;
	char		*err, *p;
	int		 rc;

	bqfix_put(dir, "q3.json", "{\"id\":\"QUE-20260111-000000\","
	    "\"tasks\":[{\"item_id\":\"T-1\",\"issue_id\":\"ISS-20260110-003\","
	    "\"solution_id\":\"SOL-ISS-20260110-003-2\",\"task_id\":\"T2\","
	    "\"status\":\"pending\"}]}");
	tap_is_int(load(dir, "q3.json", dir, &in, &err), 0, "a task queue");
	tap_ok(in.nitems == 1 && strstr(in.items[0].description,
	    "### T2: Evict") != NULL && strstr(in.items[0].description,
	    "### T1:") == NULL && strcmp(in.items[0].task_id, "T2") == 0,
	    "a task item gets its one task");
	tap_ok(in.nitems == 1 && in.ngroups == 1 &&
	    strcmp(in.groups[0].id, "P1") == 0, "no groups: one P1");
	bqinput_free(&in);
	free(err);
	rc = load(dir, "q3.json", NULL, &in, &err);
	tap_ok(rc == -1 &&
	    strstr(err, "outside .workflow/issues/queues/") != NULL,
	    "outside queues/ without ROOT: %s", err);
	free(err);
	xasprintf(&p, "rm '%s/.workflow/issues/solutions/"
	    "ISS-20260110-004.jsonl'", dir);
	tap_ok(system(p) == 0, "solutions file removed");
	free(p);
	load(dir, QUE_REL, NULL, &in, &err);
	tap_ok(in.nitems == 0 && strstr(err, "/.workflow/issues/solutions/"
	    "ISS-20260110-004.jsonl: No such file") != NULL,
	    "a missing solutions file named: %s", err);
	free(err);
	xasprintf(&p, "rm '%s/.workflow/issues/issues.jsonl'", dir);
	tap_ok(system(p) == 0, "issues file removed");
	free(p);
	load(dir, QUE_REL, NULL, &in, &err);
	tap_ok(in.nitems == 0 && strstr(err, "/.workflow/issues/issues.jsonl: "
	    "No such file") != NULL, "a missing issues file named: %s", err);
	free(err);
	bqfix_put(dir, ".workflow/issues/issues.jsonl", "{\"id\":\"x\"}\n[\n");
	load(dir, QUE_REL, NULL, &in, &err);
	tap_ok(in.nitems == 0 && strstr(err, "issues.jsonl:2: ") != NULL,
	    "a malformed issues file: %s", err);
	free(err);
}

/* examples/queue loads as the README says (read in place, not written). */
static void
t_example(void)
{
	struct bq_input	 in;
	char		*err = NULL;
	int		 rc;

	rc = bqinput_load(FIXTURES "/../../examples/queue/.workflow/issues/"
	    "queues/QUE-20260201-120000.json", NULL, &in, &err);
	tap_is_int(rc, 0, "examples/queue loads: %s", err ? err : "");
	tap_ok(rc == 0 && in.nitems == 4 && in.ngroups == 2 &&
	    in.groups[0].parallel && !in.groups[1].parallel &&
	    in.items[2].ndeps == 1 && in.items[2].deps[0] == 0 &&
	    strncmp(in.items[2].description, "Execute solution "
	    "SOL-ISS-20260201-003-1 for issue ISS-20260201-003 ", 66) == 0,
	    "examples/queue: P1 parallel, S2 sequential, S-3 after S-1, the "
	    "first line its roles read");
	bqinput_free(&in);
	free(err);
}

int
main(void)
{
	char	*dir = bqfix_project();

	t_jsonl(dir);
	t_jsonl_errors(dir);
	t_hostile(dir);
	t_queue(dir);
	t_queue_edits(dir);
	t_queue_files(dir);
	t_example();
	bqfix_rm(dir);
	free(dir);
	return tap_done();
}
