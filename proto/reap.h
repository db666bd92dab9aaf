/*
 * reap.h: what a child subreaper needs: its children as /proc lists them,
 * a sweep that kills and reaps every one of them, and the exec-status
 * pipe read that tells a failed exec from a started program.
 */
#ifndef CCW_REAP_H
#define CCW_REAP_H

#include <sys/types.h>

int	reap_list(pid_t *, int);
void	reap_sweep(pid_t, int *, int *);
int	reap_exec_status(int, pid_t);

#endif
