/*
 * tool-opencode.c: the opencode adapter (`opencode run --format json`,
 * checked against 1.18.33).  The prompt goes on stdin; every event
 * carries sessionID; a step_finish that is not for tool calls, or an
 * error event, ends the run (opencode has no separate final event).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "adapter.h"
#include "result.h"

/*
 * The only tools a read-only role keeps: they read the project (or the
 * web) and change nothing.  Everything else, MCP and plugin tools too,
 * falls under "*": deny; the tools that write are also denied by name
 * (edit covers write and patch; task starts a subagent with permissions
 * of its own), so that no key of the user's own plan permissions, which
 * opencode merges with these, allows them again.
 */
static const char *const opencode_read_tools[] = {
	"grep", "glob", "list", "lsp", "todoread", "todowrite", "skill",
	"webfetch", "websearch", "codesearch", NULL
};
static const char *const opencode_write_tools[] = {
	"bash", "edit", "task", NULL
};

/* A read-only role, unless approval_mode names the mode itself. */
static int
opencode_plan(const struct tool_spec *spec)
{
	return adapter_opt(spec, "approval_mode") == NULL &&
	    adapter_permission(spec) == PERM_READ_ONLY;
}

/* obj[key] as an object, made (or replacing a non-object) when needed. */
static json_t *
opencode_member(json_t *obj, const char *key)
{
	json_t	*v = json_object_get(obj, key);

	if (!json_is_object(v)) {
		v = json_object();
		json_object_set_new(obj, key, v);
	}
	return v;
}

/*
 * The plan agent denies only its edit tools: its bash allows every
 * command, so `echo X >> file` changed the project of a read-only role.
 * Its permissions become "*": deny, the write tools denied and the read
 * tools allowed (read keeps opencode's own asks for .env files).  The
 * agent's rules come after the global ones, and OPENCODE_CONFIG_CONTENT
 * after the user's and the project's config files; a content the user
 * already set is kept, with this in it.  Denied tools are not offered to
 * the model.
 */
static void
opencode_build_env(const struct tool_spec *spec, struct strv *env)
{
	json_t		*root, *perm;
	const char	*old;
	char		*text, *kv;
	size_t		 i;

	if (!opencode_plan(spec))
		return;
	old = getenv("OPENCODE_CONFIG_CONTENT");
	root = old != NULL ? json_loads(old, 0, NULL) : NULL;
	if (!json_is_object(root)) {
		json_decref(root);
		root = json_object();
	}
	perm = json_object();
	json_object_set_new(perm, "*", json_string("deny"));
	json_object_set_new(perm, "read", json_pack("{s:s, s:s, s:s, s:s}",
	    "*", "allow", "*.env", "ask", "*.env.*", "ask",
	    "*.env.example", "allow"));
	for (i = 0; opencode_write_tools[i] != NULL; i++)
		json_object_set_new(perm, opencode_write_tools[i],
		    json_string("deny"));
	for (i = 0; opencode_read_tools[i] != NULL; i++)
		json_object_set_new(perm, opencode_read_tools[i],
		    json_string("allow"));
	json_object_set_new(opencode_member(opencode_member(root, "agent"),
	    "plan"), "permission", perm);
	text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	xasprintf(&kv, "OPENCODE_CONFIG_CONTENT=%s", text);
	strv_push(env, kv);
	free(kv);
	free(text);
	json_decref(root);
}

/*
 * Prompt on stdin (run quotes spaced args); without --auto it rejects
 * asks.  A read-only role runs opencode's own read-only agent, plan,
 * without --auto, and with the permissions of opencode_build_env;
 * approval_mode, when given, decides instead.
 */
