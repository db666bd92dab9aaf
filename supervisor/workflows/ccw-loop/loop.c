/*
 * loop.c: the run engine.  Drives one loop in auto, parallel or
 * interactive mode over the four verbs: a worker per action (three at
 * once in the parallel step), each with its own wait, nudge, wait, close;
 * results merged and committed one action at a time; clarifications
 * answered; pause and stop from the state file obeyed.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "loopguard.h"
#include "log.h"
#include "loop.h"
#include "loopint.h"
#include "progress.h"
#include "state.h"
#include "sup.h"
#include "xmalloc.h"

#define LOOP_STOP_GRACE_MS	1000	/* a stop closes within this */


/* Is the run over (its ladder's done callback ran)? */
int
loop_run_done(const struct loop_run *r)
{
	return r->ladder == NULL || ladder_phase(r->ladder) == LADDER_DONE;
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

/* max_iterations is the front end's: read it from the last commit. */
static json_int_t
loop_max_iter(struct loop *l)
{
	json_int_t	m = json_integer_value(json_object_get(
			    state_store_get(l->store), "max_iterations"));

	return m > 0 ? m : 10;
}

/* The state as a worker should see it: the last commit with our fields. */
static json_t *
loop_view(struct loop *l)
{
	json_t	*st = json_deep_copy(state_store_get(l->store));

	if (st == NULL)
		st = json_object();
	json_object_set(st, "skill_state", l->ss);
	json_object_set_new(st, "current_iteration",
	    json_integer(l->iteration));
	return st;
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
 * A run is done: its result, with the TAP of a validate run: from the
 * worker's answer (a model's DETAILED_OUTPUT; its log is a JSON stream
 * where TAP lines do not start lines), else from a bash run's log.
 */
static void
loop_closed(struct agent *a, void *arg)
{
	struct loop_run	*r = arg;
	struct loop	*l = r->l;
	json_t		*tap;
	char		*err = NULL;

	(void)a;
	r->result = report_agent(r->a);
	if (r->role == LOOP_VALIDATE && !r->cancelled &&
	    (tap = tap_parse_answer(json_string_value(json_object_get(
	    r->result, "detailed_output")), json_string_value(
	    json_object_get(r->result, "summary")))) != NULL)
		json_object_set_new(r->result, "tap", tap);
	else if (r->role == LOOP_VALIDATE && strcmp(r->a->tool, "bash") == 0 &&
	    !r->cancelled) {
		if ((tap = tap_parse_file(r->a->log_path, &err)) != NULL)
			json_object_set_new(r->result, "tap", tap);
		else if (err != NULL)
			log_warnx("%s: TAP: %s", r->a->id, err);
		free(err);
	}
	if (!r->cancelled)
		loop_event(l, "worker_result", merge_event(loop_roles[r->role],
		    r->result));
	loop_kick(l);
}

/*
 * Start one worker for a role.  wait_ms 0: the role's own deadlines;
 * else the parallel batch's.  NULL (the loop ends failed) when the
 * prompt or the role's tool cannot be set up.
 */
struct loop_run *
loop_spawn(struct loop *l, int role, const char *extra, uint64_t wait_ms,
    uint64_t nudge_ms, int rounds)
{
	struct prompt_req	 pr;
	struct agent_req	 req;
	struct plan_deadlines	 dl;
	struct loop_run		*r;
	json_t			*view = loop_view(l);
	char			*prompt, *capsule, *err = NULL;
	int			 rc;

	memset(&pr, 0, sizeof pr);
	pr.state = view;
	pr.state_dir = l->cfg.state_dir;
	pr.loop_id = l->cfg.id;
	pr.role = loop_roles[role];
	pr.mode = loop_mode_name(l->cfg.mode);
	pr.extra = extra;
	pr.force_capsule = l->cfg.resumed;
	rc = prompt_request(&l->cfg, &pr, &req, &dl, &prompt, &capsule,
	    &err);
	json_decref(view);
	/* a fresh agent-N.log, N above every id the loop has seen */
	if (rc == 0 && l->cfg.guard != NULL &&
	    loopguard_reserve(l->cfg.guard, &l->sup, &err) != 0) {
		json_decref(req.options);
		free(prompt);
		free(capsule);
		rc = -1;
	}
	if (rc != 0) {
		loop_end(l, EXIT_FAILED, "failed", err);
		free(err);
		return NULL;
	}
	r = xcalloc(1, sizeof *r);
	r->l = l;
	r->role = role;
	r->rounds = rounds;
	r->nudge_ms = nudge_ms != 0 ? nudge_ms : dl.nudge_ms;
	r->grace_ms = dl.grace_ms;
	if (wait_ms == 0)
		wait_ms = dl.timeout_ms;
	r->a = agent_spawn(&l->sup, &req);
	TAILQ_INSERT_TAIL(&l->runs, r, entry);
	json_decref(req.options);
	free(prompt);
	free(capsule);
	loop_event(l, "worker_started", json_pack("{s:s, s:s, s:s, s:s,"
	    " s:I}", "agent_id", r->a->id, "role", loop_roles[role], "tool",
	    r->a->tool, "log_path", r->a->log_path, "timeout_ms",
	    (json_int_t)wait_ms));
	/* the deadlines count from now, not from before a slow write */
	event_base_update_cache_time(l->base);
	r->ladder = ladder_start(l->verbs, r->a, wait_ms, r->nudge_ms,
	    r->grace_ms, loop_closed, r);
	return r;
}

/*
 * One action's result: merged, side files written, the next action
 * chosen; one commit.  A failure ends an auto loop; an interactive one
 * goes back to the menu.
 */
static void
loop_take_one(struct loop *l, struct loop_run *r, const char *now)
{
	json_t		*res = r->result, *tasks = NULL;
	const char	*role = loop_roles[r->role];
	const char	*outcome = merge_outcome(role, res);
	char		*err = NULL;
	int		 next, rc;

	merge_role(l->ss, role, res, now);
	next = merge_next(r->role, res, l->ss);	/* after: validate.passed */
	if (r->role == LOOP_INIT && next >= 0) {
		rc = progress_tasks_read(l->cfg.dirfd, l->cfg.id, &tasks, &err);
		prompt_warn(rc, err);
		if (tasks != NULL)
			merge_tasks(l->ss, tasks, now);
		json_decref(tasks);
		/* the plan in init's answer, when no tasks file gave one */
		context_plan(l->ss, json_string_value(json_object_get(res,
		    "detailed_output")), now);
	}
	if (r->role >= LOOP_DEVELOP && r->role <= LOOP_VALIDATE)
		l->iteration++;
	prompt_record_action(l->store, role, res, outcome, l->ss, l->iteration,
	    now);
	if (next < 0 && l->cfg.mode != LOOP_INTERACTIVE) {
		err = merge_fail_reason(role, res);
		loop_end(l, json_is_true(json_object_get(res, "timed_out")) ?
		    EXIT_TIMEOUT : EXIT_FAILED, "failed", err);
		free(err);
		return;
	}
	if (next >= 0)
		l->index = next;
	if (next == LOOP_NROLES)
		loop_end(l, EXIT_OK, "completed", NULL);
	else
		loop_save(l, NULL, NULL, loop_saved);
}

/* The parallel step, merged in role order; then complete or go again. */
static void
loop_take_batch(struct loop *l, const char *now)
{
	const json_t	*res[3];
	int		 i, failed = 0;

	for (i = 0; i < 3; i++) {
		res[i] = l->cur[i]->result;
		failed += strcmp(merge_outcome(loop_roles[LOOP_DEVELOP + i],
		    res[i]), "failed") == 0;
	}
	l->failures = failed == 3 ? l->failures + 1 : 0;
	merge_parallel(l->ss, res, now);
	l->iteration++;
	for (i = 0; i < 3; i++)
		prompt_record_action(l->store, loop_roles[LOOP_DEVELOP + i],
		    l->cur[i]->result, merge_outcome(loop_roles[LOOP_DEVELOP +
		    i], res[i]), l->ss, l->iteration, now);
	l->index = json_is_true(json_object_get(json_object_get(l->ss,
	    "validate"), "passed")) ? LOOP_COMPLETE : LOOP_DEVELOP;
	loop_save(l, NULL, NULL, loop_saved);	/* a failed commit ends it */
	if (l->failures > 0 && l->index == LOOP_DEVELOP)
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
		if (l->cur[i]->cancelled || l->asking)
			continue;
		if (strcmp(merge_outcome(loop_roles[l->cur[i]->role],
		    l->cur[i]->result), "needs_input") == 0 &&
		    loop_clarify(l, i))
			busy = 1;
		if (l->ending)
			return 1;
	}
	if (busy || l->asking)
		return 1;
	for (i = 0; i < l->ncur; i++)
		if (l->cur[i]->cancelled ||
		    strcmp(merge_outcome(loop_roles[l->cur[i]->role],
		    l->cur[i]->result), "needs_input") == 0) {
			l->ncur = 0;	/* interrupted: redone on resume */
			return 0;
		}
	state_now_iso(now, sizeof now);
	if (l->ncur == 3)
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
	if ((l->cur[0] = loop_spawn(l, role, NULL, 0, 0, 0)) != NULL)
		l->ncur = 1;
}

