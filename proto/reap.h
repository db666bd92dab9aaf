/*
 * reap.h: what a child subreaper needs: its children and their
 * descendants as /proc lists them, a process's identity fields, a sweep
 * that kills and reaps every descendant, the sweep of a dead session's
 * orphans, and the exec-status pipe read that tells a failed exec from a
 * started program.
 */
#ifndef CCW_REAP_H
#define CCW_REAP_H

#include <stddef.h>
#include <sys/types.h>

/* The fields of /proc/PID/stat that say who a process is. */
struct reap_stat {
	pid_t			ppid, pgrp, sid;
	char			state;		/* R, S, T, Z, ... */
	unsigned long long	start;		/* since boot, in clock ticks */
	char			comm[32];
};

/* A child the sweep of a dead session may pass over (reap_orphans). */
typedef int	(*reap_skip_cb)(pid_t, void *);

int		reap_stat(pid_t, struct reap_stat *);
int		reap_signal(pid_t, unsigned long long, int, int);
int		reap_children(pid_t, pid_t *, int);
int		reap_list(pid_t *, int, int);
void		reap_sweep(pid_t, int *, int *);
unsigned	reap_orphans(pid_t, unsigned long long, reap_skip_cb, void *,
		    char *, size_t);
int		reap_exec_status(int, pid_t);

#endif
