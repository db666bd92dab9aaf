/*
 * committer.h: runs an event loop's blocking jobs (a lock wait, writes,
 * fsync, rename) one at a time in the order given, on a thread of its
 * own or of a pool that many committers share, and reports each job's
 * end back on the event loop.
 */
#ifndef CCW_COMMITTER_H
#define CCW_COMMITTER_H

struct event_base;
struct committer;
struct committer_pool;

/* Runs on the committer's thread: it may block; it must not touch the loop. */
typedef void (*committer_run_fn)(void *);
/* Runs on the event loop's thread after run, in submission order; owns the job. */
typedef void (*committer_done_fn)(void *);

struct committer *committer_new(struct event_base *, char **);	/* a thread of its own */
struct committer_pool *committer_pool_new(int, char **);	/* N threads */
void	 committer_pool_free(struct committer_pool *);	/* its committers keep it until theirs are freed */
struct committer *committer_new_in(struct committer_pool *,
	    struct event_base *, char **);	/* one more committer on the pool's threads */
int	 committer_submit(struct committer *, committer_run_fn,
	    committer_done_fn, void *);	/* -1: being freed */
void	 committer_wait(struct committer *);	/* every job run, every done called */
void	 committer_free(struct committer *);	/* committer_wait, then the thread ends */

#endif
