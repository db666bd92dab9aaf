/*
 * mcp.h: one MCP session on the verb table: initialize, ping, tools/list
 * and tools/call (the agent and loop tools), logging/setLevel, progress
 * and cancellation.  It knows no transport: `ccw-supervisor mcp` feeds
 * it stdin's lines (cmd-mcp.c), serve's /mcp its POSTs (servemcp.c).
 */
#ifndef CCW_MCP_H
#define CCW_MCP_H

#include <jansson.h>

struct agent;
struct api;
struct bus;
struct mcp;

/*
 * What the session sends, borrowed for the call: a reply, or a
 * notification.  about: the id of the request it belongs to (a reply's
 * own; a progress notification's request), NULL when it belongs to none
 * (a log message): Streamable HTTP sends it on that request's stream,
 * else on the session's GET stream; stdio writes every one as a line.
 */
typedef void	(*mcp_send_fn)(void *, const json_t *, const json_t *);

struct mcp_cfg {
	struct api	*api;		/* the verb table: agents, loops */
	struct bus	*bus;		/* events for progress; NULL: none */
	mcp_send_fn	 send;
	void		*arg;
	/*
	 * A verb under a tools/call replied, its result sent, or dropped
	 * when the call was abandoned (cancelled, the session freed: then
	 * after mcp_free too): a front end waiting for the api to be idle
	 * checks again.  arg as send's; NULL: not told.
	 */
	void		(*settled)(void *);
};

struct mcp	*mcp_new(const struct mcp_cfg *);
void		 mcp_free(struct mcp *);
void		 mcp_message(struct mcp *, const json_t *);
int		 mcp_idle(const struct mcp *);	/* no request unanswered */
int		 mcp_ready(const struct mcp *);	/* initialize answered */
const char	*mcp_version(const struct mcp *);	/* negotiated, or NULL */

/*
 * For the agent table the api spawns in: sup.progress = this,
 * sup.progress_arg = cfg.bus, so a wait_agent's progress notifications
 * carry its agents' PROGRESS lines (a loop's workers publish theirs).
 */
void		 mcp_agent_progress(struct agent *, void *);

#endif
