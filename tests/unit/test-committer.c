/*
 * test-committer.c: the committer thread (order, done on the loop's
 * thread), committers sharing a pool's threads, and the store on top of
 * it: batching, commits piling up while one waits for a held lock
 * (coalesced), failures reported to the callback, giving up a held lock
 * when stopping, write marks per store, loops' watches on one inotify.
 */
#include <config.h>

#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "ccw-loop.h"
#include "committer.h"
#include "state.h"
#include "statefix.h"
#include "tap.h"
#include "xmalloc.h"

/* The state file of ccw-loop (its sections and rules). */
#define WS	(&ccw_loop_state)

#define T_NJOBS		50
#define T_BURST		100

/* --- the committer alone */

struct t_jobs {
	int		 ran[T_NJOBS + 1], nran;	/* written by the thread only */
	int		 done[T_NJOBS + 1], ndone;
	int		 on_loop;	/* every done ran on the loop's thread */
	pthread_t	 loop;
};
struct t_job {
	struct t_jobs	*t;
	int		 i;
};

/* On the committer's thread. */
static void
t_job_run(void *arg)
{
	struct t_job	*j = arg;
	struct timespec	 ts = { 0, 100000 };

	nanosleep(&ts, NULL);
	j->t->ran[j->t->nran++] = j->i;
}

/* On the loop. */
static void
t_job_done(void *arg)
{
	struct t_job	*j = arg;

	j->t->done[j->t->ndone++] = j->i;
	if (!pthread_equal(pthread_self(), j->t->loop))
		j->t->on_loop = 0;
	free(j);
}

/* Jobs run in the order given; done functions come back in it, on the loop. */
static void
test_order(void)
{
	struct event_base	*base = event_base_new();
	struct committer	*c;
	struct t_jobs		 t;
	struct t_job		*j;
	char			*e = NULL;
	int			 i, inorder = 1;

	memset(&t, 0, sizeof t);
	t.on_loop = 1;
	t.loop = pthread_self();
	c = committer_new(base, &e);
	tap_ok(c != NULL, "committer_new (%s)", e != NULL ? e : "ok");
	for (i = 0; i < T_NJOBS; i++) {
		j = xcalloc(1, sizeof *j);
		j->t = &t;
		j->i = i;
		committer_submit(c, t_job_run, t_job_done, j);
	}
	event_base_dispatch(base);
	for (i = 0; i < T_NJOBS; i++)
		inorder = inorder && t.ran[i] == i && t.done[i] == i;
	tap_ok(t.nran == T_NJOBS && t.ndone == T_NJOBS && inorder,
	    "%d jobs ran and came back in order; the dispatch then ran out "
	    "of events", T_NJOBS);
	tap_ok(t.on_loop, "every done function ran on the loop's thread");
	j = xcalloc(1, sizeof *j);
	j->t = &t;
	j->i = 0;
	committer_submit(c, t_job_run, t_job_done, j);
	committer_wait(c);
	tap_is_int(t.ndone, T_NJOBS + 1, "committer_wait: run and done");
	committer_free(c);
	event_base_free(base);
}

/*
 * Committers sharing a pool of two threads: each one's jobs still run
 * one at a time, in its order, done on the loop; the pool's owner may
 * let go first (its committers keep it until they are freed).
 */
static void
test_pool(void)
{
	struct event_base	*base = event_base_new();
	struct committer_pool	*p;
	struct committer	*c[3];
	struct t_jobs		 t[3];
	struct t_job		*j;
	char			*e = NULL;
	int			 i, k, inorder = 1, made = 1;

	p = committer_pool_new(2, &e);
	tap_ok(p != NULL, "committer_pool_new (%s)", e != NULL ? e : "ok");
	for (k = 0; k < 3; k++) {
		memset(&t[k], 0, sizeof t[k]);
		t[k].on_loop = 1;
		t[k].loop = pthread_self();
		if ((c[k] = committer_new_in(p, base, &e)) == NULL)
			made = 0;
	}
	committer_pool_free(p);
	tap_ok(made, "three committers on it");
	for (i = 0; i < T_NJOBS; i++)
		for (k = 0; k < 3; k++) {
			j = xcalloc(1, sizeof *j);
			j->t = &t[k];
			j->i = i;
			committer_submit(c[k], t_job_run, t_job_done, j);
		}
	event_base_dispatch(base);
	for (k = 0; k < 3; k++)
		for (i = 0; i < T_NJOBS; i++)
			inorder = inorder && t[k].ran[i] == i &&
			    t[k].done[i] == i && t[k].on_loop;
	tap_ok(inorder && t[0].ndone == T_NJOBS && t[1].ndone == T_NJOBS &&
	    t[2].ndone == T_NJOBS, "each committer's %d jobs ran and came "
	    "back in its order, on the loop", T_NJOBS);
	for (k = 0; k < 3; k++)
		committer_free(c[k]);
	tap_ok(1, "the last committer freed ends the pool");
	event_base_free(base);
}

