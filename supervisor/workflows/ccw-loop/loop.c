/*
 * loop.c: the run engine.  Drives one loop in auto, parallel or
 * interactive mode over the four verbs: a worker per action (the
 * workflow's parallel group at once in the parallel step), each with its
 * own wait, nudge, wait, close; results merged and committed one action
 * at a time; clarifications answered; pause and stop from the state file
 * obeyed.  Roles, steps and rules come from the workflow's table.
 * The step machine, a step's questions and re-runs, and what a change
 * of the state file under the loop does (it was four files that called
 * each other in a circle).  Its workers (looprun.c), best-of-N's pick
 * (pick.c) and a step's worktrees and merge (isolate.c) are handed off
 * through loopint.h; none calls back into loop.c.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "attempts.h"
#include "ccw-loop.h"
#include "filewatch.h"
#include "chan.h"
#include "isolate.h"
#include "log.h"
#include "loop.h"
#include "loopint.h"
#include "progress.h"
#include "question.h"
#include "retire.h"
#include "state.h"
#include "sup.h"
#include "xmalloc.h"

/* Defined below, in the order a run uses them. */
/* the state file under the loop */
static void		 loop_deleted(struct loop *);
static int		 loop_file_gone(struct loop *);
static void		 loop_watch_cb(const char *, const json_t *, void *);
static void		 loop_front_cb(const char *, const json_t *, void *);

/* runs that end short */
static void		 loop_retry(struct loop *);
static int		 loop_retry_lost(struct loop *, int, const json_t *);
static void		 loop_retry_cb(evutil_socket_t, short, void *);

/*
 * A worker's PROGRESS: its line as a worker_progress event, so a front
 * end (serve's /api/events, its status page) sees each worker live.
 */
static void
loop_progress(struct agent *a, void *arg)
{
	loop_budget_check(arg);
	loop_event(arg, "worker_progress", json_pack("{s:s, s:s?, s:s?, "
	    "s:s?}", "agent_id", a->id, "role", a->role, "tool", a->tool,
	    "text", a->last_progress));
}

/* max_iterations is the front end's: read it from the last commit. */
static json_int_t
loop_max_iter(struct loop *l)
{
	json_int_t	m = json_integer_value(json_object_get(
			    state_store_get(l->store), "max_iterations"));

	return m > 0 ? m : 10;
}

/* Runs not yet done. */
static int
loop_nlive(struct loop *l)
{
	struct loop_run	*r;
	int		 n = 0;

	TAILQ_FOREACH(r, &l->runs, entry)
		if (!loop_run_done(r))
			n++;
	return n;
}

/* A commit of loop_save landed or failed: the terminal side hears of it. */
static void
loop_saved(struct state_store *s, int rc, const char *err, void *arg)
{
	struct loop	*l = arg;

	if (rc != 0 && (l->deleted || loop_file_gone(l))) {
		loop_deleted(l);
		return;
	}
	if (rc != 0)
		log_warnx("state %s: commit failed: %s", l->cfg.id, err);
	loop_event(l, "LOOP_STATE_UPDATE", merge_state_event(
	    state_store_get(s), NULL, 0));
	if (rc != 0)
		loop_end(l, EXIT_INTERNAL, NULL, NULL);
}

/*
 * One commit for what an action changed: skill_state (action_index in
 * it), current_iteration and, at the end, the loop's transition.  It
 * runs off the loop (the store's committer); cb hears when it landed.
 */
static void
loop_save(struct loop *l, const char *to, const char *reason,
    state_store_cb cb)
{
	json_t		*patch;

	json_object_set_new(l->ss, "action_index", json_integer(l->index));
	loop_budget_note(l);
	patch = json_pack("{s:O, s:I}", "skill_state", l->ss,
	    "current_iteration", l->iteration);
	state_store_update(l->store, patch);
	json_decref(patch);
	if (to != NULL && state_store_transition(l->store, to, reason) != 0)
		log_warnx("state %s: transition to %s refused", l->cfg.id, to);
	state_store_commit(l->store, cb, l);
}

/* The step's commit, for ask.c (the loop's save hook): loop_save. */
static void
loop_save_hook(struct loop *l, state_store_cb cb)
{
	loop_save(l, NULL, NULL, cb);
}

/*
 * One action's result: merged, side files written, the next action
 * chosen; one commit.  A failure ends an auto loop; an interactive one
 * goes back to the menu.
 */
static void
loop_take_one(struct loop *l, struct loop_run *r, const char *now)
{
	json_t		*res = r->result;
	const struct workflow *wf = l->wf;
	const char	*role = loop_role(l, r->role);
	const char	*outcome = wf->outcome(role, res);
	json_t		*before = json_deep_copy(l->ss);	/* the history's */
	char		*err = NULL;
	int		 next;

	wf->merge(l->ss, role, res, now);
	next = wf->next(r->role, res, l->ss);	/* after the merge */
	if (next >= 0 && wf->merged != NULL)
		wf->merged(r->role, l->ss, res, l->cfg.dirfd, l->cfg.id, now);
	if (wf->roles[r->role].flags & WORKFLOW_ITER)
		l->iteration++;
	prompt_record_action(l->store, role, res, r->prompt, before, outcome,
	    l->ss, l->iteration, now);
	json_decref(before);
	if (next < 0 && l->cfg.mode != LOOP_INTERACTIVE &&
	    loop_retry_lost(l, r->role, res)) {
		loop_save(l, NULL, NULL, loop_saved);	/* the same role, later */
		return;
	}
	if (next >= 0)
		l->failures = 0;
	if (next < 0 && l->cfg.mode != LOOP_INTERACTIVE) {
		err = merge_fail_reason(role, res);
		loop_end(l, json_is_true(json_object_get(res, "timed_out")) ?
		    EXIT_TIMEOUT : EXIT_FAILED, "failed", err);
		free(err);
		return;
	}
	if (next >= 0)
		l->index = next;
	if (next == (int)wf->nroles)
		loop_end(l, EXIT_OK, "completed", NULL);
	else
		loop_save(l, NULL, NULL, loop_saved);
}

