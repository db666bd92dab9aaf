/*
 * merge.c: a role's result into its own section of skill_state (develop
 * tasks, debug hypotheses, validate test results), the deterministic
 * merge of a parallel step (role order, never arrival order) with its
 * file conflicts; the tasks file's tasks.  Questions: clarify.c.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cause.h"
#include "ccw-loop.h"
#include "loop.h"
#include "outcome.h"
#include "state.h"
#include "xmalloc.h"

#define MERGE_MAX_HYP	20	/* hypotheses taken from one result */
#define MERGE_MAX_SCAN	32	/* '[' tried when looking for a JSON list */

/* Mode names as skill_state.mode and -m spell them, in enum order. */
const char *const loop_modes[] = { "auto", "parallel", "interactive",
    NULL };

/* A mode's word (the table's). */
const char *
loop_mode_name(enum loop_mode m)
{
	return m == LOOP_PARALLEL || m == LOOP_INTERACTIVE ? loop_modes[m] :
	    loop_modes[LOOP_AUTO];
}

/* A word of the table into its mode: 0, or -1 when it is none. */
int
loop_mode_parse(const char *word, enum loop_mode *mode)
{
	int	i;

	for (i = 0; word != NULL && loop_modes[i] != NULL; i++)
		if (strcmp(word, loop_modes[i]) == 0) {
			*mode = (enum loop_mode)i;
			return 0;
		}
	return -1;
}

