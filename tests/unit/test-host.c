/*
 * test-host.c: the engine's host (host.h): two loops opened with
 * host_loop_open on one base complete by callback with valid state
 * files, their events numbered in one strictly growing sequence; a second
 * open of a running loop is refused; a completed loop opened again is
 * refused with EXIT_OK (never taken for a started one: its end would
 * never come) by the observer's opened and by the blocking open, its
 * lock let go; host_free with a loop running leaves no child process.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "bus.h"
#include "ccw-loop.h"
#include "hostfix.h"
#include "log.h"
#include "state.h"
#include "sup.h"
#include "tap.h"
#include "xmalloc.h"

#define MAX_KIDS	64

/* What the bus carried for the two loops. */
struct seen {
	uint64_t	 last;
	int		 increasing;
	int		 a, b;		/* events of each loop */
	int		 other;		/* events of no loop of ours */
};

/* Every event of the host: numbers only grow, each names its loop. */
static void
seen_cb(void *arg, uint64_t seq, const char *name, const json_t *f)
{
	struct seen	*s = arg;
	const char	*id = json_string_value(json_object_get(f, "loop_id"));

	(void)name;
	if (seq <= s->last)
		s->increasing = 0;
	s->last = seq;
	if (id != NULL && strcmp(id, "two-a") == 0)
		s->a++;
	else if (id != NULL && strcmp(id, "two-b") == 0)
		s->b++;
	else
		s->other++;
}

/* The loop's file: completed and valid. */
static int
completed(int dirfd, const char *id)
{
	json_t		*st = NULL;
	char		*err = NULL;
	const char	*status;
	int		 good;

	if (state_load(dirfd, id, &st, &err) != STATE_OK) {
		tap_diag("%s: %s", id, err);
		free(err);
		return 0;
	}
	status = json_string_value(json_object_get(st, "status"));
	good = status != NULL && strcmp(status, "completed") == 0 &&
	    state_validate(&ccw_loop_state, st, NULL) == 0;
	if (!good)
		tap_diag("%s: status %s", id, status != NULL ? status : "?");
	json_decref(st);
	return good;
}

/* The processes whose parent we are (workers, and orphans we adopted). */
static int
kids(pid_t *out, int max)
{
	DIR		*d = opendir("/proc");
	struct dirent	*de;
	char		 path[300], buf[512], *p;
	FILE		*fp;
	long		 ppid;
	int		 n = 0;

	while (d != NULL && (de = readdir(d)) != NULL && n < max) {
		if (atoi(de->d_name) <= 0)
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		if ((fp = fopen(path, "r")) == NULL)
			continue;
		if (fgets(buf, sizeof buf, fp) != NULL &&
		    (p = strrchr(buf, ')')) != NULL &&
		    sscanf(p + 1, " %*c %ld", &ppid) == 1 &&
		    ppid == (long)getpid())
			out[n++] = atoi(de->d_name);
		fclose(fp);
	}
	if (d != NULL)
		closedir(d);
	return n;
}

/* A completed loop opened again: what the observer's opened heard. */
struct again {
	struct event_base	*base;
	int			 opened, done, code;
	char			*err;
};

static void
again_opened(void *arg, struct host_loop *hl, int code, const char *err)
{
	struct again	*g = arg;

	(void)hl;
	g->opened++;
	g->code = code;
	free(g->err);
	g->err = err != NULL ? xstrdup(err) : NULL;
	event_base_loopbreak(g->base);	/* told: started or refused */
}

/* Its done: never, for a loop that was refused. */
static void
again_done(void *arg, struct host_loop *hl, int code)
{
	struct again	*g = arg;

	(void)hl;
	(void)code;
	g->done++;
	event_base_loopbreak(g->base);
}

/* The third loop: the base stops once its first worker runs. */
static void
left_event(struct hostfix_loop *x, const char *name, const json_t *f)
{
	(void)f;
	if (strcmp(name, "worker_started") == 0)
		event_base_loopbreak(x->h->base);
}

