/*
 * host.c: a host of loops on the caller's event base: the reaper, the
 * bus, the state directory and the loops it runs; each loop opened
 * (loopopen.c), handed to its workflow's driver, its events numbered on
 * the bus, its end reported by callback and its memory freed after.
 */
#include <config.h>

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "bus.h"
#include "children.h"
#include "flowdef.h"
#include "host.h"
#include "state.h"
#include "sup.h"
#include "toolconfig.h"
#include "xmalloc.h"

/* A hosted loop's life: running until its driver says done. */
enum host_loop_state { HL_RUNNING, HL_ENDED };

struct host_loop {
	TAILQ_ENTRY(host_loop)	 entry;
	struct host		*h;
	char			*id;
	char			*mode;
	const struct workflow	*wf;
	struct loop_opened	 lo;
	void			*run;		/* the driver's */
	struct host_observer	 obs;
	struct event		*done_ev;	/* the end, on the next turn */
	enum host_loop_state	 state;
	int			 code;
};
TAILQ_HEAD(host_loops, host_loop);

struct host {
	struct event_base	*base;		/* the caller's */
	struct host_cfg		 cfg;
	struct children		*children;
	int			 own_children;
	struct bus		*bus;
	int			 dirfd;
	struct host_loops	 loops;
	size_t			 nloops;
};

/*
 * The host on the caller's base: the state directory opened (created),
 * the reaper made unless the caller has the process's one, the bus.
 */
struct host *
host_new(struct event_base *base, const struct host_cfg *cfg, char **err)
{
	struct host	*h;

	if (cfg->config == NULL || cfg->state_dir == NULL) {
		*err = xstrdup("a host needs a configuration and a state "
		    "directory");
		return NULL;
	}
	h = xcalloc(1, sizeof *h);
	h->base = base;
	h->cfg = *cfg;
	if (h->cfg.batch_ms == 0)
		h->cfg.batch_ms = 60000;
	if (h->cfg.batch_nudge_ms == 0)
		h->cfg.batch_nudge_ms = 5000;
	TAILQ_INIT(&h->loops);
	h->dirfd = -1;
	if ((h->dirfd = state_dir_open(cfg->state_dir, 1, err)) < 0) {
		host_free(h);
		return NULL;
	}
	if ((h->children = cfg->children) == NULL) {
		if ((h->children = children_new(base, err)) == NULL) {
			host_free(h);
			return NULL;
		}
		h->own_children = 1;
	}
	h->bus = bus_new(cfg->bus_keep != 0 ? cfg->bus_keep : HOST_BUS_KEEP);
	return h;
}

/* Free a loop's engine, its hold on the loop, and the handle. */
static void
host_loop_release(struct host_loop *hl)
{
	if (hl->run != NULL)
		hl->wf->driver->free(hl->run);
	hl->run = NULL;
	loopopen_close(&hl->lo);
	if (hl->done_ev != NULL)
		event_free(hl->done_ev);
	hl->done_ev = NULL;
}

/*
 * Every loop freed without its done callback (workers still alive are
 * killed), then the reaper if ours (it kills and reaps what is left).
 */
void
host_free(struct host *h)
{
	struct host_loop	*hl;

	if (h == NULL)
		return;
	while ((hl = TAILQ_FIRST(&h->loops)) != NULL) {
		TAILQ_REMOVE(&h->loops, hl, entry);
		host_loop_release(hl);
		free(hl->id);
		free(hl->mode);
		free(hl);
	}
	bus_free(h->bus);
	if (h->own_children)
		children_free(h->children);
	if (h->dirfd >= 0)
		close(h->dirfd);
	free(h);
}

/* The bus every loop's events go through (observe it for all of them). */
struct bus *
host_bus(struct host *h)
{
	return h->bus;
}

/* The reaper, for a caller that starts agents of its own on the base. */
struct children *
host_children(struct host *h)
{
	return h->children;
}

/* Loops running now (their done not yet reported). */
size_t
host_nloops(const struct host *h)
{
	return h->nloops;
}

/* A loop's event: numbered on the bus with its loop id, to the observer. */
static void
host_loop_event(void *arg, const char *name, const json_t *fields)
{
	struct host_loop	*hl = arg;
	json_t			*o;
	uint64_t		 seq;

	o = json_is_object(fields) ? json_deep_copy(fields) : json_object();
	json_object_set_new(o, "loop_id", json_string(hl->id));
	json_incref(o);
	seq = bus_publish(hl->h->bus, name, o);
	if (hl->obs.event != NULL)
		hl->obs.event(hl->obs.arg, hl, seq, name, o);
	json_decref(o);
}

/* The driver says the loop ended: reported on the next turn, not here. */
static void
host_loop_ended(void *arg, int code)
{
	struct host_loop	*hl = arg;

	if (hl->state == HL_ENDED)
		return;
	hl->state = HL_ENDED;
	hl->code = code;
	event_active(hl->done_ev, EV_TIMEOUT, 0);
}

/*
 * Outside the driver's hook: the loop leaves the host, its engine is
 * freed and its lock released, then the observer hears the end.
 */