/* A string member, or NULL. */
static const char *
merge_s(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* A member that must be an object (or an array): made, or replaced, if not. */
static json_t *
merge_sub(json_t *o, const char *k, int array)
{
	json_t	*v = json_object_get(o, k);

	if (array ? !json_is_array(v) : !json_is_object(v)) {
		v = array ? json_array() : json_object();
		json_object_set_new(o, k, v);
	}
	return v;
}

/* The strings of list k, copied; anything else is dropped. */
static json_t *
merge_strs(const json_t *res, const char *k)
{
	const json_t	*f;
	json_t		*out = json_array();
	size_t		 i;

	json_array_foreach(json_object_get(res, k), i, f)
		if (json_is_string(f) && json_string_length(f) > 0)
			json_array_append(out, (json_t *)f);
	return out;
}

/* The files the worker observed changed (files_changed), copied. */
static json_t *
merge_files(const json_t *res)
{
	return merge_strs(res, "files_changed");
}

/* The files the answer claimed, beside them in o when it claimed any. */
static void
merge_claimed(json_t *o, const json_t *res)
{
	json_t	*c = merge_strs(res, "files_claimed");

	if (json_array_size(c) > 0)
		json_object_set_new(o, "files_claimed", c);
	else {
		json_decref(c);
		json_object_del(o, "files_claimed");
	}
}

/*
 * What the action came to.  A timeout, or a tool killed by a signal, is
 * a failure (cut off: what it printed is partial).  A validate run whose
 * log held TAP and no WORKER_RESULT block ran its tests: the tests
 * decide passed, not the action (its status is the exit status, and a
 * failing suite exits non-zero).  Otherwise the worker's own status
 * decides when it gave one, else the tool's exit status.
 */
const char *
merge_outcome(const char *role, const json_t *res)
{
	static const char *const known[] = { "success", "partial", "failed",
	    "needs_input", NULL };
	const char	*st = merge_s(res, "status");
	const json_t	*tap = json_object_get(res, "tap");
	const json_t	*ec = json_object_get(res, "exit_code");
	int		 i;

	if (json_is_true(json_object_get(res, "timed_out")) ||
	    json_integer_value(json_object_get(res, "signal")) > 0)
		return "failed";	/* cut off: whatever it said is partial */
	if (role != NULL && strcmp(role, "validate") == 0 &&
	    !json_is_true(json_object_get(tap, "worker_result")) &&
	    (json_integer_value(json_object_get(tap, "count")) > 0 ||
	    json_is_integer(json_object_get(tap, "planned"))))
		return "success";
	for (i = 0; st != NULL && known[i] != NULL; i++)
		if (strcmp(st, known[i]) == 0)
			return known[i];
	if (json_is_integer(ec) && json_integer_value(ec) == 0 &&
	    (merge_s(res, "agent_status") == NULL ||
	    strcmp(merge_s(res, "agent_status"), "completed") == 0))
		return "success";
	return "failed";
}

/*
 * Why an action failed, in one line, for skill_state.errors: the outcome
 * kind and the CLI's own words (cause_of); the caller frees it.
 */
static char *
merge_why(const json_t *res)
{
	if (json_is_true(json_object_get(res, "timed_out")))
		return xstrdup(outcome_is(merge_s(res, "error_kind"),
		    OUTCOME_IDLE) ? "worker idle" : "worker timeout");
	return cause_of(res);
}

/* What every action records: the action fields, errors, worker_results. */
static void
merge_common(json_t *ss, const char *role, const json_t *res,
    const char *outcome, const char *now)
{
	json_t	*wr, *e;
	char	*why;

	json_object_set_new(ss, "current_action", json_string(role));
	json_object_set_new(ss, "last_action", json_string(role));
	if (strcmp(outcome, "failed") != 0)
		json_array_append_new(merge_sub(ss, "completed_actions", 1),
		    json_string(role));
	else {
		/* the outcome kind and its reason, when there is one */
		why = merge_why(res);
		e = json_pack("{s:s, s:s, s:s}", "action", role, "message",
		    why, "timestamp", now);
		free(why);
		if (merge_s(res, "error_kind") != NULL)
			json_object_set_new(e, "kind",
			    json_string(merge_s(res, "error_kind")));
		if (merge_s(res, "reason") != NULL)
			json_object_set_new(e, "reason",
			    json_string(merge_s(res, "reason")));
		state_error_push(ss, e);
	}
	wr = merge_sub(ss, "worker_results", 0);
	json_object_set_new(wr, role, json_pack("{s:s, s:s?, s:s?, s:s}",
	    "status", outcome, "summary", merge_s(res, "summary"),
	    "agent_id", merge_s(res, "agent_id"), "saved_at", now));
}

/* The entry of the list (tasks, hypotheses) with this id, or NULL. */
static json_t *
merge_find_id(const json_t *list, const char *id)
{
	json_t	*e;
	size_t	 i;

	json_array_foreach(list, i, e)
		if (merge_s(e, "id") != NULL &&
		    strcmp(merge_s(e, "id"), id) == 0)
			return e;
	return NULL;
}

/* Is this id taken in the list (tasks, hypotheses)? */
static int
merge_id_used(const json_t *list, const char *id)
{
	return merge_find_id(list, id) != NULL;
}

/* The develop section's counters follow its task list. */
static void
merge_count_tasks(json_t *dev)
{
	const json_t	*t, *tasks = json_object_get(dev, "tasks");
	size_t		 i, done = 0;

	json_array_foreach(tasks, i, t)
		if (merge_s(t, "status") != NULL &&
		    strcmp(merge_s(t, "status"), "completed") == 0)
			done++;
	json_object_set_new(dev, "total", json_integer((json_int_t)
	    json_array_size(tasks)));
	json_object_set_new(dev, "completed", json_integer((json_int_t)done));
}

/*
 * With no task pending, a failed develop whose last task failed with the
 * same description is that task failing again: a crash loop retried for
 * days must not add a task (and a develop.md row) per attempt; its
 * errors entries say how often it failed (state_error_push).
 */
static json_t *
merge_refailed(json_t *tasks, const char *tst, const char *sum)
{
	json_t		*last;
	const char	*d, *want = sum != NULL && *sum != '\0' ? sum :
			    "develop";

	if (strcmp(tst, "failed") != 0 || json_array_size(tasks) == 0)
		return NULL;
	last = json_array_get(tasks, json_array_size(tasks) - 1);
	d = merge_s(last, "description");
	if (merge_s(last, "status") == NULL || strcmp(merge_s(last,
	    "status"), "failed") != 0 || d == NULL || strcmp(d, want) != 0)
		return NULL;
	return last;
}

/*
 * develop: the first pending task is the one the worker did; with none,
 * the result becomes a new task task-NNN.  Either way it ends completed
 * or failed with the files the worker changed.
 */
static void
merge_develop(json_t *ss, const json_t *res, const char *outcome,
    const char *now)
{
	json_t		*dev = merge_sub(ss, "develop", 0);
	json_t		*tasks = merge_sub(dev, "tasks", 1);
	json_t		*t = NULL;
	const char	*st, *sum = merge_s(res, "summary");
	const char	*tst = strcmp(outcome, "failed") == 0 ? "failed" :
			    "completed";
	char		 id[32];
	size_t		 i, n;

	json_array_foreach(tasks, i, t) {
		st = merge_s(t, "status");
		if (json_is_object(t) && st != NULL &&
		    (strcmp(st, "pending") == 0 ||
		    strcmp(st, "in_progress") == 0))
			break;
	}
	if (i == json_array_size(tasks) && (t = merge_refailed(tasks, tst,
	    sum)) != NULL)
		;	/* the same failure again: no new task each time */
	else if (i == json_array_size(tasks)) {
		n = json_array_size(tasks) + 1;
		do
			snprintf(id, sizeof id, "task-%03zu", n++);
		while (merge_id_used(tasks, id));
		t = json_pack("{s:s, s:s, s:s*, s:s, s:s, s:[], s:s, s:n}",
		    "id", id, "description", sum != NULL && *sum != '\0' ?
		    sum : "develop", "tool", merge_s(res, "tool"), "mode",
		    "write", "status", "pending", "files_changed",
		    "created_at", now, "completed_at");
		json_array_append_new(tasks, t);
	}
	if (merge_s(t, "description") == NULL && sum != NULL)
		json_object_set_new(t, "description", json_string(sum));
	json_object_set_new(t, "status", json_string(tst));
	json_object_set_new(t, "files_changed", merge_files(res));
	merge_claimed(t, res);
	json_object_set_new(t, "completed_at", json_string(now));
	merge_count_tasks(dev);
	json_object_set(dev, "current_task", json_object_get(t, "id"));
	json_object_set_new(dev, "last_progress_at", json_string(now));
}

/* A list of hypotheses a debug worker put in its detailed output, if any. */
static json_t *
merge_find_hyp(const char *text)
{
	const char	*p = text;
	json_error_t	 jerr;
	json_t		*j, *list;
	int		 tries = 0;

	while (p != NULL && (p = strpbrk(p, "[{")) != NULL &&
	    tries++ < MERGE_MAX_SCAN) {
		j = json_loads(p, JSON_DISABLE_EOF_CHECK, &jerr);
		list = json_is_object(j) ? json_object_get(j, "hypotheses") : j;
		if (json_is_array(list) && json_array_size(list) > 0 &&
		    json_is_object(json_array_get(list, 0)) &&
		    json_is_string(json_object_get(json_array_get(list, 0),
		    "description"))) {
			json_incref(list);
			json_decref(j);
			return list;
		}
		json_decref(j);
		p++;
	}
	return NULL;
}

/* One hypothesis in the seed's shape, whatever the worker wrote. */
static json_t *
merge_hyp(const json_t *in, const char *id, size_t likely)
{
	static const char *const sts[] = { "pending", "confirmed", "rejected",
	    "inconclusive", NULL };
	const json_t	*ec = json_object_get(in, "evidence_criteria");
	const json_t	*lk = json_object_get(in, "likelihood");
	const char	*st = merge_s(in, "status");
	int		 i;

	for (i = 0; st != NULL && sts[i] != NULL; i++)
		if (strcmp(st, sts[i]) == 0)
			break;
	if (st == NULL || sts[i] == NULL)
		st = "pending";
	return json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:o, s:s,"
	    " s:o, s:o}", "id", id,
	    "description", merge_s(in, "description") != NULL ?
	    merge_s(in, "description") : "",
	    "testable_condition", merge_s(in, "testable_condition") != NULL ?
	    merge_s(in, "testable_condition") : "",
	    "logging_point", merge_s(in, "logging_point") != NULL ?
	    merge_s(in, "logging_point") : "",
	    "evidence_criteria",
	    "confirm", merge_s(ec, "confirm") != NULL ? merge_s(ec, "confirm") :
	    "", "reject", merge_s(ec, "reject") != NULL ?
	    merge_s(ec, "reject") : "",
	    "likelihood", json_is_number(lk) ? json_deep_copy(lk) :
	    json_integer((json_int_t)likely), "status", st,
	    "evidence", json_is_object(json_object_get(in, "evidence")) ?
	    json_deep_copy(json_object_get(in, "evidence")) : json_null(),
	    "verdict_reason", json_is_string(json_object_get(in,
	    "verdict_reason")) ? json_deep_copy(json_object_get(in,
	    "verdict_reason")) : json_null());
}

