/*
 * forkexec.c: the raw baseline of the worker-lifecycle figure.  Owns the
 * least a supervisor could do per job: fork + exec a middle program (this
 * one, in -m mode) that forks + execs `bash -c CMD` and reaps it, with J
 * jobs in flight.  No channel, no log, no protocol.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A failure here invalidates the figure: say so and stop. */
static void __attribute__((noreturn))
die(const char *what)
{
	fprintf(stderr, "forkexec: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The middle program: one child running bash, reaped; its status is ours. */
static int
middle(const char *cmd)
{
	pid_t	pid;
	int	st;

	if ((pid = fork()) == -1)
		die("fork");
	if (pid == 0) {
		execlp("bash", "bash", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			die("waitpid");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* One job: fork, then exec ourselves as the middle program. */
static void
start(const char *cmd)
{
	pid_t	pid;

	if ((pid = fork()) == -1)
		die("fork");
	if (pid == 0) {
		execl("/proc/self/exe", "forkexec", "-m", cmd, (char *)NULL);
		_exit(127);
	}
}

/* Keep J jobs in flight until N have finished; a failed job fails the run. */
int
main(int argc, char **argv)
{
	long	n, j, started = 0, done = 0, bad = 0;
	int	st;

	if (argc == 3 && strcmp(argv[1], "-m") == 0)
		return middle(argv[2]);
	if (argc != 4) {
		fprintf(stderr, "usage: forkexec N J CMD\n");
		return 2;
	}
	n = strtol(argv[1], NULL, 10);
	j = strtol(argv[2], NULL, 10);
	while (started < n && started < j) {
		start(argv[3]);
		started++;
	}
	while (done < n) {
		if (wait(&st) == -1) {
			if (errno == EINTR)
				continue;
			die("wait");
		}
		done++;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad++;
		if (started < n) {
			start(argv[3]);
			started++;
		}
	}
	if (bad > 0) {
		fprintf(stderr, "forkexec: %ld jobs failed\n", bad);
		return 1;
	}
	return 0;
}
