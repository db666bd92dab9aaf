/*
 * test-children.c: the process's one child registry (proto/children.c):
 * two agent tables on one event base both see their workers complete; a
 * reaped worker's channel is drained and ended at once;
 * children that exit at the same instant are each reported, 1000 rounds;
 * forgotten and adopted children are reaped without a word; a second
 * registry is refused.
 */
#include <config.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "agent.h"
#include "chan.h"
#include "children.h"
#include "tap.h"
#include "xmalloc.h"

#define ROUNDS		1000
#define ROUNDS_WRAPPED	50	/* under valgrind a fork costs ~50 ms */
#define DEADLINE_MS	30000

/* One watched child's fate. */
struct seen {
	pid_t	pid;
	int	status;
	int	calls;
};

/* The registry's report for one child. */
static void
test_child_cb(pid_t pid, int st, void *arg)
{
	struct seen	*s = arg;

	s->calls++;
	if (s->pid == pid)
		s->status = st;
	else
		s->status = -1;
}

/* A deadline for a dispatch that must end sooner. */
static void
test_deadline_cb(evutil_socket_t fd, short ev, void *arg)
{
	int	*expired = arg;

	(void)fd;
	(void)ev;
	*expired = 1;
}

/* Dispatch until *a and *b are both at least want, or the deadline. */
static int
test_run_until(struct event_base *base, const int *a, const int *b, int want)
{
	struct event	*dl;
	int		 expired = 0;

	dl = evtimer_new(base, test_deadline_cb, &expired);
	chan_arm_ms(dl, DEADLINE_MS);
	while (!expired && (*a < want || *b < want))
		event_base_loop(base, EVLOOP_ONCE);
	event_free(dl);
	return !expired;
}

/* A child that blocks on the pipe's read end, then exits with code. */
static pid_t
test_fork_waiter(int rfd, int wfd, int code)
{
	pid_t	pid;
	char	c;

	if ((pid = fork()) != 0)
		return pid;
	close(wfd);
	while (read(rfd, &c, 1) < 0 && errno == EINTR)
		;
	_exit(code);
}

/*
 * Two children exit at the same instant (one write end closed frees both)
 * under two owners; SIGCHLDs coalesce, every exit must still be told.
 */
static void
test_same_instant(struct children *ch, struct event_base *base)
{
	const char	*wrap = getenv("TESTS_WRAPPER");
	struct seen	 a, b;
	int		 p[2], r, lost = 0, wrong = 0, rounds = ROUNDS;

	if (wrap != NULL && *wrap != '\0')
		rounds = ROUNDS_WRAPPED;
	for (r = 0; r < rounds; r++) {
		if (pipe(p) != 0)
			break;
		memset(&a, 0, sizeof a);
		memset(&b, 0, sizeof b);
		a.pid = test_fork_waiter(p[0], p[1], r & 0x7f);
		b.pid = test_fork_waiter(p[0], p[1], 0x80 | (r & 0x7f));
		if (a.pid < 0 || b.pid < 0)
			break;
		close(p[0]);
		children_watch(ch, a.pid, test_child_cb, &a);
		children_watch(ch, b.pid, test_child_cb, &b);
		close(p[1]);
		if (!test_run_until(base, &a.calls, &b.calls, 1)) {
			lost++;
			children_forget(ch, a.pid);
			children_forget(ch, b.pid);
			break;
		}
		if (a.calls != 1 || b.calls != 1 ||
		    !WIFEXITED(a.status) || WEXITSTATUS(a.status) != (r & 0x7f) ||
		    !WIFEXITED(b.status) ||
		    WEXITSTATUS(b.status) != (0x80 | (r & 0x7f)))
			wrong++;
	}
	tap_is_int(r, rounds, "same instant: %d rounds run", rounds);
	tap_is_int(lost, 0, "same instant: no completion lost");
	tap_is_int(wrong, 0, "same instant: each owner told once, its own "
	    "status");
}

/* A pid nobody watches (forgotten, or an adopted orphan) is just reaped. */
static void
test_unwatched(struct children *ch, struct event_base *base)
{
	struct seen	a, b;
	char		path[64], *err = NULL;
	int		p[2], i, zombie = 0;

	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	if (pipe(p) != 0)
		return;
	a.pid = test_fork_waiter(p[0], p[1], 1);
	b.pid = test_fork_waiter(p[0], p[1], 2);
	close(p[0]);
	children_watch(ch, a.pid, test_child_cb, &a);
	children_watch(ch, b.pid, test_child_cb, &b);
	tap_is_int(children_watch(ch, a.pid, test_child_cb, &a), -1,
	    "a pid is watched once");
	children_forget(ch, a.pid);
	close(p[1]);
	i = 1;
	tap_ok(test_run_until(base, &i, &b.calls, 1), "the watched one is told");
	/* the forgotten one is reaped too, with no callback */
	for (i = 0; i < 200; i++) {
		snprintf(path, sizeof path, "/proc/%ld", (long)a.pid);
		if (access(path, F_OK) != 0)
			break;
		children_reap(ch);
		usleep(5000);
	}
	zombie = i == 200;
	tap_ok(!zombie && a.calls == 0, "a forgotten child is reaped untold");
	tap_ok(children_new(base, &err) == NULL && err != NULL,
	    "a second registry in the process is refused");
	free(err);
}