/* develop, debug and validate at once, under the batch deadline. */
static void
loop_start_batch(struct loop *l)
{
	int	i;

	l->ncur = 0;
	l->batch_start = sup_now_ms();
	for (i = 0; i < 3; i++) {
		l->cur[i] = loop_spawn(l, LOOP_DEVELOP + i, NULL,
		    l->cfg.batch_ms, l->cfg.batch_nudge_ms, 0);
		if (l->cur[i] == NULL)
			break;
		l->ncur = i + 1;
	}
	if (l->ncur != 3)
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

/* Whether validation has passed (complete requires it). */
static int
loop_passed(struct loop *l)
{
	return json_is_true(json_object_get(json_object_get(l->ss,
	    "validate"), "passed"));
}

/* The interactive menu, with where the loop stands; loop_choose answers. */
static void
loop_menu(struct loop *l, const char *notice)
{
	json_t	*info = json_pack("{s:I, s:I, s:b, s:O?, s:s?}", "iteration",
		    l->iteration, "max_iterations", loop_max_iter(l), "passed",
		    loop_passed(l), "last_action", json_object_get(l->ss,
		    "last_action"), "notice", notice);

	l->asking = 1;
	l->ask_slot = -1;
	if (l->cfg.hooks.menu != NULL)
		l->cfg.hooks.menu(l->cfg.hooks.arg, info);
	json_decref(info);
}

/* Start the next action of the mode, or end the loop. */
static void
loop_next(struct loop *l)
{
	int	i = l->index;

	if (l->cfg.mode == LOOP_INTERACTIVE) {
		loop_menu(l, NULL);
		return;
	}
	if (i >= LOOP_COMPLETE && !loop_passed(l))
		i = l->index = LOOP_DEVELOP;	/* complete needs a pass */
	if (i >= LOOP_NROLES) {
		loop_end(l, EXIT_OK, "completed", NULL);
		return;
	}
	if (l->cfg.mode == LOOP_PARALLEL && i > LOOP_INIT &&
	    i < LOOP_COMPLETE) {
		if (!loop_bounded(l))
			loop_start_batch(l);
		return;
	}
	if (i > LOOP_INIT && i < LOOP_COMPLETE && loop_bounded(l))
		return;
	loop_start_one(l, i);
}

/* The person chose the next action. */
void
loop_choose(struct loop *l, const char *action)
{
	int	role = loop_role_index(action);

	if (!l->asking || l->ask_slot != -1)
		return;
	l->asking = 0;
	if (action == NULL || strcmp(action, "exit") == 0) {
		/* the person ended it: not left running for nobody */
		loop_end(l, EXIT_STOPPED, "failed",
		    "stopped by the user from the interactive menu");
		return;
	}
	if (role == LOOP_COMPLETE && !loop_passed(l))
		loop_menu(l, "validation has not passed yet: run validate "
		    "first");
	else if (role >= LOOP_DEVELOP && role <= LOOP_VALIDATE &&
	    l->iteration >= loop_max_iter(l))
		loop_menu(l, "max_iterations reached: only complete or exit");
	else if (role < 0 || role == LOOP_INIT)
		loop_menu(l, "unknown action");
	else
		loop_start_one(l, role);
	loop_kick(l);
}

/* The loop's side files are written too: it has ended. */
static void
loop_sides_done(void *arg)
{
	struct loop	*l = arg;

	if (l->cfg.hooks.done != NULL)
		l->cfg.hooks.done(l->cfg.hooks.arg, l->exit_code);
}

/* The last commit landed (or failed): the last event, out. */
static void
loop_finish_saved(struct state_store *s, int rc, const char *err, void *arg)
{
	struct loop	*l = arg;
	const json_t	*st;
	const char	*status;

	if (rc != 0) {
		log_warnx("state %s: commit failed: %s", l->cfg.id, err);
		if (l->exit_code == EXIT_OK)
			l->exit_code = EXIT_INTERNAL;
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
	l->done = 1;
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

	if (l->done || (l->ending && code != EXIT_STOPPED))
		return;
	if (l->ending && l->exit_code == EXIT_STOPPED)
		return;
	l->ending = 1;
	l->exit_code = code;
	evtimer_del(l->retry_ev);
	free(l->end_to);
	free(l->end_reason);
	l->end_to = to != NULL ? xstrdup(to) : NULL;
	l->end_reason = reason != NULL ? xstrdup(reason) : NULL;
	if (reason != NULL)
		log_info("loop %s: %s", l->cfg.id, reason);
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
	if (l->done)
		return;
	if (!l->ending && l->ncur > 0 && loop_step_runs(l))
		return;
	if (l->ending) {
		if (loop_nlive(l) == 0)
			loop_finish(l);
		return;
	}
	if (l->pausing) {
		loop_end(l, EXIT_PAUSED, NULL, NULL);
		return;
	}
	if (l->asking || evtimer_pending(l->retry_ev, NULL))
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
 * Another program changed the status: paused stops new workers (and
 * with --pause-policy interrupt closes the running ones); running again
 * cancels a pause not yet done; anything else is a stop.
 */
static void
loop_watch_cb(const char *status, const json_t *st, void *arg)
{
	struct loop	*l = arg;

	(void)st;
	log_info("loop %s: status is now %s", l->cfg.id, status);
	if (strcmp(status, "running") == 0) {
		if (l->pausing && !l->ending) {
			l->pausing = 0;
			loop_kick(l);
		}
	} else if (strcmp(status, "paused") == 0) {
		l->pausing = 1;
		if (l->cfg.pause_interrupt || l->asking)
			loop_end(l, EXIT_PAUSED, NULL, NULL);
		else
			loop_kick(l);
	} else
		loop_stop(l, "the status was set to a final value by another "
		    "program");
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
	TAILQ_INIT(&l->runs);
	ss = json_object_get(st, "skill_state");
	l->ss = json_is_object(ss) ? json_deep_copy(ss) : state_skeleton();
	json_object_set_new(l->ss, "mode",
	    json_string(loop_mode_name(cfg->mode)));
	l->iteration = json_integer_value(json_object_get(st,
	    "current_iteration"));
	l->index = (int)json_integer_value(json_object_get(l->ss,
	    "action_index"));
	if (l->index < 0 || l->index > LOOP_NROLES)
		l->index = 0;
	l->sup_ok = 1;		/* sup_free undoes a half-done sup_init too */
	if (sup_init(&l->sup, base, cfg->children, cfg->state_dir, cfg->id, err) != 0) {
		loop_free(l);
		return NULL;
	}
	l->verbs = verbs_new(&l->sup);
	l->kick = event_new(base, -1, 0, loop_kick_cb, l);
	l->retry_ev = evtimer_new(base, loop_retry_cb, l);
	if ((l->watch = state_watch_new(base, store,
	    loop_watch_cb, l, err)) == NULL) {
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
	uint64_t	 now = sup_now_ms();

	TAILQ_FOREACH(r, &l->runs, entry)
		if (!loop_run_done(r))
			json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s,"
			    " s:I, s:s, s:b, s:s?}", "loop_id", l->cfg.id,
			    "agent_id", r->a->id,
			    "role", loop_roles[r->role], "tool", r->a->tool,
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
		json_decref(r->result);
		if (r->ladder != NULL)
			ladder_free(r->ladder);
		free(r);
	}
	json_decref(l->ss);
	free(l->end_to);
	free(l->end_reason);
	free(l);
}