/* The parallel step, merged in the group's order; then the next step. */
static void
loop_take_batch(struct loop *l, const char *now)
{
	const struct workflow	*wf = l->wf;
	const json_t		*res[WORKFLOW_MAX_GROUP];
	const char		*names[WORKFLOW_MAX_GROUP];
	json_t			*before;
	int			 i, failed = 0;

	for (i = 0; i < l->ncur; i++) {
		res[i] = l->cur[i]->result;
		names[i] = loop_role(l, l->cur[i]->role);
		failed += strcmp(wf->outcome(names[i], res[i]), "failed") == 0;
	}
	l->failures = failed == l->ncur ? l->failures + 1 : 0;
	before = json_deep_copy(l->ss);		/* the history's */
	wf->merge_group(l->ss, names, res, (size_t)l->ncur, now);
	isolate_record(l->iso, l->ss, 0);	/* branches, git conflicts */
	isolate_step_end(l->iso);
	l->iteration++;
	for (i = 0; i < l->ncur; i++)
		prompt_record_action(l->store, names[i], l->cur[i]->result,
		    l->cur[i]->prompt, before, wf->outcome(names[i], res[i]),
		    l->ss, l->iteration, now);
	json_decref(before);
	l->index = wf->group_next(l->ss);
	loop_save(l, NULL, NULL, loop_saved);	/* a failed commit ends it */
	if (l->failures > 0 && workflow_in_group(wf->parallel, l->index))
		loop_retry(l);
}

/*
 * A resolve step's develop run and its merge: its result into its
 * section as any run's, the conflict taken out of the queue when its
 * merge went in, else one more attempt counted; the action to run next
 * stays the one the parallel step chose.
 */
static void
loop_take_resolve(struct loop *l, struct loop_run *r, const char *now)
{
	const char	*role = loop_role(l, r->role);
	const char	*outcome = l->wf->outcome(role, r->result);
	json_t		*before = json_deep_copy(l->ss);	/* the history's */
	char		*what = NULL;

	l->wf->merge(l->ss, role, r->result, now);
	prompt_record_action(l->store, role, r->result, r->prompt, before,
	    outcome, l->ss, l->iteration, now);
	json_decref(before);
	(void)isolate_resolved(l->iso, l->ss, strcmp(outcome, "failed") == 0,
	    &what);
	free(what);
	isolate_step_end(l->iso);
	loop_save(l, NULL, NULL, loop_saved);
}

/*
 * CCW's LOOP_STEP_COMPLETED, told once the step's runs are all in and
 * before its merge (so before the loop's own end).  The parallel group
 * is one step: success when every role succeeded, failed when every
 * one failed, partial between; a single role's step is its outcome.
 */
static void
loop_step_event(struct loop *l)
{
	const char	*o = "failed", *status;
	int		 i, nok = 0, nfail = 0;

	for (i = 0; i < l->ncur; i++) {
		o = l->wf->outcome(loop_role(l, l->cur[i]->role),
		    l->cur[i]->result);
		nok += strcmp(o, "success") == 0;
		nfail += strcmp(o, "failed") == 0;
	}
	status = !l->batch ? o : nok == l->ncur ? "success" :
	    nfail == l->ncur ? "failed" : "partial";
	loop_event(l, "LOOP_STEP_COMPLETED", merge_step_event(l->batch ?
	    l->wf->parallel->name : loop_role(l, l->cur[0]->role), status,
	    l->iteration, clock_mono_ms() - l->step_start));
}

/*
 * The isolate's answer to a hand-off (prepare, try, merge: a run of git,
 * the kick called at its end): busy waits, failed ends the loop with
 * *why (freed).  Returns 1 unless ready.
 */
static int
loop_waits(struct loop *l, enum isolate_st st, char **why)
{
	if (st == ISO_FAILED)
		loop_end(l, EXIT_FAILED, "failed", *why);
	free(*why);
	*why = NULL;
	return st != ISO_READY;
}

/*
 * Best-of-N (pick.c): the step's attempts judged, the winner kept, told.
 * Returns 1 while try runs, or when it failed (the loop ends).
 */
static int
loop_pick(struct loop *l)
{
	char	*why = NULL;

	return loop_waits(l, pick_winner(l, &why), &why);
}

/*
 * An isolated step's writers merged (isolate.c), before the step is
 * taken.  Returns 1 while the merge runs, or when it failed.
 */
