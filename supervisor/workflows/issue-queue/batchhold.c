/*
 * batchhold.c: a batch's budget: its usage held against it, at 100 %
 * every running item held where it is (loops paused, workers frozen)
 * for at most --hold-timeout, and a raised budget that a front end
 * writes into the batch's own state file (watched) ending the hold.
 * It calls batchsave.c's saves and stop; batch.c starts and frees it.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "batch.h"
#include "batchint.h"
#include "batchstate.h"
#include "budget.h"
#include "chan.h"
#include "clock.h"
#include "filewatch.h"
#include "host.h"
#include "log.h"
#include "progress.h"
#include "state.h"
#include "xmalloc.h"

#define BATCH_POLL_MS		250	/* without inotify */

/* Its limits, budget.c's kinds, from the configuration (a raise changes it). */
static void
batch_limits(const struct batch *b, double *limit)
{
	memset(limit, 0, BUDGET_NKINDS * sizeof *limit);
	limit[BUDGET_COST] = b->cfg.max_cost_usd;
	limit[BUDGET_TOKENS] = (double)b->cfg.max_tokens;
	limit[BUDGET_WALL] = b->cfg.max_wall_ms;
}

/* The batch's running time so far (ms): never while it is held. */
static uint64_t
batch_wall(const struct batch *b)
{
	return b->wall_ms + (b->run_since != 0 ? clock_mono_ms() -
	    b->run_since : 0);
}

/* context.usage.wall_ms, with a --max-time (a resumed batch's start). */
static void
batch_wall_note(struct batch *b)
{
	json_t	*ctx = json_object_get(b->st, "context"), *u;

	if (b->cfg.max_wall_ms <= 0 || ctx == NULL)
		return;
	if ((u = json_object_get(ctx, "usage")) == NULL)
		json_object_set_new(ctx, "usage", u = json_object());
	json_object_set_new(u, "wall_ms", json_integer((json_int_t)
	    batch_wall(b)));
}

/* The running clock stops (a hold) ... */
static void
batch_wall_stop(struct batch *b)
{
	b->wall_ms = batch_wall(b);
	b->run_since = 0;
	batch_wall_note(b);
	if (b->wall_ev != NULL)
		evtimer_del(b->wall_ev);
}

/*
 * ... or goes (the start, a hold's end): its timer armed at the next
 * mark of --max-time not passed (50, 80, 100 %), where batch_budget
 * looks again.
 */
static void
batch_wall_go(struct batch *b)
{
	double	wait;

	if (b->run_since == 0)
		b->run_since = clock_mono_ms();
	if (b->wall_ev != NULL && (wait = budget_next_mark(b->cfg.max_wall_ms,
	    (double)batch_wall(b))) >= 0)
		chan_arm_ms(b->wall_ev, (uint64_t)wait);
}

/* A mark of the running time: the budget checked, the next one armed. */
static void
batch_wall_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct batch	*b = arg;

	(void)fd;
	(void)ev;
	if (b->finishing)
		return;
	batch_budget(b);
	if (!b->held)
		batch_wall_go(b);
}

/*
 * The limits into the state: context's max_cost_usd and max_tokens, and
 * the top-level budget a front end raises (as a loop's, budget.c's keys).
 */
void
batch_limits_set(struct batch *b)
{
	json_t	*ctx = json_object_get(b->st, "context");
	double	 limit[BUDGET_NKINDS];

	batch_limits(b, limit);
	json_object_set_new(ctx, "max_cost_usd", b->cfg.max_cost_usd > 0 ?
	    json_real(b->cfg.max_cost_usd) : json_null());
	json_object_set_new(ctx, "max_tokens", b->cfg.max_tokens > 0 ?
	    json_integer(b->cfg.max_tokens) : json_null());
	json_object_set_new(ctx, "max_wall_ms", b->cfg.max_wall_ms > 0 ?
	    json_integer((json_int_t)b->cfg.max_wall_ms) : json_null());
	json_object_set_new(b->st, "budget", budget_json(limit));
}

/* The summed usage (context.usage) and the limits, for budget_check. */
static void
batch_budget_fill(const struct batch *b, struct budget *bu)
{
	const json_t	*u = json_object_get(json_object_get(b->st, "context"),
			    "usage");

	memset(bu, 0, sizeof *bu);
	bu->used[BUDGET_COST] = json_number_value(json_object_get(u,
	    "cost_usd"));
	bu->used[BUDGET_TOKENS] = (double)(json_integer_value(
	    json_object_get(u, "input_tokens")) + json_integer_value(
	    json_object_get(u, "output_tokens")));
	bu->used[BUDGET_WALL] = (double)batch_wall(b);
	batch_limits(b, bu->limit);
	bu->warned = b->warned;
}

/* A budget warning of the batch's, on its events. */
static void
batch_budget_warn(void *arg, json_t *fields)
{
	batch_emit(arg, "budget_warning", fields);
}