/* --- the store */

struct t_turns {
	struct state_store	*s;
	int			 n, per, turns;
	struct event_base	*base;
};

/* One loop turn of updates; chains the next turn if asked. */
static void
t_turn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct t_turns	*t = arg;
	struct timeval	 zero = { 0, 0 };
	json_t		*p;
	int		 i;

	(void)fd;
	(void)what;
	for (i = 0; i < t->per; i++) {
		p = t_hammer(++t->n);
		state_store_update(t->s, p);
		json_decref(p);
	}
	if (--t->turns > 0)
		event_base_once(t->base, -1, EV_TIMEOUT, t_turn_cb, t, &zero);
}

/* Several updates in one loop turn are one commit. */
static void
test_batching(void)
{
	struct t_turns	 t = { NULL, 0, 10, 1, NULL };
	struct timeval	 zero = { 0, 0 };
	json_t		*j;
	uint64_t	 n;

	t_create("B");
	t.base = event_base_new();
	t.s = state_store_new(t.base, WS, t_dirfd, "B");
	event_base_once(t.base, -1, EV_TIMEOUT, t_turn_cb, &t, &zero);
	event_base_dispatch(t.base);
	tap_is_int((long long)state_store_commits(t.s), 1,
	    "10 updates in one turn: one commit");
	tap_is_int((long long)state_store_fsyncs(t.s), 2, "... two fsyncs");
	j = t_load("B");
	tap_is_int(json_integer_value(t_ss(j, "hammer")), 10,
	    "... holding the last update");
	json_decref(j);
	t.per = 1;
	t.turns = 3;
	event_base_once(t.base, -1, EV_TIMEOUT, t_turn_cb, &t, &zero);
	event_base_dispatch(t.base);
	n = state_store_commits(t.s);
	tap_ok(n >= 3 && n <= 4, "one update in each of 3 turns: 1 to 3 more "
	    "commits (what comes while one is in flight rides on the next): %llu",
	    (unsigned long long)n);
	j = t_load("B");
	tap_is_int(json_integer_value(t_ss(j, "hammer")), 13,
	    "... holding the last update");
	json_decref(j);
	t_clear();
	tap_ok(state_store_flush(t.s, &t_err) == 0 && state_store_commits(t.s) == n,
	    "flush with nothing pending commits nothing");
	tap_ok(state_store_transition(t.s, "paused", NULL) != 0 &&
	    state_store_transition(t.s, "running", NULL) == 0 &&
	    state_store_flush(t.s, &t_err) == 0 && strcmp(json_string_value(
	    json_object_get(state_store_get(t.s), "status")), "running") == 0,
	    "store transition created -> running; paused refused");
	state_store_free(t.s);
	event_base_free(t.base);
}

/* A write that fails is a failed commit and leaves the file alone. */
static void
test_failed_write(void)
{
	struct state_store	*s;
	char			*before, *after;
	int			 rc;

	t_create("W");
	before = t_read(t_dirfd, "W.json");
	mkdirat(t_dirfd, "W.json.tmp", 0755);
	rc = t_commit("W", t_hammer(1), NULL, NULL, NULL);
	after = t_read(t_dirfd, "W.json");
	tap_ok(rc != 0 && strstr(t_e(), "W.json.tmp") != NULL,
	    "temp file cannot be created: commit fails (%s)", t_e());
	tap_ok(before != NULL && after != NULL && strcmp(before, after) == 0,
	    "... and the file is unchanged");
	s = state_store_new(NULL, WS, t_dirfd, "W");
	tap_ok(t_store_commit(s, 2) != 0 && state_store_error(s) != NULL &&
	    state_store_commits(s) == 0, "store: failed commit reported, "
	    "not counted");
	unlinkat(t_dirfd, "W.json.tmp", AT_REMOVEDIR);
	tap_ok(t_store_commit(s, 3) == 0 && state_store_error(s) == NULL,
	    "the next commit works again");
	state_store_free(s);
	free(before);
	free(after);
}

struct t_burst {
	struct state_store	*s;
	struct event_base	*base;
	int			 n, ncb, nfail, lockfd;
	char			*err;
};