static int
loop_merge(struct loop *l)
{
	char	*why = NULL;

	return loop_waits(l, isolate_merge_step(l, &why), &why);
}

/*
 * The step's runs: questions are dealt with as each run ends; once all
 * are done the step is merged.  Returns 1 while the step goes on.
 */
static int
loop_step_runs(struct loop *l)
{
	char	now[40];
	int	i, busy = 0;

	for (i = 0; i < l->ncur; i++) {
		if (!loop_run_done(l->cur[i])) {
			busy = 1;
			continue;
		}
		if (l->cur[i]->cancelled || l->phase == LP_ASKING)
			continue;
		if (loop_requeue(l, i)) {	/* rate limited: again */
			if (l->phase == LP_ENDING)
				return 1;
			busy = 1;
			continue;
		}
		if (strcmp(l->wf->outcome(loop_role(l, l->cur[i]->role),
		    l->cur[i]->result), "needs_input") == 0 &&
		    ask_clarify(l, i))
			busy = 1;
		if (l->phase == LP_ENDING)
			return 1;
	}
	if (busy || l->phase == LP_ASKING)
		return 1;
	for (i = 0; i < l->ncur; i++)
		if (l->cur[i]->cancelled || l->cur[i]->rate_limited ||
		    strcmp(l->wf->outcome(loop_role(l, l->cur[i]->role),
		    l->cur[i]->result), "needs_input") == 0) {
			l->ncur = 0;	/* interrupted: redone on resume */
			l->attempting = 0;
			isolate_step_end(l->iso);
			return 0;
		}
	if ((l->attempting && loop_pick(l)) || loop_merge(l))
		return 1;
	loop_step_event(l);
	clock_iso(NULL, 1, now, sizeof now);
	if (l->batch)
		loop_take_batch(l, now);
	else if (l->resolving)
		loop_take_resolve(l, l->cur[0], now);
	else {
		isolate_step_end(l->iso);	/* an isolated auto step */
		loop_take_one(l, l->cur[0], now);
	}
	l->ncur = 0;
	l->resolving = 0;
	return 0;
}

/*
 * Start n runs of a role into the step (wait_ms, nudge_ms: the batch's;
 * 0: the role's own).  -1 when one could not start (the loop ends).
 */
static int
loop_spawn_n(struct loop *l, int role, unsigned n, uint64_t wait_ms,
    uint64_t nudge_ms)
{
	for (; n > 0; n--) {
		if ((l->cur[l->ncur] = loop_spawn(l, role, NULL, wait_ms,
		    nudge_ms, 0)) == NULL)
			return -1;
		l->ncur++;
	}
	return 0;
}

/* Start a single-worker action. */
static void
loop_start_one(struct loop *l, int role)
{
	l->ncur = 0;
	l->batch = 0;
	l->step_start = clock_mono_ms();
	if ((l->cur[0] = loop_spawn(l, role, NULL, 0, 0, 0)) != NULL)
		l->ncur = 1;
}

/*
 * A single role's step, best-of-N: its task n times at once, each in a
 * worktree of its own kept after its run (the check runs in it).
 */
static void
loop_start_attempts(struct loop *l, int role)
{
	l->ncur = 0;
	l->batch = 0;
	l->attempting = 0;
	l->step_start = clock_mono_ms();
	if (loop_spawn_n(l, role, pick_attempts(l, role), 0, 0) != 0)
		l->ncur = 0;	/* loop_end closes what started */
}

/* The parallel group's roles at once, under the batch deadline. */
static void
loop_start_batch(struct loop *l)
{
	const struct workflow_group	*g = l->wf->parallel;
	size_t				 i;

	l->ncur = 0;
	l->batch = 1;
	l->attempting = 0;
	l->step_start = clock_mono_ms();
	for (i = 0; i < g->nroles; i++)
		if (loop_spawn_n(l, g->roles[i], pick_attempts(l, g->roles[i]),
		    l->cfg.batch_ms, l->cfg.batch_nudge_ms) != 0) {
			l->ncur = 0;	/* loop_end closes what started */
			break;
		}
}

/*
 * A parallel step's merge conflicted: develop (the group's first role)
 * runs alone in a worktree holding that merge, the conflict in its
 * prompt; at most merge.max_resolve times, then the loop fails.
 */
static void
loop_start_resolve(struct loop *l)
{
	char	*extra, *why = isolate_unresolved(l->iso, l->ss);

	if (why != NULL) {
		loop_end(l, EXIT_FAILED, "failed", why);
		free(why);
		return;
	}
	extra = isolate_resolve_prompt(l->ss, l->cfg.id);
	l->ncur = 0;
	l->batch = 0;
	l->resolving = 1;
	l->step_start = clock_mono_ms();
	if ((l->cur[0] = loop_spawn(l, l->wf->parallel->roles[0], extra, 0,
	    0, 0)) != NULL)
		l->ncur = 1;
	free(extra);
}

/*
 * Before a parallel step: its worktrees' base prepared (a run of git,
 * the kick called at its end).  Returns 1 while it runs, or when it
 * failed (the loop ends: a dirty tree at the start).
 */
static int
loop_prepare(struct loop *l)
{
	char	*why = NULL;

	return loop_waits(l, isolate_prepare(l->iso, l->ss, &why), &why);
}

