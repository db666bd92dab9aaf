/*
 * gitexec.c: runs git (by argv, never a shell) and the configured setup
 * and check commands (`sh -c`, by design), each in its own process group
 * under a deadline at which the whole group is killed; collects the
 * output.  Used by the --git verbs and by a worker's own worktree.
 */
#include <config.h>

#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "gitwt.h"
#include "sigfd.h"
#include "xmalloc.h"

#define GITX_OUT_MAX	(16u << 20)	/* more: the oldest half is dropped */
#define GITX_ARGS	64

/* Append n bytes to a growing buffer; past the cap keep the newest half. */
static void
gitexec_append(char **buf, size_t *len, const char *p, size_t n)
{
	if (*len + n > GITX_OUT_MAX) {
		size_t keep = GITX_OUT_MAX / 2;

		if (n >= keep) {
			p += n - keep;
			n = keep;
			*len = 0;
		} else if (*len > keep - n) {
			memmove(*buf, *buf + *len - (keep - n), keep - n);
			*len = keep - n;
		}
	}
	*buf = xreallocarray(*buf, 1, *len + n + 1);
	memcpy(*buf + *len, p, n);
	*len += n;
	(*buf)[*len] = '\0';
}

/*
 * In the child: a group of its own (killed whole at the deadline), dead
 * with us (a kill -9 of the helper leaves no git running), stdin empty,
 * only 0, 1, 2 open.  Never returns.
 */
static void
gitexec_child(const char *dir, const char *const *av, int out, int err)
{
	int	devnull;

	setpgid(0, 0);
	sigfd_child_reset();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	devnull = open("/dev/null", O_RDONLY);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out, 1) < 0 ||
	    dup2(err, 2) < 0)
		_exit(127);
	sigfd_close_from(3, -1);
	if (dir != NULL && chdir(dir) != 0)
		_exit(127);
	/* -C names the repository: nothing inherited may name another. */
	unsetenv("GIT_DIR");
	unsetenv("GIT_WORK_TREE");
	unsetenv("GIT_INDEX_FILE");
	setenv("GIT_TERMINAL_PROMPT", "0", 1);
	/* git's messages in one language; a user's check keeps its own. */
	if (strcmp(av[0], "git") == 0)
		setenv("LC_ALL", "C", 1);
	if (dir != NULL)
		setenv("PWD", dir, 1);
	execvp(av[0], (char *const *)av);
	_exit(127);
}

/* Has pid exited?  It is left unreaped, so its group id stays ours. */
static int
gitexec_exited(pid_t pid)
{
	siginfo_t	si;

	memset(&si, 0, sizeof si);
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) ==
	    0 && si.si_pid == pid;
}

/* One poll round: whatever the pipes hold goes to o. */
static void
gitexec_read(int fds[2], int tmo, struct gitout *o)
{
	struct pollfd	pf[2];
	char		buf[65536];
	ssize_t		r;
	int		i, n = 0;

	for (i = 0; i < 2; i++)
		if (fds[i] >= 0) {
			pf[n].fd = fds[i];
			pf[n++].events = POLLIN;
		}
	if (poll(pf, (nfds_t)n, tmo) <= 0)
		return;
	for (i = 0; i < n; i++) {
		if (pf[i].revents == 0)
			continue;
		r = read(pf[i].fd, buf, sizeof buf);
		if (r < 0)
			continue;
		if (r > 0 && pf[i].fd == fds[0])
			gitexec_append(&o->out, &o->len, buf, (size_t)r);
		else if (r > 0)
			gitexec_append(&o->err, &o->err_len, buf, (size_t)r);
		else {
			close(pf[i].fd);
			fds[pf[i].fd == fds[0] ? 0 : 1] = -1;
		}
	}
}

/*
 * Collect the output until the command exited and the pipes are done
 * (its descendants may hold them a little longer), or the deadline, or
 * our own parent's death (the supervisor is gone: a worker blocked in a
 * 10-minute setup must not outlive it): then the whole group is killed.
 * The command is reaped in *st.
 */
static void
gitexec_collect(pid_t pid, int fds[2], uint64_t deadline, struct gitout *o,
    int *st)
{
	uint64_t	now;
	pid_t		parent = getppid();
	int		exited = 0, nap = 1, tmo;

	for (;;) {
		if (exited && fds[0] < 0 && fds[1] < 0)
			break;
		now = clock_mono_ms();
		if (now >= deadline || getppid() != parent) {
			o->timed_out = !exited;
			break;
		}
		/* Pipes closed: it is about to exit, look again soon. */
		tmo = 100;
		if (fds[0] < 0 && fds[1] < 0) {
			tmo = nap;
			nap = nap < 50 ? nap * 2 : 50;
		}
		gitexec_read(fds, deadline - now < (uint64_t)tmo ?
		    (int)(deadline - now) : tmo, o);
		if (!exited && gitexec_exited(pid)) {
			exited = 1;
			kill(-pid, SIGKILL);
			deadline = clock_mono_ms() + 200;
		}
	}
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	kill(-pid, SIGKILL);
	while (waitpid(pid, st, 0) < 0 && errno == EINTR)
		;
}

