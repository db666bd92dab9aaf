/*
 * batchstate.c: a batch's state file in seed 001's shape (status, phase,
 * work_dir, issues{}, queue[], completed_actions, context, errors, the
 * timestamps) and state-history.json beside it: made, checked before
 * every write, written whole and atomically; the one-driver run lock;
 * a front end's raised budget written into a driven batch's file.
 */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batchstate.h"
#include "batchtext.h"
#include "bqinput.h"
#include "budget.h"
#include "clock.h"
#include "log.h"
#include "progress.h"
#include "state.h"
#include "xmalloc.h"

#define BATCH_HISTORY_MAX	100000	/* entries kept in state-history.json */

/* mkdir that accepts a directory already there, never a link. */
static int
batchstore_mkdirat(int dfd, const char *name, int *out, char **err,
    const char *label)
{
	int	fd;

	if (mkdirat(dfd, name, 0755) == -1 && errno != EEXIST) {
		xasprintf(err, "%s: mkdir: %s", label, strerror(errno));
		return -1;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1) {
		xasprintf(err, "%s: %s", label, strerror(errno));
		return -1;
	}
	*out = fd;
	return 0;
}

/*
 * The batch's run lock (run.lock in its directory), taken without
 * waiting: a second driver of the same batch is refused with the first
 * one's pid, which the holder writes there.  0, or -1 and *err.
 */
static int
batchstore_lock(struct batch_store *bs, const char *id, char **err)
{
	char	*buf = NULL;
	size_t	 len;
	long	 pid;

	bs->lock_fd = openat(bs->dirfd, "run.lock", O_RDWR | O_CREAT |
	    O_NOFOLLOW | O_CLOEXEC, 0644);
	if (bs->lock_fd == -1) {
		xasprintf(err, "%s/run.lock: %s", bs->dir, strerror(errno));
		return -1;
	}
	if (flock(bs->lock_fd, LOCK_EX | LOCK_NB) == -1) {
		pid = 0;
		if (progress_read_fd(bs->lock_fd, "run.lock", &buf, &len,
		    err) == 0)
			pid = strtol(buf, NULL, 10);
		free(buf);
		free(*err);
		xasprintf(err, "batch %s is driven by another process (pid %ld):"
		    " one driver per batch", id, pid);
		return -1;
	}
	/* the pid is for a refused second driver's message only */
	xasprintf(&buf, "%ld\n", (long)getpid());
	if (ftruncate(bs->lock_fd, 0) == 0 &&
	    pwrite(bs->lock_fd, buf, strlen(buf), 0) < 0)
		log_debug("%s/run.lock: %s", bs->dir, strerror(errno));
	free(buf);
	return 0;
}

/*
 * The batch's directory, made when asked (each level without following
 * a link), else it must exist.  Its run lock taken: a second driver of
 * the same batch is refused with the first one's pid.
 */
