/*
 * test-merge.c: the pure parts of the run engine: TAP parsing (tap.c)
 * and a role's result into skill_state, the parallel merge and its
 * conflicts, clarification answers (merge.c).  No event loop, no agent.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "ccw-loop.h"
#include "loop.h"
#include "tap.h"
#include "xmalloc.h"

#define NOW	"2026-01-22T10:00:00.000Z"
#define LATER	"2026-01-22T10:05:00.000Z"

/* A JSON value from text, for fixtures; aborts the test on a typo. */
static json_t *
J(const char *text)
{
	json_error_t	 e;
	json_t		*j = json_loads(text, JSON_DECODE_ANY, &e);

	if (j == NULL) {
		fprintf(stderr, "fixture: %s: %s\n", e.text, text);
		exit(1);
	}
	return j;
}

/* A member path "a.b.c" of an object. */
static const json_t *
at(const json_t *o, const char *path)
{
	char		*p = xstrdup(path), *s, *save = NULL;
	const json_t	*j = o;

	for (s = strtok_r(p, ".", &save); s != NULL && j != NULL;
	    s = strtok_r(NULL, ".", &save))
		j = json_is_array(j) ? json_array_get(j, (size_t)atoi(s)) :
		    json_object_get(j, s);
	free(p);
	return j;
}

/* Compare a member with JSON text, whatever its type. */
static void
is_json(const json_t *o, const char *path, const char *want, const char *what)
{
	json_t	*w = J(want);
	char	*got = json_dumps(at(o, path), JSON_COMPACT | JSON_ENCODE_ANY);
	int	 eq;

	eq = at(o, path) != NULL && json_equal((json_t *)at(o, path), w);

	tap_ok(eq, "%s", what);
	if (!eq)
		tap_diag("%s: got %s, want %s", path, got ? got : "(absent)",
		    want);
	free(got);
	json_decref(w);
}

/* TAP text parsed. */
static json_t *
tp(const char *text)
{
	return tap_parse_text(text, strlen(text));
}

/* An empty skill_state as state_skeleton() makes it. */
static json_t *
skeleton(void)
{
	return J("{\"current_action\": null, \"last_action\": null,"
	    " \"completed_actions\": [], \"mode\": \"auto\","
	    " \"develop\": {\"total\": 0, \"completed\": 0, \"current_task\":"
	    " null, \"tasks\": [], \"last_progress_at\": null},"
	    " \"debug\": {\"active_bug\": null, \"hypotheses_count\": 0,"
	    " \"hypotheses\": [], \"confirmed_hypothesis\": null,"
	    " \"iteration\": 0, \"last_analysis_at\": null},"
	    " \"validate\": {\"pass_rate\": 0, \"coverage\": 0,"
	    " \"test_results\": [], \"passed\": false, \"failed_tests\": [],"
	    " \"last_run_at\": null}, \"errors\": []}");
}

/* TAP as a validate run's test command prints it. */
static void
test_tap(void)
{
	json_t	*t;

	t = tp("1..3\nok 1 - adds\nnot ok 2 - subtracts\n"
	    "ok 3 - divides # SKIP no divider\n");
	is_json(t, "count", "3", "tap: three test points");
	is_json(t, "planned", "3", "tap: the plan");
	is_json(t, "failed_tests", "[\"subtracts\"]", "tap: failed_tests");
	is_json(t, "pass_rate", "50.0", "tap: pass rate leaves skips out");
	is_json(t, "passed", "false", "tap: a failure: not passed");
	is_json(t, "test_results.0", "{\"test_name\": \"adds\", \"suite\":"
	    " \"tap\", \"status\": \"passed\", \"duration_ms\": 0,"
	    " \"error_message\": null, \"stack_trace\": null}",
	    "tap: a TestResult as the seed has it");
	is_json(t, "test_results.2.status", "\"skipped\"", "tap: a SKIP directive");
	is_json(t, "test_results.2.error_message", "\"SKIP no divider\"",
	    "tap: the skip's reason");
	json_decref(t);

	t = tp("ok 1 - a\nok 2 - b\n1..2\n");
	is_json(t, "passed", "true", "tap: all pass, plan at the end");
	is_json(t, "pass_rate", "100.0", "tap: 100%");
	json_decref(t);

	t = tp("not ok 1 - later # TODO not yet\n"
	    "ok 2 - lucky # todo\n");
	is_json(t, "test_results.0.status", "\"skipped\"",
	    "tap: a failing TODO is not a failure");
	is_json(t, "test_results.1.status", "\"passed\"",
	    "tap: a passing TODO passes");
	is_json(t, "failed_tests", "[]", "tap: TODO: no failed test");
	json_decref(t);

	t = tp("# Subtest: group\n    1..2\n    ok 1 - in\n"
	    "    not ok 2 - in2\nnot ok 1 - group\n1..1\n");
	is_json(t, "count", "1", "tap: an indented subtest counts once");
	is_json(t, "failed_tests", "[\"group\"]", "tap: by its summary line");
	json_decref(t);

	t = tp("1..3\nok 1 - a\nBail out! db down\n");
	is_json(t, "bail_out", "true", "tap: bail out");
	is_json(t, "passed", "false", "tap: bail out: not passed");
	is_json(t, "test_results.1.error_message", "\"db down\"",
	    "tap: the bail out's reason");
	is_json(t, "pass_rate", "33.3", "tap: a missing test counts as failed");
	json_decref(t);

	t = tp("1..4\nok 1\nok 2\n");
	is_json(t, "passed", "false", "tap: planned tests missing: not passed");
	is_json(t, "test_results.1.test_name", "\"test 2\"",
	    "tap: a nameless test gets one");
	json_decref(t);

	t = tp("not ok 1 - x\n# expected 2, got 3\n"
	    "not ok 2 - y\n  ---\n  message: boom\n  ...\nok 3 first\r\n"
	    "ok 4 - a \\# b\n");
	is_json(t, "test_results.0.error_message", "\"expected 2, got 3\"",
	    "tap: a diagnostic explains the failure");
	is_json(t, "test_results.1.error_message", "\"boom\"",
	    "tap: a YAML message explains the failure");
	is_json(t, "test_results.2.test_name", "\"first\"",
	    "tap: no dash, CRLF");
	is_json(t, "test_results.3.status", "\"passed\"",
	    "tap: an escaped # is no directive");
	json_decref(t);

	t = tp("make: nothing to do\nokay then\n");
	is_json(t, "count", "0", "tap: no TAP: no test");
	is_json(t, "planned", "null", "tap: no TAP: no plan");
	is_json(t, "passed", "false", "tap: no TAP: not passed");
	json_decref(t);
}

