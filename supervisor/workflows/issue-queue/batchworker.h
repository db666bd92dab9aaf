/*
 * batchworker.h: a batch item run as one worker (batchworker.c): start
 * it, stop it (the kill ladder), hold it (frozen), and the one outcome
 * it reports.
 */
#ifndef CCW_BATCHWORKER_H
#define CCW_BATCHWORKER_H

#include <jansson.h>

struct bq_item;
struct batchworker;
struct children;
struct event_base;
struct gate;
struct plan_base;

/*
 * status "completed" or "failed", its reason, the worker's report
 * (report_agent's: usage, worktree; NULL when it never started), stopped
 */
typedef void	(*batchworker_done_fn)(void *, const char *, const char *,
		    const json_t *, int);

struct batchworker	*batchworker_start(struct event_base *, struct children *,
		    struct gate *, const struct plan_base *, const char *,
		    const char *, const struct bq_item *, const json_t *,
		    batchworker_done_fn,
		    void *, char **);
void		 batchworker_stop(struct batchworker *);
int		 batchworker_hold(struct batchworker *, const char *);	/* -1: stop it */
void		 batchworker_unhold(struct batchworker *);
void		 batchworker_free(struct batchworker *);

#endif