/*
 * debug: the hypotheses the worker listed (a JSON list in its detailed
 * output), else one made of its summary; ids continue H1, H2 ...
 */
static void
merge_debug(json_t *ss, const json_t *res, const char *outcome,
    const char *now)
{
	json_t		*dbg = merge_sub(ss, "debug", 0);
	json_t		*hyps = merge_sub(dbg, "hypotheses", 1);
	json_t		*found = NULL, *one = NULL, *h;
	const json_t	*e;
	const char	*sum = merge_s(res, "summary");
	const char	*det = merge_s(res, "detailed_output");
	char		 id[32];
	size_t		 i, n = json_array_size(hyps) + 1;
	json_int_t	 it;

	if (strcmp(outcome, "failed") != 0) {
		if (det != NULL)
			found = merge_find_hyp(det);
		if (found == NULL && sum != NULL && *sum != '\0') {
			one = json_pack("{s:s}", "description", sum);
			found = json_pack("[O]", one);
			json_decref(one);
		}
	}
	json_array_foreach(found, i, e) {
		if (i == MERGE_MAX_HYP)
			break;
		if (!json_is_object(e))
			continue;
		do
			snprintf(id, sizeof id, "H%zu", n++);
		while (merge_id_used(hyps, id));
		h = merge_hyp(e, id, i + 1);
		if (strcmp(merge_s(h, "status"), "confirmed") == 0)
			json_object_set_new(dbg, "confirmed_hypothesis",
			    json_string(id));
		json_array_append_new(hyps, h);
	}
	json_decref(found);
	if (!json_is_string(json_object_get(dbg, "active_bug")) &&
	    sum != NULL && *sum != '\0' && strcmp(outcome, "failed") != 0)
		json_object_set_new(dbg, "active_bug", json_string(sum));
	json_object_set_new(dbg, "hypotheses_count",
	    json_integer((json_int_t)json_array_size(hyps)));
	it = json_integer_value(json_object_get(dbg, "iteration"));
	json_object_set_new(dbg, "iteration", json_integer(it + 1));
	json_object_set_new(dbg, "last_analysis_at", json_string(now));
}