/* The bound on iterations, checked before an iteration starts. */
static int
loop_bounded(struct loop *l)
{
	char	*reason;

	if (l->iteration < loop_max_iter(l))
		return 0;
	xasprintf(&reason, "max_iterations %lld reached",
	    (long long)loop_max_iter(l));
	loop_end(l, EXIT_FAILED, "failed", reason);
	free(reason);
	return 1;
}

/* Whether the workflow's goal is met (the menu shows it). */
static int
loop_passed(struct loop *l)
{
	return l->wf->passed == NULL || l->wf->passed(l->ss);
}

/* Whether an action is an iteration, bounded by max_iterations. */
static int
loop_iterates(struct loop *l, int role)
{
	return role >= 0 && (size_t)role < l->wf->nroles &&
	    (l->wf->roles[role].flags & WORKFLOW_ITER) != 0;
}

/* The interactive menu, with where the loop stands; loop_choose answers. */
static void
loop_menu(struct loop *l, const char *notice)
{
	json_t	*info = json_pack("{s:I, s:I, s:b, s:O?, s:s?}", "iteration",
		    l->iteration, "max_iterations", loop_max_iter(l), "passed",
		    loop_passed(l), "last_action", json_object_get(l->ss,
		    "last_action"), "notice", notice);

	(void)loop_transition(l, LE_ASK, -1);
	if (l->cfg.hooks.menu != NULL)
		l->cfg.hooks.menu(l->cfg.hooks.arg, info);
	json_decref(info);
}

/* Start the next action of the mode, or end the loop. */
static void
loop_next(struct loop *l)
{
	const struct workflow	*wf = l->wf;
	int			 i = l->index;

	if (l->cfg.mode == LOOP_INTERACTIVE) {
		loop_menu(l, NULL);
		return;
	}
	if (l->cfg.mode == LOOP_PARALLEL &&	/* a conflict first */
	    isolate_resolve_branch(l->ss) != NULL) {
		if (!loop_prepare(l))
			loop_start_resolve(l);
		return;
	}
	if (wf->admit != NULL)	/* ccw-loop: complete needs a pass */
		i = l->index = wf->admit(i, l->ss, NULL);
	if (i >= (int)wf->nroles) {
		loop_end(l, EXIT_OK, "completed", NULL);
		return;
	}
	if (l->cfg.mode == LOOP_PARALLEL &&
	    workflow_in_group(wf->parallel, i)) {
		questions_drop(l);	/* a group's questions: asked anew */
		if (!loop_bounded(l) && !loop_prepare(l))
			loop_start_batch(l);
		return;
	}
	if (loop_iterates(l, i) && loop_bounded(l))
		return;
	if (ask_resume(l, i))	/* answered while it was away */
		return;
	/* best-of-N in auto mode: every step isolated, merged after */
	if (l->cfg.mode == LOOP_AUTO && attempts_most(l->cfg.config,
	    &l->cfg.over) > 1 && loop_prepare(l))
		return;
	loop_start_attempts(l, i);
}

/* The person chose the next action. */
void
loop_choose(struct loop *l, const char *action)
{
	const struct workflow	*wf = l->wf;
	const char		*why = NULL;
	int			 role = workflow_role_index(wf, action);

	if (loop_transition(l, LE_CHOOSE, 0) != 0)
		return;		/* no menu is shown (or the loop ends) */
	if (action == NULL || strcmp(action, "exit") == 0) {
		/* the person ended it: not left running for nobody */
		loop_end(l, EXIT_STOPPED, "failed",
		    "stopped by the user from the interactive menu");
		return;
	}
	if (role < 0 || (wf->roles[role].flags & WORKFLOW_MENU) == 0)
		loop_menu(l, "unknown action");
	else if (wf->admit != NULL && wf->admit(role, l->ss, &why) != role)
		loop_menu(l, why);
	else if (loop_iterates(l, role) && l->iteration >= loop_max_iter(l))
		loop_menu(l, "max_iterations reached: only complete or exit");
	else
		loop_start_one(l, role);
	loop_kick(l);
}

/* The file holds our last values: the loop has ended. */
static void
loop_settled(struct state_store *s, int rc, const char *err, void *arg)
{
	struct loop	*l = arg;

	/* stopping with the lock held elsewhere: already said */
	if (rc != 0 && !atomic_load(state_store_stopping(s)))
		log_warnx("state %s: the last check of the file failed: %s",
		    l->cfg.id, err);
	if (l->cfg.hooks.done != NULL)
		l->cfg.hooks.done(l->cfg.hooks.arg, l->exit_code);
}

/*
 * The loop's side files are written too.  A deleted loop's files go; a
 * live one's state file is checked (and our fields written again if a
 * front end's late write reverted them) before the end is told.
 */
static void
loop_sides_done(void *arg)
{
	struct loop	*l = arg;
	char		*err = NULL;

	if (l->deleted) {
		/* nothing writes them now: the deleted loop's files go */
		if (state_remove_files(state_store_dirfd(l->store), l->cfg.id,
		    &err) != 0) {
			log_warnx("loop %s: %s", l->cfg.id, err);
			free(err);
		}
		loop_event(l, "LOOP_DELETED", json_pack("{s:s}", "loop_id",
		    l->cfg.id));
		if (l->cfg.hooks.done != NULL)
			l->cfg.hooks.done(l->cfg.hooks.arg, l->exit_code);
		return;
	}
	state_store_settle(l->store, loop_settled, l);
}