static void
opencode_build_argv(const struct tool_spec *spec, const char *resume_session,
    const char *input, struct strv *argv)
{
	const char	*mode;
	int		 plan = opencode_plan(spec);

	(void)input;
	if ((mode = adapter_opt(spec, "approval_mode")) == NULL)
		mode = plan ? "default" : "auto";
	adapter_argv_begin(spec, "opencode", argv);
	strv_push(argv, "run");
	strv_push(argv, "--format");
	strv_push(argv, "json");
	if (plan) {
		strv_push(argv, "--agent");
		strv_push(argv, "plan");
	}
	if (strcmp(mode, "auto") == 0 || strcmp(mode, "yolo") == 0)
		strv_push(argv, "--auto");
	if (spec->model != NULL && spec->model[0] != '\0') {
		strv_push(argv, "-m");
		strv_push(argv, spec->model);
	}
	if (resume_session != NULL) {
		strv_push(argv, "--session");
		strv_push(argv, resume_session);
	}
	adapter_argv_extra(spec, argv);
	adapter_argv_end(argv);
}

/* Per-step usage adds up; cached and reasoning tokens are counted too. */
static void
opencode_step_finish(struct tool_stream *ts, const json_t *part)
{
	json_t		*tok, *cache;
	const char	*reason;

	tok = json_object_get(part, "tokens");
	cache = json_object_get(tok, "cache");
	ts->tokens_in += adapter_uint(tok, "input") +
	    adapter_uint(cache, "read") + adapter_uint(cache, "write");
	ts->tokens_out += adapter_uint(tok, "output") +
	    adapter_uint(tok, "reasoning");
	ts->cost += adapter_real(part, "cost");
	if (adapter_has_number(part, "cost"))
		ts->cost_seen = 1;
	reason = adapter_str(part, "reason");
	adapter_progress(ts, "step", reason != NULL ? reason : "finished");
	if (reason == NULL || strcmp(reason, "tool-calls") == 0)
		return;
	ts->final_seen = 1;
	if (strcmp(reason, "error") == 0 ||
	    strcmp(reason, "content-filter") == 0) {
		ts->final_failed = 1;
		if (ts->error == NULL)
			xasprintf(&ts->error, "step finished: %s", reason);
	}
}

/* A tool part arrives once, completed or failed. */
static void
opencode_tool(struct tool_stream *ts, const json_t *part)
{
	json_t		*state;
	const char	*status;

	state = json_object_get(part, "state");
	status = adapter_str(state, "status");
	if (status != NULL && strcmp(status, "error") == 0)
		adapter_progress(ts, "tool error", adapter_str(state, "error"));
	else
		adapter_progress_tool(ts, adapter_str(part, "tool"),
		    adapter_tool_detail(json_object_get(state, "input")));
}

/* A 429's retry-after(-ms) header is the API's own word on the wait
 * (opencode-429.jsonl); else perhaps the body names one. */
static void
opencode_retry_after(struct tool_stream *ts, const json_t *data)
{
	json_t		*hdr;
	const char	*v;
	char		*text;

	hdr = json_object_get(data, "responseHeaders");
	if ((v = adapter_str(hdr, "retry-after-ms")) != NULL) {
		xasprintf(&text, "retry after %sms", v);
		retryafter_note(ts, text);
		free(text);
	}
	if (ts->retry_after_ms == 0 &&
	    (v = adapter_str(hdr, "retry-after")) != NULL) {
		xasprintf(&text, "retry after %s", v);
		retryafter_note(ts, text);
		free(text);
	}
	if (ts->retry_after_ms == 0)
		retryafter_note(ts, adapter_str(data, "responseBody"));
}

/*
 * An APIError carries the HTTP status and the response body: the body
 * tells a quota (opencode-quota.jsonl) or an overload from a plain 429
 * or 5xx; without either, the message's words tell the kind.
 */
static void
opencode_error_kind(struct tool_stream *ts, const json_t *data,
    const char *msg)
{
	const char	*body = adapter_str(data, "responseBody");
	long		 status = (long)adapter_uint(data, "statusCode");

	if (status == 429)
		opencode_retry_after(ts, data);
	adapter_fail_kind(ts, status, body != NULL ? body : msg);
}

