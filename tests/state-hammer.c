/*
 * state-hammer.c: drives the state code (supervisor/state*.c) for the
 * regression tests and the benchmark.  Usage: state-hammer DIR ID COMMAND
 *
 *   create TITLE [MAX]    a new state file (max_iterations MAX, default 10)
 *   commit N [turn|sync] [-w FILE] [-p US]
 *                         N commits of skill_state.hammer = c+1 .. c+N, c
 *                         being the value on disk.  turn (default): one
 *                         update per event-loop turn through a state_store;
 *                         sync: state_commit in a loop.  -w: waits for FILE
 *                         to exist before the last update; -p: US between
 *                         updates (default 0: as fast as it goes).  Prints
 *                         "committed V" once V is durable, then "commits C
 *                         fsyncs F displaced D".
 *   burst N               N updates in one loop turn; "commits C fsyncs F"
 *   bench N               N state_commit calls against N raw write + fsync +
 *                         rename + fsync(dir) of the same bytes, interleaved
 *                         in 4 rounds; "bench ours R raw R ratio X" (per s)
 *   watch MS [poll]       "ready", then "status S latency_ms L" for every
 *                         status change (L: now minus the file's mtime), MS
 *                         ms; poll: stat instead of inotify
 *   selfwatch [poll]      a watch and, in the same process, 40 ms apart: a
 *                         front-end write of status paused by rename, one
 *                         of running in place (two halves 30 ms apart), our
 *                         own commit and transition running -> failed, a
 *                         front-end paused again; prints "seen S1,S2,..."
 *                         (expected: paused,running,paused,) and
 *                         "quarantined N" (files moved aside: expected 0)
 *   flip N [-a FILE] [-r FILE] [-p US]
 *                         a careless front end: N read-modify-writes without
 *                         the lock; status paused (odd i, and always the
 *                         last) or running (even i), notes = i; even i
 *                         written in place (O_TRUNC, two halves 200 us
 *                         apart), odd i by a temp file and rename.  -r:
 *                         creates FILE after the last write but one; -a:
 *                         waits for FILE before the last write; sleeps US
 *                         between writes (default 2000).  Prints "flips N
 *                         lost L", L counting reads where its own previous
 *                         write was not there.
 *   get                   "hammer=V notes=N status=S errors=E"
 *   transition STATUS [REASON]
 *
 * Every command but flip and the watches runs state_clean_temps first, as the
 * supervisor does at start-up.  Exit 0 ok, 1 failure, 2 usage.
 */
#include <config.h>

#include <sys/stat.h>
#include <sys/time.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "ccw-loop.h"
#include "hammer.h"
#include "log.h"
#include "state.h"
#include "xmalloc.h"

/* The state file of ccw-loop (its sections and rules). */
#define WS	(&ccw_loop_state)

static int		 hammer_dirfd;
static const char	*hammer_dir, *hammer_id;

/* Wall clock in ms (for latencies against file times). */
static double
hammer_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Monotonic seconds (for rates). */
static double
hammer_mono(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One line on stdout, unbuffered, so a kill -9 loses nothing printed. */
static void __attribute__((format(printf, 1, 2)))
hammer_say(const char *fmt, ...)
{
	va_list	 ap;
	char	 buf[512];
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0 && write(1, buf, (size_t)n < sizeof buf ? (size_t)n :
	    sizeof buf - 1) < 0)
		exit(1);
}

/* skill_state.hammer on disk, 0 if none. */
static long long
hammer_disk_counter(void)
{
	json_t		*st = NULL;
	char		*e = NULL;
	long long	 v = 0;

	if (state_load(hammer_dirfd, hammer_id, &st, &e) == STATE_OK)
		v = json_integer_value(json_object_get(json_object_get(st,
		    "skill_state"), "hammer"));
	free(e);
	json_decref(st);
	return v;
}

/* The patch of our one counter. */
static json_t *
hammer_patch(long long v)
{
	return json_pack("{s:{s:I}}", "skill_state", "hammer", (json_int_t)v);
}

/* create TITLE [MAX] */
static int
hammer_create(int argc, char **argv)
{
	json_t	*st;
	char	*e = NULL;
	int	 rc;

	if (argc < 1)
		return 2;
	st = state_new(WS, hammer_id, argv[0], "state-hammer", argc > 1 ?
	    strtoll(argv[1], NULL, 10) : 10);
	if (st == NULL) {
		fprintf(stderr, "state-hammer: bad id or arguments\n");
		return 1;
	}
	rc = state_create(WS, hammer_dirfd, hammer_id, st, NULL, &e);
	if (rc != 0)
		fprintf(stderr, "state-hammer: %s\n", e);
	free(e);
	json_decref(st);
	return rc != 0;
}

