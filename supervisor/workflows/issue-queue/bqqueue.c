/*
 * bqqueue.c: one queue item's status written as CCW's tools write it
 * (ccw/src/commands/issue.ts: nextAction sets executing and started_at,
 * doneAction completed or failed with failure_reason and failure_details,
 * retryAction pending with the old details moved to failure_history,
 * writeQueue's _metadata counts and index.json entry), every other member
 * kept as it was.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bqfile.h"
#include "bqqueue.h"
#include "xmalloc.h"

/* issue.ts VALID_ITEM_STATUSES */
static const char *const bqq_statuses[] = {
	"pending", "ready", "executing", "completed", "failed", "blocked", NULL
};

typedef int (*bqq_apply_fn)(json_t *, void *, char **);

struct bqq_rmw {
	const char	*dflt;	/* the file's text when it is missing */
	bqq_apply_fn	 apply;
	void		*arg;
};

/*
 * A JSON file's edit for bqfile_edit: read (a missing file starts from
 * dflt when there is one: index.json), change, serialise.
 */
static int
bqq_rmw_edit(const char *path, int exists, struct stat *st, void *arg,
    char **textp, char **err)
{
	struct bqq_rmw	*r = arg;
	json_error_t	 je;
	json_t		*j;
	char		*buf;
	size_t		 len;

	if (!exists && r->dflt != NULL)
		j = json_loads(r->dflt, 0, NULL);
	else {
		if (bqfile_read(path, BQ_FILE_MAX, &buf, &len, st, err) != 0)
			return -1;
		j = json_loadb(buf, len, 0, &je);
		free(buf);
		if (!json_is_object(j)) {
			xasprintf(err, "%s: %s", path, j == NULL ? je.text :
			    "not a JSON object");
			json_decref(j);
			return -1;
		}
	}
	if (r->apply(j, r->arg, err) != 0) {
		json_decref(j);
		return -1;
	}
	*textp = bqfile_json_text(j);
	json_decref(j);
	if (*textp == NULL) {
		xasprintf(err, "%s: cannot be serialised", path);
		return -1;
	}
	return 0;
}

/* Read, change, write back path's JSON (bqfile_edit's rounds). */
static int
bqq_rmw(const char *path, const char *dflt, bqq_apply_fn apply, void *arg,
    char **err)
{
	struct bqq_rmw	 r = { dflt, apply, arg };

	return bqfile_edit(path, bqq_rmw_edit, &r, err);
}

/* queue.solutions || queue.tasks (issue.ts: a solutions array wins). */
static json_t *
bqq_items(json_t *q)
{
	json_t	*v = json_object_get(q, "solutions");

	if (v != NULL && !json_is_null(v))
		return json_is_array(v) ? v : NULL;
	v = json_object_get(q, "tasks");
	return json_is_array(v) ? v : NULL;
}

/* How many items have this status. */
static json_int_t
bqq_count(json_t *items, const char *status)
{
	const char	*s;
	json_t		*it;
	size_t		 i;
	json_int_t	 n = 0;

	json_array_foreach(items, i, it)
		if ((s = json_string_value(json_object_get(it, "status"))) !=
		    NULL && strcmp(s, status) == 0)
			n++;
	return n;
}

/* writeQueue: _metadata's counts and updated_at (made when missing). */
static void
bqq_metadata(json_t *q, json_t *items, const char *now)
{
	json_t	*m = json_object_get(q, "_metadata");

	if (!json_is_object(m)) {
		m = json_object();
		json_object_set_new(m, "version", json_string("2.0"));
		json_object_set_new(q, "_metadata", m);
	}
	json_object_set_new(m, "total_tasks",
	    json_integer((json_int_t)json_array_size(items)));
	json_object_set_new(m, "pending_count",
	    json_integer(bqq_count(items, "pending")));
	json_object_set_new(m, "executing_count",
	    json_integer(bqq_count(items, "executing")));
	json_object_set_new(m, "completed_count",
	    json_integer(bqq_count(items, "completed")));
	json_object_set_new(m, "failed_count",
	    json_integer(bqq_count(items, "failed")));
	json_object_set_new(m, "updated_at", json_string(now));
}

