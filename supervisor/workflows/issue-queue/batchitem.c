/*
 * batchitem.c: one item's run: its loop opened on its root's host
 * (created, or found again by the id chosen when the batch was made)
 * and followed through its events to its end, or its one worker run by
 * the caller; then its record, its issue and CCW's queue file.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "batch.h"
#include "batchint.h"
#include "batchstate.h"
#include "batchtext.h"
#include "bqinput.h"
#include "bqqueue.h"
#include "clock.h"
#include "committer.h"
#include "flowdef.h"
#include "host.h"
#include "log.h"
#include "proto.h"
#include "state.h"
#include "sup.h"
#include "xmalloc.h"

/* --- items */

/*
 * A member of the item's record set: its text in state.json encoded
 * again at the next save (batchtext.c keeps the others'), the batch's
 * counts following its status.
 */
void
batch_item_set(struct batch_item *bi, const char *key, json_t *v)
{
	if (strcmp(key, "status") == 0) {
		batch_tally(bi->b, json_string_value(json_object_get(bi->rec,
		    "status")), -1);
		batch_tally(bi->b, json_string_value(v), 1);
	}
	json_object_set_new(bi->rec, key, v);
	batchtext_item(bi->b->store.text, bi->idx);
}

/* An item is over: its record, the counts, the save, the event. */
void
batch_item_end(struct batch_item *bi, const char *status, const char *reason)
{
	struct batch	*b = bi->b;
	char		 now[40];
	const char	*key;
	json_t		*iss;

	batch_now(now, sizeof now);
	batch_item_set(bi, "status", json_string(status));
	batch_item_set(bi, "ended_at", json_string(now));
	batch_item_set(bi, "failure_reason", reason != NULL ?
	    json_string(reason) : json_null());
	batch_item_set(bi, "duration_ms", json_integer((json_int_t)
	    (bi->t0 != 0 ? clock_mono_ms() - bi->t0 : 0)));
	key = json_string_value(json_object_get(bi->rec, "issue_id"));
	if (key == NULL)
		key = bi->def->id;
	iss = json_object_get(json_object_get(b->st, "issues"), key);
	if (iss != NULL) {
		batchtext_issue(b->store.text, key);
		json_object_set_new(iss, "status", json_string(
		    strcmp(status, "completed") == 0 ? "completed" : "failed"));
		json_object_set_new(iss, "executed_at", json_string(now));
		json_object_set_new(iss, "error", reason != NULL ?
		    json_string(reason) : json_null());
	}
	if (bi->phase == BI_RUN || bi->phase == BI_OPEN)
		b->nrun--;
	bi->phase = BI_DONE;
	bi->hl = NULL;
	if (reason != NULL && strcmp(status, "completed") != 0)
		batch_error(b, bi->def->id, reason);
	batch_count(b);
	batch_save(b);
	batch_queue_sync(bi, status, strcmp(status, "completed") != 0 ?
	    reason : NULL);
	batch_emit(b, "item_done", json_pack("{s:s, s:s, s:s?, s:s?, s:I,"
	    " s:O?}", "item_id", bi->def->id, "status", status,
	    "failure_reason", reason, "loop_id", json_string_value(
	    json_object_get(bi->rec, "loop_id")), "duration_ms", (json_int_t)
	    (bi->t0 != 0 ? clock_mono_ms() - bi->t0 : 0), "worktree",
	    json_object_get(bi->rec, "worktree")));
	event_active(b->pump_ev, EV_TIMEOUT, 0);
}

/* A loop stopped by us goes back to pending: --resume continues it. */
static void
batch_item_requeue(struct batch_item *bi)
{
	struct batch	*b = bi->b;

	batch_item_set(bi, "status", json_string("pending"));
	b->nrun--;
	bi->budget_stop = 0;
	bi->phase = BI_WAIT;
	bi->hl = NULL;
	batch_save(b);
	event_active(b->pump_ev, EV_TIMEOUT, 0);
}

/*
 * Why the budget stopped it: the batch's reason, or (a raise ended the
 * hold before its stop did) the budget's.
 */
static const char *
batch_item_stop_why(const struct batch_item *bi)
{
	return bi->b->end_reason != NULL ? bi->b->end_reason :
	    "stopped at the budget (it could not be held)";
}

