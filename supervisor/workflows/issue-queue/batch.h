/*
 * batch.h: the issue-queue workflow's driver (seed 001, DESIGN.md
 * section 7): a batch of items, each one loop on its root's host, run
 * in their groups' order with their dependencies, at most jobs at once,
 * within a budget, committed to the batch's state file as they go.
 */
#ifndef CCW_BATCH_H
#define CCW_BATCH_H

#include <jansson.h>

struct batch;
struct bq_input;
struct bq_item;
struct event_base;
struct host;
struct workflow;

struct batch_cfg {
	const struct bq_input	*in;		/* borrowed for the batch's life */
	const char		*root;		/* its state under ROOT/.workflow/.batch */
	const char		*resume_id;	/* NULL: a new batch */
	unsigned		 jobs;		/* items at once; 0: 4 */
	double			 max_cost_usd;	/* 0: no budget */
	long long		 max_tokens;	/* 0: no budget */
	double			 max_wall_ms;	/* running time; 0: no budget */
	double			 hold_timeout;	/* s a budget holds it; 0: stop */
	const struct workflow	*wf;		/* what a loop item runs */
	/*
	 * The host of a root and loop directory (the caller opens them):
	 * root, the directory (NULL: the root's default), where the host
	 * keeps its loops (borrowed); NULL and *err if it cannot.  The
	 * batch records the directory, so a resume finds its loops even
	 * when the root's default changed since (a .workflow/ made).
	 */
	struct host		*(*host_for)(void *, const char *, const char *,
				    const char **, char **);
	/*
	 * An item of kind worker, run by the caller as one worker: root,
	 * directory and where it went (as host_for), the item, the id of
	 * its workers directory, and its outcome's callback (status
	 * "completed" or "failed", the reason, its report (usage, and
	 * worktree: branch, head, files; NULL if it never started), whether
	 * a stop ended it), called once, never from inside start.  A handle, or
	 * NULL and *err.  stop climbs its kill ladder; free comes after.
	 */
	void			*(*worker_start)(void *, const char *,
				    const char *, const char **,
				    const struct bq_item *, const char *,
				    void (*)(void *, const char *, const char *,
				    const json_t *, int), void *, char **);
	void			(*worker_stop)(void *, void *);
	/* the budget holds it (frozen): 0, or -1 and it is stopped; and
	   the hold's end (NULL: worker items are stopped, never held) */
	int			(*worker_hold)(void *, void *, const char *);
	void			(*worker_unhold)(void *, void *);
	void			(*worker_free)(void *, void *);
	/* the batch's events and its loops' (name, fields borrowed) */
	void			(*event)(void *, const char *, const json_t *);
	/* the end: an EXIT_* code, once, after the last save */
	void			(*done)(void *, int);
	void			*arg;
};

struct batch	*batch_new(struct event_base *, const struct batch_cfg *,
		    char **);
const char	*batch_id(const struct batch *);
const char	*batch_dir(const struct batch *);
void		 batch_start(struct batch *);
void		 batch_stop(struct batch *, const char *);	/* resumable */
const json_t	*batch_state(const struct batch *);
json_t		*batch_live(const struct batch *);	/* running items */
void		 batch_free(struct batch *);

#endif
