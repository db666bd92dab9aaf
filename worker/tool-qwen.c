/*
 * tool-qwen.c: the Qwen Code adapter (`qwen -o stream-json`, checked
 * against 0.15.10).  Its argv follows gemini-cli, which it forked; its
 * stream follows Claude Code's (system/init, assistant, user, result).
 */
#include "config.h"

#include <string.h>

#include "adapter.h"

/* qwen spells gemini's auto_edit as auto-edit; accept either from config. */
static void
qwen_build_argv(const struct tool_spec *spec, const char *resume_session,
    const char *input, struct strv *argv)
{
	const char	*mode;

	(void)input;
	if ((mode = adapter_opt(spec, "approval_mode")) == NULL)
		mode = adapter_permission(spec) == PERM_READ_ONLY ? "plan" :
		    "yolo";
	else if (strcmp(mode, "auto_edit") == 0)
		mode = "auto-edit";
	adapter_argv_begin(spec, "qwen", argv);
	if (spec->model != NULL && spec->model[0] != '\0') {
		strv_push(argv, "-m");
		strv_push(argv, spec->model);
	}
	strv_push(argv, "--approval-mode");
	strv_push(argv, mode);
	strv_push(argv, "-o");
	strv_push(argv, "stream-json");
	if (resume_session != NULL) {
		strv_push(argv, "--resume");
		strv_push(argv, resume_session);
	}
	adapter_argv_extra(spec, argv);
	adapter_argv_end(argv);
}

/* Same events as claude; the dialect flag covers usage and error details. */
static void
qwen_line(struct tool_stream *ts, const char *line, size_t len)
{
	claude_dialect_line(ts, line, len, CLAUDE_DIALECT_QWEN);
}

/* Where qwen looks for credentials (doctor; ccw-worker(8) lists them). */
static const struct adapter_cred qwen_creds[] = {
	{ "OPENAI_API_KEY", NULL, NULL, NULL },
	{ "DASHSCOPE_API_KEY", NULL, NULL, NULL },
	{ "BAILIAN_CODING_PLAN_API_KEY", NULL, NULL, NULL },
	{ NULL, "oauth_creds.json", "QWEN_HOME", ".qwen" },
	{ NULL, ".env", "QWEN_HOME", ".qwen" },
	{ NULL, "settings.json", "QWEN_HOME", ".qwen" },
	{ NULL, NULL, NULL, NULL },
};

/* Where qwen sends its requests unless told otherwise. */
static const struct adapter_base_url qwen_base_urls[] = {
	{ "OPENAI_BASE_URL", "api.openai.com" },
	{ NULL, NULL },
};

const struct adapter adapter_qwen = {
	.name = "qwen",
	.binary = "qwen",
	.flags = ADAPTER_AGENT,
	.prompt_stdin = 1,
	.live_input = 0,
	.stream_json = 1,
	.build_argv = qwen_build_argv,
	.line = qwen_line,
	.creds = qwen_creds,
	.base_urls = qwen_base_urls,
};