struct hammer_turn {
	struct event_base	*base;
	struct state_store	*store;
	const char		*await;		/* before the last update */
	struct timeval		 pace;		/* between updates */
	long long		 next, end;
	uint64_t		 said;
};

/* Report the commits the store made since the last look. */
static void
hammer_turn_report(struct hammer_turn *h)
{
	const json_t	*ss;

	if (state_store_commits(h->store) == h->said)
		return;
	h->said = state_store_commits(h->store);
	ss = json_object_get(state_store_get(h->store), "skill_state");
	hammer_say("committed %lld\n", (long long)json_integer_value(
	    json_object_get(ss, "hammer")));
}

/* One update per loop turn; the store commits it at the turn's end. */
static void
hammer_turn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct hammer_turn	*h = arg;
	json_t			*p;

	(void)fd;
	(void)what;
	hammer_turn_report(h);
	if (state_store_error(h->store) != NULL)
		fprintf(stderr, "state-hammer: %s\n", state_store_error(h->store));
	if (h->next > h->end)
		return;
	if (h->next == h->end)
		hammer_await(h->await);
	p = hammer_patch(h->next++);
	state_store_update(h->store, p);
	json_decref(p);
	event_base_once(h->base, -1, EV_TIMEOUT, hammer_turn_cb, h, &h->pace);
}

/* commit N [turn|sync] */
static int
hammer_commit(int argc, char **argv)
{
	struct hammer_turn	 h;
	struct timeval		 zero = { 0, 0 };
	json_t			*p;
	char			*e = NULL;
	struct state_commit_req	 req;
	uint64_t		 disp = 0;
	const char		*await = NULL;
	long long		 n, c, i, pace = 0;
	unsigned		 nf = 0;
	int			 bad = 0, sync = 0, k;

	if (argc < 1)
		return 2;
	n = strtoll(argv[0], NULL, 10);
	for (k = 1; k < argc; k++) {
		if (strcmp(argv[k], "sync") == 0)
			sync = 1;
		else if (strcmp(argv[k], "-w") == 0 && k + 1 < argc)
			await = argv[++k];
		else if (strcmp(argv[k], "-p") == 0 && k + 1 < argc)
			pace = strtoll(argv[++k], NULL, 10);
		else if (strcmp(argv[k], "turn") != 0)
			return 2;
	}
	c = hammer_disk_counter();
	if (sync) {
		for (i = c + 1; i <= c + n; i++) {
			if (i == c + n)
				hammer_await(await);
			else if (i > c + 1 && pace > 0)
				usleep((useconds_t)pace);
			p = hammer_patch(i);
			memset(&req, 0, sizeof req);
			req.patch = p;
			req.displaced = &disp;
			if (state_commit_run(hammer_dirfd, hammer_id, &req, NULL,
			    &nf, &e) != 0) {
				fprintf(stderr, "state-hammer: %s\n", e);
				free(e);
				e = NULL;
				bad = 1;
			} else
				hammer_say("committed %lld\n", i);
			json_decref(p);
		}
		hammer_say("commits %lld fsyncs %u displaced %llu\n", n, nf,
		    (unsigned long long)disp);
		return bad;
	}
	memset(&h, 0, sizeof h);
	h.base = event_base_new();
	h.store = state_store_new(h.base, WS, hammer_dirfd, hammer_id);
	if (h.store == NULL)
		return 1;
	h.next = c + 1;
	h.end = c + n;
	h.await = await;
	h.pace.tv_sec = pace / 1000000;
	h.pace.tv_usec = pace % 1000000;
	event_base_once(h.base, -1, EV_TIMEOUT, hammer_turn_cb, &h, &zero);
	event_base_dispatch(h.base);
	hammer_turn_report(&h);
	bad = state_store_error(h.store) != NULL;
	hammer_say("commits %llu fsyncs %llu displaced %llu\n",
	    (unsigned long long)state_store_commits(h.store),
	    (unsigned long long)state_store_fsyncs(h.store),
	    (unsigned long long)state_store_displaced(h.store));
	state_store_free(h.store);
	event_base_free(h.base);
	return bad;
}

/* All N updates in the one callback: one loop turn. */
static void
hammer_burst_cb(evutil_socket_t fd, short what, void *arg)
{
	struct hammer_turn	*h = arg;
	json_t			*p;

	(void)fd;
	(void)what;
	while (h->next <= h->end) {
		p = hammer_patch(h->next++);
		state_store_update(h->store, p);
		json_decref(p);
	}
}

