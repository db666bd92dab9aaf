/*
 * bqinput.c: the batch FILE read into items (bqinput.h): the JSONL form
 * (one loop a line, every error with its line number) and the dispatch
 * to the CCW queue loader (bqinputq.c); bqinput_free.
 */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bqfile.h"
#include "bqforecast.h"
#include "bqint.h"
#include "xmalloc.h"

#define BQ_ITER_MAX	1000000LL	/* max_iterations above this is a typo */

/*
 * A JSONL line's keys.  kind/role are ours, not CCW's: a line may ask for
 * one worker instead of a loop ({"kind": "worker", "role": "validate"}).
 */
static const char *const bq_jsonl_keys[] = {
	"title", "description", "mode", "max_iterations", "tool", "model",
	"root", "kind", "role", "launcher", "files", "worktree", NULL
};

/* An optional string member: 1 set, 0 absent or null, -1 wrong. */
static int
bq_opt_str(json_t *o, const char *key, size_t max, const char *where,
    char **out, char **err)
{
	json_t	*v = json_object_get(o, key);

	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		xasprintf(err, "%s: \"%s\" must be a string", where, key);
		return -1;
	}
	if (json_string_length(v) == 0 || json_string_length(v) > max) {
		xasprintf(err, "%s: \"%s\" must be 1 to %zu bytes", where, key,
		    max);
		return -1;
	}
	*out = xstrdup(json_string_value(v));
	return 1;
}

/* A root: relative to the FILE's directory, an existing directory. */
static int
bq_root(const char *given, const char *filedir, const char *where,
    char **out, char **err)
{
	char	*joined, real[PATH_MAX];
	struct stat st;

	if (given[0] == '/')
		joined = xstrdup(given);
	else
		xasprintf(&joined, "%s/%s", filedir, given);
	if (realpath(joined, real) == NULL || stat(real, &st) != 0 ||
	    !S_ISDIR(st.st_mode)) {
		xasprintf(err, "%s: root \"%s\" is not an existing directory",
		    where, given);
		free(joined);
		return -1;
	}
	free(joined);
	*out = xstrdup(real);
	return 0;
}

/* Every key of a JSONL line is one of bq_jsonl_keys: 0, or -1 and *err. */
static int
bq_jsonl_known(json_t *o, const char *where, char **err)
{
	const char	*k;
	json_t		*v;
	size_t		 i;

	json_object_foreach(o, k, v) {
		for (i = 0; bq_jsonl_keys[i] != NULL; i++)
			if (strcmp(k, bq_jsonl_keys[i]) == 0)
				break;
		if (bq_jsonl_keys[i] == NULL) {
			xasprintf(err, "%s: unknown key \"%.64s\"", where, k);
			return -1;
		}
	}
	return 0;
}

/* The loop's own members: mode (auto), max_iterations, the tool's word. */
static int
bq_jsonl_loop(struct bq_item *it, json_t *o, const char *where, char **err)
{
	json_t	*v;

	if (it->description == NULL)
		it->description = xstrdup(it->title);
	if (it->mode == NULL)
		it->mode = xstrdup("auto");
	else if (strcmp(it->mode, "auto") != 0 &&
	    strcmp(it->mode, "parallel") != 0) {
		xasprintf(err, "%s: mode \"%.64s\" is not auto or parallel",
		    where, it->mode);
		return -1;
	}
	if ((v = json_object_get(o, "max_iterations")) != NULL &&
	    !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > BQ_ITER_MAX) {
			xasprintf(err, "%s: max_iterations must be a positive "
			    "integer (at most %lld)", where, BQ_ITER_MAX);
			return -1;
		}
		it->max_iterations = json_integer_value(v);
	}
	if (it->tool != NULL && !bq_word(it->tool)) {
		xasprintf(err, "%s: tool \"%.64s\" is not a tool name", where,
		    it->tool);
		return -1;
	}
	return 0;
}