/*
 * validate: the parsed TAP when there was some (the worker's own failed
 * status still fails it), else the outcome alone: success is a pass.
 * A worker that failed (cut off, lost, crashed, any error kind) never
 * passes, whatever TAP it printed before.
 */
static void
merge_validate(json_t *ss, const json_t *res, const char *outcome,
    const char *now)
{
	json_t		*val = merge_sub(ss, "validate", 0);
	const json_t	*tap = json_object_get(res, "tap");
	int		 passed;

	if (json_integer_value(json_object_get(tap, "count")) > 0 ||
	    json_is_integer(json_object_get(tap, "planned"))) {
		passed = json_is_true(json_object_get(tap, "passed")) &&
		    strcmp(outcome, "failed") != 0 && !cause_failed(res);
		json_object_set_new(val, "test_results",
		    json_deep_copy(json_object_get(tap, "test_results")));
		json_object_set_new(val, "failed_tests",
		    json_deep_copy(json_object_get(tap, "failed_tests")));
		json_object_set_new(val, "pass_rate",
		    json_deep_copy(json_object_get(tap, "pass_rate")));
	} else {
		passed = strcmp(outcome, "success") == 0 && !cause_failed(res);
		json_object_set_new(val, "test_results", json_array());
		json_object_set_new(val, "failed_tests", json_array());
		json_object_set_new(val, "pass_rate",
		    json_integer(passed ? 100 : 0));
	}
	json_object_set_new(val, "passed", json_boolean(passed));
	json_object_set_new(val, "last_run_at", json_string(now));
}

