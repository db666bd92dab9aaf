/*
 * loopguard.h: a driver's hold on one loop: {id}.run.lock flocked for its
 * life, {id}.workers opened without following a link, and the next agent
 * index, above every agent id the loop has seen.
 */
#ifndef CCW_LOOPGUARD_H
#define CCW_LOOPGUARD_H

#include <sys/types.h>

#include <jansson.h>

struct sup;

struct loop_guard {
	int		 dirfd;		/* the state directory */
	int		 lock_fd;	/* {id}.run.lock, locked */
	int		 workers_fd;	/* {id}.workers */
	dev_t		 workers_dev;	/* what workers_fd is, to check */
	ino_t		 workers_ino;	/* the path still leads there */
	char		*id;
	unsigned	 next;		/* the lowest agent index still free */
};

/* 0; 1 (another process drives the loop, its pid in *err); -1 */
int	loopguard_open(struct loop_guard *, const char *, const char *,
	    char **);
int	loopguard_workers(struct loop_guard *, const json_t *, char **);
int	loopguard_reserve(struct loop_guard *, struct sup *, char **);
void	loopguard_close(struct loop_guard *);

#endif
