/*
 * children.h: the one SIGCHLD reaper of a process.  A registry on the
 * caller's event base maps each pid someone started to the owner told of
 * its exit; every other child (an orphan adopted as a subreaper) is reaped
 * and forgotten.
 */
#ifndef CCW_CHILDREN_H
#define CCW_CHILDREN_H

#include <sys/types.h>

struct event_base;
struct children;

/* pid exited (or was killed) with wait status st. */
typedef void	(*children_cb)(pid_t, int, void *);

struct children	*children_new(struct event_base *, char **);
int		 children_watch(struct children *, pid_t, children_cb, void *);
void		 children_forget(struct children *, pid_t);
void		 children_reap(struct children *);
int		 children_reaped(const struct children *, pid_t);
void		 children_free(struct children *);

#endif