/* What an action came to. */
static void
test_outcome(void)
{
	static const struct {
		const char	*role, *result, *want, *what;
	} cases[] = {
		{ "develop", "{\"status\": \"success\"}", "success",
		    "success" },
		{ "develop", "{\"status\": \"failed\", \"timed_out\": true}",
		    "failed", "a timeout" },
		{ "develop", "{\"status\": \"unknown\", \"exit_code\": 0,"
		    " \"agent_status\": \"completed\"}", "success",
		    "no block, exit 0" },
		{ "develop", "{\"status\": \"unknown\", \"exit_code\": 1}",
		    "failed", "no block, exit 1" },
		{ "validate", "{\"status\": \"failed\", \"exit_code\": 1,"
		    " \"tap\": {\"count\": 3, \"planned\": 3,"
		    " \"worker_result\": false}}", "success",
		    "a validate run with TAP and no block ran its tests" },
		{ "validate", "{\"status\": \"failed\", \"exit_code\": 1,"
		    " \"tap\": {\"count\": 3, \"planned\": 3,"
		    " \"worker_result\": true}}", "failed",
		    "with a block, its status decides" },
		{ "debug", "{\"status\": \"needs_input\", \"questions\": []}",
		    "needs_input", "needs_input" },
	};
	json_t	*r;
	size_t	 i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		r = J(cases[i].result);
		tap_is_str(merge_outcome(cases[i].role, r), cases[i].want,
		    "outcome: %s", cases[i].what);
		json_decref(r);
	}
}

