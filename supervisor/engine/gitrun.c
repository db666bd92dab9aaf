/*
 * gitrun.c: `ccw-worker --git VERB` run asynchronously for the engine and
 * the workflows (the merge queue, batch worktrees): fork and exec in a
 * process group of its own, the request written to its stdin and the
 * reply read from its stdout as the base turns, stderr's lines logged, a
 * deadline (SIGTERM, then SIGKILL of the group), its exit through the
 * process's children registry.  A cancel kills it and tells nobody.
 */
#include <config.h>

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent.h"
#include "children.h"
#include "gitrun.h"
#include "log.h"
#include "sigfd.h"
#include "xmalloc.h"

#define GITRUN_TAIL	2048	/* stderr kept for the error message */

struct gitrun {
	struct event_base	*base;
	struct children		*children;
	pid_t			 pid;
	int			 in, out, err;		/* our ends; -1 closed */
	struct event		*in_ev, *out_ev, *err_ev;
	struct event		*deadline, *done;
	char			*req;			/* the request's text */
	size_t			 reqlen, reqoff;
	char			*reply;			/* stdout so far */
	size_t			 len;
	int			 overflow;		/* past GITRUN_REPLY_MAX */
	char			 line[512];		/* stderr's line so far */
	size_t			 linelen;
	char			 tail[GITRUN_TAIL];	/* stderr's last bytes */
	size_t			 taillen;
	char			*tag;			/* the log's prefix */
	int			 exited, status, killed, timed_out;
	uint64_t		 deadline_ms;
	gitrun_cb		 cb;
	void			*arg;
};

/* An event's descriptor closed and the event gone, once. */
static void
gitrun_close(struct event **ev, int *fd)
{
	if (*ev != NULL)
		event_free(*ev);
	*ev = NULL;
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Everything but the child (reaped by the registry), freed. */
static void
gitrun_free(struct gitrun *g)
{
	gitrun_close(&g->in_ev, &g->in);
	gitrun_close(&g->out_ev, &g->out);
	gitrun_close(&g->err_ev, &g->err);
	if (g->deadline != NULL)
		event_free(g->deadline);
	if (g->done != NULL)
		event_free(g->done);
	free(g->req);
	free(g->reply);
	free(g->tag);
	free(g);
}

/* Kill the helper's group (and any check command it started). */
void
gitrun_cancel(struct gitrun *g)
{
	if (g == NULL)
		return;
	if (!g->exited && g->pid > 0) {
		(void)kill(-g->pid, SIGKILL);
		children_forget(g->children, g->pid);
	}
	gitrun_free(g);
}

/* A stderr line into the log; its bytes into the tail. */
static void
gitrun_stderr(struct gitrun *g, const char *buf, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (g->taillen == sizeof g->tail) {
			memmove(g->tail, g->tail + 1, sizeof g->tail - 1);
			g->taillen--;
		}
		g->tail[g->taillen++] = buf[i];
		if (buf[i] != '\n' && g->linelen < sizeof g->line - 1) {
			g->line[g->linelen++] = buf[i];
			continue;
		}
		if (buf[i] != '\n')
			continue;	/* a long line: its start logged */
		g->line[g->linelen] = '\0';
		if (g->linelen > 0)
			log_info("%s: %s", g->tag, g->line);
		g->linelen = 0;
	}
}

/* Read what a pipe holds now: 0 open, 1 at its end (or an error). */
static int
gitrun_drain(struct gitrun *g, int fd, int is_out)
{
	char	buf[4096];
	ssize_t	n;

	for (;;) {
		n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : 1;
		if (n == 0)
			return 1;
		if (!is_out) {
			gitrun_stderr(g, buf, (size_t)n);
			continue;
		}
		if (g->len + (size_t)n > GITRUN_REPLY_MAX) {
			g->overflow = 1;
			continue;
		}
		g->reply = xreallocarray(g->reply, g->len + (size_t)n + 1, 1);
		memcpy(g->reply + g->len, buf, (size_t)n);
		g->len += (size_t)n;
		g->reply[g->len] = '\0';
	}
}

/* The end: both pipes read to their end and the child reaped. */
static void
gitrun_maybe_done(struct gitrun *g)
{
	if (g->exited && g->out < 0 && g->err < 0)
		event_active(g->done, EV_TIMEOUT, 0);
}

