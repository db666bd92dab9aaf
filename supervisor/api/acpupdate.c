/*
 * acpupdate.c: a session's loop as ACP session/update notifications: its
 * plan (one entry per role of the workflow, then the develop tasks the
 * state lists), one tool call per worker with its progress lines and its
 * result, the usage, the summary at the end, and the replay of a loaded
 * loop's history from its state file; and every message to the client
 * (acp_send), so acp.c calls here and this file never calls back.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acpint.h"
#include "flowdef.h"
#include "jsonrpc.h"
#include "sup.h"
#include "xmalloc.h"

/* One message to the client (stolen). */
void
acp_send(struct acp *acp, json_t *body)
{
	acp->cfg.write(acp->cfg.arg, body);
	json_decref(body);
}

/* A session/update notification of the session (update stolen). */
void
acp_update(struct acp_session *s, json_t *update)
{
	acp_send(s->acp, jsonrpc_notify_new("session/update", json_pack(
	    "{s:s, s:o}", "sessionId", s->id, "update", update)));
}

/* A text content block. */
json_t *
acp_text(const char *text)
{
	return json_pack("{s:s, s:s}", "type", "text", "text", text);
}

/* A string member, or NULL. */
static const char *
acpupdate_s(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* Whether a string is in an array of strings. */
static int
acpupdate_has(const json_t *a, const char *s)
{
	const json_t	*e;
	size_t		 i;

	json_array_foreach(a, i, e)
		if (json_is_string(e) && strcmp(json_string_value(e), s) == 0)
			return 1;
	return 0;
}

/* The plan as the client gets it (each entry's _meta is ours: kept). */
void
acpupdate_plan_send(struct acp_session *s)
{
	acp_update(s, json_pack("{s:s, s:O}", "sessionUpdate", "plan",
	    "entries", s->plan));
}

/*
 * The session's plan from the loop's state (NULL: a new loop): one entry
 * per role of the project's workflow (completed once its action is),
 * then the tasks its roles' sections of skill_state list.
 */
void
acpupdate_plan_new(struct acp_session *s, const json_t *st)
{
	const json_t	*ss = json_object_get(st, "skill_state");
	const json_t	*done = json_object_get(ss, "completed_actions");
	const json_t	*t;
	const struct workflow *wf = s->proj.wf;
	const char	*name, *ts, *key;
	json_t		*sec;
	int		 all = acpupdate_s(st, "status") != NULL &&
			    strcmp(acpupdate_s(st, "status"), "completed") == 0;
	size_t		 i;

	json_decref(s->plan);
	s->plan = json_array();
	for (i = 0; wf != NULL && i < wf->nroles; i++) {
		name = wf->roles[i].name;
		json_array_append_new(s->plan, json_pack("{s:s, s:s, s:s, "
		    "s:{s:s}}", "content", name, "priority", i == 0 ||
		    i + 1 == wf->nroles ? "medium" : "high", "status", all ||
		    acpupdate_has(done, name) ? "completed" : "pending",
		    "_meta", "role", name));
	}
	/* the tasks a role's section of skill_state lists (ccw-loop's develop) */
	json_object_foreach((json_t *)ss, key, sec)
	    json_array_foreach(json_object_get(sec, "tasks"), i, t) {
		ts = acpupdate_s(t, "status");
		json_array_append_new(s->plan, json_pack("{s:s, s:s, s:s, "
		    "s:{s:s?}}", "content", acpupdate_s(t, "description") !=
		    NULL ? acpupdate_s(t, "description") : "a task", "priority",
		    "high", "status", ts != NULL && strcmp(ts, "completed") == 0 ?
		    "completed" : ts != NULL && strcmp(ts, "in_progress") == 0 ?
		    "in_progress" : "pending", "_meta", "task_id",
		    acpupdate_s(t, "id")));
	}
}

/* A role's entry set to status; the plan sent when it changed. */
static void
acpupdate_plan_set(struct acp_session *s, const char *role,
    const char *status)
{
	json_t	*e;
	size_t	 i;

	json_array_foreach(s->plan, i, e) {
		if (acpupdate_s(json_object_get(e, "_meta"), "role") == NULL ||
		    strcmp(acpupdate_s(json_object_get(e, "_meta"), "role"),
		    role) != 0)
			continue;
		if (strcmp(acpupdate_s(e, "status"), status) == 0)
			return;
		json_object_set_new(e, "status", json_string(status));
		acpupdate_plan_send(s);
		return;
	}
}

/* A text block as tool call content. */
static json_t *
acpupdate_content(const char *text)
{
	return json_pack("[{s:s, s:o}]", "type", "content", "content",
	    acp_text(text));
}

/* Is role one the workflow runs read-only (it thinks, runs nothing)? */
static int
acpupdate_read_only(const struct workflow *wf, const char *role)
{
	size_t	i;

	for (i = 0; wf != NULL && i < wf->nroles; i++)
		if (strcmp(wf->roles[i].name, role) == 0)
			return wf->roles[i].permission != NULL &&
			    strcmp(wf->roles[i].permission, "read-only") == 0;
	return 0;
}

/* worker_started: its tool call, running; its role in progress. */
static void
acpupdate_started(struct acp_session *s, const json_t *f)
{
	const char	*role = acpupdate_s(f, "role"), *tool =
			    acpupdate_s(f, "tool"), *id = acpupdate_s(f,
			    "agent_id");
	char		*title;
	int		 thinks;

	if (role == NULL || id == NULL)
		return;
	/* a read-only role reads and writes prose; the others run things */
	thinks = acpupdate_read_only(s->proj.wf, role);
	xasprintf(&title, "%s (%s)", role, tool != NULL ? tool : "?");
	acp_update(s, json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s?, "
	    "s:O?, s:O?}}", "sessionUpdate", "tool_call", "toolCallId", id,
	    "title", title, "kind", thinks ? "think" : "execute", "status",
	    "in_progress", "rawInput", "role", role, "tool", tool, "timeout_ms",
	    json_object_get(f, "timeout_ms"), "log_path",
	    json_object_get(f, "log_path")));
	free(title);
	acpupdate_plan_set(s, role, "in_progress");
}