/*
 * parseFailureReason's object: task_id, error_type, message, stack_trace,
 * timestamp (the caller's, else done --fail's defaults).
 */
static json_t *
bqq_details(const json_t *fd, const char *now)
{
	json_t		*d = json_object(), *v;
	const char	*s;

	if ((v = json_object_get(fd, "task_id")) != NULL && json_is_string(v))
		json_object_set(d, "task_id", v);
	s = json_string_value(json_object_get(fd, "error_type"));
	json_object_set_new(d, "error_type", json_string(s != NULL ? s :
	    "execution_error"));
	s = json_string_value(json_object_get(fd, "message"));
	json_object_set_new(d, "message", json_string(s != NULL ? s :
	    "Unknown failure"));
	if ((v = json_object_get(fd, "stack_trace")) != NULL &&
	    json_is_string(v))
		json_object_set(d, "stack_trace", v);
	s = json_string_value(json_object_get(fd, "timestamp"));
	json_object_set_new(d, "timestamp", json_string(s != NULL ? s : now));
	return d;
}

/* The item's failure_details kept in failure_history (retryAction). */
static void
bqq_keep_failure(json_t *it)
{
	json_t	*d = json_object_get(it, "failure_details"), *h;

	if (!json_is_object(d))
		return;
	if (!json_is_array(h = json_object_get(it, "failure_history"))) {
		h = json_array();
		json_object_set_new(it, "failure_history", h);
	}
	json_array_append(h, d);
}

struct bqq_req {
	const char	*item_id, *status;
	const json_t	*failure;
	char		 now[40];
	json_t		*written;	/* the queue as written (for the index) */
};

/* One item's new status, then the queue's, then _metadata. */
static int
bqq_apply(json_t *q, void *arg, char **err)
{
	struct bqq_req	*r = arg;
	json_t		*items = bqq_items(q), *it = NULL, *v;
	const char	*s;
	size_t		 i, n;

	if (items == NULL) {
		xasprintf(err, "no \"solutions\" or \"tasks\" array");
		return -1;
	}
	json_array_foreach(items, i, v)
		if ((s = json_string_value(json_object_get(v, "item_id"))) !=
		    NULL && strcmp(s, r->item_id) == 0 && json_is_object(v)) {
			it = v;
			break;
		}
	if (it == NULL) {
		xasprintf(err, "no item %s in the queue", r->item_id);
		return -1;
	}
	s = json_string_value(json_object_get(it, "status"));
	if (strcmp(r->status, "executing") == 0) {
		/* nextAction: a resumed item keeps its started_at */
		if (s == NULL || strcmp(s, "executing") != 0)
			json_object_set_new(it, "started_at",
			    json_string(r->now));
	} else if (strcmp(r->status, "completed") == 0) {
		json_object_set_new(it, "completed_at", json_string(r->now));
	} else if (strcmp(r->status, "failed") == 0) {
		/* doneAction --fail; an earlier failure never retried is kept
		 * where retryAction would have put it */
		bqq_keep_failure(it);
		v = bqq_details(r->failure, r->now);
		json_object_set_new(it, "completed_at", json_string(r->now));
		json_object_set(it, "failure_reason",
		    json_object_get(v, "message"));
		json_object_set_new(it, "failure_details", v);
	} else if (strcmp(r->status, "blocked") == 0 && r->failure != NULL) {
		/* CCW never blocks an item itself; the batch says why (the
		 * dependency that did not complete) where done --fail would,
		 * so `ccw issue queue` and a reader of the file see it.  It
		 * never ran: no completed_at */
		v = bqq_details(r->failure, r->now);
		json_object_set(it, "failure_reason",
		    json_object_get(v, "message"));
		json_object_set_new(it, "failure_details", v);
	} else if (strcmp(r->status, "pending") == 0 && s != NULL &&
	    strcmp(s, "failed") == 0) {
		/* retryAction */
		bqq_keep_failure(it);
		json_object_del(it, "failure_reason");
		json_object_del(it, "failure_details");
		json_object_del(it, "started_at");
		json_object_del(it, "completed_at");
		if ((s = json_string_value(json_object_get(q, "status"))) !=
		    NULL && strcmp(s, "failed") == 0)
			json_object_set_new(q, "status", json_string("active"));
	}
	json_object_set_new(it, "status", json_string(r->status));
	/* doneAction: the queue ends with its last item */
	n = json_array_size(items);
	if ((size_t)bqq_count(items, "completed") == n)
		json_object_set_new(q, "status", json_string("completed"));
	else if (bqq_count(items, "failed") > 0 && (size_t)(bqq_count(items,
	    "completed") + bqq_count(items, "failed")) == n)
		json_object_set_new(q, "status", json_string("failed"));
	bqq_metadata(q, items, r->now);
	json_decref(r->written);
	r->written = json_deep_copy(q);
	return 0;
}