int
batchstore_open(struct batch_store *bs, const char *root, const char *id,
    int create, char **err)
{
	static const char *const levels[] = { ".workflow", ".batch", NULL };
	int		 fd, next, i;
	char		*label, *buf = NULL;
	size_t		 len;

	*err = NULL;
	memset(bs, 0, sizeof *bs);
	bs->dirfd = bs->lock_fd = -1;
	if (!state_id_valid(id)) {
		xasprintf(err, "invalid batch id \"%s\"", id);
		return -1;
	}
	xasprintf(&bs->dir, "%s/%s/%s", root, BATCH_DIR, id);
	if ((fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		xasprintf(err, "%s: %s", root, strerror(errno));
		goto fail;
	}
	for (i = 0; levels[i] != NULL; i++) {
		xasprintf(&label, "%s/%s", root, levels[i]);
		if (batchstore_mkdirat(fd, levels[i], &next, err, label) == -1) {
			free(label);
			close(fd);
			goto fail;
		}
		free(label);
		close(fd);
		fd = next;
	}
	if (create && mkdirat(fd, id, 0755) == -1) {
		xasprintf(err, "%s: %s", bs->dir, strerror(errno));
		close(fd);
		goto fail;
	}
	bs->dirfd = openat(fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	close(fd);
	if (bs->dirfd == -1) {
		if (errno == ENOENT)
			xasprintf(err, "no batch %s under %s/%s", id, root,
			    BATCH_DIR);
		else
			xasprintf(err, "%s: %s", bs->dir, strerror(errno));
		goto fail;
	}
	if (batchstore_lock(bs, id, err) != 0)
		goto fail;
	bs->history = NULL;
	if (!create && progress_read_file(bs->dirfd, "state-history.json",
	    "state-history.json", &buf, &len, NULL, err) == 0) {
		bs->history = json_loadb(buf, len, 0, NULL);
		free(buf);
	}
	free(*err);
	*err = NULL;
	if (!json_is_array(bs->history)) {
		json_decref(bs->history);
		bs->history = json_array();
	}
	bs->text = batchtext_new();
	return 0;
fail:
	batchstore_close(bs);
	return -1;
}

/* The lock goes with the descriptor. */
void
batchstore_close(struct batch_store *bs)
{
	if (bs->lock_fd != -1)
		close(bs->lock_fd);
	if (bs->dirfd != -1)
		close(bs->dirfd);
	json_decref(bs->history);
	batchtext_free(bs->text);
	free(bs->dir);
	memset(bs, 0, sizeof *bs);
	bs->dirfd = bs->lock_fd = -1;
}

/* state.json read and checked: a batch to resume. */
int
batchstore_load(struct batch_store *bs, json_t **out, char **err)
{
	json_error_t	 je;
	char		*buf = NULL, *why = NULL;
	size_t		 len;
	int		 rc;

	*out = NULL;
	rc = progress_read_file(bs->dirfd, "state.json", "state.json", &buf,
	    &len, NULL, err);
	if (rc == 1)
		xasprintf(err, "%s/state.json: no such file", bs->dir);
	if (rc != 0)
		return -1;
	*out = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	free(buf);
	if (*out == NULL) {
		xasprintf(err, "%s/state.json:%d: %s", bs->dir, je.line,
		    je.text);
		return -1;
	}
	if (batchstate_check(*out, &why) != 0) {
		xasprintf(err, "%s/state.json: %s", bs->dir, why);
		free(why);
		json_decref(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* The figure seed 001's saveState appends to the history. */
static json_t *
batchstore_entry(const json_t *st)
{
	const json_t	*ctx = json_object_get(st, "context");

	return json_pack("{s:s, s:O, s:I, s:I, s:O, s:O}", "timestamp",
	    json_string_value(json_object_get(st, "updated_at")), "phase",
	    json_object_get(st, "phase"), "completed_actions",
	    (json_int_t)json_array_size(json_object_get(st,
	    "completed_actions")), "issues_count",
	    (json_int_t)json_object_size(json_object_get(st, "issues")),
	    "completed_count", json_object_get(ctx, "completed_count"),
	    "failed_count", json_object_get(ctx, "failed_count"));
}

/* Do two history entries say the same, the timestamp aside? */
static int
batchstore_same(const json_t *a, const json_t *b)
{
	static const char *const keys[] = { "phase", "completed_actions",
	    "issues_count", "completed_count", "failed_count", NULL };
	size_t	i;

	for (i = 0; keys[i] != NULL; i++)
		if (!json_equal(json_object_get(a, keys[i]),
		    json_object_get(b, keys[i])))
			return 0;
	return 1;
}

/*
 * What a save writes, made on the loop's thread (jansson values are not
 * for two threads): the state's text, and the history's when this state
 * adds an entry (seed 001 appends one per save; one per change here, so
 * a thousand progress saves do not make a thousand equal entries).
 */
int
batchstore_texts(struct batch_store *bs, const json_t *st, char **state,
    char **history, char **err)
{
	json_t	*e;
	size_t	 n;

	*state = *history = NULL;
	if (batchstate_check(st, err) != 0)
		return -1;
	*state = batchtext_dump(bs->text, st);
	if (*state == NULL) {
		xasprintf(err, "state.json: cannot encode");
		return -1;
	}
	e = batchstore_entry(st);
	n = json_array_size(bs->history);
	if (n > 0 && batchstore_same(json_array_get(bs->history, n - 1), e)) {
		json_decref(e);
		return 0;
	}
	if (n >= BATCH_HISTORY_MAX)
		json_array_remove(bs->history, 0);
	json_array_append_new(bs->history, e);
	*history = batchtext_history(bs->text, bs->history);
	return 0;
}

/*
 * The lock around each write of state.json, the batch's and a front
 * end's (batchstore_raise): one of them at a time.  The descriptor (its
 * close unlocks), or -1 (the write goes on unlocked: said).
 */
static int
batchstore_state_lock(int dirfd)
{
	int	fd;

	fd = openat(dirfd, "state.lock", O_RDWR | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0644);
	if (fd == -1 || flock(fd, LOCK_EX) == -1) {
		log_warn("state.lock");
		if (fd != -1)
			close(fd);
		return -1;
	}
	return fd;
}

/* state.json's top-level budget, compact (the batch's comparison), or NULL. */
char *
batchstore_budget_text(const json_t *st)
{
	const json_t	*b = json_object_get(st, "budget");

	return json_is_object(b) ? json_dumps(b, JSON_COMPACT |
	    JSON_SORT_KEYS) : NULL;
}

/*
 * Did a front end write state.json since our last write (*mine, its
 * inode) with a budget other than ours?  Then the batch has not taken
 * it yet: our write would undo it (the watch reads it and saves again).
 */
static int
batchstore_foreign(int dirfd, ino_t mine, const char *budget)
{
	struct stat	 sb;
	json_t		*st;
	char		*buf = NULL, *theirs, *err = NULL;
	size_t		 len;
	int		 differ;

	if (fstatat(dirfd, "state.json", &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
	    sb.st_ino == mine)
		return 0;
	if (progress_read_file(dirfd, "state.json", "state.json", &buf, &len,
	    NULL, &err) != 0) {
		free(err);
		return 0;
	}
	st = json_loadb(buf, len, 0, NULL);
	free(buf);
	theirs = batchstore_budget_text(st);
	json_decref(st);
	differ = theirs != NULL && strcmp(theirs, budget) != 0;
	free(theirs);
	return differ;
}

/*
 * Each file replaced whole: a reader sees the old or the new.  With our
 * budget's text (a running batch's saves), a front end's raise not yet
 * taken is left in place (the save after the batch takes it writes).
 */
int
batchstore_write(int dirfd, _Atomic ino_t *mine, const char *state,
    const char *history, const char *budget, char **err)
{
	struct stat	sb;
	int		lk, rc = 0;

	*err = NULL;
	lk = batchstore_state_lock(dirfd);
	if (budget != NULL && batchstore_foreign(dirfd, *mine, budget))
		*mine = 0;
	else if ((rc = progress_replace(dirfd, "state.json", "state.json",
	    state, strlen(state), err)) == 0 && fstatat(dirfd, "state.json",
	    &sb, AT_SYMLINK_NOFOLLOW) == 0)
		*mine = sb.st_ino;
	if (lk != -1)
		close(lk);
	if (rc != 0)
		return -1;
	if (history != NULL && progress_replace(dirfd, "state-history.json",
	    "state-history.json", history, strlen(history), err) != 0)
		return -1;
	return 0;
}

/* The batch's directory, if there is one (no link followed), or -1. */
static int
batchstore_dir(const char *root, const char *id)
{
	char	*path;
	int	 fd;

	if (!state_id_valid(id))
		return -1;
	xasprintf(&path, "%s/%s/%s", root, BATCH_DIR, id);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	free(path);
	return fd;
}

/* Does a live process drive the batch (its run lock held)? */
static int
batchstore_driven(int dirfd)
{
	int	fd, driven;

	if ((fd = openat(dirfd, "run.lock", O_RDWR | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return 0;
	driven = flock(fd, LOCK_EX | LOCK_NB) == -1 && errno == EWOULDBLOCK;
	close(fd);		/* a lock we got goes with it */
	return driven;
}

/*
 * A front end's raise of a batch another process drives: the budget's
 * kinds given replace the saved ones in state.json's top-level budget,
 * status running, in one write (that process watches the file and goes
 * on if the new budget allows).  0 written; 1 no live process drives it
 * (the caller resumes it itself); -1 and *err.
 */
int
batchstore_raise(const char *root, const char *id, const json_t *given,
    char **err)
{
	json_t	*st = NULL;
	char	*buf = NULL, *text;
	size_t	 len;
	int	 dirfd, lk, rc = -1;

	*err = NULL;
	if ((dirfd = batchstore_dir(root, id)) == -1)
		return 1;
	if (!batchstore_driven(dirfd)) {
		close(dirfd);
		return 1;
	}
	lk = batchstore_state_lock(dirfd);
	if (progress_read_file(dirfd, "state.json", "state.json", &buf, &len,
	    NULL, err) != 0)
		goto out;
	if ((st = json_loadb(buf, len, 0, NULL)) == NULL ||
	    !json_is_object(st)) {
		xasprintf(err, "batch %s: state.json: not a JSON object", id);
		goto out;
	}
	json_object_set_new(st, "budget", budget_merge(json_object_get(st,
	    "budget"), given));
	json_object_set_new(st, "status", json_string("running"));
	text = json_dumps(st, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	rc = progress_replace(dirfd, "state.json", "state.json", text,
	    strlen(text), err);
	free(text);
out:
	if (rc != 0 && *err == NULL)
		xasprintf(err, "batch %s: state.json: cannot read", id);
	json_decref(st);
	free(buf);
	if (lk != -1)
		close(lk);
	close(dirfd);
	return rc;
}

/* Is a loop id already some item's? */
static int
batchstate_loop_taken(const json_t *queue, const char *lid)
{
	const json_t	*e;
	size_t		 i;

	json_array_foreach(queue, i, e)
		if (json_is_string(json_object_get(e, "loop_id")) &&
		    strcmp(json_string_value(json_object_get(e, "loop_id")),
		    lid) == 0)
			return 1;
	return 0;
}

/* queue[]'s entry of an item, or NULL. */
json_t *
batchstate_item(const json_t *st, const char *item_id)
{
	json_t	*e;
	size_t	 i;

	json_array_foreach(json_object_get(st, "queue"), i, e)
		if (json_is_string(json_object_get(e, "item_id")) &&
		    strcmp(json_string_value(json_object_get(e, "item_id")),
		    item_id) == 0)
			return e;
	return NULL;
}

/* Is v a string among words (NULL-ended)? */
static int
batchstate_word(const json_t *v, const char *const *words)
{
	size_t	i;

	if (!json_is_string(v))
		return 0;
	for (i = 0; words[i] != NULL; i++)
		if (strcmp(json_string_value(v), words[i]) == 0)
			return 1;
	return 0;
}

/*
 * seed 001's validateState (status, phase, work_dir, issues, queue) and
 * the members this engine adds and reads back on resume; the first
 * problem as "member: why".
 */
int
batchstate_check(const json_t *st, char **err)
{
	static const char *const status[] = { "pending", "running", "paused",
	    "completed", NULL };
	static const char *const phase[] = { "init", "listing", "planning",
	    "executing", "complete", NULL };
	static const char *const istatus[] = { "pending", "executing",
	    "completed", "failed", "blocked", NULL };
	static const char *const counts[] = { "total_issues",
	    "completed_count", "failed_count", NULL };
	static const char *const stamps[] = { "created_at", "updated_at",
	    NULL };
	const json_t	*ctx, *e, *v;
	size_t		 i;

	*err = NULL;
	if (!json_is_object(st))
		return xasprintf(err, "not a JSON object"), -1;
	if (!batchstate_word(json_object_get(st, "status"), status))
		return xasprintf(err, "status: missing or not one of pending, "
		    "running, paused, completed"), -1;
	if (!batchstate_word(json_object_get(st, "phase"), phase))
		return xasprintf(err, "phase: missing or not one of init, "
		    "listing, planning, executing, complete"), -1;
	v = json_object_get(st, "work_dir");
	if (!json_is_string(v) || *json_string_value(v) == '\0')
		return xasprintf(err, "work_dir: missing"), -1;
	if (!json_is_object(json_object_get(st, "issues")))
		return xasprintf(err, "issues: must be an object"), -1;
	if (!json_is_array(json_object_get(st, "queue")))
		return xasprintf(err, "queue: must be an array"), -1;
	json_array_foreach(json_object_get(st, "queue"), i, e) {
		if (!json_is_string(json_object_get(e, "item_id")))
			return xasprintf(err, "queue[%zu].item_id: missing", i),
			    -1;
		if (!batchstate_word(json_object_get(e, "status"), istatus))
			return xasprintf(err, "queue[%zu].status: not one of "
			    "pending, executing, completed, failed, blocked",
			    i), -1;
	}
	json_array_foreach(json_object_get(st, "completed_actions"), i, e)
		if (!json_is_string(e))
			return xasprintf(err, "completed_actions[%zu]: not a "
			    "string", i), -1;
	if (!json_is_array(json_object_get(st, "completed_actions")))
		return xasprintf(err, "completed_actions: must be an array"),
		    -1;
	if (!json_is_array(json_object_get(st, "errors")))
		return xasprintf(err, "errors: must be an array"), -1;
	ctx = json_object_get(st, "context");
	if (!json_is_object(ctx))
		return xasprintf(err, "context: must be an object"), -1;
	for (i = 0; counts[i] != NULL; i++) {
		v = json_object_get(ctx, counts[i]);
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return xasprintf(err, "context.%s: not a count",
			    counts[i]), -1;
	}
	for (i = 0; stamps[i] != NULL; i++) {
		v = json_object_get(st, stamps[i]);
		if (!json_is_string(v) || !clock_iso_valid(json_string_value(v)))
			return xasprintf(err, "%s: not an ISO 8601 time",
			    stamps[i]), -1;
	}
	return 0;
}

/* A queue[] entry of a new batch: the item as CCW's queue names it. */
static json_t *
batchstate_entry(const struct bq_item *it, const char *loop_id)
{
	return json_pack("{s:s, s:s?, s:s?, s:s, s:s, s:s, s:s?, s:s, s:n,"
	    " s:n, s:I, s:n, s:{s:I, s:I, s:n}}",
	    "item_id", it->id, "issue_id", it->issue_id, "solution_id",
	    it->solution_id, "status", "pending", "title", it->title,
	    "kind", it->kind == BQ_WORKER ? "worker" : "loop",
	    "loop_id", loop_id,
	    "root", it->root != NULL ? it->root : "", "started_at",
	    "ended_at", "attempts", (json_int_t)0, "failure_reason", "usage",
	    "input_tokens", (json_int_t)0, "output_tokens", (json_int_t)0,
	    "cost_usd");
}

/*
 * A new batch's state: every item pending with its loop id chosen now,
 * so a batch killed at any moment finds each item's loop again by it.
 */
json_t *
batchstate_new(const char *id, const char *work_dir, const struct bq_input *in,
    const char *now)
{
	json_t	*st, *issues, *queue, *iss;
	char	*lid;
	size_t	 i;

	issues = json_object();
	queue = json_array();
	for (i = 0; i < in->nitems; i++) {
		const struct bq_item *it = &in->items[i];
		const char *key = it->issue_id != NULL ? it->issue_id : it->id;

		do {
			lid = state_id_generate();
			/* ids differ in their random part; never twice here */
			if (batchstate_loop_taken(queue, lid))
				free(lid), lid = NULL;
		} while (lid == NULL);
		json_array_append_new(queue, batchstate_entry(it, lid));
		free(lid);
		if (json_object_get(issues, key) != NULL)
			continue;
		iss = json_pack("{s:s, s:s, s:s, s:s?, s:n, s:n, s:n}", "id",
		    key, "title", it->title, "status", "planned", "solution_id",
		    it->solution_id, "planned_at", "executed_at", "error");
		json_object_set_new(issues, key, iss);
	}
	st = json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:o, s:o, s:[],"
	    " s:{s:I, s:I, s:I, s:I, s:{s:I, s:I, s:n}, s:n, s:n, s:n},"
	    " s:[], s:s, s:s}",
	    "batch_id", id, "status", "pending", "phase", "init", "work_dir",
	    work_dir, "input", "path", in->path, "kind", in->is_queue ?
	    "queue" : "jsonl", "issues", issues, "queue", queue,
	    "completed_actions", "context", "total_issues",
	    (json_int_t)json_object_size(issues), "completed_count",
	    (json_int_t)0, "failed_count", (json_int_t)0, "blocked_count",
	    (json_int_t)0, "usage", "input_tokens", (json_int_t)0,
	    "output_tokens", (json_int_t)0, "cost_usd", "max_cost_usd",
	    "max_tokens", "stop_reason", "errors", "created_at", now,
	    "updated_at", now);
	return st;
}

/*
 * The input a batch ran (its state's input.path), read without its lock:
 * --resume loads the same file again before the batch is opened.
 */
char *
batchstate_input_path(const char *root, const char *id, char **err)
{
	json_error_t	 je;
	json_t		*st;
	char		*path, *out = NULL;
	const char	*p;

	*err = NULL;
	if (!state_id_valid(id)) {
		xasprintf(err, "invalid batch id \"%s\"", id);
		return NULL;
	}
	xasprintf(&path, "%s/%s/%s/state.json", root, BATCH_DIR, id);
	if ((st = json_load_file(path, 0, &je)) == NULL)
		xasprintf(err, "--resume %s: %s: %s", id, path, je.text);
	else if ((p = json_string_value(json_object_get(json_object_get(st,
	    "input"), "path"))) == NULL)
		xasprintf(err, "%s: no input.path", path);
	else
		out = xstrdup(p);
	json_decref(st);
	free(path);
	return out;
}