/* session.error ends the run: opencode exits 1 right after it. */
static void
opencode_error(struct tool_stream *ts, const json_t *ev)
{
	json_t		*err;
	const char	*msg;

	err = json_object_get(ev, "error");
	msg = adapter_str(json_object_get(err, "data"), "message");
	if (msg == NULL)
		msg = adapter_str(err, "name");
	if (msg == NULL)
		msg = "session error";
	opencode_error_kind(ts, json_object_get(err, "data"), msg);
	adapter_set(&ts->error, msg);
	ts->final_seen = 1;
	ts->final_failed = 1;
	adapter_progress(ts, "error", msg);
}

/* The answer is the text of the last step, so each step starts it anew. */
static void
opencode_line(struct tool_stream *ts, const char *line, size_t len)
{
	json_t		*ev, *part;
	const char	*type;

	if ((ev = adapter_parse(line, len)) == NULL)
		return;
	if ((type = adapter_str(ev, "type")) == NULL)
		goto out;
	adapter_session(ts, adapter_str(ev, "sessionID"));
	part = json_object_get(ev, "part");
	if (strcmp(type, "step_start") == 0) {
		adapter_set(&ts->final_text, NULL);
		adapter_progress(ts, "step", "started");
	} else if (strcmp(type, "text") == 0) {
		adapter_append(&ts->final_text, "\n",
		    adapter_str(part, "text"));
		adapter_progress(ts, "assistant", adapter_str(part, "text"));
	} else if (strcmp(type, "reasoning") == 0)
		adapter_progress(ts, "thinking", adapter_str(part, "text"));
	else if (strcmp(type, "tool_use") == 0)
		opencode_tool(ts, part);
	else if (strcmp(type, "step_finish") == 0)
		opencode_step_finish(ts, part);
	else if (strcmp(type, "error") == 0)
		opencode_error(ts, ev);
out:
	json_decref(ev);
}

/* Where opencode looks for credentials (doctor; ccw-worker(8) lists them). */
static const struct adapter_cred opencode_creds[] = {
	{ "OPENAI_API_KEY", NULL, NULL, NULL },
	{ "ANTHROPIC_API_KEY", NULL, NULL, NULL },
	{ "OPENROUTER_API_KEY", NULL, NULL, NULL },
	{ "GOOGLE_GENERATIVE_AI_API_KEY", NULL, NULL, NULL },
	{ "GEMINI_API_KEY", NULL, NULL, NULL },
	{ "OPENCODE_API_KEY", NULL, NULL, NULL },
	{ "XAI_API_KEY", NULL, NULL, NULL },
	{ "GROQ_API_KEY", NULL, NULL, NULL },
	{ "DEEPSEEK_API_KEY", NULL, NULL, NULL },
	{ "MISTRAL_API_KEY", NULL, NULL, NULL },
	{ NULL, "opencode/auth.json", "XDG_DATA_HOME", ".local/share" },
	{ NULL, "opencode/opencode.json", "XDG_CONFIG_HOME", ".config" },
	{ NULL, NULL, NULL, NULL },
};

/* Where opencode sends its requests unless told otherwise. */
static const struct adapter_base_url opencode_base_urls[] = {
	{ "OPENAI_BASE_URL", "api.openai.com" },
	{ "ANTHROPIC_BASE_URL", "api.anthropic.com" },
	{ NULL, NULL },
};

const struct adapter adapter_opencode = {
	.name = "opencode",
	.binary = "opencode",
	.flags = ADAPTER_AGENT,
	.prompt_stdin = 1,
	.live_input = 0,
	.stream_json = 1,
	.build_argv = opencode_build_argv,
	.line = opencode_line,
	.build_env = opencode_build_env,
	.creds = opencode_creds,
	.base_urls = opencode_base_urls,
};
