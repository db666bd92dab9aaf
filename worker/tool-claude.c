/*
 * tool-claude.c: the Claude Code adapter (`claude -p --output-format
 * stream-json`, checked against 2.1.197) and the parser of that event
 * dialect, which qwen-code also speaks (see claude_dialect_line).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "adapter.h"
#include "permrelay.h"
#include "result.h"

/*
 * Prompt on stdin; a follow-up is a new -p run resuming the session.
 * options.permission picks the mode unless permission_mode names one:
 * read-only is plan; workspace-write is acceptEdits plus the Bash tool,
 * which acceptEdits alone refuses in -p ("This command requires
 * approval") and which works as root and as a user alike; full is
 * bypassPermissions (which claude refuses as root unless IS_SANDBOX=1).
 * With the permission relay (options.ask_permissions, permsock.c) Bash
 * is not allowed unasked: claude asks the relay's tool, which asks us.
 */
static void
claude_build_argv(const struct tool_spec *spec, const char *resume_session,
    const char *input, struct strv *argv)
{
	const char	*mode;
	int		 bash = 0;

	(void)input;
	if ((mode = adapter_opt(spec, "permission_mode")) == NULL) {
		switch (adapter_permission(spec)) {
		case PERM_READ_ONLY:
			mode = "plan";
			break;
		case PERM_FULL:
			mode = "bypassPermissions";
			break;
		case PERM_WORKSPACE_WRITE:
			mode = "acceptEdits";
			bash = spec->perm_config == NULL;
			break;
		}
	}
	adapter_argv_begin(spec, "claude", argv);
	strv_push(argv, "-p");
	strv_push(argv, "--output-format");
	strv_push(argv, "stream-json");
	strv_push(argv, "--verbose");
	if (bash) {
		strv_push(argv, "--allowedTools");
		strv_push(argv, "Bash");
	}
	strv_push(argv, "--permission-mode");
	strv_push(argv, mode);
	if (spec->perm_config != NULL) {
		strv_push(argv, "--mcp-config");
		strv_push(argv, spec->perm_config);
		strv_push(argv, "--permission-prompt-tool");
		strv_push(argv, "mcp__" PERMRELAY_SERVER "__" PERMRELAY_TOOL);
	}
	if (spec->model != NULL && spec->model[0] != '\0') {
		strv_push(argv, "--model");
		strv_push(argv, spec->model);
	}
	/* CCW's settingsFile and effort (cli-tools.json), via options */
	if ((mode = adapter_opt(spec, "settings_file")) != NULL) {
		strv_push(argv, "--settings");
		strv_push(argv, mode);
	}
	if ((mode = adapter_opt(spec, "effort")) != NULL) {
		strv_push(argv, "--effort");
		strv_push(argv, mode);
	}
	if (resume_session != NULL) {
		strv_push(argv, "--resume");
		strv_push(argv, resume_session);
	}
	adapter_argv_extra(spec, argv);
	adapter_argv_end(argv);
}

/* An assistant message is a list of blocks; the last one is the news. */
static void
claude_assistant(struct tool_stream *ts, const json_t *ev)
{
	json_t		*msg, *content, *block;
	const char	*type, *err;
	size_t		 i;

	msg = json_object_get(ev, "message");
	content = json_object_get(msg, "content");
	if (json_is_array(content)) {
		json_array_foreach(content, i, block) {
			if ((type = adapter_str(block, "type")) == NULL)
				continue;
			if (strcmp(type, "text") == 0)
				adapter_progress(ts, "assistant",
				    adapter_str(block, "text"));
			else if (strcmp(type, "thinking") == 0)
				adapter_progress(ts, "thinking",
				    adapter_str(block, "thinking"));
			else if (strcmp(type, "tool_use") == 0)
				adapter_progress_tool(ts,
				    adapter_str(block, "name"),
				    adapter_tool_detail(json_object_get(block,
				    "input")));
		}
	}
	if ((err = adapter_str(ev, "error")) != NULL)
		adapter_set(&ts->error, err);
}

/* Tool results come back as user messages; only failures are worth a line. */
static void
claude_user(struct tool_stream *ts, const json_t *ev)
{
	json_t		*content, *block, *c;
	const char	*text;
	size_t		 i;

	content = json_object_get(json_object_get(ev, "message"), "content");
	if (!json_is_array(content))
		return;
	json_array_foreach(content, i, block) {
		if (!json_is_true(json_object_get(block, "is_error")))
			continue;
		c = json_object_get(block, "content");
		text = json_is_string(c) ? json_string_value(c) : NULL;
		adapter_progress(ts, "tool error", text);
	}
}

/* Why a failed result failed, from whichever field this dialect used. */
static const char *
claude_result_error(const json_t *ev)
{
	json_t		*errors;
	const char	*s;

	if ((s = adapter_str(json_object_get(ev, "error"), "message")) != NULL)
		return s;
	errors = json_object_get(ev, "errors");
	if (json_is_array(errors) &&
	    (s = json_string_value(json_array_get(errors, 0))) != NULL)
		return s;
	if ((s = adapter_str(ev, "result")) != NULL && s[0] != '\0')
		return s;
	if ((s = adapter_str(ev, "subtype")) != NULL)
		return s;
	return "result reports an error";
}

