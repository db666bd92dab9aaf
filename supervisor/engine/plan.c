/*
 * plan.c: a role's spawn request planned from the configuration and the
 * caller's overrides: overrides first, then the role's configuration,
 * then the configuration's default tool.  Pure: no I/O, no input changed.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "plan.h"
#include "flowdef.h"
#include "xmalloc.h"

/* One deadline: the override when given, else the role's. */
static uint64_t
plan_ms(int have, uint64_t over, uint64_t role)
{
	return have ? over : role;
}

/*
 * Plan ROLE's worker in ROOT with PROMPT.  On success *req holds
 * borrowed strings (from the arguments and the configuration, which must
 * outlive it) and a new options object the caller releases, and *dl the
 * deadlines; -1 and *err otherwise, with *req and *dl untouched.
 */
int
plan_spawn(const struct config *cfg, const char *root, const char *role,
    const struct plan_overrides *over, const char *prompt,
    struct agent_req *req, struct plan_deadlines *dl, char **err)
{
	static const struct plan_overrides	 none;
	const struct role_cfg			*rc;
	const struct tool_cfg			*tc;
	const struct log_max			*lm;
	const char				*tool, *command;
	char					*names;
	int					 ri;

	if (over == NULL)
		over = &none;
	if (role == NULL || (ri = config_role_index(cfg, role)) < 0) {
		*err = workflow_role_unknown(cfg->wf, role != NULL ? role : "");
		return -1;
	}
	rc = &cfg->roles[ri];
	tool = over->tool != NULL ? over->tool : rc->tool != NULL ? rc->tool :
	    cfg->default_tool;
	if ((tc = config_tool(cfg, tool)) == NULL) {
		names = adapter_list(0, ", ");
		xasprintf(err, "unknown tool '%s' (%s)", tool != NULL ?
		    tool : "", names);
		free(names);
		return -1;
	}
	if (!tc->enabled) {
		xasprintf(err, "tool '%s' is disabled in the configuration",
		    tool);
		return -1;
	}
	command = over->command != NULL ? over->command : rc->command;
	if (!adapter_is_agent(tc->name) && command == NULL) {
		xasprintf(err, "the %s tool needs --command (or "
		    "roles.%s.command in the configuration)", tc->name, role);
		return -1;
	}
	memset(req, 0, sizeof *req);
	req->role = role;
	req->tool = tc->name;
	req->prompt = prompt;
	req->cwd = root;
	req->model = over->model != NULL ? over->model : rc->model != NULL ?
	    rc->model : tc->model;
	req->command = command;
	req->options = json_is_object(tc->options) ?
	    json_deep_copy(tc->options) : json_object();
	json_object_set_new(req->options, "path",
	    json_string(tc->path != NULL ? tc->path : tc->name));
	/* the worker maps it to the tool's own sandbox or permission flags */
	if (rc->permission != NULL)
		json_object_set_new(req->options, "permission",
		    json_string(rc->permission));
	if (rc->ask_permissions)	/* the worker starts the relay */
		json_object_set_new(req->options, "ask_permissions",
		    json_true());
	dl->timeout_ms = plan_ms(over->have_timeout, over->timeout_ms,
	    rc->timeout_ms);
	dl->nudge_ms = plan_ms(over->have_nudge, over->nudge_ms, rc->nudge_ms);
	dl->grace_ms = plan_ms(over->have_grace, over->grace_ms, rc->grace_ms);
	dl->idle_ms = plan_ms(over->have_idle, over->idle_ms, rc->idle_ms);
	req->timeout_ms = dl->timeout_ms;
	req->idle_ms = dl->idle_ms;
	/*
	 * The log cap travels as an option the worker reads, not as an
	 * argv flag: an older ccw-worker (a remote host's) ignores it
	 * rather than refusing to start.  Unset: the worker's default.
	 */
	lm = over->log_max.set ? &over->log_max : rc->log_max.set ?
	    &rc->log_max : &cfg->log_max;
	if (lm->set)
		json_object_set_new(req->options, "log_max_bytes",
		    json_integer((json_int_t)lm->bytes));
	req->limits = rc->limits;
	/* the role's launcher ("local" too), else the top level's */
	req->launch = over->launch != NULL ? over->launch :
	    rc->launch.set ? &rc->launch : &cfg->launch;
	return 0;
}

/*
 * A front end's spawn: plan_spawn with the request's members over the
 * base's overrides, so that one request's tool or directory never
 * leaks into the next and the base is never copied or changed.  dl may
 * be NULL (the agent_req carries the timeout and idle deadlines).
 */
int
plan_request(const struct plan_base *base, const struct plan_request *rq,
    struct agent_req *req, struct plan_deadlines *dl, char **err)
{
	struct plan_overrides	over = base->over;
	struct plan_deadlines	mine;

	if (rq->tool != NULL)
		over.tool = rq->tool;
	if (rq->command != NULL)
		over.command = rq->command;
	if (rq->model != NULL)
		over.model = rq->model;
	if (rq->launch != NULL)
		over.launch = rq->launch;
	return plan_spawn(base->config, rq->cwd != NULL ? rq->cwd : base->root,
	    rq->role, &over, rq->prompt, req, dl != NULL ? dl : &mine, err);
}
