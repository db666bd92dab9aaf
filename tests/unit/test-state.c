/*
 * test-state.c: the state file code (supervisor/state*.c): ids, schema
 * checks, derived figures, commits (ownership, transitions), malformed
 * and hostile files; the store's batching and failures are in
 * test-committer.c.  Fixtures are in tests/state/;
 * everything else is made in a private temp directory.  The watch is
 * tested by tests/regress/state-commit.sh (state-hammer selfwatch).
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

#include <event2/event.h>

#include "clock.h"
#include "ccw-loop.h"
#include "state.h"
#include "statefix.h"
#include "tap.h"
#include "xmalloc.h"

/* The state file of ccw-loop (its sections and rules). */
#define WS	(&ccw_loop_state)

/* Ids: the safe alphabet only; everything hostile refused. */
static void
test_ids(void)
{
	static const char *const bad[] = { "", "..", "a/b", "../x", "-lead",
	    ".hidden", "a..b", "a b", "a\nb", "/etc/passwd", "é", "_x", NULL };
	char	long_ok[129], long_bad[301], *id;
	int	i, refused = 1;

	memset(long_ok, 'a', 128);
	long_ok[128] = '\0';
	memset(long_bad, 'b', 300);
	long_bad[300] = '\0';
	tap_ok(state_id_valid("loop-v2-20260122T100000-0a1b2c3d"), "CCW id valid");
	tap_ok(state_id_valid("a") && state_id_valid("A.b_c-9"), "short ids valid");
	tap_ok(state_id_valid(long_ok), "128 characters valid");
	tap_ok(!state_id_valid(long_bad), "300 characters refused");
	tap_ok(!state_id_valid(long_bad + 171), "129 characters refused");
	tap_ok(!state_id_valid(NULL), "NULL refused");
	for (i = 0; bad[i] != NULL; i++)
		if (state_id_valid(bad[i])) {
			refused = 0;
			tap_diag("accepted: '%s'", bad[i]);
		}
	tap_ok(refused, "hostile ids refused (\"\", .., a/b, ../x, -lead, "
	    ".hidden, a..b, ...)");
	id = state_id_generate();
	tap_is_int((long long)strlen(id), 32, "generated id length");
	tap_ok(strncmp(id, "loop-v2-", 8) == 0 && id[16] == 'T' &&
	    id[23] == '-' && strspn(id + 24, "0123456789abcdef") == 8 &&
	    strspn(id + 8, "0123456789") == 8 && state_id_valid(id),
	    "generated id is loop-v2-YYYYMMDDTHHMMSS-xxxxxxxx (%s)", id);
	free(id);
}

