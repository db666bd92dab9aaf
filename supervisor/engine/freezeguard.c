/*
 * freezeguard.c: a frozen worker cannot notice its supervisor die (its
 * channel's end), so each freeze has a guard: a process forked for it
 * that waits on a pipe and, when the supervisor is gone (EOF), thaws what
 * the freeze stopped; the worker then sees its channel closed and ends
 * its tool as it always does.  A thaw by the supervisor sends a byte: the
 * guard goes without touching anything.
 */
#include <config.h>

#include <sys/resource.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "freeze.h"
#include "log.h"
#include "reap.h"
#include "xmalloc.h"

#ifndef SYS_pidfd_open		/* older headers: refused at run time */
#define SYS_pidfd_open		434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal	424
#endif

#define GUARD_MAX_FDS	256	/* processes a guard can continue */
#define GUARD_CLOSE_MAX	65536	/* without close_range: fds closed */

/* Sort the kept fds (few): the child closes the gaps between them. */
static void
guard_sort(int *v, int n)
{
	int	i, j, x;

	for (i = 1; i < n; i++)
		for (j = i, x = v[i]; j > 0 && v[j - 1] > x; j--) {
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
}

/* Close [lo, hi] in the child: one syscall, or one by one (old kernels). */
static void
guard_close_range(int lo, int hi)
{
	int	fd;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lo, (unsigned)hi, 0) == 0)
		return;
#endif
	for (fd = lo; fd <= hi && fd < GUARD_CLOSE_MAX; fd++)
		(void)close(fd);
}

/* A process to continue: its pidfd (-1: none here) and its pid. */
struct guard_target {
	int	fd;
	pid_t	pid;
};

/*
 * The guard itself, in the forked child of a threaded process: system
 * calls only.  Every fd but the kept ones (keep, sorted) closed: a
 * listening socket, the run's stdout must not outlive us in it; out of
 * our session (a signal to our group must not take it along); then the
 * wait.  A target without a pidfd (none under valgrind) is signalled by
 * its pid: stopped, it cannot have ended on its own.
 */
static void
guard_child(int rfd, int cgfd, const int *keep, int nkeep,
    const struct guard_target *t, int nt)
{
	char	b;
	ssize_t	n;
	int	i, lo = 0;

	for (i = 0; i < nkeep; i++) {
		if (keep[i] > lo)
			guard_close_range(lo, keep[i] - 1);
		lo = keep[i] + 1;
	}
	guard_close_range(lo, ~0U >> 1);
	(void)setsid();
	do
		n = read(rfd, &b, 1);
	while (n < 0 && errno == EINTR);
	if (n == 0) {	/* the supervisor died: let them go on */
		if (cgfd >= 0 && write(cgfd, "0", 1) != 1)
			cgfd = -1;
		for (i = nt - 1; i >= 0; i--)
			if (t[i].fd < 0 || syscall(SYS_pidfd_send_signal,
			    t[i].fd, SIGCONT, NULL, 0) != 0)
				(void)kill(t[i].pid, SIGCONT);
	}
	_exit(0);
}

/*
 * Each process the freeze stopped (still the one that started then),
 * with a pidfd where the system gives one; how many.
 */
static int
guard_targets(const struct freeze_tree *t, struct guard_target *g)
{
	struct reap_stat	st;
	int			i, n = 0;

	for (i = 0; t != NULL && i < t->n && n < GUARD_MAX_FDS; i++) {
		g[n].pid = t->pid[i];
		g[n].fd = (int)syscall(SYS_pidfd_open, t->pid[i], 0);
		if (reap_stat(t->pid[i], &st) != 0 ||
		    st.start != t->start[i]) {
			if (g[n].fd >= 0)
				close(g[n].fd);
			continue;
		}
		n++;
	}
	return n;
}

/*
 * Start the guard of a freeze: t what SIGSTOP stopped, or cg the frozen
 * cgroup.  The pipe's write end (close-on-exec: no worker holds it), or
 * -1 when no guard could be made (said: a death now leaves them frozen).
 */
int
freeze_guard_start(const struct freeze_tree *t, const char *cg)
{
	struct guard_target	*g;
	int			 p[2], *keep, n, nkeep = 0, cgfd = -1, i;
	char			 path[4096];
	pid_t			 pid;

	if (pipe2(p, O_CLOEXEC) != 0) {
		log_warn("freeze guard: pipe");
		return -1;
	}
	g = xcalloc(GUARD_MAX_FDS, sizeof *g);
	keep = xcalloc(GUARD_MAX_FDS + 2, sizeof *keep);
	n = guard_targets(t, g);
	for (i = 0; i < n; i++)
		if (g[i].fd >= 0)
			keep[nkeep++] = g[i].fd;
	if (cg != NULL) {
		snprintf(path, sizeof path, "%s/cgroup.freeze", cg);
		if ((cgfd = open(path, O_WRONLY | O_CLOEXEC)) >= 0)
			keep[nkeep++] = cgfd;
	}
	keep[nkeep++] = p[0];
	guard_sort(keep, nkeep);
	if ((pid = fork()) == 0)
		guard_child(p[0], cgfd, keep, nkeep, g, n);
	for (i = 0; i < nkeep; i++)
		close(keep[i]);
	free(keep);
	free(g);
	if (pid < 0) {
		log_warn("freeze guard: fork");
		close(p[1]);
		return -1;
	}
	return p[1];
}

/* The supervisor thawed them itself: the guard goes, touching nothing. */
void
freeze_guard_end(int fd)
{
	if (fd < 0)
		return;
	if (write(fd, "x", 1) != 1)
		log_debug("freeze guard: %s", strerror(errno));
	close(fd);
}