/* The host opened the item's loop, or says why not. */
static void
batch_loop_opened(void *arg, struct host_loop *hl, int code, const char *err)
{
	struct batch_item	*bi = arg;

	if (err == NULL && code == 0) {
		bi->phase = BI_RUN;
		return;
	}
	(void)hl;
	/* its loop completed before a kill: done, never run again */
	if (code == EXIT_OK)
		batch_item_end(bi, "completed", NULL);
	else
		batch_item_end(bi, "failed", err != NULL ? err :
		    "the loop could not be opened");
}

/* The item's loop's events: kept for the view, passed on. */
static void
batch_loop_event(void *arg, struct host_loop *hl, uint64_t seq,
    const char *name, const json_t *fields)
{
	struct batch_item	*bi = arg;
	struct batch		*b = bi->b;
	const char		*s;
	json_t			*o, *u;

	(void)hl;
	if (strcmp(name, "worker_started") == 0 &&
	    (s = json_string_value(json_object_get(fields, "role"))) != NULL) {
		free(bi->role);
		bi->role = xstrdup(s);
		free(bi->progress);
		bi->progress = NULL;
	} else if (strcmp(name, "worker_progress") == 0 &&
	    (s = json_string_value(json_object_get(fields, "text"))) != NULL) {
		free(bi->progress);
		bi->progress = xstrdup(s);
	} else if (strcmp(name, "LOOP_COMPLETED") == 0) {
		free(bi->reason);
		s = json_string_value(json_object_get(fields,
		    "failure_reason"));
		bi->reason = s != NULL ? xstrdup(s) : NULL;
	}
	if (b->cfg.event != NULL) {
		o = json_deep_copy(fields);
		json_object_set_new(o, "item_id", json_string(bi->def->id));
		json_object_set_new(o, "seq", json_integer((json_int_t)seq));
		b->cfg.event(b->cfg.arg, name, o);
		json_decref(o);
	}
	/* the loop's own total (skill_state.usage, kept across its resumes
	 * and counting workers a stop closed): the item's, summed over all */
	if ((strcmp(name, "LOOP_STATE_UPDATE") == 0 ||
	    strcmp(name, "LOOP_COMPLETED") == 0) &&
	    json_is_object(u = json_object_get(fields, "usage")) &&
	    !json_equal(u, json_object_get(bi->rec, "usage"))) {
		batch_item_set(bi, "usage", json_deep_copy(u));
		batch_usage_sum(b);
		batch_save(b);
		batch_budget(b);
	}
}

/* The item's loop ended with an EXIT_* code. */
static void
batch_loop_done(void *arg, struct host_loop *hl, int code)
{
	struct batch_item	*bi = arg;
	struct batch		*b = bi->b;
	char			*why;

	(void)hl;
	free(bi->role);
	bi->role = NULL;
	if (code == EXIT_OK) {
		batch_item_end(bi, "completed", NULL);
		return;
	}
	if (code == EXIT_STOPPED && b->end == BE_STOP) {
		/* a signal: left executing, as a kill would leave it */
		b->nrun--;
		bi->phase = BI_WAIT;
		bi->hl = NULL;
		event_active(b->pump_ev, EV_TIMEOUT, 0);
		return;
	}
	if (code == EXIT_STOPPED && (b->end == BE_BUDGET || bi->budget_stop)) {
		batch_error(b, bi->def->id, batch_item_stop_why(bi));
		batch_item_requeue(bi);
		batch_queue_sync(bi, "pending", NULL);
		return;
	}
	if (bi->reason != NULL)
		why = xstrdup(bi->reason);
	else
		xasprintf(&why, "the loop ended with exit status %d%s", code,
		    code == EXIT_STOPPED ? " (stopped by a front end)" :
		    code == EXIT_PAUSED ? " (paused by a front end)" : "");
	batch_item_end(bi, "failed", why);
	free(why);
}

/*
 * A worker item's outcome: its usage is the item's, and so is its
 * worktree (branch, base, head, exact files, diff stat) when it had one.
 */
