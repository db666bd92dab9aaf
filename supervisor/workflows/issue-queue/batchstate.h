/*
 * batchstate.h: a batch's own state file, ROOT/.workflow/.batch/{id}/
 * state.json in seed 001's shape with state-history.json beside it,
 * and the run lock that keeps one driver per batch.
 */
#ifndef CCW_BATCHSTATE_H
#define CCW_BATCHSTATE_H

#include <sys/types.h>

#include <stdatomic.h>

#include <jansson.h>

struct batch_text;
struct bq_input;

#define BATCH_DIR	".workflow/.batch"

/* A batch's directory held open, locked, with its history in memory. */
struct batch_store {
	char		*dir;		/* ROOT/.workflow/.batch/ID */
	int		 dirfd;
	int		 lock_fd;
	json_t		*history;	/* state-history.json's array */
	struct batch_text *text;	/* state.json's kept pieces: the
					   batch says what changed */
	_Atomic ino_t	 ino;		/* state.json as we last wrote it (the
					   committer writes it, the watch reads) */
};

int	 batchstore_open(struct batch_store *, const char *, const char *,
	    int, char **);	/* root, id, create */
void	 batchstore_close(struct batch_store *);
int	 batchstore_load(struct batch_store *, json_t **, char **);
/* on the loop's thread: what a save writes (state text, history text or NULL) */
int	 batchstore_texts(struct batch_store *, const json_t *, char **,
	    char **, char **);
/* anywhere (a committer thread): the texts written, each atomically;
   our last write's inode, our budget's text (NULL: no front end's raise
   to leave in place) */
int	 batchstore_write(int, _Atomic ino_t *, const char *, const char *,
	    const char *, char **);
/* a front end: a driven batch's budget raised (0; 1 not driven; -1) */
int	 batchstore_raise(const char *, const char *, const json_t *, char **);
char	*batchstore_budget_text(const json_t *);	/* compact, or NULL */

json_t	*batchstate_new(const char *, const char *, const struct bq_input *,
	    const char *);	/* id, work_dir, input, now */
int	 batchstate_check(const json_t *, char **);
char	*batchstate_input_path(const char *, const char *, char **);
json_t	*batchstate_item(const json_t *, const char *);	/* queue[] by item_id */

#endif
