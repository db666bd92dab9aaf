/*
 * test-progress-rebuild.c: a loop's side files read back (progress.c's
 * Markdown, rebuild.c): the bytes of develop.md, its round trip through
 * rebuild, skill_state from worker outputs and the tasks file, hostile
 * content skipped; what could not be recovered is named.
 */
#include <config.h>

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progfix.h"
#include "ccw-loop.h"
#include "progress.h"
#include "state.h"
#include "tap.h"
#include "xmalloc.h"

/* Timestamps differ from run to run: "2026-01-22T10:00:00Z" becomes "TS". */
static void
no_ts(char *s)
{
	static const char	 pat[] = "dddd-dd-ddTdd:dd:ddZ";
	char			*p;
	size_t			 i;

	for (p = s; *p != '\0'; p++) {
		for (i = 0; pat[i] != '\0'; i++)
			if (pat[i] == 'd' ? (p[i] < '0' || p[i] > '9') :
			    p[i] != pat[i])
				break;
		if (pat[i] == '\0') {
			memcpy(p, "TS", 2);
			memmove(p + 2, p + 20, strlen(p + 20) + 1);
		}
	}
}

/* string or null */
static int
sn(const json_t *v)
{
	return v != NULL && (json_is_string(v) || json_is_null(v));
}

/* The seed's skill_state shape: every section, every field, right types. */
static int
shape_ok(const json_t *ss)
{
	const json_t	*d, *g, *v, *e;
	size_t		 i;

	d = json_object_get(ss, "develop");
	g = json_object_get(ss, "debug");
	v = json_object_get(ss, "validate");
	if (!sn(json_object_get(ss, "current_action")) ||
	    !sn(json_object_get(ss, "last_action")) ||
	    !json_is_array(json_object_get(ss, "completed_actions")) ||
	    !json_is_string(json_object_get(ss, "mode")) ||
	    !json_is_array(json_object_get(ss, "errors")))
		return 0;
	if (!json_is_integer(json_object_get(d, "total")) ||
	    !json_is_integer(json_object_get(d, "completed")) ||
	    !sn(json_object_get(d, "current_task")) ||
	    !json_is_array(json_object_get(d, "tasks")) ||
	    !sn(json_object_get(d, "last_progress_at")))
		return 0;
	json_array_foreach(json_object_get(d, "tasks"), i, e)
		if (!json_is_string(json_object_get(e, "id")) ||
		    !json_is_string(json_object_get(e, "description")) ||
		    !json_is_string(json_object_get(e, "status")) ||
		    !json_is_array(json_object_get(e, "files_changed")))
			return 0;
	if (!sn(json_object_get(g, "active_bug")) ||
	    !json_is_integer(json_object_get(g, "hypotheses_count")) ||
	    !json_is_array(json_object_get(g, "hypotheses")) ||
	    !sn(json_object_get(g, "confirmed_hypothesis")) ||
	    !json_is_integer(json_object_get(g, "iteration")) ||
	    !sn(json_object_get(g, "last_analysis_at")))
		return 0;
	if (!json_is_number(json_object_get(v, "pass_rate")) ||
	    !json_is_number(json_object_get(v, "coverage")) ||
	    !json_is_array(json_object_get(v, "test_results")) ||
	    !json_is_boolean(json_object_get(v, "passed")) ||
	    !json_is_array(json_object_get(v, "failed_tests")) ||
	    !sn(json_object_get(v, "last_run_at")))
		return 0;
	json_array_foreach(json_object_get(ss, "errors"), i, e)
		if (!json_is_string(json_object_get(e, "action")) ||
		    !json_is_string(json_object_get(e, "message")) ||
		    !json_is_string(json_object_get(e, "timestamp")))
			return 0;
	return 1;
}

/* The real validator (state.c) on a fresh state carrying this skill_state. */
static int
validates(const json_t *ss)
{
	struct strv	 errs = { NULL, 0 };
	json_t		*st;
	size_t		 i;
	int		 n;

	if ((st = state_new(&ccw_loop_state, "v-1", "t", "d", 10)) == NULL || ss == NULL)
		return 0;
	json_object_set_new(st, "skill_state", json_deep_copy(ss));
	n = state_validate(&ccw_loop_state, st, &errs);
	for (i = 0; i < errs.n; i++)
		tap_diag("state_validate: %s", errs.v[i]);
	strv_clear(&errs);
	json_decref(st);
	return n == 0;
}