/* develop and the tasks file. */
static void
test_develop(void)
{
	json_t	*ss = skeleton(), *r, *tasks;

	r = J("{\"agent_id\": \"agent-2\", \"status\": \"success\", \"tool\":"
	    " \"bash\", \"summary\": \"added login\", \"files_changed\":"
	    " [\"src/a.c\", 7, \"\"]}");
	tap_is_int(merge_role(ss, "develop", r, NOW), 0, "develop: merged");
	is_json(ss, "develop.tasks.0", "{\"id\": \"task-001\", \"description\":"
	    " \"added login\", \"tool\": \"bash\", \"mode\": \"write\","
	    " \"status\": \"completed\", \"files_changed\": [\"src/a.c\"],"
	    " \"created_at\": \"" NOW "\", \"completed_at\": \"" NOW "\"}",
	    "develop: a new task, strings of files_changed only");
	is_json(ss, "develop.total", "1", "develop: total");
	is_json(ss, "develop.completed", "1", "develop: completed");
	is_json(ss, "develop.current_task", "\"task-001\"", "develop: current");
	is_json(ss, "develop.last_progress_at", "\"" NOW "\"",
	    "develop: last_progress_at");
	is_json(ss, "completed_actions", "[\"develop\"]",
	    "develop: completed_actions");
	is_json(ss, "current_action", "\"develop\"", "develop: current_action");
	json_decref(r);

	r = J("{\"status\": \"failed\", \"summary\": \"does not build\"}");
	merge_role(ss, "develop", r, LATER);
	is_json(ss, "develop.tasks.1.id", "\"task-002\"", "develop: task-002");
	is_json(ss, "develop.tasks.1.status", "\"failed\"",
	    "develop: a failed result fails its task");
	is_json(ss, "develop.total", "2", "develop: total 2");
	is_json(ss, "develop.completed", "1", "develop: still 1 completed");
	is_json(ss, "errors", "[{\"action\": \"develop\", \"message\":"
	    " \"does not build\", \"timestamp\": \"" LATER "\"}]",
	    "develop: the failure is in errors");
	is_json(ss, "completed_actions", "[\"develop\"]",
	    "develop: a failure is no completed action");
	json_decref(r);

	tasks = J("[{\"id\": \"T-9\", \"description\": \"planned\"},"
	    " {\"id\": \"task-001\"}, {\"description\": \"no id\"}]");
	merge_tasks(ss, tasks, LATER);
	is_json(ss, "develop.tasks.2", "{\"id\": \"T-9\", \"description\":"
	    " \"planned\", \"mode\": \"write\", \"status\": \"pending\","
	    " \"files_changed\": [], \"created_at\": \"" LATER "\","
	    " \"completed_at\": null}", "tasks file: a pending task");
	is_json(ss, "develop.total", "3", "tasks file: known ids and no id "
	    "are skipped");
	r = J("{\"status\": \"success\", \"summary\": \"did T-9\","
	    " \"files_changed\": [\"b.c\"]}");
	merge_role(ss, "develop", r, LATER);
	is_json(ss, "develop.tasks.2.status", "\"completed\"",
	    "develop: the pending task is the one done");
	is_json(ss, "develop.current_task", "\"T-9\"", "develop: current T-9");
	is_json(ss, "develop.total", "3", "develop: no new task for it");
	json_decref(r);
	json_decref(tasks);

	/* CCW's tasks, then a front end deletes one and reorders the rest */
	tasks = J("[{\"task_id\": \"C1\", \"prompt_template\": \"p1\"},"
	    " {\"task_id\": \"C2\", \"prompt_template\": \"p2\"},"
	    " {\"task_id\": \"C3\", \"prompt_template\": \"p3\"}]");
	merge_tasks(ss, tasks, LATER);
	json_decref(tasks);
	is_json(ss, "develop.total", "6", "CCW's three tasks added");
	tasks = J("[{\"task_id\": \"C3\", \"prompt_template\": \"p3\"},"
	    " {\"task_id\": \"C1\", \"prompt_template\": \"p1\"}]");
	merge_tasks(ss, tasks, LATER);
	json_decref(tasks);
	is_json(ss, "develop.total", "5", "a pending task deleted from the "
	    "file leaves the list");
	is_json(ss, "develop.tasks.3.id", "\"C3\"", "the file's order: C3 "
	    "first, in the places its tasks hold");
	is_json(ss, "develop.tasks.4.id", "\"C1\"", "then C1");
	is_json(ss, "develop.tasks.0.id", "\"task-001\"", "the engine's own "
	    "tasks stay where they were");
	/* C3 begun, then gone from the file: it stays, and C1 keeps its place */
	json_object_set_new(json_array_get(json_object_get(json_object_get(ss,
	    "develop"), "tasks"), 3), "status", json_string("in_progress"));
	tasks = J("[{\"task_id\": \"C1\", \"prompt_template\": \"p1\"}]");
	merge_tasks(ss, tasks, LATER);
	json_decref(tasks);
	is_json(ss, "develop.tasks.3.id", "\"C3\"", "a task begun stays when "
	    "the file drops it");
	is_json(ss, "develop.tasks.4.id", "\"C1\"", "and the rest keep "
	    "their places, none twice");
	json_object_set_new(json_array_get(json_object_get(json_object_get(ss,
	    "develop"), "tasks"), 3), "status", json_string("pending"));
	tasks = J("[]");
	merge_tasks(ss, tasks, LATER);
	json_decref(tasks);
	is_json(ss, "develop.total", "3", "every CCW task deleted: only the "
	    "engine's own and the done ones are left");
	json_decref(ss);
}

