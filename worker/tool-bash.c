/*
 * tool-bash.c: the plain-command adapter.  `bash -c COMMAND` with the
 * prompt on stdin; the outcome is the process exit, and follow-up input
 * goes to the same stdin while it runs.
 */
#include "config.h"

#include <stddef.h>

#include "adapter.h"

/* No sessions to resume: rerun; extra_args are bash options, so before -c. */
static void
bash_build_argv(const struct tool_spec *spec, const char *resume_session,
    const char *input, struct strv *argv)
{
	(void)resume_session;
	(void)input;
	adapter_argv_begin(spec, "bash", argv);
	adapter_argv_extra(spec, argv);
	strv_push(argv, "-c");
	strv_push(argv, spec->command != NULL ? spec->command : "");
	adapter_argv_end(argv);
}

const struct adapter adapter_bash = {
	.name = "bash",
	.binary = "bash",
	.flags = 0,
	.prompt_stdin = 1,
	.live_input = 1,
	.stream_json = 0,
	.build_argv = bash_build_argv,
	.line = NULL,
};
