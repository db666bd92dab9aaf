/*
 * adapter.h: one adapter per agent tool.  An adapter knows how to build the
 * tool's argv (first run and resume), and how to read its output stream one
 * line at a time: session id, in-stream final event, final answer text,
 * token usage.  Process handling is not here (worker/tool.c does it).
 */
#ifndef CCW_ADAPTER_H
#define CCW_ADAPTER_H

#include <stdint.h>

#include <jansson.h>

#include "proto.h"

/* What the supervisor asked for (borrowed from the ASSIGN message). */
struct tool_spec {
	const char	*tool;		/* adapter name */
	const char	*binary;	/* path or name to exec; NULL: adapter default */
	const char	*model;		/* NULL: tool default */
	const char	*command;	/* bash only */
	const char	*prompt;
	json_t		*options;	/* may be NULL; e.g. {"permission":"read-only",
					   "sandbox":"workspace-write",
					   "permission_mode":"acceptEdits",
					   "approval_mode":"yolo", "extra_args":[...]} */
};

/* options.permission: what a role may do (absent: workspace-write). */
enum permission {
	PERM_READ_ONLY,
	PERM_WORKSPACE_WRITE,
	PERM_FULL,
};

/* State read from the stream so far (owned; tool_stream_clear frees). */
struct tool_stream {
	char		*session_id;
	int		 final_seen;	/* the in-stream final event arrived */
	int		 final_failed;	/* ... and it reports failure */
	char		*final_text;	/* the agent's answer, parsed for WORKER_RESULT */
	char		*last_text;	/* last progress line, for PROGRESS */
	char		*error;		/* error text reported in-stream, if any */
	const char	*error_kind;	/* auth|model|rate_limited|network|... */
	char		*retry;		/* a retry to report now (PROGRESS "retry") */
	uint64_t	 retry_after_ms; /* rate limit: the wait the CLI or API
					   named, from when it was read (0: none) */
	uint64_t	 now_ms;	/* wall clock for reset epochs (0: read it) */
	uint64_t	 tokens_in;
	uint64_t	 tokens_out;
	double		 cost;
	int		 cost_seen;	/* the CLI reported a cost at all */
};

struct adapter {
	const char	*name;		/* "codex", "claude", ... */
	const char	*binary;	/* default executable name */
	int		 prompt_stdin;	/* prompt is written to stdin */
	int		 live_input;	/* follow-up input can go to stdin while running */
	int		 stream_json;	/* output is JSON lines parsed by line() */
	/*
	 * Build argv.  resume_session == NULL: the first run, with
	 * spec->prompt as the task.  Otherwise a follow-up turn of that
	 * session with `input` as the new message.  The prompt (or input)
	 * goes on stdin when prompt_stdin is set, else into argv.
	 */
	void		(*build_argv)(const struct tool_spec *, const char *resume_session,
			    const char *input, struct strv *argv);
	/* One complete output line (no newline); NULL for plain-text tools. */
	void		(*line)(struct tool_stream *, const char *, size_t);
	/*
	 * "NAME=VALUE" strings the tool gets on top of the worker's own
	 * environment, for settings a CLI takes from nowhere else (opencode's
	 * permissions); NULL: none.
	 */
	void		(*build_env)(const struct tool_spec *, struct strv *env);
};

const struct adapter	*adapter_find(const char *);
const char		*adapter_names(void);	/* "bash, claude, codex, ..." */
void			 tool_stream_clear(struct tool_stream *);

/*
 * Helpers shared by the tool-*.c files (adapters.c).  build_argv leaves
 * argv->v[argv->n] == NULL (not counted) so argv->v can go to execv.
 */
#define ADAPTER_TEXT_MAX	(4u << 20)	/* final_text: last 4 MiB */
#define ADAPTER_SHORT_MAX	100		/* last_text snippet bytes */

void		 adapter_argv_begin(const struct tool_spec *, const char *,
		    struct strv *);
void		 adapter_argv_extra(const struct tool_spec *, struct strv *);
void		 adapter_argv_end(struct strv *);
const char	*adapter_opt(const struct tool_spec *, const char *);
int		 adapter_opt_bool(const struct tool_spec *, const char *, int);
json_t		*adapter_parse(const char *, size_t);
const char	*adapter_str(const json_t *, const char *);
uint64_t	 adapter_uint(const json_t *, const char *);
double		 adapter_real(const json_t *, const char *);
int		 adapter_has_number(const json_t *, const char *);
void		 adapter_set(char **, const char *);
void		 adapter_append(char **, const char *, const char *);
void		 adapter_progress(struct tool_stream *, const char *,
		    const char *);
void		 adapter_progress_tool(struct tool_stream *, const char *,
		    const char *);
const char	*adapter_tool_detail(const json_t *);
void		 adapter_session(struct tool_stream *, const char *);
int		 adapter_session_ok(const char *);
enum permission	 adapter_permission(const struct tool_spec *);
void		 adapter_api_error(struct tool_stream *, long, const char *,
		    uint64_t, uint64_t);
int		 adapter_stderr_line(struct tool_stream *, const char *, size_t);

/* retryafter.c: the wait a rate-limit message names (ms, 0: none). */
uint64_t	 retryafter_parse(const char *, uint64_t);
void		 retryafter_note(struct tool_stream *, const char *);

/* tool-claude.c: one stream-json line; qwen speaks the same dialect. */
void		 claude_dialect_line(struct tool_stream *, const char *, size_t,
		    int);
#define CLAUDE_DIALECT_CLAUDE	0
#define CLAUDE_DIALECT_QWEN	1

#endif
