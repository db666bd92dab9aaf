/*
 * batchsave.c: what a batch writes as it goes: its events and errors,
 * its state (on the committer thread, a change made during a write going
 * in the next one), a CCW queue's item statuses and issues after them,
 * the counts in context, the items' usage summed, a stop (the hold at
 * the budget is batchhold.c's), and the end after the last save.
 * It calls nothing of batch.c or batchitem.c: they call it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "batch.h"
#include "batchint.h"
#include "batchstate.h"
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

/* One save on the committer's thread: the texts, written there. */
struct batch_save {
	struct batch	*b;
	int		 dirfd;
	_Atomic ino_t	*ino;		/* the store's: the committer writes it */
	char		*state, *history, *budget, *err;
	int		 rc;
};


/* --- records: events, timestamps, errors */

/* The batch's own event, with its id, to the caller. */
void
batch_emit(struct batch *b, const char *name, json_t *fields)
{
	json_object_set_new(fields, "batch_id", json_string(b->id));
	if (b->cfg.event != NULL)
		b->cfg.event(b->cfg.arg, name, fields);
	json_decref(fields);
}

/* Now, for the state's timestamps. */
void
batch_now(char *buf, size_t len)
{
	clock_iso(NULL, 1, buf, len);
}

/* An entry of the state's errors[] (seed 001: a log of what went wrong). */
void
batch_error(struct batch *b, const char *item, const char *msg)
{
	char	now[40];

	batch_now(now, sizeof now);
	json_array_append_new(json_object_get(b->st, "errors"), json_pack(
	    "{s:s, s:s?, s:s}", "timestamp", now, "item_id", item,
	    "message", msg));
}

/* --- saving */

static void
batch_save_run(void *arg)
{
	struct batch_save	*s = arg;

	s->rc = batchstore_write(s->dirfd, s->ino, s->state, s->history,
	    s->budget, &s->err);
}

/* Back on the loop: one more save if the state changed meanwhile. */
static void
batch_save_done(void *arg)
{
	struct batch_save	*s = arg;
	struct batch		*b = s->b;

	b->saving = 0;
	if (s->rc != 0) {
		log_warn("batch %s: %s", b->id, s->err);
		b->save_failed = 1;
		batch_emit(b, "batch_error", json_pack("{s:s}", "message",
		    s->err));
	}
	free(s->state);
	free(s->history);
	free(s->budget);
	free(s->err);
	free(s);
	if (b->watch_due && b->watch_ev != NULL)	/* our inode is known now */
		event_active(b->watch_ev, EV_TIMEOUT, 0);
	if (b->dirty)
		batch_save(b);
	else if (b->finishing && !b->finished)
		batch_finish(b);
}

/*
 * The state committed: now, or after the save in flight (whatever
 * changed meanwhile goes in one write).  A state that fails its check
 * is an engine bug: said, never written.
 */
void
batch_save(struct batch *b)
{
	struct batch_save	*s;
	char			 now[40], *err = NULL;

	b->dirty = 1;
	if (b->saving)
		return;
	batch_now(now, sizeof now);
	json_object_set_new(b->st, "updated_at", json_string(now));
	s = xcalloc(1, sizeof *s);
	s->b = b;
	s->dirfd = b->store.dirfd;
	s->ino = &b->store.ino;
	s->budget = batchstore_budget_text(b->st);
	if (batchstore_texts(&b->store, b->st, &s->state, &s->history,
	    &err) != 0) {
		log_warnx("batch %s: state not saved: %s", b->id, err);
		free(err);
		free(s->state);
		free(s->budget);
		free(s);
		b->dirty = 0;
		return;
	}
	b->dirty = 0;
	b->saving = 1;
	if (committer_submit(b->cm, batch_save_run, batch_save_done, s) != 0) {
		b->saving = 0;
		free(s->state);
		free(s->history);
		free(s->budget);
		free(s);
	}
}

/* One write of CCW's queue file (and the item's issue) on the committer. */
struct batch_qjob {
	struct batch	*b;
	char		*path, *idir, *item, *issue, *status;
	json_t		*details;	/* the job's own: no one else holds it */
	char		*err;
	int		 rc;
};

