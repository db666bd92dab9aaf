/*
 * mcptools.c: MCP's tools as rows over the verb table: each tool's name,
 * description and JSON Schema, the verb request its arguments become
 * (named as the verb's fields), and the tool result a verb's reply makes.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "api.h"
#include "flowdef.h"
#include "log.h"
#include "mcpint.h"
#include "workflows.h"
#include "xmalloc.h"

/*
 * A tool: verb NULL means the "action" argument picks it (loop_control);
 * schema is JSON text, its properties the only arguments taken; flags
 * say what the call's handling does beyond the verb (MCPT_*).
 */
struct mcp_tool {
	const char	*name;
	const char	*verb;
	unsigned	 flags;
	const char	*title;
	const char	*desc;
	const char	*schema;
};

#define MCPT_SPAWNS	0x1	/* the reply names the agent it started */
#define MCPT_WAITS	0x2	/* it waits: progress while it does */
#define MCPT_START	0x4	/* loop_open starts the loop it opens */

/* loop_control's actions: the word a client sends, the verb it becomes. */
static const struct {
	const char	*word;
	const char	*verb;
} mcp_actions[] = {
	{ "pause", "loop_pause" },
	{ "resume", "loop_resume" },
	{ "stop", "loop_stop" },
};
#define MCP_NACTIONS	(sizeof mcp_actions / sizeof mcp_actions[0])

#define S_STR(d)	"{\"type\":\"string\",\"description\":\"" d "\"}"
#define S_MS(d)		"{\"type\":\"integer\",\"minimum\":0,\"description\":\"" d "\"}"