/* debug's hypotheses. */
static void
test_debug(void)
{
	json_t	*ss = skeleton(), *r;

	r = J("{\"status\": \"success\", \"summary\": \"H1 confirmed\","
	    " \"detailed_output\": \"Found it.\\n{\\\"hypotheses\\\":"
	    " [{\\\"description\\\": \\\"off by one\\\", \\\"status\\\":"
	    " \\\"confirmed\\\", \\\"likelihood\\\": 1, \\\"evidence\\\":"
	    " {\\\"x\\\": 1}}, {\\\"description\\\": \\\"race\\\","
	    " \\\"status\\\": \\\"maybe\\\"}]}\"}");
	merge_role(ss, "debug", r, NOW);
	is_json(ss, "debug.hypotheses_count", "2", "debug: two hypotheses");
	is_json(ss, "debug.hypotheses.0.id", "\"H1\"", "debug: H1");
	is_json(ss, "debug.hypotheses.0.evidence", "{\"x\": 1}",
	    "debug: evidence kept");
	is_json(ss, "debug.hypotheses.1.status", "\"pending\"",
	    "debug: an unknown status is pending");
	is_json(ss, "debug.hypotheses.1.likelihood", "2",
	    "debug: likelihood by order when not given");
	is_json(ss, "debug.hypotheses.1.evidence_criteria",
	    "{\"confirm\": \"\", \"reject\": \"\"}", "debug: criteria shape");
	is_json(ss, "debug.confirmed_hypothesis", "\"H1\"",
	    "debug: confirmed_hypothesis");
	is_json(ss, "debug.iteration", "1", "debug: iteration 1");
	is_json(ss, "debug.last_analysis_at", "\"" NOW "\"",
	    "debug: last_analysis_at");
	json_decref(r);
	r = J("{\"status\": \"success\", \"summary\": \"maybe the cache\"}");
	merge_role(ss, "debug", r, LATER);
	is_json(ss, "debug.hypotheses.2.description", "\"maybe the cache\"",
	    "debug: one hypothesis from the summary");
	is_json(ss, "debug.hypotheses.2.id", "\"H3\"", "debug: H3");
	is_json(ss, "debug.iteration", "2", "debug: iteration 2");
	json_decref(r);
	json_decref(ss);
}

/* validate with and without TAP. */
static void
test_validate(void)
{
	json_t	*ss = skeleton(), *r;

	r = J("{\"status\": \"unknown\", \"exit_code\": 1}");
	json_object_set_new(r, "tap", tp("1..2\nok 1 - a\n"
	    "not ok 2 - b\n"));
	merge_role(ss, "validate", r, NOW);
	is_json(ss, "validate.pass_rate", "50.0", "validate: pass_rate");
	is_json(ss, "validate.failed_tests", "[\"b\"]",
	    "validate: failed_tests");
	is_json(ss, "validate.passed", "false", "validate: not passed");
	is_json(ss, "validate.test_results.1.status", "\"failed\"",
	    "validate: test_results");
	is_json(ss, "validate.last_run_at", "\"" NOW "\"",
	    "validate: last run");
	is_json(ss, "completed_actions", "[\"validate\"]",
	    "validate: failing tests still complete the action");
	json_decref(r);
	r = J("{\"status\": \"failed\"}");
	json_object_set_new(r, "tap", tp("ok 1 - a\n**WORKER_RESULT:**\n"
	    "- status: failed\n"));
	is_json(r, "tap.worker_result", "true",
	    "tap: a WORKER_RESULT block seen");
	merge_role(ss, "validate", r, LATER);
	is_json(ss, "validate.passed", "false",
	    "validate: the worker's failed status wins over passing TAP");
	json_decref(r);
	r = J("{\"status\": \"success\"}");
	merge_role(ss, "validate", r, LATER);
	is_json(ss, "validate.passed", "true", "validate: success without TAP");
	is_json(ss, "validate.test_results", "[]", "validate: no results");
	is_json(ss, "validate.pass_rate", "100", "validate: 100");
	json_decref(r);
	json_decref(ss);
}

/*
 * No false pass: a validate run whose worker failed never passes, what
 * its TAP said notwithstanding; the error and the failure_reason carry
 * the outcome kind and the tool's words.
 */
static void
test_nofalsepass(void)
{
	json_t	*ss = skeleton(), *r;
	char	*s;

	r = J("{\"status\": \"success\", \"exit_code\": 0,"
	    " \"error_kind\": \"lost\", \"reason\": \"worker lost\"}");
	json_object_set_new(r, "tap", tp("1..1\nok 1 - a\n"));
	merge_role(ss, "validate", r, NOW);
	is_json(ss, "validate.passed", "false",
	    "nofalsepass: a lost worker's passing TAP is no pass");
	json_decref(r);
	r = J("{\"status\": \"success\", \"signal\": 9}");
	json_object_set_new(r, "tap", tp("1..1\nok 1 - a\n"));
	tap_is_str(merge_outcome("validate", r), "failed",
	    "nofalsepass: a tool killed by a signal failed");
	merge_role(ss, "validate", r, NOW);
	is_json(ss, "validate.passed", "false",
	    "nofalsepass: ... and did not pass");
	json_decref(r);
	r = J("{\"status\": \"failed\", \"exit_code\": 1,"
	    " \"error_kind\": \"tool_error\", \"stderr_tail\":"
	    " \"warming up\\nboom: disk on fire\\n\"}");
	merge_role(ss, "develop", r, NOW);
	is_json(ss, "errors.1.message", "\"tool_error: boom: disk on fire\"",
	    "nofalsepass: the error: the kind, the last stderr line");
	s = merge_fail_reason("develop", r);
	tap_is_str(s, "develop failed: tool_error: boom: disk on fire",
	    "nofalsepass: failure_reason: the kind and the reason");
	free(s);
	json_decref(r);
	r = J("{\"status\": \"failed\", \"exit_code\": 2}");
	s = merge_fail_reason("debug", r);
	tap_is_str(s, "debug failed: exit code 2",
	    "nofalsepass: no words, no kind: the exit code");
	free(s);
	json_decref(r);
	json_decref(ss);
}

