/*
 * meter.c: a host's counts for /metrics (meter.h): three tables of rows
 * keyed by label values, each capped at METER_SERIES_MAX label sets with
 * one overflow row, a histogram per row; one mutex, so that a reader on
 * another thread never sees a row half added.
 */
#include <config.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "meter.h"
#include "xmalloc.h"

#define METER_NTABLES	6
#define METER_NLABELS	3	/* the most labels a table has */

struct meter_series {
	char			*label[METER_NLABELS];
	struct meter_row	 row;
};

struct meter_tab {
	struct meter_series	*s[METER_SERIES_MAX + 1];	/* +1: other */
	size_t			 n;
};

struct meter {
	pthread_mutex_t		 mu;
	struct meter_tab	 tab[METER_NTABLES];
	uint64_t		 leaked;	/* processes past their worker */
};

/*
 * The histograms' upper bounds in seconds (HACKING.md "Adding a
 * metric"): a worker's turn from a second to an hour, a loop's from a
 * minute to a day; what is longer is counted only by +Inf.
 */
const double *
meter_bounds(enum meter_table t, size_t *n)
{
	static const double	workers[] = { 1, 5, 15, 60, 300, 900, 3600 };
	static const double	loops[] = { 60, 300, 900, 1800, 3600, 7200,
	    14400, 43200, 86400 };

	if (t == METER_LOOPS) {
		*n = sizeof loops / sizeof loops[0];
		return loops;
	}
	*n = t == METER_WORKERS ? sizeof workers / sizeof workers[0] : 0;
	return workers;
}

/* How many labels a table's rows carry. */
static size_t
meter_nlabels(enum meter_table t)
{
	return t == METER_WORKERS ? 3 : t == METER_NOTIFY_SENT ||
	    t == METER_NOTIFY_FAILED ? 2 : 1;
}

/* An empty registry: its owner feeds it and frees it. */
struct meter *
meter_new(void)
{
	struct meter	*m = xcalloc(1, sizeof *m);

	pthread_mutex_init(&m->mu, NULL);
	return m;
}

/* Every row and the registry. */
void
meter_free(struct meter *m)
{
	size_t	t, i, k;

	if (m == NULL)
		return;
	for (t = 0; t < METER_NTABLES; t++)
		for (i = 0; i <= METER_SERIES_MAX && m->tab[t].s[i] != NULL;
		    i++) {
			for (k = 0; k < METER_NLABELS; k++)
				free(m->tab[t].s[i]->label[k]);
			free(m->tab[t].s[i]);
		}
	pthread_mutex_destroy(&m->mu);
	free(m);
}

/*
 * The row of these label values (NULL: "unknown"), made if new; past
 * the cap every new label set lands in the one overflow row, so a
 * stream of odd values cannot grow the page without bound.  Locked.
 */
static struct meter_row *
meter_row(struct meter *m, enum meter_table t, const char *const *lv)
{
	struct meter_tab	*tab = &m->tab[t];
	size_t			 nl = meter_nlabels(t), i, k;
	const char		*v[METER_NLABELS];

	for (k = 0; k < nl; k++)
		v[k] = lv[k] != NULL && *lv[k] != '\0' ? lv[k] : "unknown";
	for (i = 0; i < tab->n; i++) {
		for (k = 0; k < nl; k++)
			if (strcmp(tab->s[i]->label[k], v[k]) != 0)
				break;
		if (k == nl)
			return &tab->s[i]->row;
	}
	if (tab->n == METER_SERIES_MAX) {	/* the overflow row, made once */
		i = METER_SERIES_MAX;
		if (tab->s[i] == NULL) {
			tab->s[i] = xcalloc(1, sizeof *tab->s[i]);
			for (k = 0; k < nl; k++)
				tab->s[i]->label[k] = xstrdup(METER_OTHER);
		}
		return &tab->s[i]->row;
	}
	tab->s[tab->n] = xcalloc(1, sizeof *tab->s[tab->n]);
	for (k = 0; k < nl; k++)
		tab->s[tab->n]->label[k] = xstrdup(v[k]);
	return &tab->s[tab->n++]->row;
}

/* One observation of ms into a row's histogram of table t. */
static void
meter_observe(struct meter_row *r, enum meter_table t, uint64_t ms)
{
	const double	*b;
	double		 s = (double)ms / 1000.0;
	size_t		 n, i;

	b = meter_bounds(t, &n);
	for (i = 0; i < n && s > b[i]; i++)
		;
	if (i < n)
		r->bucket[i]++;
	r->count++;
	r->sum += s;
}

/* A usage member as a count: absent, null or negative is 0. */
static uint64_t
meter_tokens(const json_t *usage, const char *k)
{
	const json_t	*v = json_object_get(usage, k);

	return json_is_number(v) && json_number_value(v) > 0 ?
	    (uint64_t)json_number_value(v) : 0;
}

/*
 * A worker's result: its duration by role, tool and outcome, its
 * tokens and cost (the usage object a RESULT carries, or NULL) by tool.
 */