/* What a drained channel delivered. */
struct drained {
	int		msgs, ends;
	enum proto_err	err;
};

/* A message out of a drained channel. */
static void
test_drain_msg(struct chan *c, struct msg *m, void *arg)
{
	struct drained	*d = arg;

	(void)c;
	if (m->type == MSG_BYE)
		d->msgs++;
}

/* The drained channel's end. */
static void
test_drain_end(struct chan *c, enum proto_err e, const char *why, void *arg)
{
	struct drained	*d = arg;

	(void)why;
	d->ends++;
	d->err = e;
	chan_free(c);
}

/*
 * A reaped worker's channel (chan_drain_end): what it wrote is decoded
 * at once, before the event loop has read it, and the channel ends even
 * though the other end is still open (a descendant holding fd 3).
 */
static void
test_drain(struct event_base *base)
{
	struct evbuffer	*out = evbuffer_new();
	struct drained	 d;
	struct msg	 m;
	struct chan	*c;
	int		 sv[2], i;

	memset(&d, 0, sizeof d);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0)
		return;
	c = chan_new(base, sv[0], MSG_DIR_TO_SUPERVISOR, PROTO_MAX_BODY,
	    test_drain_msg, test_drain_end, &d);
	for (i = 0; i < 3; i++) {
		msg_init(&m, MSG_BYE);
		frame_write(out, &m, PROTO_MAX_BODY);
	}
	evbuffer_write(out, sv[1]);
	chan_drain_end(c);
	tap_is_int(d.msgs, 3, "drain: every frame written before the death");
	tap_ok(d.ends == 1 && d.err == PROTO_OK,
	    "drain: the channel ends cleanly with the peer's end still open");
	close(sv[1]);
	evbuffer_free(out);
}

/* One table's agent became DONE. */
static void
test_agent_done(struct agent *a, void *arg)
{
	int	*n = arg;

	(void)a;
	(*n)++;
}

/*
 * Two agent tables on one event base share the registry; one bash
 * worker each, both running `true`: both must complete.
 */
static void
test_two_tables(struct children *ch, struct event_base *base,
    const char *dir)
{
	struct sup	 s1, s2;
	struct agent_req req;
	char		*err = NULL, *w;
	int		 n1 = 0, n2 = 0, ok;

	xasprintf(&w, "%s/one.workers", dir);
	mkdir(w, 0700);
	free(w);
	xasprintf(&w, "%s/two.workers", dir);
	mkdir(w, 0700);
	free(w);
	if (sup_init(&s1, base, ch, dir, "one", &err) != 0 ||
	    sup_init(&s2, base, ch, dir, "two", &err) != 0) {
		tap_ok(0, "two tables: set up (%s)", err);
		free(err);
		return;
	}
	s1.hooks.done = s2.hooks.done = test_agent_done;
	s1.hooks_arg = &n1;
	s2.hooks_arg = &n2;
	memset(&req, 0, sizeof req);
	req.role = "develop";
	req.tool = "bash";
	req.command = "true";
	req.prompt = "go";
	req.cwd = dir;
	req.timeout_ms = 20000;
	agent_spawn(&s1, &req);
	agent_spawn(&s2, &req);
	ok = test_run_until(base, &n1, &n2, 1);
	tap_ok(ok, "two tables: both agents complete (%d, %d)", n1, n2);
	tap_is_str(agent_status_name(TAILQ_FIRST(&s1.agents)->status),
	    "completed", "two tables: the first one's status");
	tap_is_str(agent_status_name(TAILQ_FIRST(&s2.agents)->status),
	    "completed", "two tables: the second one's status");
	sup_free(&s1);
	sup_free(&s2);
}

int
main(void)
{
	struct event_base	*base;
	struct children		*ch;
	const char		*top = getenv("top_builddir");
	char			 dir[] = "/tmp/ccw-children.XXXXXX", *w, *cmd;
	char			*err = NULL;

	signal(SIGPIPE, SIG_IGN);
	xasprintf(&w, "%s/ccw-worker", top != NULL ? top : ".");
	setenv("CCW_WORKER", w, 0);
	free(w);
	if (mkdtemp(dir) == NULL || (base = chan_base_new()) == NULL)
		return 1;
	if ((ch = children_new(base, &err)) == NULL) {
		tap_ok(0, "children_new: %s", err);
		free(err);
		return tap_done();
	}
	test_drain(base);
	test_two_tables(ch, base, dir);
	test_same_instant(ch, base);
	test_unwatched(ch, base);
	children_free(ch);
	event_base_free(base);
	xasprintf(&cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		tap_diag("cannot remove %s", dir);
	free(cmd);
	return tap_done();
}