/* The queue's id: its "id", else the file's name without .json. */
static char *
bqq_queue_id(const json_t *q, const char *path)
{
	const char	*id = json_string_value(json_object_get(q, "id"));
	const char	*base = strrchr(path, '/');
	size_t		 len;

	if (id != NULL)
		return xstrdup(id);
	base = base != NULL ? base + 1 : path;
	len = strlen(base);
	return xstrndup(base, len > 5 && strcmp(base + len - 5, ".json") == 0 ?
	    len - 5 : len);
}

/*
 * writeQueue's created_at, derived from the id as CCW does: 14 digits
 * after QUE- become an ISO time; anything else stays as it is.
 */
static json_t *
bqq_created_at(const char *id)
{
	const char	*d = strncmp(id, "QUE-", 4) == 0 ? id + 4 : id;
	char		*out;
	size_t		 i;
	json_t		*j;

	for (i = 0; i < 14 && d[i] >= '0' && d[i] <= '9'; i++)
		;
	if (i < 14)
		return json_string(d);
	xasprintf(&out, "%.4s-%.2s-%.2sT%.2s:%.2s:%.2sZ%s", d, d + 4, d + 6,
	    d + 8, d + 10, d + 12, d + 14);
	j = json_string(out);
	free(out);
	return j;
}

struct bqq_ix {
	json_t		*q;
	const char	*path;
	char		 now[40];
};

/*
 * writeQueue's index entry: id, status, issue_ids, created_at,
 * completed_at (completed only), total_/completed_ solutions or tasks;
 * a new entry goes first; an active queue becomes active_queue_id.  CCW
 * replaces the entry whole; we set those members and keep the rest
 * (priority: its multi-queue order).
 */
static int
bqq_index_apply(json_t *ix, void *arg, char **err)
{
	struct bqq_ix	*x = arg;
	json_t		*qs = json_object_get(ix, "queues"), *e = NULL, *v, *ids;
	json_t		*items = bqq_items(x->q), *sol;
	char		*id = bqq_queue_id(x->q, x->path);
	const char	*s, *st = json_string_value(json_object_get(x->q,
	    "status"));
	size_t		 i, k;
	int		 is_sol;

	(void)err;
	if (!json_is_array(qs)) {
		qs = json_array();
		json_object_set_new(ix, "queues", qs);
	}
	json_array_foreach(qs, i, v)
		if ((s = json_string_value(json_object_get(v, "id"))) != NULL &&
		    strcmp(s, id) == 0 && json_is_object(v)) {
			e = v;
			break;
		}
	if (e == NULL) {
		e = json_object();
		json_array_insert_new(qs, 0, e);
	}
	json_object_set_new(e, "id", json_string(id));
	json_object_set(e, "status", st != NULL ? json_object_get(x->q,
	    "status") : json_null());
	sol = json_object_get(x->q, "solutions");
	is_sol = sol != NULL && !json_is_null(sol);
	if ((ids = json_object_get(x->q, "issue_ids")) == NULL) {
		ids = json_array();
		json_array_foreach(is_sol ? items : NULL, i, v) {
			json_t *w, *iid = json_object_get(v, "issue_id");
			json_array_foreach(ids, k, w)
				if (json_equal(w, iid))
					break;
			if (k == json_array_size(ids) && iid != NULL)
				json_array_append(ids, iid);
		}
		json_object_set_new(e, "issue_ids", ids);
	} else
		json_object_set(e, "issue_ids", ids);
	if (json_object_get(e, "created_at") == NULL)
		json_object_set_new(e, "created_at", bqq_created_at(id));
	if (st != NULL && strcmp(st, "completed") == 0)
		json_object_set_new(e, "completed_at", json_string(x->now));
	else
		json_object_del(e, "completed_at");
	json_object_set_new(e, is_sol ? "total_solutions" : "total_tasks",
	    json_integer((json_int_t)json_array_size(items)));
	json_object_set_new(e, is_sol ? "completed_solutions" :
	    "completed_tasks", json_integer(bqq_count(items, "completed")));
	if (st != NULL && strcmp(st, "active") == 0)
		json_object_set_new(ix, "active_queue_id", json_string(id));
	free(id);
	return 0;
}