static const struct mcp_tool mcp_tools[] = {
	{ "spawn_agent", "spawn", MCPT_SPAWNS, "Spawn an agent",
	  "Start one coding agent (a worker process running the role's agent "
	  "CLI, or bash) on a task and return its agent_id at once; the agent "
	  "runs in the background in its own process group.  Follow it with "
	  "wait_agent, talk to it with send_input, stop it with close_agent.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"role\":" S_STR("The role from the configuration.  It picks the "
	    "tool and model unless overridden.") ","
	  "\"message\":" S_STR("The task or prompt the agent starts with.") ","
	  "\"tool\":" S_STR("Override the role's tool: an agent CLI, or "
	    "bash.") ","
	  "\"model\":" S_STR("Override the model the tool uses.") ","
	  "\"command\":" S_STR("For the bash tool: the shell command to run.") ","
	  "\"cwd\":" S_STR("Absolute path of the directory the agent works "
	    "in; default: the server's project root.") ","
	  "\"attempts\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":8,"
	    "\"description\":\"Best-of-N: run the task this many times at "
	    "once, each in its own git worktree (a git repository only).  "
	    "The reply adds group and attempts (the agent_ids); wait_agent "
	    "on the group picks one (its check passed, then the smallest "
	    "diff, then the fastest); close_agent on the group removes the "
	    "attempts' branches.\"},"
	  "\"check\":" S_STR("With attempts: the shell command run in each "
	    "attempt's worktree to judge it (exit 0 passes).")
	  "},\"required\":[\"role\"],\"additionalProperties\":false}" },
	{ "wait_agent", "wait", MCPT_WAITS, "Wait for agents",
	  "Block until the agents named finish (mode any: the first of them; "
	  "all: every one) or timeout_ms passes; never kills them.  Returns "
	  "each agent's status (pending_init, running, interrupted, "
	  "completed, errored, shutdown, not_found), timed_out, and "
	  "error_kinds: the outcome kind of each finished agent that failed "
	  "(ccw-supervisor(1), OUTCOME KINDS); read what "
	  "a finished agent did with agent_result.  Sends progress "
	  "notifications while waiting when the call carries a "
	  "progressToken.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"targets\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
	    "\"minItems\":1,\"description\":\"agent_id values from "
	    "spawn_agent.\"},"
	  "\"timeout_ms\":" S_MS("Give up waiting after this many "
	    "milliseconds (default 600000); keep it under your client's "
	    "request timeout.") ","
	  "\"mode\":{\"type\":\"string\",\"enum\":[\"any\",\"all\"],"
	    "\"description\":\"any (default): return when one target "
	    "finishes; all: when every target has.\"}"
	  "},\"required\":[\"targets\"],\"additionalProperties\":false}" },
	{ "send_input", "send_input", 0, "Send input to an agent",
	  "Send a follow-up message to a running agent (a new turn once its "
	  "current one ends), or with interrupt: true cut its current turn "
	  "short first.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"target\":" S_STR("The agent_id.") ","
	  "\"message\":" S_STR("The text to send.") ","
	  "\"interrupt\":{\"type\":\"boolean\",\"description\":\"Interrupt "
	    "the agent's current turn first (default false).\"}"
	  "},\"required\":[\"target\",\"message\"],"
	  "\"additionalProperties\":false}" },
	{ "close_agent", "close", 0, "Close an agent",
	  "Stop an agent: SIGTERM to its process group, then SIGKILL after "
	  "grace_ms.  Returns its status before the close.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"target\":" S_STR("The agent_id.") ","
	  "\"grace_ms\":" S_MS("Milliseconds between SIGTERM and SIGKILL "
	    "(default 5000).")
	  "},\"required\":[\"target\"],\"additionalProperties\":false}" },
	{ "agent_result", "result", 0, "An agent's result",
	  "What an agent reported: its status, the summary and details of "
	  "its WORKER_RESULT (files changed, tests, issues), its error kind "
	  "when it failed, and its last progress line while it still runs.  "
	  "Call it after wait_agent says the agent finished.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"target\":" S_STR("The agent_id.")
	  "},\"required\":[\"target\"],\"additionalProperties\":false}" },
	{ "list_agents", "list", 0, "List agents",
	  "Every agent this server started, by agent_id, with its status.",
	  "{\"type\":\"object\",\"properties\":{},"
	  "\"additionalProperties\":false}" },
	{ "loop_start", "loop_open", MCPT_START, "Start a loop",
	  "Start a CCW development loop in the project (develop, debug and "
	  "validate workers until the task is done or max_iterations) and "
	  "return its loop_id at once; follow it with loop_status, steer it "
	  "with loop_control.  Give task for a new loop, or loop_id to "
	  "resume one.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"task\":" S_STR("What the loop must achieve (a new loop).") ","
	  "\"title\":" S_STR("A short title; the task when task is absent.") ","
	  "\"loop_id\":" S_STR("Resume this existing loop, or the id for a "
	    "new one (default: generated).") ","
	  "\"mode\":{\"type\":\"string\",\"enum\":[\"auto\",\"parallel\"],"
	    "\"description\":\"auto (default): one worker at a time; "
	    "parallel: independent tasks at once.\"},"
	  "\"max_iterations\":{\"type\":\"integer\",\"minimum\":1,"
	    "\"description\":\"Stop after this many iterations (default "
	    "10).\"}"
	  "},\"additionalProperties\":false}" },
	{ "loop_status", "loop_status", 0, "Loop status",
	  "A loop's state: status (created, running, paused, completed, "
	  "failed), iterations, tasks, and the workers' outcomes.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"loop_id\":" S_STR("The loop_id from loop_start.")
	  "},\"required\":[\"loop_id\"],\"additionalProperties\":false}" },
	{ "loop_control", NULL, 0, "Control a loop",
	  "Pause a running loop (its current step finishes first), resume a "
	  "paused one, or stop it for good.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"loop_id\":" S_STR("The loop_id from loop_start.") ","
	  "\"action\":" S_STR("What to do with the loop.")
	  "},\"required\":[\"loop_id\",\"action\"],"
	  "\"additionalProperties\":false}" },
	{ "list_questions", "list_questions", 0, "List open questions",
	  "The questions workers asked and wait for a person to answer "
	  "(CLARIFICATION_NEEDED): each with its id, loop_id, agent_id, role, "
	  "question, options and the recommended one, asked_at, deadline and "
	  "status.  Answer one with answer_question.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"loop_id\":" S_STR("Only this loop's questions.") ","
	  "\"status\":" S_STR("open (default): those still waiting; all: "
	    "answered and expired ones too.")
	  "},\"additionalProperties\":false}" },
	{ "answer_question", "answer_question", 0, "Answer a question",
	  "Answer a worker's open question (its id from list_questions): "
	  "one of its options or your own words.  The worker goes on with "
	  "it; the loop's history records who answered, through MCP.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"question_id\":" S_STR("The question's id (q-...).") ","
	  "\"answer\":" S_STR("The answer the worker gets.") ","
	  "\"by\":" S_STR("Who answers (a name for the history).") ","
	  "\"loop_id\":" S_STR("The question's loop (optional).")
	  "},\"required\":[\"question_id\",\"answer\"],"
	  "\"additionalProperties\":false}" },
};

