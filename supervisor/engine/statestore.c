/*
 * statestore.c: the state file of one loop on the event loop.  Updates
 * of one loop turn become one commit; with an event base it runs on the
 * store's committer thread, one at a time, and what piles up meanwhile
 * becomes the next one.  The in-memory state stays the loop's thread's.
 * The loop's side files are written by a second committer, in order.
 */
#include <config.h>

#include <sys/queue.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "committer.h"
#include "log.h"
#include "state.h"
#include "xmalloc.h"

struct store_waiter {
	state_store_cb			 cb;
	void				*arg;
	TAILQ_ENTRY(store_waiter)	 entry;
};
TAILQ_HEAD(store_waiters, store_waiter);

/* One commit: the job owns (references to) everything the thread touches. */
struct store_job {
	struct state_store	*s;
	struct state_commit_req	 req;
	json_t			*last;
	json_t			*patch;
	char			*to[STATE_COMMIT_NTO];
	char			*reason[STATE_COMMIT_NTO];
	json_t			*merged;	/* out: the file written */
	unsigned		 nfsync;
	uint64_t		 displaced;
	int			 rc;
	char			*err;
	struct store_waiters	 waiters;	/* called when it landed */
};

struct state_store {
	struct event_base	*base;
	struct event		*ev;	/* end of turn: start a commit */
	struct committer	*committer;	/* NULL without a base */
	struct committer	*side;	/* side files; made at the first job */
	struct committer_pool	*pool;	/* whose threads they use; NULL: own */
	struct state_dirwatch	*dw;	/* a shared inotify for its watch */
	int			 side_failed;	/* could not: side jobs run inline */
	struct store_job	*inflight;
	struct state_marks	*marks;
	const struct workflow_state *ws;	/* the sections' rules */
	atomic_int		 nowait;
	int			 freeing;	/* callbacks are dropped */
	int			 dirfd;
	char			*id;
	json_t			*last;
	json_t			*pending;
	char			*to[STATE_COMMIT_NTO];
	char			*reason[STATE_COMMIT_NTO];
	int			 nto;
	struct store_waiters	 waiting;	/* for what is pending now */
	uint64_t		 commits;
	uint64_t		 fsyncs;
	uint64_t		 displaced;
	uint64_t		 restores;	/* state_store_defend's commits */
	int			 settle;	/* the next job only checks */
	char			*error;
};

/* Call (or, while freeing, drop) the callbacks of a landed commit. */
static void
store_notify(struct state_store *s, struct store_waiters *ws, int rc,
    const char *err)
{
	struct store_waiter	*w;

	while ((w = TAILQ_FIRST(ws)) != NULL) {
		TAILQ_REMOVE(ws, w, entry);
		if (!s->freeing)
			w->cb(s, rc, err, w->arg);
		free(w);
	}
}

/* What is pending becomes a job: copies for the thread, pending emptied. */
static struct store_job *
store_job_new(struct state_store *s)
{
	struct store_job	*j = xcalloc(1, sizeof *j);
	int			 i;

	j->s = s;
	TAILQ_INIT(&j->waiters);
	TAILQ_CONCAT(&j->waiters, &s->waiting, entry);
	/*
	 * Shared with the thread, not copied: s->last only changes when this
	 * job lands, nothing changes a committed state in place (callers get
	 * it const), and jansson's reference counts are atomic.
	 */
	j->last = json_incref(s->last);
	j->patch = s->pending;
	s->pending = NULL;
	j->req.last = j->last;
	j->req.patch = j->patch;
	for (i = 0; i < s->nto; i++) {
		j->to[i] = s->to[i];
		j->reason[i] = s->reason[i];
		j->req.to[i] = j->to[i];
		j->req.reason[i] = j->reason[i];
		s->to[i] = s->reason[i] = NULL;
	}
	j->req.nto = s->nto;
	s->nto = 0;
	j->req.ws = s->ws;
	j->req.marks = s->marks;
	j->req.nowait = &s->nowait;
	j->req.displaced = &j->displaced;
	j->req.if_reverted = s->settle;
	s->settle = 0;
	return j;
}

/* The blocking part; on the committer thread (or inline for a flush). */
static void
store_job_run(void *arg)
{
	struct store_job	*j = arg;

	j->rc = state_commit_run(j->s->dirfd, j->s->id, &j->req, &j->merged,
	    &j->nfsync, &j->err);
}

