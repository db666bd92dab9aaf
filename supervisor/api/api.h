/*
 * api.h: the one verb table every front end calls (control's JSON lines
 * today; serve's socket and HTTP, mcp and acp later): the agent verbs on
 * a host's agent table, the loop verbs on its state directory.
 */
#ifndef CCW_API_H
#define CCW_API_H

#include <stdint.h>

#include <jansson.h>

#include "agent.h"
#include "errcode.h"

struct api;
struct event_base;
struct host;

#define API_TEXT_MAX	(4u << 20)	/* message, command: bytes */
#define API_NAME_MAX	4096		/* role, tool, model, target ... */
#define API_TARGETS_MAX	4096		/* agents one wait names */
#define API_GRACE_MS	5000		/* close's default grace */
#define API_WAIT_MS	600000		/* wait's default timeout */

/* What a spawn asks for; borrowed from the request for the call. */
struct api_spawn {
	const char	*role;
	const char	*message;	/* "" when absent */
	const char	*tool;		/* NULL: the role's or the default */
	const char	*command;
	const char	*model;
	const char	*cwd;		/* NULL: the host's root; else a */
					/* directory, absolute and resolved */
};

/*
 * Turn a spawn into a worker request with the host's configuration
 * (and reserve the agent's id in its loop): 0, or -1 and an error.
 * On success req->options is a new reference the api releases.
 */
typedef int	(*api_plan_fn)(void *, const struct api_spawn *,
		    struct agent_req *, char **);

/*
 * A loop loop_open started (with "start": true) ended: its id and EXIT_*
 * code, after the host let it go.
 */
typedef void	(*api_loop_end_fn)(void *, const char *, int);

/*
 * What the host hands the api; all borrowed, outliving the api.  loops:
 * the engine's host (host.h) that runs the loops loop_open starts; NULL:
 * loop_open only creates and reads.  Free the api only once the host's
 * loops have ended or the host is freed (its loops' observer is the api).
 */
struct api_host {
	struct sup	*sup;		/* the agent table, on the host's base */
	const char	*state_dir;	/* the loop verbs' directory, or NULL */
	const char	*root;		/* the project: spawn's default cwd */
	uint64_t	 grace_ms;	/* close's default grace */
	api_plan_fn	 plan;
	void		*plan_arg;
	struct host	*loops;		/* runs started loops, or NULL */
	api_loop_end_fn	 loop_end;	/* NULL: not told */
	void		*loop_end_arg;
	void		(*settled)(void *);	/* a git run of its own */
	void		*settled_arg;		/* ended (NULL: not told) */
};

/*
 * A reply: {"ok": true, ...} or {"ok": false, "error": "...", "code":
 * "not_found"} (errcode.h names the kinds; front ends map the code,
 * never the text), with the request's "id" (null when it had none) last.  Borrowed for the call.
 */
typedef void	(*api_reply_cb)(json_t *, void *);

struct api	*api_new(const struct api_host *);
void		 api_free(struct api *);	/* pending calls are dropped */
void		 api_call(struct api *, const json_t *, api_reply_cb, void *);
void		 api_call_as(struct api *, const json_t *, const char *,
		    api_reply_cb, void *);	/* via: "http", "mcp" ... */
int		 api_idle(const struct api *);	/* no call pending */
void		 api_close_all(struct api *, uint64_t);	/* EOF, a signal */
struct verbs	*api_verbs(const struct api *);	/* borrowed */
json_t		*api_error_new(const json_t *, enum err_code, const char *,
		    ...) __attribute__((format(printf, 3, 4)));
enum err_code	 api_reply_code(const json_t *);	/* ERR_NONE: "ok" */
extern const char api_verb_names[];	/* for --help: "spawn, wait, ..." */
const char	*api_arg_words(const char *, const char *);	/* "a b" */

#endif