/* The hold's time is up: its items stopped (pending), exit 1. */
static void
batch_hold_timeout_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct batch	*b = arg;
	char		*why;

	(void)fd;
	(void)ev;
	xasprintf(&why, "%s (held %g s: --hold-timeout)", b->end_reason,
	    b->cfg.hold_timeout);
	log_warnx("batch %s: %s", b->id, why);
	batch_stop_all(b, BE_BUDGET, why);
	free(why);
}

/* context.hold_deadline, and the timer that ends the hold then. */
static void
batch_hold_arm(struct batch *b)
{
	struct timespec	 ts;
	char		 at[40];
	double		 s = b->cfg.hold_timeout;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)s;
	ts.tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	clock_iso(&ts, 1, at, sizeof at);
	json_object_set_new(json_object_get(b->st, "context"),
	    "hold_deadline", json_string(at));
	chan_arm_ms(b->hold_ev, (uint64_t)(s * 1000));
}

/*
 * One item held: a loop (its workers frozen, paused with the reason) or
 * a worker (frozen); one that cannot be is stopped (pending again).
 */
static void
batch_item_hold(struct batch_item *bi, const char *reason)
{
	struct batch	*b = bi->b;

	if (bi->worker != NULL) {
		if (b->cfg.worker_hold == NULL || b->cfg.worker_hold(
		    b->cfg.arg, bi->worker, reason) != 0) {
			bi->budget_stop = 1;	/* pending, a raise or not */
			b->cfg.worker_stop(b->cfg.arg, bi->worker);
		}
	} else if (bi->phase == BI_OPEN || (bi->phase == BI_RUN &&
	    host_loop_hold(bi->hl, reason) != 0)) {
		bi->budget_stop = 1;
		host_loop_stop(bi->hl, reason);
	}
}

/*
 * The budget: no new start, every running item held where it is, the
 * batch paused with the reason until a raised budget or the hold's
 * deadline (--hold-timeout; 0: stopped at once, as before the hold).
 */
static void
batch_hold_all(struct batch *b, const char *reason)
{
	size_t	i;

	if (b->end != BE_NONE)
		return;
	if (b->cfg.hold_timeout <= 0) {
		batch_stop_all(b, BE_BUDGET, reason);
		return;
	}
	b->end = BE_BUDGET;
	b->end_reason = xstrdup(reason);
	b->held = 1;
	batch_wall_stop(b);
	batch_emit(b, "budget_exceeded", json_pack("{s:s}", "reason", reason));
	for (i = 0; i < b->nitems; i++)
		batch_item_hold(&b->items[i], reason);
	json_object_set_new(b->st, "status", json_string("paused"));
	json_object_set_new(json_object_get(b->st, "context"), "pause_reason",
	    json_string(reason));
	batch_hold_arm(b);
	batch_save(b);
	event_active(b->pump_ev, EV_TIMEOUT, 0);
}

/* The hold is over: every held item goes on, new starts too. */
static void
batch_unhold_all(struct batch *b)
{
	struct batch_item	*bi;
	size_t			 i;

	log_info("batch %s: the raised budget ends its hold", b->id);
	b->held = 0;
	b->end = BE_NONE;
	free(b->end_reason);
	b->end_reason = NULL;
	event_del(b->hold_ev);
	batch_wall_go(b);
	for (i = 0; i < b->nitems; i++) {
		bi = &b->items[i];
		if (bi->worker != NULL && b->cfg.worker_unhold != NULL)
			b->cfg.worker_unhold(b->cfg.arg, bi->worker);
		else if (bi->worker == NULL && bi->phase == BI_RUN)
			host_loop_unhold(bi->hl);
	}
	json_object_set_new(b->st, "status", json_string("running"));
	json_object_del(json_object_get(b->st, "context"), "pause_reason");
	json_object_del(json_object_get(b->st, "context"), "hold_deadline");
	batch_emit(b, "batch_resumed", json_pack("{s:O}", "budget",
	    json_object_get(b->st, "budget")));
	event_active(b->pump_ev, EV_TIMEOUT, 0);
}

/*
 * At 100 % of kind k: every item held (the event first, the loops' too:
 * notifications take it).  Held already (a raise too small): held still,
 * budget_reached said again with the new figures.
 */
static void
batch_budget_reached(struct batch *b, const struct budget *bu, int k)
{
	char	*why = budget_reason(bu, k);

	batch_emit(b, "budget_reached", budget_reached_event(bu, k, why));
	if (b->held) {
		json_object_set_new(json_object_get(b->st, "context"),
		    "pause_reason", json_string(why));
		json_object_set_new(b->st, "status", json_string("paused"));
	} else
		batch_hold_all(b, why);
	free(why);
}

/*
 * The batch's usage against its budget (engine/budget.c's check, the
 * loops' too): a warning at 50 % and at 80 % of each (once), and at
 * 100 % no new start and every item held.
 */
void
batch_budget(struct batch *b)
{
	struct budget	 bu;
	int		 k;

	batch_wall_note(b);
	batch_budget_fill(b, &bu);
	k = budget_check(&bu, batch_budget_warn, b);
	b->warned = bu.warned;
	if (k >= 0 && b->end == BE_NONE)
		batch_budget_reached(b, &bu, k);
}

