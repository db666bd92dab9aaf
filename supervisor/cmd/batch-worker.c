/*
 * batch-worker.c: a batch item that runs as one worker, not a loop: the
 * role's spawn planned from the root's configuration and the item's tool
 * and model, its agent table and workers directory named by the item's
 * id, the role's deadline ladder, and its outcome told back once.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "batch-worker.h"
#include "bqinput.h"
#include "cmdutil.h"
#include "log.h"
#include "loop.h"
#include "loopguard.h"
#include "plan.h"
#include "sup.h"
#include "xmalloc.h"

struct bworker {
	struct event_base	*base;
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
	bworker_done_fn		 done;
	void			*arg;
};

/* Tell the outcome outside the agent's callbacks: the caller frees us. */
static void
bworker_report(evutil_socket_t fd, short ev, void *arg)
{
	struct bworker	*w = arg;
	const char	*st, *why = NULL;
	json_t		*rep;
	char		*reason = NULL;
	int		 ok;

	(void)fd;
	(void)ev;
	rep = report_agent(w->a);
	st = json_string_value(json_object_get(rep, "status"));
	ok = w->a->status == AS_COMPLETED && !w->a->timed_out && st != NULL &&
	    strcmp(st, "failed") != 0;
	if (!ok) {
		why = json_string_value(json_object_get(rep, "summary"));
		if (why == NULL || *why == '\0')
			why = json_string_value(json_object_get(rep, "reason"));
		xasprintf(&reason, "%s %s: %s%s%s", w->a->role, w->a->id,
		    w->a->timed_out ? "timed out" : st != NULL ? st : "errored",
		    why != NULL ? ": " : "", why != NULL ? why : "");
	}
	w->done(w->arg, ok ? "completed" : "failed", reason,
	    json_object_get(rep, "usage"), w->stopped);
	free(reason);
	json_decref(rep);
}

/* The ladder ended (a result, the deadlines, our close). */
static void
bworker_ended(struct agent *a, void *arg)
{
	struct bworker	*w = arg;

	(void)a;
	event_active(w->done_ev, EV_TIMEOUT, 0);
}

/*
 * Start the item's worker: its role (default develop) planned with the
 * item's tool and model over the root's configuration, the item's text
 * as the message (with the result contract unless the tool is bash).
 * NULL and *err when it cannot start; done is then never called.
 */
struct bworker *
bworker_start(struct event_base *base, struct children *children,
    struct cmd_opts *o, const char *id, const struct bq_item *it,
    bworker_done_fn done, void *arg, char **err)
{
	struct bworker		*w = xcalloc(1, sizeof *w);
	struct plan_overrides	 over;
	struct plan_deadlines	 dl;
	struct agent_req	 req;
	const char		*role = it->role != NULL ? it->role : "develop";

	*err = NULL;
	w->base = base;
	w->done = done;
	w->arg = arg;
	w->guard.lock_fd = w->guard.workers_fd = w->guard.dirfd = -1;
	memset(&over, 0, sizeof over);
	over.tool = it->tool;
	over.model = it->model;
	if (plan_spawn(&o->cfg, o->cwd, role, &over, it->description, &req,
	    &dl, err) != 0)
		goto fail;
	w->options = req.options;
	if (strcmp(req.tool, "bash") != 0) {
		w->msg = prompt_with_contract(role, it->description);
		req.prompt = w->msg;
	}
	if (sup_init(&w->sup, base, children, o->state_dir, id, err) != 0)
		goto fail;
	w->sup_ok = 1;
	/* one driver per id; a fresh agent-N.log above any earlier run's */
	if (loopguard_open(&w->guard, w->sup.state_dir, w->sup.loop_id,
	    err) != 0 || loopguard_workers(&w->guard, NULL, err) != 0 ||
	    loopguard_reserve(&w->guard, &w->sup, err) != 0)
		goto fail;
	w->verbs = verbs_new(&w->sup);
	w->done_ev = event_new(base, -1, 0, bworker_report, w);
	w->grace_ms = dl.grace_ms;
	w->a = agent_spawn(&w->sup, &req);
	w->ladder = ladder_start(w->verbs, w->a, dl.timeout_ms, dl.nudge_ms,
	    dl.grace_ms, bworker_ended, w);
	return w;
fail:
	bworker_free(w);
	return NULL;
}

/* A stop (a signal, the budget): the kill ladder from its close step. */
void
bworker_stop(struct bworker *w)
{
	if (w == NULL || w->ladder == NULL)
		return;
	w->stopped = 1;
	ladder_close(w->ladder, w->grace_ms);
}

/* After done (or a failed start); a worker still alive is killed. */
void
bworker_free(struct bworker *w)
{
	if (w == NULL)
		return;
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