/* The parallel step: role order, conflicts, errors. */
static void
test_parallel(void)
{
	json_t		*ss = skeleton(), *d, *b, *v, *c, *ss2;
	const json_t	*res[3];
	const char *const names[3] = { "develop", "debug", "validate" };

	d = J("{\"agent_id\": \"agent-2\", \"status\": \"success\","
	    " \"summary\": \"dev\", \"files_changed\": [\"src/a.c\","
	    " \"./src/b.c\"]}");
	b = J("{\"agent_id\": \"agent-3\", \"status\": \"failed\", \"summary\":"
	    " \"Worker timeout\", \"timed_out\": true, \"files_changed\":"
	    " [\"src/a.c\", \"src/a.c\"]}");
	v = J("{\"agent_id\": \"agent-4\", \"status\": \"success\","
	    " \"summary\": \"ok\", \"files_changed\": [\"src/b.c\","
	    " \"src/a.c\"]}");
	res[0] = d;
	res[1] = b;
	res[2] = v;
	c = merge_conflicts(names, res, 3);
	is_json(c, "0", "{\"file\": \"src/a.c\", \"workers\": [\"develop\","
	    " \"debug\", \"validate\"], \"resolution\": \"manual\"}",
	    "conflicts: a path three workers changed, in role order");
	is_json(c, "1", "{\"file\": \"src/b.c\", \"workers\": [\"develop\","
	    " \"validate\"], \"resolution\": \"manual\"}",
	    "conflicts: ./ does not hide a conflict");
	tap_is_int((long long)json_array_size(c), 2, "conflicts: two");
	json_decref(c);

	merge_parallel(ss, names, res, 3, NOW);
	is_json(ss, "parallel_results.merged_at", "\"" NOW "\"", "merged_at");
	is_json(ss, "parallel_results.debug.status", "\"failed\"",
	    "parallel_results: debug failed");
	is_json(ss, "parallel_results.debug.timed_out", "true",
	    "parallel_results: timed out");
	is_json(ss, "parallel_results.develop.files_changed",
	    "[\"src/a.c\", \"./src/b.c\"]",
	    "parallel_results: develop's files");
	is_json(ss, "parallel_results.conflicts.1.file", "\"src/b.c\"",
	    "parallel_results: conflicts");
	is_json(ss, "errors.0.action", "\"debug\"",
	    "parallel: the failure is in errors");
	is_json(ss, "errors.0.message", "\"worker timeout\"",
	    "parallel: a timeout says so");
	is_json(ss, "completed_actions", "[\"develop\", \"validate\"]",
	    "parallel: completed actions in role order");
	is_json(ss, "validate.passed", "true", "parallel: validate's section");
	is_json(ss, "develop.total", "1", "parallel: develop's section");

	/* the same results give the same state, whoever finished first */
	ss2 = skeleton();
	merge_parallel(ss2, names, res, 3, NOW);
	tap_ok(json_equal(ss, ss2), "parallel: deterministic");
	res[0] = NULL;
	c = merge_conflicts(names, res, 3);
	is_json(c, "", "[{\"file\": \"src/a.c\", \"workers\": [\"debug\","
	    " \"validate\"], \"resolution\": \"manual\"}]",
	    "conflicts: a missing worker counts for nothing");
	json_decref(c);
	/* observed by both, claimed by validate only: its own, no conflict */
	json_object_set_new(b, "files_claimed", json_array());
	json_object_set_new(v, "files_claimed", json_pack("[s]", "./src/a.c"));
	c = merge_conflicts(names, res, 3);
	is_json(c, "", "[]", "conflicts: a sibling's write a worker observed "
	    "but did not claim is no conflict");
	json_decref(c);
	json_decref(ss2);
	json_decref(ss);
	json_decref(d);
	json_decref(b);
	json_decref(v);
}