/*
 * The file says another budget (a front end's raise, batchstore_raise):
 * taken as the batch's (a mark the usage is under again told again); a
 * held batch goes on if it allows, else stays held and says so.
 */
static void
batch_raised(struct batch *b, const json_t *given)
{
	struct budget	 bu;
	double		 limit[BUDGET_NKINDS];
	char		*err = NULL;
	int		 k;

	if (budget_parse(given, limit, &err) != 0) {
		log_warnx("batch %s: state.json: %s: ignored", b->id, err);
		free(err);
		return;
	}
	batch_budget_fill(b, &bu);
	budget_limits(&bu, limit);
	b->cfg.max_cost_usd = limit[BUDGET_COST];
	b->cfg.max_tokens = (long long)limit[BUDGET_TOKENS];
	b->cfg.max_wall_ms = limit[BUDGET_WALL];
	batch_limits_set(b);
	log_info("batch %s: budget raised by a front end", b->id);
	batch_emit(b, "budget_raised", json_pack("{s:O}", "budget",
	    json_object_get(b->st, "budget")));
	k = budget_check(&bu, batch_budget_warn, b);
	b->warned = bu.warned;
	if (k >= 0 && (b->end == BE_NONE || b->held))
		batch_budget_reached(b, &bu, k);
	else if (k < 0 && b->held)
		batch_unhold_all(b);
	else if (!b->held)
		batch_wall_go(b);	/* the marks of the new --max-time */
	batch_save(b);
}

/*
 * state.json read (not when it is the batch's own last write: a big
 * batch saves often): a top-level budget other than ours is a raise.
 * While a save of ours is in flight (may_wait) the change is most likely
 * that save, whose inode is not known yet (the committer renames, syncs
 * the directory, then records it): looked at once it is (watch_ev, from
 * batch_save_done), not read whole on every save (issue 30: 16% of a
 * batch's CPU).
 */
static void
batch_watch_read(struct batch *b, int may_wait)
{
	struct stat	 sb;
	json_t		*st;
	char		*buf = NULL, *err = NULL;
	size_t		 len;

	b->watch_due = may_wait && b->saving;
	if (b->watch_due || b->finishing || (fstatat(b->store.dirfd, "state.json", &sb,
	    AT_SYMLINK_NOFOLLOW) == 0 && sb.st_ino == b->store.ino))
		return;
	if (progress_read_file(b->store.dirfd, "state.json",
	    "state.json", &buf, &len, NULL, &err) != 0) {
		free(err);
		return;
	}
	st = json_loadb(buf, len, 0, NULL);
	free(buf);
	if (json_is_object(json_object_get(st, "budget")) && !json_equal(
	    json_object_get(st, "budget"), json_object_get(b->st, "budget")))
		batch_raised(b, json_object_get(st, "budget"));
	json_decref(st);
}

/* inotify: state.json written whole (ours or a front end's). */
static void
batch_watch_cb(void *arg)
{
	batch_watch_read(arg, 1);
}

/* A change seen during a save of ours, now that its inode is known. */
static void
batch_watch_due_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	batch_watch_read(arg, 0);
}

/* Without inotify: a look every BATCH_POLL_MS. */
static void
batch_poll_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct batch	*b = arg;

	(void)fd;
	(void)ev;
	batch_watch_read(b, 0);
	chan_arm_ms(b->poll_ev, BATCH_POLL_MS);
}

/* The hold's timer and the watch on the batch's state.json. */
void
batch_hold_start(struct batch *b)
{
	char	*err = NULL;

	b->hold_ev = evtimer_new(b->base, batch_hold_timeout_cb, b);
	b->wall_ev = evtimer_new(b->base, batch_wall_cb, b);
	b->watch_ev = event_new(b->base, -1, 0, batch_watch_due_cb, b);
	b->wall_ms = (uint64_t)json_integer_value(json_object_get(
	    json_object_get(json_object_get(b->st, "context"), "usage"),
	    "wall_ms"));	/* a resumed batch's, so far */
	batch_wall_go(b);
	if ((b->watch = filewatch_new(b->base, b->store.dirfd, "state.json",
	    FILEWATCH_WHOLE, batch_watch_cb, b, &err)) != NULL)
		return;
	log_warnx("batch %s: %s; polling its state instead", b->id, err);
	free(err);
	b->poll_ev = evtimer_new(b->base, batch_poll_cb, b);
	chan_arm_ms(b->poll_ev, BATCH_POLL_MS);
}

void
batch_hold_free(struct batch *b)
{
	filewatch_free(b->watch);
	if (b->poll_ev != NULL)
		event_free(b->poll_ev);
	if (b->hold_ev != NULL)
		event_free(b->hold_ev);
	if (b->wall_ev != NULL)
		event_free(b->wall_ev);
	if (b->watch_ev != NULL)
		event_free(b->watch_ev);
}