/* A commit landed (or failed). */
static void
t_burst_cb(struct state_store *s, int rc, const char *err, void *arg)
{
	struct t_burst	*b = arg;

	(void)s;
	b->ncb++;
	if (rc != 0) {
		b->nfail++;
		free(b->err);
		b->err = xstrdup(err != NULL ? err : "?");
	}
}

/* One result, as the loop records it: an update and a commit with a callback. */
static void
t_burst_turn(evutil_socket_t fd, short what, void *arg)
{
	struct t_burst	*b = arg;
	struct timeval	 zero = { 0, 0 };
	json_t		*p = t_hammer(++b->n);

	(void)fd;
	(void)what;
	state_store_update(b->s, p);
	json_decref(p);
	state_store_commit(b->s, t_burst_cb, b);
	if (b->n < T_BURST)
		event_base_once(b->base, -1, EV_TIMEOUT, t_burst_turn, b, &zero);
	else if (b->lockfd >= 0) {
		close(b->lockfd);	/* the front end lets go */
		b->lockfd = -1;
	}
}

/* Hold {id}.lock as a front end would (another open file description). */
static int
t_hold_lock(const char *id)
{
	char	*name;
	int	 fd;

	xasprintf(&name, "%s.lock", id);
	fd = openat(t_dirfd, name, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	free(name);
	if (fd < 0 || flock(fd, LOCK_EX) != 0)
		tap_diag("cannot hold the lock");
	return fd;
}

/*
 * 100 results in 100 loop turns while a front end holds the lock: the
 * turns go on (nothing blocks), and the commits pile up into at most two.
 */
static void
test_burst(void)
{
	struct t_burst	 b;
	struct timeval	 zero = { 0, 0 };
	json_t		*j;

	memset(&b, 0, sizeof b);
	t_create("H");
	b.base = event_base_new();
	b.s = state_store_new(b.base, WS, t_dirfd, "H");
	b.lockfd = t_hold_lock("H");
	event_base_once(b.base, -1, EV_TIMEOUT, t_burst_turn, &b, &zero);
	event_base_dispatch(b.base);
	tap_ok(b.n == T_BURST && b.ncb == T_BURST && b.nfail == 0,
	    "%d results, each with its callback, none failed (%d, %d, %s)",
	    T_BURST, b.n, b.ncb, b.err != NULL ? b.err : "ok");
	tap_ok(state_store_fsyncs(b.s) <= 5, "... coalesced: %llu commits, "
	    "%llu fsyncs (at most 5)", (unsigned long long)state_store_commits(
	    b.s), (unsigned long long)state_store_fsyncs(b.s));
	j = t_load("H");
	tap_is_int(json_integer_value(t_ss(j, "hammer")), T_BURST,
	    "... the file holds the last result");
	json_decref(j);
	state_store_free(b.s);
	event_base_free(b.base);
	free(b.err);
}

/* A commit that fails is reported to its callback, error and all. */
static void
test_failed_cb(void)
{
	struct t_burst	 b;
	json_t		*p = t_hammer(1);

	memset(&b, 0, sizeof b);
	t_create("F");
	b.base = event_base_new();
	b.s = state_store_new(b.base, WS, t_dirfd, "F");
	mkdirat(t_dirfd, "F.json.tmp", 0755);
	state_store_update(b.s, p);
	json_decref(p);
	state_store_commit(b.s, t_burst_cb, &b);
	tap_ok(b.ncb == 0, "the callback never runs before state_store_commit "
	    "returns");
	event_base_dispatch(b.base);
	tap_ok(b.ncb == 1 && b.nfail == 1 && b.err != NULL &&
	    strstr(b.err, "F.json.tmp") != NULL && state_store_commits(b.s) == 0,
	    "a failed commit: the callback has the error (%s)", b.err);
	unlinkat(t_dirfd, "F.json.tmp", AT_REMOVEDIR);
	state_store_free(b.s);
	event_base_free(b.base);
	free(b.err);
}

/* Stopping: the store gives up a lock another program holds. */
static void
t_nowait_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	state_store_nowait(arg);
}