static void
host_loop_done_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct host_loop	*hl = arg;
	struct host		*h = hl->h;

	(void)fd;
	(void)ev;
	TAILQ_REMOVE(&h->loops, hl, entry);
	h->nloops--;
	host_loop_release(hl);
	if (hl->obs.done != NULL)
		hl->obs.done(hl->obs.arg, hl, hl->code);
	free(hl->id);
	free(hl->mode);
	free(hl);
}

/* The run as the driver sees it. */
static void
host_loop_run_cfg(struct host_loop *hl, struct host_run *r)
{
	struct host	*h = hl->h;

	memset(r, 0, sizeof *r);
	r->id = hl->id;
	r->state_dir = h->cfg.state_dir;
	r->dirfd = h->dirfd;
	r->mode = hl->mode;
	r->resumed = hl->lo.resumed;
	r->guard = &hl->lo.guard;
	r->store = hl->lo.store;
	r->config = h->cfg.config;
	r->workflow = hl->wf;
	r->root = h->cfg.root;
	r->over = h->cfg.over;
	r->children = h->children;
	r->batch_ms = h->cfg.batch_ms;
	r->batch_nudge_ms = h->cfg.batch_nudge_ms;
	r->event = host_loop_event;
	r->done = host_loop_ended;
	r->arg = hl;
}

/*
 * Open SPEC's loop (created with its task, else resumed; the run lock
 * taken: one driver per loop) and start it with WF (NULL: the config's).
 * The handle, or NULL and *err: a loop this host runs already, one
 * another process drives (the message names its pid), a completed one.
 * This blocks for the open's file work (lock, create, fsync); the loop
 * then runs on the event base.
 */
struct host_loop *
host_loop_open(struct host *h, const struct loop_spec *spec,
    const struct workflow *wf, const struct host_observer *obs, char **err)
{
	struct host_loop	*hl;
	struct host_run		 r;
	struct loop_spec	 sp;
	enum loopopen_status	 s;

	if (wf == NULL)
		wf = h->cfg.config->wf;
	if (wf == NULL || wf->driver == NULL) {
		xasprintf(err, "workflow %s cannot be hosted",
		    wf != NULL ? wf->name : "(none)");
		return NULL;
	}
	/* the state file's sections are the workflow's unless SPEC says */
	sp = *spec;
	if (sp.state == NULL)
		sp.state = wf->state;
	spec = &sp;
	if (spec->id == NULL || !state_id_valid(spec->id)) {
		xasprintf(err, "Invalid loop ID format: '%.*s'", STATE_ID_MAX,
		    spec->id != NULL ? spec->id : "");
		return NULL;
	}
	if (host_loop_find(h, spec->id) != NULL) {
		xasprintf(err, "loop %s is already running in this host (pid "
		    "%ld): one driver per loop", spec->id, (long)getpid());
		return NULL;
	}
	hl = xcalloc(1, sizeof *hl);
	hl->h = h;
	hl->wf = wf;
	hl->id = xstrdup(spec->id);
	hl->code = -1;
	if (obs != NULL)
		hl->obs = *obs;
	s = loopopen_open(&hl->lo, h->base, h->dirfd, h->cfg.state_dir, spec,
	    err);
	/* a loop keeps its mode unless the spec says otherwise */
	hl->mode = xstrdup(spec->mode != NULL ? spec->mode :
	    hl->lo.mode != NULL ? hl->lo.mode : "auto");
	hl->done_ev = event_new(h->base, -1, 0, host_loop_done_cb, hl);
	host_loop_run_cfg(hl, &r);
	if (s != LOOPOPEN_RUN || (hl->run = wf->driver->open(h->base, &r,
	    err)) == NULL) {
		host_loop_release(hl);
		free(hl->id);
		free(hl->mode);
		free(hl);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&h->loops, hl, entry);
	h->nloops++;
	wf->driver->start(hl->run);
	return hl;
}

/* The running loop of that id, or NULL. */
struct host_loop *
host_loop_find(struct host *h, const char *id)
{
	struct host_loop	*hl;

	TAILQ_FOREACH(hl, &h->loops, entry)
		if (strcmp(hl->id, id) == 0)
			return hl;
	return NULL;
}

/* Stop a loop now: its workers closed, done(EXIT_STOPPED) follows. */
void
host_loop_stop(struct host_loop *hl, const char *why)
{
	if (hl->state == HL_RUNNING)
		hl->wf->driver->stop(hl->run, why);
}

/* Stop every loop (a signal): each reports its done as it ends. */
void
host_stop_all(struct host *h, const char *why)
{
	struct host_loop	*hl;

	TAILQ_FOREACH(hl, &h->loops, entry)
		host_loop_stop(hl, why);
}

/* The loop's id (the handle's, valid until done returns). */
const char *
host_loop_id(const struct host_loop *hl)
{
	return hl->id;
}

/* The mode it runs in. */
const char *
host_loop_mode(const struct host_loop *hl)
{
	return hl->mode;
}
