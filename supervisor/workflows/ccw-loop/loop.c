/*
 * loop.c: the run engine.  Drives one loop in auto, parallel or
 * interactive mode over the four verbs: a worker per action (the
 * workflow's parallel group at once in the parallel step), each with its
 * own wait, nudge, wait, close; results merged and committed one action
 * at a time; clarifications answered; pause and stop from the state file
 * obeyed.  Roles, steps and rules come from the workflow's table.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "ccw-loop.h"
#include "loopguard.h"
#include "log.h"
#include "loop.h"
#include "loopint.h"
#include "progress.h"
#include "state.h"
#include "sup.h"
#include "xmalloc.h"

#define LOOP_STOP_GRACE_MS	1000	/* a stop closes within this */


/* An action's name, as the workflow's table spells it. */
const char *
loop_role(const struct loop *l, int role)
{
	return workflow_role_name(l->wf, role);
}

/* Is the run over (out of its gate's queue, its ladder's done ran)? */
int
loop_run_done(const struct loop_run *r)
{
	return !r->gating && (r->ladder == NULL ||
	    ladder_phase(r->ladder) == LADDER_DONE);
}


/* Hand an event to the terminal side (NDJSON, status line). */
void
loop_event(struct loop *l, const char *name, json_t *o)
{
	json_object_set_new(o, "loop_id", json_string(l->cfg.id));
	if (l->cfg.hooks.event != NULL)
		l->cfg.hooks.event(l->cfg.hooks.arg, name, o);
	json_decref(o);
}

/*
 * A worker's PROGRESS: its line as a worker_progress event, so a front
 * end (serve's /api/events, its status page) sees each worker live.
 */
static void
loop_progress(struct agent *a, void *arg)
{
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
	patch = json_pack("{s:O, s:I}", "skill_state", l->ss,
	    "current_iteration", l->iteration);
	state_store_update(l->store, patch);
	json_decref(patch);
	if (to != NULL && state_store_transition(l->store, to, reason) != 0)
		log_warnx("state %s: transition to %s refused", l->cfg.id, to);
	state_store_commit(l->store, cb, l);
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
	char		*err = NULL;
	int		 next;

	wf->merge(l->ss, role, res, now);
	next = wf->next(r->role, res, l->ss);	/* after the merge */
	if (next >= 0 && wf->merged != NULL)
		wf->merged(r->role, l->ss, res, l->cfg.dirfd, l->cfg.id, now);
	if (wf->roles[r->role].flags & WORKFLOW_ITER)
		l->iteration++;
	prompt_record_action(l->store, role, res, outcome, l->ss, l->iteration,
	    now);
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
	int			 i, failed = 0;

	for (i = 0; i < l->ncur; i++) {
		res[i] = l->cur[i]->result;
		names[i] = loop_role(l, l->cur[i]->role);
		failed += strcmp(wf->outcome(names[i], res[i]), "failed") == 0;
	}
	l->failures = failed == l->ncur ? l->failures + 1 : 0;
	wf->merge_group(l->ss, names, res, (size_t)l->ncur, now);
	l->iteration++;
	for (i = 0; i < l->ncur; i++)
		prompt_record_action(l->store, names[i], l->cur[i]->result,
		    wf->outcome(names[i], res[i]), l->ss, l->iteration, now);
	l->index = wf->group_next(l->ss);
	loop_save(l, NULL, NULL, loop_saved);	/* a failed commit ends it */
	if (l->failures > 0 && workflow_in_group(wf->parallel, l->index))
		loop_retry(l);
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
		    loop_clarify(l, i))
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
			return 0;
		}
	clock_iso(NULL, 1, now, sizeof now);
	if (l->batch)
		loop_take_batch(l, now);
	else
		loop_take_one(l, l->cur[0], now);
	l->ncur = 0;
	return 0;
}

/* Start a single-worker action. */
static void
loop_start_one(struct loop *l, int role)
{
	l->ncur = 0;
	l->batch = 0;
	if ((l->cur[0] = loop_spawn(l, role, NULL, 0, 0, 0)) != NULL)
		l->ncur = 1;
}

/* The parallel group's roles at once, under the batch deadline. */
static void
loop_start_batch(struct loop *l)
{
	const struct workflow_group	*g = l->wf->parallel;
	int				 i, n = (int)g->nroles;

	l->ncur = 0;
	l->batch = 1;
	l->batch_start = clock_mono_ms();
	for (i = 0; i < n; i++) {
		l->cur[i] = loop_spawn(l, g->roles[i], NULL,
		    l->cfg.batch_ms, l->cfg.batch_nudge_ms, 0);
		if (l->cur[i] == NULL)
			break;
		l->ncur = i + 1;
	}
	if (l->ncur != n)
		l->ncur = 0;	/* loop_end closes what started */
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
	if (wf->admit != NULL)	/* ccw-loop: complete needs a pass */
		i = l->index = wf->admit(i, l->ss, NULL);
	if (i >= (int)wf->nroles) {
		loop_end(l, EXIT_OK, "completed", NULL);
		return;
	}
	if (l->cfg.mode == LOOP_PARALLEL &&
	    workflow_in_group(wf->parallel, i)) {
		if (!loop_bounded(l))
			loop_start_batch(l);
		return;
	}
	if (loop_iterates(l, i) && loop_bounded(l))
		return;
	loop_start_one(l, i);
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
	loop_event(l, "LOOP_COMPLETED", merge_state_event(st,
	    l->exit_code == EXIT_OK ? "completed" : l->exit_code ==
	    EXIT_PAUSED ? "paused" : l->exit_code == EXIT_STOPPED ?
	    "stopped" : "failed", l->exit_code));
	/* its side files written: waited for here, where a stop still reaches */
	state_store_side_wait(s, loop_sides_done, l);
}