/* Clarification answers. */
static void
test_clarify(void)
{
	json_t	*qs, *a, *ss = skeleton();
	char	*why = NULL, *text;

	qs = J("[{\"id\": \"Q1\", \"question\": \"Which database?\","
	    " \"options\": [\"sqlite\", \"postgres\"],"
	    " \"recommended\": \"postgres\"},"
	    " {\"id\": \"Q2\", \"question\": \"Port?\", \"options\": [\"80\"],"
	    " \"recommended\": null}]");
	a = clarify_recommended(qs, &why);
	is_json(a, "", "[\"postgres\", \"80\"]",
	    "clarify: recommended, else the first option");
	tap_ok(why == NULL, "clarify: no reason when answered");
	text = clarify_answer_text(qs, a);
	tap_ok(strstr(text, "- Q1: Which database? -> postgres\n") != NULL,
	    "clarify: the answer text names question and answer");
	free(text);
	clarify_questions(ss, "develop", qs, NULL);
	is_json(ss, "open_questions.0.status", "\"open\"", "clarify: open");
	is_json(ss, "open_questions.1.phase", "\"develop\"", "clarify: phase");
	clarify_questions(ss, "develop", qs, a);
	is_json(ss, "open_questions.0.answer", "\"postgres\"",
	    "clarify: answered");
	is_json(ss, "open_questions.1.status", "\"answered\"",
	    "clarify: answered status");
	json_decref(a);
	json_decref(qs);

	qs = J("[{\"id\": \"Q1\", \"question\": \"Why?\", \"options\": [],"
	    " \"recommended\": null}]");
	a = clarify_recommended(qs, &why);
	tap_ok(a == NULL && why != NULL && strstr(why, "Q1: Why?") != NULL,
	    "clarify: no option: refused, naming the question");
	free(why);
	json_decref(qs);
	qs = json_array();
	a = clarify_recommended(qs, &why);
	tap_ok(a == NULL && why != NULL, "clarify: no question read: refused");
	free(why);
	json_decref(qs);
	json_decref(ss);
}

