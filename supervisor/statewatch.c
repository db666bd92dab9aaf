/*
 * statewatch.c: the state file in the event loop.  The store makes one
 * commit of the updates of one loop turn.  The watch notices a front
 * end's writes: inotify on the directory sees writes in place and renames
 * alike (without it, a stat every 25 ms does); the file is read again (a
 * half-written one later, with backoff, never judged corrupt here) and a
 * changed status goes to the callback, unless the file is our own commit.
 */
#include <config.h>

#include <sys/inotify.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
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
#define WATCH_MASK	(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MODIFY | IN_CREATE | \
			    IN_ONLYDIR)

static int	watch_poll_only;	/* state_watch_set_polling */

/* The files this process wrote, so that a watcher can tell its own. */
static struct watch_mark {
	dev_t		 dev;
	ino_t		 ino;
	off_t		 size;
	struct timespec	 mtim;
	enum state_mark	 kind;
} watch_marks[16];
static unsigned	 watch_nmarks;

struct state_store {
	struct event_base	*base;
	struct event		*ev;
	int			 dirfd;
	char			*id;
	json_t			*last;
	json_t			*pending;
	char			*to[STATE_COMMIT_NTO];
	char			*reason[STATE_COMMIT_NTO];
	int			 nto;
	uint64_t		 commits;
	uint64_t		 fsyncs;
	char			*error;
};

struct state_watch {
	struct event		*ev_in;
	struct event		*ev_retry;
	struct event		*ev_poll;	/* without inotify */
	struct stat		 polled;	/* the file as the poll last saw it */
	int			 dirfd;
	int			 ifd;
	char			*id;
	char			*name;		/* {id}.json */
	char			*status;	/* last seen, or NULL */
	int			 delay_ms;	/* current backoff, 0: none */
	state_watch_cb		 cb;
	void			*arg;
};

/* A commit remembers the file it put in place, as it was when written. */
void
state_mark_written(const struct stat *st, enum state_mark kind)
{
	struct watch_mark	*m = &watch_marks[watch_nmarks++ %
	    (sizeof watch_marks / sizeof watch_marks[0])];

	m->dev = st->st_dev;
	m->ino = st->st_ino;
	m->size = st->st_size;
	m->mtim = st->st_mtim;
	m->kind = kind;
}

/*
 * Whether this process wrote the file (untouched since), and where its
 * status came from: a watcher reports only the other side's changes.
 */
enum state_mark
state_written_by_us(const struct stat *st)
{
	const struct watch_mark	*m;
	size_t			 i;

	for (i = 0; i < sizeof watch_marks / sizeof watch_marks[0]; i++) {
		m = &watch_marks[i];
		if (m->ino != 0 && m->dev == st->st_dev &&
		    m->ino == st->st_ino && m->size == st->st_size &&
		    m->mtim.tv_sec == st->st_mtim.tv_sec &&
		    m->mtim.tv_nsec == st->st_mtim.tv_nsec)
			return m->kind;
	}
	return STATE_MARK_NONE;
}

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
		chan_arm_ms(w->ev_retry, (uint64_t)w->delay_ms);
		log_debug("state watch %s: %s; again in %d ms", w->id, e,
		    w->delay_ms);
		free(e);
		return;
	}
	w->delay_ms = 0;
	evtimer_del(w->ev_retry);
	if (rc != STATE_OK) {
		log_debug("state watch %s: %s", w->id, e);
		free(e);
		return;
	}
	status = json_string_value(json_object_get(j, "status"));
	mark = state_written_by_us(&st);
	if (status != NULL && mark != STATE_MARK_STALE && (w->status == NULL ||
	    strcmp(status, w->status) != 0)) {
		free(w->status);
		w->status = xstrdup(status);
		if (mark != STATE_MARK_OURS)
			w->cb(w->status, j, w->arg);
	}
	json_decref(j);
}

/* The backoff timer fired. */
static void
watch_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	watch_check(arg);
}

/* Drain the inotify queue; one read of the file covers all its events. */
static void
watch_in_cb(evutil_socket_t fd, short what, void *arg)
{
	struct state_watch		*w = arg;
	char				 buf[8192]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event	*ev;
	ssize_t				 n;
	size_t				 off;
	int				 hit = 0;

	(void)fd;
	(void)what;
	for (;;) {
		n = read(w->ifd, buf, sizeof buf);
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
				log_warnx("state watch %s: the directory is gone",
				    w->id);
			else if (ev->len > 0 && strcmp(ev->name, w->name) == 0)
				hit = 1;
		}
	}
	if (hit)
		watch_check(w);
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
	if (sb.st_ino != 0)
		watch_check(w);
}