/* stdout or stderr readable. */
static void
gitrun_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct gitrun	*g = arg;
	int		 is_out = fd == g->out;

	(void)ev;
	if (gitrun_drain(g, fd, is_out) == 0)
		return;
	if (is_out)
		gitrun_close(&g->out_ev, &g->out);
	else
		gitrun_close(&g->err_ev, &g->err);
	gitrun_maybe_done(g);
}

/* stdin writable: more of the request, then its end. */
static void
gitrun_write_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct gitrun	*g = arg;
	ssize_t		 n;

	(void)ev;
	n = send(fd, g->req + g->reqoff, g->reqlen - g->reqoff, MSG_NOSIGNAL);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0)
		g->reqoff += (size_t)n;
	if (n < 0 || g->reqoff == g->reqlen)
		gitrun_close(&g->in_ev, &g->in);
}

/*
 * The child's exit.  A grandchild (a check command's) may still hold the
 * pipes: what is there now is read, and the pipes closed.
 */
static void
gitrun_exited(pid_t pid, int status, void *arg)
{
	struct gitrun	*g = arg;

	(void)pid;
	g->exited = 1;
	g->status = status;
	/*
	 * No kill of its group now: reaped, its pid may be another's group
	 * already.  What it started dies with it (the worker's own
	 * PR_SET_PDEATHSIG on its git and check commands).
	 */
	if (g->out >= 0)
		(void)gitrun_drain(g, g->out, 1);
	if (g->err >= 0)
		(void)gitrun_drain(g, g->err, 0);
	gitrun_close(&g->in_ev, &g->in);
	gitrun_close(&g->out_ev, &g->out);
	gitrun_close(&g->err_ev, &g->err);
	gitrun_maybe_done(g);
}

/* The deadline: SIGTERM to the group, then SIGKILL after a while. */
static void
gitrun_deadline_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct gitrun	*g = arg;
	struct timeval	 tv = { GITRUN_KILL_MS / 1000,
			    (GITRUN_KILL_MS % 1000) * 1000 };

	(void)fd;
	(void)ev;
	if (g->exited)
		return;
	g->timed_out = 1;
	(void)kill(-g->pid, g->killed ? SIGKILL : SIGTERM);
	if (!g->killed++)
		evtimer_add(g->deadline, &tv);
}

/* What went wrong, in words, when rc != 0. */
static char *
gitrun_why(const struct gitrun *g, const json_t *reply, int rc)
{
	const char	*e = json_string_value(json_object_get(reply, "error"));
	char		*m, tail[GITRUN_TAIL + 1], *nl;

	if (g->timed_out)
		xasprintf(&m, "%s: timed out after %llu ms", g->tag,
		    (unsigned long long)g->deadline_ms);
	else if (e != NULL)
		m = xstrdup(e);
	else if (g->taillen > 0) {
		memcpy(tail, g->tail, g->taillen);
		tail[g->taillen] = '\0';
		while ((nl = strrchr(tail, '\n')) != NULL && nl[1] == '\0')
			*nl = '\0';
		xasprintf(&m, "%s: %s", g->tag, (nl = strrchr(tail, '\n')) !=
		    NULL ? nl + 1 : tail);
	} else if (WIFSIGNALED(g->status))
		xasprintf(&m, "%s: killed by signal %d", g->tag,
		    WTERMSIG(g->status));
	else
		xasprintf(&m, "%s: exit %d%s", g->tag, rc, g->overflow ?
		    " (reply over 1 MiB)" : "");
	return m;
}

/* Tell the caller (on its own event, never inside the reaper), then free. */
static void
gitrun_done_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct gitrun	*g = arg;
	json_t		*reply = NULL;
	char		*why = NULL;
	int		 rc;

	(void)fd;
	(void)ev;
	rc = WIFEXITED(g->status) && !g->timed_out ?
	    WEXITSTATUS(g->status) : -1;
	if (g->reply != NULL && !g->overflow)
		reply = json_loads(g->reply, 0, NULL);
	if (rc == 0 && !json_is_object(reply))
		rc = -1;	/* ran, but said nothing we can read */
	if (rc != 0)
		why = gitrun_why(g, reply, rc);
	g->cb(rc, json_is_object(reply) ? reply : NULL, why, g->arg);
	json_decref(reply);
	free(why);
	gitrun_free(g);
}

