/*
 * stopbound.c: SIGTERM to run, serve or batch ends within the tools'
 * grace plus STOPBOUND_MS whatever the disk does.  A thread of its own
 * waits for the deadline; if the process is still there, it says so and
 * _exit()s.  Commits still in flight are abandoned: each state file is
 * the old one or the new one (temp file, fsync, rename), and the temp
 * file an abandoned commit leaves is removed under the loop's lock by the
 * next start (state_clean_temps).  The kernel releases the locks.
 * One limit is the kernel's: a thread inside an fsync that sleeps
 * uninterruptibly (a hung disk, not a slow one) keeps the process from
 * being reaped until that call returns; nothing after it runs.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stopbound.h"

/* One bound per process (the command's), armed at its first stop. */
static pthread_mutex_t	 stopbound_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 stopbound_cv;
static pthread_t	 stopbound_thread;
static int		 stopbound_armed;	/* the thread runs */
static int		 stopbound_ended;	/* the command ended in time */
static struct timespec	 stopbound_deadline;	/* CLOCK_MONOTONIC */
static int		 stopbound_code;
static char		 stopbound_words[256];

/*
 * The thread: wait until the deadline or the command's end; at the
 * deadline end the process.  Only async-signal-safe calls then: the
 * loop's thread may be anywhere (holding stdio's lock, in malloc).
 */
static void *
stopbound_main(void *arg)
{
	size_t	 len = strlen(stopbound_words), off = 0;
	ssize_t	 n;
	int	 rc = 0;

	(void)arg;
	pthread_mutex_lock(&stopbound_mu);
	while (!stopbound_ended && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&stopbound_cv, &stopbound_mu,
		    &stopbound_deadline);
	if (stopbound_ended) {
		pthread_mutex_unlock(&stopbound_mu);
		return NULL;
	}
	while (off < len) {
		n = write(STDERR_FILENO, stopbound_words + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	_exit(stopbound_code);
}

/*
 * Arm the bound: the process ends MS ms from now with exit status CODE,
 * "ccw-supervisor CMD: ..." on stderr, unless stopbound_end came first.
 * Armed once: a second signal changes nothing.  -1 if no thread can be
 * had: the stop is unbounded then, as before.  The thread blocks every
 * signal, so a signal still reaches the loop's thread.
 */
int
stopbound_arm(unsigned ms, int code, const char *cmd)
{
	pthread_condattr_t	 ca;
	sigset_t		 all, old;
	int			 rc;

	if (stopbound_armed)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &stopbound_deadline);
	stopbound_deadline.tv_sec += ms / 1000;
	stopbound_deadline.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (stopbound_deadline.tv_nsec >= 1000000000L) {
		stopbound_deadline.tv_sec++;
		stopbound_deadline.tv_nsec -= 1000000000L;
	}
	stopbound_code = code;
	snprintf(stopbound_words, sizeof stopbound_words, "ccw-supervisor %s: "
	    "still stopping after %u ms (commits waiting for the disk): "
	    "exiting now; each state file is the last one written whole "
	    "(exit %d)\n", cmd, ms, code);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&stopbound_cv, &ca);
	pthread_condattr_destroy(&ca);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&stopbound_thread, NULL, stopbound_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_cond_destroy(&stopbound_cv);
		return -1;
	}
	stopbound_armed = 1;
	return 0;
}

/*
 * The command ended in time (its teardown done): the thread goes, joined,
 * so that nothing of it is left for a leak checker.
 */
void
stopbound_end(void)
{
	if (!stopbound_armed)
		return;
	pthread_mutex_lock(&stopbound_mu);
	stopbound_ended = 1;
	pthread_cond_signal(&stopbound_cv);
	pthread_mutex_unlock(&stopbound_mu);
	pthread_join(stopbound_thread, NULL);
	pthread_cond_destroy(&stopbound_cv);
	stopbound_armed = 0;
}