void
meter_worker(struct meter *m, const char *role, const char *tool,
    const char *outcome, uint64_t ms, const json_t *usage)
{
	const char		*w[3] = { role, tool, outcome };
	const json_t		*c = json_object_get(usage, "cost_usd");
	struct meter_row	*r;

	pthread_mutex_lock(&m->mu);
	meter_observe(meter_row(m, METER_WORKERS, w), METER_WORKERS, ms);
	r = meter_row(m, METER_TOOLS, &tool);
	r->count++;
	r->tokens_in += meter_tokens(usage, "input_tokens");
	r->tokens_out += meter_tokens(usage, "output_tokens");
	if (json_is_number(c) && json_number_value(c) > 0)
		r->cost_usd += json_number_value(c);
	pthread_mutex_unlock(&m->mu);
}

/* A loop's end: its run's duration by its final status. */
void
meter_loop(struct meter *m, const char *status, uint64_t ms)
{
	pthread_mutex_lock(&m->mu);
	meter_observe(meter_row(m, METER_LOOPS, &status), METER_LOOPS, ms);
	pthread_mutex_unlock(&m->mu);
}

/*
 * A worker_result's outcome label: "success", else the kind of error
 * the result names (whatever kinds the worker knows; none is listed
 * here), else its status (failed, partial, needs_input).
 */
const char *
meter_outcome(const json_t *res)
{
	const char	*st = json_string_value(json_object_get(res, "status"));
	const char	*kind = json_string_value(json_object_get(res,
			    "error_kind"));

	if (st != NULL && strcmp(st, "success") == 0)
		return "success";
	if (kind != NULL && *kind != '\0')
		return kind;
	return st != NULL && *st != '\0' ? st : "unknown";
}

/*
 * A loop's event as the host publishes it: a worker_result is counted,
 * a LOOP_COMPLETED ends the loop's run of loop_ms (by final_status);
 * other events are not counted.
 */
void
meter_event(struct meter *m, const char *name, const json_t *f,
    uint64_t loop_ms)
{
	const json_t	*d;
	const char	*st;

	if (m == NULL || name == NULL)
		return;
	if (strcmp(name, "worker_result") == 0) {
		d = json_object_get(f, "duration_ms");
		meter_worker(m, json_string_value(json_object_get(f, "role")),
		    json_string_value(json_object_get(f, "tool")),
		    meter_outcome(f), json_is_number(d) &&
		    json_number_value(d) > 0 ? (uint64_t)json_number_value(d) :
		    0, json_object_get(f, "usage"));
	} else if (strcmp(name, "LOOP_COMPLETED") == 0) {
		st = json_string_value(json_object_get(f, "final_status"));
		if (st == NULL)
			st = json_string_value(json_object_get(f, "status"));
		meter_loop(m, st, loop_ms);
	}
}

/* Row src added into row dst. */
static void
meter_row_add(struct meter_row *dst, const struct meter_row *src)
{
	size_t	i;

	for (i = 0; i < METER_NBOUNDS_MAX; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	dst->sum += src->sum;
	dst->tokens_in += src->tokens_in;
	dst->tokens_out += src->tokens_out;
	dst->cost_usd += src->cost_usd;
}

/* Every row of src added into dst (serve: its roots' hosts into one). */
void
meter_merge(struct meter *dst, struct meter *src)
{
	const struct meter_tab	*tab;
	size_t			 t, i;

	if (src == NULL || src == dst)
		return;
	pthread_mutex_lock(&src->mu);
	pthread_mutex_lock(&dst->mu);
	dst->leaked += src->leaked;
	for (t = 0; t < METER_NTABLES; t++) {
		tab = &src->tab[t];
		for (i = 0; i <= METER_SERIES_MAX && tab->s[i] != NULL; i++)
			meter_row_add(meter_row(dst, (enum meter_table)t,
			    (const char *const *)tab->s[i]->label),
			    &tab->s[i]->row);
	}
	pthread_mutex_unlock(&dst->mu);
	pthread_mutex_unlock(&src->mu);
}

/* Each row of a table, in the order first seen, the overflow row last. */
void
meter_walk(struct meter *m, enum meter_table t, meter_fn fn, void *arg)
{
	const struct meter_tab	*tab = &m->tab[t];
	size_t			 i;

	pthread_mutex_lock(&m->mu);
	for (i = 0; i <= METER_SERIES_MAX && tab->s[i] != NULL; i++)
		fn((const char *const *)tab->s[i]->label, &tab->s[i]->row,
		    arg);
	pthread_mutex_unlock(&m->mu);
}

/*
 * n processes outlived their worker and were ended (leak.c): counted for
 * ccw_processes_leaked_total.
 */
void
meter_leaked(struct meter *m, unsigned n)
{
	pthread_mutex_lock(&m->mu);
	m->leaked += n;
	pthread_mutex_unlock(&m->mu);
}

/* How many processes outlived their worker, all told. */
uint64_t
meter_leaked_total(struct meter *m)
{
	uint64_t	n;

	pthread_mutex_lock(&m->mu);
	n = m->leaked;
	pthread_mutex_unlock(&m->mu);
	return n;
}

/*
 * One more of a counting table's row (the notifications': sink and
 * kind, or kind), by its label values.
 */
void
meter_count(struct meter *m, enum meter_table t, const char *const *lv)
{
	pthread_mutex_lock(&m->mu);
	meter_row(m, t, lv)->count++;
	pthread_mutex_unlock(&m->mu);
}