/* burst N */
static int
hammer_burst(int argc, char **argv)
{
	struct hammer_turn	 h;
	struct timeval		 zero = { 0, 0 };
	int			 bad;

	if (argc < 1)
		return 2;
	memset(&h, 0, sizeof h);
	h.base = event_base_new();
	if ((h.store = state_store_new(h.base, WS, hammer_dirfd,
	    hammer_id)) == NULL)
		return 1;
	h.next = hammer_disk_counter() + 1;
	h.end = h.next + strtoll(argv[0], NULL, 10) - 1;
	event_base_once(h.base, -1, EV_TIMEOUT, hammer_burst_cb, &h, &zero);
	event_base_dispatch(h.base);
	bad = state_store_error(h.store) != NULL;
	hammer_say("commits %llu fsyncs %llu\n",
	    (unsigned long long)state_store_commits(h.store),
	    (unsigned long long)state_store_fsyncs(h.store));
	state_store_free(h.store);
	event_base_free(h.base);
	return bad;
}

/* The baseline: a durable replace of the same bytes, nothing else. */
static int
hammer_raw_replace(const char *text, size_t len)
{
	int	fd;

	fd = openat(hammer_dirfd, "raw.json.tmp", O_WRONLY | O_CREAT | O_TRUNC |
	    O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || fsync(fd) != 0 ||
	    close(fd) != 0 ||
	    renameat(hammer_dirfd, "raw.json.tmp", hammer_dirfd, "raw.json") != 0 ||
	    fsync(hammer_dirfd) != 0)
		return -1;
	return 0;
}

/* bench N */
static int
hammer_bench(int argc, char **argv)
{
	json_t		*p, *merged = NULL;
	char		*e = NULL, *text;
	long long	 n, i, r, v;
	double		 t0, ours = 0, raw = 0;
	unsigned	 nf = 0;

	if (argc < 1 || (n = strtoll(argv[0], NULL, 10) / 4) < 1)
		return 2;
	v = hammer_disk_counter();
	p = hammer_patch(++v);
	if (state_commit(WS, hammer_dirfd, hammer_id, p, NULL, NULL, &merged,
	    &nf, &e) != 0) {
		fprintf(stderr, "state-hammer: %s\n", e);
		free(e);
		json_decref(p);
		return 1;
	}
	json_decref(p);
	text = json_dumps(merged, JSON_INDENT(2));
	json_decref(merged);
	for (r = 0; r < 4; r++) {
		t0 = hammer_mono();
		for (i = 0; i < n; i++) {
			p = hammer_patch(++v);
			if (state_commit(WS, hammer_dirfd, hammer_id, p, NULL,
			    NULL, NULL, &nf, &e) != 0) {
				fprintf(stderr, "state-hammer: %s\n", e);
				free(e);
				free(text);
				json_decref(p);
				return 1;
			}
			json_decref(p);
		}
		ours += hammer_mono() - t0;
		t0 = hammer_mono();
		for (i = 0; i < n; i++)
			if (hammer_raw_replace(text, strlen(text)) != 0) {
				perror("state-hammer: raw");
				free(text);
				return 1;
			}
		raw += hammer_mono() - t0;
	}
	free(text);
	unlinkat(hammer_dirfd, "raw.json", 0);
	hammer_say("bench ours %.0f raw %.0f ratio %.2f\n", 4 * n / ours,
	    4 * n / raw, raw / ours);
	return 0;
}

/* A status change seen by the watch. */
static void
hammer_watch_cb(const char *status, const json_t *st, void *arg)
{
	struct stat	sb;
	double		lat = -1;

	(void)st;
	(void)arg;
	if (fstatat(hammer_dirfd, *(char **)arg, &sb, AT_SYMLINK_NOFOLLOW) == 0)
		lat = hammer_now_ms() - ((double)sb.st_mtim.tv_sec * 1e3 +
		    (double)sb.st_mtim.tv_nsec / 1e6);
	hammer_say("status %s latency_ms %.1f\n", status, lat);
}