/*
 * One role's result into skill_state.  A needs_input result only records
 * its questions: the role runs again once they are answered.
 */
int
merge_role(json_t *ss, const char *role, const json_t *res, const char *now)
{
	const char	*outcome;

	if (loop_role_index(role) < 0 || !json_is_object(ss))
		return -1;
	outcome = merge_outcome(role, res);
	if (strcmp(outcome, "needs_input") == 0) {
		clarify_questions(ss, role, json_object_get(res, "questions"),
		    NULL);
		return 0;
	}
	if (strcmp(role, "develop") == 0)
		merge_develop(ss, res, outcome, now);
	else if (strcmp(role, "debug") == 0)
		merge_debug(ss, res, outcome, now);
	else if (strcmp(role, "validate") == 0)
		merge_validate(ss, res, outcome, now);
	merge_common(ss, role, res, outcome, now);
	return 0;
}

/* The id of a tasks file's line: CCW's task_id, or our own id. */
static const char *
merge_task_id(const json_t *t)
{
	return merge_s(t, "task_id") != NULL ? merge_s(t, "task_id") :
	    merge_s(t, "id");
}

/*
 * A front end deleted or reordered tasks of the file.  A pending task
 * that came from it (only CCW's task lines carry a prompt_template) and
 * is no longer there goes; CCW's tasks take the file's order in the
 * places they hold.  A task begun or done, or the engine's own, stays.
 */
static void
merge_tasks_follow(json_t *tasks, const json_t *in)
{
	json_t		*order = json_array(), *nt;
	const json_t	*t;
	const char	*id, *st;
	size_t		 i, k, n;

	for (i = json_array_size(tasks); i-- > 0; ) {
		t = json_array_get(tasks, i);
		st = merge_s(t, "status");
		if (json_object_get(t, "prompt_template") == NULL ||
		    st == NULL || strcmp(st, "pending") != 0)
			continue;
		json_array_foreach(in, k, nt)
			if (merge_task_id(nt) != NULL && merge_s(t, "id") !=
			    NULL && strcmp(merge_task_id(nt), merge_s(t,
			    "id")) == 0)
				break;
		if (k == json_array_size(in))
			json_array_remove(tasks, i);
	}
	json_array_foreach(in, k, t)
		if ((id = merge_task_id(t)) != NULL &&
		    (nt = merge_find_id(tasks, id)) != NULL &&
		    json_object_get(nt, "prompt_template") != NULL &&
		    merge_find_id(order, id) == NULL)
			json_array_append(order, nt);
	n = 0;
	json_array_foreach(tasks, i, t)
		if (merge_s(t, "id") != NULL && n < json_array_size(order) &&
		    merge_find_id(order, merge_s(t, "id")) != NULL)
			json_array_set(tasks, i, json_array_get(order, n++));
	json_decref(order);
}

/*
 * The tasks file's tasks (after every action): those not in the list yet
 * are added as they are planned, pending unless the file says otherwise;
 * CCW's key is "task_id", and its description, prompt_template, command
 * and on_error go along for the develop prompt.  A task already listed
 * keeps its status; its description and instructions follow the file,
 * and so do deletions and the order (merge_tasks_follow).
 */