/* inotify on the directory, or (instances exhausted, say) polling. */
static int
watch_start(struct state_watch *w, struct event_base *base, char **err)
{
	struct timeval	tv = { 0, WATCH_POLL_MS * 1000 };
	char		path[64];
	const char	*why;

	snprintf(path, sizeof path, "/proc/self/fd/%d", w->dirfd);
	if (!watch_poll_only &&
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
	why = watch_poll_only ? "not used" : strerror(errno);
	if (!watch_poll_only)
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
 * Watch {id}.json in the directory.  The status on disk now is the
 * starting point (not reported); if it cannot be read yet, the first
 * status read is reported.
 */
struct state_watch *
state_watch_new(struct event_base *base, int dirfd, const char *id,
    state_watch_cb cb, void *arg, char **err)
{
	struct state_watch	*w;
	enum state_load_rc	 rc;
	json_t			*j = NULL;
	const char		*status;
	char			*e = NULL;

	if (!state_id_valid(id) || cb == NULL || base == NULL) {
		xasprintf(err, "invalid loop id");
		return NULL;
	}
	w = xcalloc(1, sizeof *w);
	w->ifd = -1;
	w->cb = cb;
	w->arg = arg;
	w->id = xstrdup(id);
	xasprintf(&w->name, "%s.json", id);
	if ((w->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0)) < 0) {
		xasprintf(err, "state directory: %s", strerror(errno));
		goto fail;
	}
	if ((w->ev_retry = evtimer_new(base, watch_retry_cb, w)) == NULL) {
		xasprintf(err, "cannot set up the watch's timer");
		goto fail;
	}
	if (watch_start(w, base, err) != 0)
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
 * Poll instead of inotify for the watches made from now on: inotify does
 * not see other hosts' writes on a network file system.
 */
void
state_watch_set_polling(int on)
{
	watch_poll_only = on;
}

/* Stop watching; safe on a half-built watch. */
void
state_watch_free(struct state_watch *w)
{
	if (w == NULL)
		return;
	if (w->ev_in != NULL)
		event_free(w->ev_in);
	if (w->ev_retry != NULL)
		event_free(w->ev_retry);
	if (w->ev_poll != NULL)
		event_free(w->ev_poll);
	if (w->ifd >= 0)
		close(w->ifd);
	if (w->dirfd >= 0)
		close(w->dirfd);
	free(w->status);
	free(w->name);
	free(w->id);
	free(w);
}

/* --- the store: updates of one loop turn become one commit */

/* The loop turn is over: commit what it asked for. */
static void
store_cb(evutil_socket_t fd, short what, void *arg)
{
	struct state_store	*s = arg;
	char			*e = NULL;

	(void)fd;
	(void)what;
	if (state_store_flush(s, &e) != 0) {
		log_warnx("state %s: commit failed: %s", s->id, e);
		free(e);
	}
}

/* Ask for a commit at the end of this turn (once, however many updates). */
static void
store_schedule(struct state_store *s)
{
	if (s->ev != NULL && !event_pending(s->ev, EV_TIMEOUT, NULL))
		event_active(s->ev, EV_TIMEOUT, 0);
}

/* A store for one loop; NULL base: commits happen only on flush. */
struct state_store *
state_store_new(struct event_base *base, int dirfd, const char *id)
{
	struct state_store	*s;
	char			*e = NULL;
	int			 fd;

	if (!state_id_valid(id) ||
	    (fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return NULL;
	s = xcalloc(1, sizeof *s);
	s->base = base;
	s->dirfd = fd;
	s->id = xstrdup(id);
	if (state_load(fd, id, &s->last, &e) != STATE_OK) {
		log_debug("state %s: %s", id, e);
		free(e);
	}
	if (base != NULL)
		s->ev = event_new(base, -1, 0, store_cb, s);
	return s;
}

/* Pending work is committed first: nothing asked for is dropped silently. */
void
state_store_free(struct state_store *s)
{
	char	*e = NULL;
	int	 i;

	if (s == NULL)
		return;
	if (state_store_flush(s, &e) != 0) {
		log_warnx("state %s: last commit failed: %s", s->id, e);
		free(e);
	}
	if (s->ev != NULL)
		event_free(s->ev);
	for (i = 0; i < s->nto; i++) {
		free(s->to[i]);
		free(s->reason[i]);
	}
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
 * Commit now.  Whatever happens the pending work is consumed: a failed
 * commit is reported (here and by state_store_error), never retried
 * into a success behind the caller's back.
 */
int
state_store_flush(struct state_store *s, char **err)
{
	struct state_commit_req	 req;
	json_t			*merged = NULL;
	unsigned		 n = 0;
	int			 i, rc;

	if (s->ev != NULL)
		event_del(s->ev);
	if (s->pending == NULL && s->nto == 0)
		return 0;
	memset(&req, 0, sizeof req);
	req.last = s->last;
	req.patch = s->pending;
	for (i = 0; i < s->nto; i++) {
		req.to[i] = s->to[i];
		req.reason[i] = s->reason[i];
	}
	req.nto = s->nto;
	free(s->error);
	s->error = NULL;
	rc = state_commit_run(s->dirfd, s->id, &req, &merged, &n, &s->error);
	s->fsyncs += n;
	if (rc == 0) {
		json_decref(s->last);
		s->last = merged;
		s->commits++;
	} else if (err != NULL)
		*err = xstrdup(s->error);
	for (i = 0; i < s->nto; i++) {
		free(s->to[i]);
		free(s->reason[i]);
	}
	s->nto = 0;
	json_decref(s->pending);
	s->pending = NULL;
	return rc;
}

/* The state as we last committed (or first read) it; borrowed. */
const json_t *
state_store_get(const struct state_store *s)
{
	return s->last;
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