/* A commit landed: take its result, tell whoever asked, free it. */
static void
store_job_land(struct state_store *s, struct store_job *j)
{
	int	i;

	s->fsyncs += j->nfsync;
	s->displaced += j->displaced;
	free(s->error);
	s->error = NULL;
	if (j->rc == 0) {
		json_decref(s->last);
		s->last = j->merged;
		j->merged = NULL;
		s->commits++;
	} else {
		s->error = j->err != NULL ? j->err : xstrdup("commit failed");
		j->err = NULL;
		if (TAILQ_EMPTY(&j->waiters))
			log_warnx("state %s: commit failed: %s", s->id, s->error);
	}
	store_notify(s, &j->waiters, j->rc, s->error);
	for (i = 0; i < STATE_COMMIT_NTO; i++) {
		free(j->to[i]);
		free(j->reason[i]);
	}
	json_decref(j->merged);
	json_decref(j->last);
	json_decref(j->patch);
	free(j->err);
	free(j);
}

static void	store_kick(struct state_store *);

/* The committer is done with a job (on the loop). */
static void
store_job_done(void *arg)
{
	struct store_job	*j = arg;
	struct state_store	*s = j->s;

	s->inflight = NULL;
	store_job_land(s, j);
	store_kick(s);
}

/*
 * Start the next commit unless one is in flight (its end starts the
 * next); with nothing pending, whoever waits is answered at once.
 */
static void
store_kick(struct state_store *s)
{
	if (s->inflight != NULL)
		return;
	if (s->committer == NULL) {
		(void)state_store_flush(s, NULL);
		return;
	}
	if (s->pending == NULL && s->nto == 0) {
		store_notify(s, &s->waiting, 0, NULL);
		return;
	}
	s->inflight = store_job_new(s);
	if (committer_submit(s->committer, store_job_run, store_job_done,
	    s->inflight) != 0) {
		store_job_run(s->inflight);
		store_job_done(s->inflight);
	}
}

/* The loop turn is over: commit what it asked for. */
static void
store_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	store_kick(arg);
}

/* Ask for a commit at the end of this turn (once, however many updates). */
static void
store_schedule(struct state_store *s)
{
	if (s->ev != NULL && !event_pending(s->ev, EV_TIMEOUT, NULL))
		event_active(s->ev, EV_TIMEOUT, 0);
}

/*
 * The store onto BASE: its end-of-turn event and its committer thread.
 * Only the loop's own thread may do this: an event_base is not
 * thread-safe (no evthread locking), and an event added, activated or
 * deleted from another thread corrupts its queues (a loop that spins on
 * an active count with nothing to run, or an activation lost for good).
 * A store opened on another thread (a host's opener) is made without a
 * base and attached here once back on the loop; work pending meanwhile
 * is committed at the end of this turn.
 */
void
state_store_attach(struct state_store *s, struct event_base *base)
{
	state_store_attach_in(s, base, NULL, NULL);
}

/*
 * state_store_attach with the committers (commits, side files) on a
 * pool's threads and its watch on a shared inotify (a host's, shared by
 * its loops); NULL: the store's own.  Both are borrowed: the pool and
 * the dirwatch keep themselves alive while in use.
 */
void
state_store_attach_in(struct state_store *s, struct event_base *base,
    struct committer_pool *pool, struct state_dirwatch *dw)
{
	char	*e = NULL;

	if (s == NULL || base == NULL || s->base != NULL)
		return;
	s->base = base;
	s->pool = pool;
	s->dw = dw;
	s->ev = event_new(base, -1, 0, store_cb, s);
	if ((s->committer = pool != NULL ? committer_new_in(pool, base, &e) :
	    committer_new(base, &e)) == NULL) {
		log_warnx("state %s: %s; committing on the loop", s->id, e);
		free(e);
	}
	if (s->pending != NULL || s->nto > 0)
		store_schedule(s);
}

/*
 * A store for one loop; NULL base: commits happen only on flush, until
 * state_store_attach.  Its commits check skill_state with the
 * workflow's rules (ws).
 */
