/*
 * looprun.c: a loop's workers: each run through its tool's provider gate
 * (queued, admitted, its prompt built and its worker spawned), its end
 * (the slot given back, its usage summed, its worker_result told), a
 * rate-limited run held and run again, and every live one closed when
 * the loop ends.  loop.c calls it through loopint.h; it calls nothing
 * of loop.c.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "gate.h"
#include "isolate.h"
#include "log.h"
#include "loop.h"
#include "loopguard.h"
#include "loopint.h"
#include "outcome.h"
#include "state.h"
#include "sup.h"
#include "xmalloc.h"

/* a stop closes within this */
#define LOOP_STOP_GRACE_MS	SUP_STOP_GRACE_MS

/* Is the run over (out of its gate's queue, its ladder's done ran)? */
int
loop_run_done(const struct loop_run *r)
{
	return !r->gating && (r->ladder == NULL ||
	    ladder_phase(r->ladder) == LADDER_DONE);
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

/*
 * The role's tool, picked as plan_spawn picks it (the host's override,
 * the role's, the default): the provider the worker waits for.
 */
static const char *
loop_gate_tool(const struct loop *l, int role)
{
	const struct config	*c = l->cfg.config;
	int			 ri = config_role_index(c, loop_role(l, role));

	if (l->cfg.over.tool != NULL)
		return l->cfg.over.tool;
	if (ri >= 0 && c->roles[ri].tool != NULL)
		return c->roles[ri].tool;
	return c->default_tool != NULL ? c->default_tool : "";
}

/* The run's place at its gate, given back (queued or admitted). */
void
loop_run_release(struct loop_run *r)
{
	if (r->wait != NULL)
		gate_cancel(r->wait);
	r->wait = NULL;
	r->gating = 0;
	if (r->slot)
		gate_leave(r->l->cfg.gate, r->tool);
	r->slot = 0;
}

/*
 * A loop pausing or ending starts nothing more: its runs still queued at
 * a gate leave the queue, interrupted (a pause redoes them on resume).
 */
void
loop_unqueue(struct loop *l)
{
	struct loop_run	*r;

	TAILQ_FOREACH(r, &l->runs, entry)
		if (r->gating) {
			r->cancelled = 1;
			loop_run_release(r);
		}
}

/* A worker's usage into skill_state.usage, the loop's total. */
static void
loop_usage_add(struct loop *l, const json_t *u)
{
	json_t		*t = json_object_get(l->ss, "usage");
	const json_t	*c = json_object_get(u, "cost_usd");
	const json_t	*tc;

	if (!json_is_object(u))
		return;
	if (!json_is_object(t)) {
		t = json_pack("{s:i, s:i, s:n}", "input_tokens", 0,
		    "output_tokens", 0, "cost_usd");
		json_object_set_new(l->ss, "usage", t);
	}
	json_object_set_new(t, "input_tokens", json_integer((json_int_t)(
	    json_number_value(json_object_get(t, "input_tokens")) +
	    json_number_value(json_object_get(u, "input_tokens")))));
	json_object_set_new(t, "output_tokens", json_integer((json_int_t)(
	    json_number_value(json_object_get(t, "output_tokens")) +
	    json_number_value(json_object_get(u, "output_tokens")))));
	tc = json_object_get(t, "cost_usd");
	if (json_is_number(c))
		json_object_set_new(t, "cost_usd", json_real(
		    json_number_value(c) + (json_is_number(tc) ?
		    json_number_value(tc) : 0.0)));
}

/*
 * A run's worker_result event.  A run the loop's end closed (a stop, a
 * signal, a session's end) is published too, so its outcome reaches the
 * events and the metrics: failed, cancelled, with the stop's why when
 * the worker gave none.  It is not merged into the state.
 */
static json_t *
loop_result_event(struct loop *l, const struct loop_run *r)
{
	json_t		*o = merge_event(loop_role(l, r->role), r->result);
	const char	*st = json_string_value(json_object_get(o, "status"));

	if (!r->cancelled || (st != NULL && strcmp(st, "success") == 0))
		return o;
	json_object_set_new(o, "status", json_string("failed"));
	if (!json_is_string(json_object_get(o, "error_kind")))
		json_object_set_new(o, "error_kind", json_string(
		    outcome_name(OUTCOME_CANCELLED)));
	if (!json_is_string(json_object_get(o, "reason")))
		json_object_set_new(o, "reason", json_string(
		    l->end_reason != NULL ? l->end_reason :
		    "closed on request"));
	return o;
}

/*
 * A run is done: its slot given back, its usage counted, its result
 * completed by the workflow from the worker's answer or log (ccw-loop:
 * the TAP of a validate run) unless the run was stopped; a rate limit
 * holds its provider, a clean result resets the provider's backoff.
 */
static void
loop_closed(struct agent *a, void *arg)
{
	struct loop_run	*r = arg;
	struct loop	*l = r->l;
	const char	*kind;
	const json_t	*ra;

	(void)a;
	r->result = report_agent(r->a);
	loop_run_release(r);
	loop_usage_add(l, json_object_get(r->result, "usage"));
	if (!r->cancelled && l->wf->collect != NULL)
		l->wf->collect(r->role, r->result, r->a->tool, r->a->log_path,
		    r->a->result.type == MSG_RESULT ?
		    r->a->result.u.result.log_tail : NULL, r->a->id);
	kind = json_string_value(json_object_get(r->result, "error_kind"));
	if (!r->cancelled && l->cfg.gate != NULL &&
	    (outcome_at(outcome_find(kind))->flags & OUTCOME_GATED)) {
		/* absent or null: unknown, the gate backs off */
		ra = json_object_get(r->result, "retry_after_ms");
		r->rate_limited = 1;
		gate_hold(l->cfg.gate, r->tool, json_is_number(ra) &&
		    json_number_value(ra) > 0 ? (uint64_t)json_number_value(ra) :
		    0);
	} else if (!r->cancelled && (kind == NULL ||
	    (outcome_at(outcome_find(kind))->flags & OUTCOME_SUPERVISOR)))
		gate_ok(l->cfg.gate, r->tool);
	loop_event(l, "worker_result", loop_result_event(l, r));
	loop_kick(l);
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
	isolate_cancel(l->iso);		/* a merge in flight: recovered later */
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

/*
 * A resumed session's turn: the answer text is its whole prompt (the
 * session holds the task and what it asked), options.resume_session
 * names the session (engine/turn.c's way).
 */
static void
loop_resume_req(struct loop_run *r, struct agent_req *req, char **prompt)
{
	if (req->options == NULL)
		req->options = json_object();
	json_object_set_new(req->options, "resume_session",
	    json_string(r->resume));
	free(*prompt);
	*prompt = xstrdup(r->extra);
	req->prompt = *prompt;
}

/*
 * The run's worker, started now that its gate let it in.  -1 (the loop
 * ends failed) when the prompt or the role's tool cannot be set up.
 */
static int
loop_begin(struct loop_run *r)
{
	struct loop		*l = r->l;
	struct prompt_req	 pr;
	struct agent_req	 req;
	struct plan_deadlines	 dl;
	json_t			*view;
	char			*prompt, *capsule, *err = NULL;
	char			 now[32];
	uint64_t		 wait_ms = r->want_wait_ms;
	int			 rc;

	r->gating = 0;
	if (l->wf->refresh != NULL) {	/* before the prompt is built */
		clock_iso(NULL, 1, now, sizeof now);
		l->wf->refresh(r->role, l->ss, l->cfg.dirfd, l->cfg.id, now);
	}
	view = loop_view(l);
	memset(&pr, 0, sizeof pr);
	pr.state = view;
	pr.state_dir = l->cfg.state_dir;
	pr.loop_id = l->cfg.id;
	pr.role = loop_role(l, r->role);
	pr.mode = loop_mode_name(l->cfg.mode);
	pr.extra = r->extra;
	pr.force_capsule = l->cfg.resumed;
	rc = prompt_request(&l->cfg, &pr, &req, &dl, &prompt, &capsule,
	    &err);
	json_decref(view);
	if (rc == 0)	/* a worktree, or the loop's for a reader */
		isolate_run(l, r, pr.role, &req);
	if (rc == 0 && r->resume != NULL)	/* the answer, to its session */
		loop_resume_req(r, &req, &prompt);
	/* a fresh agent-N.log, N above every id the loop has seen */
	if (rc == 0 && l->cfg.guard != NULL &&
	    loopguard_reserve(l->cfg.guard, &l->sup, &err) != 0) {
		json_decref(req.options);
		free(prompt);
		free(capsule);
		rc = -1;
	}
	if (rc != 0) {
		loop_run_release(r);
		loop_end(l, EXIT_FAILED, "failed", err);
		free(err);
		return -1;
	}
	r->nudge_ms = r->want_nudge_ms != 0 ? r->want_nudge_ms : dl.nudge_ms;
	r->grace_ms = dl.grace_ms;
	if (wait_ms == 0)
		wait_ms = dl.timeout_ms;
	r->a = agent_spawn(&l->sup, &req);
	json_decref(req.options);
	free(r->prompt);	/* kept for the action's history (replay) */
	r->prompt = prompt;
	free(capsule);
	loop_event(l, "worker_started", json_pack("{s:s, s:s, s:s, s:s,"
	    " s:I}", "agent_id", r->a->id, "role", loop_role(l, r->role),
	    "tool", r->a->tool, "log_path", r->a->log_path, "timeout_ms",
	    (json_int_t)wait_ms));
	/* the deadlines count from now, not from before a slow write */
	event_base_update_cache_time(l->base);
	r->ladder = ladder_start(l->verbs, r->a, wait_ms, r->nudge_ms,
	    r->grace_ms, loop_closed, r);
	return 0;
}

/*
 * The gate let the run in.  A loop pausing or ending meanwhile starts
 * nothing: the run counts as interrupted (redone on resume).
 */
static void
loop_admitted(void *arg)
{
	struct loop_run	*r = arg;

	r->wait = NULL;
	r->slot = 1;
	if (r->l->phase != LP_RUNNING) {
		r->cancelled = 1;
		loop_run_release(r);
		loop_kick(r->l);
		return;
	}
	(void)loop_begin(r);
}

/*
 * Start one worker for a role once its tool's gate lets it in.  wait_ms
 * 0: the role's own deadlines; else the parallel batch's.  NULL (the
 * loop ends failed) when, started at once (no gate), the prompt or the
 * role's tool cannot be set up.
 */
struct loop_run *
loop_spawn(struct loop *l, int role, const char *extra, uint64_t wait_ms,
    uint64_t nudge_ms, int rounds)
{
	return loop_spawn_resume(l, role, extra, wait_ms, nudge_ms, rounds,
	    NULL);
}

/*
 * The same, resuming the tool's session SID (not NULL) with extra as
 * the whole prompt: an answer reaching the worker that asked.
 */
struct loop_run *
loop_spawn_resume(struct loop *l, int role, const char *extra,
    uint64_t wait_ms, uint64_t nudge_ms, int rounds, const char *sid)
{
	struct loop_run	*r = xcalloc(1, sizeof *r);

	r->l = l;
	r->role = role;
	r->rounds = rounds;
	r->extra = extra != NULL ? xstrdup(extra) : NULL;
	r->resume = sid != NULL ? xstrdup(sid) : NULL;
	r->want_wait_ms = wait_ms;
	r->want_nudge_ms = nudge_ms;
	r->tool = xstrdup(loop_gate_tool(l, role));
	r->gating = 1;
	TAILQ_INSERT_TAIL(&l->runs, r, entry);
	if ((r->wait = gate_enter(l->cfg.gate, r->tool, loop_admitted, r)) !=
	    NULL)
		return r;
	return loop_begin(r) == 0 ? r : NULL;
}

/* What is left of the parallel batch's deadline for a run started now. */
void
loop_batch_left(const struct loop *l, uint64_t *left, uint64_t *nudge)
{
	uint64_t	spent = clock_mono_ms() - l->step_start;

	*left = *nudge = 0;
	if (!l->batch)
		return;
	*left = l->cfg.batch_ms > spent + 1000 ? l->cfg.batch_ms - spent :
	    1000;
	*nudge = l->cfg.batch_nudge_ms;
}

/*
 * A run ended rate limited: the same action goes again once its
 * provider's gate opens.  Not a failure: written down in
 * skill_state.errors and the history, told as step_requeued.  Returns 1
 * when the slot runs again (or the loop ended trying).
 */
int
loop_requeue(struct loop *l, int slot)
{
	struct loop_run	*r = l->cur[slot], *n;
	const char	*role = loop_role(l, r->role);
	json_t		*errs = json_object_get(l->ss, "errors");
	char		 now[40], *msg;
	uint64_t	 left, nudge;

	if (!r->rate_limited || l->phase != LP_RUNNING)
		return 0;
	clock_iso(NULL, 1, now, sizeof now);
	xasprintf(&msg, "rate limited on %s (%s): requeued after the "
	    "provider's hold", r->tool, r->a->id);
	if (json_is_array(errs))
		state_error_push(l->ss, json_pack("{s:s, s:s, s:s}",
		    "action", role, "message", msg, "timestamp", now));
	free(msg);
	prompt_record(l->store, json_pack("{s:s, s:s, s:s, s:s}", "event",
	    "step_requeued", "role", role, "tool", r->tool, "agent_id",
	    r->a->id));
	loop_event(l, "step_requeued", json_pack("{s:s, s:s, s:s, s:s, "
	    "s:O?}", "role", role, "tool", r->tool, "agent_id", r->a->id,
	    "reason", outcome_name(outcome_find(json_string_value(
	    json_object_get(r->result, "error_kind")))), "retry_after_ms",
	    json_object_get(r->result, "retry_after_ms")));
	loop_batch_left(l, &left, &nudge);
	n = loop_spawn_resume(l, r->role, r->extra, left, nudge, r->rounds,
	    r->resume);
	l->cur[slot] = n != NULL ? n : r;
	return 1;
}
