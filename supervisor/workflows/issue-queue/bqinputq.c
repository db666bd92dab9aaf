/*
 * bqinputq.c: a CCW issue queue (QUE-*.json) as batch items: its items
 * (solutions, or legacy tasks), their depends_on (unknown ids and cycles
 * refused), its execution_groups in file order, and how each item runs.
 * CCW's shapes: .ccw/workflows/cli-templates/schemas/queue-schema.json and
 * ccw/src/commands/issue.ts (Queue, QueueItem, ExecutionGroup).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "bqint.h"
#include "xmalloc.h"

/* where CCW keeps queues: {root}/.workflow/issues/queues (issue.ts
 * getQueuesDir); the issues are in the directory above */
#define BQ_QDIR	"/issues/queues"

/* issue.ts VALID_ITEM_STATUSES */
static const char *const bq_item_statuses[] = {
	"pending", "ready", "executing", "completed", "failed", "blocked",
	NULL
};

/*
 * How an item runs.  CCW's queue schema has no per-item executor: CCW
 * picks one for the whole run (.claude/commands/issue/execute.md asks
 * codex|gemini|agent and dispatches one CLI per solution).  An item may
 * carry "executor" (ours, kept by CCW as an unknown member): absent or
 * "loop": a ccw-loop (BQ_LOOP); "worker": one worker of the configured
 * tool; a name of the tool table: one worker of that tool; "agent"
 * (execute.md's sub-agent): one worker of the ADAPTER_CCW_SUBAGENT tool.  A
 * worker's role is the item's "role", develop by default.
 * Returns 0, or -1 for a word it does not know.
 */
int
bq_executor(struct bq_item *it, const char *ex)
{
	it->kind = BQ_LOOP;
	if (ex == NULL || strcmp(ex, "loop") == 0)
		return 0;
	it->kind = BQ_WORKER;
	if (strcmp(ex, "worker") == 0)
		return 0;
	if (strcmp(ex, "agent") == 0) {
		it->tool = xstrdup(adapter_flagged(ADAPTER_CCW_SUBAGENT)->name);
		return 0;
	}
	if (adapter_find(ex) != NULL) {
		it->tool = xstrdup(ex);
		return 0;
	}
	return -1;
}

/* A member that must be an id word; NULL (with *err) when it is not. */
static const char *
bq_id(json_t *o, const char *key, int required, const char *where,
    char **err)
{
	json_t	*v = json_object_get(o, key);

	if ((v == NULL || json_is_null(v)) && !required)
		return NULL;
	if (!json_is_string(v) || !bq_word(json_string_value(v))) {
		xasprintf(err, "%s: \"%s\" must be an id (letters, digits, "
		    "._-)", where, key);
		return NULL;
	}
	return json_string_value(v);
}

/* The index of the item named by ref (its item_id, else solution_id). */
static int
bq_find(const struct bq_input *in, const char *ref, size_t *out)
{
	size_t	 i, found = 0, n = 0;

	for (i = 0; i < in->nitems; i++)
		if (strcmp(in->items[i].id, ref) == 0) {
			*out = i;
			return 0;
		}
	/* queue-schema.json calls depends_on "Solution IDs"; issue.ts
	 * resolves item ids.  Both, item ids first. */
	for (i = 0; i < in->nitems; i++)
		if (in->items[i].solution_id != NULL &&
		    strcmp(in->items[i].solution_id, ref) == 0) {
			found = i;
			n++;
		}
	if (n != 1)
		return -1;
	*out = found;
	return 0;
}

