/*
 * tool.c: the agent tool as a process: exec in its own process group with
 * stdout on its spool file (spool.c), stderr on a pipe (errtail.c), stdin
 * from a pipe we feed without blocking and no other descriptor, signals
 * to the whole group, and the sweep that kills every descendant we
 * adopted as a child subreaper (stopped ones and those in a session of
 * their own included).
 */
#include <config.h>

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "reap.h"
#include "sigfd.h"
#include "worker.h"
#include "xmalloc.h"

/* Is path an executable regular file? */
static int
tool_executable(const char *path)
{
	struct stat	sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    access(path, X_OK) == 0;
}

/* execvp's search, done up front so "not found" is an error we can name. */
char *
tool_resolve(const char *name)
{
	const char	*path = getenv("PATH"), *p, *end;
	char		*cand;
	size_t		 len;

	if (strchr(name, '/') != NULL)
		return tool_executable(name) ? xstrdup(name) : NULL;
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; p = end + 1) {
		end = strchr(p, ':');
		len = end != NULL ? (size_t)(end - p) : strlen(p);
		xasprintf(&cand, "%.*s/%s", (int)len, len ? p : ".", name);
		if (tool_executable(cand))
			return cand;
		free(cand);
		if (end == NULL)
			return NULL;
	}
}

/* Write queued stdin bytes as the pipe accepts them. */
static void
tool_stdin_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct worker	*w = arg;
	int		 n;

	(void)ev;
	n = evbuffer_write(w->stdin_buf, fd);
	if (n < 0 && errno != EAGAIN && errno != EINTR) {
		/* The tool closed its stdin: drop what it will never read. */
		evbuffer_drain(w->stdin_buf, evbuffer_get_length(w->stdin_buf));
		tool_stdin_close(w);
		return;
	}
	if (evbuffer_get_length(w->stdin_buf) == 0) {
		event_del(w->stdin_ev);
		if (w->stdin_close_when_empty)
			tool_stdin_close(w);
	}
}

/* Queue bytes for the tool's stdin. */
void
tool_stdin_write(struct worker *w, const char *p, size_t n)
{
	if (w->stdin_fd < 0)
		return;
	evbuffer_add(w->stdin_buf, p, n);
	event_add(w->stdin_ev, NULL);
}

/* Close stdin now, or once the queue is written. */
void
tool_stdin_close(struct worker *w)
{
	if (w->stdin_fd < 0)
		return;
	if (evbuffer_get_length(w->stdin_buf) > 0) {
		w->stdin_close_when_empty = 1;
		return;
	}
	event_free(w->stdin_ev);
	w->stdin_ev = NULL;
	close(w->stdin_fd);
	w->stdin_fd = -1;
}

/*
 * A signal to the tool's whole process group.  A SIGCONT (after a
 * SIGTERM, or follow.c's own) ends a backlog's stop: follow.c may stop
 * the group again.
 */
void
tool_signal(struct worker *w, int sig)
{
	if (w->tool_pid > 0)
		kill(-w->tool_pid, sig);
	if (sig == SIGCONT)
		w->fol.stopped = 0;
}

/*
 * Test seam (tests/regress/leak-sweep.sh): $CCW_TEST_TOOL_FORK_DELAY_MS
 * widens the window between fork and PR_SET_PDEATHSIG, read in the
 * child only, so a test can kill the worker inside it.  Unset: nothing.
 */