/*
 * A fixture from tests/state/progress-md/: $srcdir when make check runs
 * us, else found from this file's path as the compiler saw it (a build
 * directory's make, or the source directory).
 */
static char *
fixture(const char *name)
{
	const char	*src = getenv("srcdir"), *slash;
	char		*path, *buf;

	if (src != NULL)
		xasprintf(&path, "%s/tests/state/progress-md/%s", src, name);
	else {
		slash = strrchr(__FILE__, '/');
		xasprintf(&path, "%.*s../state/progress-md/%s",
		    slash != NULL ? (int)(slash - __FILE__ + 1) : 0, __FILE__,
		    name);
	}
	if ((buf = pf_read(path)) == NULL)
		tap_diag("cannot read fixture %s", path);
	free(path);
	return buf;
}

/* A JSON fixture, or an empty object so that the checks fail, not crash. */
static json_t *
fixture_json(const char *name)
{
	char	*s = fixture(name);
	json_t	*j = s != NULL ? json_loads(s, 0, NULL) : NULL;

	free(s);
	return j != NULL ? j : json_object();
}

/* Markdown: the bytes of develop.md, numbering, and the round trip. */
static void
test_md(void)
{
	json_t		*dev, *dbg, *val, *ss = NULL, *t, *hyp;
	struct strv	 un = { NULL, 0 };
	char		*err, *s, *want;
	int		 rc;

	dev = fixture_json("develop.json");
	dbg = fixture_json("debug.json");
	val = fixture_json("validate.json");
	want = fixture("develop.md");
	rc = progress_append_md(&ccw_loop_state, pf_sfd, ID, "develop", dev, NULL, &err);
	s = pf_slurp(ID ".progress/develop.md");
	if (s != NULL)
		no_ts(s);
	tap_ok(rc == 0, "develop.md appended");
	tap_is_str(s, want, "develop.md: header once, then the section");
	free(s);
	free(want);
	rc = progress_append_md(&ccw_loop_state, pf_sfd, ID, "debug", dbg, NULL, &err);
	rc += progress_append_md(&ccw_loop_state, pf_sfd, ID, "debug", dbg, NULL, &err);
	s = pf_slurp(ID ".progress/debug.md");
	tap_ok(rc == 0 && s != NULL && strstr(s, "### Iteration 2 - ") &&
	    strstr(s, "# Understanding Document") == s &&
	    strstr(s + 1, "# Understanding Document") == NULL,
	    "debug.md: sections numbered, header written once");
	free(s);
	pf_spew(ID ".progress/validate.md", "# Validation Report\n\nhalf a li");
	rc = progress_append_md(&ccw_loop_state, pf_sfd, ID, "validate", val, NULL, &err);
	s = pf_slurp(ID ".progress/validate.md");
	tap_ok(rc == 0 && s != NULL && strstr(s, "half a li\n### Iteration 1 - "),
	    "a torn last line is closed before the section");
	free(s);
	rc = progress_append_md(&ccw_loop_state, pf_sfd, ID, "init", dev, NULL, &err);
	tap_ok(rc == -1 && err != NULL, "no progress file for role init");
	free(err);

	unlinkat(pf_sfd, ID "/tasks.jsonl", 0);
	rc = progress_rebuild(&ccw_loop_state, pf_sfd, ID,
	    &ss, &un, &err);
	tap_ok(rc == 0 && err == NULL && shape_ok(ss),
	    "rebuild: skill_state has the seed's shape");
	tap_ok(json_equal(json_object_get(json_object_get(ss, "develop"),
	    "tasks"), json_object_get(dev, "tasks")),
	    "round trip: develop tasks survive (pipes, commas, newlines, "
	    "empty and absent fields)");
	tap_ok(validates(ss), "the rebuilt skill_state passes state_validate");
	json_object_del(dev, "tasks");
	hyp = json_deep_copy(json_object_get(dbg, "hypotheses"));
	json_object_del(dbg, "hypotheses");
	t = json_object_get(ss, "develop");
	tap_ok(json_is_integer(json_object_get(t, "total")) &&
	    json_integer_value(json_object_get(t, "total")) == 3 &&
	    json_integer_value(json_object_get(t, "completed")) == 1 &&
	    json_equal(json_object_get(t, "current_task"),
	    json_object_get(dev, "current_task")),
	    "round trip: develop counts and current task");
	t = json_object_get(ss, "debug");
	s = json_dumps(t, JSON_COMPACT);
	tap_ok(json_equal(json_object_get(t, "hypotheses"), hyp) ||
	    (tap_diag("%s", s), 0), "round trip: hypotheses survive (evidence, "
	    "criteria, likelihood)");
	free(s);
	json_decref(hyp);
	json_object_del(t, "hypotheses");
	tap_ok(json_equal(t, dbg), "round trip: debug's other fields");
	t = json_object_get(ss, "validate");
	tap_ok(json_equal(t, val), "round trip: test results, pass rate, "
	    "failed tests");
	tap_ok(pf_has(&un, "title") && pf_has(&un, "status") &&
	    pf_has(&un, "skill_state.mode") && pf_has(&un, "skill_state.errors") &&
	    !pf_has(&un, "skill_state.develop.tasks") &&
	    !pf_has(&un, "skill_state.validate.test_results"),
	    "unrecovered: API fields, mode, errors; not what the files held");
	strv_clear(&un);
	json_decref(ss);
	json_decref(dev);
	json_decref(dbg);
	json_decref(val);
}

