/*
 * launch.h: a launcher, the argv prefix (ssh, srun) that starts a worker
 * on another host with its channel on the launcher's stdin and stdout,
 * and the deadlines of the heartbeat (agent.c) that tells a lost host
 * from a slow one.
 */
#ifndef CCW_LAUNCH_H
#define CCW_LAUNCH_H

#include <stdint.h>

#include <jansson.h>

#include "proto.h"

/* The defaults: a PING every 2 s, lost after 5 missed (10 s). */
#define LAUNCH_PING_MS		2000
#define LAUNCH_MISSES		5
/* Before HELLO a launcher may queue (srun) or connect (ssh): 30 s. */
#define LAUNCH_START_MS		30000

struct launch_cfg {
	struct strv	 argv;		/* empty: local (fork and exec) */
	char		*remote_worker;	/* ccw-worker there; NULL: ours */
	uint64_t	 ping_ms;	/* 0: LAUNCH_PING_MS */
	unsigned	 misses;	/* 0: LAUNCH_MISSES */
	uint64_t	 start_ms;	/* 0: LAUNCH_START_MS */
	int		 set;		/* configured ("local" included) */
};

int	 launch_parse_string(const char *, struct strv *, char **);
int	 launch_parse_json(const json_t *, const char *, struct launch_cfg *,
	    char **);
void	 launch_copy(struct launch_cfg *, const struct launch_cfg *);
void	 launch_clear(struct launch_cfg *);
uint64_t launch_lost_ms(const struct launch_cfg *);
char	*launch_describe(const struct launch_cfg *);
char   **launch_argv(const struct launch_cfg *, const char *, const char *,
	    unsigned);

#endif