#define MCP_NTOOLS	(sizeof mcp_tools / sizeof mcp_tools[0])

/* The schema's property KEY takes one of NAMES (stolen), if it has KEY. */
static void
mcp_tools_enum_set(json_t *schema, const char *key, json_t *names)
{
	json_t	*prop;

	prop = json_object_get(json_object_get(schema, "properties"), key);
	if (json_is_object(prop))
		json_object_set(prop, "enum", names);
	json_decref(names);
}

/* The space-separated words of a verb's argument as a JSON array. */
static json_t *
mcp_tools_words(const char *words)
{
	json_t	*a = json_array();
	size_t	 n;

	while (words != NULL && *words != '\0') {
		n = strcspn(words, " ");
		json_array_append_new(a, json_stringn(words, n));
		words += n + (words[n] == ' ');
	}
	return a;
}

/*
 * The enums of the arguments other tables own, never a copy: "tool" the
 * tool table's names, "role" the default workflow's roles, "action"
 * loop_control's actions.
 */
static void
mcp_tools_enum(json_t *schema)
{
	const struct workflow	*wf = workflow_default();
	json_t			*names;
	size_t			 i;

	names = json_array();
	for (i = 0; i < adapter_count(); i++)
		json_array_append_new(names, json_string(adapter_at(i)->name));
	mcp_tools_enum_set(schema, "tool", names);
	names = json_array();
	for (i = 0; i < wf->nroles; i++)
		json_array_append_new(names, json_string(wf->roles[i].name));
	mcp_tools_enum_set(schema, "role", names);
	names = json_array();
	for (i = 0; i < MCP_NACTIONS; i++)
		json_array_append_new(names, json_string(mcp_actions[i].word));
	mcp_tools_enum_set(schema, "action", names);
	mcp_tools_enum_set(schema, "status", mcp_tools_words(api_arg_words(
	    "list_questions", "status")));
}

/*
 * The verb loop_control's "action" names, or NULL with *err (the
 * table's words) for one it has not.
 */
static const char *
mcp_tools_action(const struct mcp_tool *t, const json_t *args, char **err)
{
	const char	*action = json_string_value(json_object_get(args,
			    "action"));
	size_t		 i, n = 0;
	char		 words[128];

	for (i = 0; i < MCP_NACTIONS; i++)
		if (action != NULL && strcmp(action, mcp_actions[i].word) == 0)
			return mcp_actions[i].verb;
	words[0] = '\0';
	for (i = 0; i < MCP_NACTIONS && n < sizeof words; i++)
		n += (size_t)snprintf(words + n, sizeof words - n, " %s",
		    mcp_actions[i].word);
	xasprintf(err, "%s: \"action\" must be one of:%s", t->name, words);
	return NULL;
}

/* tools/list's result: every tool with its schema parsed. */
json_t *
mcp_tools_list(void)
{
	json_t		*tools = json_array(), *schema;
	json_error_t	 jerr;
	size_t		 i;

	for (i = 0; i < MCP_NTOOLS; i++) {
		/* test-mcp parses every schema: this is never taken */
		if ((schema = json_loads(mcp_tools[i].schema, 0, &jerr)) ==
		    NULL) {
			log_warnx("mcp: tool %s: bad schema: %s",
			    mcp_tools[i].name, jerr.text);
			schema = json_pack("{s:s}", "type", "object");
		}
		mcp_tools_enum(schema);
		json_array_append_new(tools, json_pack("{s:s, s:s, s:s, s:o}",
		    "name", mcp_tools[i].name, "title", mcp_tools[i].title,
		    "description", mcp_tools[i].desc, "inputSchema", schema));
	}
	return json_pack("{s:o}", "tools", tools);
}

