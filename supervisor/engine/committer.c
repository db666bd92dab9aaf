/*
 * committer.c: committers run blocking jobs in FIFO order, each its own
 * jobs one at a time, on the threads of a pool: a committer of its own
 * (committer_new) has a pool of one thread; a host's loops share one
 * pool (committer_new_in), so that many loops are not as many threads
 * (every thread costs memory, and the worker sweep reads each thread's
 * children file at every worker's end: issue 30).  Finished jobs go back
 * to the event loop through the committer's eventfd, whose callback runs
 * their done functions in the same order.  The loop's thread never waits
 * on a lock or a disk unless it asks to (committer_wait).
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
	struct committer_pool	*pool;
	struct committer_jobs	 todo;	/* not yet run */
	struct committer_jobs	 ended;	/* run; done not yet called */
	int			 running;	/* a job of it is in run now */
	int			 queued;	/* in the pool's ready list */
	int			 stopping;
	int			 efd;
	struct event		*ev;	/* added only while jobs are out, so */
	unsigned		 nout;	/* that a dispatch can run out of events */
	TAILQ_ENTRY(committer)	 ready;
};
TAILQ_HEAD(committer_list, committer);

struct committer_pool {
	pthread_mutex_t		 mu;	/* the pool's and its committers' lists */
	pthread_cond_t		 work;	/* a committer ready, or stopping */
	pthread_cond_t		 idle;	/* a job finished */
	struct committer_list	 ready;	/* have jobs, none running: in turn */
	pthread_t		*threads;
	int			 nthreads;
	int			 stopping;
	unsigned		 refs;	/* the owner's and each committer's */
};

/*
 * A thread: take the committer first in turn, run its oldest job
 * unlocked, hand the job back; a committer with more goes to the end of
 * the turn, so that one busy loop does not hold up the others.
 */
static void *
committer_main(void *arg)
{
	struct committer_pool	*p = arg;
	struct committer	*c;
	struct committer_job	*j;
	uint64_t		 one = 1;
	ssize_t			 n;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (TAILQ_EMPTY(&p->ready) && !p->stopping)
			pthread_cond_wait(&p->work, &p->mu);
		if ((c = TAILQ_FIRST(&p->ready)) == NULL)
			break;
		TAILQ_REMOVE(&p->ready, c, ready);
		c->queued = 0;
		j = TAILQ_FIRST(&c->todo);
		TAILQ_REMOVE(&c->todo, j, entry);
		c->running = 1;
		pthread_mutex_unlock(&p->mu);
		j->run(j->arg);
		pthread_mutex_lock(&p->mu);
		c->running = 0;
		TAILQ_INSERT_TAIL(&c->ended, j, entry);
		if (!TAILQ_EMPTY(&c->todo)) {
			TAILQ_INSERT_TAIL(&p->ready, c, ready);
			c->queued = 1;
		}
		pthread_cond_broadcast(&p->idle);
		do
			n = write(c->efd, &one, sizeof one);
		while (n < 0 && errno == EINTR);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Drop a reference; the last one stops the threads (every job has run). */
static void
committer_pool_unref(struct committer_pool *p)
{
	int	i, last;

	pthread_mutex_lock(&p->mu);
	last = --p->refs == 0;
	if (last) {
		p->stopping = 1;
		pthread_cond_broadcast(&p->work);
	}
	pthread_mutex_unlock(&p->mu);
	if (!last)
		return;
	for (i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->idle);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->mu);
	free(p->threads);
	free(p);
}

/*
 * A pool of n threads.  They block every signal, so a signal always
 * reaches the loop's thread and never interrupts a job.
 */
struct committer_pool *
committer_pool_new(int n, char **err)
{
	struct committer_pool	*p;
	sigset_t		 all, old;
	int			 rc = 0;

	p = xcalloc(1, sizeof *p);
	TAILQ_INIT(&p->ready);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->idle, NULL);
	p->refs = 1;
	p->threads = xcalloc((size_t)(n > 0 ? n : 1), sizeof *p->threads);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (p->nthreads < (n > 0 ? n : 1) && (rc = pthread_create(
	    &p->threads[p->nthreads], NULL, committer_main, p)) == 0)
		p->nthreads++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (p->nthreads > 0)
		return p;
	xasprintf(err, "committer: pthread_create: %s", strerror(rc));
	committer_pool_unref(p);
	return NULL;
}

/* The owner is done with the pool; its committers keep it until freed. */
void
committer_pool_free(struct committer_pool *p)
{
	if (p == NULL)
		return;
	committer_pool_unref(p);
}

/* Call the done functions of every ended job, oldest first, unlocked. */
static void
committer_reap(struct committer *c)
{
	struct committer_jobs	 ended;
	struct committer_job	*j;

	TAILQ_INIT(&ended);
	pthread_mutex_lock(&c->pool->mu);
	TAILQ_CONCAT(&ended, &c->ended, entry);
	pthread_mutex_unlock(&c->pool->mu);
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

/* A committer on the loop whose jobs run on the pool's threads. */
struct committer *
committer_new_in(struct committer_pool *p, struct event_base *base,
    char **err)
{
	struct committer	*c;

	c = xcalloc(1, sizeof *c);
	TAILQ_INIT(&c->todo);
	TAILQ_INIT(&c->ended);
	if ((c->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		xasprintf(err, "committer: eventfd: %s", strerror(errno));
		free(c);
		return NULL;
	}
	c->ev = event_new(base, c->efd, EV_READ | EV_PERSIST, committer_ev_cb,
	    c);
	if (c->ev == NULL) {
		xasprintf(err, "committer: cannot set up its event");
		close(c->efd);
		free(c);
		return NULL;
	}
	pthread_mutex_lock(&p->mu);
	p->refs++;
	pthread_mutex_unlock(&p->mu);
	c->pool = p;
	return c;
}

/* A committer with a thread of its own. */
struct committer *
committer_new(struct event_base *base, char **err)
{
	struct committer_pool	*p;
	struct committer	*c;

	if ((p = committer_pool_new(1, err)) == NULL)
		return NULL;
	c = committer_new_in(p, base, err);
	committer_pool_unref(p);
	return c;
}

/* Queue a job; its done function runs on the loop when it has run. */
int
committer_submit(struct committer *c, committer_run_fn run,
    committer_done_fn done, void *arg)
{
	struct committer_pool	*p = c->pool;
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
	pthread_mutex_lock(&p->mu);
	TAILQ_INSERT_TAIL(&c->todo, j, entry);
	if (!c->running && !c->queued) {
		TAILQ_INSERT_TAIL(&p->ready, c, ready);
		c->queued = 1;
		pthread_cond_signal(&p->work);
	}
	pthread_mutex_unlock(&p->mu);
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
	struct committer_pool	*p = c->pool;
	int			 busy;

	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (!TAILQ_EMPTY(&c->todo) || c->running)
			pthread_cond_wait(&p->idle, &p->mu);
		busy = !TAILQ_EMPTY(&c->ended);
		pthread_mutex_unlock(&p->mu);
		if (!busy)
			return;
		committer_reap(c);
	}
}

/* Finish what was queued, then let go of the pool. */
void
committer_free(struct committer *c)
{
	if (c == NULL)
		return;
	committer_wait(c);
	c->stopping = 1;
	event_free(c->ev);
	close(c->efd);
	committer_pool_unref(c->pool);
	free(c);
}
