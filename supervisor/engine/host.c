/*
 * host.c: a host of loops on the caller's event base: the reaper, the
 * bus, the state directory and the loops it runs; each loop opened
 * (loopopen.c), handed to its workflow's driver, its events numbered on
 * the bus, its end reported by callback and its memory freed after; the
 * provider gate (gate.c) every loop's workers start through; the meter
 * (meter.c) every worker result and loop end passes, for /metrics; the
 * notifier (notify.c) of the config's `notify`, on the bus.
 */
#include <config.h>

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "bus.h"
#include "children.h"
#include "leak.h"
#include "clock.h"
#include "committer.h"
#include "flowdef.h"
#include "gate.h"
#include "host.h"
#include "loopdriver.h"
#include "log.h"
#include "logfeed.h"
#include "meter.h"
#include "notify.h"
#include "question.h"
#include "state.h"
#include "sup.h"
#include "toolconfig.h"
#include "xmalloc.h"

/*
 * A hosted loop's life: opening on the host's committer thread, then
 * running until its driver says done.
 */
enum host_loop_state { HL_OPENING, HL_RUNNING, HL_ENDED };

struct host_loop {
	TAILQ_ENTRY(host_loop)	 entry;
	struct host		*h;
	char			*id;
	char			*mode;
	const struct workflow	*wf;
	const struct config	*config;	/* the host's as it opened */
	struct loop_opened	 lo;
	struct loop_spec	 spec;		/* for the open: copies */
	struct committer	*opener;	/* its open's own thread: one */
						/* held lock delays no other */
	int			 refused;	/* the open: reported by done_ev */
	enum loopopen_status	 open_status;	/* set by the thread */
	char			*open_err;	/* likewise */
	void			*run;		/* the driver's */
	struct host_observer	 obs;
	struct event		*done_ev;	/* the end, on the next turn */
	enum host_loop_state	 state;
	int			 stop_asked;	/* while opening */
	char			*stop_why;	/* an interrupt's, while opening */
	int			 code;
	struct logfeed		*feed;		/* LOOP_LOG_ENTRY; NULL: none */
	uint64_t		 t_run;		/* its run started (mono ms) */
	int			 notify_waited;	/* its last notifications */
};
TAILQ_HEAD(host_loops, host_loop);

struct host {
	struct event_base	*base;		/* the caller's */
	struct host_cfg		 cfg;
	struct children		*children;
	int			 own_children;
	struct bus		*bus;
	int			 own_bus;	/* else shared: serve's hosts */
	struct gate		*gate;		/* caps and holds per tool */
	int			 own_gate;	/* gate_new'd here */
	int			 freeing;	/* opens ending now are dropped */
	int			 dirfd;
	struct host_loops	 loops;
	size_t			 nloops;
	uint64_t		 commits;	/* of the loops gone */
	struct meter		*meter;		/* results and ends, counted */
	struct notify		*notify;	/* config.notify's; NULL: none */
	struct committer_pool	*pool;		/* the loops' commits' threads */
	int			 pool_failed;	/* threads of their own, then */
	struct state_dirwatch	*dw;		/* the loops' watches' inotify */
	int			 dw_failed;	/* their own, then */
};

/* The gate's provider_hold and provider_open, numbered on the bus. */
static void
host_gate_event(void *arg, const char *name, const json_t *fields)
{
	struct host	*h = arg;

	bus_publish(h->bus, name, json_deep_copy(fields));
}

/* The registry's leak listener: counted in our meter, on our bus. */
static void
host_leak_cb(const char *loop_id, const char *agent_id, unsigned n,
    const char *how, void *arg)
{
	host_leak(arg, loop_id, agent_id, n, how);
}

/*
 * n processes of agent_id (of loop_id) outlived its worker and were
 * ended: one warning, counted (ccw_processes_leaked_total), published.
 */
