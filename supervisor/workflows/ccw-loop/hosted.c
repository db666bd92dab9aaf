/*
 * hosted.c: ccw-loop's run engine (loop.c) as a host drives it: the
 * workflow table's driver (host.h) turns a host's run into a loop_cfg.
 * A host has no terminal, so the interactive mode is not hosted; an
 * observer with an ask hook answers a worker's questions in any mode.
 */
#include <config.h>

#include <string.h>

#include "ccw-loop.h"
#include "host.h"
#include "log.h"
#include "loopint.h"
#include "state.h"
#include "xmalloc.h"

/* The mode word of skill_state.mode: 0, or -1 for one a host cannot run. */
static int
hosted_mode(const char *word, enum loop_mode *mode)
{
	*mode = LOOP_AUTO;
	if (word == NULL)
		return 0;
	/* interactive needs a person at a terminal: not hosted */
	return loop_mode_parse(word, mode) != 0 ||
	    *mode == LOOP_INTERACTIVE ? -1 : 0;
}

/* A loop engine for the host's run, not started. */
static void *
hosted_open(struct event_base *base, const struct host_run *r, char **err)
{
	struct loop_cfg	cfg;

	memset(&cfg, 0, sizeof cfg);
	if (hosted_mode(r->mode, &cfg.mode) != 0) {
		xasprintf(err, "loop %s: mode %s cannot be hosted (auto or "
		    "parallel; interactive needs a terminal: use run)", r->id,
		    r->mode);
		return NULL;
	}
	cfg.id = r->id;
	cfg.state_dir = r->state_dir;
	cfg.dirfd = r->dirfd;
	cfg.resumed = r->resumed;
	cfg.batch_ms = r->batch_ms;
	cfg.batch_nudge_ms = r->batch_nudge_ms;
	cfg.guard = r->guard;
	/* the parallel step's policy: the strictest of its roles' */
	loopopen_retry(r->config, &cfg.retry);
	cfg.config = r->config;
	cfg.root = r->root;
	cfg.over = r->over;
	cfg.children = r->children;
	cfg.gate = r->gate;	/* the host's: every loop's workers */
	cfg.workflow = r->workflow;
	cfg.hooks.event = r->event;
	cfg.hooks.done = r->done;
	cfg.hooks.ask = r->ask;
	cfg.ask_always = r->ask != NULL;
	cfg.hooks.arg = r->arg;
	return loop_new(base, r->store, &cfg, err);
}

/* loop_start, loop_stop(_as) and loop_free under the driver's types. */
static void
hosted_start(void *l)
{
	loop_start(l);
}

static void
hosted_stop(void *l, const char *why)
{
	loop_stop(l, why);
}

static void
hosted_stop_as(void *l, const char *why, const char *status,
    const char *reason)
{
	loop_stop_as(l, why, status, reason);
}

static void
hosted_free(void *l)
{
	loop_free(l);
}

static void
hosted_answer(void *l, const json_t *answers, const char *by,
    const char *via)
{
	loop_answer_via(l, answers, by, via);
}

/* The hold's pause (or its end) committed, or not: said in the log. */
static void
hosted_held(struct state_store *s, int rc, const char *err, void *arg)
{
	struct loop	*l = arg;

	(void)s;
	if (rc != 0)
		log_warnx("state %s: the hold's commit: %s", l->cfg.id, err);
}

/*
 * A host's hold (a batch's budget): the loop held as its own budget
 * holds it (budget.c), status paused with the reason in pause_reason.
 */
static int
hosted_hold(void *arg, const char *why)
{
	struct loop	*l = arg;
	json_t		*patch;

	if (loop_hold(l, why) != 0)
		return -1;
	patch = json_pack("{s:s}", "pause_reason", why);
	state_store_update(l->store, patch);
	json_decref(patch);
	if (state_store_transition(l->store, "pause", why) != 0)
		log_warnx("state %s: transition to paused refused", l->cfg.id);
	state_store_commit(l->store, hosted_held, l);
	return 0;
}

/*
 * A host's hold ended (the batch's budget raised): the loop thawed and
 * running again in its file (pause_reason goes with the paused status).
 */
static void
hosted_unhold(void *arg)
{
	struct loop	*l = arg;

	if (!loop_held(l))
		return;
	loop_unhold(l);
	if (state_store_transition(l->store, "unpause", NULL) != 0)
		log_warnx("state %s: transition to running refused", l->cfg.id);
	state_store_commit(l->store, hosted_held, l);
}

/* The loop's agent table, for serve's counts by state. */
static const struct sup *
hosted_agents(void *l)
{
	return &((struct loop *)l)->sup;
}

const struct workflow_driver ccw_loop_driver = {
	.open = hosted_open,
	.start = hosted_start,
	.stop = hosted_stop,
	.stop_as = hosted_stop_as,
	.free = hosted_free,
	.answer = hosted_answer,
	.agents = hosted_agents,
	.hold = hosted_hold,
	.unhold = hosted_unhold,
};