void
merge_tasks(json_t *ss, const json_t *in, const char *now)
{
	static const char *const sts[] = { "pending", "in_progress",
	    "completed", "failed", NULL };
	json_t		*dev = merge_sub(ss, "develop", 0);
	json_t		*tasks = merge_sub(dev, "tasks", 1);
	static const char *const carried[] = { "prompt_template", "command",
	    "on_error", NULL };
	const json_t	*t;
	json_t		*nt;
	const char	*id, *st;
	size_t		 i;
	int		 k;

	json_array_foreach(in, i, t) {
		if ((id = merge_task_id(t)) == NULL)
			continue;	/* the reader reported it */
		if ((nt = merge_find_id(tasks, id)) != NULL) {
			if (merge_s(t, "description") != NULL)
				json_object_set(nt, "description",
				    json_object_get(t, "description"));
			for (k = 0; carried[k] != NULL; k++)
				if (merge_s(t, carried[k]) != NULL)
					json_object_set(nt, carried[k],
					    json_object_get(t, carried[k]));
			continue;
		}
		st = merge_s(t, "status");
		for (k = 0; st != NULL && sts[k] != NULL; k++)
			if (strcmp(st, sts[k]) == 0)
				break;
		if (st == NULL || sts[k] == NULL)
			st = "pending";
		nt = json_pack("{s:s, s:s, s:s*, s:s, s:s, s:o, s:s, s:n}",
		    "id", id, "description", merge_s(t, "description") != NULL ?
		    merge_s(t, "description") : "", "tool", merge_s(t, "tool"),
		    "mode", merge_s(t, "mode") != NULL ? merge_s(t, "mode") :
		    "write", "status", st, "files_changed", merge_files(t),
		    "created_at", now, "completed_at");
		for (k = 0; carried[k] != NULL; k++)
			if (merge_s(t, carried[k]) != NULL)
				json_object_set(nt, carried[k],
				    json_object_get(t, carried[k]));
		json_array_append_new(tasks, nt);
	}
	merge_tasks_follow(tasks, in);
	merge_count_tasks(dev);
}

/* A path as two workers may spell it: without a leading "./". */
static const char *
merge_norm(const char *f)
{
	while (f[0] == '.' && f[1] == '/')
		for (f += 2; *f == '/'; f++)
			;
	return f;
}

/*
 * Whether a path a parallel worker observed changed is its own: workers
 * of a step share the directory, so each observes the others' writes
 * too; a worker's own are those it also claimed.  A result without
 * files_claimed (an older worker's) owns all it lists.
 */
static int
merge_owned(const json_t *res, const char *path)
{
	const json_t	*claimed = json_object_get(res, "files_claimed"), *f;
	size_t		 i;

	if (!json_is_array(claimed))
		return 1;
	json_array_foreach(claimed, i, f)
		if (json_is_string(f) &&
		    strcmp(merge_norm(json_string_value(f)), path) == 0)
			return 1;
	return 0;
}

/*
 * Paths two (or more) workers of a parallel step changed (observed, and
 * their own: merge_owned): one entry per path, workers in role order, in
 * the order the second worker is met.
 */
json_t *
merge_conflicts(const char *const *roles, const json_t *const *res,
    size_t n)
{
	json_t		*out = json_array(), *seen = json_object(), *e, *w;
	const json_t	*f;
	const char	*role, *path;
	size_t		 i, k, j;
	int		 dup;

	for (i = 0; i < n; i++) {
		if (res[i] == NULL)
			continue;
		role = roles[i];
		json_array_foreach(json_object_get(res[i], "files_changed"),
		    k, f) {
			if (!json_is_string(f))
				continue;
			path = merge_norm(json_string_value(f));
			if (*path == '\0' || !merge_owned(res[i], path))
				continue;
			if ((e = json_object_get(seen, path)) == NULL) {
				json_object_set_new(seen, path, json_pack(
				    "{s:s, s:[s], s:s}", "file", path,
				    "workers", role, "resolution", "manual"));
				continue;
			}
			w = json_object_get(e, "workers");
			dup = 0;
			for (j = 0; j < json_array_size(w); j++)
				if (strcmp(json_string_value(json_array_get(w,
				    j)), role) == 0)
					dup = 1;
			if (dup)
				continue;
			json_array_append_new(w, json_string(role));
			if (json_array_size(w) == 2)
				json_array_append(out, e);
		}
	}
	json_decref(seen);
	return out;
}