static void
batch_worker_done(void *arg, const char *status, const char *why,
    const json_t *rep, int stopped)
{
	struct batch_item	*bi = arg;
	struct batch		*b = bi->b;
	const json_t		*usage = json_object_get(rep, "usage");

	if (json_is_object(json_object_get(rep, "worktree")))
		batch_item_set(bi, "worktree", json_deep_copy(
		    json_object_get(rep, "worktree")));

	bi->dead = bi->worker;
	bi->worker = NULL;
	/* unchanged: no O(n) sum again (a tool that counts nothing) */
	if (json_is_object(usage) && !json_equal(usage, json_object_get(bi->rec,
	    "usage"))) {
		batch_item_set(bi, "usage", json_deep_copy(usage));
		batch_usage_sum(b);
		batch_budget(b);
	}
	if (stopped && b->end == BE_STOP) {
		b->nrun--;
		bi->phase = BI_WAIT;
		event_active(b->pump_ev, EV_TIMEOUT, 0);
		return;
	}
	if (stopped && (b->end == BE_BUDGET || bi->budget_stop)) {
		batch_error(b, bi->def->id, batch_item_stop_why(bi));
		batch_item_requeue(bi);
		batch_queue_sync(bi, "pending", NULL);
		return;
	}
	batch_item_end(bi, status, why);
}

/* A worker item: the caller runs its one worker. */
static int
batch_worker_start(struct batch_item *bi, const char *root, char **err)
{
	struct batch	*b = bi->b;
	const char	*sd, *used = NULL;

	if (b->cfg.worker_start == NULL) {
		*err = xstrdup("worker items are not supported here");
		return -1;
	}
	sd = json_string_value(json_object_get(bi->rec, "state_dir"));
	bi->worker = b->cfg.worker_start(b->cfg.arg, root, sd, &used, bi->def,
	    json_string_value(json_object_get(bi->rec, "loop_id")),
	    batch_worker_done, bi, err);
	if (bi->worker == NULL)
		return -1;
	if (sd == NULL && used != NULL)
		batch_item_set(bi, "state_dir", json_string(used));
	free(bi->role);
	bi->role = xstrdup(bi->def->role != NULL ? bi->def->role : "develop");
	bi->phase = BI_RUN;
	return 0;
}

/* Its loop opened on its root's host (created, or resumed by its id). */
void
batch_item_start(struct batch_item *bi)
{
	struct batch		*b = bi->b;
	const struct bq_item	*it = bi->def;
	struct host_observer	 obs = { .opened = batch_loop_opened,
				    .event = batch_loop_event,
				    .done = batch_loop_done, .arg = bi };
	struct loop_spec	 spec;
	struct host		*h;
	char			 now[40], *err = NULL;
	const char		*root = it->root != NULL ? it->root :
				    b->cfg.root, *sd, *used = NULL;

	bi->phase = BI_OPEN;
	b->nrun++;
	bi->t0 = clock_mono_ms();
	batch_now(now, sizeof now);
	batch_item_set(bi, "status", json_string("executing"));
	batch_item_set(bi, "started_at", json_string(now));
	batch_item_set(bi, "attempts", json_integer(
	    json_integer_value(json_object_get(bi->rec, "attempts")) + 1));
	batch_emit(b, "item_started", json_pack("{s:s, s:s, s:s?}", "item_id",
	    it->id, "title", it->title, "loop_id", json_string_value(
	    json_object_get(bi->rec, "loop_id"))));
	if (it->kind == BQ_WORKER) {
		if (batch_worker_start(bi, root, &err) != 0) {
			batch_item_end(bi, "failed", err);
			free(err);
			return;
		}
		batch_save(b);
		batch_queue_sync(bi, "executing", NULL);
		return;
	}
	memset(&spec, 0, sizeof spec);
	spec.id = json_string_value(json_object_get(bi->rec, "loop_id"));
	spec.task = it->description;
	spec.mode = it->mode;
	spec.max_iterations = it->max_iterations;
	spec.tool = it->tool;
	spec.model = it->model;
	sd = json_string_value(json_object_get(bi->rec, "state_dir"));
	if ((h = b->cfg.host_for(b->cfg.arg, root, sd, &used, &err)) != NULL &&
	    sd == NULL)
		batch_item_set(bi, "state_dir", json_string(used));
	if (h == NULL ||
	    (bi->hl = host_loop_open(h, &spec, b->cfg.wf, &obs, &err)) ==
	    NULL) {
		batch_item_end(bi, "failed", err != NULL ? err :
		    "cannot open the loop");
		free(err);
		return;
	}
	batch_save(b);
	batch_queue_sync(bi, "executing", NULL);
}