void
host_leak(struct host *h, const char *loop_id, const char *agent_id,
    unsigned n, const char *how)
{
	leak_report(h->meter, h->bus, loop_id, agent_id, n, how);
}

/* Is this loop one of ours?  (The notifier, on a bus hosts share.) */
static int
host_notify_mine(void *arg, const char *loop_id)
{
	return host_loop_find(arg, loop_id) != NULL;
}

/*
 * The notifier of config c's `notify`, made again only when it changed
 * (a re-read config must not cancel deliveries under way); it takes
 * events of no loop when the bus, reaper or gate is this host's.
 */
static void
host_notify_set(struct host *h, const struct config *c)
{
	struct notify_env	 env = { h->base, h->children, h->bus,
				    h->meter, h->cfg.state_dir,
				    host_notify_mine, h, h->own_bus ||
				    h->own_children || h->own_gate };
	char			*err = NULL;

	if (h->notify != NULL && (c == h->cfg.config ||
	    json_equal(c->notify, h->cfg.config->notify)))
		return;
	notify_free(h->notify);
	h->notify = notify_new(&env, c->notify, &err);
	if (err != NULL)
		log_warnx("notify: %s", err);
	free(err);
}

/*
 * The command is ending: 1 and cb later, once the notifications under
 * way ended (the caller dispatches its base until then); 0: none.
 */
int
host_notify_wait(struct host *h, void (*cb)(void *), void *arg)
{
	return notify_wait(h->notify, NULL, cb, arg);
}

/*
 * The host on the caller's base: the reaper made unless the caller has
 * the process's one, the bus, the meter; the state directory waits for
 * the first loop (host_dir).
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
	h->dirfd = -1;		/* host_dir: made when a loop opens */
	h->meter = meter_new();
	if ((h->children = cfg->children) == NULL) {
		if ((h->children = children_new(base, err)) == NULL) {
			host_free(h);
			return NULL;
		}
		h->own_children = 1;
	}
	/* the first host on the registry hears its tables' leaks */
	(void)children_on_leak(h->children, host_leak_cb, h);
	/* several hosts may publish on one bus (serve: one per root) */
	if ((h->bus = cfg->bus) == NULL) {
		h->bus = bus_new(cfg->bus_keep != 0 ? cfg->bus_keep :
		    HOST_BUS_KEEP);
		h->own_bus = 1;
	}
	/* several hosts may share one gate (batch: one provider, many roots) */
	if ((h->gate = cfg->gate) == NULL) {
		h->gate = gate_new(base, host_gate_event, h);
		h->own_gate = 1;
	}
	gate_set_caps(h->gate, cfg->config);	/* tools.NAME.max_workers */
	host_notify_set(h, cfg->config);
	return h;
}

/* The loop's store goes: its commits stay counted (host_commits). */
static void
host_loop_close(struct host_loop *hl)
{
	if (hl->lo.store != NULL)
		hl->h->commits += state_store_commits(hl->lo.store);
	loopopen_close(&hl->lo);
}

/*
 * The one free path of a hosted loop (open refused, ended, or the host
 * going): its engine, its hold on the loop, the handle.
 */
static void
host_loop_free(struct host_loop *hl)
{
	committer_free(hl->opener);
	logfeed_free(hl->feed);
	if (hl->run != NULL)
		hl->wf->driver->free(hl->run);
	host_loop_close(hl);
	if (hl->done_ev != NULL)
		event_free(hl->done_ev);
	free((char *)hl->spec.id);
	free((char *)hl->spec.task);
	free((char *)hl->spec.mode);
	free((char *)hl->spec.tool);
	free((char *)hl->spec.model);
	free(hl->open_err);
	free(hl->id);
	free(hl->mode);
	free(hl->stop_why);
	free(hl);
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
	/* opens under way end first (host_loop_free), their outcome dropped */
	h->freeing = 1;
	notify_free(h->notify);
	if (h->children != NULL)
		children_off_leak(h->children, h);
	while ((hl = TAILQ_FIRST(&h->loops)) != NULL) {
		TAILQ_REMOVE(&h->loops, hl, entry);
		host_loop_free(hl);
	}
	if (h->own_gate)
		gate_free(h->gate);	/* after the loops: they leave it */
	if (h->own_bus)
		bus_free(h->bus);
	if (h->own_children)
		children_free(h->children);
	if (h->dirfd >= 0)
		close(h->dirfd);
	committer_pool_free(h->pool);	/* a loop's store still out keeps it */
	state_dirwatch_free(h->dw);	/* and a loop's watch this */
	meter_free(h->meter);
	free(h);
}