/* The index.json beside the queue file, for the queue q. */
static int
bqq_index_write(const char *queue_path, json_t *q, char **err)
{
	struct bqq_ix	 x;
	char		*dir, *ix, *slash;
	int		 rc;

	dir = xstrdup(queue_path);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	else {
		free(dir);
		dir = xstrdup(".");
	}
	xasprintf(&ix, "%s/index.json", dir);
	x.q = q;
	x.path = queue_path;
	bqfile_iso_now(x.now, sizeof(x.now));
	/* readQueueIndex's default when the file is missing */
	rc = bqq_rmw(ix, "{\"active_queue_id\": null, \"queues\": []}",
	    bqq_index_apply, &x, err);
	free(ix);
	free(dir);
	return rc;
}

/*
 * queues/index.json's entry for the queue at queue_path brought in step
 * with the queue file, as writeQueue does after every queue write.
 */
int
bqqueue_index_update(const char *queue_path, char **err)
{
	json_error_t	 je;
	json_t		*q;
	char		*buf;
	size_t		 len;
	int		 rc;

	*err = NULL;
	if (bqfile_read(queue_path, BQ_FILE_MAX, &buf, &len, NULL, err) != 0)
		return -1;
	q = json_loadb(buf, len, 0, &je);
	free(buf);
	if (!json_is_object(q) || bqq_items(q) == NULL) {
		xasprintf(err, "%s: not a CCW queue", queue_path);
		json_decref(q);
		return -1;
	}
	rc = bqq_index_write(queue_path, q, err);
	json_decref(q);
	return rc;
}

/*
 * Item item_id of the queue at queue_path set to status (pending, ready,
 * executing, completed, failed, blocked) the way issue.ts's next, done
 * and retry set it; failure_details (NULL for none) is done --fail's
 * reason: {task_id, error_type, message, stack_trace, timestamp}, each
 * optional.  Then the queue's status when every item ended, _metadata,
 * and index.json.  Members it does not name stay as they were.
 */
int
bqqueue_update(const char *queue_path, const char *item_id,
    const char *status, const json_t *failure_details, char **err)
{
	struct bqq_req	 r;
	size_t		 i;
	int		 rc;

	*err = NULL;
	for (i = 0; bqq_statuses[i] != NULL; i++)
		if (strcmp(status, bqq_statuses[i]) == 0)
			break;
	if (bqq_statuses[i] == NULL) {
		xasprintf(err, "invalid item status \"%.32s\"", status);
		return -1;
	}
	if (failure_details != NULL && !json_is_object(failure_details)) {
		xasprintf(err, "failure_details must be an object");
		return -1;
	}
	memset(&r, 0, sizeof(r));
	r.item_id = item_id;
	r.status = status;
	r.failure = failure_details;
	bqfile_iso_now(r.now, sizeof(r.now));
	rc = bqq_rmw(queue_path, NULL, bqq_apply, &r, err);
	if (rc == 0)
		rc = bqq_index_write(queue_path, r.written, err);
	else if (*err != NULL && strncmp(*err, queue_path,
	    strlen(queue_path)) != 0) {
		char *e;
		xasprintf(&e, "%s: %s", queue_path, *err);
		free(*err);
		*err = e;
	}
	json_decref(r.written);
	return rc;
}