/* One queue item's own members (not its deps, group or description). */
static int
bq_queue_item(struct bq_item *it, json_t *o, const char *where, char **err)
{
	const char	*s;
	json_t		*v;
	size_t		 i;
	char		*names;

	if (!json_is_object(o)) {
		xasprintf(err, "%s: not a JSON object", where);
		return -1;
	}
	if ((s = bq_id(o, "item_id", 1, where, err)) == NULL)
		return -1;
	it->id = xstrdup(s);
	if ((s = bq_id(o, "issue_id", 1, where, err)) == NULL)
		return -1;
	it->issue_id = xstrdup(s);
	if ((s = bq_id(o, "solution_id", 1, where, err)) == NULL)
		return -1;
	it->solution_id = xstrdup(s);
	if ((s = bq_id(o, "task_id", 0, where, err)) == NULL && *err != NULL)
		return -1;
	it->task_id = s != NULL ? xstrdup(s) : NULL;
	v = json_object_get(o, "status");
	it->status = xstrdup(json_is_string(v) ? json_string_value(v) :
	    "pending");
	for (i = 0; bq_item_statuses[i] != NULL; i++)
		if (strcmp(it->status, bq_item_statuses[i]) == 0)
			break;
	if (bq_item_statuses[i] == NULL || (v != NULL && !json_is_string(v))) {
		xasprintf(err, "%s: status is not one of pending, ready, "
		    "executing, completed, failed, blocked", where);
		return -1;
	}
	v = json_object_get(o, "executor");
	if ((v != NULL && !json_is_string(v)) ||
	    bq_executor(it, json_string_value(v)) != 0) {
		names = adapter_list(0, " or ");
		xasprintf(err, "%s: executor must be loop, worker, agent, %s",
		    where, names);
		free(names);
		return -1;
	}
	if ((s = bq_id(o, "role", 0, where, err)) == NULL && *err != NULL)
		return -1;
	if (s != NULL && it->kind != BQ_WORKER) {
		xasprintf(err, "%s: \"role\" needs an executor that is one "
		    "worker", where);
		return -1;
	}
	if (it->kind == BQ_WORKER)
		it->role = xstrdup(s != NULL ? s : "develop");
	it->mode = xstrdup("auto");
	return 0;
}

/* An item's depends_on resolved to indices. */
static int
bq_queue_deps(struct bq_input *in, size_t i, json_t *o, const char *where,
    char **err)
{
	struct bq_item	*it = &in->items[i];
	json_t		*d = json_object_get(o, "depends_on"), *v;
	size_t		 k, idx;

	if (d == NULL || json_is_null(d))
		return 0;
	if (!json_is_array(d) || json_array_size(d) > BQ_ITEMS_MAX) {
		xasprintf(err, "%s: depends_on must be an array of item ids",
		    where);
		return -1;
	}
	it->deps = xreallocarray(NULL, json_array_size(d) + 1, sizeof(size_t));
	json_array_foreach(d, k, v) {
		if (!json_is_string(v) || bq_find(in, json_string_value(v),
		    &idx) != 0) {
			xasprintf(err, "%s: depends on \"%.64s\", which is no "
			    "item of the queue", where, json_is_string(v) ?
			    json_string_value(v) : "(not a string)");
			return -1;
		}
		it->deps[it->ndeps++] = idx;
	}
	return 0;
}

/*
 * A dependency cycle refused, named from one item back to itself.
 * Depth-first without recursion (10000 items may chain).
 */
static int
bq_queue_cycles(const struct bq_input *in, const char *name, char **err)
{
	unsigned char	*color = xcalloc(in->nitems, 1);
	size_t		*stack = xreallocarray(NULL, in->nitems, sizeof(size_t));
	size_t		*next = xcalloc(in->nitems, sizeof(size_t));
	size_t		 top, s, n, d, j;
	char		*msg, *m2;
	int		 rc = 0;

	for (s = 0; s < in->nitems && rc == 0; s++) {
		if (color[s] != 0)
			continue;
		top = 0;
		stack[top++] = s;
		color[s] = 1;
		while (top > 0 && rc == 0) {
			n = stack[top - 1];
			if (next[n] == in->items[n].ndeps) {
				color[n] = 2;
				top--;
				continue;
			}
			d = in->items[n].deps[next[n]++];
			if (color[d] == 0) {
				color[d] = 1;
				stack[top++] = d;
			} else if (color[d] == 1) {
				/* the path on the stack from d, back to d */
				msg = xstrdup(in->items[d].id);
				for (j = 0; stack[j] != d; j++)
					;
				for (j++; j < top && strlen(msg) < 512; j++) {
					xasprintf(&m2, "%s -> %s", msg,
					    in->items[stack[j]].id);
					free(msg);
					msg = m2;
				}
				xasprintf(err, "%s: dependency cycle: %s -> %s",
				    name, msg, in->items[d].id);
				free(msg);
				rc = -1;
			}
		}
	}
	free(color);
	free(stack);
	free(next);
	return rc;
}