struct state_store *
state_store_new(struct event_base *base, const struct workflow_state *ws,
    int dirfd, const char *id)
{
	struct state_store	*s;
	char			*e = NULL;
	int			 fd;

	if (!state_id_valid(id) ||
	    (fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return NULL;
	s = xcalloc(1, sizeof *s);
	TAILQ_INIT(&s->waiting);
	s->ws = ws;
	s->dirfd = fd;
	s->id = xstrdup(id);
	s->marks = state_marks_new();
	if (state_load(fd, id, &s->last, &e) != STATE_OK) {
		log_debug("state %s: %s", id, e);
		free(e);
	}
	state_store_attach(s, base);
	return s;
}

/*
 * Pending work is committed first: nothing asked for is dropped
 * silently.  Callbacks are not called any more: their owners may be gone.
 */
void
state_store_free(struct state_store *s)
{
	char	*e = NULL;
	int	 i;

	if (s == NULL)
		return;
	s->freeing = 1;
	if (state_store_flush(s, &e) != 0) {
		log_warnx("state %s: last commit failed: %s", s->id, e);
		free(e);
	}
	committer_free(s->committer);
	committer_free(s->side);	/* each side job's done frees it */
	store_notify(s, &s->waiting, 0, NULL);
	if (s->ev != NULL)
		event_free(s->ev);
	for (i = 0; i < s->nto; i++) {
		free(s->to[i]);
		free(s->reason[i]);
	}
	state_marks_free(s->marks);
	json_decref(s->last);
	json_decref(s->pending);
	free(s->error);
	free(s->id);
	close(s->dirfd);
	free(s);
}

/* Patches pile up (deep-merged) until the turn ends. */
void
state_store_update(struct state_store *s, const json_t *patch)
{
	if (!json_is_object(patch)) {
		log_warnx("state %s: update ignored: not an object", s->id);
		return;
	}
	if (s->pending == NULL)
		s->pending = json_object();
	state_merge_patch(s->pending, patch);
	store_schedule(s);
}

/* A transition rides on the next commit; several apply in order. */
int
state_store_transition(struct state_store *s, const char *to,
    const char *reason)
{
	if (state_transition_source(to) == NULL || s->nto == STATE_COMMIT_NTO)
		return -1;
	s->to[s->nto] = xstrdup(to);
	s->reason[s->nto] = reason != NULL ? xstrdup(reason) : NULL;
	s->nto++;
	store_schedule(s);
	return 0;
}

/*
 * The asynchronous path: cb runs on the loop once everything pending now
 * has landed (or failed), never before this returns.  Without an event
 * base, at the next flush.
 */
void
state_store_commit(struct state_store *s, state_store_cb cb, void *arg)
{
	struct store_waiter	*w = xcalloc(1, sizeof *w);

	w->cb = cb;
	w->arg = arg;
	if (s->pending == NULL && s->nto == 0 && s->inflight != NULL)
		TAILQ_INSERT_TAIL(&s->inflight->waiters, w, entry);
	else {
		TAILQ_INSERT_TAIL(&s->waiting, w, entry);
		store_schedule(s);
	}
}

/*
 * The synchronous path (start-up, the end, tests): wait for the commit
 * in flight, then commit what is pending on this thread.  Whatever
 * happens the pending work is consumed: a failed commit is reported
 * (here and by state_store_error), never retried behind the caller's back.
 */
int
state_store_flush(struct state_store *s, char **err)
{
	struct store_job	*j;
	int			 rc = 0, waited = 0;

	if (s->ev != NULL)
		event_del(s->ev);
	while (s->inflight != NULL) {
		waited = 1;
		committer_wait(s->committer);
	}
	if (s->pending == NULL && s->nto == 0) {
		store_notify(s, &s->waiting, 0, NULL);
		if (waited && s->error != NULL) {
			if (err != NULL)
				*err = xstrdup(s->error);
			return -1;
		}
		return 0;
	}
	j = store_job_new(s);
	store_job_run(j);
	if ((rc = j->rc) != 0 && err != NULL)
		*err = xstrdup(j->err != NULL ? j->err : "commit failed");
	store_job_land(s, j);
	return rc;
}

/*
 * The process is stopping: a commit waiting for a lock another program
 * holds gives up now, and later ones at once (the file stays consistent:
 * it is either replaced whole or not at all).
 */
void
state_store_nowait(struct state_store *s)
{
	atomic_store(&s->nowait, 1);
}

/*
 * The side committer, made at the first side job: a front end holding a
 * side file's lock delays only the side files, never a state commit.
 */
static struct committer *
store_side(struct state_store *s)
{
	char	*e = NULL;

	if (s->side == NULL && s->base != NULL && !s->side_failed &&
	    (s->side = s->pool != NULL ? committer_new_in(s->pool, s->base,
	    &e) : committer_new(s->base, &e)) == NULL) {
		log_warnx("state %s: %s; side files written on the loop",
		    s->id, e);
		free(e);
		s->side_failed = 1;
	}
	return s->side;
}

/*
 * A side-file job: run (which may block on a lock or a disk) off the
 * loop, after every side job given before; done on the loop, always
 * (it frees arg).  Without an event base both run here and now.
 */
void
state_store_side(struct state_store *s, committer_run_fn run,
    committer_done_fn done, void *arg)
{
	struct committer	*c = store_side(s);

	if (c == NULL || committer_submit(c, run, done, arg) != 0) {
		run(arg);
		done(arg);
	}
}

/* A side wait: the store's callback, dropped if the store is freed first. */
struct store_side_wait {
	struct state_store	*s;
	committer_done_fn	 cb;
	void			*arg;
};

/* Nothing to run: the wait only keeps its place in the queue. */
static void
store_side_nop(void *arg)
{
	(void)arg;
}

/* Every side job before the wait has run. */
static void
store_side_waited(void *arg)
{
	struct store_side_wait	*w = arg;

	if (!w->s->freeing)
		w->cb(w->arg);
	free(w);
}

/*
 * cb on the loop once every side job given so far has run: a loop's end
 * waits for its side files on the loop, where a stop can still reach it.
 * Dropped if the store is freed first; at once if side jobs run inline.
 */
void
state_store_side_wait(struct state_store *s, committer_done_fn cb, void *arg)
{
	struct store_side_wait	*w = xcalloc(1, sizeof *w);
	struct committer	*c = store_side(s);

	w->s = s;
	w->cb = cb;
	w->arg = arg;
	if (c == NULL || committer_submit(c, store_side_nop, store_side_waited,
	    w) != 0) {
		free(w);
		cb(arg);
	}
}

/* The flag side jobs poll while they wait for a lock (set when stopping). */
const atomic_int *
state_store_stopping(const struct state_store *s)
{
	return &s->nowait;
}

/* The state as we last committed (or first read) it; borrowed. */
const json_t *
state_store_get(const struct state_store *s)
{
	return s->last;
}

/* The shared inotify a watch of this store joins; NULL: its own. */
struct state_dirwatch *
state_store_dirwatch(const struct state_store *s)
{
	return s->dw;
}

/* Why the last commit failed; NULL after a success. */
const char *
state_store_error(const struct state_store *s)
{
	return s->error;
}

/* Commits made, for tests and the benchmark. */
uint64_t
state_store_commits(const struct state_store *s)
{
	return s->commits;
}

/* fsync calls made (two per commit: the file and the directory). */
uint64_t
state_store_fsyncs(const struct state_store *s)
{
	return s->fsyncs;
}

/* Front-end writes a commit displaced and merged again (tests, bench). */
uint64_t
state_store_displaced(const struct state_store *s)
{
	return s->displaced;
}

/* Did this store write the file as it is now?  For its watch. */
enum state_mark
state_store_written(const struct state_store *s, const struct stat *st)
{
	return state_marks_find(s->marks, st);
}

/* The store's directory (borrowed), for its watch. */
int
state_store_dirfd(const struct state_store *s)
{
	return s->dirfd;
}

/* The store's loop id. */
const char *
state_store_id(const struct state_store *s)
{
	return s->id;
}

/* A status our end transition leaves. */
static int
store_ended(const char *st)
{
	return st != NULL && (strcmp(st, "completed") == 0 ||
	    strcmp(st, "failed") == 0);
}

/*
 * Our fields again after a foreign write reverted them (a front end
 * rewriting the whole file from a stale read): the next commit merges
 * by ownership, so an empty patch puts our last values back and keeps
 * theirs.  An ended loop's status (completed, failed) is made again
 * from running by its transition.  Returns 1 when something was asked.
 */
static int
store_restore(struct state_store *s, const json_t *disk)
{
	const char	*st;

	if (s->last == NULL || s->freeing ||
	    !state_owned_reverted(disk, s->last))
		return 0;
	if (s->pending == NULL)
		s->pending = json_object();
	st = json_string_value(json_object_get(s->last, "status"));
	if (store_ended(st))
		(void)state_store_transition(s, st, json_string_value(
		    json_object_get(s->last, "failure_reason")));
	store_schedule(s);
	return 1;
}

/* The watch read a write of the other side: defend what we own. */
void
state_store_defend(struct state_store *s, const json_t *disk)
{
	if (store_restore(s, disk)) {
		s->restores++;
		log_debug("state %s: a foreign write reverted our fields; "
		    "committing them again", s->id);
	}
}

/*
 * Before a loop tells its end: a commit that reads the file under the
 * lock and writes only if our fields are not what we last committed.
 */
void
state_store_settle(struct state_store *s, state_store_cb cb, void *arg)
{
	const char	*st = json_string_value(json_object_get(s->last,
			    "status"));

	if (s->pending == NULL && s->nto == 0) {
		s->pending = json_object();
		s->settle = 1;
		/* applied only from running, and only if the check writes */
		if (store_ended(st))
			(void)state_store_transition(s, st, json_string_value(
			    json_object_get(s->last, "failure_reason")));
	}
	state_store_commit(s, cb, arg);
}

/* How often our fields had to be committed again. */
uint64_t
state_store_restores(const struct state_store *s)
{
	return s->restores;
}
