/*
 * batch.c: the issue-queue workflow's driver.  Each item is one loop
 * on its root's host; items start in order when their group's turn has
 * come, their dependencies completed and a job is free; the budget is
 * kept from the workers' usage; every change is committed to the
 * batch's state file on a committer thread, coalesced while one writes.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "batch.h"
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

#define BATCH_JOBS	4

/* Where an item is in this run (its record's status is what is saved). */
enum bitem_phase {
	BI_WAIT,	/* pending: not started in this run */
	BI_OPEN,	/* its loop is being opened */
	BI_RUN,		/* its loop runs */
	BI_DONE,	/* completed, failed or blocked */
};

struct batch_item {
	struct batch		*b;
	size_t			 idx;
	const struct bq_item	*def;
	json_t			*rec;		/* queue[idx] of the state */
	enum bitem_phase	 phase;
	struct host_loop	*hl;
	uint64_t		 t0;		/* when it started, monotonic */
	char			*role;		/* the running worker's */
	char			*progress;	/* its last line */
	char			*reason;	/* LOOP_COMPLETED's failure_reason */
	void			*worker;	/* a worker item's, the caller's */
	void			*dead;		/* its handle, to free next turn */
};

/* How the batch ends, once no item runs. */
enum batch_end {
	BE_NONE,
	BE_STOP,	/* a signal: items left executing, resumable */
	BE_BUDGET,	/* a budget crossed: no new start */
};

struct batch {
	struct event_base	*base;
	struct batch_cfg	 cfg;
	struct batch_store	 store;
	struct committer	*cm;
	json_t			*st;
	char			*id;
	struct batch_item	*items;
	size_t			 nitems, nrun;
	enum batch_end		 end;
	char			*end_reason;
	unsigned		 warned;	/* budget warnings given: bits */
	int			 saving, dirty, finishing, finished;
	int			 save_failed;
	struct event		*pump_ev;
};

/* One save on the committer's thread: the texts, written there. */
struct batch_save {
	struct batch	*b;
	int		 dirfd;
	char		*state, *history, *err;
	int		 rc;
};

static void	batch_pump(struct batch *);
static void	batch_save(struct batch *);

/* The batch's own event, with its id, to the caller. */
static void
batch_emit(struct batch *b, const char *name, json_t *fields)
{
	json_object_set_new(fields, "batch_id", json_string(b->id));
	if (b->cfg.event != NULL)
		b->cfg.event(b->cfg.arg, name, fields);
	json_decref(fields);
}

/* Now, for the state's timestamps. */
static void
batch_now(char *buf, size_t len)
{
	clock_iso(NULL, 1, buf, len);
}

/* An entry of the state's errors[] (seed 001: a log of what went wrong). */
static void
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

	s->rc = batchstore_write(s->dirfd, s->state, s->history, &s->err);
}