/* A new group at the end. */
static struct bq_group *
bq_group_add(struct bq_input *in, const char *id, int parallel)
{
	struct bq_group	*g;

	in->groups = xreallocarray(in->groups, in->ngroups + 1,
	    sizeof(*in->groups));
	g = &in->groups[in->ngroups++];
	memset(g, 0, sizeof(*g));
	g->id = xstrdup(id);
	g->parallel = parallel;
	return g;
}

/* Item i appended to group gi. */
static void
bq_group_put(struct bq_input *in, size_t gi, size_t i)
{
	struct bq_group	*g = &in->groups[gi];

	g->items = xreallocarray(g->items, g->nitems + 1, sizeof(size_t));
	g->items[g->nitems++] = i;
	in->items[i].group = gi;
}

/*
 * execution_groups in file order (issue.ts's dag reads group.solutions
 * || group.tasks); an item no group lists joins the group its
 * execution_group names (issue.ts: item.execution_group || 'P1'), made
 * at the end when the file has none such (an S* id is sequential).
 */
static int
bq_queue_groups(struct bq_input *in, json_t *q, json_t *items,
    const char *name, char **err)
{
	json_t		*eg = json_object_get(q, "execution_groups"), *g, *m, *v;
	unsigned char	*seen = xcalloc(in->nitems + 1, 1);
	const char	*gid, *type, *eid;
	size_t		 gi, k, idx;
	int		 rc = -1;

	if (eg != NULL && !json_is_null(eg) && !json_is_array(eg)) {
		xasprintf(err, "%s: execution_groups must be an array", name);
		goto out;
	}
	json_array_foreach(eg, gi, g) {
		gid = json_string_value(json_object_get(g, "id"));
		type = json_string_value(json_object_get(g, "type"));
		if (gid == NULL || !bq_word(gid) || type == NULL ||
		    (strcmp(type, "parallel") != 0 &&
		    strcmp(type, "sequential") != 0)) {
			xasprintf(err, "%s: execution group %zu needs an id and "
			    "a type, parallel or sequential", name, gi + 1);
			goto out;
		}
		for (k = 0; k < in->ngroups; k++)
			if (strcmp(in->groups[k].id, gid) == 0) {
				xasprintf(err, "%s: two execution groups %s",
				    name, gid);
				goto out;
			}
		bq_group_add(in, gid, strcmp(type, "parallel") == 0);
		if ((m = json_object_get(g, "solutions")) == NULL ||
		    json_is_null(m))
			m = json_object_get(g, "tasks");
		if (m != NULL && !json_is_null(m) && !json_is_array(m)) {
			xasprintf(err, "%s: execution group %s: its items must "
			    "be an array", name, gid);
			goto out;
		}
		json_array_foreach(m, k, v) {
			if (!json_is_string(v) || bq_find(in,
			    json_string_value(v), &idx) != 0) {
				xasprintf(err, "%s: execution group %s lists "
				    "\"%.64s\", which is no item of the queue",
				    name, gid, json_is_string(v) ?
				    json_string_value(v) : "(not a string)");
				goto out;
			}
			if (seen[idx]) {
				xasprintf(err, "%s: item %s is in two execution "
				    "groups", name, in->items[idx].id);
				goto out;
			}
			seen[idx] = 1;
			bq_group_put(in, in->ngroups - 1, idx);
		}
	}
	for (idx = 0; idx < in->nitems; idx++) {
		if (seen[idx])
			continue;
		eid = json_string_value(json_object_get(json_array_get(items,
		    idx), "execution_group"));
		if (eid == NULL || !bq_word(eid))
			eid = "P1";
		for (k = 0; k < in->ngroups; k++)
			if (strcmp(in->groups[k].id, eid) == 0)
				break;
		if (k == in->ngroups)
			bq_group_add(in, eid, eid[0] != 'S');
		bq_group_put(in, k, idx);
	}
	rc = 0;
out:
	free(seen);
	return rc;
}

/*
 * A dependency the groups' order contradicts refused: the batch runs the
 * groups in order and a sequential group's items in theirs, so an item
 * waiting on one that runs after it would wait forever (a deadlock, not
 * a cycle of depends_on alone).
 */
