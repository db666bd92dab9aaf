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

#include "outcome.h"
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
	const char	*perm_config;	/* the permission relay's MCP config
					   (JSON), or NULL: none */
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
	enum outcome_kind error_kind;	/* OUTCOME_NONE until the stream names one */
	char		*retry;		/* a retry to report now (PROGRESS "retry") */
	uint64_t	 retry_after_ms; /* rate limit: the wait the CLI or API
					   named, from when it was read (0: none) */
	uint64_t	 now_ms;	/* wall clock for reset epochs (0: read it) */
	uint64_t	 tokens_in;
	uint64_t	 tokens_out;
	double		 cost;
	int		 cost_seen;	/* the CLI reported a cost at all */
};

/*
 * A credential source a CLI reads: an environment variable (env), or a
 * file (file) under $DIR_ENV when that is set, else under HOME/DIR_HOME.
 * doctor lists which are present, never their values.
 */
struct adapter_cred {
	const char	*env;
	const char	*file;
	const char	*dir_env;	/* NULL: always under HOME/dir_home */
	const char	*dir_home;
};

/* A variable that sends the CLI's requests elsewhere, and where they go
 * unset (doctor shows it). */
struct adapter_base_url {
	const char	*env;
	const char	*vendor_host;
};

/* adapter.flags: what the rest of the program asks of a tool. */
#define ADAPTER_AGENT		0x01	/* an agent CLI: a prompt in, a session
					   to resume; else a command tool
					   (spec->command, e.g. bash) */
#define ADAPTER_DEFAULT		0x02	/* the default tool with no config and
					   no CCW files */
#define ADAPTER_CCW_DEFAULT	0x04	/* CCW's default when its files exist
					   and cli-settings.json names none */
#define ADAPTER_CCW_SUBAGENT	0x08	/* runs batch's executor "agent" (CCW
					   execute.md's sub-agent) */
#define ADAPTER_CCW_SETTINGS	0x10	/* takes cli-tools.json's settingsFile
					   and effort as options */
#define ADAPTER_PERM_TOOL	0x20	/* asks an MCP tool before a tool use
					   (options.ask_permissions: the
					   permission relay, permrelay.h) */

/*
 * One row of THE table of tools (adapters.c): everything the worker and
 * the supervisor know of a tool.  Each row lives in its own
 * worker/tool-NAME.c; the table's order is CCW's (cli-tools order: the
 * fallback order of the default tool) after the command tool.
 */
struct adapter {
	const char	*name;		/* the config key, ASSIGN's tool */
	const char	*binary;	/* default executable name */
	unsigned	 flags;		/* ADAPTER_* */
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
	/* doctor: BINARY VERSION_ARG prints the version (NULL: --version). */
	const char	*version_arg;
	/* doctor: credential sources, ended by a zero row; NULL: none needed. */
	const struct adapter_cred	*creds;
	/* doctor: base-URL overrides, ended by a zero row; NULL: none. */
	const struct adapter_base_url	*base_urls;
	/*
	 * A full-permission flag the CLI refuses when run as root, unless
	 * ROOT_UNLESS_ENV=1 (doctor warns); NULL: none.
	 */
	const char	*root_refuses;
	const char	*root_unless_env;
};

const struct adapter	*adapter_find(const char *);
size_t			 adapter_count(void);
const struct adapter	*adapter_at(size_t);
const struct adapter	*adapter_flagged(unsigned);
char			*adapter_list(unsigned, const char *);
int			 adapter_is_agent(const char *);
void			 tool_stream_clear(struct tool_stream *);

/*
 * Helpers shared by the tool-*.c files (adapterutil.c).  build_argv leaves
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
void		 adapter_fail_kind(struct tool_stream *, long, const char *);
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