/* state_new is the seed's initial state and valid as it is. */
static void
test_new(void)
{
	struct strv	 errs = { NULL, 0 };
	json_t		*st = state_new(WS, "L1", "Title", "Desc",
			    10);
	const char	*ca = json_string_value(json_object_get(st, "created_at"));
	char		*s;

	tap_is_int(state_validate(WS, st, &errs), 0,
	    "new state is valid");
	tap_is_str(json_string_value(json_object_get(st, "status")), "created",
	    "new state: status created");
	tap_ok(json_is_null(t_ss(st, "current_action")) &&
	    strcmp(json_string_value(t_ss(st, "mode")), "auto") == 0 &&
	    json_is_object(t_ss(st, "validate")),
	    "new state: skill_state skeleton, mode auto");
	s = json_dumps(json_object_get(st, "skill_state"), JSON_COMPACT);
	tap_is_str(s, "{\"current_action\":null,\"last_action\":null,"
	    "\"completed_actions\":[],\"mode\":\"auto\",\"develop\":"
	    "{\"total\":0,\"completed\":0,\"current_task\":null,"
	    "\"tasks\":[],\"last_progress_at\":null},\"debug\":"
	    "{\"active_bug\":null,\"hypotheses_count\":0,\"hypotheses\":"
	    "[],\"confirmed_hypothesis\":null,\"iteration\":0,"
	    "\"last_analysis_at\":null},\"validate\":{\"pass_rate\":0,"
	    "\"coverage\":0,\"test_results\":[],\"passed\":false,"
	    "\"failed_tests\":[],\"last_run_at\":null},\"errors\":[]}",
	    "new state: ccw-loop's skeleton, member for member in CCW's order");
	free(s);
	tap_ok(ca != NULL && strlen(ca) == 24 && ca[10] == 'T' && ca[19] == '.' &&
	    ca[23] == 'Z', "created_at like 2026-01-22T10:00:00.000Z (%s)",
	    ca ? ca : "");
	tap_ok(state_new(WS, "../x", "t", "d", 10) == NULL &&
	    state_new(WS, "x", NULL, "d", 10) == NULL &&
	    state_new(WS, "x", "t", "d", 0) == NULL,
	    "state_new refuses bad input");
	json_object_set_new(st, "status", json_string("completed"));
	tap_is_int(state_validate(WS, st, &errs), 2, "completed without "
	    "completed_at and validation: 2 errors");
	tap_ok(t_has(&errs, "skill_state.validate.passed: status is completed"),
	    "... naming skill_state.validate.passed");
	strv_clear(&errs);
	/* CCW's stop: failed, with its end time */
	json_object_set_new(st, "status", json_string("failed"));
	json_object_set_new(st, "failure_reason",
	    json_string("Manually stopped by user"));
	json_object_set_new(st, "completed_at",
	    json_string("2026-01-22T10:01:00.000Z"));
	tap_is_int(state_validate(WS, st, &errs), 0, "failed with completed_at "
	    "(CCW's stop): valid");
	strv_clear(&errs);
	json_object_del(st, "failure_reason");
	json_object_set_new(st, "status", json_string("paused"));
	tap_ok(state_validate(WS, st, &errs) == 1 && t_has(&errs,
	    "completed_at: present although status is paused"),
	    "paused with completed_at: refused");
	strv_clear(&errs);
	json_decref(st);
}

/* Every error of a broken file, each as "path: message". */
static void
test_validate(void)
{
	struct strv	 errs = { NULL, 0 };
	json_t		*st;
	size_t		 i;
	int		 n, shaped = 1;

	t_fixture("broken.json", "broken.json");
	st = t_load("broken");
	n = state_validate(WS, st, &errs);
	tap_is_int(n, 22, "broken fixture: all 22 errors reported");
	tap_is_int((long long)errs.n, 22, "... and listed");
	for (i = 0; i < errs.n; i++) {
		shaped = shaped && strstr(errs.v[i], ": ") != NULL;
		if (getenv("TEST_VERBOSE") != NULL)
			tap_diag("%s", errs.v[i]);
	}
	tap_ok(shaped, "every error is \"path: message\"");
	tap_ok(t_has(&errs, "skill_state.validate.pass_rate: 140 is not within 0-100"),
	    "pass_rate 140 reported with its path");
	tap_ok(t_has(&errs, "skill_state.develop.completed: 2 but 1 tasks") &&
	    t_has(&errs, "skill_state.develop.total: 3 but there are 2 tasks"),
	    "develop counts checked against the tasks");
	tap_ok(t_has(&errs, "current_iteration: 7 exceeds max_iterations 5") &&
	    t_has(&errs, "completed_at: present although status is running") &&
	    t_has(&errs, "failure_reason: present although status is running"),
	    "iteration bound, completed_at, failure_reason rules");
	tap_ok(t_has(&errs, "skill_state.debug.hypotheses[0].status: 'maybe'") &&
	    t_has(&errs, "skill_state.validate.test_results[0].status") &&
	    t_has(&errs, "skill_state.develop.tasks[1].status: 'done'") &&
	    t_has(&errs, "skill_state.errors[0].timestamp: missing"),
	    "enums and members inside arrays, with indexes");
	tap_ok(!t_has(&errs, "tags"), "unknown fields are fine");
	strv_clear(&errs);
	json_object_set_new(st, "status", json_string("done"));
	tap_is_int(state_validate(WS, st, NULL), 21,
	    "an unknown status: its own "
	    "error instead of the two status rules");
	json_decref(st);
	st = json_integer(1);
	tap_is_int(state_validate(WS, st, NULL), 1, "not an object: one error");
	json_decref(st);
}

