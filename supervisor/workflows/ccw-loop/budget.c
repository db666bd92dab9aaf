/*
 * budget.c: a loop's budget (the state's front-end "budget": cost,
 * tokens, wall time) held against its usage as it goes: finished runs'
 * usage plus the live workers' PROGRESS counts, and the loop's running
 * time not counting time held.  50 % and 80 %: budget_warning; 100 %:
 * the loop held where it is (hold.c), status paused with pause_reason,
 * budget_reached.  A resume that raised it thaws the loop; one that did
 * not pauses it again at once.  The check itself is engine/budget.c's.
 */
#include <config.h>

#include <stdlib.h>

#include <event2/event.h>
#include <jansson.h>

#include "agent.h"
#include "budget.h"
#include "clock.h"
#include "log.h"
#include "loop.h"
#include "loopint.h"
#include "state.h"
#include "xmalloc.h"

struct loop_budget {
	struct loop	*l;
	struct budget	 b;
	struct event	*tick;		/* the wall time's next mark */
	uint64_t	 wall;		/* ms counted before `since` */
	uint64_t	 since;		/* counting since (mono ms); 0: held */
	int		 held;		/* held by this budget */
};

static void	 budget_tick_cb(evutil_socket_t, short, void *);

/* The pause landed: the front ends hear the status (or why it failed). */
static void
budget_saved(struct state_store *s, int rc, const char *err, void *arg)
{
	struct loop	*l = arg;

	if (rc != 0)
		log_warnx("state %s: the budget's pause: %s", l->cfg.id, err);
	loop_event(l, "LOOP_STATE_UPDATE", merge_state_event(
	    state_store_get(s), NULL, 0));
}

/* The limits the state's "budget" sets (a bad one: none, logged). */
static void
budget_read(struct loop_budget *lb, const json_t *st)
{
	double	 lim[BUDGET_NKINDS];
	char	*err = NULL;

	if (budget_parse(json_object_get(st, "budget"), lim, &err) != 0) {
		log_warnx("loop %s: %s: no budget", lb->l->cfg.id, err);
		free(err);
	}
	budget_limits(&lb->b, lim);
}

/* skill_state.usage, made as looprun.c makes it when there is none. */
static json_t *
budget_usage(struct loop *l)
{
	json_t	*u = json_object_get(l->ss, "usage");

	if (!json_is_object(u)) {
		u = json_pack("{s:i, s:i, s:n}", "input_tokens", 0,
		    "output_tokens", 0, "cost_usd");
		json_object_set_new(l->ss, "usage", u);
	}
	return u;
}

/*
 * What the loop used: the finished runs' sum, each live worker's last
 * PROGRESS, the running time (not while held, by the budget or by a
 * person); the time goes into usage.wall_ms (a later run goes on from
 * it) while a budget is set.
 */
static void
budget_measure(struct loop_budget *lb)
{
	struct loop	*l = lb->l;
	const json_t	*u = json_object_get(l->ss, "usage");
	struct loop_run	*r;
	uint64_t	 wall, now = clock_mono_ms();

	/* held by a person (hold.c): the clock stands from the hold on */
	if (loop_held(l) && !lb->held && lb->since != 0) {
		lb->wall += l->held_at > lb->since ? l->held_at - lb->since : 0;
		lb->since = 0;
	} else if (!loop_held(l) && !lb->held && lb->since == 0)
		lb->since = now;
	wall = lb->wall;
	if (lb->since != 0)
		wall += now - lb->since;
	lb->b.used[BUDGET_COST] = json_number_value(json_object_get(u,
	    "cost_usd"));
	lb->b.used[BUDGET_TOKENS] = json_number_value(json_object_get(u,
	    "input_tokens")) + json_number_value(json_object_get(u,
	    "output_tokens"));
	lb->b.used[BUDGET_WALL] = (double)wall;
	TAILQ_FOREACH(r, &l->runs, entry) {
		if (r->a == NULL || r->result != NULL)
			continue;	/* not started, or counted in usage */
		lb->b.used[BUDGET_COST] += r->a->live_cost;
		lb->b.used[BUDGET_TOKENS] += (double)(r->a->live_in +
		    r->a->live_out);
	}
	if (budget_any(lb->b.limit))
		json_object_set_new(budget_usage(l), "wall_ms",
		    json_integer((json_int_t)wall));
}

/* Arm the tick at the wall time's next mark not passed (none held). */
static void
budget_arm(struct loop_budget *lb)
{
	double		at;
	struct timeval	tv;

	evtimer_del(lb->tick);
	if (lb->held || loop_held(lb->l))
		return;		/* held: the clock stands, till unhold's kick */
	if ((at = budget_next_mark(lb->b.limit[BUDGET_WALL],
	    lb->b.used[BUDGET_WALL])) < 0)
		return;
	tv.tv_sec = (time_t)(at / 1000);
	tv.tv_usec = (suseconds_t)((at - tv.tv_sec * 1000.0) * 1000);
	evtimer_add(lb->tick, &tv);
}

