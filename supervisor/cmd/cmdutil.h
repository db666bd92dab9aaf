/*
 * cmdutil.h: what the agent and control subcommands share: their common
 * options, turning a role + tool into a spawn request through the
 * configuration, the state directory, and JSON output.
 */
#ifndef CCW_CMDUTIL_H
#define CCW_CMDUTIL_H

#include <sys/types.h>
#include <stdint.h>

#include <jansson.h>

#include "agent.h"
#include "toolconfig.h"

struct cmd_opts {
	/* from the command line, borrowed from argv */
	const char	*tool, *command, *model, *config_path, *root;
	const char	*state_dir_opt, *loop_id, *role, *message;
	uint64_t	 timeout_ms, nudge_ms, grace_ms, idle_ms;
	int		 have_timeout, have_nudge, have_grace, have_idle;
	/* derived, owned */
	struct config	 cfg;
	int		 cfg_loaded;
	char		*state_dir;
	char		*cwd;
};

void	cmd_opts_init(struct cmd_opts *);
int	cmd_opts_set(struct cmd_opts *, int, const char *);
int	cmd_opts_load(struct cmd_opts *, char **);
int	cmd_opts_resolve(struct cmd_opts *, struct agent_req *, char **);
void	cmd_opts_free(struct cmd_opts *);
void	cmd_print_json(json_t *, int);

/*
 * loopguard.c: a driver's hold on one loop: {id}.run.lock flocked for its
 * life, {id}.workers opened without following a link, and the next agent
 * index, above every agent id the loop has seen.
 */
struct loop_guard {
	int		 dirfd;		/* the state directory */
	int		 lock_fd;	/* {id}.run.lock, locked */
	int		 workers_fd;	/* {id}.workers */
	dev_t		 workers_dev;	/* what workers_fd is, to check */
	ino_t		 workers_ino;	/* the path still leads there */
	char		*id;
	unsigned	 next;		/* the lowest agent index still free */
};
int	loopguard_open(struct loop_guard *, const char *, const char *,
	    char **);
int	loopguard_workers(struct loop_guard *, const json_t *, char **);
int	loopguard_reserve(struct loop_guard *, struct sup *, char **);
void	loopguard_close(struct loop_guard *);

#endif
