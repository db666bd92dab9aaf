/*
 * freeze.h: what freeze.c and its guard (freezeguard.c) share: the
 * processes a freeze stopped, and the guard that lets them go on should
 * the supervisor die while they are stopped.
 */
#ifndef CCW_FREEZE_H
#define CCW_FREEZE_H

#include <sys/types.h>

/* The processes a freeze stopped (SIGSTOP), the worker first. */
struct freeze_tree {
	pid_t			*pid;
	unsigned long long	*start;
	int			 n;
};

int	freeze_guard_start(const struct freeze_tree *, const char *);
void	freeze_guard_end(int);

#endif