/* In the child: the pipes on 0, 1, 2, a group of its own, then exec. */
static void
gitrun_child(int in, int out, int err, pid_t parent, const char *path,
    const char *verb)
{
	char	*argv[] = { (char *)"ccw-worker", (char *)"--git",
		    (char *)verb, NULL };

	sigfd_child_reset();
	(void)setpgid(0, 0);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(126);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(127);
	sigfd_close_from(3, -1);
	execv(path, argv);
	dprintf(2, "cannot execute %s: %s\n", path, strerror(errno));
	_exit(127);
}

/* Three pipes (stdin a socket pair), ours non-blocking, close-on-exec. */
static int
gitrun_pipes(int p[3][2])
{
	int	i;

	for (i = 0; i < 3; i++)
		p[i][0] = p[i][1] = -1;
	/* stdin a socket: send(MSG_NOSIGNAL) to a helper gone is no SIGPIPE */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p[0]) != 0)
		return -1;
	for (i = 1; i < 3; i++)
		if (pipe2(p[i], O_CLOEXEC) != 0)
			return -1;
	for (i = 0; i < 3; i++)
		(void)fcntl(p[i][i == 0 ? 1 : 0], F_SETFL, O_NONBLOCK);
	return 0;
}

/* Close what pipes were made, both ends, or only the child's. */
static void
gitrun_pipes_close(int p[3][2], int ours)
{
	int	i;

	for (i = 0; i < 3; i++) {
		if (p[i][i == 0 ? 0 : 1] >= 0)
			close(p[i][i == 0 ? 0 : 1]);
		if (ours && p[i][i == 0 ? 1 : 0] >= 0)
			close(p[i][i == 0 ? 1 : 0]);
	}
}

/* The events of a started run: pipes, deadline, the end. */
static void
gitrun_arm(struct gitrun *g)
{
	struct timeval	tv = { (time_t)(g->deadline_ms / 1000),
			    (suseconds_t)(g->deadline_ms % 1000) * 1000 };

	g->in_ev = event_new(g->base, g->in, EV_WRITE | EV_PERSIST,
	    gitrun_write_cb, g);
	g->out_ev = event_new(g->base, g->out, EV_READ | EV_PERSIST,
	    gitrun_read_cb, g);
	g->err_ev = event_new(g->base, g->err, EV_READ | EV_PERSIST,
	    gitrun_read_cb, g);
	g->deadline = evtimer_new(g->base, gitrun_deadline_cb, g);
	g->done = event_new(g->base, -1, 0, gitrun_done_cb, g);
	event_add(g->in_ev, NULL);
	event_add(g->out_ev, NULL);
	event_add(g->err_ev, NULL);
	if (g->deadline_ms > 0)
		evtimer_add(g->deadline, &tv);
}

/*
 * Start `ccw-worker --git VERB` with REQUEST on stdin, the worker found
 * as an agent's is (spawn_worker_path); cb hears its end on the base.
 * deadline_ms 0: none.  tag prefixes its log lines (e.g. "loop L: git
 * merge").  NULL and *err when it cannot start.
 */
struct gitrun *
gitrun_start(struct event_base *base, struct children *ch, const char *verb,
    const json_t *request, uint64_t deadline_ms, const char *tag,
    gitrun_cb cb, void *arg, char **err)
{
	struct gitrun	*g;
	int		 p[3][2];
	char		*path;
	pid_t		 parent = getpid(), pid;

	if (gitrun_pipes(p) != 0) {
		xasprintf(err, "%s: pipe: %s", tag, strerror(errno));
		gitrun_pipes_close(p, 1);
		return NULL;
	}
	path = spawn_worker_path(NULL);
	if ((pid = fork()) == 0)
		gitrun_child(p[0][0], p[1][1], p[2][1], parent, path, verb);
	free(path);
	gitrun_pipes_close(p, pid < 0);
	if (pid < 0) {
		xasprintf(err, "%s: fork: %s", tag, strerror(errno));
		return NULL;
	}
	(void)setpgid(pid, pid);	/* before any kill of the group */
	g = xcalloc(1, sizeof *g);
	g->base = base;
	g->children = ch;
	g->pid = pid;
	g->in = p[0][1];
	g->out = p[1][0];
	g->err = p[2][0];
	g->req = json_dumps(request, JSON_COMPACT);
	g->reqlen = g->req != NULL ? strlen(g->req) : 0;
	g->tag = xstrdup(tag);
	g->deadline_ms = deadline_ms;
	g->cb = cb;
	g->arg = arg;
	children_watch(ch, pid, gitrun_exited, g);
	gitrun_arm(g);
	return g;
}
