/*
 * batch.c: the issue-queue workflow's driver: which items start when (in
 * order, once their group's turn has come, their dependencies completed
 * and a job is free; blocked when a dependency did not complete), a stop
 * (a signal, the budget), the end after the last save; making a batch or
 * finding a killed one again.  An item's run is batchitem.c's; what is
 * written, the budget and the end are batchsave.c's.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "batch.h"
#include "batchint.h"
#include "batchstate.h"
#include "bqforecast.h"
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

/*
 * The first group with an item not ended (SIZE_MAX: none): every group
 * before it is done.  Once per pass of batch_pump, not once per item
 * asked (that was O(n^2) a pass, O(n^3) a batch).
 */
static size_t
batch_group_open(const struct batch *b)
{
	size_t	i, g = SIZE_MAX;

	for (i = 0; i < b->nitems; i++)
		if (b->items[i].phase != BI_DONE && b->items[i].def->group < g)
			g = b->items[i].def->group;
	return g;
}

/*
 * May the item start now?  1 yes, 0 not yet, -1 never (*why: the
 * dependency that did not complete); open is batch_group_open's.  A sequential group runs its items
 * one at a time in their order.
 */
static int
batch_item_ready(const struct batch *b, const struct batch_item *bi,
    size_t open, char **why)
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
	if (bi->def->group > open)	/* a group before it still runs */
		return 0;
	/* the forecast: never beside an item naming the same files */
	for (i = 0; i < bi->nclash; i++) {
		d = &b->items[bi->clash[i]];
		if (d->phase == BI_OPEN || d->phase == BI_RUN)
			return 0;
	}
	if (!g->parallel)
		for (i = 0; i < g->nitems && g->items[i] != bi->idx; i++)
			if (b->items[g->items[i]].phase != BI_DONE)
				return 0;
	return 1;
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
	size_t			 i, open, waiting = 0;
	char			*why;
	int			 blocked;

	for (i = 0; i < b->nitems; i++)
		if (b->items[i].dead != NULL) {
			b->cfg.worker_free(b->cfg.arg, b->items[i].dead);
			b->items[i].dead = NULL;
		}
	if (b->finishing)
		return;
	/* blocked first, until none is: a block may block another (only
	 * a dependency blocks: an item without one is never asked) */
	do {
		blocked = 0;
		open = batch_group_open(b);
		for (i = 0; i < b->nitems; i++) {
			bi = &b->items[i];
			why = NULL;
			if (bi->phase == BI_WAIT && bi->def->ndeps > 0 &&
			    batch_item_ready(b, bi, open, &why) < 0) {
				batch_item_end(bi, "blocked", why);
				blocked = 1;
			}
			free(why);
		}
	} while (blocked);
	open = batch_group_open(b);
	for (i = 0; i < b->nitems; i++) {
		bi = &b->items[i];
		if (bi->phase != BI_WAIT)
			continue;
		/* no job free: one waiting item is all the end needs to know */
		if (waiting++ > 0 && (b->end != BE_NONE || b->nrun >= jobs))
			break;
		why = NULL;
		if (b->end == BE_NONE && b->nrun < jobs &&
		    batch_item_ready(b, bi, open, &why) == 1)
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
 * The conflict forecast: items whose file hints overlap never run at
 * once (batch_item_ready); the pairs go in the state's context and in a
 * "conflict_forecast" event at the start.
 */
static void
batch_forecast(struct batch *b)
{
	size_t	**clash, *nclash, i;

	b->forecast = bqforecast_make(b->cfg.in, &clash, &nclash);
	for (i = 0; i < b->nitems; i++) {
		b->items[i].clash = clash[i];
		b->items[i].nclash = nclash[i];
	}
	free(clash);
	free(nclash);
	json_object_set(json_object_get(b->st, "context"), "forecast",
	    b->forecast);
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
		batch_tally(b, s, 1);	/* batch_item_set keeps it after */
		b->items[i].phase = strcmp(s, "pending") == 0 ||
		    strcmp(s, "executing") == 0 ? BI_WAIT : BI_DONE;
		/* done before this batch (CCW or an earlier batch): not again */
		if (cfg->resume_id == NULL && b->items[i].def->status != NULL &&
		    strcmp(b->items[i].def->status, "completed") == 0) {
			batch_item_set(&b->items[i], "status",
			    json_string("completed"));
			batch_item_set(&b->items[i], "note", json_string(
			    "completed in the queue before this batch"));
			b->items[i].phase = BI_DONE;
		}
	}
	json_object_set_new(b->st, "status", json_string("running"));
	json_object_set_new(b->st, "phase", json_string("executing"));
	if (cfg->resume_id == NULL)
		json_array_append_new(json_object_get(b->st,
		    "completed_actions"), json_string("init"));
	json_object_set_new(json_object_get(b->st, "context"), "stop_reason",
	    json_null());
	batch_limits_set(b);
	json_object_set_new(b->st, "updated_at", json_string(now));
	/* the first write before any loop: a kill now leaves a batch to resume */
	if (batchstore_texts(&b->store, b->st, &st_text, &hist, err) != 0)
		goto fail;
	i = (size_t)batchstore_write(b->store.dirfd, &b->store.ino, st_text,
	    hist, NULL, err);
	free(st_text);
	free(hist);
	if (i != 0)
		goto fail;
	if ((b->cm = committer_new(base, err)) == NULL)
		goto fail;
	batch_forecast(b);	/* in the state from its next save */
	b->pump_ev = event_new(base, -1, 0, batch_pump_cb, b);
	batch_hold_start(b);
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
	if (json_array_size(b->forecast) > 0)
		batch_emit(b, "conflict_forecast", json_pack("{s:O}",
		    "serialized", b->forecast));
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
		free(b->items[i].clash);
	}
	json_decref(b->forecast);
	batch_hold_free(b);
	if (b->pump_ev != NULL)
		event_free(b->pump_ev);
	batchstore_close(&b->store);
	json_decref(b->st);
	free(b->items);
	free(b->end_reason);
	free(b->id);
	free(b);
}
