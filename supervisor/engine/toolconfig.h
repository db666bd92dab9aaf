/*
 * toolconfig.h: tool and role configuration: the JSON config file
 * (--config, else ROOT/.loop/config.json, else
 * ~/.config/ccw-supervisor/config.json, else built-in defaults) plus CCW's
 * ~/.claude/cli-tools.json.
 */
#ifndef CCW_CONFIG_H
#define CCW_CONFIG_H

#include <stdint.h>

#include <jansson.h>

#include "launch.h"

struct workflow;

struct tool_cfg {
	char		*name;		/* a row of the tool table (adapter.h) */
	char		*path;		/* executable as configured (NULL: name) */
	int		 enabled;
	char		*model;		/* default model or NULL */
	json_t		*options;	/* passed to the worker as ASSIGN.options */
	unsigned	 max_workers;	/* alive at once per host; 0: no cap */
};

/*
 * How a failing step of the role is retried (Temporal's RetryPolicy):
 * at most attempts tries in a row, the first included; before try n+1
 * a wait of initial_ms * coefficient^(n-1), at most maximum_ms.  A step
 * whose every failure is of a non_retryable kind (bits of the error
 * kinds below) is not tried again.  rate_limited is never one: such an
 * attempt waits for its provider's gate (gate.h) instead.
 */
struct retry_cfg {
	unsigned	 attempts;
	uint64_t	 initial_ms;
	double		 coefficient;
	uint64_t	 maximum_ms;
	unsigned	 non_retryable;	/* CONFIG_EK() bits; default auth */
};

/* The bit of an outcome kind (outcome.h) in non_retryable. */
#define CONFIG_EK(kind)		(1u << (kind))

/*
 * A worker's log cap in bytes (log_max_bytes; 0: none).  Unset, the
 * worker's own default applies (64 MiB, ccw-worker(8)): one place says it.
 */
struct log_max {
	uint64_t	 bytes;
	int		 set;
};

#define CONFIG_MAX_ATTEMPTS	8	/* best-of-N: attempts of one task */

struct role_cfg {
	char		*tool;		/* NULL: config default tool */
	char		*model;
	char		*command;	/* for bash */
	char		*prompt_file;	/* template override, NULL: built-in */
	char		*permission;	/* read-only, workspace-write, full */
	uint64_t	 timeout_ms;
	uint64_t	 nudge_ms;
	uint64_t	 grace_ms;
	uint64_t	 idle_ms;
	struct log_max	 log_max;	/* set: overrides the top level's */
	struct retry_cfg retry;
	struct launch_cfg launch;	/* set: overrides the top level's */
	json_t		*limits;	/* cgroup limits {file: value}; NULL */
	unsigned	 attempts;	/* best-of-N runs of one step; 0: 1 */
	uint64_t	 question_timeout_ms;	/* 0: headless answers at once */
	int		 on_question_timeout;	/* enum question_policy */
	int		 ask_permissions;	/* a CLI's permission requests
						   become questions */
};

/* What our own file set for one tool: CCW's file does not override it. */
struct ccw_set {
	int		 enabled, model;
};

/*
 * Isolation and the merge queue (configgit.c): a parallel step's writers
 * each in a git worktree of their own, merged into the loop's branch.
 */
struct git_cfg {
	char		*isolation;	/* "worktree", "none"; NULL: worktree
					   in a git repository */
	json_t		*copy;		/* worktree.copy: relative paths */
	char		*setup;		/* worktree.setup: sh -c, or NULL */
	uint64_t	 setup_ms;
	char		*strategy;	/* merge.strategy: "merge", "rebase" */
	char		*check;		/* merge.check, or NULL */
	int		 check_set;	/* merge.check named (null: none) */
	uint64_t	 check_ms;
	uint64_t	 max_resolve;	/* resolve steps of one conflict */
};

#define CONFIG_GIT_SETUP_MS	600000
#define CONFIG_GIT_CHECK_MS	600000
#define CONFIG_GIT_MAX_RESOLVE	2

/* roles[] parallels the workflow's role table (flowdef.h). */
struct config {
	char		*source;	/* path of the file read, or "built-in" */
	const struct workflow *wf;	/* whose roles these are */
	char		*default_tool;
	char		*default_reason; /* why it is the default */
	char		**warnings;	/* for the caller to print, e.g. a
					   malformed CCW file */
	size_t		 nwarnings;
	struct tool_cfg	*tools;
	size_t		 ntools;
	struct role_cfg	*roles;
	size_t		 nroles;
	char		*test_command;	/* the project's tests, or NULL */
	struct launch_cfg launch;	/* "launcher": every role's default */
	struct log_max	 log_max;	/* "log_max_bytes": every role's */
	char		*containment;	/* cgroup, sweep, auto; NULL unset */
	uint64_t	 keep_agents;	/* finished agents kept (retire.c) */
	struct git_cfg	 git;		/* isolation, worktree, merge */
	json_t		*notify;	/* notifyconf.c's, checked; NULL */
};

int		 config_load(const struct workflow *, const char *,
		    const char *, const char *, struct config *, char **);
void		 config_free(struct config *);
int		 config_role_index(const struct config *, const char *);
const struct tool_cfg *config_tool(const struct config *, const char *);
char		*config_resolve_path(const char *, const char *);
uint64_t	 config_retry_delay(const struct retry_cfg *, unsigned);
unsigned	 config_error_kind(const char *);
void		 config_warn(struct config *, char *);
char		*config_ccw_path(const char *, const char *);
int		 config_env_parse(const char *, json_t *, char **);
void		 config_git_defaults(struct git_cfg *);
void		 config_git_free(struct git_cfg *);
int		 config_git_apply(const char *, json_t *, struct git_cfg *,
		    char **);
void		 config_ccw_apply(struct config *, const char *,
		    const struct ccw_set *, int);

#endif