/*
 * LOOP_COMPLETED from the state as committed; a front end's stop whose
 * words our last save could not carry any more (made before it came)
 * and the file does not show yet (its commit lands after ours) is told
 * as the front end wrote it, which the file will say.
 */
static void
loop_completed(struct loop *l, const json_t *st)
{
	const char	*status = json_string_value(json_object_get(st,
			    "status"));
	json_t		*fixed = NULL;

	if (l->end_to != NULL && status != NULL &&
	    strcmp(status, "running") == 0) {
		fixed = json_copy((json_t *)st);
		json_object_set_new(fixed, "status", json_string(l->end_to));
		if (l->end_reason != NULL)
			json_object_set_new(fixed, "failure_reason",
			    json_string(l->end_reason));
		st = fixed;
	}
	loop_event(l, "LOOP_COMPLETED", merge_state_event(st,
	    l->exit_code == EXIT_OK ? "completed" : l->exit_code ==
	    EXIT_PAUSED ? "paused" : l->exit_code == EXIT_STOPPED ?
	    "stopped" : "failed", l->exit_code));
	json_decref(fixed);
}

/* The last commit landed (or failed): the last event, out. */
static void
loop_finish_saved(struct state_store *s, int rc, const char *err, void *arg)
{
	struct loop	*l = arg;
	const json_t	*st;
	const char	*status;

	if (rc != 0 && !l->deleted && loop_file_gone(l))
		loop_deleted(l);
	if (rc != 0 && !l->deleted) {
		log_warnx("state %s: commit failed: %s", l->cfg.id, err);
		if (l->exit_code == EXIT_OK)
			l->exit_code = EXIT_INTERNAL;
	}
	if (l->deleted) {
		state_store_side_wait(s, loop_sides_done, l);
		return;
	}
	loop_event(l, "LOOP_STATE_UPDATE", merge_state_event(
	    state_store_get(s), NULL, 0));
	st = state_store_get(s);
	status = json_string_value(json_object_get(st, "status"));
	/* a front end's pause or stop may have come in between */
	if (l->end_to != NULL && status != NULL &&
	    strcmp(status, l->end_to) != 0 && l->exit_code != EXIT_INTERNAL)
		l->exit_code = strcmp(status, "paused") == 0 ? EXIT_PAUSED :
		    EXIT_STOPPED;
	prompt_record(l->store, json_pack("{s:s, s:s?, s:i, s:s?}", "event",
	    "loop_end", "status", status, "exit_code", l->exit_code,
	    "failure_reason", json_string_value(json_object_get(st,
	    "failure_reason"))));
	loop_completed(l, st);
	/* its side files written: waited for here, where a stop still reaches */
	state_store_side_wait(s, loop_sides_done, l);
}

/* Everything is closed: the last commit; loop_finish_saved ends the run. */
static void
loop_finish(struct loop *l)
{
	const char	*now = json_string_value(json_object_get(
			    state_store_get(l->store), "status"));

	(void)loop_transition(l, LE_FINISH, 0);
	permask_drop(l);	/* no permission request will be answered */
	/* there already (a front end's stop the watch saw): no transition */
	loop_save(l, now != NULL && l->end_to != NULL &&
	    strcmp(now, l->end_to) == 0 ? NULL : l->end_to, l->end_reason,
	    loop_finish_saved);
}

/* Stop now (a signal, another program's status): exit 4, status kept. */
void
loop_stop(struct loop *l, const char *why)
{
	loop_stop_as(l, why, NULL, NULL);
}

/*
 * Stop now, the last save setting status TO and REASON (a front end's
 * stop: what its commit wrote, so whichever lands last the file says
 * it, and LOOP_COMPLETED too); a stop under way (the watch saw that
 * commit first) or a last save already made take them on for the
 * event.  Exit 4.
 */
void
loop_stop_as(struct loop *l, const char *why, const char *to,
    const char *reason)
{
	log_info("loop %s: stopping: %s", l->cfg.id, why);
	state_store_nowait(l->store);	/* a held lock must not keep us */
	if (to != NULL && l->end_to == NULL && (l->phase == LP_DONE ||
	    (l->phase == LP_ENDING && l->exit_code == EXIT_STOPPED))) {
		l->end_to = xstrdup(to);
		l->end_reason = reason != NULL ? xstrdup(reason) : NULL;
		return;
	}
	loop_end(l, EXIT_STOPPED, to, reason);
}

/*
 * Runs of steps already taken leave memory before the next step, with
 * their agents (agent_retire): a loop retried for weeks (a crash loop)
 * must not keep every worker it ever ran.  Their results are in the
 * state file (worker_results, errors) and their logs; the current
 * step's runs stay.  Only from the kick event: nothing up the stack
 * holds a run.
 */