/* The auto sequence and the reasons a loop ends with. */
static void
test_next(void)
{
	json_t	*ss = skeleton(), *ok = J("{\"status\": \"success\"}"), *r, *ev;
	char	*s;

	tap_is_int(merge_next(LOOP_VALIDATE, ok, ss), LOOP_DEVELOP,
	    "next: validate not passed: develop again");
	json_object_set_new(json_object_get(ss, "validate"), "passed",
	    json_true());
	tap_is_int(merge_next(LOOP_VALIDATE, ok, ss), LOOP_COMPLETE,
	    "next: validate passed: complete");
	tap_is_int(merge_next(LOOP_DEVELOP, ok, ss), LOOP_DEBUG,
	    "next: develop: debug");
	tap_is_int(merge_next(LOOP_COMPLETE, ok, ss), LOOP_NROLES,
	    "next: complete: the end");
	r = J("{\"status\": \"success\", \"loop_back_to\": \"debug\"}");
	tap_is_int(merge_next(LOOP_VALIDATE, r, ss), LOOP_DEBUG,
	    "next: loop_back_to wins over a pass");
	json_decref(r);
	r = J("{\"status\": \"success\", \"loop_back_to\": \"complete\"}");
	tap_is_int(merge_next(LOOP_INIT, r, ss), LOOP_DEVELOP,
	    "next: loop_back_to complete is no jump back");
	json_decref(r);
	r = J("{\"status\": \"failed\", \"summary\": \"broken\","
	    " \"loop_back_to\": \"develop\"}");
	tap_is_int(merge_next(LOOP_DEBUG, r, ss), -1,
	    "next: a failure ends it");
	s = merge_fail_reason("debug", r);
	tap_is_str(s, "debug failed: broken", "reason: failed, its summary");
	free(s);
	json_decref(r);
	/* issue 9 item 3: a failed validation goes back, it does not end */
	r = J("{\"status\": \"failed\", \"agent_status\": \"completed\","
	    " \"loop_back_to\": \"develop\"}");
	tap_is_int(merge_next(LOOP_VALIDATE, r, ss), LOOP_DEVELOP,
	    "next: validate failed, loop_back_to develop: develop again");
	json_decref(r);
	r = J("{\"status\": \"failed\", \"loop_back_to\": \"debug\"}");
	tap_is_int(merge_next(LOOP_VALIDATE, r, ss), LOOP_DEBUG,
	    "next: validate failed, loop_back_to debug: debug");
	json_decref(r);
	r = J("{\"status\": \"failed\"}");
	tap_is_int(merge_next(LOOP_VALIDATE, r, ss), LOOP_DEVELOP,
	    "next: validate failed, no loop_back_to: develop");
	json_decref(r);
	r = J("{\"status\": \"failed\", \"timed_out\": true}");
	tap_is_int(merge_next(LOOP_VALIDATE, r, ss), -1,
	    "next: validate timed out: the end");
	json_decref(r);
	r = J("{\"status\": \"failed\", \"agent_status\": \"errored\"}");
	tap_is_int(merge_next(LOOP_VALIDATE, r, ss), -1,
	    "next: validate errored (no result): the end");
	json_decref(r);
	r = J("{\"status\": \"failed\", \"timed_out\": true}");
	s = merge_fail_reason("develop", r);
	tap_ok(strncmp(s, "develop: worker timeout", 23) == 0,
	    "reason: a timeout");
	free(s);
	json_decref(r);
	r = J("{\"status\": \"running\", \"current_iteration\": 2,"
	    " \"updated_at\": \"2026-01-22T10:00:00.000Z\","
	    " \"skill_state\": {\"action_index\": 3, \"mode\": \"auto\"}}");
	ev = merge_state_event(r, NULL, 0);
	json_decref(r);
	r = ev;
	is_json(r, "", "{\"status\": \"running\", \"state_status\":"
	    " \"running\", \"current_iteration\": 2, \"action_index\": 3,"
	    " \"mode\": \"auto\", \"max_iterations\": null,"
	    " \"current_action\": null, \"passed\": null, \"usage\": null,"
	    " \"updated_at\": \"2026-01-22T10:00:00.000Z\"}",
	    "LOOP_STATE_UPDATE fields, CCW's updated_at among them");
	json_decref(r);
	r = J("{\"status\": \"running\", \"skill_state\": {\"usage\": "
	    "{\"input_tokens\": 5, \"output_tokens\": 7, \"cost_usd\": "
	    "null}}}");
	ev = merge_state_event(r, NULL, 0);
	json_decref(r);
	r = ev;
	is_json(json_object_get(r, "usage"), "", "{\"input_tokens\": 5, "
	    "\"output_tokens\": 7, \"cost_usd\": null}",
	    "LOOP_STATE_UPDATE carries the loop's usage");
	json_decref(r);
	r = J("{\"status\": \"running\", \"current_iteration\": 3}");
	ev = merge_state_event(r, "stopped", 4);
	json_decref(r);
	r = ev;
	is_json(r, "", "{\"status\": \"stopped\", \"state_status\":"
	    " \"running\", \"current_iteration\": 3, \"exit_code\": 4,"
	    " \"failure_reason\": null, \"reason\": null,"
	    " \"final_status\": \"stopped\", \"total_iterations\": 3,"
	    " \"max_iterations\": null, \"action_index\": null,"
	    " \"current_action\": null, \"mode\": null, \"passed\": null,"
	    " \"usage\": null, \"updated_at\": null}",
	    "LOOP_COMPLETED of a signal's stop: final_status stopped, "
	    "total_iterations");
	json_decref(r);
	r = J("{\"status\": \"failed\", \"current_iteration\": 2,"
	    " \"failure_reason\": \"Manually stopped by user\"}");
	ev = merge_state_event(r, "stopped", 4);
	json_decref(r);
	r = ev;
	tap_ok(strcmp(json_string_value(json_object_get(r, "final_status")),
	    "failed") == 0 && strcmp(json_string_value(json_object_get(r,
	    "reason")), "Manually stopped by user") == 0,
	    "LOOP_COMPLETED: final_status is the file's, reason CCW's");
	json_decref(r);
	r = merge_step_event("parallel", "partial", 2, 1500);
	is_json(r, "", "{\"step_id\": \"parallel\", \"status\":"
	    " \"partial\", \"iteration\": 2, \"duration_ms\": 1500}",
	    "LOOP_STEP_COMPLETED fields");
	json_decref(r);
	r = J("{\"status\": \"failed\", \"error_kind\": \"rate_limited\", "
	    "\"usage\": {\"input_tokens\": 1, \"output_tokens\": 2, "
	    "\"cost_usd\": 0.5}}");
	ev = merge_event("develop", r);
	json_decref(r);
	r = ev;
	tap_ok(json_string_value(json_object_get(r, "error_kind")) != NULL &&
	    strcmp(json_string_value(json_object_get(r, "error_kind")),
	    "rate_limited") == 0 && json_integer_value(json_object_get(
	    json_object_get(r, "usage"), "output_tokens")) == 2,
	    "worker_result carries the worker's error_kind and usage");
	json_decref(r);
	json_decref(ok);
	json_decref(ss);
}

/* A log's last line for the status line. */
static void
test_last_line(void)
{
	char	 path[] = "/tmp/ccw-test-merge-XXXXXX", out[16];
	FILE	*fp;
	int	 fd;

	if ((fd = mkstemp(path)) < 0 || (fp = fdopen(fd, "w")) == NULL) {
		tap_ok(0, "last line: temp file");
		return;
	}
	fputs("first\nsecond\tline\n\n", fp);
	fflush(fp);
	tap_last_line(path, out, sizeof out);
	tap_is_str(out, "second line", "last line: blank lines skipped, "
	    "control characters blanked");
	fputs("caf\xc3\xa9 \xff ok\n", fp);
	fflush(fp);
	tap_last_line(path, out, sizeof out);
	tap_is_str(out, "caf\xc3\xa9 ? ok", "last line: UTF-8 kept, a bad "
	    "byte replaced");
	fputs("0123456789abcd\xc3\xa9\n", fp);
	fflush(fp);
	tap_last_line(path, out, sizeof out);
	tap_is_str(out, "0123456789abcd", "last line: cut before a character "
	    "that does not fit");
	fclose(fp);
	unlink(path);
	tap_last_line(path, out, sizeof out);
	tap_is_str(out, "", "last line: no file, nothing");
}

