/*
 * reap.c: shared by the supervisor and the worker, both child
 * subreapers: anything a tool forks and abandons becomes their child, so
 * killing "every child" really is killing every descendant, given a few
 * rounds for the ones whose parent dies in the sweep.
 */
#include <config.h>

#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "reap.h"

#define REAP_ROUNDS	20
#define REAP_MAX	4096

/* Our children, from /proc/self/task/<tid>/children of every thread. */
int
reap_list(pid_t *out, int max)
{
	static char	 buf[65536];
	char		 path[64], *p, *end;
	struct dirent	*de;
	DIR		*d;
	FILE		*fp;
	size_t		 len;
	int		 n = 0;

	if ((d = opendir("/proc/self/task")) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && n < max) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%.20s/children",
		    de->d_name);
		if ((fp = fopen(path, "re")) == NULL)
			continue;
		len = fread(buf, 1, sizeof buf - 1, fp);
		fclose(fp);
		buf[len] = '\0';
		for (p = buf; n < max; p = end) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			out[n++] = (pid_t)v;
		}
	}
	closedir(d);
	return n;
}

/*
 * SIGKILL every child and its process group, reap them, and repeat while
 * new orphans arrive.  When watch is one of them, its wait status is
 * stored in *st and *got set, so its caller does not lose it.
 */
void
reap_sweep(pid_t watch, int *st, int *got)
{
	static pid_t	pids[REAP_MAX];
	pid_t		pid;
	int		n, i, round, status;

	for (round = 0; round < REAP_ROUNDS; round++) {
		if ((n = reap_list(pids, REAP_MAX)) == 0)
			break;
		for (i = 0; i < n; i++) {
			kill(-pids[i], SIGKILL);
			kill(pids[i], SIGKILL);
		}
		for (i = 0; i < n; i++) {
			while ((pid = waitpid(pids[i], &status, 0)) < 0 &&
			    errno == EINTR)
				;
			if (pid > 0 && pid == watch && got != NULL) {
				*st = status;
				*got = 1;
			}
		}
	}
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		if (pid == watch && got != NULL) {
			*st = status;
			*got = 1;
		}
}

/*
 * The child writes its errno to a close-on-exec pipe when exec fails; EOF
 * means the exec happened.  A failed child is reaped here.  Returns 0 or
 * the child's errno.
 */
int
reap_exec_status(int fd, pid_t pid)
{
	ssize_t	n;
	int	e = 0;

	do
		n = read(fd, &e, sizeof e);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n != (ssize_t)sizeof e)
		return 0;
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return e != 0 ? e : EIO;
}