static void
loop_prune(struct loop *l)
{
	struct loop_run	*r, *next;
	int		 i, cur, pruned = 0;

	for (r = TAILQ_FIRST(&l->runs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, entry);
		for (cur = 0, i = 0; i < l->ncur; i++)
			cur |= l->cur[i] == r;
		if (cur || !loop_run_done(r) || r->wait != NULL ||
		    (r->a != NULL && !agent_final(r->a)))
			continue;
		TAILQ_REMOVE(&l->runs, r, entry);
		if (r->ladder != NULL)
			ladder_free(r->ladder);
		if (r->a != NULL)
			(void)agent_retire(r->a);
		json_decref(r->result);
		free(r->tool);
		free(r->extra);
		free(r->resume);
		free(r->prompt);
		free(r);
		pruned = 1;
	}
	if (pruned)	/* the workers directory keeps its newest logs */
		(void)retire_logs(&l->sup);
}

/* The engine's one place of decision, run from the kick event. */
static void
loop_kick_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct loop	*l = arg;

	(void)fd;
	(void)ev;
	loop_budget_check(l);	/* a run's usage counted: held at 100 % */
	if (l->phase == LP_DONE || (l->held && l->phase != LP_ENDING))
		return;		/* held: nothing decided till unhold */
	loop_admit_held(l);	/* starts a hold kept back */
	if (l->phase == LP_PAUSING)	/* a held start is not waited for */
		loop_unqueue(l);
	if (l->phase != LP_ENDING && l->ncur > 0 && loop_step_runs(l))
		return;
	if (l->phase == LP_ENDING) {
		if (loop_nlive(l) == 0 && isolate_finish(l->iso, l->ss,
		    l->exit_code, l->deleted) == ISO_READY)
			loop_finish(l);
		return;
	}
	if (l->phase == LP_PAUSING) {
		loop_end(l, EXIT_PAUSED, NULL, NULL);
		return;
	}
	if (l->phase == LP_ASKING || evtimer_pending(l->retry_ev, NULL))
		return;
	loop_prune(l);
	loop_next(l);
}

/* The isolate's hooks: a git run ended (decide again), an event. */
static void
loop_iso_kick(void *arg)
{
	loop_kick(arg);
}

static void
loop_iso_event(void *arg, const char *name, json_t *o)
{
	loop_event(arg, name, o);
}

/* Worktrees and the merge queue, on the loop's base and reaper. */
static void
loop_isolate_new(struct loop *l)
{
	struct isolate_cfg	ic;

	memset(&ic, 0, sizeof ic);
	ic.base = l->base;
	ic.children = l->sup.children;
	ic.id = l->cfg.id;
	ic.root = l->cfg.root;
	ic.state_dir = l->cfg.state_dir;
	ic.config = l->cfg.config;
	ic.over = &l->cfg.over;
	ic.kick = loop_iso_kick;
	ic.event = loop_iso_event;
	ic.arg = l;
	l->iso = isolate_new(&ic);
}

/*
 * The engine for a loop whose state file exists and is running: the
 * agent table, the verbs, the watch on the file.
 */
struct loop *
loop_new(struct event_base *base, struct state_store *store,
    const struct loop_cfg *cfg, char **err)
{
	const json_t	*st = state_store_get(store), *ss;
	struct loop	*l;

	/* the caller's table (the host's, run's config): none is no run */
	if (cfg->workflow == NULL) {
		xasprintf(err, "loop %s: no workflow to run", cfg->id);
		return NULL;
	}
	l = xcalloc(1, sizeof *l);
	l->base = base;
	l->store = store;
	l->cfg = *cfg;
	l->wf = cfg->workflow;
	TAILQ_INIT(&l->runs);
	TAILQ_INIT(&l->perms);
	ss = json_object_get(st, "skill_state");
	l->ss = json_is_object(ss) ? json_deep_copy(ss) :
	    l->wf->skeleton();
	json_object_set_new(l->ss, "mode",
	    json_string(loop_mode_name(cfg->mode)));
	l->iteration = json_integer_value(json_object_get(st,
	    "current_iteration"));
	l->index = (int)json_integer_value(json_object_get(l->ss,
	    "action_index"));
	if (l->index < 0 || l->index > (int)l->wf->nroles)
		l->index = 0;
	l->sup_ok = 1;		/* sup_free undoes a half-done sup_init too */
	if (sup_init(&l->sup, base, cfg->children, cfg->state_dir, cfg->id, err) != 0) {
		loop_free(l);
		return NULL;
	}
	l->verbs = verbs_new(&l->sup);
	loop_isolate_new(l);
	l->sup.progress = loop_progress;
	l->sup.progress_arg = l;
	l->sup.perm = permask_on_ask;	/* a CLI's permission requests */
	l->sup.perm_arg = l;
	l->kick = event_new(base, -1, 0, loop_kick_cb, l);
	l->retry_ev = evtimer_new(base, loop_retry_cb, l);
	l->ask_ev = event_new(base, -1, EV_PERSIST, ask_tick, l);
	l->save = loop_save_hook;
	l->saved = loop_saved;
	l->budget = loop_budget_new(l);
	if ((l->watch = state_watch_new(base, store, cfg->watch_poll ?
	    STATE_WATCH_POLL : STATE_WATCH_INOTIFY, loop_watch_cb, l,
	    err)) == NULL) {
		loop_free(l);
		return NULL;
	}
	state_watch_on_front(l->watch, loop_front_cb);
	return l;
}

/*
 * Set the loop going on the caller's event base; the caller dispatches,
 * and hears the end through hooks.done.
 */