/* A validate model's TAP in its answer (issue 9 item 7). */
static void
test_answer_tap(void)
{
	json_t	*t;

	t = tap_parse_answer("Ran sh tests/run.sh:\n```\n  ok 1 - test_add\n"
	    "  not ok 2 - test_sub\n  # expected 1, got 5\n- ok 3 - test_mul\n"
	    "```\n", "1 of 3 failing");
	is_json(t, "failed_tests", "[\"test_sub\"]",
	    "answer TAP: indented, fenced, bulleted lines read");
	is_json(t, "pass_rate", "66.7", "answer TAP: pass_rate");
	is_json(t, "passed", "false", "answer TAP: not passed");
	is_json(t, "test_results.1.error_message", "\"expected 1, got 5\"",
	    "answer TAP: the diagnostic");
	is_json(t, "worker_result", "true", "answer TAP: from the block");
	json_decref(t);
	tap_ok(tap_parse_answer("all fine", NULL) == NULL,
	    "answer TAP: none in plain prose");
	tap_ok(tap_parse_answer(NULL, NULL) == NULL, "answer TAP: no answer");
}

/* init's plan into tasks; the context of each role (issue 9 item 11). */
static void
test_context(void)
{
	json_t	*ss = skeleton(), *res;
	char	*c;

	context_plan(ss, "Plan:\n1. Fix sub() in calc.c\n- Add a test for "
	    "negative numbers\n\ntest_command: `sh tests/run.sh`\n", NOW);
	is_json(ss, "develop.tasks", "[{\"id\": \"task-001\", \"description\":"
	    " \"Fix sub() in calc.c\", \"mode\": \"write\","
	    " \"status\": \"pending\", \"files_changed\": [], \"created_at\":"
	    " \"" NOW "\", \"completed_at\": null}, {\"id\": \"task-002\","
	    " \"description\": \"Add a test for negative numbers\","
	    " \"mode\": \"write\", \"status\": \"pending\","
	    " \"files_changed\": [], \"created_at\": \"" NOW "\","
	    " \"completed_at\": null}]", "plan: one task a line, markers gone");
	is_json(ss, "develop.total", "2", "plan: counted");
	is_json(ss, "test_command", "\"sh tests/run.sh\"",
	    "plan: the test command kept");
	context_plan(ss, "- another plan\n", NOW);
	is_json(ss, "develop.total", "2", "plan: tasks already there win");
	c = context_render(ss, "develop", NULL);
	tap_ok(strstr(c, "Your task now (task-001): Fix sub() in calc.c") !=
	    NULL && strstr(c, "task-002: Add a test") != NULL,
	    "develop context: the task at hand, then what is planned");
	free(c);
	res = J("{\"status\": \"success\", \"summary\": \"fixed sub\","
	    " \"files_changed\": [\"calc.c\"]}");
	merge_role(ss, "develop", res, NOW);
	json_decref(res);
	c = context_render(ss, "validate", NULL);
	tap_ok(strstr(c, "Develop's last change: fixed sub") != NULL &&
	    strstr(c, "Files it changed: calc.c") != NULL &&
	    strstr(c, "Test command: sh tests/run.sh") != NULL,
	    "validate context: develop's change, its files, init's command");
	free(c);
	c = context_render(ss, "debug", "make check");
	tap_ok(strstr(c, "Test command: make check") != NULL,
	    "debug context: the configured command wins");
	free(c);
	res = J("{\"status\": \"failed\", \"tap\": {\"count\": 2,"
	    " \"worker_result\": true, \"passed\": false, \"pass_rate\": 50,"
	    " \"failed_tests\": [\"test_sub\"], \"test_results\": [{"
	    "\"test_name\": \"test_sub\", \"status\": \"failed\","
	    " \"error_message\": \"expected 1, got 5\"}]}}");
	merge_role(ss, "validate", res, NOW);
	json_decref(res);
	c = context_render(ss, "develop", NULL);
	tap_ok(strstr(c, "Failing tests from the last validation (1):\n"
	    "- test_sub: expected 1, got 5") != NULL,
	    "develop context: the failing tests by name, with the message");
	tap_ok(strstr(c, "Your task now (task-002)") != NULL,
	    "develop context: the next pending task");
	free(c);
	c = context_render(ss, "complete", NULL);
	tap_is_str(c, "", "complete: no context");
	free(c);
	json_decref(ss);
}

/* Every group of checks, then the plan. */
int
main(void)
{
	test_tap();
	test_outcome();
	test_develop();
	test_debug();
	test_validate();
	test_nofalsepass();
	test_parallel();
	test_clarify();
	test_last_line();
	test_next();
	test_answer_tap();
	test_context();
	tap_is_int(loop_role_index("validate"), LOOP_VALIDATE, "role index");
	tap_is_int(loop_role_index("nope"), -1, "unknown role");
	return tap_done();
}
