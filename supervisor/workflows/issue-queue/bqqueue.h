/*
 * bqqueue.h: a CCW queue file's item statuses written the way CCW's own
 * tools write them (ccw/src/commands/issue.ts: next, done, retry and
 * writeQueue), with queues/index.json kept in step (bqqueue.c), and the
 * item's issue in issues.jsonl (bqissue.c: updateIssue).  Crash-safe, and safe
 * against a concurrent writer as far as CCW allows.
 */
#ifndef CCW_BQQUEUE_H
#define CCW_BQQUEUE_H

#include <jansson.h>

int	bqqueue_update(const char *, const char *, const char *,
	    const json_t *, char **);
int	bqqueue_index_update(const char *, char **);
int	bqqueue_issue_update(const char *, const char *, const char *, char **);

#endif
