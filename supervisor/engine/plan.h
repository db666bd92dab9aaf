/*
 * plan.h: spawn planning, a pure function of (configuration, root, role,
 * overrides, prompt): which tool, command, model and options a role's
 * worker gets, and the deadlines its driver climbs.  Nothing is modified.
 */
#ifndef CCW_PLAN_H
#define CCW_PLAN_H

#include <stdint.h>

#include "agent.h"
#include "toolconfig.h"

/* What a caller (a command line, a front end's request) puts above the
 * configuration; NULL strings and unset have-flags leave it alone. */
struct plan_overrides {
	const char	*tool, *command, *model;
	uint64_t	 timeout_ms, nudge_ms, grace_ms, idle_ms;
	int		 have_timeout, have_nudge, have_grace, have_idle;
	const struct launch_cfg *launch;	/* --launcher: over every role's */
	struct log_max	 log_max;	/* --log-max: over every role's */
	const char	*isolation;	/* --isolation: over config's */
	int		 from_worktree;	/* --from-worktree: a dirty start */
	int		 land;		/* --land: fast-forward at the end */
	unsigned	 attempts;	/* --attempts: develop's, 0 unset */
};

/* The deadlines a driver of the agent climbs (wait, nudge, close). */
struct plan_deadlines {
	uint64_t	 timeout_ms, nudge_ms, grace_ms, idle_ms;
};

/*
 * What a front end plans every spawn from, filled once by its command
 * line (cmd/): the configuration, the root, the overrides.  Borrowed;
 * it outlives the plans.
 */
struct plan_base {
	const struct config	*config;
	const char		*root;
	struct plan_overrides	 over;
};

/*
 * One spawn asked of a front end (a control or HTTP request, a batch
 * item) over a plan_base: NULL members leave the base's.  Borrowed for
 * the call; the agent_req planned borrows from it and from the base.
 */
struct plan_request {
	const char	*role;
	const char	*prompt;
	const char	*tool, *command, *model;
	const char	*cwd;		/* NULL: the base's root */
	const struct launch_cfg *launch;	/* NULL: the base's */
};

int	plan_spawn(const struct config *, const char *, const char *,
	    const struct plan_overrides *, const char *, struct agent_req *,
	    struct plan_deadlines *, char **);
int	plan_request(const struct plan_base *, const struct plan_request *,
	    struct agent_req *, struct plan_deadlines *, char **);

#endif
