/*
 * batchworker.c: a batch item that runs as one worker, not a loop: the
 * role's spawn planned from the root's configuration and the item's tool
 * and model, started through the provider's gate, its agent table and
 * workers directory named by the item's id, the role's deadline ladder;
 * a rate-limited attempt holds the provider and goes again; the outcome
 * is told back once.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "adapter.h"
#include "batchworker.h"
#include "bqinput.h"
#include "cause.h"
#include "gate.h"
#include "log.h"
#include "loop.h"
#include "loopguard.h"
#include "outcome.h"
#include "plan.h"
#include "sup.h"
#include "xmalloc.h"

struct batchworker {
	struct event_base	*base;
	struct gate		*gate;		/* NULL: started at once */
	struct gate_wait	*wait;		/* queued at the gate */
	int			 admitted;	/* holds a slot of the gate */
	struct agent_req	 req;		/* the plan: strings in o's config,
						   msg and options ours */
	struct plan_deadlines	 dl;
	struct sup		 sup;
	int			 sup_ok;
	struct loop_guard	 guard;
	struct verbs		*verbs;
	struct agent		*a;
	struct ladder		*ladder;
	struct event		*done_ev;	/* the outcome, off the ladder's hook */
	uint64_t		 grace_ms;
	json_t			*options;	/* the plan's, ours */
	char			*msg;
	int			 stopped;
	int			 again;		/* rate limited: goes again */
	batchworker_done_fn		 done;
	void			*arg;
};

static void	batchworker_admitted(void *);
static void	batchworker_enter(struct batchworker *);

/*
 * Tell the outcome outside the agent's callbacks: the caller frees us.
 * A worker that failed in any way (cause_failed) never completes its
 * item, and the item's failure says why (cause_line).
 */
static void
batchworker_report(evutil_socket_t fd, short ev, void *arg)
{
	struct batchworker	*w = arg;
	const char	*st;
	json_t		*rep;
	char		*reason = NULL, *err = NULL, *who;
	int		 ok;

	(void)fd;
	(void)ev;
	if (w->again) {
		w->again = 0;
		ladder_free(w->ladder);
		w->ladder = NULL;
		if (!w->stopped && loopguard_reserve(&w->guard, &w->sup,
		    &err) == 0) {
			batchworker_enter(w);
			return;
		}
		if (err != NULL)
			log_warnx("%s", err);
		free(err);
		err = NULL;
	}
	if (w->a == NULL) {		/* stopped while queued at the gate */
		w->done(w->arg, "failed", "stopped before it started", NULL, 1);
		return;
	}
	rep = report_agent(w->a);
	st = json_string_value(json_object_get(rep, "status"));
	ok = w->a->status == AS_COMPLETED && !w->a->timed_out && st != NULL &&
	    !cause_failed(rep);
	if (!ok) {
		xasprintf(&who, "%s %s", w->a->role, w->a->id);
		reason = cause_line(who, rep);
		free(who);
	}
	w->done(w->arg, ok ? "completed" : "failed", reason, rep, w->stopped);
	free(reason);
	json_decref(rep);
}


/* Into the gate's queue of the tool, or straight on without a gate. */
static void
batchworker_enter(struct batchworker *w)
{
	if (w->gate == NULL)
		batchworker_admitted(w);
	else
		w->wait = gate_enter(w->gate, w->req.tool, batchworker_admitted, w);
}

/*
 * The ladder ended (a result, the deadlines, our close).  A rate limit
 * holds the provider (its reset time, else the gate's backoff) and the
 * same work goes again, never failing the item by itself.
 */
static void
batchworker_ended(struct agent *a, void *arg)
{
	struct batchworker	*w = arg;
	const char	*kind;
	json_t		*rep;
	uint64_t	 ra = 0;

	if (w->admitted) {
		gate_leave(w->gate, w->req.tool);
		w->admitted = 0;
	}
	rep = report_agent(a);
	kind = json_string_value(json_object_get(rep, "error_kind"));
	if (json_is_integer(json_object_get(rep, "retry_after_ms")))
		ra = (uint64_t)json_integer_value(json_object_get(rep,
		    "retry_after_ms"));
	if (w->gate != NULL && !w->stopped &&
	    (outcome_at(outcome_find(kind))->flags & OUTCOME_GATED)) {
		log_info("%s: rate limited: again once %s opens", a->id,
		    w->req.tool);
		gate_hold(w->gate, w->req.tool, ra);
		w->again = 1;
	} else if (w->gate != NULL && (kind == NULL ||
	    (outcome_at(outcome_find(kind))->flags & OUTCOME_SUPERVISOR)))
		gate_ok(w->gate, w->req.tool);
	json_decref(rep);
	/* off the ladder's own hook: it is freed there when it goes again */
	event_active(w->done_ev, EV_TIMEOUT, 0);
}