static void	batch_finish(struct batch *);

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
	free(s->err);
	free(s);
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
static void
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
	if (batchstore_texts(&b->store, b->st, &s->state, &s->history,
	    &err) != 0) {
		log_warnx("batch %s: state not saved: %s", b->id, err);
		free(err);
		free(s->state);
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
static void
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

/* --- counts and the budget */

/* context's counts from the queue's records. */
static void
batch_count(struct batch *b)
{
	json_t		*ctx = json_object_get(b->st, "context"), *e;
	json_int_t	 ok = 0, bad = 0, blocked = 0;
	const char	*s;
	size_t		 i;

	json_array_foreach(json_object_get(b->st, "queue"), i, e) {
		s = json_string_value(json_object_get(e, "status"));
		if (strcmp(s, "completed") == 0)
			ok++;
		else if (strcmp(s, "failed") == 0)
			bad++;
		else if (strcmp(s, "blocked") == 0)
			blocked++;
	}
	json_object_set_new(ctx, "completed_count", json_integer(ok));
	json_object_set_new(ctx, "failed_count", json_integer(bad));
	json_object_set_new(ctx, "blocked_count", json_integer(blocked));
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
static void
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

static void	batch_stop_all(struct batch *, enum batch_end, const char *);

/*
 * The batch's usage against its budget: a warning at 50 % and at 80 %
 * of each (once), and at 100 % no new start and every loop stopped.
 */
static void
batch_budget(struct batch *b)
{
	const json_t	*u = json_object_get(json_object_get(b->st, "context"),
			    "usage");
	double		 used[2], lim[2], pct;
	static const char *const what[2] = { "cost_usd", "tokens" };
	static const unsigned marks[2] = { 50, 80 };
	char		*why;
	int		 k, m;

	used[0] = json_number_value(json_object_get(u, "cost_usd"));
	used[1] = (double)(json_integer_value(json_object_get(u,
	    "input_tokens")) + json_integer_value(json_object_get(u,
	    "output_tokens")));
	lim[0] = b->cfg.max_cost_usd;
	lim[1] = (double)b->cfg.max_tokens;
	for (k = 0; k < 2; k++) {
		if (lim[k] <= 0)
			continue;
		pct = 100.0 * used[k] / lim[k];
		for (m = 0; m < 2; m++) {
			if (pct < marks[m] || (b->warned & (1u << (k * 2 + m))))
				continue;
			b->warned |= 1u << (k * 2 + m);
			batch_emit(b, "budget_warning", json_pack("{s:s, s:f,"
			    " s:f, s:i}", "budget", what[k], "used", used[k],
			    "limit", lim[k], "percent", (int)marks[m]));
		}
		if (pct >= 100.0 && b->end == BE_NONE) {
			if (k == 0)
				xasprintf(&why, "budget: cost %.4f USD reached "
				    "--max-cost-usd %.4f", used[0], lim[0]);
			else
				xasprintf(&why, "budget: %.0f tokens reached "
				    "--max-tokens %.0f", used[1], lim[1]);
			batch_stop_all(b, BE_BUDGET, why);
			free(why);
		}
	}
}

/* --- items */

/* An item is over: its record, the counts, the save, the event. */
static void
batch_item_end(struct batch_item *bi, const char *status, const char *reason)
{
	struct batch	*b = bi->b;
	char		 now[40];
	json_t		*iss;

	batch_now(now, sizeof now);
	json_object_set_new(bi->rec, "status", json_string(status));
	json_object_set_new(bi->rec, "ended_at", json_string(now));
	json_object_set_new(bi->rec, "failure_reason", reason != NULL ?
	    json_string(reason) : json_null());
	json_object_set_new(bi->rec, "duration_ms", json_integer((json_int_t)
	    (bi->t0 != 0 ? clock_mono_ms() - bi->t0 : 0)));
	iss = json_object_get(json_object_get(b->st, "issues"),
	    json_string_value(json_object_get(bi->rec, "issue_id")) != NULL ?
	    json_string_value(json_object_get(bi->rec, "issue_id")) :
	    bi->def->id);
	if (iss != NULL) {
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
	batch_emit(b, "item_done", json_pack("{s:s, s:s, s:s?, s:s?, s:I}",
	    "item_id", bi->def->id, "status", status, "failure_reason", reason,
	    "loop_id", json_string_value(json_object_get(bi->rec, "loop_id")),
	    "duration_ms", (json_int_t)(bi->t0 != 0 ? clock_mono_ms() - bi->t0 :
	    0)));
	event_active(b->pump_ev, EV_TIMEOUT, 0);
}

/* A loop stopped by us goes back to pending: --resume continues it. */
static void
batch_item_requeue(struct batch_item *bi)
{
	struct batch	*b = bi->b;

	json_object_set_new(bi->rec, "status", json_string("pending"));
	b->nrun--;
	bi->phase = BI_WAIT;
	bi->hl = NULL;
	batch_save(b);
	event_active(b->pump_ev, EV_TIMEOUT, 0);
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
		json_object_set_new(bi->rec, "usage", json_deep_copy(u));
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
	if (code == EXIT_STOPPED && b->end == BE_BUDGET) {
		batch_error(b, bi->def->id, b->end_reason);
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

/* A worker item's outcome (its usage is the item's). */
static void
batch_worker_done(void *arg, const char *status, const char *why,
    const json_t *usage, int stopped)
{
	struct batch_item	*bi = arg;
	struct batch		*b = bi->b;

	bi->dead = bi->worker;
	bi->worker = NULL;
	if (json_is_object(usage)) {
		json_object_set_new(bi->rec, "usage", json_deep_copy(usage));
		batch_usage_sum(b);
		batch_budget(b);
	}
	if (stopped && b->end == BE_STOP) {
		b->nrun--;
		bi->phase = BI_WAIT;
		event_active(b->pump_ev, EV_TIMEOUT, 0);
		return;
	}
	if (stopped && b->end == BE_BUDGET) {
		batch_error(b, bi->def->id, b->end_reason);
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
		json_object_set_new(bi->rec, "state_dir", json_string(used));
	free(bi->role);
	bi->role = xstrdup(bi->def->role != NULL ? bi->def->role : "develop");
	bi->phase = BI_RUN;
	return 0;
}

/* Its loop opened on its root's host (created, or resumed by its id). */
static void
batch_item_start(struct batch_item *bi)
{
	struct batch		*b = bi->b;
	const struct bq_item	*it = bi->def;
	struct host_observer	 obs = { batch_loop_opened, batch_loop_event,
				    batch_loop_done, bi };
	struct loop_spec	 spec;
	struct host		*h;
	char			 now[40], *err = NULL;
	const char		*root = it->root != NULL ? it->root :
				    b->cfg.root, *sd, *used = NULL;

	bi->phase = BI_OPEN;
	b->nrun++;
	bi->t0 = clock_mono_ms();
	batch_now(now, sizeof now);
	json_object_set_new(bi->rec, "status", json_string("executing"));
	json_object_set_new(bi->rec, "started_at", json_string(now));
	json_object_set_new(bi->rec, "attempts", json_integer(
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
		json_object_set_new(bi->rec, "state_dir", json_string(used));
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

/* Has every item of every group before g ended? */
static int
batch_groups_before_done(const struct batch *b, size_t g)
{
	size_t	i;

	for (i = 0; i < b->nitems; i++)
		if (b->items[i].def->group < g && b->items[i].phase != BI_DONE)
			return 0;
	return 1;
}

/*
 * May the item start now?  1 yes, 0 not yet, -1 never (*why: the
 * dependency that did not complete).  A sequential group runs its items
 * one at a time in their order.
 */
static int
batch_item_ready(const struct batch *b, const struct batch_item *bi,
    char **why)
{
	const struct bq_group	*g = &b->cfg.in->groups[bi->def->group];
	const struct batch_item	*d;
	const char		*s;
	size_t			 i;

	for (i = 0; i < bi->def->ndeps; i++) {
		d = &b->items[bi->def->deps[i]];
		s = json_string_value(json_object_get(d->rec, "status"));
		if (d->phase != BI_DONE)
			return 0;
		if (strcmp(s, "completed") != 0) {
			xasprintf(why, "depends on %s, which %s", d->def->id,
			    strcmp(s, "blocked") == 0 ? "was blocked" :
			    "failed");
			return -1;
		}
	}
	if (!batch_groups_before_done(b, bi->def->group))
		return 0;
	if (!g->parallel)
		for (i = 0; i < g->nitems && g->items[i] != bi->idx; i++)
			if (b->items[g->items[i]].phase != BI_DONE)
				return 0;
	return 1;
}

/* The batch is over: the last save, then the caller's done. */
static void
batch_finish(struct batch *b)
{
	json_t		*e;
	size_t		 i;
	int		 code = EXIT_OK;
	const char	*s;

	if (!b->finishing) {
		b->finishing = 1;
		if (b->end != BE_STOP) {
			json_object_set_new(b->st, "status",
			    json_string("completed"));
			json_object_set_new(b->st, "phase",
			    json_string("complete"));
			json_array_append_new(json_object_get(b->st,
			    "completed_actions"), json_string("complete"));
		}
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

/*
 * Start what may start, in item order, up to the jobs; block what never
 * can; end the batch once nothing runs and nothing more will start.
 */
static void
batch_pump(struct batch *b)
{
	struct batch_item	*bi;
	unsigned		 jobs = b->cfg.jobs > 0 ? b->cfg.jobs :
				    BATCH_JOBS;
	size_t			 i, waiting = 0;
	char			*why;
	int			 blocked;

	for (i = 0; i < b->nitems; i++)
		if (b->items[i].dead != NULL) {
			b->cfg.worker_free(b->cfg.arg, b->items[i].dead);
			b->items[i].dead = NULL;
		}
	if (b->finishing)
		return;
	/* blocked first, until none is: a block may block another */
	do {
		blocked = 0;
		for (i = 0; i < b->nitems; i++) {
			bi = &b->items[i];
			why = NULL;
			if (bi->phase == BI_WAIT &&
			    batch_item_ready(b, bi, &why) < 0) {
				batch_item_end(bi, "blocked", why);
				blocked = 1;
			}
			free(why);
		}
	} while (blocked);
	for (i = 0; i < b->nitems; i++) {
		bi = &b->items[i];
		if (bi->phase != BI_WAIT)
			continue;
		waiting++;
		why = NULL;
		if (b->end == BE_NONE && b->nrun < jobs &&
		    batch_item_ready(b, bi, &why) == 1)
			batch_item_start(bi);
		free(why);
	}
	if (b->nrun == 0 && (b->end != BE_NONE || waiting == 0))
		batch_finish(b);
}

static void
batch_pump_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	batch_pump(arg);
}

/* No new start; every running loop stopped (a signal, or the budget). */
static void
batch_stop_all(struct batch *b, enum batch_end why, const char *reason)
{
	size_t	i;

	if (b->end != BE_NONE)
		return;
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

/* A signal: loops stopped, items left as they are for --resume. */
void
batch_stop(struct batch *b, const char *why)
{
	batch_stop_all(b, BE_STOP, why);
}

/* --- the batch */

/*
 * The items of a resumed batch matched to its input by id, in order: an
 * input changed since would run other work under the old records.
 */
static int
batch_match(struct batch *b, char **err)
{
	const json_t	*q = json_object_get(b->st, "queue");
	const char	*s;
	size_t		 i;

	if (json_array_size(q) != b->cfg.in->nitems) {
		xasprintf(err, "the input has %zu items, the batch %zu: it "
		    "changed since the batch began", b->cfg.in->nitems,
		    json_array_size(q));
		return -1;
	}
	for (i = 0; i < b->nitems; i++) {
		s = json_string_value(json_object_get(json_array_get(q, i),
		    "item_id"));
		if (s == NULL || strcmp(s, b->cfg.in->items[i].id) != 0) {
			xasprintf(err, "item %zu is %s in the input, %s in the "
			    "batch: it changed since the batch began", i + 1,
			    b->cfg.in->items[i].id, s != NULL ? s : "?");
			return -1;
		}
	}
	return 0;
}

/*
 * A new batch (its directory, lock and first state written before any
 * loop starts) or a resumed one (its lock; its items that ended stay
 * ended, the rest wait their turn and find their loops by id).
 */
struct batch *
batch_new(struct event_base *base, const struct batch_cfg *cfg, char **err)
{
	struct batch	*b;
	char		 now[40], *st_text, *hist;
	const char	*s;
	size_t		 i;

	*err = NULL;
	b = xcalloc(1, sizeof *b);
	b->base = base;
	b->cfg = *cfg;
	b->nitems = cfg->in->nitems;
	b->id = cfg->resume_id != NULL ? xstrdup(cfg->resume_id) :
	    state_id_make("batch");
	if (batchstore_open(&b->store, cfg->root, b->id, cfg->resume_id ==
	    NULL, err) != 0) {
		free(b->id);
		free(b);
		return NULL;
	}
	batch_now(now, sizeof now);
	if (cfg->resume_id == NULL)
		b->st = batchstate_new(b->id, b->store.dir, cfg->in, now);
	else if (batchstore_load(&b->store, &b->st, err) != 0)
		goto fail;
	b->items = xcalloc(b->nitems > 0 ? b->nitems : 1, sizeof *b->items);
	if (cfg->resume_id != NULL && batch_match(b, err) != 0)
		goto fail;
	for (i = 0; i < b->nitems; i++) {
		b->items[i].b = b;
		b->items[i].idx = i;
		b->items[i].def = &cfg->in->items[i];
		b->items[i].rec = json_array_get(json_object_get(b->st,
		    "queue"), i);
		s = json_string_value(json_object_get(b->items[i].rec,
		    "status"));
		b->items[i].phase = strcmp(s, "pending") == 0 ||
		    strcmp(s, "executing") == 0 ? BI_WAIT : BI_DONE;
		/* done before this batch (CCW or an earlier batch): not again */
		if (cfg->resume_id == NULL && b->items[i].def->status != NULL &&
		    strcmp(b->items[i].def->status, "completed") == 0) {
			json_object_set_new(b->items[i].rec, "status",
			    json_string("completed"));
			json_object_set_new(b->items[i].rec, "note", json_string(
			    "completed in the queue before this batch"));
			b->items[i].phase = BI_DONE;
		}
	}
	json_object_set_new(b->st, "status", json_string("running"));
	json_object_set_new(b->st, "phase", json_string("executing"));
	if (cfg->resume_id == NULL)
		json_array_append_new(json_object_get(b->st,
		    "completed_actions"), json_string("init"));
	json_object_set_new(json_object_get(b->st, "context"), "max_cost_usd",
	    cfg->max_cost_usd > 0 ? json_real(cfg->max_cost_usd) : json_null());
	json_object_set_new(json_object_get(b->st, "context"), "max_tokens",
	    cfg->max_tokens > 0 ? json_integer(cfg->max_tokens) : json_null());
	json_object_set_new(json_object_get(b->st, "context"), "stop_reason",
	    json_null());
	json_object_set_new(b->st, "updated_at", json_string(now));
	/* the first write before any loop: a kill now leaves a batch to resume */
	if (batchstore_texts(&b->store, b->st, &st_text, &hist, err) != 0)
		goto fail;
	i = (size_t)batchstore_write(b->store.dirfd, st_text, hist, err);
	free(st_text);
	free(hist);
	if (i != 0)
		goto fail;
	if ((b->cm = committer_new(base, err)) == NULL)
		goto fail;
	b->pump_ev = event_new(base, -1, 0, batch_pump_cb, b);
	return b;
fail:
	batchstore_close(&b->store);
	json_decref(b->st);
	free(b->items);
	free(b->id);
	free(b);
	return NULL;
}

const char *
batch_id(const struct batch *b)
{
	return b->id;
}

const char *
batch_dir(const struct batch *b)
{
	return b->store.dir;
}

const json_t *
batch_state(const struct batch *b)
{
	return b->st;
}

/* The first items start on the next turn of the loop. */
void
batch_start(struct batch *b)
{
	batch_emit(b, "batch_started", json_pack("{s:s, s:I, s:s}",
	    "work_dir", b->store.dir, "items", (json_int_t)b->nitems,
	    "resumed", b->cfg.resume_id != NULL ? "yes" : "no"));
	event_active(b->pump_ev, EV_TIMEOUT, 0);
}

/* The running items as a view shows them. */
json_t *
batch_live(const struct batch *b)
{
	const struct batch_item	*bi;
	json_t			*a = json_array();
	uint64_t		 now = clock_mono_ms();
	size_t			 i;

	for (i = 0; i < b->nitems; i++) {
		bi = &b->items[i];
		if (bi->phase != BI_RUN && bi->phase != BI_OPEN)
			continue;
		json_array_append_new(a, json_pack("{s:s, s:s, s:s?, s:s?,"
		    " s:I}", "item_id", bi->def->id, "title", bi->def->title,
		    "role", bi->role, "progress", bi->progress, "elapsed_ms",
		    (json_int_t)(now - bi->t0)));
	}
	return a;
}

/* After the end (or a start-up failure): loops still open are the host's. */
void
batch_free(struct batch *b)
{
	size_t	i;

	if (b == NULL)
		return;
	committer_free(b->cm);
	for (i = 0; i < b->nitems; i++) {
		if (b->items[i].dead != NULL)
			b->cfg.worker_free(b->cfg.arg, b->items[i].dead);
		if (b->items[i].worker != NULL)
			b->cfg.worker_free(b->cfg.arg, b->items[i].worker);
		free(b->items[i].role);
		free(b->items[i].progress);
		free(b->items[i].reason);
	}
	if (b->pump_ev != NULL)
		event_free(b->pump_ev);
	batchstore_close(&b->store);
	json_decref(b->st);
	free(b->items);
	free(b->end_reason);
	free(b->id);
	free(b);
}
