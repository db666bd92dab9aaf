/*
 * batch-isolate.h: batch's worker items in git worktrees of their own
 * (batch-isolate.c): the batch's prepare and cleanup, and each item's
 * options.worktree.
 */
#ifndef CCW_BATCH_ISOLATE_H
#define CCW_BATCH_ISOLATE_H

#include <jansson.h>

struct bq_input;
struct bq_item;
struct children;
struct config;
struct event_base;

struct batchiso {
	int		 all;		/* --worktree: every worker item */
	int		 from_worktree;	/* --from-worktree: a dirty start */
	int		 on;		/* prepared: items get options.worktree */
	char		*side;		/* the batch's directory */
	json_t		*prep;		/* prepare's reply */
	json_t		*tmpl;		/* options.worktree without dir/prefix */
	char		*batch;		/* the batch's id */
};

int	 batchiso_wanted(const struct batchiso *, const struct bq_input *,
	    const char *, char **);
int	 batchiso_prepare(struct batchiso *, struct event_base *,
	    struct children *, const struct config *, const char *,
	    const char *, const char *, int, char **);
json_t	*batchiso_options(const struct batchiso *, const struct bq_item *);
void	 batchiso_cleanup(struct batchiso *, struct event_base *,
	    struct children *);
void	 batchiso_free(struct batchiso *);

#endif
