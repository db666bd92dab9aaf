/*
 * bqissue.c: an issue's status in issues.jsonl kept in step with its
 * queue item, as CCW's tools do (ccw/src/commands/issue.ts: nextAction
 * and doneAction call updateIssue; a completed issue moves to
 * issue-history.jsonl, moveIssueToHistory; retryAction sets queued).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bqfile.h"
#include "bqint.h"
#include "bqqueue.h"
#include "xmalloc.h"

/* A JSONL text: one JSON.stringify line each, an LF after each. */
static char *
bqi_text(const json_t *arr, size_t *lenp)
{
	json_t	*o;
	char	*out = xstrdup(""), *line, *t;
	size_t	 i;

	json_array_foreach(arr, i, o) {
		if ((line = bqfile_json_line(o)) == NULL)
			continue;
		xasprintf(&t, "%s%s\n", out, line);
		free(line);
		free(out);
		out = t;
	}
	*lenp = strlen(out);
	return out;
}

/* appendIssueHistory: issue-history.jsonl gains the issue's line. */
static int
bqi_history(const char *idir, const json_t *issue, char **err)
{
	char	*path, *old = NULL, *line, *text;
	size_t	 len = 0;
	int	 lfd, rc = -1;

	xasprintf(&path, "%s/issue-history.jsonl", idir);
	if ((lfd = bqfile_lock(path, err)) == -1)
		goto out;
	if (lfd >= 0 && bqfile_read(path, BQ_FILE_MAX, &old, &len, NULL,
	    err) != 0)
		goto out;
	line = bqfile_json_line(issue);
	/* "Ensure proper newline before appending" */
	xasprintf(&text, "%s%s%s\n", old != NULL ? old : "", len > 0 &&
	    old[len - 1] != '\n' ? "\n" : "", line != NULL ? line : "{}");
	free(line);
	rc = bqfile_write_atomic(path, text, strlen(text), NULL, err);
	free(text);
out:
	if (lfd >= 0)
		close(lfd);
	free(old);
	free(path);
	return rc;
}

struct bqi_req {
	const char	*idir, *issue_id, *status;
	int		 moved;		/* already in issue-history.jsonl */
};

/* issues.jsonl's edit for bqfile_edit: the issue's status, or nothing. */
static int
bqi_edit(const char *path, int exists, struct stat *st, void *arg,
    char **textp, char **err)
{
	struct bqi_req	*r = arg;
	json_t		*arr, *o, *issue = NULL;
	const char	*id;
	char		 now[40];
	size_t		 i, len;

	if (!exists)
		return 1;
	if (bq_jsonl_read(path, &arr, st, err) != 0)
		return -1;
	json_array_foreach(arr, i, o)
		if ((id = json_string_value(json_object_get(o, "id"))) != NULL &&
		    strcmp(id, r->issue_id) == 0) {
			issue = o;
			break;
		}
	if (issue == NULL) {
		json_decref(arr);
		return 1;
	}
	bqfile_iso_now(now, sizeof(now));
	json_object_set_new(issue, "status", json_string(r->status));
	if (strcmp(r->status, "completed") == 0)
		json_object_set_new(issue, "completed_at", json_string(now));
	json_object_set_new(issue, "updated_at", json_string(now));
	if (strcmp(r->status, "completed") == 0) {
		/* history first: a crash leaves the issue in both files,
		 * never in neither */
		if (!r->moved && bqi_history(r->idir, issue, err) != 0) {
			json_decref(arr);
			return -1;
		}
		r->moved = 1;
		json_array_remove(arr, i);
	}
	*textp = bqi_text(arr, &len);
	json_decref(arr);
	return 0;
}

/*
 * Issue issue_id of the issues directory idir brought in step with its
 * queue item's new status: executing -> executing, failed -> failed,
 * completed -> completed with completed_at (and moved to
 * issue-history.jsonl), pending (a retry) -> queued; updated_at now.
 * No issues.jsonl or no such issue: nothing to do (updateIssue returns
 * false).  Other members are kept as they were.
 */
int
bqqueue_issue_update(const char *idir, const char *issue_id,
    const char *item_status, char **err)
{
	struct bqi_req	 r = { idir, issue_id, NULL, 0 };
	char		*path;
	int		 rc;

	*err = NULL;
	if (strcmp(item_status, "pending") == 0)
		r.status = "queued";
	else if (strcmp(item_status, "executing") == 0 ||
	    strcmp(item_status, "completed") == 0 ||
	    strcmp(item_status, "failed") == 0)
		r.status = item_status;
	else
		return 0;
	xasprintf(&path, "%s/issues.jsonl", idir);
	rc = bqfile_edit(path, bqi_edit, &r, err);
	free(path);
	return rc;
}