static int
bq_queue_order(const struct bq_input *in, const char *name, char **err)
{
	size_t			*pos = xcalloc(in->nitems + 1, sizeof(size_t));
	const struct bq_item	*it, *d;
	const struct bq_group	*g;
	size_t			 i, k;
	int			 rc = 0;

	for (i = 0; i < in->ngroups; i++)
		for (k = 0; k < in->groups[i].nitems; k++)
			pos[in->groups[i].items[k]] = k;
	for (i = 0; i < in->nitems && rc == 0; i++) {
		it = &in->items[i];
		g = &in->groups[it->group];
		for (k = 0; k < it->ndeps && rc == 0; k++) {
			d = &in->items[it->deps[k]];
			if (d->group > it->group) {
				xasprintf(err, "%s: item %s (group %s) depends "
				    "on %s, which is in a later execution "
				    "group (%s)", name, it->id, g->id, d->id,
				    in->groups[d->group].id);
				rc = -1;
			} else if (d->group == it->group && !g->parallel &&
			    pos[it->deps[k]] > pos[i]) {
				xasprintf(err, "%s: item %s depends on %s, which "
				    "comes after it in sequential group %s",
				    name, it->id, d->id, g->id);
				rc = -1;
			}
		}
	}
	free(pos);
	return rc;
}

/*
 * The queue object q (read from the FILE given as name) into in.  Its
 * issues and solutions live in the issues directory: the queue's own
 * (.../issues/queues/QUE-*.json), else ROOT/.workflow/issues.
 */
int
bqinput_queue(struct bq_input *in, json_t *q, const char *name,
    const char *root, char **err)
{
	json_t		*items, *o;
	char		*qdir, *idir = NULL, *where = NULL;
	const char	*base, *id;
	size_t		 i, len;
	int		 rc = -1;

	if ((items = json_object_get(q, "solutions")) == NULL ||
	    json_is_null(items))
		items = json_object_get(q, "tasks");
	if (!json_is_array(items)) {
		xasprintf(err, "%s: a CCW queue needs a \"solutions\" (or "
		    "\"tasks\") array", name);
		return -1;
	}
	if (json_array_size(items) == 0) {
		xasprintf(err, "%s: empty: the queue has no items", name);
		return -1;
	}
	if (json_array_size(items) > BQ_ITEMS_MAX) {
		xasprintf(err, "%s: more than %d items", name, BQ_ITEMS_MAX);
		return -1;
	}
	id = json_string_value(json_object_get(q, "id"));
	base = strrchr(in->path, '/') + 1;
	len = strlen(base);
	if (id != NULL && bq_word(id))
		in->queue_id = xstrdup(id);
	else
		in->queue_id = xstrndup(base, len > 5 &&
		    strcmp(base + len - 5, ".json") == 0 ? len - 5 : len);
	qdir = bq_dirname(in->path);
	len = strlen(qdir);
	if (len > strlen(BQ_QDIR) && strcmp(qdir + len - strlen(BQ_QDIR),
	    BQ_QDIR) == 0)
		idir = bq_dirname(qdir);
	else if (root != NULL)
		xasprintf(&idir, "%s/.workflow/issues", root);
	free(qdir);
	if (idir == NULL) {
		xasprintf(err, "%s: outside .workflow/issues/queues/ and no "
		    "root to find its issues in", name);
		return -1;
	}
	in->items = xcalloc(json_array_size(items), sizeof(*in->items));
	json_array_foreach(items, i, o) {
		in->nitems++;
		free(where);
		xasprintf(&where, "%s: item %zu", name, i + 1);
		if (bq_queue_item(&in->items[i], o, where, err) != 0)
			goto out;
		for (len = 0; len < i; len++)
			if (strcmp(in->items[len].id, in->items[i].id) == 0) {
				xasprintf(err, "%s: two items %s", name,
				    in->items[i].id);
				goto out;
			}
	}
	json_array_foreach(items, i, o) {
		free(where);
		xasprintf(&where, "%s: item %s", name, in->items[i].id);
		if (bq_queue_deps(in, i, o, where, err) != 0)
			goto out;
	}
	if (bq_queue_cycles(in, name, err) != 0 ||
	    bq_queue_groups(in, q, items, name, err) != 0 ||
	    bq_queue_order(in, name, err) != 0)
		goto out;
	rc = bqdesc_build_all(in, idir, err);
out:
	free(where);
	free(idir);
	return rc;
}
