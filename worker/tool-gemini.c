/*
 * tool-gemini.c: the Gemini CLI adapter (`gemini -o stream-json`, checked
 * against 0.61.0).  init carries the session id, assistant text arrives
 * as deltas, and the result event (status success|error) is final.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "adapter.h"
#include "result.h"

/* Headless 0.61 exits 55 in an untrusted folder: --skip-trust by default. */
static void
gemini_build_argv(const struct tool_spec *spec, const char *resume_session,
    const char *input, struct strv *argv)
{
	const char	*mode;

	(void)input;
	if ((mode = adapter_opt(spec, "approval_mode")) == NULL)
		mode = adapter_permission(spec) == PERM_READ_ONLY ? "plan" :
		    "yolo";
	else if (strcmp(mode, "auto-edit") == 0)
		mode = "auto_edit";
	adapter_argv_begin(spec, "gemini", argv);
	if (spec->model != NULL && spec->model[0] != '\0') {
		strv_push(argv, "-m");
		strv_push(argv, spec->model);
	}
	strv_push(argv, "--approval-mode");
	strv_push(argv, mode);
	if (adapter_opt_bool(spec, "skip_trust", 1))
		strv_push(argv, "--skip-trust");
	strv_push(argv, "-o");
	strv_push(argv, "stream-json");
	if (resume_session != NULL) {
		strv_push(argv, "-r");
		strv_push(argv, resume_session);
	}
	adapter_argv_extra(spec, argv);
	adapter_argv_end(argv);
}

/* Deltas build the answer; a non-delta message replaces it whole. */
static void
gemini_message(struct tool_stream *ts, const json_t *ev)
{
	const char	*role, *text;

	role = adapter_str(ev, "role");
	text = adapter_str(ev, "content");
	if (role == NULL || strcmp(role, "assistant") != 0 || text == NULL)
		return;
	if (json_is_true(json_object_get(ev, "delta")))
		adapter_append(&ts->final_text, NULL, text);
	else
		adapter_set(&ts->final_text, text);
	adapter_progress(ts, "assistant", ts->final_text);
}

/* The answer is the text after the last tool call, so a call starts anew. */
static void
gemini_tool_use(struct tool_stream *ts, const json_t *ev)
{
	const char	*name;

	if ((name = adapter_str(ev, "tool_name")) == NULL)
		return;
	adapter_set(&ts->final_text, NULL);
	adapter_progress_tool(ts, name,
	    adapter_tool_detail(json_object_get(ev, "parameters")));
}

/* status is the verdict; stats hold the session's token totals. */
static void
gemini_result(struct tool_stream *ts, const json_t *ev)
{
	json_t		*stats;
	const char	*status, *msg;
	char		*why;

	ts->final_seen = 1;
	status = adapter_str(ev, "status");
	if (status == NULL || strcmp(status, "success") != 0) {
		ts->final_failed = 1;
		msg = adapter_str(json_object_get(ev, "error"), "message");
		if (msg != NULL)
			adapter_set(&ts->error, msg);
		/* "[API Error: ...\nSuggested retry after 7s.]" */
		if (ts->error != NULL)
			adapter_fail_kind(ts, 0, ts->error);
		else {
			xasprintf(&why, "result status %s",
			    status != NULL ? status : "missing");
			adapter_set(&ts->error, why);
			free(why);
		}
	} else
		adapter_set(&ts->error, NULL);
	stats = json_object_get(ev, "stats");
	ts->tokens_in = adapter_uint(stats, "input_tokens");
	ts->tokens_out = adapter_uint(stats, "output_tokens");
	adapter_progress(ts, ts->final_failed ? "failed" : "result",
	    ts->final_failed ? ts->error : status);
}

/* Lines that are not JSON objects (warnings, stack traces) are not events. */
static void
gemini_line(struct tool_stream *ts, const char *line, size_t len)
{
	json_t		*ev, *err;
	const char	*type, *sev, *msg;

	if ((ev = adapter_parse(line, len)) == NULL)
		return;
	if ((type = adapter_str(ev, "type")) == NULL)
		goto out;
	if (strcmp(type, "init") == 0) {
		adapter_session(ts, adapter_str(ev, "session_id"));
		adapter_progress(ts, "init", adapter_str(ev, "model"));
	} else if (strcmp(type, "message") == 0)
		gemini_message(ts, ev);
	else if (strcmp(type, "tool_use") == 0)
		gemini_tool_use(ts, ev);
	else if (strcmp(type, "tool_result") == 0) {
		err = json_object_get(ev, "error");
		if (json_is_object(err))
			adapter_progress(ts, "tool error",
			    adapter_str(err, "message"));
	} else if (strcmp(type, "error") == 0) {
		sev = adapter_str(ev, "severity");
		msg = adapter_str(ev, "message");
		if (sev != NULL && strcmp(sev, "warning") == 0)
			adapter_progress(ts, "warning", msg);
		else {
			if (msg != NULL)
				adapter_set(&ts->error, msg);
			adapter_progress(ts, "error", msg);
		}
	} else if (strcmp(type, "result") == 0)
		gemini_result(ts, ev);
out:
	json_decref(ev);
}

/* Where gemini looks for credentials (doctor; ccw-worker(8) lists them). */
static const struct adapter_cred gemini_creds[] = {
	{ "GEMINI_API_KEY", NULL, NULL, NULL },
	{ "GOOGLE_API_KEY", NULL, NULL, NULL },
	{ "GOOGLE_GENAI_USE_VERTEXAI", NULL, NULL, NULL },
	{ "GOOGLE_GENAI_USE_GCA", NULL, NULL, NULL },
	{ "GOOGLE_APPLICATION_CREDENTIALS", NULL, NULL, NULL },
	{ NULL, "oauth_creds.json", NULL, ".gemini" },
	{ NULL, ".env", NULL, ".gemini" },
	{ NULL, "settings.json", NULL, ".gemini" },
	{ NULL, NULL, NULL, NULL },
};

/* Where gemini sends its requests unless told otherwise. */
static const struct adapter_base_url gemini_base_urls[] = {
	{ "GOOGLE_GEMINI_BASE_URL", "generativelanguage.googleapis.com" },
	{ NULL, NULL },
};

const struct adapter adapter_gemini = {
	.name = "gemini",
	.binary = "gemini",
	.flags = ADAPTER_AGENT | ADAPTER_CCW_DEFAULT,
	.prompt_stdin = 1,
	.live_input = 0,
	.stream_json = 1,
	.build_argv = gemini_build_argv,
	.line = gemini_line,
	.creds = gemini_creds,
	.base_urls = gemini_base_urls,
};