/* The seed's derived figures. */
static void
test_derived(void)
{
	json_t	*st = state_new(WS, "D", "t", "d", 10), *d, *dev;

	d = ccw_loop_state.derived(st);
	tap_ok(json_real_value(json_object_get(d, "develop_progress")) == 0 &&
	    json_real_value(json_object_get(d, "overall_progress")) == 0 &&
	    json_is_false(json_object_get(d, "has_pending_develop")),
	    "derived on a new state: all zero");
	json_decref(d);
	dev = t_ss(st, "develop");
	json_object_set_new(dev, "total", json_integer(4));
	json_object_set_new(dev, "completed", json_integer(2));
	json_object_set_new(dev, "tasks", json_pack("[{s:s,s:s}]", "id", "a",
	    "status", "pending"));
	json_object_set_new(t_ss(st, "debug"), "confirmed_hypothesis",
	    json_string("H1"));
	d = ccw_loop_state.derived(st);
	tap_ok(json_real_value(json_object_get(d, "develop_progress")) == 50 &&
	    json_is_true(json_object_get(d, "has_pending_develop")) &&
	    json_is_true(json_object_get(d, "debug_completed")) &&
	    json_is_false(json_object_get(d, "validation_passed")),
	    "derived: 2/4 = 50, pending, debug completed, not validated");
	tap_ok(json_real_value(json_object_get(d, "overall_progress")) == 50,
	    "overall = 50 * 0.5 + 25");
	json_decref(d);
	json_object_set_new(dev, "completed", json_integer(9));
	d = ccw_loop_state.derived(st);
	tap_ok(json_real_value(json_object_get(d, "develop_progress")) == 100,
	    "develop_progress stays within 0-100");
	json_decref(d);
	json_decref(st);
}

/* Everything not ours survives a commit as the same JSON values. */
static void
test_roundtrip(void)
{
	const char	*id = "loop-v2-20260122T100000-0a1b2c3d";
	json_t		*before, *after, *m = NULL, *a, *b;
	char		*raw;
	unsigned	 nf = 0;
	int		 rc;

	t_fixture("full.json", "loop-v2-20260122T100000-0a1b2c3d.json");
	before = t_load(id);
	tap_is_int(state_validate(WS, before, NULL), 0, "full fixture is valid");
	t_clear();
	rc = state_commit(WS, t_dirfd, id, NULL, NULL, NULL, &m, &nf, &t_err);
	tap_ok(rc == 0, "commit over the full fixture (%s)", t_e());
	tap_is_int(nf, 2, "one commit, two fsyncs (file, directory)");
	after = t_load(id);
	a = json_deep_copy(before);
	b = json_deep_copy(after);
	json_object_del(a, "updated_at");
	json_object_del(b, "updated_at");
	tap_ok(json_equal(a, b) && json_equal(after, m), "every field but "
	    "updated_at identical (unknown, unicode, reals, big integers)");
	tap_ok(!json_equal(json_object_get(before, "updated_at"),
	    json_object_get(after, "updated_at")), "updated_at set by the commit");
	raw = t_read(t_dirfd, "loop-v2-20260122T100000-0a1b2c3d.json");
	tap_ok(raw != NULL && strstr(raw, "9007199254740993") != NULL &&
	    strstr(raw, "-9223372036854775808") != NULL &&
	    strstr(raw, "\"ratio\": 1.0") != NULL && strstr(raw, "用户认证"),
	    "big integers exact, 1.0 stays a real, UTF-8 kept");
	tap_ok(json_is_real(json_object_get(after, "huge")) &&
	    json_real_value(json_object_get(after, "huge")) == 1e20,
	    "an integer beyond int64 (as JavaScript writes 1e20) read as a real");
	free(raw);
	json_decref(a);
	json_decref(b);
	json_decref(m);
	rc = t_commit(id, json_pack("{s:{s:{s:i}}, s:i}", "skill_state", "debug",
	    "iteration", 2, "current_iteration", 3), NULL, NULL, &m);
	a = t_ss(m, "debug");
	tap_ok(rc == 0 && json_integer_value(json_object_get(a, "iteration")) == 2 &&
	    json_integer_value(json_object_get(m, "current_iteration")) == 3 &&
	    json_equal(json_object_get(a, "hypotheses"), json_object_get(
	    t_ss(before, "debug"), "hypotheses")) &&
	    json_is_object(t_ss(m, "x_ui_hint")), "patch deep-merged, siblings kept");
	json_decref(m);
	json_decref(before);
	json_decref(after);
}

