/*
 * bqdesc.c: a queue item's task text, built from its issue (issues.jsonl,
 * else issue-history.jsonl) and its solution (solutions/{issueId}.jsonl)
 * so that a worker gets what CCW's executor gets from `ccw issue detail`
 * (ccw/src/commands/issue.ts detailAction: the solution's approach and
 * every task; .claude/commands/issue/execute.md: implementation, test,
 * convergence, one commit).  Field names: issue.ts's Issue, Solution,
 * SolutionTask (files[] or legacy modification_points, convergence or
 * legacy acceptance).
 */
#include <config.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bqfile.h"
#include "bqforecast.h"
#include "bqint.h"
#include "xmalloc.h"

struct bqbuf {
	char	*s;
	size_t	 len, cap;
	int	 over;		/* passed BQ_DESC_MAX */
};

/* Text appended, formatted; past the cap it only notes the overflow. */
static void __attribute__((format(printf, 2, 3)))
bqbuf_add(struct bqbuf *b, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || b->over || b->len + (size_t)n > BQ_DESC_MAX) {
		b->over = 1;
		return;
	}
	if (b->len + (size_t)n + 1 > b->cap) {
		b->cap = (b->len + (size_t)n + 1) * 2;
		b->s = xreallocarray(b->s, b->cap, 1);
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* A non-empty string member, or NULL. */
static const char *
bq_s(const json_t *o, const char *key)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return s != NULL && s[0] != '\0' ? s : NULL;
}

/* "label: value" when the member is a non-empty string. */
static void
bq_line(struct bqbuf *b, const json_t *o, const char *key, const char *label)
{
	const char	*v = bq_s(o, key);

	if (v != NULL && v[0] != '\0')
		bqbuf_add(b, "%s%s\n", label, v);
}

/* A list member (strings, or one string) under a heading. */
static void
bq_list(struct bqbuf *b, const json_t *v, const char *head, int numbered)
{
	json_t	*e;
	size_t	 i;

	if (json_is_string(v) && json_string_length(v) > 0) {
		bqbuf_add(b, "%s %s\n", head, json_string_value(v));
		return;
	}
	if (!json_is_array(v) || json_array_size(v) == 0)
		return;
	bqbuf_add(b, "%s\n", head);
	json_array_foreach(v, i, e)
		if (json_is_string(e)) {
			if (numbered)
				bqbuf_add(b, "%zu. %s\n", i + 1,
				    json_string_value(e));
			else
				bqbuf_add(b, "- %s\n", json_string_value(e));
		}
}

/* A JSONL file of objects (issues, solutions) as one array (its stat). */
int
bq_jsonl_read(const char *path, json_t **out, struct stat *stp, char **err)
{
	json_error_t	 je;
	json_t		*arr, *o;
	char		*buf, *line, *end;
	size_t		 len;
	unsigned	 lineno = 0;

	if (bqfile_read(path, BQ_FILE_MAX, &buf, &len, stp, err) != 0)
		return -1;
	arr = json_array();
	for (line = buf; line < buf + len; line = end + 1) {
		lineno++;
		if ((end = memchr(line, '\n', (size_t)(buf + len - line))) ==
		    NULL)
			end = buf + len;
		if (strspn(line, " \t\r") >= (size_t)(end - line))
			continue;
		o = json_loadb(line, (size_t)(end - line), 0, &je);
		if (!json_is_object(o)) {
			xasprintf(err, "%s:%u: %s", path, lineno, o == NULL ?
			    je.text : "not a JSON object");
			json_decref(o);
			json_decref(arr);
			free(buf);
			return -1;
		}
		json_array_append_new(arr, o);
	}
	free(buf);
	*out = arr;
	return 0;
}

/* The first element whose "id" is id (CCW's Array.find). */
static json_t *
bq_by_id(const json_t *arr, const char *id)
{
	json_t	*o;
	size_t	 i;

	json_array_foreach(arr, i, o)
		if (bq_s(o, "id") != NULL && strcmp(bq_s(o, "id"), id) == 0)
			return o;
	return NULL;
}