static void
batch_queue_run(void *arg)
{
	struct batch_qjob	*q = arg;

	q->rc = bqqueue_update(q->path, q->item, q->status, q->details,
	    &q->err);
	if (q->rc == 0 && q->issue != NULL && q->idir != NULL)
		q->rc = bqqueue_issue_update(q->idir, q->issue, q->status,
		    &q->err);
}

/* A write CCW's files refused is said (errors[], an event), not fatal. */
static void
batch_queue_done(void *arg)
{
	struct batch_qjob	*q = arg;
	struct batch		*b = q->b;

	if (q->rc != 0) {
		log_warnx("batch %s: %s: %s", b->id, q->path, q->err);
		batch_error(b, q->item, q->err);
		batch_emit(b, "batch_error", json_pack("{s:s, s:s}", "item_id",
		    q->item, "message", q->err != NULL ? q->err : "?"));
		batch_save(b);
	}
	json_decref(q->details);
	free(q->path);
	free(q->idir);
	free(q->item);
	free(q->issue);
	free(q->status);
	free(q->err);
	free(q);
}

/*
 * A queue item's new status into CCW's queue file as `ccw issue next`
 * and `done` write it, and into its issue; after the state's saves
 * before it (one committer: one order).  JSONL batches have no such file.
 */
void
batch_queue_sync(struct batch_item *bi, const char *status, const char *why)
{
	struct batch		*b = bi->b;
	struct batch_qjob	*q;
	char			 now[40], *slash;

	if (!b->cfg.in->is_queue)
		return;
	q = xcalloc(1, sizeof *q);
	q->b = b;
	q->path = xstrdup(b->cfg.in->path);
	q->item = xstrdup(bi->def->id);
	q->status = xstrdup(status);
	q->issue = bi->def->issue_id != NULL ? xstrdup(bi->def->issue_id) :
	    NULL;
	/* .../issues/queues/QUE-x.json: the issues directory is two up */
	q->idir = xstrdup(q->path);
	if ((slash = strrchr(q->idir, '/')) != NULL)
		*slash = '\0';
	if ((slash = strrchr(q->idir, '/')) != NULL &&
	    strcmp(slash, "/queues") == 0)
		*slash = '\0';
	else {
		free(q->idir);
		xasprintf(&q->idir, "%s/.workflow/issues", b->cfg.root);
	}
	if (why != NULL) {
		batch_now(now, sizeof now);
		q->details = json_pack("{s:s?, s:s, s:s, s:s}", "task_id",
		    bi->def->task_id, "error_type", strcmp(status, "blocked") ==
		    0 ? "dependency" : "execution_error", "message", why,
		    "timestamp", now);
	}
	if (committer_submit(b->cm, batch_queue_run, batch_queue_done, q) != 0)
		batch_queue_done(q);
}

/* --- counts and usage */

/* A status counted in (delta 1) or out (-1) of the batch's counts. */
void
batch_tally(struct batch *b, const char *status, int delta)
{
	size_t	*n = NULL;

	if (status == NULL)
		return;
	if (strcmp(status, "completed") == 0)
		n = &b->ncompleted;
	else if (strcmp(status, "failed") == 0)
		n = &b->nfailed;
	else if (strcmp(status, "blocked") == 0)
		n = &b->nblocked;
	if (n != NULL)
		*n += (size_t)delta;	/* -1 wraps back: never below 0 */
}

/*
 * context's counts, kept as records change (batch_item_set): a scan of
 * the queue per item end made a batch O(n^2).
 */
void
batch_count(struct batch *b)
{
	json_t	*ctx = json_object_get(b->st, "context");

	json_object_set_new(ctx, "completed_count", json_integer(
	    (json_int_t)b->ncompleted));
	json_object_set_new(ctx, "failed_count", json_integer(
	    (json_int_t)b->nfailed));
	json_object_set_new(ctx, "blocked_count", json_integer(
	    (json_int_t)b->nblocked));
}

/* A usage object's member added to acc's (a cost stays null till one). */
static void
batch_usage_add(json_t *acc, const json_t *u)
{
	static const char *const toks[] = { "input_tokens", "output_tokens",
	    NULL };
	const json_t	*v;
	size_t		 i;

	for (i = 0; toks[i] != NULL; i++)
		if (json_is_integer(v = json_object_get(u, toks[i])))
			json_object_set_new(acc, toks[i], json_integer(
			    json_integer_value(json_object_get(acc, toks[i])) +
			    json_integer_value(v)));
	if (json_is_number(v = json_object_get(u, "cost_usd")))
		json_object_set_new(acc, "cost_usd", json_real(
		    json_number_value(json_object_get(acc, "cost_usd")) +
		    json_number_value(v)));
}

