/*
 * gitwt.h: the git work of issue 27 in ccw-worker: running git and sh
 * under a deadline (gitexec.c), worktrees, commits and diffs (gitwt.c),
 * the --git verbs (gitcmd.c, gitprep.c, gitmerge.c, gittry.c) and a
 * worker's own worktree from ASSIGN's options.worktree (wtassign.c).
 */
#ifndef CCW_GITWT_H
#define CCW_GITWT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define GITX_DEADLINE_MS	(10u * 60 * 1000)	/* any one git command */
#define GITWT_ME	"ccw-supervisor"	/* identity when the repo has none */
#define GITWT_MAIL	"ccw-supervisor@localhost"
#define GITWT_COPIES	64	/* copied files a commit leaves out */

/* What a command did: its output, its status, how long it took. */
struct gitout {
	char		*out;		/* stdout (with stderr for gitexec_sh) */
	size_t		 len;
	char		*err;		/* stderr (git only) */
	size_t		 err_len;
	int		 status;	/* exit code; 128+N killed by signal N */
	int		 timed_out;	/* killed at its deadline */
	uint64_t	 ms;
};

/* worker/gitexec.c */
int	gitexec_argv(const char *, const char *const *, uint64_t,
	    struct gitout *);
int	gitexec_git(const char *, struct gitout *, ...)
	    __attribute__((sentinel));
int	gitexec_sh(const char *, const char *, uint64_t, struct gitout *);
char	*gitexec_line(const char *, ...) __attribute__((sentinel));
void	gitexec_clear(struct gitout *);
char	*gitexec_tail(const struct gitout *, size_t);
char	*gitexec_why(const struct gitout *);

/* worker/gitwt.c */
const char *gitwt_str(const json_t *, const char *, int, char **);
int	gitwt_name_ok(const char *);
int	gitwt_branch_ok(const char *);
int	gitwt_rel_ok(const char *);
char	*gitwt_loopref(const char *);
int	gitwt_is_tree(const char *, const char *);
int	gitwt_ensure(const char *, const char *, const char *, const char *,
	    char **);
int	gitwt_remove(const char *, const char *);
int	gitwt_lock(const char *);
void	gitwt_unlock(int);
void	gitwt_rmrf(const char *);
void	gitwt_mkparent(const char *);
int	gitwt_commit_all(const char *, const char *, char **);
int	gitwt_commit_args(const char *, const char **, size_t);
json_t	*gitwt_files(const char *, const char *, const char *);
json_t	*gitwt_stat(const char *, const char *, const char *);
int	gitwt_recover(const char *, const char *, char **);
int	gitwt_pending(const char *, const char *);
char	*gitwt_gitpath(const char *, const char *);
int	gitwt_dirty(const char *, int *);

/* worker/gitcmd.c */
int	gitcmd_main(int, char **);

/* worker/gitprep.c */
json_t	*gitprep_prepare(const json_t *, int *, char **);
json_t	*gitprep_cleanup(const json_t *, int *, char **);
json_t	*gitprep_land(const json_t *, int *, char **);

/* worker/gitmerge.c */
json_t	*gitmerge_merge(const json_t *, int *, char **);
int	gitmerge_check_in(const char *, const char *, uint64_t, json_t *);

/* worker/gittry.c */
json_t	*gittry_try(const json_t *, int *, char **);

#endif