/* A tool by name, or NULL. */
const struct mcp_tool *
mcp_tool_find(const char *name)
{
	size_t	i;

	for (i = 0; i < MCP_NTOOLS; i++)
		if (strcmp(mcp_tools[i].name, name) == 0)
			return &mcp_tools[i];
	return NULL;
}

const char *
mcp_tool_name(const struct mcp_tool *t)
{
	return t->name;
}

/* Is "key" one of the properties of the tool's schema? */
static int
mcp_tool_has(const struct mcp_tool *t, const char *key)
{
	json_t	*schema = json_loads(t->schema, 0, NULL);
	int	 found;

	found = json_object_get(json_object_get(schema, "properties"),
	    key) != NULL;
	json_decref(schema);
	return found;
}

/*
 * The verb request for a call's arguments (may be NULL): a new object,
 * or NULL with *err (static) for an argument the tool does not take.
 * The verb checks the types itself (its error is the tool's result).
 */
json_t *
mcp_tool_request(const struct mcp_tool *t, const json_t *args, char **err)
{
	const char	*key, *verb = t->verb;
	json_t		*req, *v;

	*err = NULL;
	if (args != NULL && !json_is_object(args)) {
		*err = xstrdup("arguments must be an object");
		return NULL;
	}
	req = json_object();
	json_object_foreach((json_t *)args, key, v) {
		if (!mcp_tool_has(t, key)) {
			xasprintf(err, "%s takes no argument \"%s\"", t->name,
			    key);
			json_decref(req);
			return NULL;
		}
		if (strcmp(key, "action") != 0)
			json_object_set(req, key, v);
	}
	if (verb == NULL && (verb = mcp_tools_action(t, args, err)) == NULL) {
		json_decref(req);
		return NULL;
	}
	if (t->flags & MCPT_START)
		json_object_set_new(req, "start", json_true());
	json_object_set_new(req, "verb", json_string(verb));
	return req;
}

/* A tool result around a reply object (stolen): text and structured. */
static json_t *
mcp_tool_wrap(json_t *reply, int is_error)
{
	char	*text = json_dumps(reply, JSON_COMPACT);
	json_t	*res;

	res = json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text",
	    "text", text != NULL ? text : "{}", "structuredContent", reply,
	    "isError", is_error);
	free(text);
	return res;
}

/* A tool result saying why the call failed before any verb ran. */
json_t *
mcp_tool_error(const char *msg)
{
	return mcp_tool_wrap(json_pack("{s:b, s:s, s:s}", "ok", 0, "error",
	    msg, "code", err_code_name(ERR_INVALID)), 1);
}

/*
 * The tool result for a verb's reply (borrowed): the reply without the
 * verb's id, naming the agents it is about (agent_id, agent_ids), with
 * isError when the verb failed.
 */
json_t *
mcp_tool_result(const struct mcp_tool *t, const json_t *args,
    const json_t *reply)
{
	json_t		*r = json_deep_copy(reply);
	const json_t	*target = json_object_get(args, "target");

	json_object_del(r, "id");
	if (json_is_string(target) && json_object_get(r, "agent_id") == NULL)
		json_object_set(r, "agent_id", (json_t *)target);
	if ((t->flags & MCPT_WAITS) &&
	    json_is_array(json_object_get(args, "targets")))
		json_object_set(r, "agent_ids", json_object_get(args,
		    "targets"));
	return mcp_tool_wrap(r, api_reply_code(reply) != ERR_NONE);
}

/* Is this the tool whose reply names an agent the call started? */
int
mcp_tool_spawns(const struct mcp_tool *t)
{
	return (t->flags & MCPT_SPAWNS) != 0;
}

/* Is this the tool that waits on agents (progress while it does)? */
int
mcp_tool_waits(const struct mcp_tool *t)
{
	return (t->flags & MCPT_WAITS) != 0;
}
