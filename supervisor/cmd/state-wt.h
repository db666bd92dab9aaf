/*
 * state-wt.h: the git worktrees a loop keeps, as `state show` lists
 * them (state-wt.c).
 */
#ifndef CCW_STATE_WT_H
#define CCW_STATE_WT_H

#include <jansson.h>

json_t	*state_worktrees(const json_t *);

#endif
