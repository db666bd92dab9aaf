/*
 * spawn.c: fork and exec of one ccw-worker with its channel on fd 3, and
 * the last-resort sweep of every child at exit.  What runs between fork
 * and exec is kept to async-signal-safe calls.
 */
#include <config.h>

#include <sys/prctl.h>
#include <sys/socket.h>
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
#include <unistd.h>

#include "agent.h"
#include "log.h"
#include "reap.h"
#include "sigfd.h"
#include "xmalloc.h"

/*
 * Where the worker lives: $CCW_WORKER (tests), next to a supervisor run
 * from the build tree, else the installed libexec path.
 */
char *
spawn_worker_path(const char *argv0)
{
	const char	*env = getenv("CCW_WORKER");
	char		 self[PATH_MAX], *slash, *p;
	ssize_t		 n;

	if (env != NULL && *env != '\0')
		return xstrdup(env);
	(void)argv0;
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			*slash = '\0';
			xasprintf(&p, "%s/ccw-worker", self);
			if (access(p, X_OK) == 0)
				return p;
			free(p);
		}
	}
	return xstrdup(LIBEXECDIR "/ccw-worker");
}

/* In the child: everything between fork and exec.  Never returns. */
static void
spawn_child(int chfd, int errfd, pid_t parent, const char *path,
    char *const argv[])
{
	int	e, nullfd;

	sigfd_child_reset();
	setsid();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(126);
	/* Lift both descriptors above 4 so the dup2s cannot clobber them. */
	if (errfd <= 4)
		errfd = fcntl(errfd, F_DUPFD_CLOEXEC, 5);
	if (chfd <= 4)
		chfd = fcntl(chfd, F_DUPFD, 5);
	if (errfd < 0 || chfd < 0 || dup2(chfd, 3) < 0 ||
	    dup2(errfd, 4) < 0) {
		e = errno;
		(void)!write(errfd >= 0 ? errfd : 4, &e, sizeof e);
		_exit(127);
	}
	fcntl(4, F_SETFD, FD_CLOEXEC);
	errfd = 4;
	/*
	 * stdin and stdout on /dev/null: our stdout may be a JSON stream
	 * (control, run --json) no worker may write into.  stderr stays
	 * ours for the worker's diagnostics (and a sanitizer's report).
	 */
	if ((nullfd = open("/dev/null", O_RDWR)) >= 0) {
		dup2(nullfd, 0);
		dup2(nullfd, 1);
		if (fcntl(2, F_GETFD) < 0)
			dup2(nullfd, 2);
	}
	sigfd_close_from(5, -1);
	execv(path, argv);
	e = errno;
	(void)!write(errfd, &e, sizeof e);
	_exit(127);
}

/*
 * Start the worker for agent a.  On success *chfd is the supervisor's end
 * of the channel and a->pid is set.  On failure nothing is left running
 * and *err says what failed.
 */
int
spawn_worker(struct sup *s, struct agent *a, int *chfd, char **err)
{
	char	 idx[16], *argv[6];
	int	 sv[2], ep[2], e;
	pid_t	 pid, parent = getpid();

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    sv) != 0) {
		xasprintf(err, "socketpair: %s", strerror(errno));
		return -1;
	}
	if (pipe2(ep, O_CLOEXEC) != 0) {
		xasprintf(err, "pipe: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	snprintf(idx, sizeof idx, "%u", a->index);
	argv[0] = (char *)"ccw-worker";
	argv[1] = (char *)"-R";
	argv[2] = a->role;
	argv[3] = (char *)"-I";
	argv[4] = idx;
	argv[5] = NULL;

	pid = fork();
	if (pid == 0)
		spawn_child(sv[1], ep[1], parent, s->worker_path, argv);
	e = errno;
	close(sv[1]);
	close(ep[1]);
	if (pid < 0) {
		xasprintf(err, "fork: %s", strerror(e));
		close(sv[0]);
		close(ep[0]);
		return -1;
	}
	if ((e = reap_exec_status(ep[0], pid)) != 0) {
		xasprintf(err, "cannot execute worker %s: %s", s->worker_path,
		    strerror(e));
		close(sv[0]);
		return -1;
	}
	a->pid = pid;
	*chfd = sv[0];
	return 0;
}

/*
 * As a child subreaper every orphaned descendant becomes our child; at
 * exit kill and reap whatever is left.
 */
void
spawn_sweep_children(void)
{
	reap_sweep(0, NULL, NULL);
}