/* One solution task: what to change, how, how to know it is done. */
static void
bq_task(struct bqbuf *b, const json_t *t)
{
	const json_t	*f, *e, *c;
	size_t		 i;

	bqbuf_add(b, "\n### %s: %s", bq_s(t, "id") ? bq_s(t, "id") : "task",
	    bq_s(t, "title") ? bq_s(t, "title") : "");
	if (bq_s(t, "action") != NULL || bq_s(t, "scope") != NULL)
		bqbuf_add(b, " [%s%s%s]", bq_s(t, "action") ? bq_s(t,
		    "action") : "", bq_s(t, "action") && bq_s(t, "scope") ?
		    " " : "", bq_s(t, "scope") ? bq_s(t, "scope") : "");
	bqbuf_add(b, "\n");
	bq_line(b, t, "description", "");
	f = json_object_get(t, "files");
	if (json_array_size(f) == 0)
		f = json_object_get(t, "modification_points");
	if (json_array_size(f) > 0) {
		bqbuf_add(b, "Files:\n");
		json_array_foreach(f, i, e) {
			const char *p = bq_s(e, "path") ? bq_s(e, "path") :
			    bq_s(e, "file");
			if (p == NULL)
				continue;
			bqbuf_add(b, "- %s", p);
			if (bq_s(e, "action") != NULL)
				bqbuf_add(b, " (%s)", bq_s(e, "action"));
			if (bq_s(e, "target") != NULL)
				bqbuf_add(b, " at %s", bq_s(e, "target"));
			if (bq_s(e, "change") != NULL)
				bqbuf_add(b, ": %s", bq_s(e, "change"));
			bqbuf_add(b, "\n");
		}
	}
	bq_list(b, json_object_get(t, "implementation"), "Implementation:", 1);
	if ((e = json_object_get(t, "test")) != NULL) {
		bq_list(b, json_object_get(e, "commands"), "Test commands:", 0);
		bq_list(b, json_object_get(e, "unit"), "Unit tests:", 0);
		bq_list(b, json_object_get(e, "integration"),
		    "Integration tests:", 0);
	}
	if ((c = json_object_get(t, "convergence")) == NULL)
		c = json_object_get(t, "acceptance");
	bq_list(b, json_object_get(c, "criteria"), "Convergence criteria:", 0);
	bq_list(b, json_object_get(c, "verification"), "Verification:", 0);
	bq_line(b, c, "definition_of_done", "Definition of done: ");
	bq_list(b, json_object_get(t, "regression"), "Regression checks:", 0);
	bq_list(b, json_object_get(t, "depends_on"), "Depends on:", 0);
	if ((e = json_object_get(t, "commit")) != NULL && bq_s(e, "type"))
		bqbuf_add(b, "Commit: %s(%s): %s\n", bq_s(e, "type"),
		    bq_s(e, "scope") ? bq_s(e, "scope") : "",
		    bq_s(e, "message_template") ? bq_s(e,
		    "message_template") : "");
}