/* A parallel worker's result as parallel_results keeps it. */
static json_t *
merge_brief(const char *role, const json_t *res)
{
	json_t	*b;

	if (res == NULL)
		return json_null();
	b = json_pack("{s:s?, s:s, s:s?, s:o, s:s?, s:s?, s:b}",
	    "agent_id", merge_s(res, "agent_id"),
	    "status", merge_outcome(role, res),
	    "summary", merge_s(res, "summary"),
	    "files_changed", merge_files(res),
	    "next_suggestion", merge_s(res, "next_suggestion"),
	    "loop_back_to", merge_s(res, "loop_back_to"),
	    "timed_out", json_is_true(json_object_get(res, "timed_out")));
	merge_claimed(b, res);
	return b;
}

/*
 * The parallel step: develop, debug, validate each into their own section
 * in the group's order, whatever order they finished in; then
 * parallel_results.
 */
void
merge_parallel(json_t *ss, const char *const *roles,
    const json_t *const *res, size_t n, const char *now)
{
	json_t	*pr;
	size_t	 i;

	for (i = 0; i < n; i++)
		if (res[i] != NULL)
			merge_role(ss, roles[i], res[i], now);
	pr = json_object();
	for (i = 0; i < n; i++)
		json_object_set_new(pr, roles[i], merge_brief(roles[i],
		    res[i]));
	json_object_set_new(pr, "conflicts", merge_conflicts(roles, res, n));
	json_object_set_new(pr, "merged_at", json_string(now));
	json_object_set_new(ss, "parallel_results", pr);
}

/*
 * A validation that answered "failed" (its tests fail) is the loop's
 * normal way back, not the end of the loop: only a validate worker that
 * timed out or never gave a result (errored) ends it.
 */
static int
merge_failed_validation(int role, const json_t *res)
{
	const char	*as = merge_s(res, "agent_status");

	return role == LOOP_VALIDATE &&
	    !json_is_true(json_object_get(res, "timed_out")) &&
	    (as == NULL || strcmp(as, "completed") == 0);
}

/*
 * The auto sequence after one action: a failure ends it (-1), except a
 * failed validation, which goes back (loop_back_to, else develop);
 * complete is the end (LOOP_NROLES); a loop_back_to jumps back; after
 * validate, complete if it passed, else develop again; else the next
 * role.  max_iterations is the engine's to check before an iteration.
 */
int
merge_next(int role, const json_t *res, const json_t *ss)
{
	int	back = loop_role_index(merge_s(res, "loop_back_to"));

	if (role < 0 || role >= LOOP_NROLES)
		return -1;
	if (strcmp(merge_outcome(loop_role_name(role), res), "failed") == 0) {
		if (!merge_failed_validation(role, res))
			return -1;
		return back >= LOOP_DEVELOP && back <= LOOP_DEBUG ? back :
		    LOOP_DEVELOP;
	}
	if (role == LOOP_COMPLETE)
		return LOOP_NROLES;
	if (back >= LOOP_INIT && back <= LOOP_VALIDATE)
		return back;
	if (role == LOOP_VALIDATE)
		return json_is_true(json_object_get(json_object_get(ss,
		    "validate"), "passed")) ? LOOP_COMPLETE : LOOP_DEVELOP;
	return role + 1;
}

/*
 * The failure_reason of a loop ended by a failed action: the role, and
 * the outcome kind with the CLI's own words (cause_of).
 */
char *
merge_fail_reason(const char *role, const json_t *res)
{
	char	*reason, *why;

	if (json_is_true(json_object_get(res, "timed_out")) &&
	    outcome_is(merge_s(res, "error_kind"), OUTCOME_IDLE)) {
		xasprintf(&reason, "%s: worker idle (%s)", role,
		    merge_s(res, "reason") != NULL ? merge_s(res, "reason") :
		    "no output");
		return reason;
	}
	if (json_is_true(json_object_get(res, "timed_out"))) {
		xasprintf(&reason, "%s: worker timeout (no result after the "
		    "deadline and a nudge)", role);
		return reason;
	}
	why = cause_of(res);
	xasprintf(&reason, "%s failed: %s", role, why);
	free(why);
	return reason;
}

