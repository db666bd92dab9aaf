/*
 * wtclean.h: the worktrees and branches of a loop deleted while no
 * process drives it (serve's DELETE): the `ccw-worker --git cleanup`
 * request read from its state's skill_state.worktree (wtclean_where,
 * the one reader of that record), and its outcome said in the log.
 * The run itself is gitrun's.
 */
#ifndef CCW_WTCLEAN_H
#define CCW_WTCLEAN_H

#include <jansson.h>

#define WTCLEAN_MS	60000	/* the cleanup's deadline */

void	 wtclean_where(const json_t *, const char **, const char **,
	    const char **);
json_t	*wtclean_request(const json_t *);
void	 wtclean_said(const char *, int, const json_t *, const char *);

#endif
