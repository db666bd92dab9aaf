/*
 * statewatch.c: noticing a front end's writes of a store's state file:
 * inotify on the directory sees writes in place and renames alike
 * (without it, or when the caller asks for polling, a stat every 25 ms
 * does; each watch decides for itself); the file is read again (a
 * half-written one later, with backoff, never judged corrupt here) and a
 * changed status goes to the callback, unless the store wrote the file
 * (a front end's write that leaves the status goes to its front
 * callback, when it has one: a budget raised while running);
 * a front end's write that reverted the engine's fields goes to the
 * store, which commits them again (state_store_defend).
 * A file that is gone and stays gone 100 ms (not a writer's delete and
 * create) is told once, as a NULL status: its owner deleted the loop.
 */
#include <config.h>

#include <sys/inotify.h>
#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "chan.h"
#include "log.h"
#include "state.h"
#include "xmalloc.h"

#define WATCH_FIRST_DELAY_MS	5
#define WATCH_MAX_DELAY_MS	1000
#define WATCH_POLL_MS		25	/* without inotify */
#define WATCH_GONE_MS		100	/* absent that long: deleted */
#define DIRWATCH_BUCKETS	256	/* watches by their file's name */
#define WATCH_MASK	(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MODIFY | IN_CREATE | \
			    IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR)

struct state_watch {
	struct event_base	*base;
	struct state_store	*store;	/* its marks: our own writes; defends
					   our fields against foreign ones */
	struct event		*ev_in;
	struct event		*ev_retry;
	struct event		*ev_poll;	/* without inotify */
	struct event		*ev_gone;	/* absent: confirm the deletion */
	int			 gone;		/* the deletion was told */
	struct stat		 polled;	/* the file as the poll last saw it */
	int			 dirfd;
	int			 ifd;
	int			 poll_only;	/* STATE_WATCH_POLL asked */
	char			*id;
	char			*name;		/* {id}.json */
	char			*status;	/* last seen, or NULL */
	int			 delay_ms;	/* current backoff, 0: none */
	state_watch_cb		 cb;
	state_watch_cb		 front;	/* NULL: only a status is news */
	void			*arg;
	struct state_dirwatch	*dw;	/* the shared inotify it is on, or NULL */
	TAILQ_ENTRY(state_watch) dw_entry;	/* in its name's bucket */
	TAILQ_ENTRY(state_watch) dw_hit;	/* in the dirwatch's hits */
	int			 hit;	/* in them now */
};
TAILQ_HEAD(state_watches, state_watch);

/*
 * One inotify on a state directory for every watch of a host's loops in
 * it: an instance per loop woke every loop at every file event of the
 * directory (O(loops^2) reads) and ran out of instances
 * (fs.inotify.max_user_instances is 128 by default; issue 30).
 */
struct state_dirwatch {
	int			 ifd;
	struct event		*ev;
	struct stat		 dir;	/* which directory */
	unsigned		 refs;	/* the owner's and each watch's */
	struct state_watches	 hits;	/* named by the events of this read */
	struct state_watches	 b[DIRWATCH_BUCKETS];
};

/*
 * Read the file now.  Unparseable means a writer is busy: look again in
 * 5, 10, 20 ... ms (at most 1 s apart) until it parses.  Of the files
 * we wrote ourselves, a stale one (replaced within the same commit) is
 * skipped and one whose status is our transition is not news.
 */
static void
watch_check(struct state_watch *w)
{
	struct stat		 st;
	enum state_load_rc	 rc;
	enum state_mark		 mark;
	json_t			*j = NULL;
	const char		*status;
	char			*e = NULL;

	rc = state_load_at(w->dirfd, w->id, ".json", STATE_LOAD_NOQUARANTINE,
	    &j, &st, &e);
	if (rc == STATE_EAGAIN) {
		w->delay_ms = w->delay_ms == 0 ? WATCH_FIRST_DELAY_MS :
		    w->delay_ms * 2;
		if (w->delay_ms > WATCH_MAX_DELAY_MS)
			w->delay_ms = WATCH_MAX_DELAY_MS;
		/* the read may have blocked: the delay starts now */
		event_base_update_cache_time(w->base);
		chan_arm_ms(w->ev_retry, (uint64_t)w->delay_ms);
		log_debug("state watch %s: %s; again in %d ms", w->id, e,
		    w->delay_ms);
		free(e);
		return;
	}
	w->delay_ms = 0;
	evtimer_del(w->ev_retry);
	if (rc == STATE_ENOENT && !w->gone) {
		/* deleted, or replaced by a writer that deletes first */
		event_base_update_cache_time(w->base);
		chan_arm_ms(w->ev_gone, WATCH_GONE_MS);
		free(e);
		return;
	}
	if (rc != STATE_OK) {
		log_debug("state watch %s: %s", w->id, e);
		free(e);
		return;
	}
	status = json_string_value(json_object_get(j, "status"));
	mark = state_store_written(w->store, &st);
	if (mark == STATE_MARK_NONE)
		state_store_defend(w->store, j);
	if (status != NULL && mark != STATE_MARK_STALE && (w->status == NULL ||
	    strcmp(status, w->status) != 0)) {
		free(w->status);
		w->status = xstrdup(status);
		if (mark != STATE_MARK_OURS)
			w->cb(w->status, j, w->arg);
	} else if (status != NULL && mark == STATE_MARK_NONE &&
	    w->front != NULL)
		w->front(status, j, w->arg);	/* a front end's other fields */
	json_decref(j);
}

