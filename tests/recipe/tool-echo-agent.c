/*
 * tool-echo-agent.c: the recipe test's tool (HACKING.md, "Adding an agent
 * CLI"): a row for a stand-in CLI, tests/recipe/echo-agent, compiled only
 * into the test copies of the programs (CCW_RECIPE_TOOL).  It is written
 * the way a real CLI's worker/tool-NAME.c is: argv, stream, facts.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "adapter.h"

/* echo-agent [-m MODEL] [--resume SESSION] [extra_args]; prompt on stdin. */
static void
echo_agent_build_argv(const struct tool_spec *spec,
    const char *resume_session, const char *input, struct strv *argv)
{
	(void)input;
	adapter_argv_begin(spec, "echo-agent", argv);
	if (spec->model != NULL && spec->model[0] != '\0') {
		strv_push(argv, "-m");
		strv_push(argv, spec->model);
	}
	if (resume_session != NULL) {
		strv_push(argv, "--resume");
		strv_push(argv, resume_session);
	}
	adapter_argv_extra(spec, argv);
	adapter_argv_end(argv);
}

/*
 * Its stream: {"type":"session","id":...}, {"type":"text","text":...}
 * (the answer, in pieces), {"type":"done","ok":bool,"error":...,
 * "input_tokens":N,"output_tokens":N}.
 */
static void
echo_agent_line(struct tool_stream *ts, const char *line, size_t len)
{
	json_t		*j = adapter_parse(line, len);
	const char	*type = adapter_str(j, "type");

	if (type == NULL) {
		json_decref(j);
		return;
	}
	if (strcmp(type, "session") == 0)
		adapter_session(ts, adapter_str(j, "id"));
	else if (strcmp(type, "text") == 0 && adapter_str(j, "text") != NULL) {
		adapter_append(&ts->final_text, "", adapter_str(j, "text"));
		adapter_progress(ts, "text", adapter_str(j, "text"));
	} else if (strcmp(type, "done") == 0) {
		ts->final_seen = 1;
		ts->final_failed = !json_is_true(json_object_get(j, "ok"));
		if (adapter_str(j, "error") != NULL)
			adapter_set(&ts->error, adapter_str(j, "error"));
		ts->tokens_in += adapter_uint(j, "input_tokens");
		ts->tokens_out += adapter_uint(j, "output_tokens");
		adapter_progress(ts, "done", ts->final_failed ? "failed" :
		    "ok");
	}
	json_decref(j);
}

/* Where echo-agent looks for credentials (doctor lists them). */
static const struct adapter_cred echo_agent_creds[] = {
	{ "ECHO_AGENT_API_KEY", NULL, NULL, NULL },
	{ NULL, "key", "ECHO_AGENT_HOME", ".echo-agent" },
	{ NULL, NULL, NULL, NULL },
};

/* Where echo-agent sends its requests unless told otherwise. */
static const struct adapter_base_url echo_agent_base_urls[] = {
	{ "ECHO_AGENT_BASE_URL", "api.echo-agent.invalid" },
	{ NULL, NULL },
};

const struct adapter adapter_echo_agent = {
	.name = "echo-agent",
	.binary = "echo-agent",
	.flags = ADAPTER_AGENT,
	.prompt_stdin = 1,
	.live_input = 0,
	.stream_json = 1,
	.build_argv = echo_agent_build_argv,
	.line = echo_agent_line,
	.creds = echo_agent_creds,
	.base_urls = echo_agent_base_urls,
};