/* The fields of a worker_result event. */
json_t *
merge_event(const char *role, const json_t *res)
{
	return json_pack("{s:O?, s:s, s:O?, s:s, s:O?, s:O?, s:O?, s:O?,"
	    " s:O?, s:O?, s:O?, s:O?, s:O?}", "agent_id",
	    json_object_get(res, "agent_id"),
	    "role", role, "tool", json_object_get(res, "tool"),
	    "status", merge_outcome(role, res),
	    "summary", json_object_get(res, "summary"),
	    "files_changed", json_object_get(res, "files_changed"),
	    "files_claimed", json_object_get(res, "files_claimed"),
	    "loop_back_to", json_object_get(res, "loop_back_to"),
	    "timed_out", json_object_get(res, "timed_out"),
	    "duration_ms", json_object_get(res, "duration_ms"),
	    "error_kind", json_object_get(res, "error_kind"),
	    "reason", json_object_get(res, "reason"),
	    "usage", json_object_get(res, "usage"));
}

/*
 * LOOP_COMPLETED's final_status, CCW's: the status the file was left
 * with (completed, failed, paused: what a front end reads back), or how
 * the run ended when nothing changed the file's "running" (a signal's
 * stop: "stopped").
 */
static const char *
merge_final_status(const json_t *st, const char *ended)
{
	const char	*s = json_string_value(json_object_get(st, "status"));

	if (s != NULL && (strcmp(s, "completed") == 0 ||
	    strcmp(s, "failed") == 0 || strcmp(s, "paused") == 0))
		return s;
	return ended;
}

/*
 * The fields of LOOP_STATE_UPDATE (ended NULL) or LOOP_COMPLETED (how the
 * run ended, its exit status), from the state as committed; updated_at is
 * CCW's field, and tells a front end how late the event is.
 */
json_t *
merge_state_event(const json_t *st, const char *ended, int exit_code)
{
	const json_t	*ss = json_object_get(st, "skill_state");
	json_t		*o;

	o = json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, "
	    "s:O?}",
	    "state_status", json_object_get(st, "status"),
	    "updated_at", json_object_get(st, "updated_at"),
	    "current_iteration", json_object_get(st, "current_iteration"),
	    "max_iterations", json_object_get(st, "max_iterations"),
	    "action_index", json_object_get(ss, "action_index"),
	    "current_action", json_object_get(ss, "current_action"),
	    "mode", json_object_get(ss, "mode"),
	    "passed", json_object_get(json_object_get(ss, "validate"),
	    "passed"), "usage", json_object_get(ss, "usage"));
	if (ended == NULL) {
		json_object_set(o, "status", json_object_get(st, "status"));
		return o;
	}
	json_object_set_new(o, "status", json_string(ended));
	json_object_set_new(o, "exit_code", json_integer(exit_code));
	json_object_set(o, "failure_reason", json_object_get(st,
	    "failure_reason") != NULL ? json_object_get(st, "failure_reason") :
	    json_null());
	json_object_set(o, "reason", json_object_get(o, "failure_reason"));
	json_object_set_new(o, "final_status", json_string(
	    merge_final_status(st, ended)));
	json_object_set_new(o, "total_iterations", json_integer(
	    json_integer_value(json_object_get(st, "current_iteration"))));
	return o;
}

/*
 * CCW's LOOP_STEP_COMPLETED: a step (one role's run, or the parallel
 * group) ended with status (an outcome); at iteration, after
 * duration_ms of wall time.
 */
json_t *
merge_step_event(const char *step, const char *status, json_int_t iteration,
    uint64_t duration_ms)
{
	return json_pack("{s:s?, s:s?, s:I, s:I}", "step_id", step, "status",
	    status, "iteration", iteration, "duration_ms",
	    (json_int_t)duration_ms);
}
