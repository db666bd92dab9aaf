/*
 * batch-isolate.c: `batch --worktree` and items with "worktree": true:
 * the batch's one prepare before anything runs (`ccw-worker --git
 * prepare` through gitrun.c: loop id = the batch's id, side directory
 * = the batch's; a dirty tree or no git repository refused), each
 * worker item's options.worktree (its own branch ccw/<batch>/<item>/
 * <agent>, its directory removed after its commit), and the cleanup at
 * the end (directories only: the branches are the user's to merge).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "batch-isolate.h"
#include "bqinput.h"
#include "gitrun.h"
#include "log.h"
#include "toolconfig.h"
#include "xmalloc.h"

#define BATCHISO_PREPARE_MS	120000	/* prepare's and cleanup's deadline */

/* One verb's end, as batchiso_run waits for it. */
struct batchiso_wait {
	int	 done, rc;
	json_t	*reply;
	char	*err;
};

static void
batchiso_ended(int rc, const json_t *reply, const char *err, void *arg)
{
	struct batchiso_wait	*w = arg;

	w->done = 1;
	w->rc = rc;
	w->reply = reply != NULL ? json_deep_copy(reply) : NULL;
	w->err = err != NULL ? xstrdup(err) : NULL;
}

/*
 * One verb run to its end before (or after) the batch's event loop:
 * the base turned here until gitrun tells the end.  Only the command
 * layer may turn the base; nothing of the batch runs yet (or any more).
 */
static int
batchiso_run(struct event_base *base, struct children *ch, const char *verb,
    const json_t *req, struct batchiso_wait *w)
{
	char	*tag, *err = NULL;

	memset(w, 0, sizeof *w);
	xasprintf(&tag, "batch: git %s", verb);
	if (gitrun_start(base, ch, verb, req, BATCHISO_PREPARE_MS, tag,
	    batchiso_ended, w, &err) == NULL) {
		w->rc = -1;
		w->err = err;
		free(tag);
		return -1;
	}
	free(tag);
	while (!w->done)
		if (event_base_loop(base, EVLOOP_ONCE) < 0)
			break;
	return w->done && w->rc == 0 ? 0 : -1;
}

/* Does this item run in a worktree of its own? */
static int
batchiso_item(const struct batchiso *bi, const struct bq_item *it)
{
	return it->kind == BQ_WORKER && (bi->all || it->worktree);
}

/*
 * Is a prepare wanted: 1 some worker item runs in a worktree, 0 none;
 * -1 and *err when one names a root other than the batch's (its
 * branch comes from the batch's repository).
 */
int
batchiso_wanted(const struct batchiso *bi, const struct bq_input *in,
    const char *root, char **err)
{
	size_t	i;
	int	n = 0;

	for (i = 0; i < in->nitems; i++) {
		if (!batchiso_item(bi, &in->items[i]))
			continue;
		if (in->items[i].root != NULL &&
		    strcmp(in->items[i].root, root) != 0) {
			xasprintf(err, "item %s: a worktree item runs in the "
			    "batch's root %s, not %s", in->items[i].id, root,
			    in->items[i].root);
			return -1;
		}
		n++;
	}
	return n > 0;
}

/*
 * The batch's prepare: loop id = the batch's id, side = its directory;
 * start (a new batch) refuses a dirty tree unless from_worktree.  Not
 * a git repository is an error: the user asked for isolation.  0, or
 * -1 and *err (the helper's message).
 */
int
batchiso_prepare(struct batchiso *bi, struct event_base *base,
    struct children *ch, const struct config *cfg, const char *root,
    const char *side, const char *id, int start, char **err)
{
	struct batchiso_wait	 w;
	json_t			*req;
	const char		*iso;

	req = json_pack("{s:s, s:s, s:s, s:b, s:b}", "root", root, "side",
	    side, "loop", id, "from_worktree", bi->from_worktree, "start",
	    start);
	(void)batchiso_run(base, ch, "prepare", req, &w);
	json_decref(req);
	iso = json_string_value(json_object_get(w.reply, "isolation"));
	if (w.rc != 0 || iso == NULL || strcmp(iso, "worktree") != 0) {
		if (w.rc == 0)
			xasprintf(err, "--worktree: %s: %s", root,
			    json_string_value(json_object_get(w.reply,
			    "reason")) != NULL ? json_string_value(
			    json_object_get(w.reply, "reason")) :
			    "no worktree can be made");
		else
			xasprintf(err, "--worktree: %s", w.err != NULL ?
			    w.err : "git prepare failed");
		json_decref(w.reply);
		free(w.err);
		return -1;
	}
	if (json_string_value(json_object_get(w.reply, "warning")) != NULL)
		log_warnx("batch: %s", json_string_value(json_object_get(
		    w.reply, "warning")));
	free(w.err);
	bi->prep = w.reply;
	bi->side = xstrdup(side);
	bi->batch = xstrdup(id);
	bi->tmpl = json_pack("{s:O, s:O, s:b}", "repo", json_object_get(
	    w.reply, "repo"), "base", json_object_get(w.reply, "base"),
	    "keep", 0);
	if (json_array_size(cfg->git.copy) > 0)
		json_object_set(bi->tmpl, "copy", cfg->git.copy);
	if (cfg->git.setup != NULL) {
		json_object_set_new(bi->tmpl, "setup",
		    json_string(cfg->git.setup));
		json_object_set_new(bi->tmpl, "setup_ms",
		    json_integer((json_int_t)cfg->git.setup_ms));
	}
	bi->on = 1;
	return 0;
}

/*
 * The item's options.worktree (a new reference), or NULL when it runs
 * in the root: <side>/wt/<item>/<agent> on ccw/<batch>/<item>/<agent>
 * (an item's workers are numbered per item: the item names them apart).
 */
json_t *
batchiso_options(const struct batchiso *bi, const struct bq_item *it)
{
	json_t	*o;
	char	*s;

	if (!bi->on || !batchiso_item(bi, it))
		return NULL;
	o = json_deep_copy(bi->tmpl);
	xasprintf(&s, "%s/wt/%s", bi->side, it->id);
	json_object_set_new(o, "dir", json_string(s));
	free(s);
	xasprintf(&s, "ccw/%s/%s", bi->batch, it->id);
	json_object_set_new(o, "branch_prefix", json_string(s));
	free(s);
	return o;
}

/*
 * The end: every worktree directory under the batch's removed (a worker
 * killed mid-item left its own), the branches kept for the user.
 */
void
batchiso_cleanup(struct batchiso *bi, struct event_base *base,
    struct children *ch)
{
	struct batchiso_wait	 w;
	json_t			*req;

	if (!bi->on)
		return;
	req = json_pack("{s:O, s:s, s:O, s:b}", "repo", json_object_get(
	    bi->prep, "repo"), "side", bi->side, "loop_branch",
	    json_object_get(bi->prep, "loop_branch"), "remove_branches", 0);
	if (batchiso_run(base, ch, "cleanup", req, &w) != 0)
		log_warnx("batch: git cleanup: %s", w.err != NULL ? w.err :
		    "failed");
	json_decref(req);
	json_decref(w.reply);
	free(w.err);
}

void
batchiso_free(struct batchiso *bi)
{
	json_decref(bi->prep);
	json_decref(bi->tmpl);
	free(bi->side);
	free(bi->batch);
	memset(bi, 0, sizeof *bi);
}
