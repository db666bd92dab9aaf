/*
 * cmdutil.h: what the agent, control and run subcommands share: their
 * common options, the configuration and state directory they name, a
 * role's spawn request (plan_spawn under the options), the api's spawn
 * plan (plan_request over a plan_base), the stop signals, JSON output.
 */
#ifndef CCW_CMDUTIL_H
#define CCW_CMDUTIL_H

#include <sys/types.h>
#include <stdint.h>

#include <event2/util.h>
#include <jansson.h>

#include "agent.h"
#include "api.h"
#include "loopguard.h"
#include "plan.h"
#include "toolconfig.h"

#define CMD_NSIG	3	/* cmd_signals: SIGTERM, SIGINT, SIGHUP */

struct event;
struct event_base;
struct retire;

struct cmd_opts {
	/* from the command line, borrowed from argv */
	const char	*tool, *command, *model, *config_path, *root;
	const char	*state_dir_opt, *loop_id, *role, *message;
	uint64_t	 timeout_ms, nudge_ms, grace_ms, idle_ms;
	int		 have_timeout, have_nudge, have_grace, have_idle;
	int		 quiet_warnings;	/* doctor reports them itself */
	const struct workflow *wf;	/* whose roles: NULL ccw-loop */
	struct launch_cfg launch;	/* --launcher, --remote-worker (owned) */
	struct log_max	 log_max;	/* --log-max */
	const char	*containment;	/* --containment, or NULL */
	/* derived, owned */
	struct config	 cfg;
	int		 cfg_loaded;
	char		*state_dir;
	char		*cwd;
};

/* The launcher's options in every subcommand's getopt table. */
#define CMD_OPT_LAUNCHER	0x101
#define CMD_OPT_REMOTE_WORKER	0x102
#define CMD_OPT_LOG_MAX		0x103
#define CMD_OPT_CONTAINMENT	0x104
#define CMD_LOG_MAX_LONGOPT \
	{ "log-max", required_argument, NULL, CMD_OPT_LOG_MAX }
#define CMD_LAUNCH_LONGOPTS \
	{ "launcher", required_argument, NULL, CMD_OPT_LAUNCHER }, \
	{ "remote-worker", required_argument, NULL, CMD_OPT_REMOTE_WORKER }, \
	{ "containment", required_argument, NULL, CMD_OPT_CONTAINMENT }

void	cmd_opts_init(struct cmd_opts *);
int	cmd_opts_set(struct cmd_opts *, int, const char *);
int	cmd_opts_load(struct cmd_opts *, char **);
int	cmd_opts_resolve(struct cmd_opts *, struct agent_req *, char **);
void	cmd_opts_overrides(const struct cmd_opts *, struct plan_overrides *);
void	cmd_opts_free(struct cmd_opts *);
void	cmd_plan_base(const struct cmd_opts *, struct plan_base *);
int	cmd_guard_open(struct loop_guard *, const struct sup *, char **);
int	cmd_plan_spawn(const struct plan_base *, struct loop_guard *,
	    struct sup *, const struct api_spawn *, struct agent_req *, char **);
struct retire *cmd_retire_new(const struct cmd_opts *, struct sup *);
void	cmd_signals(struct event_base *, struct event **,
	    void (*)(evutil_socket_t, short, void *), void *);
void	cmd_signal_why(char *, size_t, const char *, int);
void	cmd_print_json(const json_t *, int);
void	cmd_emit_event(const char *, const json_t *);
int	cmd_num(const char *, const char *, const char *, double, double *);
void	cmd_budget_relayed(const char *, const char *, const char *,
	    const char *);	/* cmd, kind, id, "driver" */

/*
 * A string member of O for printing, DFLT when it is absent or not a
 * string.  Inline here, not in cmdutil.c: the JUnit writer it serves is
 * linked into a unit test without the rest of the front ends.
 */
static inline const char *
cmd_json_str(const json_t *o, const char *key, const char *dflt)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : dflt;
}

#endif
