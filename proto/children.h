/*
 * children.h: the one SIGCHLD reaper of a process.  A registry on the
 * caller's event base maps each pid someone started to the owner told of
 * its exit; every other child (an orphan adopted as a subreaper) is reaped
 * and forgotten.  Leaks found at a worker's death are told to the one
 * listener every table on the registry shares (children_on_leak).
 */
#ifndef CCW_CHILDREN_H
#define CCW_CHILDREN_H

#include <sys/types.h>

struct event_base;
struct children;

/* pid exited (or was killed) with wait status st. */
typedef void	(*children_cb)(pid_t, int, void *);

/*
 * n processes outlived the worker of agent (of loop) and were ended; how
 * names them.  The host's (leak.c) counts and publishes it.
 */
typedef void	(*children_leak_cb)(const char *, const char *, unsigned,
		    const char *, void *);

struct children	*children_new(struct event_base *, char **);
int		 children_on_leak(struct children *, children_leak_cb, void *);
void		 children_off_leak(struct children *, void *);
void		 children_leaked(struct children *, const char *, const char *,
		    unsigned, const char *);
int		 children_watch(struct children *, pid_t, children_cb, void *);
void		 children_forget(struct children *, pid_t);
void		 children_reap(struct children *);
int		 children_watched(pid_t, void *);
void		 children_free(struct children *);

#endif
