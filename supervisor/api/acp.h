/*
 * acp.h: an Agent Client Protocol agent (protocol version 1) on the
 * engine: a session is a loop in the client's project, a prompt turn
 * runs it, session/update streams its plan, workers and usage.  The
 * transport is the caller's (cmd-acp.c: newline-delimited JSON-RPC on
 * stdio); so is the project table (one host and verb table per root).
 */
#ifndef CCW_ACP_H
#define CCW_ACP_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct acp;
struct api;
struct workflow;
struct event_base;
struct host;

#define ACP_PROTOCOL_VERSION	1
#define ACP_SESSIONS_MAX	256	/* sessions per process (default) */
#define ACP_ERROR_SESSIONS	-32000	/* session/new etc. beyond the cap */

/* A project as the caller opened it for a cwd (all borrowed). */
struct acp_project {
	struct host	*host;		/* runs the project's loops */
	struct api	*api;		/* its verb table: loop_open ... */
	const struct workflow *wf;	/* its loops' roles: the plan */
};

struct acp_cfg {
	struct event_base *base;
	/* the project of an absolute, existing cwd: 0, or -1 and *err */
	int	(*project)(void *, const char *, struct acp_project *,
		    char **);
	/* one message to the client (borrowed): a line on stdout */
	void	(*write)(void *, const json_t *);
	/* a turn ended or a loop left (after EOF the caller may exit) */
	void	(*idle)(void *);
	void	*arg;
	/* sessions open at once (made or being made); 0: ACP_SESSIONS_MAX */
	size_t	 max_sessions;
};

struct acp	*acp_new(const struct acp_cfg *);
void		 acp_free(struct acp *);
void		 acp_line(struct acp *, const char *, size_t);
void		 acp_stop_all(struct acp *, const char *);
size_t		 acp_running(const struct acp *);

#endif