/* Everything is closed: the last commit; loop_finish_saved ends the run. */
static void
loop_finish(struct loop *l)
{
	(void)loop_transition(l, LE_FINISH, 0);
	loop_save(l, l->end_to, l->end_reason, loop_finish_saved);
}

/*
 * End the loop: every live worker is closed (a stop within a second, a
 * pause with the role's grace), then loop_finish commits.  A stop
 * overrides an ending already under way; nothing else does.
 */
void
loop_end(struct loop *l, int code, const char *to, const char *reason)
{
	struct loop_run	*r;
	uint64_t	 g;

	if (loop_transition(l, LE_END, code) != 0)
		return;
	evtimer_del(l->retry_ev);
	free(l->end_to);
	free(l->end_reason);
	l->end_to = to != NULL ? xstrdup(to) : NULL;
	l->end_reason = reason != NULL ? xstrdup(reason) : NULL;
	if (reason != NULL)
		log_info("loop %s: %s", l->cfg.id, reason);
	loop_unqueue(l);	/* never started: out of their gates */
	TAILQ_FOREACH(r, &l->runs, entry) {
		if (loop_run_done(r))
			continue;
		r->cancelled = 1;
		g = code == EXIT_STOPPED && r->grace_ms > LOOP_STOP_GRACE_MS ?
		    LOOP_STOP_GRACE_MS : r->grace_ms;
		ladder_close(r->ladder, g);
	}
	loop_kick(l);
}

/* Stop now (a signal, a front end's stop): exit 4, status left alone. */
void
loop_stop(struct loop *l, const char *why)
{
	log_info("loop %s: stopping: %s", l->cfg.id, why);
	state_store_nowait(l->store);	/* a held lock must not keep us */
	loop_end(l, EXIT_STOPPED, NULL, NULL);
}

/* The engine's one place of decision, run from the kick event. */
static void
loop_kick_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct loop	*l = arg;

	(void)fd;
	(void)ev;
	if (l->phase == LP_DONE)
		return;
	if (l->phase == LP_PAUSING)	/* a held start is not waited for */
		loop_unqueue(l);
	if (l->phase != LP_ENDING && l->ncur > 0 && loop_step_runs(l))
		return;
	if (l->phase == LP_ENDING) {
		if (loop_nlive(l) == 0)
			loop_finish(l);
		return;
	}
	if (l->phase == LP_PAUSING) {
		loop_end(l, EXIT_PAUSED, NULL, NULL);
		return;
	}
	if (l->phase == LP_ASKING || evtimer_pending(l->retry_ev, NULL))
		return;
	loop_next(l);
}

/* Decide on the next turn of the event loop, never from a callback. */
void
loop_kick(struct loop *l)
{
	event_active(l->kick, EV_TIMEOUT, 0);
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

	l = xcalloc(1, sizeof *l);
	l->base = base;
	l->store = store;
	l->cfg = *cfg;
	l->wf = cfg->workflow != NULL ? cfg->workflow : &ccw_loop_workflow;
	TAILQ_INIT(&l->runs);
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
	l->sup.progress = loop_progress;
	l->sup.progress_arg = l;
	l->kick = event_new(base, -1, 0, loop_kick_cb, l);
	l->retry_ev = evtimer_new(base, loop_retry_cb, l);
	if ((l->watch = state_watch_new(base, store, cfg->watch_poll ?
	    STATE_WATCH_POLL : STATE_WATCH_INOTIFY, loop_watch_cb, l,
	    err)) == NULL) {
		loop_free(l);
		return NULL;
	}
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
	if (l->verbs != NULL)
		verbs_free(l->verbs);
	if (l->sup_ok)
		sup_free(&l->sup);
	state_watch_free(l->watch);
	if (l->kick != NULL)
		event_free(l->kick);
	if (l->retry_ev != NULL)
		event_free(l->retry_ev);
	while ((r = TAILQ_FIRST(&l->runs)) != NULL) {
		TAILQ_REMOVE(&l->runs, r, entry);
		loop_run_release(r);
		json_decref(r->result);
		free(r->tool);
		free(r->extra);
		if (r->ladder != NULL)
			ladder_free(r->ladder);
		free(r);
	}
	json_decref(l->ss);
	free(l->end_to);
	free(l->end_reason);
	free(l);
}
