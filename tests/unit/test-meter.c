/*
 * test-meter.c: a host's meter: a worker_result's outcome (success, else
 * its error kind as it comes, else its status), the histogram's buckets,
 * tokens and cost by tool, a loop's end by final status, the cap of
 * label sets with its one overflow row, and two meters merged.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "meter.h"
#include "tap.h"

/* What a walk saw: rows, the total count, the overflow row's count. */
struct seen {
	size_t		 rows;
	unsigned long long count, other, tin, tout;
	double		 cost, sum;
	uint64_t	 bucket[METER_NBOUNDS_MAX];
};

/* meter_walk's visit: one row added to what was seen. */
static void
visit(const char *const *lv, const struct meter_row *r, void *arg)
{
	struct seen	*s = arg;
	size_t		 i;

	s->rows++;
	s->count += r->count;
	s->sum += r->sum;
	s->tin += r->tokens_in;
	s->tout += r->tokens_out;
	s->cost += r->cost_usd;
	for (i = 0; i < METER_NBOUNDS_MAX; i++)
		s->bucket[i] += r->bucket[i];
	if (strcmp(lv[0], METER_OTHER) == 0)
		s->other += r->count;
}

/* A walk of one table. */
static struct seen
walk(struct meter *m, enum meter_table t)
{
	struct seen	s;

	memset(&s, 0, sizeof s);
	meter_walk(m, t, visit, &s);
	return s;
}

/* The outcome label: success, the error kind as it comes, the status. */
static void
test_outcome(void)
{
	json_t	*r;

	r = json_pack("{s:s, s:s}", "status", "success", "error_kind", "x");
	tap_is_str(meter_outcome(r), "success", "success wins");
	json_decref(r);
	r = json_pack("{s:s, s:s}", "status", "failed", "error_kind",
	    "some_new_kind");
	tap_is_str(meter_outcome(r), "some_new_kind",
	    "a failure: its error kind, whatever it is");
	json_decref(r);
	r = json_pack("{s:s, s:n}", "status", "partial", "error_kind");
	tap_is_str(meter_outcome(r), "partial", "no kind: the status");
	json_decref(r);
	r = json_object();
	tap_is_str(meter_outcome(r), "unknown", "nothing: unknown");
	json_decref(r);
}

/* Events in, rows out: buckets, usage, loop ends. */
static void
test_events(void)
{
	struct meter	*m = meter_new();
	struct seen	 s;
	json_t		*e;
	const double	*b;
	size_t		 n;

	b = meter_bounds(METER_WORKERS, &n);
	tap_ok(n == 7 && b[0] == 1 && b[6] == 3600, "worker bounds 1 .. 3600");
	e = json_pack("{s:s, s:s, s:s, s:i, s:{s:i, s:i, s:f}}", "role",
	    "develop", "tool", "claude", "status", "success", "duration_ms",
	    4500, "usage", "input_tokens", 10, "output_tokens", 3,
	    "cost_usd", 0.5);
	meter_event(m, "worker_result", e, 0);
	meter_event(m, "worker_progress", e, 0);	/* not counted */
	json_decref(e);
	e = json_pack("{s:s, s:s, s:s, s:i, s:n}", "role", "validate",
	    "tool", "bash", "status", "failed", "duration_ms", 7200000,
	    "usage");
	meter_event(m, "worker_result", e, 0);
	json_decref(e);
	s = walk(m, METER_WORKERS);
	tap_is_int((long long)s.rows, 2, "two label sets");
	tap_is_int((long long)s.bucket[1], 1, "4.5 s in the le=5 bucket");
	tap_is_int((long long)(s.bucket[0] + s.bucket[2] + s.bucket[3] +
	    s.bucket[4] + s.bucket[5] + s.bucket[6]), 0,
	    "two hours in no bucket but +Inf");
	tap_ok(s.sum > 7204.4 && s.sum < 7204.6, "sum in seconds (%f)", s.sum);
	s = walk(m, METER_TOOLS);
	tap_ok(s.rows == 2 && s.tin == 10 && s.tout == 3 && s.cost == 0.5,
	    "tokens and cost by tool");
	e = json_pack("{s:s}", "final_status", "failed");
	meter_event(m, "LOOP_COMPLETED", e, 61000);
	json_decref(e);
	s = walk(m, METER_LOOPS);
	tap_ok(s.rows == 1 && s.count == 1 && s.bucket[1] == 1,
	    "a loop's end: 61 s in the le=300 bucket");
	meter_free(m);
}

/* Past the cap every new label set is one overflow row; merged too. */
static void
test_cap(void)
{
	struct meter	*a = meter_new(), *b = meter_new();
	struct seen	 s;
	char		 kind[32];
	int		 i;

	for (i = 0; i < METER_SERIES_MAX + 44; i++) {
		snprintf(kind, sizeof kind, "kind_%d", i);
		meter_worker(a, "develop", "bash", kind, 1000, NULL);
	}
	meter_worker(a, "develop", "bash", "kind_0", 1000, NULL);
	s = walk(a, METER_WORKERS);
	tap_is_int((long long)s.rows, METER_SERIES_MAX + 1,
	    "%d label sets and one overflow row", METER_SERIES_MAX);
	tap_is_int((long long)s.other, 44, "the overflow row counts the rest");
	tap_is_int((long long)s.count, METER_SERIES_MAX + 45,
	    "every result counted");
	meter_worker(b, "develop", "bash", "kind_0", 1000, NULL);
	meter_merge(b, a);
	s = walk(b, METER_WORKERS);
	tap_is_int((long long)s.count, METER_SERIES_MAX + 46,
	    "merged: every result counted");
	tap_ok(s.rows <= METER_SERIES_MAX + 1, "merged: still capped (%zu)",
	    s.rows);
	meter_free(a);
	meter_free(b);
}

int
main(void)
{
	test_outcome();
	test_events();
	test_cap();
	return tap_done();
}