/*
 * Run av in dir, at most deadline_ms; o gets stdout and stderr apart
 * (with the same pipe for both when merged).  The exit code, 128+N for
 * a signal, -1 when it could not be started.
 */
static int
gitexec_spawn(const char *dir, const char *const *av, uint64_t deadline_ms,
    int merged, struct gitout *o)
{
	int		po[2], pe[2], fds[2], st = 0;
	uint64_t	t0 = clock_mono_ms();
	pid_t		pid;

	memset(o, 0, sizeof *o);
	o->status = -1;
	if (pipe2(po, O_CLOEXEC) != 0)
		return -1;
	if (pipe2(pe, O_CLOEXEC) != 0) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	if ((pid = fork()) == 0)
		gitexec_child(dir, av, po[1], merged ? po[1] : pe[1]);
	close(po[1]);
	close(pe[1]);
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		return -1;
	}
	setpgid(pid, pid);
	fds[0] = po[0];
	fds[1] = pe[0];
	gitexec_collect(pid, fds, t0 + deadline_ms, o, &st);
	o->ms = clock_mono_ms() - t0;
	if (o->out == NULL)
		o->out = xstrdup("");
	if (o->err == NULL)
		o->err = xstrdup("");
	if (WIFEXITED(st))
		o->status = WEXITSTATUS(st);
	else if (WIFSIGNALED(st))
		o->status = 128 + WTERMSIG(st);
	return o->status;
}

/* A command by argv in dir (NULL: here), its group killed at deadline. */
int
gitexec_argv(const char *dir, const char *const *av, uint64_t deadline_ms,
    struct gitout *o)
{
	return gitexec_spawn(dir, av, deadline_ms, 0, o);
}

/* av = git -C dir and the NULL-terminated arguments of ap. */
static void
gitexec_vargs(const char *dir, va_list ap, const char **av)
{
	const char	*a;
	size_t		 n = 0;

	av[n++] = "git";
	av[n++] = "-C";
	av[n++] = dir;
	while ((a = va_arg(ap, const char *)) != NULL && n < GITX_ARGS - 1)
		av[n++] = a;
	av[n] = NULL;
}

/*
 * git -C dir ARGS... (NULL-terminated), under GITX_DEADLINE_MS.  The
 * verbs' many short commands read best as one call each.
 */
int
gitexec_git(const char *dir, struct gitout *o, ...)
{
	const char	*av[GITX_ARGS];
	va_list		 ap;

	va_start(ap, o);
	gitexec_vargs(dir, ap, av);
	va_end(ap);
	return gitexec_spawn(NULL, av, GITX_DEADLINE_MS, 0, o);
}

/*
 * The first line of git -C dir ARGS' output (owned), or NULL when it
 * failed or said nothing: rev-parse, symbolic-ref and the like.
 */
char *
gitexec_line(const char *dir, ...)
{
	const char	*av[GITX_ARGS];
	struct gitout	 o;
	va_list		 ap;
	char		*line = NULL;

	va_start(ap, dir);
	gitexec_vargs(dir, ap, av);
	va_end(ap);
	if (gitexec_spawn(NULL, av, GITX_DEADLINE_MS, 0, &o) == 0) {
		o.out[strcspn(o.out, "\n")] = '\0';
		if (o.out[0] != '\0')
			line = xstrdup(o.out);
	}
	gitexec_clear(&o);
	return line;
}

/* A setup or check command: `sh -c cmd` in dir, output merged. */
int
gitexec_sh(const char *dir, const char *cmd, uint64_t deadline_ms,
    struct gitout *o)
{
	const char	*av[] = { "sh", "-c", cmd, NULL };

	return gitexec_spawn(dir, av, deadline_ms, 1, o);
}

/*
 * The last max bytes of the output (owned), from a line start if one,
 * without the trailing newline.
 */
char *
gitexec_tail(const struct gitout *o, size_t max)
{
	const char	*p = o->out;
	const char	*nl;
	char		*t, *e;

	if (o->len > max) {
		p = o->out + o->len - max;
		if ((nl = memchr(p, '\n', max / 2)) != NULL)
			p = nl + 1;
	}
	t = xstrdup(p);
	for (e = t + strlen(t); e > t && (e[-1] == '\n' || e[-1] == ' ');)
		*--e = '\0';
	return t;
}

/* Why a git command failed, in one line (owned): its fatal: line. */
char *
gitexec_why(const struct gitout *o)
{
	const char	*s = o->err != NULL ? o->err : "";
	const char	*p;

	if (o->timed_out)
		return xstrdup("git timed out");
	if ((p = strstr(s, "fatal: ")) == NULL &&
	    (p = strstr(s, "error: ")) == NULL)
		p = s;
	while (*p == '\n' || *p == ' ')
		p++;
	if (*p == '\0')
		return xstrdup(o->status < 0 ? "git could not be run" :
		    "git failed");
	return xstrndup(p, strcspn(p, "\n"));
}

/* Free what a run collected. */
void
gitexec_clear(struct gitout *o)
{
	free(o->out);
	free(o->err);
	memset(o, 0, sizeof *o);
}