/* Transitions apply only from their source status. */
static void
test_transitions(void)
{
	json_t	*m = NULL;
	char	*before, *after;
	int	 rc;

	t_create("C");
	rc = t_commit("C", NULL, "running", NULL, NULL);
	tap_ok(rc == 0 && strcmp(t_status("C"), "running") == 0,
	    "created -> running applied");
	t_fe_set("C", "status", json_string("paused"));
	rc = t_commit("C", NULL, "running", NULL, NULL);
	tap_ok(rc == 0 && strcmp(t_status("C"), "paused") == 0,
	    "paused on disk is not turned into running");
	t_fe_set("C", "status", json_string("running"));
	before = t_read(t_dirfd, "C.json");
	rc = t_commit("C", NULL, "completed", NULL, NULL);
	after = t_read(t_dirfd, "C.json");
	tap_ok(rc != 0 && strstr(t_e(), "validation has not passed") &&
	    strcmp(before, after) == 0, "completed without a passed validation: "
	    "refused, file untouched (%s)", t_e());
	free(after);
	free(before);
	rc = t_commit("C", json_pack("{s:{s:{s:b, s:[{s:s, s:s}]}}}", "skill_state",
	    "validate", "passed", 1, "test_results", "test_name", "t", "status",
	    "passed"), "completed", NULL, &m);
	tap_ok(rc == 0 && strcmp(json_string_value(json_object_get(m, "status")),
	    "completed") == 0 && json_is_string(json_object_get(m,
	    "completed_at")), "running -> completed with completed_at");
	json_decref(m);
	rc = t_commit("C", NULL, "failed", "late", NULL);
	tap_ok(rc == 0 && strcmp(t_status("C"), "completed") == 0,
	    "completed is terminal");
	t_create("F");
	t_commit("F", NULL, "running", NULL, NULL);
	rc = t_commit("F", NULL, "failed", "boom", &m);
	tap_ok(rc == 0 && strcmp(json_string_value(json_object_get(m,
	    "failure_reason")), "boom") == 0, "running -> failed with the reason");
	tap_ok(rc == 0 && clock_iso_valid(json_string_value(json_object_get(m,
	    "completed_at"))), "running -> failed sets completed_at (CCW's "
	    "stop does)");
	json_decref(m);
	rc = t_commit("F", NULL, "running", NULL, NULL);
	tap_ok(rc == 0 && strcmp(t_status("F"), "failed") == 0,
	    "failed is terminal");
	rc = t_commit("F", NULL, "paused", NULL, NULL);
	tap_ok(rc != 0 && t_err != NULL, "the supervisor cannot set paused (%s)",
	    t_e());
}