void
loop_start(struct loop *l)
{
	prompt_record(l->store, json_pack("{s:s, s:s, s:b, s:i}", "event",
	    l->cfg.resumed ? "loop_resumed" : "loop_started", "mode",
	    loop_mode_name(l->cfg.mode), "resumed", l->cfg.resumed,
	    "action_index", l->index));
	loop_event(l, "LOOP_STATE_UPDATE", merge_state_event(
	    state_store_get(l->store), NULL, 0));
	loop_budget_check(l);
	loop_kick(l);
}

/* The workers running now, for the status line. */
json_t *
loop_live(struct loop *l)
{
	struct loop_run	*r;
	json_t		*a = json_array();
	uint64_t	 now = clock_mono_ms();

	TAILQ_FOREACH(r, &l->runs, entry)
		if (!loop_run_done(r) && r->a != NULL)
			json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s,"
			    " s:I, s:s, s:b, s:s?}", "loop_id", l->cfg.id,
			    "agent_id", r->a->id,
			    "role", loop_role(l, r->role), "tool", r->a->tool,
			    "elapsed_ms", (json_int_t)(now - r->a->t_start),
			    "log_path", r->a->log_path, "nudged",
			    r->a->nudged, "last", r->a->last_progress));
	return a;
}

/* Free everything; workers still alive are killed by sup_free. */
void
loop_free(struct loop *l)
{
	struct loop_run	*r;

	if (l == NULL)
		return;
	isolate_free(l->iso);	/* before the reaper it watches with */
	if (l->verbs != NULL)
		verbs_free(l->verbs);
	if (l->sup_ok)
		sup_free(&l->sup);
	permask_end(l);
	state_watch_free(l->watch);
	loop_budget_free(l->budget);
	if (l->kick != NULL)
		event_free(l->kick);
	if (l->retry_ev != NULL)
		event_free(l->retry_ev);
	if (l->ask_ev != NULL)
		event_free(l->ask_ev);
	filewatch_free(l->ask_watch);
	while ((r = TAILQ_FIRST(&l->runs)) != NULL) {
		TAILQ_REMOVE(&l->runs, r, entry);
		loop_run_release(r);
		json_decref(r->result);
		free(r->tool);
		free(r->extra);
		free(r->resume);
		free(r->prompt);
		if (r->ladder != NULL)
			ladder_free(r->ladder);
		free(r);
	}
	json_decref(l->ss);
	free(l->end_to);
	free(l->end_reason);
	free(l->held_why);
	free(l);
}

/*
 * A step whose runs end short of success: the retry policy's wait (its
 * questions are ask.c's).
 */

/*
 * The error kind that makes the failed step final: every run's is one
 * the retry policy names non-retryable (NULL: it may be tried again).
 */
static const char *
loop_final_kind(const struct loop *l)
{
	const char	*kind, *first = NULL;
	int		 i;

	for (i = 0; i < l->ncur; i++) {
		kind = json_string_value(json_object_get(l->cur[i]->result,
		    "error_kind"));
		if ((config_error_kind(kind) & l->cfg.retry.non_retryable) ==
		    0)
			return NULL;
		if (first == NULL)
			first = kind;
	}
	return first;
}

/*
 * The parallel step failed in every role: the next try only after the
 * retry policy's wait, armed from the clock now (a commit may just have
 * taken long); the loop fails once the attempts are spent.
 */
static void
loop_retry(struct loop *l)
{
	const struct retry_cfg	*rt = &l->cfg.retry;
	uint64_t		 ms;
	const char		*kind;
	char			*reason;

	if ((kind = loop_final_kind(l)) != NULL) {
		xasprintf(&reason, "the parallel step failed in every role "
		    "with error kind %s, which the retry policy does not retry "
		    "(roles.ROLE.retry.non_retryable)", kind);
		loop_end(l, EXIT_FAILED, "failed", reason);
		free(reason);
		return;
	}
	if (l->failures >= rt->attempts) {
		xasprintf(&reason, "the parallel step failed in every role "
		    "%u times in a row (retry policy: %u attempts)",
		    l->failures, rt->attempts);
		loop_end(l, EXIT_FAILED, "failed", reason);
		free(reason);
		return;
	}
	ms = config_retry_delay(rt, l->failures);
	log_info("loop %s: every role failed: try %u in %llu ms", l->cfg.id,
	    l->failures + 1, (unsigned long long)ms);
	prompt_record(l->store, json_pack("{s:s, s:s, s:i, s:I}", "event",
	    "step_retry", "step", l->wf->parallel->name, "attempt",
	    (int)l->failures + 1, "delay_ms", (json_int_t)ms));
	loop_event(l, "step_retry", json_pack("{s:s, s:i, s:i, s:I, s:s}",
	    "step", l->wf->parallel->name, "attempt", (int)l->failures + 1,
	    "attempts", (int)rt->attempts, "delay_ms", (json_int_t)ms,
	    "reason", "every role failed"));
	chan_arm_ms(l->retry_ev, ms);
}

/*
 * An auto loop's action whose worker was lost with its host (launcher
 * killed, network cut, scancel: "worker lost"): the machine failed, not
 * the agent, so the role's retry policy gives it another try, as a
 * parallel step that failed in every role gets one.  Returns 1 with the
 * retry armed; 0 when the loop must end (not lost, or attempts spent).
 */