/* Nothing there: the empty skeleton, and everything named as unrecovered. */
static void
test_rebuild_empty(void)
{
	json_t		*ss = NULL;
	struct strv	 un = { NULL, 0 };
	char		*err;
	int		 rc;

	rc = progress_rebuild(&ccw_loop_state, pf_sfd, "nothing-here",
	    &ss, &un, &err);
	tap_ok(rc == 0 && err == NULL && shape_ok(ss) && validates(ss),
	    "rebuild of nothing: the empty skeleton, in shape, valid");
	tap_ok(ss != NULL && json_array_size(json_object_get(json_object_get(ss,
	    "develop"), "tasks")) == 0 && json_is_null(json_object_get(ss,
	    "current_action")), "no tasks, no current action");
	tap_ok(pf_has(&un, "title") && pf_has(&un, "description") &&
	    pf_has(&un, "max_iterations") && pf_has(&un, "created_at") &&
	    pf_has(&un, "status"), "API fields listed as unrecovered");
	tap_ok(pf_has(&un, "skill_state.develop.tasks") &&
	    pf_has(&un, "skill_state.debug.hypotheses") &&
	    pf_has(&un, "skill_state.validate.test_results") &&
	    pf_has(&un, "skill_state.validate.failed_tests") &&
	    pf_has(&un, "skill_state.current_action") &&
	    pf_has(&un, "skill_state.completed_actions") &&
	    pf_has(&un, "skill_state.develop.total"),
	    "every skill_state field listed as unrecovered (%zu names)", un.n);
	tap_is_int(un.n, 9 + 2 + 5 + 6 + 6 + 3, "the whole list, once each");
	strv_clear(&un);
	json_decref(ss);
	tap_ok(faccessat(pf_sfd, "nothing-here.progress", F_OK, 0) == -1,
	    "rebuild creates nothing");
}

