/*
 * meter.h: a host's counts of what its loops did, for serve's /metrics:
 * every worker result by role, tool and outcome (a duration histogram),
 * tokens and cost by tool, every ended loop by final status (a duration
 * histogram), processes that outlived their worker (leak.c), notifications
 * sent, failed and debounced (notify.c).  Fed from
 * the host's event path, read under its own lock.
 */
#ifndef CCW_METER_H
#define CCW_METER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define METER_SERIES_MAX	256	/* label sets per table, then "other" */
#define METER_OTHER		"other"	/* every label of the overflow row */
#define METER_NBOUNDS_MAX	12

struct meter;

/* The tables: labels role, tool, outcome; status; tool; notifications
   sent and failed by sink, kind; debounced by kind (notify.c). */
enum meter_table { METER_WORKERS, METER_LOOPS, METER_TOOLS,
	METER_NOTIFY_SENT, METER_NOTIFY_FAILED, METER_NOTIFY_DEBOUNCED };

/* One row: a histogram (workers, loops) or usage sums (tools). */
struct meter_row {
	uint64_t	 bucket[METER_NBOUNDS_MAX];	/* not cumulative */
	uint64_t	 count;
	double		 sum;		/* seconds */
	uint64_t	 tokens_in, tokens_out;
	double		 cost_usd;
};

/* A row as meter_walk hands it: its label values (borrowed). */
typedef void	(*meter_fn)(const char *const *, const struct meter_row *,
		    void *);

struct meter	*meter_new(void);
void		 meter_free(struct meter *);
void		 meter_event(struct meter *, const char *, const json_t *,
		    uint64_t);
void		 meter_worker(struct meter *, const char *, const char *,
		    const char *, uint64_t, const json_t *);
void		 meter_loop(struct meter *, const char *, uint64_t);
void		 meter_merge(struct meter *, struct meter *);
void		 meter_walk(struct meter *, enum meter_table, meter_fn, void *);
const double	*meter_bounds(enum meter_table, size_t *);
const char	*meter_outcome(const json_t *);
void		 meter_leaked(struct meter *, unsigned);
void		 meter_count(struct meter *, enum meter_table,
		    const char *const *);
uint64_t	 meter_leaked_total(struct meter *);

#endif
