/*
 * bqinput.h: the batch's FILE as items the scheduler runs: a JSONL file
 * (one loop a line) or a CCW issue queue (.workflow/issues/queues/
 * QUE-*.json with its issues and solutions).  Pure: reads files, starts
 * nothing.  See bqinput.c for the JSONL keys, bqinputq.c for the queue.
 */
#ifndef CCW_BQINPUT_H
#define CCW_BQINPUT_H

#include <stddef.h>

#include "launch.h"

#define BQ_ITEMS_MAX	10000		/* items of one FILE */
#define BQ_STR_MAX	(64 * 1024)	/* a title, a tool, a path, an id */
#define BQ_DESC_MAX	(1024 * 1024)	/* a description, given or built */

enum bq_kind { BQ_LOOP, BQ_WORKER };	/* one ccw-loop, or one worker */

struct bq_item {
	char		*id;		/* JSONL: "item-001".. by line order; queue: item_id */
	char		*title;
	char		*description;	/* the loop's task text (queue: built from issue + solution tasks) */
	char		*mode;		/* "auto" (default) or "parallel" */
	long long	 max_iterations;	/* 0: the default */
	char		*tool, *model;	/* NULL: the configuration's */
	char		*root;		/* absolute path; NULL: the batch's -C ROOT */
	enum bq_kind	 kind;
	char		*role;		/* BQ_WORKER: the role to spawn (default develop) */
	char		*issue_id, *solution_id;	/* queue items only */
	char		*task_id;	/* a task-level (T-N) queue item's task */
	char		*status;	/* queue: the item's status when loaded; JSONL: NULL */
	size_t		*deps, ndeps;	/* indices of items it depends on */
	size_t		 group;		/* index into groups */
	unsigned	 line;		/* JSONL line, 0 for a queue */
	struct launch_cfg launch;	/* BQ_WORKER: "launcher", when set */
	char		**files;	/* file hints (bqforecast.c), normalized */
	size_t		 nfiles;
	int		 worktree;	/* BQ_WORKER: "worktree": true */
};

/*
 * A group's items in the order to start them.  Groups come in file order;
 * CCW runs them one after the other (issue.ts's dag: parallel_batches in
 * execution_groups order; .claude/commands/issue/execute.md runs batch 1,
 * then asks the dag again).  parallel: its items may run at once;
 * sequential: one at a time, in this order.
 */
struct bq_group {
	char		*id;		/* queue: P1, S2..; JSONL: "jsonl" */
	int		 parallel;
	size_t		*items, nitems;
};

struct bq_input {
	int		 is_queue;
	char		*path;		/* absolute */
	char		*queue_id;	/* queue: its id ("QUE-..."), else NULL */
	struct bq_item	*items; size_t nitems;
	struct bq_group	*groups; size_t ngroups;
};

int	bqinput_load(const char *, const char *, struct bq_input *, char **);
void	bqinput_free(struct bq_input *);

#endif