/* The front end's fields come from disk, ours from our last commit. */
static void
test_ownership(void)
{
	struct state_store	*s;
	json_t			*j;
	int			 rc;

	t_create("O");
	s = state_store_new(NULL, WS, t_dirfd, "O");
	t_fe_set("O", "title", json_string("renamed by the UI"));
	t_fe_set("O", "notes", json_string("a note"));
	j = t_load("O");
	json_object_set_new(json_object_get(j, "skill_state"), "stale",
	    json_true());
	t_fe_set("O", "skill_state", json_incref(json_object_get(j,
	    "skill_state")));
	json_decref(j);
	rc = t_store_commit(s, 5);
	j = t_load("O");
	tap_ok(rc == 0 && strcmp(json_string_value(json_object_get(j, "title")),
	    "renamed by the UI") == 0 && json_is_string(json_object_get(j, "notes")),
	    "the front end's title and notes kept");
	tap_ok(json_integer_value(t_ss(j, "hammer")) == 5 &&
	    t_ss(j, "stale") == NULL, "skill_state is ours: the front end's "
	    "stale copy does not win");
	json_decref(j);
	rc = t_commit("O", json_pack("{s:s}", "title", "mine"), NULL, NULL, NULL);
	tap_ok(rc != 0 && strstr(t_e(), "title: not a field the supervisor owns"),
	    "a patch of the front end's field is refused");
	rc = t_commit("O", json_pack("{s:{s:{s:i}}}", "skill_state", "validate",
	    "pass_rate", 140), NULL, NULL, NULL);
	tap_ok(rc != 0 && strstr(t_e(), "skill_state.validate.pass_rate: 140 is "
	    "not within 0-100"), "an invalid patch of ours is refused with the path");
	t_fe_set("O", "max_iterations", json_string("ten"));
	rc = t_commit("O", t_hammer(6), NULL, NULL, NULL);
	tap_ok(rc == 0, "the other side's invalid field is tolerated (%s)", t_e());
	state_store_free(s);
}

/* A corrupt file's quarantine name: {id}.json.corrupt-YYYYMMDDTHHMMSS.mmmZ */
static int
t_quarantined(const char *id)
{
	char	*list = t_listing(t_path), *p, *pre;
	int	 found = 0;

	xasprintf(&pre, "%s.json.corrupt-", id);
	for (p = list; (p = strstr(p, pre)) != NULL; p++) {
		p += strlen(pre);
		if (strspn(p, "0123456789") == 8 && p[8] == 'T' &&
		    strspn(p + 9, "0123456789") == 6 && p[15] == '.' &&
		    strspn(p + 16, "0123456789") == 3 && p[19] == 'Z')
			found = 1;
	}
	free(pre);
	free(list);
	return found;
}

/* Load {id}.json (written from buf first unless NULL, then aged if asked). */
static enum state_load_rc
t_load_rc(const char *id, const char *buf, size_t len, int age)
{
	char			*name;
	json_t			*j = NULL;
	enum state_load_rc	 rc;

	xasprintf(&name, "%s.json", id);
	if (buf != NULL)
		t_write(name, buf, len);
	if (age)
		t_age(name);
	free(name);
	t_clear();
	rc = state_load(t_dirfd, id, &j, &t_err);
	json_decref(j);
	return rc;
}

