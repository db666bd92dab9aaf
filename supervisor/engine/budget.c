/*
 * budget.c: one budget against its usage, for a loop and a batch alike:
 * the kinds' table (their state keys, flags and units), the check that
 * gives each 50 % and 80 % warning once and finds the 100 % mark, the
 * state's "budget" object parsed and made, the reason and the event.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "state.h"
#include "xmalloc.h"

#define BK_COST		"max_cost_usd"
#define BK_TOKENS	"max_tokens"
#define BK_WALL		"max_wall_ms"

/* One row a kind: its event name, state key, flag, and how it is said. */
static const struct budget_row {
	const char	*name;		/* the events' "budget" */
	const char	*key;		/* the state's budget.KEY */
	const char	*flag;		/* run's and batch's option */
	const char	*fmt;		/* "budget: ... reached FLAG ..." */
	int		 integer;	/* a count: an integer in the state */
} budget_rows[BUDGET_NKINDS] = {
	{ "cost_usd", BK_COST, "--max-cost-usd",
	    "budget: cost %.4f USD reached %s %.4f", 0 },
	{ "tokens", BK_TOKENS, "--max-tokens",
	    "budget: %.0f tokens reached %s %.0f", 1 },
	{ "wall_ms", BK_WALL, "--max-time",
	    "budget: %.0f ms of running time reached %s %.0f", 1 },
};

/* The state's top-level "budget" (statevalid.c checks it with these). */
const struct state_vrule budget_vrules[] = {
	STATE_R(BK_COST, V_NUM, V_NULL),
	STATE_R_INT(BK_TOKENS, V_NULL, 0),
	STATE_R_INT(BK_WALL, V_NULL, 0),
	STATE_R_END
};

/* The warnings' marks, in percent; 100 % is the end, not a warning. */
static const unsigned budget_marks[] = { 50, 80 };
#define BUDGET_NMARKS	(sizeof budget_marks / sizeof budget_marks[0])

/*
 * A running time's wait (limit and used in ms) until its next mark not
 * passed: a warning's, else 100 %; -1 when there is no limit or every
 * mark is passed.  The loops' and the batch's timers arm on it, so they
 * look again exactly where budget_check has something to say.
 */
double
budget_next_mark(double limit, double used)
{
	size_t	m;
	double	at;

	if (limit <= 0)
		return -1;
	for (m = 0; m <= BUDGET_NMARKS; m++) {
		at = limit * (m < BUDGET_NMARKS ? budget_marks[m] : 100) / 100;
		if (at > used)
			return at - used + 1;
	}
	return -1;
}

/* A kind's state key, for the front ends that write it. */
const char *
budget_key(int k)
{
	return budget_rows[k].key;
}

/* A kind's option, for messages. */
const char *
budget_flag(int k)
{
	return budget_rows[k].flag;
}

/*
 * New limits (a resume that raised them): a mark the usage is under
 * again may be told again, a mark still passed is not told twice.
 */
void
budget_limits(struct budget *b, const double *limit)
{
	unsigned	m;
	int		k;

	for (k = 0; k < BUDGET_NKINDS; k++) {
		if (limit[k] == b->limit[k])
			continue;
		b->limit[k] = limit[k];
		for (m = 0; m < BUDGET_NMARKS; m++)
			if (limit[k] <= 0 || 100.0 * b->used[k] / limit[k] <
			    budget_marks[m])
				b->warned &= ~(1u << (k * BUDGET_NMARKS + m));
	}
}

/*
 * The usage against the limits: each 50 % and 80 % mark passed and not
 * told yet goes to warn (once); the first kind at 100 % or more is
 * returned, -1 when none is.
 */
int
budget_check(struct budget *b, budget_warn_fn warn, void *arg)
{
	unsigned	m, bit;
	double		pct;
	int		k, hit = -1;

	for (k = 0; k < BUDGET_NKINDS; k++) {
		if (b->limit[k] <= 0)
			continue;
		pct = 100.0 * b->used[k] / b->limit[k];
		for (m = 0; m < BUDGET_NMARKS; m++) {
			bit = 1u << (k * BUDGET_NMARKS + m);
			if (pct < budget_marks[m] || (b->warned & bit))
				continue;
			b->warned |= bit;
			if (warn != NULL)
				warn(arg, json_pack("{s:s, s:f, s:f, s:i}",
				    "budget", budget_rows[k].name, "used",
				    b->used[k], "limit", b->limit[k], "percent",
				    (int)budget_marks[m]));
		}
		if (pct >= 100.0 && hit < 0)
			hit = k;
	}
	return hit;
}

/* Why kind k stopped the work: "budget: cost 0.51 USD reached ...". */
char *
budget_reason(const struct budget *b, int k)
{
	char	*s;

	xasprintf(&s, budget_rows[k].fmt, b->used[k], budget_rows[k].flag,
	    b->limit[k]);
	return s;
}

/* budget_reached's fields: budget, used, limit, reason. */
json_t *
budget_reached_event(const struct budget *b, int k, const char *reason)
{
	return json_pack("{s:s, s:f, s:f, s:s}", "budget", budget_rows[k].name,
	    "used", b->used[k], "limit", b->limit[k], "reason", reason);
}

/*
 * The state's "budget" object into limits (absent, null or a missing
 * key: 0, no limit): 0, or -1 and *err naming the bad member.
 */
int
budget_parse(const json_t *o, double *limit, char **err)
{
	const json_t	*v;
	int		 k;

	for (k = 0; k < BUDGET_NKINDS; k++)
		limit[k] = 0;
	if (o == NULL || json_is_null(o))
		return 0;
	if (!json_is_object(o)) {
		xasprintf(err, "budget: expected an object");
		return -1;
	}
	for (k = 0; k < BUDGET_NKINDS; k++) {
		v = json_object_get(o, budget_rows[k].key);
		if (v == NULL || json_is_null(v))
			continue;
		if (!json_is_number(v) || !isfinite(json_number_value(v)) ||
		    json_number_value(v) < 0) {
			xasprintf(err, "budget.%s: expected a number >= 0",
			    budget_rows[k].key);
			return -1;
		}
		limit[k] = json_number_value(v);
	}
	return 0;
}

/* Any limit set? */
int
budget_any(const double *limit)
{
	int	k;

	for (k = 0; k < BUDGET_NKINDS; k++)
		if (limit[k] > 0)
			return 1;
	return 0;
}

/*
 * A budget raised by a front end: the kinds given replace the saved
 * ones, the others stay (a loop's run --loop-id, a batch's --resume).
 */
json_t *
budget_merge(const json_t *saved, const json_t *given)
{
	json_t	*b;

	b = json_is_object(saved) ? json_deep_copy(saved) : json_object();
	json_object_update(b, (json_t *)given);
	return b;
}

/* The state's "budget" object for limits (a kind unset is left out). */
json_t *
budget_json(const double *limit)
{
	json_t	*o = json_object();
	int	 k;

	for (k = 0; k < BUDGET_NKINDS; k++) {
		if (limit[k] <= 0)
			continue;
		json_object_set_new(o, budget_rows[k].key,
		    budget_rows[k].integer ? json_integer((json_int_t)
		    limit[k]) : json_real(limit[k]));
	}
	return o;
}