/* A commit waiting for a held lock fails at once when asked to stop. */
static void
test_nowait(void)
{
	struct t_burst	 b;
	struct timeval	 tv = { 0, 100000 };
	struct timespec	 t0, t1;
	json_t		*p = t_hammer(7);
	long		 ms;
	int		 fd;

	memset(&b, 0, sizeof b);
	t_create("N");
	b.base = event_base_new();
	b.s = state_store_new(b.base, WS, t_dirfd, "N");
	fd = t_hold_lock("N");
	state_store_update(b.s, p);
	json_decref(p);
	state_store_commit(b.s, t_burst_cb, &b);
	event_base_once(b.base, -1, EV_TIMEOUT, t_nowait_cb, b.s, &tv);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	event_base_dispatch(b.base);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	tap_ok(b.ncb == 1 && b.nfail == 1 && b.err != NULL &&
	    strstr(b.err, "N.lock") != NULL, "a held lock: the commit gives up "
	    "when stopping (%s)", b.err);
	tap_ok(ms < 2000, "... soon after being asked (%ld ms)", ms);
	tap_ok(strcmp(t_status("N"), "created") == 0, "... the file untouched");
	close(fd);
	state_store_free(b.s);
	event_base_free(b.base);
	free(b.err);
}

struct t_marks {
	struct event_base	*base;
	char			 seen[256];
};

/* The watch reported a status. */
static void
t_marks_cb(const char *status, const json_t *st, void *arg)
{
	struct t_marks	*m = arg;
	size_t		 n = strlen(m->seen);

	(void)st;
	snprintf(m->seen + n, sizeof m->seen - n, "%s,", status);
}