/* Malformed files: a clear error or a quarantine, never a crash. */
static void
test_malformed(void)
{
	struct state_store	*s;
	json_t			*j;
	char			*big;
	size_t			 n, k;
	int			 rc;

	t_fixture("truncated.json", "T.json");
	tap_is_int(t_load_rc("T", NULL, 0, 0), STATE_EAGAIN,
	    "truncated, just written: try again");
	rc = t_load_rc("T", NULL, 0, 1);
	tap_ok(rc == STATE_CORRUPT && t_quarantined("T") &&
	    faccessat(t_dirfd, "T.json", F_OK, AT_SYMLINK_NOFOLLOW) != 0,
	    "truncated and old: quarantined as T.json.corrupt-<UTC time> (%s)",
	    t_e());
	t_fixture("array.json", "A.json");
	rc = t_load_rc("A", NULL, 0, 1);
	tap_ok(rc == STATE_CORRUPT && strstr(t_e(), "not a JSON object"),
	    "not an object: corrupt (%s)", t_e());
	tap_is_int(t_load_rc("E", "", 0, 1), STATE_EAGAIN,
	    "empty file: a writer may be busy");
	rc = t_load_rc("N", "{\"a\": 1}\0\n", 10, 1);
	tap_ok(rc == STATE_CORRUPT && strstr(t_e(), "NUL"), "a NUL byte: corrupt");
	n = 20000;
	big = xmalloc(n);
	memset(big, '[', n / 2);
	memset(big + n / 2, ']', n / 2);
	rc = t_load_rc("X", big, n, 1);
	tap_ok(rc == STATE_CORRUPT && strstr(t_e(), "depth"),
	    "10000-deep nesting: corrupt (%s)", t_e());
	free(big);
	n = 50 << 20;
	k = strlen("{\"loop_id\": \"S\", \"title\": \"");
	big = xmalloc((70 << 20) + 64);
	memcpy(big, "{\"loop_id\": \"S\", \"title\": \"", k);
	memset(big + k, 'x', n);
	memcpy(big + k + n, "\"}", 2);
	tap_ok(t_load_rc("S", big, k + n + 2, 1) == STATE_OK,
	    "a 50 MiB string loads (under the 64 MiB cap)");
	n = 70 << 20;
	memset(big + k, 'y', n);
	memcpy(big + k + n, "\"}", 2);
	rc = t_load_rc("S", big, k + n + 2, 1);
	tap_ok(rc == STATE_CORRUPT && strstr(t_e(), "larger than 64 MiB"),
	    "a 70 MiB file: corrupt (%s)", t_e());
	free(big);
	symlinkat("../outside.json", t_dirfd, "Y.json");
	rc = t_load_rc("Y", NULL, 0, 0);
	tap_ok(rc == STATE_EIO && strstr(t_e(), "symbolic link"),
	    "a symbolic link is refused (%s)", t_e());
	mkfifoat(t_dirfd, "P.json", 0644);
	rc = t_load_rc("P", NULL, 0, 0);
	tap_ok(rc == STATE_EIO, "a FIFO is refused without hanging (%s)", t_e());
	/* commits over a corrupt file: quarantine, then our last state or an error */
	t_fixture("truncated.json", "T.json");
	t_age("T.json");
	rc = t_commit("T", NULL, NULL, NULL, NULL);
	tap_ok(rc != 0 && strstr(t_e(), "quarantined"), "commit over a corrupt "
	    "file with nothing to fall back on: error (%s)", t_e());
	t_create("R");
	s = state_store_new(NULL, WS, t_dirfd, "R");
	t_write("R.json", "{\"garbage", 9);
	rc = t_store_commit(s, 7);
	j = t_load("R");
	tap_ok(rc == 0 && json_integer_value(t_ss(j, "hammer")) == 7 &&
	    t_quarantined("R"), "store commit over a corrupt file: quarantined, "
	    "our state written again (%s)", t_e());
	json_decref(j);
	state_store_free(s);
}

/* A watch callback (never called: the watches are refused). */
static void
t_watch_cb(const char *status, const json_t *st, void *arg)
{
	(void)status;
	(void)st;
	(void)arg;
}

/* Hostile ids create nothing anywhere; leftovers are cleaned. */
static void
test_hostile(void)
{
	static const char *const ids[] = { "..", "../x", "a/b", "", ".hidden",
	    "-x", "../../escape", "/tmp/abs", NULL };
	struct event_base	*base = event_base_new();
	json_t			*st;
	char			*before = t_listing(t_top), *s1, *s2;
	char			*inside = t_listing(t_path);
	int			 i, refused = 1;

	for (i = 0; ids[i] != NULL; i++) {
		st = json_pack("{s:s}", "loop_id", ids[i]);
		refused = refused && t_load_rc(ids[i], NULL, 0, 0) == STATE_EINVAL;
		refused = refused && t_commit(ids[i], NULL, NULL, NULL, NULL) != 0;
		t_clear();
		refused = refused && state_create(WS, t_dirfd, ids[i], st, NULL,
		    &t_err) != 0;
		t_clear();
		refused = refused &&
		    state_store_new(base, WS, t_dirfd, ids[i]) == NULL &&
		    state_watch_new(base, NULL, STATE_WATCH_INOTIFY, t_watch_cb,
		    NULL, &t_err) == NULL;
		state_clean_temps(t_dirfd, ids[i]);
		json_decref(st);
	}
	tap_ok(refused, "every function refuses every hostile id");
	s1 = t_listing(t_top);
	s2 = t_listing(t_path);
	tap_ok(strcmp(before, s1) == 0 && strcmp(inside, s2) == 0,
	    "nothing was created inside or outside the directory");
	free(s1);
	free(s2);
	free(before);
	free(inside);
	event_base_free(base);
	tap_ok(t_create("C") != 0, "creating an existing loop is refused");
	t_write("C.json.tmp", "{", 1);
	t_write("Z.json.tmp", "{", 1);
	state_clean_temps(t_dirfd, "C");
	tap_ok(faccessat(t_dirfd, "C.json.tmp", F_OK, 0) != 0 &&
	    faccessat(t_dirfd, "Z.json.tmp", F_OK, 0) == 0,
	    "state_clean_temps(id) removes that loop's temp file");
	state_clean_temps(t_dirfd, NULL);
	tap_ok(faccessat(t_dirfd, "Z.json.tmp", F_OK, 0) != 0,
	    "state_clean_temps(NULL) removes every loop's");
}

