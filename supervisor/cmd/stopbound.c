/*
 * stopbound.c: SIGTERM to run, serve or batch ends within the tools'
 * grace plus STOPBOUND_MS whatever the disk does.  A thread of its own
 * waits for the deadline; if the process is still there, it says so and
 * _exit()s.  Commits still in flight are abandoned: each state file is
 * the old one or the new one (temp file, fsync, rename), and the temp
 * file an abandoned commit leaves is removed under the loop's lock by the
 * next start (state_clean_temps).  The kernel releases the locks.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stopbound.h"
#include "xmalloc.h"

/* Armed once per process: a second signal changes nothing. */
static atomic_flag	stopbound_armed = ATOMIC_FLAG_INIT;

struct stopbound {
	struct timespec	 deadline;	/* CLOCK_MONOTONIC */
	int		 code;		/* the exit status then */
	char		*words;		/* the last words, on stderr */
};

/*
 * The thread: sleep until the deadline, then end the process.  Only
 * async-signal-safe calls after the sleep: the loop's thread may be
 * anywhere (holding stdio's lock, in malloc), so no stdio, no free.
 */
static void *
stopbound_main(void *arg)
{
	struct stopbound	*sb = arg;
	size_t			 len = strlen(sb->words), off = 0;
	ssize_t			 n;

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &sb->deadline,
	    NULL) != 0)
		;	/* EINTR only: every signal is blocked here anyway */
	while (off < len) {
		n = write(STDERR_FILENO, sb->words + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	_exit(sb->code);
}

/*
 * Arm the bound: the process ends MS ms from now with exit status CODE,
 * "ccw-supervisor CMD: ..." on stderr, if it has not ended by then.  It
 * is never disarmed (the process is stopping) and is armed once: a
 * second signal changes nothing.  -1 if no thread can be had: the stop
 * is unbounded then, as before.  The thread blocks every signal, so a signal
 * still reaches the loop's thread.  It is not joined: the process's exit
 * ends it, and its state is its own.
 */
int
stopbound_arm(unsigned ms, int code, const char *cmd)
{
	struct stopbound	*sb;
	pthread_t		 t;
	sigset_t		 all, old;
	int			 rc;

	if (atomic_flag_test_and_set(&stopbound_armed))
		return 0;
	sb = xcalloc(1, sizeof *sb);
	clock_gettime(CLOCK_MONOTONIC, &sb->deadline);
	sb->deadline.tv_sec += ms / 1000;
	sb->deadline.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (sb->deadline.tv_nsec >= 1000000000L) {
		sb->deadline.tv_sec++;
		sb->deadline.tv_nsec -= 1000000000L;
	}
	sb->code = code;
	xasprintf(&sb->words, "ccw-supervisor %s: still stopping after %u ms "
	    "(commits waiting for the disk): exiting now; each state file is "
	    "the last one written whole (exit %d)\n", cmd, ms, code);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, NULL, stopbound_main, sb);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		free(sb->words);
		free(sb);
		return -1;
	}
	pthread_detach(t);
	return 0;
}
