/*
 * cmdutil.c: shared option handling for the agent and control commands.
 * The configuration decides a role's tool, command, model and deadlines;
 * the command line overrides it.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ccw-loop.h"
#include "cmdutil.h"
#include "state.h"
#include "xmalloc.h"

/* Empty options. */
void
cmd_opts_init(struct cmd_opts *o)
{
	memset(o, 0, sizeof *o);
}

/* Parse a millisecond count: digits only, no overflow. */
static int
cmd_parse_ms(const char *s, uint64_t *out)
{
	char			*end;
	unsigned long long	 v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

/* One option character (as the subcommands' getopt tables assign them). */
int
cmd_opts_set(struct cmd_opts *o, int ch, const char *arg)
{
	switch (ch) {
	case 't': o->tool = arg; return 0;
	case 'c': o->command = arg; return 0;
	case 'm': o->model = arg; return 0;
	case 'f': o->config_path = arg; return 0;
	case 's': o->state_dir_opt = arg; return 0;
	case 'l': o->loop_id = arg; return 0;
	case 'C': o->root = arg; return 0;
	case 'T':
		o->have_timeout = 1;
		if (cmd_parse_ms(arg, &o->timeout_ms) == 0)
			return 0;
		break;
	case 'N':
		o->have_nudge = 1;
		if (cmd_parse_ms(arg, &o->nudge_ms) == 0)
			return 0;
		break;
	case 'G':
		o->have_grace = 1;
		if (cmd_parse_ms(arg, &o->grace_ms) == 0)
			return 0;
		break;
	case 'i':
		o->have_idle = 1;
		if (cmd_parse_ms(arg, &o->idle_ms) == 0)
			return 0;
		break;
	default:
		return -1;
	}
	fprintf(stderr, "ccw-supervisor: '%s' is not a number of "
	    "milliseconds\n", arg);
	return -1;
}

/*
 * Load the configuration and settle the root and state directory, once.
 * ROOT/.loop is the state directory unless only CCW's .workflow/.loop
 * exists.
 */
int
cmd_opts_load(struct cmd_opts *o, char **err)
{
	char		 buf[PATH_MAX];
	struct stat	 sb;
	char		*alt;

	if (o->cfg_loaded)
		return 0;
	if (o->loop_id != NULL && !state_id_valid(o->loop_id)) {
		xasprintf(err, "invalid loop id '%s': use [A-Za-z0-9]"
		    "[A-Za-z0-9._-]{0,127}, no '..'", o->loop_id);
		return -1;
	}
	if (o->root != NULL) {
		if (realpath(o->root, buf) == NULL ||
		    stat(buf, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			xasprintf(err, "-C %s: not a directory", o->root);
			return -1;
		}
	} else if (getcwd(buf, sizeof buf) == NULL) {
		xasprintf(err, "getcwd: %s", strerror(errno));
		return -1;
	}
	o->cwd = xstrdup(buf);
	if (config_load(&ccw_loop_workflow, o->config_path, o->cwd, NULL,
	    &o->cfg, err) != 0)
		return -1;
	o->cfg_loaded = 1;
	if (o->state_dir_opt != NULL)
		o->state_dir = xstrdup(o->state_dir_opt);
	else {
		xasprintf(&o->state_dir, "%s/.loop", o->cwd);
		xasprintf(&alt, "%s/.workflow/.loop", o->cwd);
		if (stat(o->state_dir, &sb) != 0 && stat(alt, &sb) == 0) {
			free(o->state_dir);
			o->state_dir = alt;
		} else
			free(alt);
	}
	return 0;
}

/*
 * Build a spawn request for o->role: command line first, then the role's
 * configuration, then the configuration's default tool.  The options
 * object in req is a new reference the caller releases.
 */
int
cmd_opts_resolve(struct cmd_opts *o, struct agent_req *req, char **err)
{
	const struct role_cfg	*rc;
	const struct tool_cfg	*tc;
	const char		*tool;
	int			 ri;

	if (cmd_opts_load(o, err) != 0)
		return -1;
	if ((ri = config_role_index(&o->cfg, o->role)) < 0) {
		*err = workflow_role_unknown(o->cfg.wf, o->role);
		return -1;
	}
	rc = &o->cfg.roles[ri];
	tool = o->tool != NULL ? o->tool : rc->tool != NULL ? rc->tool :
	    o->cfg.default_tool;
	if ((tc = config_tool(&o->cfg, tool)) == NULL) {
		xasprintf(err, "unknown tool '%s' (bash, claude, codex, "
		    "gemini, opencode, qwen)", tool);
		return -1;
	}
	if (!tc->enabled) {
		xasprintf(err, "tool '%s' is disabled in the configuration",
		    tool);
		return -1;
	}
	memset(req, 0, sizeof *req);
	req->role = o->role;
	req->tool = tc->name;
	req->prompt = o->message;
	req->cwd = o->cwd;
	req->model = o->model != NULL ? o->model : rc->model != NULL ?
	    rc->model : tc->model;
	req->command = o->command != NULL ? o->command : rc->command;
	if (strcmp(tc->name, "bash") == 0 && req->command == NULL) {
		xasprintf(err, "the bash tool needs --command (or "
		    "roles.%s.command in the configuration)", o->role);
		return -1;
	}
	req->options = tc->options != NULL ? json_deep_copy(tc->options) :
	    json_object();
	if (!json_is_object(req->options)) {
		json_decref(req->options);
		req->options = json_object();
	}
	json_object_set_new(req->options, "path",
	    json_string(tc->path != NULL ? tc->path : tc->name));
	/* the worker maps it to the tool's own sandbox or permission flags */
	if (rc->permission != NULL)
		json_object_set_new(req->options, "permission",
		    json_string(rc->permission));
	if (!o->have_timeout)
		o->timeout_ms = rc->timeout_ms;
	if (!o->have_nudge)
		o->nudge_ms = rc->nudge_ms;
	if (!o->have_grace)
		o->grace_ms = rc->grace_ms;
	req->timeout_ms = o->timeout_ms;
	req->idle_ms = o->have_idle ? o->idle_ms : rc->idle_ms;
	return 0;
}

/* Release what cmd_opts_load derived. */
void
cmd_opts_free(struct cmd_opts *o)
{
	if (o->cfg_loaded)
		config_free(&o->cfg);
	free(o->state_dir);
	free(o->cwd);
	memset(o, 0, sizeof *o);
}

/* Print a JSON value on stdout: indented, or one line with compact. */
void
cmd_print_json(json_t *j, int compact)
{
	char	*s;

	s = json_dumps(j, compact ? JSON_COMPACT : JSON_INDENT(2));
	if (s != NULL) {
		puts(s);
		free(s);
	}
	fflush(stdout);
}