/* The watch's time is up. */
static void
hammer_watch_end(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/* watch MS */
static int
hammer_watch(int argc, char **argv)
{
	struct event_base	*base;
	struct state_store	*s;
	struct state_watch	*w;
	struct timeval		 tv;
	long long		 ms;
	char			*e = NULL, *name;

	if (argc < 1)
		return 2;
	ms = strtoll(argv[0], NULL, 10);
	xasprintf(&name, "%s.json", hammer_id);
	base = event_base_new();
	s = state_store_new(NULL, WS, hammer_dirfd, hammer_id);
	w = state_watch_new(base, s, argc > 1 && strcmp(argv[1], "poll") == 0 ?
	    STATE_WATCH_POLL : STATE_WATCH_INOTIFY, hammer_watch_cb, &name, &e);
	if (w == NULL) {
		fprintf(stderr, "state-hammer: %s\n", e);
		free(e);
		free(name);
		state_store_free(s);
		event_base_free(base);
		return 1;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	event_base_once(base, -1, EV_TIMEOUT, hammer_watch_end, base, &tv);
	hammer_say("ready\n");
	event_base_dispatch(base);
	state_watch_free(w);
	state_store_free(s);
	event_base_free(base);
	free(name);
	return 0;
}

/* selfwatch: the statuses reported, and where the script is. */
static char	*hammer_seen;
static struct state_store *hammer_self_store;
static int	 hammer_step;

/* The watch reported a status. */
static void
hammer_self_cb(const char *status, const json_t *st, void *arg)
{
	char	*t;

	(void)st;
	(void)arg;
	xasprintf(&t, "%s%s,", hammer_seen, status);
	free(hammer_seen);
	hammer_seen = t;
}

/* A front end's write of the whole file with a new status: by rename or in place. */
static void
hammer_fe_status(const char *status, int in_place)
{
	json_t	*j = NULL;
	char	*e = NULL, *text, *name;
	size_t	 half;
	int	 fd;

	if (state_load(hammer_dirfd, hammer_id, &j, &e) != STATE_OK) {
		fprintf(stderr, "state-hammer: %s\n", e);
		free(e);
		return;
	}
	json_object_set_new(j, "status", json_string(status));
	text = json_dumps(j, JSON_INDENT(2));
	half = strlen(text) / 2;
	json_decref(j);
	xasprintf(&name, "%s.json%s", hammer_id, in_place ? "" : ".fe-tmp");
	fd = openat(hammer_dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644);
	if (fd < 0 || write(fd, text, half) != (ssize_t)half)
		fprintf(stderr, "state-hammer: write %s failed\n", name);
	if (in_place)
		usleep(30000);	/* the watch sees half a file meanwhile */
	if (fd >= 0 && write(fd, text + half, strlen(text + half)) < 0)
		fprintf(stderr, "state-hammer: write %s failed\n", name);
	if (fd >= 0)
		close(fd);
	free(name);
	if (!in_place) {
		xasprintf(&name, "%s.json", hammer_id);
		xasprintf(&e, "%s.json.fe-tmp", hammer_id);
		renameat(hammer_dirfd, e, hammer_dirfd, name);
		free(name);
		free(e);
	}
	free(text);
}

/* The script of selfwatch, one step per 40 ms. */
static void
hammer_self_step(evutil_socket_t fd, short what, void *arg)
{
	struct timeval	 tv = { 0, 40000 };
	json_t		*p;
	char		*e = NULL;

	(void)fd;
	(void)what;
	switch (hammer_step++) {
	case 0:
		hammer_fe_status("paused", 0);
		break;
	case 1:
		hammer_fe_status("running", 1);
		break;
	case 2:
		/* through the watch's own store: its marks are ours */
		p = hammer_patch(1);
		state_store_update(hammer_self_store, p);
		if (state_store_flush(hammer_self_store, &e) != 0 ||
		    state_store_transition(hammer_self_store, "failed",
		    "stop") != 0 || state_store_flush(hammer_self_store, &e) != 0)
			fprintf(stderr, "state-hammer: %s\n", e);
		json_decref(p);
		free(e);
		break;
	case 3:
		hammer_fe_status("paused", 0);
		break;
	default:
		event_base_loopbreak(arg);
		return;
	}
	event_base_once(arg, -1, EV_TIMEOUT, hammer_self_step, arg, &tv);
}

/* selfwatch [poll] */
static int
hammer_selfwatch(int argc, char **argv)
{
	struct event_base	*base;
	struct state_watch	*w;
	struct timeval		 tv = { 0, 40000 };
	DIR			*d;
	struct dirent		*de;
	char			*e = NULL, *pre;
	int			 nq = 0;

	hammer_seen = xstrdup("");
	base = event_base_new();
	hammer_self_store = state_store_new(NULL, WS, hammer_dirfd, hammer_id);
	if ((w = state_watch_new(base, hammer_self_store, argc > 0 &&
	    strcmp(argv[0], "poll") == 0 ? STATE_WATCH_POLL :
	    STATE_WATCH_INOTIFY, hammer_self_cb, NULL, &e)) == NULL) {
		fprintf(stderr, "state-hammer: %s\n", e);
		free(e);
		state_store_free(hammer_self_store);
		event_base_free(base);
		free(hammer_seen);
		return 1;
	}
	event_base_once(base, -1, EV_TIMEOUT, hammer_self_step, base, &tv);
	event_base_dispatch(base);
	state_watch_free(w);
	state_store_free(hammer_self_store);
	event_base_free(base);
	xasprintf(&pre, "%s.json.corrupt-", hammer_id);
	if ((d = opendir(hammer_dir)) != NULL) {
		while ((de = readdir(d)) != NULL)
			nq += strncmp(de->d_name, pre, strlen(pre)) == 0;
		closedir(d);
	}
	free(pre);
	hammer_say("seen %s\nquarantined %d\n", hammer_seen, nq);
	free(hammer_seen);
	return 0;
}

/* get: the state as a test wants to see it. */
static int
hammer_get(void)
{
	json_t		*st = NULL;
	const json_t	*notes;
	char		*e = NULL;
	int		 rc;

	rc = state_load_at(hammer_dirfd, hammer_id, ".json",
	    STATE_LOAD_NOQUARANTINE, &st, NULL, &e);
	if (rc != STATE_OK) {
		hammer_say("error %s\n", e);
		free(e);
		return 1;
	}
	notes = json_object_get(st, "notes");
	hammer_say("hammer=%lld notes=%lld status=%s errors=%d\n",
	    (long long)json_integer_value(json_object_get(json_object_get(st,
	    "skill_state"), "hammer")),
	    (long long)(json_is_integer(notes) ? json_integer_value(notes) : -1),
	    json_string_value(json_object_get(st, "status")),
	    state_validate(WS, st, NULL));
	json_decref(st);
	return 0;
}

/* transition STATUS [REASON] */
static int
hammer_transition(int argc, char **argv)
{
	json_t	*m = NULL;
	char	*e = NULL;
	int	 rc;

	if (argc < 1)
		return 2;
	rc = state_commit(WS, hammer_dirfd, hammer_id, NULL, argv[0], argc > 1 ?
	    argv[1] : NULL, &m, NULL, &e);
	if (rc != 0) {
		fprintf(stderr, "state-hammer: %s\n", e);
		free(e);
		return 1;
	}
	hammer_say("status %s\n", json_string_value(json_object_get(m,
	    "status")));
	json_decref(m);
	return 0;
}

/* One command on one loop's state file. */
int
main(int argc, char **argv)
{
	const char	*cmd;
	char		*e = NULL;
	int		 rc;

	log_init(argv[0], 0);
	if (argc < 4) {
		fprintf(stderr, "usage: state-hammer DIR ID COMMAND [ARGS]\n");
		return 2;
	}
	hammer_dir = argv[1];
	hammer_id = argv[2];
	cmd = argv[3];
	if ((hammer_dirfd = state_dir_open(argv[1], 1, &e)) < 0) {
		fprintf(stderr, "state-hammer: %s\n", e);
		free(e);
		return 1;
	}
	if (strcmp(cmd, "flip") != 0 && strcmp(cmd, "watch") != 0 &&
	    strcmp(cmd, "selfwatch") != 0)
		state_clean_temps(hammer_dirfd, hammer_id);
	argc -= 4;
	argv += 4;
	if (strcmp(cmd, "create") == 0)
		rc = hammer_create(argc, argv);
	else if (strcmp(cmd, "commit") == 0)
		rc = hammer_commit(argc, argv);
	else if (strcmp(cmd, "burst") == 0)
		rc = hammer_burst(argc, argv);
	else if (strcmp(cmd, "bench") == 0)
		rc = hammer_bench(argc, argv);
	else if (strcmp(cmd, "watch") == 0)
		rc = hammer_watch(argc, argv);
	else if (strcmp(cmd, "flip") == 0)
		rc = hammer_flip(hammer_dir, hammer_id, argc, argv);
	else if (strcmp(cmd, "selfwatch") == 0)
		rc = hammer_selfwatch(argc, argv);
	else if (strcmp(cmd, "get") == 0)
		rc = hammer_get();
	else if (strcmp(cmd, "transition") == 0)
		rc = hammer_transition(argc, argv);
	else
		rc = 2;
	if (rc == 2)
		fprintf(stderr, "state-hammer: bad command or arguments\n");
	close(hammer_dirfd);
	return rc;
}