/* context.usage: the items' usage summed. */
void
batch_usage_sum(struct batch *b)
{
	json_t	*acc, *e;
	size_t	 i;

	acc = json_pack("{s:I, s:I, s:n}", "input_tokens", (json_int_t)0,
	    "output_tokens", (json_int_t)0, "cost_usd");
	json_array_foreach(json_object_get(b->st, "queue"), i, e)
		batch_usage_add(acc, json_object_get(e, "usage"));
	json_object_set_new(json_object_get(b->st, "context"), "usage", acc);
}


/*
 * No new start; every running loop stopped (a signal, or the budget).
 * A signal stops a held batch too: running again in its file, its items
 * left for --resume (with a raised budget); so does the hold's timeout
 * (the budget: its items pending, exit 1).
 */
void
batch_stop_all(struct batch *b, enum batch_end why, const char *reason)
{
	size_t	i;

	if (b->end != BE_NONE && !b->held)
		return;
	if (b->held) {
		b->held = 0;
		event_del(b->hold_ev);
		free(b->end_reason);
		json_object_set_new(b->st, "status", json_string("running"));
		json_object_del(json_object_get(b->st, "context"),
		    "pause_reason");
		json_object_del(json_object_get(b->st, "context"),
		    "hold_deadline");
	}
	b->end = why;
	b->end_reason = xstrdup(reason);
	if (why == BE_BUDGET)
		batch_emit(b, "budget_exceeded", json_pack("{s:s}", "reason",
		    reason));
	for (i = 0; i < b->nitems; i++) {
		if (b->items[i].worker != NULL)
			b->cfg.worker_stop(b->cfg.arg, b->items[i].worker);
		else if (b->items[i].phase == BI_RUN || b->items[i].phase ==
		    BI_OPEN)
			host_loop_stop(b->items[i].hl, reason);
	}
	event_active(b->pump_ev, EV_TIMEOUT, 0);
}

/* --- the end */

/* The batch is over: the last save, then the caller's done. */
void
batch_finish(struct batch *b)
{
	json_t		*e, *acts;
	size_t		 i;
	int		 code = EXIT_OK;
	const char	*s, *last;

	if (!b->finishing) {
		b->finishing = 1;
		acts = json_object_get(b->st, "completed_actions");
		last = json_string_value(json_array_get(acts,
		    json_array_size(acts) - 1));
		if (b->end != BE_STOP) {
			json_object_set_new(b->st, "status",
			    json_string("completed"));
			json_object_set_new(b->st, "phase",
			    json_string("complete"));
			/* once, also when a finished batch is resumed */
			if (last == NULL || strcmp(last, "complete") != 0)
				json_array_append_new(acts,
				    json_string("complete"));
		}
		/* a hold whose loops all ended anyway is over */
		json_object_del(json_object_get(b->st, "context"),
		    "pause_reason");
		json_object_del(json_object_get(b->st, "context"),
		    "hold_deadline");
		json_object_set_new(json_object_get(b->st, "context"),
		    "stop_reason", b->end_reason != NULL ?
		    json_string(b->end_reason) : json_null());
		batch_save(b);
	}
	if (b->saving || b->dirty)
		return;		/* batch_save_done comes back here */
	b->finished = 1;
	json_array_foreach(json_object_get(b->st, "queue"), i, e)
		if ((s = json_string_value(json_object_get(e, "status"))) ==
		    NULL || strcmp(s, "completed") != 0)
			code = EXIT_FAILED;
	if (b->end == BE_STOP)
		code = EXIT_STOPPED;
	if (b->save_failed && code == EXIT_OK)
		code = EXIT_INTERNAL;
	batch_emit(b, "batch_completed", json_pack("{s:s?, s:O, s:O, s:i}",
	    "stop_reason", b->end_reason, "context", json_object_get(b->st,
	    "context"), "queue", json_object_get(b->st, "queue"),
	    "exit_code", code));
	if (b->cfg.done != NULL)
		b->cfg.done(b->cfg.arg, code);
}