/* Write TEXT to T_TOP/REL (its directories made). */
static void
git_put(const char *rel, const char *text)
{
	char	*p, *s;
	FILE	*f;

	xasprintf(&p, "%s/%s", t_top, rel);
	for (s = p + strlen(t_top) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		(void)mkdir(p, 0755);
		*s = '/';
	}
	if (text == NULL)
		(void)mkdir(p, 0755);
	else if ((f = fopen(p, "w")) != NULL) {
		fputs(text, f);
		fclose(f);
	}
	free(p);
}

/* A state directory made under T_TOP/REL: did it get a .gitignore? */
static int
git_ignored(const char *rel)
{
	char	*p, *gi, *err = NULL;
	int	 fd, yes;

	xasprintf(&p, "%s/%s", t_top, rel);
	if ((fd = state_dir_open(p, 1, &err)) >= 0)
		close(fd);
	free(err);
	xasprintf(&gi, "%s/.gitignore", p);
	yes = access(gi, F_OK) == 0;
	free(gi);
	free(p);
	return yes;
}

/*
 * "Inside a git work tree" as git means it: an empty .git directory or
 * a dangling gitdir: file is not a repository; a repository, a linked
 * worktree's .git file are; GIT_CEILING_DIRECTORIES stops the climb.
 */
static void
test_git(void)
{
	char	*ceil;

	xasprintf(&ceil, "%s", t_top);
	setenv("GIT_CEILING_DIRECTORIES", ceil, 1);
	git_put("e/.git", NULL);
	tap_ok(!git_ignored("e/p/.loop"), "an empty .git directory above: "
	    "not a git work tree");
	git_put("r/.git/HEAD", "ref: refs/heads/main\n");
	git_put("r/.git/objects", NULL);
	git_put("r/.git/refs", NULL);
	tap_ok(git_ignored("r/p/.loop"), "a repository above (HEAD, objects, "
	    "refs): a .gitignore");
	git_put("r/.git/worktrees/w/HEAD", "0123\n");
	git_put("r/.git/worktrees/w/commondir", "../..\n");
	git_put("w/.git", "gitdir: ../r/.git/worktrees/w\n");
	tap_ok(git_ignored("w/.loop"), "a linked worktree's .git file: a "
	    ".gitignore");
	git_put("b/.git", "gitdir: nowhere\n");
	tap_ok(!git_ignored("b/.loop"), "a .git file naming no repository: "
	    "not a git work tree");
	git_put("c/.git/HEAD", "ref: refs/heads/main\n");
	git_put("c/.git/objects", NULL);
	git_put("c/.git/refs", NULL);
	free(ceil);
	xasprintf(&ceil, "/nonexistent:%s/c", t_top);
	setenv("GIT_CEILING_DIRECTORIES", ceil, 1);
	tap_ok(!git_ignored("c/d/.loop"), "GIT_CEILING_DIRECTORIES: the "
	    "climb stops below it");
	unsetenv("GIT_CEILING_DIRECTORIES");
	free(ceil);
}

/* nftw callback of the clean-up. */
/* Every group in a private directory, removed at the end. */
int
main(void)
{
	char	*d;

	t_setup();
	d = state_dir_default(t_top);
	tap_ok(strstr(d, "/.loop") != NULL, "default state directory %s", d);
	free(d);
	test_ids();
	test_new();
	test_validate();
	test_derived();
	test_roundtrip();
	test_transitions();
	test_ownership();
	test_malformed();
	test_hostile();
	test_git();
	t_teardown();
	return tap_done();
}
