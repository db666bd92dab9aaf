/*
 * batch-worker.h: a batch item run as one worker (batch-worker.c): start
 * it, stop it (the kill ladder), and the one outcome it reports.
 */
#ifndef CCW_BATCH_WORKER_H
#define CCW_BATCH_WORKER_H

#include <jansson.h>

struct bq_item;
struct bworker;
struct children;
struct event_base;
struct gate;
struct plan_base;

/* status "completed" or "failed", its reason, the worker's usage, stopped */
typedef void	(*bworker_done_fn)(void *, const char *, const char *,
		    const json_t *, int);

struct bworker	*bworker_start(struct event_base *, struct children *,
		    struct gate *, const struct plan_base *, const char *,
		    const char *, const struct bq_item *, bworker_done_fn,
		    void *, char **);
void		 bworker_stop(struct bworker *);
void		 bworker_free(struct bworker *);

#endif