/* Still absent after WATCH_GONE_MS: the owner deleted the loop. */
static void
watch_gone_cb(evutil_socket_t fd, short what, void *arg)
{
	struct state_watch	*w = arg;
	struct stat		 sb;

	(void)fd;
	(void)what;
	if (fstatat(w->dirfd, w->name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
		watch_check(w);		/* back: a rewrite, not a deletion */
		return;
	}
	if (errno != ENOENT || w->gone)
		return;
	w->gone = 1;
	w->cb(NULL, NULL, w->arg);
}

/* The backoff timer fired. */
static void
watch_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	watch_check(arg);
}

/*
 * Drain an inotify queue on a directory: 1 when NAME was among its
 * events (or the queue overflowed: anything may have happened), *gone
 * set when the directory went.  The state watch's, and the answers
 * file's while a loop waits for answers (filewatch.c).
 */
int
state_watch_drain(int ifd, const char *name, int *gone)
{
	char				 buf[8192]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event	*ev;
	ssize_t				 n;
	size_t				 off;
	int				 hit = 0;

	for (;;) {
		n = read(ifd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (off = 0; off + sizeof *ev <= (size_t)n;
		    off += sizeof *ev + ev->len) {
			ev = (const struct inotify_event *)(buf + off);
			if (ev->mask & IN_Q_OVERFLOW)
				hit = 1;
			else if (ev->mask & IN_IGNORED)
				*gone = 1;
			else if (ev->len > 0 && strcmp(ev->name, name) == 0)
				hit = 1;
		}
	}
	return hit;
}

/* Drain the inotify queue; one read of the file covers all its events. */
static void
watch_in_cb(evutil_socket_t fd, short what, void *arg)
{
	struct state_watch	*w = arg;
	int			 gone = 0;

	(void)fd;
	(void)what;
	if (state_watch_drain(w->ifd, w->name, &gone))
		watch_check(w);
	else if (gone)
		log_warnx("state watch %s: the directory is gone", w->id);
}

/* Without inotify: look at the file's identity and times now and then. */
static void
watch_poll_cb(evutil_socket_t fd, short what, void *arg)
{
	struct state_watch	*w = arg;
	struct stat		 sb;

	(void)fd;
	(void)what;
	if (fstatat(w->dirfd, w->name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
		memset(&sb, 0, sizeof sb);
	if (sb.st_ino == w->polled.st_ino && sb.st_dev == w->polled.st_dev &&
	    sb.st_size == w->polled.st_size &&
	    sb.st_mtim.tv_sec == w->polled.st_mtim.tv_sec &&
	    sb.st_mtim.tv_nsec == w->polled.st_mtim.tv_nsec &&
	    sb.st_ctim.tv_sec == w->polled.st_ctim.tv_sec &&
	    sb.st_ctim.tv_nsec == w->polled.st_ctim.tv_nsec)
		return;
	w->polled = sb;
	watch_check(w);		/* absent too: a deletion, perhaps */
}

/* A name's bucket (FNV-1a). */
static struct state_watches *
dirwatch_bucket(struct state_dirwatch *dw, const char *name)
{
	uint32_t	h = 2166136261u;

	while (*name != '\0')
		h = (h ^ (unsigned char)*name++) * 16777619u;
	return &dw->b[h % DIRWATCH_BUCKETS];
}

/* Note a watch as named by this read (once). */
static void
dirwatch_hit(struct state_dirwatch *dw, struct state_watch *w)
{
	if (w->hit)
		return;
	w->hit = 1;
	TAILQ_INSERT_TAIL(&dw->hits, w, dw_hit);
}

/* Drop a reference; the last one closes the inotify. */
static void
dirwatch_unref(struct state_dirwatch *dw)
{
	if (--dw->refs > 0)
		return;
	if (dw->ev != NULL)
		event_free(dw->ev);
	if (dw->ifd >= 0)
		close(dw->ifd);
	free(dw);
}

/* Every watch of the directory named by an event (or all: an overflow). */
static void
dirwatch_read(struct state_dirwatch *dw)
{
	char				 buf[8192]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event	*ev;
	struct state_watch		*w;
	ssize_t				 n;
	size_t				 off;
	int				 i;

	while ((n = read(dw->ifd, buf, sizeof buf)) > 0 ||
	    (n < 0 && errno == EINTR)) {
		for (off = 0; n > 0 && off + sizeof *ev <= (size_t)n;
		    off += sizeof *ev + ev->len) {
			ev = (const struct inotify_event *)(buf + off);
			if (ev->mask & IN_Q_OVERFLOW) {
				for (i = 0; i < DIRWATCH_BUCKETS; i++)
					TAILQ_FOREACH(w, &dw->b[i], dw_entry)
						dirwatch_hit(dw, w);
			} else if (ev->mask & IN_IGNORED)
				log_warnx("state watch: the directory is gone");
			else if (ev->len > 0)
				TAILQ_FOREACH(w, dirwatch_bucket(dw, ev->name),
				    dw_entry)
					if (strcmp(w->name, ev->name) == 0)
						dirwatch_hit(dw, w);
		}
	}
}

/*
 * One read of each file the events named covers all its events.  A
 * callback may free watches (its own, others): a freed one leaves the
 * hits; the dirwatch is held meanwhile.
 */
static void
dirwatch_dispatch(struct state_dirwatch *dw)
{
	struct state_watch	*w;

	dw->refs++;
	for (dirwatch_read(dw); (w = TAILQ_FIRST(&dw->hits)) != NULL;
	    watch_check(w)) {
		TAILQ_REMOVE(&dw->hits, w, dw_hit);
		w->hit = 0;
	}
	dirwatch_unref(dw);
}

/* The inotify fired. */
static void
dirwatch_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	dirwatch_dispatch(arg);
}

/*
 * One inotify for the state directory dirfd, for the watches of stores
 * given it (state_store_attach_in).  NULL and *err when inotify cannot
 * be had (each watch then tries its own, or polls).
 */
struct state_dirwatch *
state_dirwatch_new(struct event_base *base, int dirfd, char **err)
{
	struct state_dirwatch	*dw = xcalloc(1, sizeof *dw);
	char			 path[64];
	int			 i, ok;

	dw->refs = 1;
	dw->ifd = -1;
	TAILQ_INIT(&dw->hits);
	for (i = 0; i < DIRWATCH_BUCKETS; i++)
		TAILQ_INIT(&dw->b[i]);
	snprintf(path, sizeof path, "/proc/self/fd/%d", dirfd);
	ok = fstat(dirfd, &dw->dir) == 0 &&
	    (dw->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) >= 0 &&
	    inotify_add_watch(dw->ifd, path, WATCH_MASK) >= 0;
	if (ok)
		dw->ev = event_new(base, dw->ifd, EV_READ | EV_PERSIST,
		    dirwatch_cb, dw);
	if (!ok || dw->ev == NULL || event_add(dw->ev, NULL) != 0) {
		xasprintf(err, "state directory: inotify: %s",
		    strerror(errno));
		dirwatch_unref(dw);
		dw = NULL;
	}
	return dw;
}

/* The owner is done with it; watches still on it keep it. */
void
state_dirwatch_free(struct state_dirwatch *dw)
{
	if (dw != NULL)
		dirwatch_unref(dw);
}

/* On the store's shared inotify, when it has one on this directory. */
static int
watch_join(struct state_watch *w)
{
	struct state_dirwatch	*dw = state_store_dirwatch(w->store);
	struct stat		 sb;

	if (dw == NULL || w->poll_only || fstat(w->dirfd, &sb) != 0 ||
	    sb.st_dev != dw->dir.st_dev || sb.st_ino != dw->dir.st_ino)
		return 0;
	dw->refs++;
	w->dw = dw;
	TAILQ_INSERT_TAIL(dirwatch_bucket(dw, w->name), w, dw_entry);
	return 1;
}

/*
 * inotify on the directory, or polling: asked for (a network file
 * system, whose other hosts' writes inotify does not see) or as the
 * fallback (instances exhausted, say).
 */
static int
watch_start(struct state_watch *w, struct event_base *base, char **err)
{
	struct timeval	tv = { 0, WATCH_POLL_MS * 1000 };
	char		path[64];
	const char	*why;

	snprintf(path, sizeof path, "/proc/self/fd/%d", w->dirfd);
	if (!w->poll_only &&
	    (w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) >= 0 &&
	    inotify_add_watch(w->ifd, path, WATCH_MASK) >= 0) {
		w->ev_in = event_new(base, w->ifd, EV_READ | EV_PERSIST,
		    watch_in_cb, w);
		if (w->ev_in == NULL || event_add(w->ev_in, NULL) != 0) {
			xasprintf(err, "cannot set up the watch's events");
			return -1;
		}
		return 0;
	}
	why = w->poll_only ? "not used" : strerror(errno);
	if (!w->poll_only)
		log_warnx("state watch %s: inotify: %s; polling every %d ms "
		    "instead", w->id, why, WATCH_POLL_MS);
	if (w->ifd >= 0)
		close(w->ifd);
	w->ifd = -1;
	if (fstatat(w->dirfd, w->name, &w->polled, AT_SYMLINK_NOFOLLOW) != 0)
		memset(&w->polled, 0, sizeof w->polled);
	w->ev_poll = event_new(base, -1, EV_PERSIST, watch_poll_cb, w);
	if (w->ev_poll == NULL || event_add(w->ev_poll, &tv) != 0) {
		xasprintf(err, "cannot set up the watch's poll timer");
		return -1;
	}
	return 0;
}

/*
 * Watch the store's {id}.json.  The status on disk now is the starting
 * point (not reported); if it cannot be read yet, the first status read
 * is reported.
 */
struct state_watch *
state_watch_new(struct event_base *base, struct state_store *store,
    enum state_watch_how how, state_watch_cb cb, void *arg, char **err)
{
	const char		*id = store != NULL ? state_store_id(store) : NULL;
	struct state_watch	*w;
	enum state_load_rc	 rc;
	json_t			*j = NULL;
	const char		*status;
	char			*e = NULL;

	if (id == NULL || cb == NULL || base == NULL) {
		xasprintf(err, "invalid loop id");
		return NULL;
	}
	w = xcalloc(1, sizeof *w);
	w->base = base;
	w->store = store;
	w->ifd = -1;
	w->poll_only = how == STATE_WATCH_POLL;
	w->cb = cb;
	w->arg = arg;
	w->id = xstrdup(id);
	xasprintf(&w->name, "%s.json", id);
	if ((w->dirfd = fcntl(state_store_dirfd(store), F_DUPFD_CLOEXEC,
	    0)) < 0) {
		xasprintf(err, "state directory: %s", strerror(errno));
		goto fail;
	}
	if ((w->ev_retry = evtimer_new(base, watch_retry_cb, w)) == NULL ||
	    (w->ev_gone = evtimer_new(base, watch_gone_cb, w)) == NULL) {
		xasprintf(err, "cannot set up the watch's timer");
		goto fail;
	}
	if (!watch_join(w) && watch_start(w, base, err) != 0)
		goto fail;
	rc = state_load_at(w->dirfd, id, ".json", STATE_LOAD_NOQUARANTINE, &j,
	    NULL, &e);
	if (rc == STATE_OK) {
		if ((status = json_string_value(json_object_get(j,
		    "status"))) != NULL)
			w->status = xstrdup(status);
		json_decref(j);
	} else if (rc == STATE_EAGAIN)
		watch_check(w);
	free(e);
	return w;
fail:
	state_watch_free(w);
	return NULL;
}

/*
 * Tell cb of a front end's writes that leave the status as it was (the
 * owner's fields a front end may change while the loop runs: its
 * budget); the status callback still hears every change of status.
 */
void
state_watch_on_front(struct state_watch *w, state_watch_cb cb)
{
	w->front = cb;
}

/* 1 when the watch polls (asked to, or inotify failed), 0 inotify. */
int
state_watch_polling(const struct state_watch *w)
{
	return w->ev_poll != NULL;
}

/* Stop watching; safe on a half-built watch. */
void
state_watch_free(struct state_watch *w)
{
	if (w == NULL)
		return;
	if (w->dw != NULL) {
		TAILQ_REMOVE(dirwatch_bucket(w->dw, w->name), w, dw_entry);
		if (w->hit)
			TAILQ_REMOVE(&w->dw->hits, w, dw_hit);
		dirwatch_unref(w->dw);
	}
	if (w->ev_in != NULL)
		event_free(w->ev_in);
	if (w->ev_retry != NULL)
		event_free(w->ev_retry);
	if (w->ev_poll != NULL)
		event_free(w->ev_poll);
	if (w->ev_gone != NULL)
		event_free(w->ev_gone);
	if (w->ifd >= 0)
		close(w->ifd);
	if (w->dirfd >= 0)
		close(w->dirfd);
	free(w->status);
	free(w->name);
	free(w->id);
	free(w);
}