/* Stop the dispatch. */
static void
t_marks_end(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/*
 * Write marks belong to a store: another store's commit (another loop
 * host in the same process) is news to this store's watch; its own is not.
 */
static void
test_marks(void)
{
	struct state_store	*s1, *s2;
	struct state_watch	*w;
	struct t_marks		 m;
	struct timeval		 tv = { 0, 300000 };
	char			*e = NULL;

	memset(&m, 0, sizeof m);
	t_create("K");
	m.base = event_base_new();
	s1 = state_store_new(NULL, WS, t_dirfd, "K");
	s2 = state_store_new(NULL, WS, t_dirfd, "K");
	w = state_watch_new(m.base, s2, STATE_WATCH_INOTIFY, t_marks_cb, &m,
	    &e);
	state_store_transition(s1, "running", NULL);
	state_store_flush(s1, NULL);
	event_base_once(m.base, -1, EV_TIMEOUT, t_marks_end, m.base, &tv);
	event_base_dispatch(m.base);
	state_store_transition(s2, "failed", "stop");
	state_store_flush(s2, NULL);
	event_base_once(m.base, -1, EV_TIMEOUT, t_marks_end, m.base, &tv);
	event_base_dispatch(m.base);
	tap_ok(w != NULL && strcmp(m.seen, "running,") == 0, "the other "
	    "store's transition is reported, the own one is not (%s)", m.seen);
	state_watch_free(w);
	state_store_free(s1);
	state_store_free(s2);
	event_base_free(m.base);
	free(e);
}

/* Both watches saw a status: stop; else look again in 10 ms. */
static void
t_both_check(evutil_socket_t fd, short what, void *arg)
{
	struct t_marks	*m = arg;

	(void)fd;
	(void)what;
	if (m[0].seen[0] != '\0' && m[1].seen[0] != '\0')
		event_base_loopbreak(m[0].base);
}

/*
 * How a watch looks is its own: on one base, a polling watch and an
 * inotify one of the same loop both see another store's commit.
 */
static void
test_two_watches(void)
{
	struct state_store	*s1, *s2;
	struct state_watch	*wi, *wp;
	struct t_marks		 m[2];
	struct event		*tick, *end;
	struct timeval		 tv = { 0, 10000 }, limit = { 20, 0 };
	char			*e = NULL;

	memset(m, 0, sizeof m);
	t_create("W");
	m[0].base = m[1].base = event_base_new();
	s1 = state_store_new(NULL, WS, t_dirfd, "W");
	s2 = state_store_new(NULL, WS, t_dirfd, "W");
	wi = state_watch_new(m[0].base, s2, STATE_WATCH_INOTIFY, t_marks_cb,
	    &m[0], &e);
	wp = state_watch_new(m[0].base, s2, STATE_WATCH_POLL, t_marks_cb,
	    &m[1], &e);
	tap_ok(wi != NULL && wp != NULL && !state_watch_polling(wi) &&
	    state_watch_polling(wp), "one base: an inotify watch and a "
	    "polling one (%s)", e != NULL ? e : "made");
	state_store_transition(s1, "running", NULL);
	state_store_flush(s1, NULL);
	tick = event_new(m[0].base, -1, EV_PERSIST, t_both_check, m);
	end = evtimer_new(m[0].base, t_marks_end, m[0].base);
	event_add(tick, &tv);
	event_add(end, &limit);
	event_base_dispatch(m[0].base);
	tap_ok(strcmp(m[0].seen, "running,") == 0 &&
	    strcmp(m[1].seen, "running,") == 0, "both see the other store's "
	    "commit (inotify: %s polling: %s)", m[0].seen, m[1].seen);
	event_free(tick);
	event_free(end);
	state_watch_free(wi);
	state_watch_free(wp);
	state_store_free(s1);
	state_store_free(s2);
	event_base_free(m[0].base);
	free(e);
}

/* inotify instances this process has open. */
static int
t_inotify_fds(void)
{
	char		 path[64], link[64];
	DIR		*d = opendir("/proc/self/fd");
	struct dirent	*de;
	ssize_t		 n;
	int		 count = 0;

	while (d != NULL && (de = readdir(d)) != NULL) {
		snprintf(path, sizeof path, "/proc/self/fd/%.20s", de->d_name);
		if ((n = readlink(path, link, sizeof link - 1)) > 0) {
			link[n] = '\0';
			count += strcmp(link, "anon_inode:inotify") == 0;
		}
	}
	if (d != NULL)
		closedir(d);
	return count;
}

/* The first watch saw a status: stop; else look again in 10 ms. */
static void
t_first_check(evutil_socket_t fd, short what, void *arg)
{
	struct t_marks	*m = arg;

	(void)fd, (void)what;
	if (m[0].seen[0] != '\0')
		event_base_loopbreak(m[0].base);
}

/* Dispatch until check (every 10 ms) stops it, or 20 s have passed. */
static void
t_dispatch_until(struct t_marks *m, event_callback_fn check)
{
	struct timeval	 tv = { 0, 10000 }, limit = { 20, 0 };
	struct event	*tick, *end;

	tick = event_new(m[0].base, -1, EV_PERSIST, check, m);
	end = evtimer_new(m[0].base, t_marks_end, m[0].base);
	event_add(tick, &tv);
	event_add(end, &limit);
	event_base_dispatch(m[0].base);
	event_free(tick);
	event_free(end);
}

/*
 * A host's loops' watches share one inotify on the state directory (one
 * instance per loop woke every loop at every event of the directory, and
 * ran out of instances): each still hears its own file only.
 */
static void
test_dirwatch(void)
{
	struct state_store	*sx, *sx2, *sy2;
	struct state_dirwatch	*dw;
	struct state_watch	*wx, *wy;
	struct t_marks		 m[2];
	char			*e = NULL;
	int			 before;

	memset(m, 0, sizeof m);
	t_create("X");
	t_create("Y");
	m[0].base = m[1].base = event_base_new();
	before = t_inotify_fds();
	dw = state_dirwatch_new(m[0].base, t_dirfd, &e);
	sx = state_store_new(NULL, WS, t_dirfd, "X");
	sx2 = state_store_new(NULL, WS, t_dirfd, "X");
	sy2 = state_store_new(NULL, WS, t_dirfd, "Y");
	state_store_attach_in(sx2, m[0].base, NULL, dw);
	state_store_attach_in(sy2, m[0].base, NULL, dw);
	wx = state_watch_new(m[0].base, sx2, STATE_WATCH_INOTIFY, t_marks_cb,
	    &m[0], &e);
	wy = state_watch_new(m[0].base, sy2, STATE_WATCH_INOTIFY, t_marks_cb,
	    &m[1], &e);
	state_dirwatch_free(dw);	/* the watches keep it */
	tap_ok(dw != NULL && wx != NULL && wy != NULL &&
	    t_inotify_fds() == before + 1, "two loops' watches, one inotify "
	    "(%d more; %s)", t_inotify_fds() - before, e != NULL ? e : "made");
	state_store_transition(sx, "running", NULL);
	state_store_flush(sx, NULL);
	t_dispatch_until(m, t_first_check);
	tap_ok(strcmp(m[0].seen, "running,") == 0 && m[1].seen[0] == '\0',
	    "X's watch sees X's commit, Y's sees nothing (X: %s Y: %s)",
	    m[0].seen, m[1].seen);
	state_watch_free(wx);
	state_watch_free(wy);
	tap_is_int(t_inotify_fds(), before, "the last watch closes it");
	state_store_free(sx);
	state_store_free(sx2);
	state_store_free(sy2);
	event_base_free(m[0].base);
	free(e);
}

/* Every group in a private directory, removed at the end. */
int
main(void)
{
	t_setup();
	test_order();
	test_pool();
	test_batching();
	test_failed_write();
	test_burst();
	test_failed_cb();
	test_nowait();
	test_marks();
	test_two_watches();
	test_dirwatch();
	t_teardown();
	return tap_done();
}
