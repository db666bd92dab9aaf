/*
 * batchint.h: the batch driver's insides, shared by batch.c (the driver:
 * the order items start in, the end), batchitem.c (an item's run, a loop
 * or one worker), batchsave.c (what is written: the state, CCW's queue
 * file, the counts) and batchhold.c (the budget, its hold, a raise
 * through the state file).  Not for callers.
 */
#ifndef CCW_BATCHINT_H
#define CCW_BATCHINT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "batch.h"
#include "batchstate.h"

struct committer;
struct event;
struct filewatch;
struct host_loop;

#define BATCH_JOBS	4

/* Where an item is in this run (its record's status is what is saved). */
enum bitem_phase {
	BI_WAIT,	/* pending: not started in this run */
	BI_OPEN,	/* its loop is being opened */
	BI_RUN,		/* its loop runs */
	BI_DONE,	/* completed, failed or blocked */
};

struct batch_item {
	struct batch		*b;
	size_t			 idx;
	const struct bq_item	*def;
	json_t			*rec;		/* queue[idx] of the state */
	enum bitem_phase	 phase;
	struct host_loop	*hl;
	uint64_t		 t0;		/* when it started, monotonic */
	char			*role;		/* the running worker's */
	char			*progress;	/* its last line */
	char			*reason;	/* LOOP_COMPLETED's failure_reason */
	void			*worker;	/* a worker item's, the caller's */
	void			*dead;		/* its handle, to free next turn */
	int			 budget_stop;	/* the budget stopped it (it could
						   not be held): pending again */
	size_t			*clash, nclash;	/* items it never runs beside
						   (the forecast, bqforecast.c) */
};

/* How the batch ends, once no item runs. */
enum batch_end {
	BE_NONE,
	BE_STOP,	/* a signal: items left executing, resumable */
	BE_BUDGET,	/* a budget crossed: no new start */
};

struct batch {
	struct event_base	*base;
	struct batch_cfg	 cfg;
	struct batch_store	 store;
	struct committer	*cm;
	json_t			*st;
	char			*id;
	struct batch_item	*items;
	size_t			 nitems, nrun;
	enum batch_end		 end;
	char			*end_reason;
	unsigned		 warned;	/* budget warnings given: bits */
	int			 held;		/* its budget holds its loops */
	struct event		*hold_ev;	/* the hold's timeout */
	struct event		*wall_ev;	/* --max-time's next mark */
	uint64_t		 wall_ms;	/* running time before run_since */
	uint64_t		 run_since;	/* mono ms; 0: held (no clock) */
	struct filewatch	*watch;		/* on its state.json; NULL: */
	struct event		*poll_ev;	/* ... polled instead */
	int			 saving, dirty, finishing, finished;
	int			 watch_due;	/* state.json changed during a
						   save: watch_ev after it */
	struct event		*watch_ev;
	int			 save_failed;
	struct event		*pump_ev;
	json_t			*forecast;	/* bqforecast_make's pairs */
	size_t			 ncompleted, nfailed, nblocked;	/* the
						   queue's statuses, kept by
						   batch_item_set */
};


/* batchsave.c: records, saves, the budget, the end */
void	 batch_emit(struct batch *, const char *, json_t *);	/* takes fields */
void	 batch_now(char *, size_t);
void	 batch_error(struct batch *, const char *, const char *);
void	 batch_stop_all(struct batch *, enum batch_end, const char *);
void	 batch_finish(struct batch *);
void	 batch_save(struct batch *);
void	 batch_queue_sync(struct batch_item *, const char *, const char *);
void	 batch_count(struct batch *);
void	 batch_tally(struct batch *, const char *, int);	/* status, +-1 */
void	 batch_usage_sum(struct batch *);

/* batchhold.c: the budget held, its hold, a raised one from the file */
void	 batch_budget(struct batch *);
void	 batch_limits_set(struct batch *);	/* context's, top-level budget */
void	 batch_hold_start(struct batch *);	/* its watch, hold timer */
void	 batch_hold_free(struct batch *);

/* batchitem.c */
void	 batch_item_set(struct batch_item *, const char *, json_t *);	/* takes it */
void	 batch_item_start(struct batch_item *);
void	 batch_item_end(struct batch_item *, const char *, const char *);

#endif