static int
loop_retry_lost(struct loop *l, int role, const json_t *res)
{
	const char		*why = json_string_value(json_object_get(res,
				    "reason"));
	const struct retry_cfg	*rt;
	uint64_t		 ms;

	if (why == NULL || strncmp(why, "worker lost", 11) != 0 ||
	    l->cfg.config == NULL || role < 0 ||
	    (size_t)role >= l->cfg.config->nroles)
		return 0;
	rt = &l->cfg.config->roles[role].retry;
	if (++l->failures >= rt->attempts)
		return 0;
	ms = config_retry_delay(rt, l->failures);
	log_info("loop %s: %s lost its worker: try %u in %llu ms", l->cfg.id,
	    loop_role(l, role), l->failures + 1, (unsigned long long)ms);
	prompt_record(l->store, json_pack("{s:s, s:s, s:i, s:I}", "event",
	    "step_retry", "step", loop_role(l, role), "attempt",
	    (int)l->failures + 1, "delay_ms", (json_int_t)ms));
	loop_event(l, "step_retry", json_pack("{s:s, s:i, s:i, s:I, s:s}",
	    "step", loop_role(l, role), "attempt", (int)l->failures + 1,
	    "attempts", (int)rt->attempts, "delay_ms", (json_int_t)ms,
	    "reason", why));
	chan_arm_ms(l->retry_ev, ms);
	return 1;
}

/* The retry's wait is over: the step goes again (unless ended since). */
static void
loop_retry_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	loop_kick(arg);
}

/*
 * The state file changed under a running loop: a front end's status,
 * the file deleted.
 */

/*
 * The owner deleted the state file: the loop is not ours to go on with.
 * Its workers are closed now, its end commits nothing (the file is never
 * made again) and loop_sides_done removes its files: exit 4.
 */
static void
loop_deleted(struct loop *l)
{
	if (l->deleted)
		return;
	l->deleted = 1;
	log_warnx("loop %s: the state file was deleted: stopping its workers "
	    "and removing its files", l->cfg.id);
	state_store_nowait(l->store);
	if (l->phase == LP_DONE)	/* its last commit found it gone */
		l->exit_code = EXIT_STOPPED;
	else
		loop_end(l, EXIT_STOPPED, NULL, NULL);
}

/* A commit failed because the file is gone (the watch may not know yet). */
static int
loop_file_gone(struct loop *l)
{
	struct stat	 sb;
	char		*name;
	int		 gone;

	xasprintf(&name, "%s.json", l->cfg.id);
	gone = fstatat(state_store_dirfd(l->store), name, &sb,
	    AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT;
	free(name);
	return gone;
}

/*
 * A front end wrote the file, the status unchanged: a running loop's
 * budget read again, so that one raised while it runs holds it at the
 * new limits, not the old (a lowered one may hold it now).
 */
static void
loop_front_cb(const char *status, const json_t *st, void *arg)
{
	struct loop	*l = arg;

	if (strcmp(status, "running") == 0 && l->phase == LP_RUNNING &&
	    !loop_held(l))
		(void)loop_budget_resumed(l, st);
}

/*
 * Another program changed the status: paused stops new workers (and
 * with --pause-policy interrupt closes the running ones; with freeze
 * holds the loop, its workers frozen: hold.c); running again
 * cancels a pause not yet done; anything else is a stop, the loop's
 * last save and LOOP_COMPLETED saying that status and its reason.
 */
static void
loop_watch_cb(const char *status, const json_t *st, void *arg)
{
	struct loop	*l = arg;
	uint64_t	 since = l->held_at;	/* a hold that may end here */
	int		 held = loop_held(l);

	if (status == NULL) {
		loop_deleted(l);
		return;
	}
	log_info("loop %s: status is now %s", l->cfg.id, status);
	/* a budget's hold: thawed if raised enough, else paused again */
	if (strcmp(status, "running") == 0 && loop_budget_resumed(l, st)) {
		if (held && !loop_held(l))
			ask_thawed(l, clock_mono_ms() - since);
		return;
	}
	if (loop_held(l) && strcmp(status, "paused") == 0)
		return;		/* held: paused is what the file says */
	if (loop_held(l) && strcmp(status, "running") == 0) {
		loop_unhold(l);	/* on where it was */
		ask_thawed(l, clock_mono_ms() - since);
		return;
	}
	if (l->cfg.pause_freeze && strcmp(status, "paused") == 0 &&
	    l->phase == LP_RUNNING) {
		(void)loop_hold(l, "paused by a front end");
		return;
	}
	if (strcmp(status, "running") == 0) {
		if (loop_transition(l, LE_RESUME, 0) == 0)
			loop_kick(l);
	} else if (strcmp(status, "paused") == 0) {
		/* nobody answers a paused loop's questions: it ends now */
		if (l->cfg.pause_interrupt || l->phase == LP_ASKING)
			loop_end(l, EXIT_PAUSED, NULL, NULL);
		else {
			if (l->phase == LP_RUNNING)
				(void)loop_transition(l, LE_PAUSE, 0);
			loop_kick(l);
		}
	} else	/* its words are the loop's last: the event tells them */
		loop_stop_as(l, "the status was set to a final value by "
		    "another program", status, json_string_value(
		    json_object_get(st, "failure_reason")));
}