/*
 * One inotify on the state directory for the loops' watches, made at
 * the first; NULL when it cannot be (each watch has its own, or polls).
 */
static struct state_dirwatch *
host_dirwatch(struct host *h, struct state_store *s)
{
	char	*e = NULL;

	if (h->dw == NULL && !h->dw_failed && (h->dw = state_dirwatch_new(
	    h->base, state_store_dirfd(s), &e)) == NULL) {
		log_warnx("host: %s; a loop's watch gets its own", e);
		free(e);
		h->dw_failed = 1;
	}
	return h->dw;
}

/*
 * The threads the loops' state commits run on, made at the first: a few
 * for all (fsyncs of different loops overlap), not two per loop.  NULL
 * when they cannot be made (each store makes its own).
 */
static struct committer_pool *
host_pool(struct host *h)
{
	char	*e = NULL;

	if (h->pool == NULL && !h->pool_failed &&
	    (h->pool = committer_pool_new(HOST_COMMIT_THREADS, &e)) == NULL) {
		log_warnx("host: %s; a loop's commits get a thread of its own",
		    e);
		free(e);
		h->pool_failed = 1;
	}
	return h->pool;
}

/* The provider gate every loop's workers start through. */
struct gate *
host_gate(struct host *h)
{
	return h->gate;
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

/*
 * The configuration loops opened from now on run with (serve reads it
 * again as a loop starts and on SIGHUP); a running loop keeps the one
 * it opened with.  Borrowed: the caller frees it once host_config_used
 * says no loop runs on it.  Its caps go to the gate.
 */
void
host_set_config(struct host *h, const struct config *c)
{
	host_notify_set(h, c);
	h->cfg.config = c;
	gate_set_caps(h->gate, c);
}

/* Does a loop of the host (opening or running) use C?  Then keep it. */
int
host_config_used(const struct host *h, const struct config *c)
{
	const struct host_loop	*hl;

	TAILQ_FOREACH(hl, &h->loops, entry)
		if (hl->config == c)
			return 1;
	return 0;
}

/* State commits of every loop it ran and runs (the engine's own). */
uint64_t
host_commits(const struct host *h)
{
	const struct host_loop	*hl;
	uint64_t		 n = h->commits;

	/* an opening loop's store is its opener thread's until it lands */
	TAILQ_FOREACH(hl, &h->loops, entry)
		if (hl->state != HL_OPENING && hl->lo.store != NULL)
			n += state_store_commits(hl->lo.store);
	return n;
}

/* Its loops' worker results and ends, counted (serve's /metrics). */
struct meter *
host_meter(struct host *h)
{
	return h->meter;
}

/* Every agent of its running loops, for counts by state. */
void
host_agents(const struct host *h, host_agent_fn fn, void *arg)
{
	const struct host_loop	*hl;
	const struct sup	*sup;
	const struct agent	*a;

	TAILQ_FOREACH(hl, &h->loops, entry) {
		if (hl->run == NULL || hl->wf->driver->agents == NULL ||
		    (sup = hl->wf->driver->agents(hl->run)) == NULL)
			continue;
		TAILQ_FOREACH(a, &sup->agents, entry)
			fn(a, arg);
	}
}

static void	host_loop_event(void *, const char *, const json_t *);

/* The feed's lines of a worker: CCW's LOOP_LOG_ENTRY on the bus. */
static void
host_loop_log(void *arg, const char *agent, const char *step,
    const char *line)
{
	json_t	*o;

	o = json_pack("{s:s, s:s, s:s}", "step_id", step, "agent_id", agent,
	    "line", line);
	host_loop_event(arg, "LOOP_LOG_ENTRY", o);
	json_decref(o);
}

/* A worker starts: its log is followed; it ended: drained, let go. */
static void
host_loop_follow(struct host_loop *hl, const char *name,
    const json_t *fields)
{
	const char	*agent = json_string_value(json_object_get(fields,
			    "agent_id"));

	if (strcmp(name, "worker_started") == 0)
		logfeed_add(hl->feed, agent, json_string_value(
		    json_object_get(fields, "role")), json_string_value(
		    json_object_get(fields, "log_path")));
	else if (strcmp(name, "worker_result") == 0)
		logfeed_end(hl->feed, agent);
}

/*
 * A loop's event: numbered on the bus with its loop id, to the observer;
 * every worker result and loop end of every workflow passes here, so it
 * is counted here (the loop's run timed from its start in this host).
 */
static void
host_loop_event(void *arg, const char *name, const json_t *fields)
{
	struct host_loop	*hl = arg;
	json_t			*o;
	uint64_t		 seq;

	if (hl->feed != NULL)
		host_loop_follow(hl, name, fields);
	/* only loop_id is added: the members are shared (events are never
	 * changed once made), a deep copy per event was for nothing */
	o = json_is_object(fields) ? json_copy((json_t *)fields) : json_object();
	json_object_set_new(o, "loop_id", json_string(hl->id));
	json_incref(o);
	meter_event(hl->h->meter, name, o, clock_mono_ms() - hl->t_run);
	seq = bus_publish(hl->h->bus, name, o);
	if (hl->obs.event != NULL)
		hl->obs.event(hl->obs.arg, hl, seq, name, o);
	json_decref(o);
}

/* The driver's worker asked: to the observer, with the loop's handle. */
static void
host_loop_ask(void *arg, const char *role, const json_t *questions)
{
	struct host_loop	*hl = arg;

	hl->obs.ask(hl->obs.arg, hl, role, questions);
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

/* The loop's notifications ended: its end goes on (done_ev again). */
static void
host_loop_notified(void *arg)
{
	struct host_loop	*hl = arg;

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
	/* its notifications first: a one-loop command exits after done */
	if (!hl->refused && !hl->notify_waited++ && h->notify != NULL &&
	    notify_wait(h->notify, hl->id, host_loop_notified, hl))
		return;
	TAILQ_REMOVE(&h->loops, hl, entry);
	h->nloops--;
	if (hl->refused) {
		hl->obs.opened(hl->obs.arg, hl, hl->code, hl->open_err);
		host_loop_free(hl);
		return;
	}
	if (hl->run != NULL)
		hl->wf->driver->free(hl->run);
	hl->run = NULL;
	host_loop_close(hl);
	if (hl->obs.done != NULL)
		hl->obs.done(hl->obs.arg, hl, hl->code);
	host_loop_free(hl);
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
	r->config = hl->config;
	r->workflow = hl->wf;
	r->root = h->cfg.root;
	r->over = h->cfg.over;
	if (hl->spec.tool != NULL)
		r->over.tool = hl->spec.tool;
	if (hl->spec.model != NULL)
		r->over.model = hl->spec.model;
	r->children = h->children;
	r->gate = h->gate;
	r->batch_ms = h->cfg.batch_ms;
	r->batch_nudge_ms = h->cfg.batch_nudge_ms;
	r->event = host_loop_event;
	r->done = host_loop_ended;
	r->ask = hl->obs.ask != NULL ? host_loop_ask : NULL;
	r->arg = hl;
}

/*
 * On the loop's opener thread: lock, create or load, fsync, running.
 * Its store is made without the event base: nothing on this thread may
 * touch the base (not thread-safe); host_loop_start attaches it.
 */
static void
host_loop_open_run(void *arg)
{
	struct host_loop	*hl = arg;

	hl->open_status = loopopen_open(&hl->lo, NULL, hl->h->dirfd,
	    hl->h->cfg.state_dir, &hl->spec, &hl->open_err);
}

/*
 * The open ended (on the loop): the run handed to the workflow's driver
 * and started; 0, or -1 with the EXIT_* code in *code and *err (the
 * handle left for the caller to free).  Not the code itself: a loop
 * found completed is refused with EXIT_OK, which is 0 too.
 */
static int
host_loop_start(struct host_loop *hl, int *code, char **err)
{
	struct host	*h = hl->h;
	struct host_run	 r;

	*err = NULL;
	*code = EXIT_INTERNAL;
	/* a loop keeps its mode unless the spec says otherwise */
	hl->mode = xstrdup(hl->spec.mode != NULL ? hl->spec.mode :
	    hl->lo.mode != NULL ? hl->lo.mode : "auto");
	/* back on the loop's thread: a running loop's commits go through it */
	if (hl->open_status == LOOPOPEN_RUN)
		state_store_attach_in(hl->lo.store, h->base, host_pool(h),
		    host_dirwatch(h, hl->lo.store));
	host_loop_run_cfg(hl, &r);
	if (hl->open_status == LOOPOPEN_RUN && (hl->run =
	    hl->wf->driver->open(h->base, &r, err)) != NULL) {
		hl->state = HL_RUNNING;
		hl->t_run = clock_mono_ms();
		hl->wf->driver->start(hl->run);
		if (hl->stop_why != NULL)
			loopdriver_record(hl->lo.store, hl->stop_why);
		if (hl->stop_asked)
			hl->wf->driver->stop(hl->run, "stopped while opening");
		return 0;
	}
	if (*err == NULL)
		*err = hl->open_err != NULL ? hl->open_err :
		    xstrdup("cannot open the loop");
	else
		free(hl->open_err);
	hl->open_err = NULL;
	if (hl->open_status != LOOPOPEN_RUN)
		*code = loopopen_exit(hl->open_status);
	return -1;
}

/*
 * Back on the loop after the thread's open: started, or refused (the
 * loop leaves the host); the observer's opened hears which.
 */
static void
host_loop_open_done(void *arg)
{
	struct host_loop	*hl = arg;
	struct host		*h = hl->h;
	char			*err = NULL;
	int			 code = EXIT_INTERNAL;

	if (h->freeing)
		return;		/* host_free frees the handle */
	if (host_loop_start(hl, &code, &err) == 0) {
		hl->obs.opened(hl->obs.arg, hl, 0, NULL);
		return;
	}
	/* out of the committer's hands first: it is freed with the handle */
	hl->refused = 1;
	hl->state = HL_ENDED;
	hl->code = code;
	hl->open_err = err;
	event_active(hl->done_ev, EV_TIMEOUT, 0);
}

/*
 * The state directory, opened (and made) when the first loop opens,
 * not before: a host that opens no loop leaves the root as it was.
 */
static int
host_dir(struct host *h, char **err)
{
	if (h->dirfd < 0)
		h->dirfd = state_dir_open(h->cfg.state_dir, 1, err);
	return h->dirfd < 0 ? -1 : 0;
}

/*
 * Open SPEC's loop (created with its task, else resumed; the run lock
 * taken: one driver per loop) and start it with WF (NULL: the config's).
 * With an observer's opened, the lock, the create and their fsyncs run
 * on the host's committer thread (the event loop never waits for them)
 * and opened says whether it runs or why not (another process drives
 * it: the message names its pid; completed; paused) with the exit code
 * a command gives.  Without one the open blocks and those refusals are
 * NULL and *err, as are at once: a workflow that cannot be hosted, a
 * bad id, a loop this host has already.
 */
struct host_loop *
host_loop_open(struct host *h, const struct loop_spec *spec,
    const struct workflow *wf, const struct host_observer *obs, char **err)
{
	struct host_loop	*hl;
	int			 code;

	if (h->cfg.refresh != NULL)
		h->cfg.refresh(h->cfg.refresh_arg, h);
	if (wf == NULL)
		wf = h->cfg.config->wf;
	if (wf == NULL || wf->driver == NULL) {
		xasprintf(err, "workflow %s cannot be hosted",
		    wf != NULL ? wf->name : "(none)");
		return NULL;
	}
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
	if (host_dir(h, err) != 0)
		return NULL;
	hl = xcalloc(1, sizeof *hl);
	hl->h = h;
	hl->wf = wf;
	hl->config = h->cfg.config;
	hl->id = xstrdup(spec->id);
	hl->code = -1;
	hl->state = HL_OPENING;
	if (obs != NULL)
		hl->obs = *obs;
	/* the thread's copy; the state file's sections the workflow's */
	hl->spec = *spec;
	hl->spec.id = xstrdup(spec->id);
	hl->spec.task = spec->task != NULL ? xstrdup(spec->task) : NULL;
	hl->spec.mode = spec->mode != NULL ? xstrdup(spec->mode) : NULL;
	hl->spec.tool = spec->tool != NULL ? xstrdup(spec->tool) : NULL;
	hl->spec.model = spec->model != NULL ? xstrdup(spec->model) : NULL;
	if (hl->spec.state == NULL)
		hl->spec.state = wf->state;
	hl->lo.guard.lock_fd = hl->lo.guard.workers_fd = hl->lo.guard.dirfd =
	    -1;
	hl->done_ev = event_new(h->base, -1, 0, host_loop_done_cb, hl);
	if (h->cfg.log_lines > 0)
		hl->feed = logfeed_new(h->base, h->cfg.log_lines,
		    h->cfg.log_bytes != 0 ? h->cfg.log_bytes : HOST_LOG_BYTES,
		    host_loop_log, hl);
	if (hl->obs.opened == NULL) {
		/* no one to call back: the open blocks, as it did */
		host_loop_open_run(hl);
		if (host_loop_start(hl, &code, err) != 0) {
			host_loop_free(hl);
			return NULL;
		}
	} else if ((hl->opener = committer_new(h->base, err)) == NULL ||
	    committer_submit(hl->opener, host_loop_open_run,
	    host_loop_open_done, hl) != 0) {
		if (*err == NULL)
			xasprintf(err, "loop %s: cannot queue its open",
			    spec->id);
		host_loop_free(hl);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&h->loops, hl, entry);
	h->nloops++;
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

/*
 * Stop a loop now: its workers closed, done(EXIT_STOPPED) follows (for
 * a loop still opening: once it runs, from its opened callback on).
 */
void
host_loop_stop(struct host_loop *hl, const char *why)
{
	if (hl->state == HL_OPENING)
		hl->stop_asked = 1;
	else if (hl->state == HL_RUNNING)
		hl->wf->driver->stop(hl->run, why);
}

/*
 * Hold a running loop where it is (a batch's budget): its workers
 * frozen, its status paused with WHY; a stop still ends it.  -1 when it
 * does not run or its driver cannot hold (the caller stops it then).
 */
int
host_loop_hold(struct host_loop *hl, const char *why)
{
	if (hl->state != HL_RUNNING || hl->wf->driver->hold == NULL)
		return -1;
	return hl->wf->driver->hold(hl->run, why);
}

/*
 * A held loop goes on (its batch's budget raised): its workers thawed,
 * its status running again.  Nothing when it does not run.
 */
void
host_loop_unhold(struct host_loop *hl)
{
	if (hl->state == HL_RUNNING && hl->wf->driver->unhold != NULL)
		hl->wf->driver->unhold(hl->run);
}

/*
 * A front end's stop (the file says STATUS, REASON by its commit): the
 * loop's own last save says the same, so a save of the loop landing
 * after or before the front end's leaves the file and the loop's
 * LOOP_COMPLETED agreeing.  A driver without stop_as just stops.
 */
void
host_loop_stop_as(struct host_loop *hl, const char *why, const char *status,
    const char *reason)
{
	if (hl->state == HL_RUNNING && hl->wf->driver->stop_as != NULL)
		hl->wf->driver->stop_as(hl->run, why, status, reason);
	else
		host_loop_stop(hl, why);
}

/*
 * The answers to the observer's ask (one string per question; NULL:
 * none, the step fails "no answer was given"): 0, or -1 when the loop
 * does not run (opening, ended) or its driver takes no answers.
 */
int
host_loop_answer(struct host_loop *hl, const json_t *answers)
{
	return host_loop_answer_via(hl, answers, NULL, NULL);
}

/* The same, the history saying who answered (BY) and through what (VIA). */
int
host_loop_answer_via(struct host_loop *hl, const json_t *answers,
    const char *by, const char *via)
{
	if (hl->state != HL_RUNNING || hl->wf->driver->answer == NULL)
		return -1;
	hl->wf->driver->answer(hl->run, answers, by, via);
	return 0;
}

/* The open questions of every live loop (question.c's records). */
json_t *
host_questions(struct host *h)
{
	struct host_loop	*hl;
	json_t			*out = json_array();

	TAILQ_FOREACH(hl, &h->loops, entry)
		if (hl->state == HL_RUNNING && hl->lo.store != NULL)
			question_open_append(state_store_get(hl->lo.store), out);
	return out;
}

/*
 * Answer a live loop's question: appended to its answers file, which
 * the loop watches and takes it from (one path for every front end).
 */
int
host_question_answer(struct host *h, const char *qid, const char *answer,
    const char *by, const char *via, char **err)
{
	struct host_loop	*hl;
	const json_t		*st;

	TAILQ_FOREACH(hl, &h->loops, entry) {
		if (hl->state != HL_RUNNING || hl->lo.store == NULL)
			continue;
		st = state_store_get(hl->lo.store);
		if (question_find(json_object_get(json_object_get(st,
		    "skill_state"), "questions"), qid) != NULL)
			return question_file_answer(state_store_dirfd(
			    hl->lo.store), hl->id, qid, answer, by, via, err);
	}
	xasprintf(err, "no live loop has the question %s", qid != NULL ? qid :
	    "(none)");
	return -ERR_NOT_FOUND;
}

/*
 * Stop a loop its host ends the session of (a signal, the client gone,
 * a cancel) and leave it running for a later driver (serve resumes it),
 * with why in its file: nobody reads it as driven, and knows the cause.
 */
void
host_loop_interrupt(struct host_loop *hl, const char *why)
{
	if (hl->state == HL_RUNNING)
		loopdriver_record(hl->lo.store, why);
	else if (hl->state == HL_OPENING && hl->stop_why == NULL)
		hl->stop_why = xstrdup(why);
	host_loop_stop(hl, why);
}

/* Interrupt every loop (a signal): each reports its done as it ends. */
void
host_stop_all(struct host *h, const char *why)
{
	struct host_loop	*hl;

	TAILQ_FOREACH(hl, &h->loops, entry)
		host_loop_interrupt(hl, why);
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

/*
 * Why an open the observer's opened refused failed, as a kind: the
 * loop's status (loopopen_code), or internal when the driver failed.
 */
enum err_code
host_loop_open_code(const struct host_loop *hl)
{
	return hl->open_status != LOOPOPEN_RUN ?
	    loopopen_code(hl->open_status) : ERR_INTERNAL;
}