/* Worker outputs give the actions; the tasks file gives tasks the md lacks. */
static void
test_rebuild_outputs(void)
{
	struct timespec	 ts[2];
	json_t		*o, *ss = NULL, *t;
	struct strv	 un = { NULL, 0 };
	char		*err, *s;
	int		 rc, wfd;

	o = json_pack("{s:s, s:s}", "status", "success", "summary", "built");
	progress_output_save(pf_sfd, "W", "develop", o, &err);
	json_decref(o);
	o = json_pack("{s:s, s:s}", "status", "failed", "summary", "boom");
	progress_output_save(pf_sfd, "W", "debug", o, &err);
	json_decref(o);
	o = json_pack("{s:s}", "status", "success");
	progress_output_save(pf_sfd, "W", "init", o, &err);
	json_decref(o);
	wfd = openat(pf_sfd, "W.workers", O_RDONLY | O_DIRECTORY);
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	ts[0].tv_sec = ts[1].tv_sec = 1700000000;
	utimensat(wfd, "init.output.json", ts, 0);
	ts[0].tv_sec = ts[1].tv_sec = 1700000100;
	utimensat(wfd, "develop.output.json", ts, 0);
	ts[0].tv_sec = ts[1].tv_sec = 1700000200;
	utimensat(wfd, "debug.output.json", ts, 0);
	pf_spew("W.workers/validate.output.json", "{broken");
	close(wfd);
	pf_spew("W.tasks.jsonl", "{\"id\":\"t1\",\"title\":\"from the API\","
	    "\"status\":\"completed\"}\n{\"id\":\"t2\",\"description\":\"b\"}\n");

	rc = progress_rebuild(&ccw_loop_state, pf_sfd, "W",
	    &ss, &un, &err);
	tap_ok(rc == 0 && shape_ok(ss) && validates(ss), "rebuild from outputs "
	    "and tasks: in shape, valid");
	tap_ok(err != NULL && strstr(err, "validate.output.json"),
	    "an unreadable output is a warning: %s", err ? err : "");
	free(err);
	tap_is_str(json_string_value(json_object_get(ss, "current_action")),
	    "debug", "current_action: the newest output");
	s = json_dumps(json_object_get(ss, "completed_actions"), JSON_COMPACT);
	tap_is_str(s, "[\"init\",\"develop\"]", "completed_actions: the "
	    "successful roles, oldest first");
	free(s);
	t = json_array_get(json_object_get(ss, "errors"), 0);
	tap_ok(t != NULL && strcmp(json_string_value(json_object_get(t,
	    "action")), "debug") == 0 && strcmp(json_string_value(
	    json_object_get(t, "message")), "boom") == 0,
	    "a failed output is an error entry");
	tap_is_str(json_string_value(json_object_get(json_object_get(
	    json_object_get(ss, "worker_results"), "develop"), "summary")),
	    "built", "worker_results keeps each role's last summary");
	t = json_object_get(ss, "develop");
	tap_ok(json_integer_value(json_object_get(t, "total")) == 2 &&
	    json_integer_value(json_object_get(t, "completed")) == 1 &&
	    strcmp(json_string_value(json_object_get(json_array_get(
	    json_object_get(t, "tasks"), 0), "description")),
	    "from the API") == 0, "tasks, total and completed from the "
	    "tasks file");
	tap_ok(!pf_has(&un, "skill_state.develop.tasks") &&
	    !pf_has(&un, "skill_state.current_action") &&
	    pf_has(&un, "skill_state.develop.current_task"),
	    "unrecovered names only what is missing");
	strv_clear(&un);
	json_decref(ss);
}

/* Hostile content: wrong types in the tasks file, garbage in a progress file. */
static void
test_rebuild_hostile(void)
{
	json_t		*ss = NULL;
	struct strv	 un = { NULL, 0 };
	char		*err;
	int		 rc;

	pf_spew("H.tasks.jsonl", "{\"id\":5,\"status\":\"weird\",\"files_changed\":"
	    "[1],\"created_at\":\"yesterday\",\"completed_at\":7}\n");
	mkdirat(pf_sfd, "H.progress", 0755);
	pf_spew("H.progress/debug.md", "### Iteration 1 - x\n- **Iteration**: -4\n"
	    "- **Last Analysis At**: soon\n#### Hypotheses\n| ID | Status | "
	    "Evidence | Likelihood |\n| --- |\n| H1 | maybe | [1] | high |\n"
	    "| \xff\xfe | \\| |\n");
	pf_spew("H.progress/validate.md", "| Metric | Value |\n|---|---|\n"
	    "| **Pass Rate** | **150%** |\n| Coverage | 85.5% |\n");
	rc = progress_rebuild(&ccw_loop_state, pf_sfd, "H",
	    &ss, &un, &err);
	tap_ok(rc == 0 && shape_ok(ss) && validates(ss),
	    "hostile tasks and progress files: still a valid skill_state");
	tap_ok(pf_has(&un, "skill_state.develop.tasks[].status") &&
	    pf_has(&un, "skill_state.develop.tasks[].id") &&
	    pf_has(&un, "skill_state.debug.hypotheses[].status") &&
	    pf_has(&un, "skill_state.debug.iteration") &&
	    pf_has(&un, "skill_state.validate.pass_rate") &&
	    !pf_has(&un, "skill_state.validate.coverage") &&
	    json_real_value(json_object_get(json_object_get(ss, "validate"),
	    "coverage")) == 85.5,
	    "what was unusable is named; CCW's Metric table is read");
	free(err);
	strv_clear(&un);
	json_decref(ss);
}


/* Every group of checks in a private directory, removed at the end. */
int
main(void)
{
	if (pf_setup() != 0)
		return 1;
	test_md();
	test_rebuild_empty();
	test_rebuild_outputs();
	test_rebuild_hostile();
	pf_teardown();
	return tap_done();
}
