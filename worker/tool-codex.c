/*
 * tool-codex.c: the OpenAI Codex CLI adapter (`codex exec --json`, checked
 * against codex-cli 0.169).  The thread id is the session; turn.completed
 * or turn.failed is the final event; the answer is the last agent_message.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "adapter.h"
#include "result.h"

#define CODEX_SANDBOX_DEFAULT	"workspace-write"
#define CODEX_SANDBOX_FULL	"danger-full-access"

/* `exec resume` has no -s, so the mode travels as a TOML config override. */
static void
codex_push_sandbox_config(const char *mode, struct strv *argv)
{
	char	*kv;
	size_t	 i;

	for (i = 0; mode[i] != '\0'; i++) {
		if (strchr("abcdefghijklmnopqrstuvwxyz-", mode[i]) == NULL) {
			mode = "read-only";
			break;
		}
	}
	xasprintf(&kv, "sandbox_mode=\"%s\"", mode);
	strv_push(argv, "-c");
	strv_push(argv, kv);
	free(kv);
}

/*
 * Full access is never a default: only options.permission "full" or the
 * exact sandbox value enables it.  An explicit sandbox wins.
 */
static void
codex_build_argv(const struct tool_spec *spec, const char *resume_session,
    const char *input, struct strv *argv)
{
	const char	*sandbox;

	(void)input;
	if ((sandbox = adapter_opt(spec, "sandbox")) != NULL)
		;
	else if (adapter_permission(spec) == PERM_READ_ONLY)
		sandbox = "read-only";
	else if (adapter_permission(spec) == PERM_FULL)
		sandbox = CODEX_SANDBOX_FULL;
	else
		sandbox = CODEX_SANDBOX_DEFAULT;
	adapter_argv_begin(spec, "codex", argv);
	strv_push(argv, "exec");
	if (resume_session != NULL)
		strv_push(argv, "resume");
	strv_push(argv, "--json");
	strv_push(argv, "--skip-git-repo-check");
	if (strcmp(sandbox, CODEX_SANDBOX_FULL) == 0)
		strv_push(argv, "--dangerously-bypass-approvals-and-sandbox");
	else if (resume_session != NULL)
		codex_push_sandbox_config(sandbox, argv);
	else {
		strv_push(argv, "-s");
		strv_push(argv, sandbox);
	}
	if (spec->model != NULL && spec->model[0] != '\0') {
		strv_push(argv, "-m");
		strv_push(argv, spec->model);
	}
	adapter_argv_extra(spec, argv);
	if (resume_session != NULL)
		strv_push(argv, resume_session);
	strv_push(argv, "-");
	adapter_argv_end(argv);
}

/* file_change items list paths; one path and a count is enough to follow. */
static void
codex_file_change(struct tool_stream *ts, const json_t *item)
{
	json_t		*changes;
	const char	*path = NULL;
	char		*text;
	size_t		 n = 0;

	changes = json_object_get(item, "changes");
	if (json_is_array(changes)) {
		n = json_array_size(changes);
		if (n > 0)
			path = adapter_str(json_array_get(changes, 0), "path");
	}
	if (path == NULL) {
		adapter_progress(ts, "edit", "files");
		return;
	}
	if (n > 1)
		xasprintf(&text, "%s (+%zu more)", path, n - 1);
	else
		text = xstrdup(path);
	adapter_progress(ts, "edit", text);
	free(text);
}

/* Items carry the work; only a completed agent_message is an answer. */
static void
codex_item(struct tool_stream *ts, const json_t *item, int done)
{
	const char	*type, *text, *srv, *tool;
	char		*name;
	json_t		*items;

	if ((type = adapter_str(item, "type")) == NULL)
		return;
	if (strcmp(type, "agent_message") == 0) {
		text = adapter_str(item, "text");
		if (done && text != NULL)
			adapter_set(&ts->final_text, text);
		adapter_progress(ts, "assistant", text);
	} else if (strcmp(type, "reasoning") == 0)
		adapter_progress(ts, "thinking", adapter_str(item, "text"));
	else if (strcmp(type, "command_execution") == 0)
		adapter_progress_tool(ts, "shell",
		    adapter_str(item, "command"));
	else if (strcmp(type, "file_change") == 0)
		codex_file_change(ts, item);
	else if (strcmp(type, "mcp_tool_call") == 0) {
		srv = adapter_str(item, "server");
		tool = adapter_str(item, "tool");
		xasprintf(&name, "%s.%s", srv != NULL ? srv : "mcp",
		    tool != NULL ? tool : "?");
		adapter_progress_tool(ts, name, NULL);
		free(name);
	} else if (strcmp(type, "web_search") == 0)
		adapter_progress(ts, "search", adapter_str(item, "query"));
	else if (strcmp(type, "todo_list") == 0) {
		items = json_object_get(item, "items");
		xasprintf(&name, "%zu items", json_is_array(items) ?
		    json_array_size(items) : (size_t)0);
		adapter_progress(ts, "plan", name);
		free(name);
	} else if (strcmp(type, "error") == 0) {
		/* Warnings ("Model metadata ... not found"): never the answer. */
		adapter_progress(ts, "warning", adapter_str(item, "message"));
	} else
		adapter_progress(ts, "item", type);
}