static void
tool_test_delay(void)
{
	const char	*v = getenv("CCW_TEST_TOOL_FORK_DELAY_MS");
	long		 ms = v != NULL ? strtol(v, NULL, 10) : 0;
	struct timespec	 ts;

	if (ms <= 0 || ms > 60000)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * In the child: become the tool, with the adapter's env (build_env) on
 * top of the worker's environment.  Never returns.  The worker may die
 * before PR_SET_PDEATHSIG is in force (the signal is only sent for a
 * death after it): if our parent is no longer the worker that forked
 * us, we go at once, as spawn.c's child does.
 */
static void
tool_child(struct worker *w, pid_t parent, char **av, struct strv *env,
    int in_fd, int out_err, int err_fd)
{
	char		cwd[PATH_MAX];
	size_t		i;
	int		e;

	setpgid(0, 0);
	sigfd_child_reset();
	tool_test_delay();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(126);
	/* The exec-status pipe must survive the dup2s below. */
	if (err_fd <= 2 && (err_fd = fcntl(err_fd, F_DUPFD_CLOEXEC, 3)) < 0)
		_exit(127);
	if (dup2(in_fd, 0) < 0 || dup2(w->fol.fd, 1) < 0 ||
	    dup2(out_err, 2) < 0)
		goto fail;
	/*
	 * The tool sees 0, 1 and 2 only: never the channel (fd 3), where it
	 * could read or forge frames and hold the supervisor's socket open.
	 */
	sigfd_close_from(3, err_fd);
	if (w->assign.u.assign.cwd != NULL && chdir(w->assign.u.assign.cwd) != 0)
		goto fail;
	/* Tools (opencode) trust $PWD over getcwd(): it must follow chdir. */
	if (getcwd(cwd, sizeof cwd) != NULL)
		setenv("PWD", cwd, 1);
	unsetenv("OLDPWD");
	for (i = 0; i < env->n; i++)
		if (putenv(env->v[i]) != 0)
			goto fail;
	execv(w->path, av);
fail:
	e = errno;
	(void)!write(err_fd, &e, sizeof e);
	_exit(127);
}

/*
 * Start the tool with argv in w->argv.  stdin_text is written to its
 * stdin (the prompt, or a resumed turn's input); stdin stays open only
 * for tools that take live input.  *errfd: the read side of its stderr
 * pipe, for the caller to hand to errtail (tool.c stays below it).
 */
int
tool_start(struct worker *w, const char *stdin_text, int *errfd, char **err)
{
	struct strv	  env = { NULL, 0 };
	char		**av;
	int		  inp[2], ep[2], errp[2], e;
	pid_t		  pid, self = getpid();

	if (pipe2(inp, O_CLOEXEC) != 0)
		goto pipe_fail;
	if (pipe2(ep, O_CLOEXEC) != 0) {
		e = errno;
		close(inp[0]);
		close(inp[1]);
		errno = e;
		goto pipe_fail;
	}
	if (pipe2(errp, O_CLOEXEC) != 0) {
		e = errno;
		close(inp[0]);
		close(inp[1]);
		close(ep[0]);
		close(ep[1]);
		errno = e;
		goto pipe_fail;
	}
	/* execv wants a NULL-terminated array; strv is counted. */
	av = xcalloc(w->argv.n + 1, sizeof *av);
	memcpy(av, w->argv.v, w->argv.n * sizeof *av);
	if (w->ad->build_env != NULL)
		w->ad->build_env(&w->spec, &env);
	pid = fork();
	if (pid == 0) {
		close(inp[1]);
		close(errp[0]);
		tool_child(w, self, av, &env, inp[0], errp[1], ep[1]);
	}
	e = errno;
	free(av);
	strv_clear(&env);
	close(inp[0]);
	close(ep[1]);
	close(errp[1]);
	if (pid < 0) {
		close(inp[1]);
		close(ep[0]);
		close(errp[0]);
		xasprintf(err, "fork: %s", strerror(e));
		return -1;
	}
	setpgid(pid, pid);
	if ((e = reap_exec_status(ep[0], pid)) != 0) {
		close(inp[1]);
		close(errp[0]);
		xasprintf(err, "cannot execute %s: %s", w->path, strerror(e));
		return -1;
	}
	*errfd = errp[0];
	w->tool_pid = pid;
	w->fol.stopped = 0;
	w->turns++;
	w->tool_waited = 0;
	w->we_killed = 0;
	w->stdin_fd = inp[1];
	fcntl(w->stdin_fd, F_SETFL, O_NONBLOCK);
	if (w->stdin_buf == NULL)
		w->stdin_buf = evbuffer_new();
	w->stdin_close_when_empty = 0;
	w->stdin_ev = event_new(w->base, w->stdin_fd, EV_WRITE | EV_PERSIST,
	    tool_stdin_cb, w);
	if (stdin_text != NULL && w->ad->prompt_stdin) {
		tool_stdin_write(w, stdin_text, strlen(stdin_text));
		if (stdin_text[0] != '\0' &&
		    stdin_text[strlen(stdin_text) - 1] != '\n')
			tool_stdin_write(w, "\n", 1);
	}
	if (!w->ad->live_input)
		tool_stdin_close(w);
	return 0;
pipe_fail:
	xasprintf(err, "pipe: %s", strerror(errno));
	return -1;
}

/*
 * Kill the tool's group and every descendant that escaped it (setsid,
 * double fork): they were reparented to us.  Bounded rounds; the tool's
 * own exit status is kept if we reap it here.
 */
void
tool_sweep(struct worker *w)
{
	if (w->tool_pid > 0 && !w->tool_waited) {
		w->we_killed = 1;
		tool_signal(w, SIGKILL);
	}
	reap_sweep(w->tool_waited ? 0 : w->tool_pid, &w->tool_status,
	    &w->tool_waited);
}