int
main(void)
{
	struct hostfix		 h;
	struct hostfix_loop	 a, b, left;
	struct loop_spec	 spec;
	struct host_loop	*hl;
	struct seen		 s;
	struct again		 g;
	struct host_observer	 obs;
	pid_t			 pids[MAX_KIDS];
	char			*err = NULL;
	int			 i, n, alive;

	if (hostfix_init(&h, "host", 30, 0) != 0)
		return 0;
	memset(&s, 0, sizeof s);
	s.increasing = 1;
	bus_observe(h.bus, seen_cb, &s);
	h.n = 2;
	tap_ok(hostfix_open(&h, &a, "two-a", LOOP_AUTO, NULL) == 0 &&
	    hostfix_open(&h, &b, "two-b", LOOP_PARALLEL, NULL) == 0,
	    "two loops opened on one host");
	tap_ok(host_nloops(h.host) == 2, "the host runs 2 loops (%zu)",
	    host_nloops(h.host));

	/* the same loop again, while it runs: refused with why */
	memset(&spec, 0, sizeof spec);
	spec.id = "two-a";
	spec.task = "again";
	hl = host_loop_open(h.host, &spec, NULL, NULL, &err);
	tap_ok(hl == NULL && err != NULL && strstr(err, "already running") !=
	    NULL,
	    "a second open of a running loop is refused: %s",
	    err != NULL ? err : "(accepted)");
	free(err);
	err = NULL;

	event_base_dispatch(h.base);
	tap_ok(a.code == EXIT_OK && b.code == EXIT_OK, "both loops reported "
	    "their end by callback, exit 0 (%d, %d)", a.code, b.code);
	tap_ok(host_nloops(h.host) == 0 && host_loop_find(h.host,
	    "two-a") == NULL, "the host let both loops go");
	tap_ok(completed(h.dirfd, "two-a") && completed(h.dirfd, "two-b"),
	    "both state files completed and valid");
	tap_ok(s.increasing && s.a > 0 && s.b > 0 && s.other == 0 &&
	    (uint64_t)(s.a + s.b) == bus_last(h.bus),
	    "one bus: %d + %d events, numbers strictly increasing to %llu",
	    s.a, s.b, (unsigned long long)bus_last(h.bus));

	/*
	 * A completed loop opened again (batch --resume after a kill that
	 * came between the loop's last commit and the batch's): refused
	 * with EXIT_OK and why, not reported started with no end to come.
	 */
	memset(&g, 0, sizeof g);
	g.base = h.base;
	g.code = -1;
	memset(&obs, 0, sizeof obs);
	obs.opened = again_opened;
	obs.done = again_done;
	obs.arg = &g;
	memset(&spec, 0, sizeof spec);
	spec.id = "two-a";
	hl = host_loop_open(h.host, &spec, NULL, &obs, &err);
	tap_ok(hl != NULL, "a completed loop: its open queued%s%s",
	    err != NULL ? ": " : "", err != NULL ? err : "");
	free(err);
	err = NULL;
	if (hl != NULL)
		event_base_dispatch(h.base);
	tap_ok(g.opened == 1 && g.code == EXIT_OK && g.err != NULL &&
	    strstr(g.err, "already completed") != NULL && g.done == 0,
	    "a completed loop: opened says refused, exit %d: %s (done %d)",
	    g.code, g.err != NULL ? g.err : "(no message: taken as started)",
	    g.done);
	/* the handle goes on the turn after opened */
	event_base_loop(h.base, EVLOOP_NONBLOCK);
	tap_ok(host_nloops(h.host) == 0 && host_loop_find(h.host, "two-a") ==
	    NULL, "a completed loop: the host let it go (%zu loops)",
	    host_nloops(h.host));
	free(g.err);
	hl = host_loop_open(h.host, &spec, NULL, NULL, &err);
	tap_ok(hl == NULL && err != NULL && strstr(err, "already completed") !=
	    NULL, "a completed loop, blocking open: refused, its lock let go:"
	    " %s", err != NULL ? err : "(a handle: taken as started)");
	free(err);
	err = NULL;
	tap_ok(host_nloops(h.host) == 0, "a completed loop, blocking open: "
	    "the host holds no loop (%zu)", host_nloops(h.host));

	/* a loop still running when the host is freed */
	h.n = 100;
	tap_ok(hostfix_open(&h, &left, "left", LOOP_AUTO, left_event) == 0,
	    "a third loop opened");
	event_base_dispatch(h.base);
	n = kids(pids, MAX_KIDS);
	tap_ok(n > 0, "its worker runs (%d children)", n);
	host_free(h.host);
	h.host = NULL;
	for (i = alive = 0; i < n; i++)
		if (kill(pids[i], 0) == 0 || errno != ESRCH)
			alive++;
	tap_ok(alive == 0 && kids(pids, MAX_KIDS) == 0, "host_free left no "
	    "child process (%d of %d alive)", alive, n);
	tap_ok(left.code == -1, "host_free reports no end (done not called)");

	hostfix_free(&h);
	return tap_done();
}