/* worker_result: the call completed or failed, the result raw. */
static void
acpupdate_result(struct acp_session *s, const json_t *f)
{
	const char	*role = acpupdate_s(f, "role"), *id = acpupdate_s(f,
			    "agent_id"), *st = acpupdate_s(f, "status");
	const char	*sum = acpupdate_s(f, "summary");
	int		 ok = st != NULL && (strcmp(st, "success") == 0 ||
			    strcmp(st, "partial") == 0);
	json_t		*u;

	if (role == NULL || id == NULL)
		return;
	if (st != NULL && strcmp(st, "needs_input") == 0)
		json_object_set_new(s->asker, role, json_string(id));
	u = json_pack("{s:s, s:s, s:s, s:O}", "sessionUpdate",
	    "tool_call_update", "toolCallId", id, "status", ok ||
	    (st != NULL && strcmp(st, "needs_input") == 0) ? "completed" :
	    "failed", "rawOutput", f);
	if (sum != NULL && *sum != '\0') {
		json_object_set_new(u, "content", acpupdate_content(sum));
		free(s->last_summary);
		xasprintf(&s->last_summary, "%s: %s%s%s%s", role, sum,
		    acpupdate_s(f, "error_kind") != NULL ? " (" : "",
		    acpupdate_s(f, "error_kind") != NULL ?
		    acpupdate_s(f, "error_kind") : "",
		    acpupdate_s(f, "error_kind") != NULL ? ")" : "");
	}
	acp_update(s, u);
	acpupdate_plan_set(s, role, ok ? "completed" : "pending");
}

/*
 * The loop's usage (tokens and cost summed over its workers) when it
 * changed: ACP's usage_update counts tokens "in context"; the loop has
 * no one context window, so used and size are both the tokens spent.
 */
static void
acpupdate_usage(struct acp_session *s, const json_t *usage)
{
	json_int_t	 n;
	const json_t	*c = json_object_get(usage, "cost_usd");
	json_t		*u;

	if (!json_is_object(usage) || json_equal(usage, s->usage))
		return;
	json_decref(s->usage);
	s->usage = json_deep_copy(usage);
	n = json_integer_value(json_object_get(usage, "input_tokens")) +
	    json_integer_value(json_object_get(usage, "output_tokens"));
	u = json_pack("{s:s, s:I, s:I, s:{s:O}}", "sessionUpdate",
	    "usage_update", "used", n, "size", n, "_meta", "usage", usage);
	if (json_is_number(c))
		json_object_set_new(u, "cost", json_pack("{s:f, s:s}", "amount",
		    json_number_value(c), "currency", "USD"));
	acp_update(s, u);
}