/* kind (loop or worker) and what only a worker takes: role, launcher. */
static int
bq_jsonl_kind(struct bq_item *it, json_t *o, const char *kind,
    const char *where, char **err)
{
	json_t	*v;
	char	*lerr = NULL;

	it->kind = BQ_LOOP;
	if (kind != NULL && strcmp(kind, "worker") == 0)
		it->kind = BQ_WORKER;
	else if (kind != NULL && strcmp(kind, "loop") != 0) {
		xasprintf(err, "%s: kind \"%.64s\" is not loop or worker",
		    where, kind);
		return -1;
	}
	if (it->role != NULL && (it->kind != BQ_WORKER || !bq_word(it->role))) {
		xasprintf(err, "%s: role needs \"kind\": \"worker\" and a role "
		    "name", where);
		return -1;
	}
	if (it->kind == BQ_WORKER && it->role == NULL)
		it->role = xstrdup("develop");
	/* a loop's workers follow its root's configuration (its roles) */
	if ((v = json_object_get(o, "launcher")) != NULL &&
	    (it->kind != BQ_WORKER ||
	    launch_parse_json(v, "launcher", &it->launch, &lerr) != 0)) {
		if (it->kind != BQ_WORKER)
			xasprintf(err, "%s: launcher needs \"kind\": \"worker\" "
			    "(a loop's roles take theirs from the root's "
			    "configuration)", where);
		else
			xasprintf(err, "%s: %s", where, lerr);
		free(lerr);
		return -1;
	}
	return 0;
}

/*
 * "worktree": true: the item's worker runs in a git worktree of its own
 * (cmd-batch's --worktree sets it for every worker item).  A loop item's
 * workers follow the ccw-loop workflow's isolation instead.
 */
static int
bq_jsonl_worktree(struct bq_item *it, json_t *o, const char *where,
    char **err)
{
	json_t	*v = json_object_get(o, "worktree");

	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_boolean(v) || (json_is_true(v) &&
	    it->kind != BQ_WORKER)) {
		xasprintf(err, "%s: \"worktree\" must be true or false, true "
		    "only with \"kind\": \"worker\"", where);
		return -1;
	}
	it->worktree = json_is_true(v);
	return 0;
}

/* One JSONL line's object into it (checked member by member). */
static int
bq_jsonl_item(struct bq_item *it, json_t *o, const char *filedir,
    const char *where, char **err)
{
	char	*s = NULL;

	if (bq_jsonl_known(o, where, err) != 0)
		return -1;
	if (bq_opt_str(o, "title", BQ_STR_MAX, where, &it->title, err) < 0)
		return -1;
	if (it->title == NULL) {
		xasprintf(err, "%s: \"title\" is required", where);
		return -1;
	}
	if (bq_opt_str(o, "description", BQ_DESC_MAX, where, &it->description,
	    err) < 0 || bq_opt_str(o, "mode", 16, where, &it->mode, err) < 0 ||
	    bq_opt_str(o, "tool", 128, where, &it->tool, err) < 0 ||
	    bq_opt_str(o, "model", BQ_STR_MAX, where, &it->model, err) < 0 ||
	    bq_opt_str(o, "role", 128, where, &it->role, err) < 0 ||
	    bq_opt_str(o, "kind", 16, where, &s, err) < 0 ||
	    bq_opt_str(o, "root", PATH_MAX, where, &it->root, err) < 0 ||
	    bq_jsonl_loop(it, o, where, err) != 0 ||
	    bq_jsonl_kind(it, o, s, where, err) != 0)
		goto fail;
	if (bqforecast_jsonl(it, json_object_get(o, "files"), where,
	    err) != 0 || bq_jsonl_worktree(it, o, where, err) != 0)
		goto fail;
	if (it->root != NULL) {
		free(s);
		s = it->root;
		it->root = NULL;
		if (bq_root(s, filedir, where, &it->root, err) != 0)
			goto fail;
	}
	free(s);
	return 0;
fail:
	free(s);
	return -1;
}