/* The HTTP status codex names ("unexpected status 529 ...", "last
 * status: 429 ..."), 0 when it names none. */
static long
codex_status(const char *msg)
{
	const char	*p;

	if ((p = strstr(msg, "status ")) != NULL)
		return strtol(p + 7, NULL, 10);
	if ((p = strstr(msg, "status: ")) != NULL)
		return strtol(p + 8, NULL, 10);
	return 0;
}

/*
 * "Reconnecting... 2/5 (unexpected status 429 Too Many Requests: ...)":
 * a retry to report, unless the status says retrying cannot help.
 */
static void
codex_error(struct tool_stream *ts, const char *msg)
{
	const char	*p;
	char		*end, *inner;
	unsigned long	 attempt = 0, max = 0;
	long		 status = 0;

	if (msg == NULL)
		return;
	adapter_set(&ts->error, msg);
	if (strncmp(msg, "Reconnecting...", 15) != 0) {
		adapter_progress(ts, "error", msg);
		return;
	}
	attempt = strtoul(msg + 15, &end, 10);
	if (*end == '/')
		max = strtoul(end + 1, NULL, 10);
	status = codex_status(msg);
	if ((p = strchr(msg, '(')) != NULL) {
		inner = xstrdup(p + 1);
		if (inner[0] != '\0' && inner[strlen(inner) - 1] == ')')
			inner[strlen(inner) - 1] = '\0';
	} else
		inner = xstrdup(msg);
	adapter_api_error(ts, status, inner, attempt, max);
	free(inner);
	/* a retry's reason: codex's own words, "Reconnecting..." and all */
	if (!ts->final_seen)
		adapter_set(&ts->error, msg);
}

/* `error` events are often retries ("Reconnecting..."): kept, not final. */
static void
codex_line(struct tool_stream *ts, const char *line, size_t len)
{
	json_t		*ev, *usage;
	const char	*type, *msg;

	if ((ev = adapter_parse(line, len)) == NULL)
		return;
	if ((type = adapter_str(ev, "type")) == NULL)
		goto out;
	if (strcmp(type, "thread.started") == 0) {
		adapter_session(ts, adapter_str(ev, "thread_id"));
		adapter_progress(ts, "session", adapter_str(ev, "thread_id"));
	} else if (strcmp(type, "turn.started") == 0)
		adapter_progress(ts, "turn", "started");
	else if (strcmp(type, "item.started") == 0 ||
	    strcmp(type, "item.updated") == 0)
		codex_item(ts, json_object_get(ev, "item"), 0);
	else if (strcmp(type, "item.completed") == 0)
		codex_item(ts, json_object_get(ev, "item"), 1);
	else if (strcmp(type, "turn.completed") == 0) {
		ts->final_seen = 1;
		adapter_set(&ts->error, NULL);
		usage = json_object_get(ev, "usage");
		ts->tokens_in = adapter_uint(usage, "input_tokens");
		ts->tokens_out = adapter_uint(usage, "output_tokens");
		adapter_progress(ts, "turn", "completed");
	} else if (strcmp(type, "turn.failed") == 0) {
		ts->final_seen = 1;
		ts->final_failed = 1;
		msg = adapter_str(json_object_get(ev, "error"), "message");
		adapter_set(&ts->error, msg != NULL ? msg : "turn failed");
		adapter_fail_kind(ts, codex_status(ts->error), ts->error);
		adapter_progress(ts, "failed", msg);
	} else if (strcmp(type, "error") == 0)
		codex_error(ts, adapter_str(ev, "message"));
out:
	json_decref(ev);
}

/* Where codex looks for credentials (doctor; ccw-worker(8) lists them). */
static const struct adapter_cred codex_creds[] = {
	{ "OPENAI_API_KEY", NULL, NULL, NULL },
	{ "CODEX_API_KEY", NULL, NULL, NULL },
	{ "CODEX_ACCESS_TOKEN", NULL, NULL, NULL },
	{ NULL, "auth.json", "CODEX_HOME", ".codex" },
	{ NULL, NULL, NULL, NULL },
};

/* Where codex sends its requests unless told otherwise. */
static const struct adapter_base_url codex_base_urls[] = {
	{ "OPENAI_BASE_URL", "api.openai.com" },
	{ NULL, NULL },
};

const struct adapter adapter_codex = {
	.name = "codex",
	.binary = "codex",
	.flags = ADAPTER_AGENT | ADAPTER_DEFAULT,
	.prompt_stdin = 1,
	.live_input = 0,
	.stream_json = 1,
	.build_argv = codex_build_argv,
	.line = codex_line,
	.creds = codex_creds,
	.base_urls = codex_base_urls,
};