/* One event of the session's loop. */
void
acpupdate_event(struct acp_session *s, const char *name, const json_t *f)
{
	const char	*text;
	char		*msg;

	if (strcmp(name, "worker_started") == 0)
		acpupdate_started(s, f);
	else if (strcmp(name, "worker_progress") == 0) {
		if ((text = acpupdate_s(f, "text")) != NULL &&
		    acpupdate_s(f, "agent_id") != NULL)
			acp_update(s, json_pack("{s:s, s:s, s:o}",
			    "sessionUpdate", "tool_call_update", "toolCallId",
			    acpupdate_s(f, "agent_id"), "content",
			    acpupdate_content(text)));
	} else if (strcmp(name, "worker_result") == 0)
		acpupdate_result(s, f);
	else if (strcmp(name, "LOOP_STATE_UPDATE") == 0)
		acpupdate_usage(s, json_object_get(f, "usage"));
	else if (strcmp(name, "LOOP_COMPLETED") == 0) {
		json_decref(s->end);
		s->end = json_deep_copy(f);
		acpupdate_usage(s, json_object_get(f, "usage"));
	} else if (strcmp(name, "step_retry") == 0 ||
	    strcmp(name, "step_requeued") == 0) {
		xasprintf(&msg, "%s: %s", name, acpupdate_s(f, "step") != NULL ?
		    acpupdate_s(f, "step") : acpupdate_s(f, "role") != NULL ?
		    acpupdate_s(f, "role") : "the step runs again");
		acp_update(s, json_pack("{s:s, s:o}", "sessionUpdate",
		    "agent_thought_chunk", "content", acp_text(msg)));
		free(msg);
	}
}

/*
 * Whether the loop failed with its iterations spent: read from the
 * state's numbers, never from failure_reason (people's words).
 */
int
acpupdate_max_turns(const struct acp_session *s)
{
	const char	*st = acpupdate_s(s->end, "status");
	json_int_t	 it = json_integer_value(json_object_get(s->end,
			    "current_iteration"));
	json_int_t	 max = json_integer_value(json_object_get(s->end,
			    "max_iterations"));

	return st != NULL && strcmp(st, "failed") == 0 && max > 0 &&
	    it >= max;
}

/* The message that ends a turn: how the loop ended, and why. */
char *
acpupdate_summary(const struct acp_session *s, int code)
{
	const char	*st = acpupdate_s(s->end, "status");
	const char	*why = acpupdate_s(s->end, "failure_reason");
	json_int_t	 it = json_integer_value(json_object_get(s->end,
			    "current_iteration"));
	char		*msg;

	if (st == NULL)
		st = code == EXIT_OK ? "completed" : code == EXIT_STOPPED ?
		    "stopped" : "failed";
	xasprintf(&msg, "Loop %s %s after %lld iteration%s (exit %d)%s%s.%s%s",
	    s->id, st, (long long)it, it == 1 ? "" : "s", code,
	    why != NULL ? ": " : "", why != NULL ? why : "",
	    s->last_summary != NULL ? "\nLast result: " : "",
	    s->last_summary != NULL ? s->last_summary : "");
	return msg;
}

/*
 * session/load: the conversation again from the state file: the task
 * as the user's message, the plan, one agent message per action the
 * loop recorded, and where it stands.
 */
void
acpupdate_replay(struct acp_session *s, const json_t *st)
{
	const json_t	*ss = json_object_get(st, "skill_state");
	const json_t	*wr = json_object_get(ss, "worker_results"), *r;
	const char	*task = acpupdate_s(st, "description"), *role;
	char		*msg;

	if (task == NULL)
		task = acpupdate_s(st, "title");
	if (task != NULL)
		acp_update(s, json_pack("{s:s, s:o}", "sessionUpdate",
		    "user_message_chunk", "content", acp_text(task)));
	acpupdate_plan_send(s);
	json_object_foreach((json_t *)wr, role, r) {
		xasprintf(&msg, "%s %s: %s", role, acpupdate_s(r, "status") !=
		    NULL ? acpupdate_s(r, "status") : "?", acpupdate_s(r,
		    "summary") != NULL ? acpupdate_s(r, "summary") : "");
		acp_update(s, json_pack("{s:s, s:o, s:{s:s?}}", "sessionUpdate",
		    "agent_message_chunk", "content", acp_text(msg), "_meta",
		    "agent_id", acpupdate_s(r, "agent_id")));
		free(msg);
	}
	xasprintf(&msg, "Loop %s is %s at iteration %lld of %lld%s%s.", s->id,
	    acpupdate_s(st, "status") != NULL ? acpupdate_s(st, "status") :
	    "?", (long long)json_integer_value(json_object_get(st,
	    "current_iteration")), (long long)json_integer_value(
	    json_object_get(st, "max_iterations")),
	    acpupdate_s(st, "failure_reason") != NULL ? ": " : "",
	    acpupdate_s(st, "failure_reason") != NULL ?
	    acpupdate_s(st, "failure_reason") : "");
	acp_update(s, json_pack("{s:s, s:o}", "sessionUpdate",
	    "agent_message_chunk", "content", acp_text(msg)));
	free(msg);
	acpupdate_usage(s, json_object_get(ss, "usage"));
}
