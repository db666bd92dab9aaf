/*
 * budget.h: a budget (cost, tokens, wall time) held against what was
 * used: the one check of the 50 % and 80 % warnings and the 100 % mark,
 * shared by a loop (ccw-loop/budget.c) and a batch (batchsave.c), the
 * state's "budget" object read and checked, and the reason's words.
 */
#ifndef CCW_BUDGET_H
#define CCW_BUDGET_H

#include <jansson.h>

#include "state.h"		/* struct state_vrule */

/* The kinds a budget limits: the rows of budget.c's table. */
enum budget_kind {
	BUDGET_COST,	/* cost_usd, --max-cost-usd */
	BUDGET_TOKENS,	/* input plus output tokens, --max-tokens */
	BUDGET_WALL,	/* running time in ms, --max-time */
	BUDGET_NKINDS,
};

struct budget {
	double		 limit[BUDGET_NKINDS];	/* 0: no limit of that kind */
	double		 used[BUDGET_NKINDS];
	unsigned	 warned;		/* marks told: bit kind*2+mark */
};

/* A warning's fields (budget, used, limit, percent), stolen by the callee. */
typedef void	(*budget_warn_fn)(void *, json_t *);

extern const struct state_vrule budget_vrules[];	/* state "budget" */

int		 budget_check(struct budget *, budget_warn_fn, void *);
void		 budget_limits(struct budget *, const double *);
int		 budget_parse(const json_t *, double *, char **);
json_t		*budget_json(const double *);
json_t		*budget_merge(const json_t *, const json_t *);	/* saved, given */
int		 budget_any(const double *);
char		*budget_reason(const struct budget *, int);
json_t		*budget_reached_event(const struct budget *, int, const char *);
const char	*budget_key(int);	/* "max_cost_usd", ... */
const char	*budget_flag(int);	/* "--max-cost-usd", ... */
double		 budget_next_mark(double, double);	/* limit, used: ms to the next mark; -1 none */

#endif