/* Every line of a JSONL FILE: one parallel group, no dependencies. */
static int
bq_jsonl(struct bq_input *in, char *buf, size_t len, const char *name,
    char **err)
{
	json_error_t	 je;
	json_t		*o;
	char		*line, *end, *where = NULL, *filedir;
	size_t		 n, i, cap = 0;
	unsigned	 lineno = 0;
	int		 rc = -1;

	filedir = bq_dirname(in->path);
	for (line = buf; line < buf + len; line = end + 1) {
		lineno++;
		if ((end = memchr(line, '\n', (size_t)(buf + len - line))) ==
		    NULL)
			end = buf + len;
		n = (size_t)(end - line);
		if (n > 0 && line[n - 1] == '\r')
			n--;
		for (i = 0; i < n && strchr(" \t\r\f\v", line[i]) != NULL; i++)
			;
		if (i == n)
			continue;
		free(where);
		xasprintf(&where, "%s:%u", name, lineno);
		if (in->nitems == BQ_ITEMS_MAX) {
			xasprintf(err, "%s: more than %d items", where,
			    BQ_ITEMS_MAX);
			goto out;
		}
		if ((o = json_loadb(line, n, JSON_REJECT_DUPLICATES, &je)) ==
		    NULL) {
			xasprintf(err, "%s: malformed JSON: %s (column %d)",
			    where, je.text, je.column);
			goto out;
		}
		if (!json_is_object(o)) {
			json_decref(o);
			xasprintf(err, "%s: not a JSON object", where);
			goto out;
		}
		if (in->nitems == cap) {
			cap = cap == 0 ? 16 : cap * 2;
			in->items = xreallocarray(in->items, cap,
			    sizeof(*in->items));
		}
		memset(&in->items[in->nitems], 0, sizeof(*in->items));
		in->items[in->nitems].line = lineno;
		xasprintf(&in->items[in->nitems].id, "item-%03zu",
		    in->nitems + 1);
		in->nitems++;
		i = (size_t)bq_jsonl_item(&in->items[in->nitems - 1], o,
		    filedir, where, err);
		json_decref(o);
		if (i != 0)
			goto out;
	}
	if (in->nitems == 0) {
		xasprintf(err, "%s: empty: no items", name);
		goto out;
	}
	in->groups = xcalloc(1, sizeof(*in->groups));
	in->ngroups = 1;
	in->groups[0].id = xstrdup("jsonl");
	in->groups[0].parallel = 1;
	in->groups[0].items = xreallocarray(NULL, in->nitems, sizeof(size_t));
	in->groups[0].nitems = in->nitems;
	for (i = 0; i < in->nitems; i++)
		in->groups[0].items[i] = i;
	rc = 0;
out:
	free(where);
	free(filedir);
	return rc;
}

/*
 * A CCW queue is one JSON object with its items (solutions, or tasks in
 * the legacy form) or execution_groups; a JSONL line never has those.
 * Returns the object (a new reference) or NULL.
 */
static json_t *
bq_as_queue(const char *buf, size_t len)
{
	json_t	*j;

	if ((j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL)) == NULL)
		return NULL;
	if (json_is_object(j) && (json_object_get(j, "solutions") != NULL ||
	    json_object_get(j, "tasks") != NULL ||
	    json_object_get(j, "execution_groups") != NULL))
		return j;
	json_decref(j);
	return NULL;
}

/*
 * path (the batch FILE) into in; root is the batch's -C ROOT (a queue
 * outside ROOT/.workflow/issues/queues/ finds its issues under it).
 * On failure in is empty and *err names the file (and the line).
 */
int
bqinput_load(const char *path, const char *root, struct bq_input *in,
    char **err)
{
	char	*buf = NULL, real[PATH_MAX];
	size_t	 len;
	json_t	*q;
	int	 rc;

	memset(in, 0, sizeof(*in));
	*err = NULL;
	if (realpath(path, real) == NULL) {
		xasprintf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (bqfile_read(real, BQ_FILE_MAX, &buf, &len, NULL, err) != 0)
		return -1;
	in->path = xstrdup(real);
	if ((q = bq_as_queue(buf, len)) != NULL) {
		in->is_queue = 1;
		rc = bqinput_queue(in, q, path, root, err);
		json_decref(q);
	} else
		rc = bq_jsonl(in, buf, len, path, err);
	free(buf);
	if (rc != 0)
		bqinput_free(in);
	return rc;
}

/* Everything bqinput_load allocated; in is empty after. */
void
bqinput_free(struct bq_input *in)
{
	struct bq_item	*it;
	size_t		 i;

	for (i = 0; i < in->nitems; i++) {
		it = &in->items[i];
		free(it->id);
		free(it->title);
		free(it->description);
		free(it->mode);
		free(it->tool);
		free(it->model);
		free(it->root);
		free(it->role);
		launch_clear(&it->launch);
		free(it->issue_id);
		free(it->solution_id);
		free(it->task_id);
		free(it->status);
		free(it->deps);
		for (size_t j = 0; j < it->nfiles; j++)
			free(it->files[j]);
		free(it->files);
	}
	free(in->items);
	for (i = 0; i < in->ngroups; i++) {
		free(in->groups[i].id);
		free(in->groups[i].items);
	}
	free(in->groups);
	free(in->path);
	free(in->queue_id);
	memset(in, 0, sizeof(*in));
}