/* The item's title and task text from its issue and solution. */
static int
bq_describe(struct bq_item *it, const char *queue_id, const json_t *issue,
    const json_t *sol, char **err)
{
	struct bqbuf	 b = { NULL, 0, 0, 0 };
	json_t		*tasks, *t;
	const char	*title = bq_s(issue, "title");
	size_t		 i, n = 0;

	tasks = json_object_get(sol, "tasks");
	if (it->task_id != NULL)
		bqbuf_add(&b, "Execute task %s of solution %s for issue %s "
		    "(queue %s, item %s).\n", it->task_id, it->solution_id,
		    it->issue_id, queue_id, it->id);
	else
		bqbuf_add(&b, "Execute solution %s for issue %s (queue %s, "
		    "item %s): every task below, in order.\n", it->solution_id,
		    it->issue_id, queue_id, it->id);
	bqbuf_add(&b, "\n## Issue %s: %s\n", it->issue_id, title ? title : "");
	bq_line(&b, issue, "context", "");
	bq_line(&b, issue, "expected_behavior", "Expected behaviour: ");
	bq_line(&b, issue, "actual_behavior", "Actual behaviour: ");
	bq_list(&b, json_object_get(issue, "affected_components"),
	    "Affected components:", 0);
	bqbuf_add(&b, "\n## Solution %s\n", it->solution_id);
	bq_line(&b, sol, "description", "");
	bq_line(&b, sol, "approach", "Approach: ");
	bqbuf_add(&b, "\n## Tasks\n");
	json_array_foreach(tasks, i, t) {
		if (it->task_id != NULL && (bq_s(t, "id") == NULL ||
		    strcmp(bq_s(t, "id"), it->task_id) != 0))
			continue;
		bq_task(&b, t);
		bqforecast_task(it, t);
		n++;
	}
	if (n == 0) {
		xasprintf(err, "item %s: solution %s has no task%s%s", it->id,
		    it->solution_id, it->task_id ? " " : "",
		    it->task_id ? it->task_id : "");
		free(b.s);
		return -1;
	}
	bqbuf_add(&b, "\nWhen every task passes its tests and criteria, "
	    "commit once (conventional message).\n");
	if (b.over) {
		xasprintf(err, "item %s: its description passes %d bytes",
		    it->id, BQ_DESC_MAX);
		free(b.s);
		return -1;
	}
	it->description = b.s;
	if (title == NULL || title[0] == '\0')
		title = it->issue_id;
	if (it->task_id != NULL)
		xasprintf(&it->title, "%.4096s: %s", title, it->task_id);
	else
		it->title = xstrndup(title, strnlen(title, 4096));
	return 0;
}

/*
 * Every item's description, the files read once: issues.jsonl (and
 * issue-history.jsonl, where `ccw issue done` moves finished issues:
 * issue.ts moveIssueToHistory) and each solutions/{issueId}.jsonl.
 */
int
bqdesc_build_all(struct bq_input *in, const char *idir, char **err)
{
	json_t		*issues = NULL, *hist = NULL, *sols, *arr, *issue, *sol;
	char		*path;
	struct bq_item	*it;
	size_t		 i;
	int		 rc = -1;

	sols = json_object();
	xasprintf(&path, "%s/issues.jsonl", idir);
	if (bq_jsonl_read(path, &issues, NULL, err) != 0)
		goto out;
	free(path);
	xasprintf(&path, "%s/issue-history.jsonl", idir);
	if (access(path, F_OK) == 0 &&
	    bq_jsonl_read(path, &hist, NULL, err) != 0)
		goto out;
	for (i = 0; i < in->nitems; i++) {
		it = &in->items[i];
		if ((issue = bq_by_id(issues, it->issue_id)) == NULL &&
		    (issue = bq_by_id(hist, it->issue_id)) == NULL) {
			xasprintf(err, "item %s: issue %s is not in %s/"
			    "issues.jsonl", it->id, it->issue_id, idir);
			goto out;
		}
		free(path);
		xasprintf(&path, "%s/solutions/%s.jsonl", idir, it->issue_id);
		if ((arr = json_object_get(sols, it->issue_id)) == NULL) {
			if (bq_jsonl_read(path, &arr, NULL, err) != 0)
				goto out;
			json_object_set_new(sols, it->issue_id, arr);
		}
		if ((sol = bq_by_id(arr, it->solution_id)) == NULL) {
			xasprintf(err, "item %s: solution %s is not in %s",
			    it->id, it->solution_id, path);
			goto out;
		}
		if (bq_describe(it, in->queue_id, issue, sol, err) != 0)
			goto out;
	}
	rc = 0;
out:
	free(path);
	json_decref(issues);
	json_decref(hist);
	json_decref(sols);
	return rc;
}