/* A warning to the loop's events. */
static void
budget_warn(void *arg, json_t *fields)
{
	struct loop	*l = arg;

	log_info("loop %s: %d %% of its %s budget used", l->cfg.id,
	    (int)json_integer_value(json_object_get(fields, "percent")),
	    json_string_value(json_object_get(fields, "budget")));
	loop_event(l, "budget_warning", fields);
}

/*
 * Kind k is reached: the loop held (its workers frozen, no new start),
 * its running time stopped, status paused with the reason, the event.
 * The status is the engine's pause (running -> paused), committed now.
 */
static void
budget_hold(struct loop_budget *lb, int k)
{
	struct loop	*l = lb->l;
	json_t		*patch;
	char		*why = budget_reason(&lb->b, k);

	if (!loop_held(l) && loop_hold(l, why) != 0) {
		free(why);		/* ending: nothing to hold */
		return;
	}
	lb->held = 1;
	if (lb->since != 0)
		lb->wall += clock_mono_ms() - lb->since;
	lb->since = 0;
	evtimer_del(lb->tick);
	log_warnx("loop %s: paused: %s", l->cfg.id, why);
	patch = json_pack("{s:{s:O}, s:s}", "skill_state", "usage",
	    budget_usage(l), "pause_reason", why);
	state_store_update(l->store, patch);
	json_decref(patch);
	if (state_store_transition(l->store, "pause", why) != 0)
		log_warnx("state %s: transition to paused refused", l->cfg.id);
	state_store_commit(l->store, budget_saved, l);
	prompt_record(l->store, json_pack("{s:s, s:s}", "event",
	    "budget_reached", "reason", why));
	loop_event(l, "budget_reached", budget_reached_event(&lb->b, k, why));
	free(why);
}

/*
 * The usage against the budget, now: after a PROGRESS, at each decision
 * (a run's end kicks one), the wall time's mark, a resume.  Held already: nothing more to do.
 */
void
loop_budget_check(struct loop *l)
{
	struct loop_budget	*lb = l->budget;
	int			 k;

	if (lb == NULL || lb->held || l->phase == LP_ENDING ||
	    l->phase == LP_DONE)
		return;
	budget_measure(lb);
	if ((k = budget_check(&lb->b, budget_warn, l)) >= 0)
		budget_hold(lb, k);
	else
		budget_arm(lb);
}

/* The wall time reached a mark. */
static void
budget_tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	loop_budget_check(arg);
}

/*
 * The status is running again (st, the file as the front end wrote it):
 * its budget, raised or not, read; a loop this budget held goes on when
 * the budget allows it, else it is paused again at once with the reason
 * (1: the budget keeps it held, the caller does nothing more).
 */
int
loop_budget_resumed(struct loop *l, const json_t *st)
{
	struct loop_budget	*lb = l->budget;
	int			 k;

	if (lb == NULL)
		return 0;
	budget_read(lb, st);
	if (!lb->held) {
		loop_budget_check(l);
		return lb->held;
	}
	budget_measure(lb);
	if ((k = budget_check(&lb->b, budget_warn, l)) >= 0) {
		lb->held = 0;		/* paused again: a new hold's words */
		budget_hold(lb, k);
		return 1;
	}
	lb->held = 0;
	lb->since = clock_mono_ms();
	log_info("loop %s: resumed within its raised budget", l->cfg.id);
	if (loop_held(l))
		loop_unhold(l);
	budget_arm(lb);
	return 0;
}

/* Save the running time with the loop's next commit (loop_save). */
void
loop_budget_note(struct loop *l)
{
	if (l->budget != NULL)
		budget_measure(l->budget);
}

/* The loop's budget, read from its state; counting starts now. */
struct loop_budget *
loop_budget_new(struct loop *l)
{
	struct loop_budget	*lb = xcalloc(1, sizeof *lb);
	const json_t		*u = json_object_get(l->ss, "usage");

	lb->l = l;
	lb->tick = evtimer_new(l->base, budget_tick_cb, l);
	lb->wall = (uint64_t)json_integer_value(json_object_get(u, "wall_ms"));
	lb->since = clock_mono_ms();
	budget_read(lb, state_store_get(l->store));
	return lb;
}

/* Its tick stopped and freed. */
void
loop_budget_free(struct loop_budget *lb)
{
	if (lb == NULL)
		return;
	if (lb->tick != NULL)
		event_free(lb->tick);
	free(lb);
}
