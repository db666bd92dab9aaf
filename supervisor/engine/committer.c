/*
 * committer.c: one worker thread per committer running blocking jobs in
 * FIFO order; finished jobs go back to the event loop through an eventfd,
 * whose callback runs their done functions in the same order.  The loop's
 * thread never waits on a lock or a disk unless it asks to (committer_wait).
 */
#include <config.h>

#include <sys/eventfd.h>
#include <sys/queue.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "committer.h"
#include "xmalloc.h"

struct committer_job {
	committer_run_fn		 run;
	committer_done_fn		 done;
	void				*arg;
	TAILQ_ENTRY(committer_job)	 entry;
};
TAILQ_HEAD(committer_jobs, committer_job);

struct committer {
	pthread_t		 thread;
	pthread_mutex_t		 mu;
	pthread_cond_t		 work;	/* todo not empty, or stopping */
	pthread_cond_t		 idle;	/* a job finished */
	struct committer_jobs	 todo;	/* not yet run */
	struct committer_jobs	 ended;	/* run; done not yet called */
	int			 running;	/* a job is in run now */
	int			 stopping;
	int			 efd;
	struct event		*ev;	/* added only while jobs are out, so */
	unsigned		 nout;	/* that a dispatch can run out of events */
};

/* The thread: take the oldest job, run it unlocked, hand it back. */
static void *
committer_main(void *arg)
{
	struct committer	*c = arg;
	struct committer_job	*j;
	uint64_t		 one = 1;
	ssize_t			 n;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (TAILQ_EMPTY(&c->todo) && !c->stopping)
			pthread_cond_wait(&c->work, &c->mu);
		if ((j = TAILQ_FIRST(&c->todo)) == NULL)
			break;
		TAILQ_REMOVE(&c->todo, j, entry);
		c->running = 1;
		pthread_mutex_unlock(&c->mu);
		j->run(j->arg);
		pthread_mutex_lock(&c->mu);
		c->running = 0;
		TAILQ_INSERT_TAIL(&c->ended, j, entry);
		pthread_cond_broadcast(&c->idle);
		do
			n = write(c->efd, &one, sizeof one);
		while (n < 0 && errno == EINTR);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* Call the done functions of every ended job, oldest first, unlocked. */
static void
committer_reap(struct committer *c)
{
	struct committer_jobs	 ended;
	struct committer_job	*j;

	TAILQ_INIT(&ended);
	pthread_mutex_lock(&c->mu);
	TAILQ_CONCAT(&ended, &c->ended, entry);
	pthread_mutex_unlock(&c->mu);
	while ((j = TAILQ_FIRST(&ended)) != NULL) {
		TAILQ_REMOVE(&ended, j, entry);
		if (--c->nout == 0)
			event_del(c->ev);
		j->done(j->arg);
		free(j);
	}
}

/* The eventfd fired: jobs ended. */
static void
committer_ev_cb(evutil_socket_t fd, short what, void *arg)
{
	uint64_t	n;

	(void)what;
	while (read(fd, &n, sizeof n) < 0 && errno == EINTR)
		;
	committer_reap(arg);
}

/*
 * A committer on the loop.  Its thread blocks every signal, so a signal
 * always reaches the loop's thread and never interrupts a job.
 */
struct committer *
committer_new(struct event_base *base, char **err)
{
	struct committer	*c;
	sigset_t		 all, old;
	int			 rc;

	c = xcalloc(1, sizeof *c);
	TAILQ_INIT(&c->todo);
	TAILQ_INIT(&c->ended);
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->work, NULL);
	pthread_cond_init(&c->idle, NULL);
	if ((c->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		xasprintf(err, "committer: eventfd: %s", strerror(errno));
		goto fail;
	}
	c->ev = event_new(base, c->efd, EV_READ | EV_PERSIST, committer_ev_cb,
	    c);
	if (c->ev == NULL) {
		xasprintf(err, "committer: cannot set up its event");
		goto fail;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&c->thread, NULL, committer_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		xasprintf(err, "committer: pthread_create: %s", strerror(rc));
		goto fail;
	}
	return c;
fail:
	if (c->ev != NULL)
		event_free(c->ev);
	if (c->efd >= 0)
		close(c->efd);
	pthread_cond_destroy(&c->idle);
	pthread_cond_destroy(&c->work);
	pthread_mutex_destroy(&c->mu);
	free(c);
	return NULL;
}

/* Queue a job; its done function runs on the loop when it has run. */
int
committer_submit(struct committer *c, committer_run_fn run,
    committer_done_fn done, void *arg)
{
	struct committer_job	*j;

	if (c->stopping)
		return -1;
	if (c->nout++ == 0 && event_add(c->ev, NULL) != 0) {
		c->nout--;
		return -1;
	}
	j = xcalloc(1, sizeof *j);
	j->run = run;
	j->done = done;
	j->arg = arg;
	pthread_mutex_lock(&c->mu);
	TAILQ_INSERT_TAIL(&c->todo, j, entry);
	pthread_cond_signal(&c->work);
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/*
 * Block the loop's thread until every job queued has run and its done
 * function was called (done functions may queue more: those too).  For
 * a caller that needs synchronous semantics.
 */
void
committer_wait(struct committer *c)
{
	int	busy;

	for (;;) {
		pthread_mutex_lock(&c->mu);
		while (!TAILQ_EMPTY(&c->todo) || c->running)
			pthread_cond_wait(&c->idle, &c->mu);
		busy = !TAILQ_EMPTY(&c->ended);
		pthread_mutex_unlock(&c->mu);
		if (!busy)
			return;
		committer_reap(c);
	}
}

/* Finish what was queued, then stop the thread. */
void
committer_free(struct committer *c)
{
	if (c == NULL)
		return;
	committer_wait(c);
	pthread_mutex_lock(&c->mu);
	c->stopping = 1;
	pthread_cond_signal(&c->work);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->thread, NULL);
	event_free(c->ev);
	close(c->efd);
	pthread_cond_destroy(&c->idle);
	pthread_cond_destroy(&c->work);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