/* A slot of the provider is ours: the worker starts. */
static void
batchworker_admitted(void *arg)
{
	struct batchworker	*w = arg;

	w->wait = NULL;
	w->admitted = w->gate != NULL;
	w->a = agent_spawn(&w->sup, &w->req);
	w->ladder = ladder_start(w->verbs, w->a, w->dl.timeout_ms,
	    w->dl.nudge_ms, w->dl.grace_ms, batchworker_ended, w);
}

/*
 * Start the item's worker: its role (default develop) planned with the
 * item's tool and model over the root's configuration, the item's text
 * as the message (with the result contract unless the tool is bash),
 * through gate (NULL: at once); worktree (NULL: none) is its ASSIGN's
 * options.worktree.  NULL and *err when it cannot start; done is then
 * never called.
 */
struct batchworker *
batchworker_start(struct event_base *base, struct children *children,
    struct gate *gate, const struct plan_base *plan, const char *state_dir,
    const char *id, const struct bq_item *it, const json_t *worktree,
    batchworker_done_fn done, void *arg, char **err)
{
	struct batchworker		*w = xcalloc(1, sizeof *w);
	struct plan_request	 rq;
	const char		*role = it->role != NULL ? it->role : "develop";

	*err = NULL;
	w->base = base;
	w->gate = gate;
	w->done = done;
	w->arg = arg;
	w->guard.lock_fd = w->guard.workers_fd = w->guard.dirfd = -1;
	memset(&rq, 0, sizeof rq);
	rq.role = role;
	rq.prompt = it->description;
	rq.tool = it->tool;
	rq.model = it->model;
	/* the item's own launcher, else the root's (the command line's) */
	rq.launch = it->launch.set ? &it->launch : NULL;
	if (plan_request(plan, &rq, &w->req, &w->dl, err) != 0)
		goto fail;
	w->options = w->req.options;
	if (worktree != NULL) {
		if (w->options == NULL)
			w->options = w->req.options = json_object();
		json_object_set_new(w->options, "worktree",
		    json_deep_copy(worktree));
	}
	if (adapter_is_agent(w->req.tool)) {
		w->msg = prompt_with_contract(role, it->description);
		w->req.prompt = w->msg;
	}
	if (sup_init(&w->sup, base, children, state_dir, id, err) != 0)
		goto fail;
	w->sup_ok = 1;
	/* one driver per id; a fresh agent-N.log above any earlier run's */
	if (loopguard_open(&w->guard, w->sup.state_dir, w->sup.loop_id,
	    err) != 0 || loopguard_workers(&w->guard, NULL, err) != 0 ||
	    loopguard_reserve(&w->guard, &w->sup, err) != 0)
		goto fail;
	w->verbs = verbs_new(&w->sup);
	w->done_ev = event_new(base, -1, 0, batchworker_report, w);
	w->grace_ms = w->dl.grace_ms;
	batchworker_enter(w);
	return w;
fail:
	batchworker_free(w);
	return NULL;
}

/* A stop (a signal, the budget): the kill ladder from its close step. */
void
batchworker_stop(struct batchworker *w)
{
	if (w == NULL || w->stopped)
		return;
	w->stopped = 1;
	batchworker_unhold(w);		/* frozen, it could not close */
	if (w->wait != NULL) {		/* never started: nothing to close */
		gate_cancel(w->wait);
		w->wait = NULL;
		event_active(w->done_ev, EV_TIMEOUT, 0);
	} else if (w->ladder != NULL)
		ladder_close(w->ladder, w->grace_ms);
}

/*
 * The batch's budget holds it: its worker (and tool) frozen where they
 * are, its deadlines stopped.  -1 when it cannot be (still at the gate,
 * ending, remote): the caller stops it then.
 */
int
batchworker_hold(struct batchworker *w, const char *why)
{
	if (w == NULL || w->stopped || w->a == NULL || agent_final(w->a))
		return -1;
	return agent_freeze(w->a, why);
}

/* The hold is over (a raised budget): the worker goes on. */
void
batchworker_unhold(struct batchworker *w)
{
	if (w != NULL && w->a != NULL && w->a->frozen)
		agent_thaw(w->a);
}

/* After done (or a failed start); a worker still alive is killed. */
void
batchworker_free(struct batchworker *w)
{
	if (w == NULL)
		return;
	if (w->wait != NULL)
		gate_cancel(w->wait);
	if (w->admitted)
		gate_leave(w->gate, w->req.tool);
	if (w->done_ev != NULL)
		event_free(w->done_ev);
	if (w->verbs != NULL)
		verbs_free(w->verbs);
	if (w->ladder != NULL)
		ladder_free(w->ladder);
	if (w->sup_ok)
		sup_free(&w->sup);
	loopguard_close(&w->guard);
	json_decref(w->options);
	free(w->msg);
	free(w);
}