/* is_error or an error_* subtype fails; qwen hides API errors in the text. */
static void
claude_result(struct tool_stream *ts, const json_t *ev, int dialect)
{
	json_t		*usage;
	const char	*text, *sub;

	ts->final_seen = 1;
	text = adapter_str(ev, "result");
	sub = adapter_str(ev, "subtype");
	if (json_is_true(json_object_get(ev, "is_error")) ||
	    (sub != NULL && strncmp(sub, "error", 5) == 0))
		ts->final_failed = 1;
	if (dialect == CLAUDE_DIALECT_QWEN && text != NULL &&
	    strncmp(text, "[API Error", 10) == 0)
		ts->final_failed = 1;
	if (text != NULL)
		adapter_set(&ts->final_text, text);
	adapter_set(&ts->error, ts->final_failed ? claude_result_error(ev) :
	    NULL);
	if (ts->final_failed)
		adapter_fail_kind(ts, (long)adapter_uint(ev,
		    "api_error_status"), ts->error);
	adapter_session(ts, adapter_str(ev, "session_id"));
	usage = json_object_get(ev, "usage");
	ts->tokens_in = adapter_uint(usage, "input_tokens");
	if (dialect == CLAUDE_DIALECT_CLAUDE)
		ts->tokens_in += adapter_uint(usage,
		    "cache_creation_input_tokens") +
		    adapter_uint(usage, "cache_read_input_tokens");
	ts->tokens_out = adapter_uint(usage, "output_tokens");
	ts->cost = adapter_real(ev, "total_cost_usd");
	ts->cost_seen = adapter_has_number(ev, "total_cost_usd");
	adapter_progress(ts, ts->final_failed ? "failed" : "result",
	    ts->final_failed ? ts->error : text);
}

/*
 * A 429 api_retry's retry_delay_ms is claude's wait before its next try,
 * the API's Retry-After when it sent one (claude-429-retryafter.jsonl).
 */
static void
claude_retry_delay(struct tool_stream *ts, const json_t *ev)
{
	const char	*err = adapter_str(ev, "error");
	double		 ms = adapter_real(ev, "retry_delay_ms");

	if (adapter_uint(ev, "error_status") != 429 &&
	    (err == NULL || strcmp(err, "rate_limit") != 0))
		return;
	if (ms >= 1.0)
		ts->retry_after_ms = (uint64_t)(ms + 0.5);
}

/* Lines that are not JSON objects (warnings, banners) are not events. */
void
claude_dialect_line(struct tool_stream *ts, const char *line, size_t len,
    int dialect)
{
	json_t		*ev;
	const char	*type, *sub;

	if ((ev = adapter_parse(line, len)) == NULL)
		return;
	if ((type = adapter_str(ev, "type")) == NULL)
		goto out;
	if (strcmp(type, "system") == 0) {
		sub = adapter_str(ev, "subtype");
		if (sub != NULL && strcmp(sub, "init") == 0) {
			adapter_session(ts, adapter_str(ev, "session_id"));
			adapter_progress(ts, "init", adapter_str(ev, "model"));
		} else if (sub != NULL && strcmp(sub, "api_retry") == 0) {
			claude_retry_delay(ts, ev);
			adapter_api_error(ts, (long)adapter_uint(ev,
			    "error_status"), adapter_str(ev, "error"),
			    adapter_uint(ev, "attempt"),
			    adapter_uint(ev, "max_retries"));
		}
	} else if (strcmp(type, "assistant") == 0)
		claude_assistant(ts, ev);
	else if (strcmp(type, "user") == 0)
		claude_user(ts, ev);
	else if (strcmp(type, "result") == 0)
		claude_result(ts, ev, dialect);
out:
	json_decref(ev);
}

/* The adapter table wants a plain line callback. */
static void
claude_line(struct tool_stream *ts, const char *line, size_t len)
{
	claude_dialect_line(ts, line, len, CLAUDE_DIALECT_CLAUDE);
}

/* Where claude looks for credentials (doctor; ccw-worker(8) lists them). */
static const struct adapter_cred claude_creds[] = {
	{ "ANTHROPIC_API_KEY", NULL, NULL, NULL },
	{ "ANTHROPIC_AUTH_TOKEN", NULL, NULL, NULL },
	{ "CLAUDE_CODE_OAUTH_TOKEN", NULL, NULL, NULL },
	{ "CLAUDE_CODE_USE_BEDROCK", NULL, NULL, NULL },
	{ "CLAUDE_CODE_USE_VERTEX", NULL, NULL, NULL },
	{ NULL, ".credentials.json", "CLAUDE_CONFIG_DIR", ".claude" },
	{ NULL, NULL, NULL, NULL },
};

/* Where claude sends its requests unless told otherwise. */
static const struct adapter_base_url claude_base_urls[] = {
	{ "ANTHROPIC_BASE_URL", "api.anthropic.com" },
	{ NULL, NULL },
};

const struct adapter adapter_claude = {
	.name = "claude",
	.binary = "claude",
	.flags = ADAPTER_AGENT | ADAPTER_CCW_SUBAGENT | ADAPTER_CCW_SETTINGS |
	    ADAPTER_PERM_TOOL,
	.prompt_stdin = 1,
	.live_input = 0,
	.stream_json = 1,
	.build_argv = claude_build_argv,
	.line = claude_line,
	.creds = claude_creds,
	.base_urls = claude_base_urls,
	.root_refuses = "--permission-mode bypassPermissions",
	.root_unless_env = "IS_SANDBOX",
};
