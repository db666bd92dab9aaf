/*
 * mcp.c: one MCP session over the verb table (mcp.h): the lifecycle
 * (initialize, ping), tools/list and tools/call (mcptools.c maps a tool
 * onto its verb), logging/setLevel with the bus's events as log
 * messages, progress for waits, and cancellation.
 */
#include <config.h>

#include <sys/queue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "apiint.h"
#include "bus.h"
#include "jsonrpc.h"
#include "mcp.h"
#include "mcpint.h"
#include "xmalloc.h"

#define MCP_TICK_MS	1000	/* a wait's progress at least this often */

/* Newest first: the first is what a client we do not know gets. */
static const char *const mcp_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

/* RFC 5424's, as MCP names them, lowest first. */
static const char *const mcp_levels[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert",
	"emergency", NULL
};
#define MCP_LEVEL_INFO	1
#define MCP_LEVEL_NONE	8	/* nothing logged until logging/setLevel */

enum mcp_phase {
	MP_NEW,		/* only initialize and ping are answered */
	MP_READY,	/* initialize answered */
};

/*
 * A tools/call whose verb has not replied.  Abandoned (m NULL) when the
 * client cancels it or the session goes: then it only waits for the
 * verb's reply to be freed (and to close an agent its spawn started).
 */
struct mcp_call {
	TAILQ_ENTRY(mcp_call)	 entry;
	struct mcp		*m;
	struct api		*api;
	void			(*settled)(void *);	/* cfg's, and arg */
	void			*arg;
	const struct mcp_tool	*tool;
	json_t			*id;
	json_t			*args;	/* the call's arguments, or NULL */
	json_t			*token;	/* progressToken, or NULL */
	struct event		*tick;	/* a wait's progress timer */
	json_int_t		 progress;	/* notifications sent */
	unsigned		 seconds;	/* ticks so far */
};
TAILQ_HEAD(mcp_calls, mcp_call);

struct mcp {
	struct mcp_cfg		 cfg;
	struct event_base	*base;
	enum mcp_phase		 phase;
	const char		*version;	/* one of mcp_versions */
	int			 level;		/* logging/setLevel's index */
	struct mcp_calls	 calls;		/* unanswered, not abandoned */
	struct bus_observer	*obs;
	json_t			*agents;	/* ids its spawn_agent made */
};

/* Hand one message to the transport and release it. */
static void
mcp_send(struct mcp *m, json_t *body, const json_t *about)
{
	m->cfg.send(m->cfg.arg, body, about);
	json_decref(body);
}

/* A log message (data stolen) when the client asked for its level. */
static void
mcp_log(struct mcp *m, int level, json_t *data)
{
	if (m->phase != MP_READY || level < m->level) {
		json_decref(data);
		return;
	}
	mcp_send(m, jsonrpc_notify_new("notifications/message", json_pack(
	    "{s:s, s:s, s:o}", "level", mcp_levels[level], "logger",
	    "ccw-supervisor", "data", data)), NULL);
}

/* One progress notification for a call that asked for them. */
static void
mcp_progress(struct mcp_call *c, const char *msg)
{
	if (c->token == NULL || c->m == NULL)
		return;
	mcp_send(c->m, jsonrpc_notify_new("notifications/progress", json_pack(
	    "{s:O, s:I, s:s}", "progressToken", c->token, "progress",
	    (json_int_t)++c->progress, "message", msg)), c->id);
}

/* Each second of a wait: where every awaited agent stands. */
static void
mcp_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct mcp_call	*c = arg;
	const json_t	*t = json_object_get(c->args, "targets");
	struct agent	*a;
	char		*msg = NULL, *prev;
	size_t		 i;

	(void)fd;
	(void)ev;
	c->seconds++;
	for (i = 0; i < json_array_size(t); i++) {
		const char *id = json_string_value(json_array_get(t, i));

		if (id == NULL)
			continue;
		a = agent_find(c->api->host.sup, id);
		prev = msg;
		xasprintf(&msg, "%s%s%s %s", prev != NULL ? prev : "",
		    prev != NULL ? ", " : "", id, a != NULL ?
		    agent_status_name(a->status) : "not_found");
		free(prev);
	}
	prev = msg;
	xasprintf(&msg, "waiting %us: %s", c->seconds, prev != NULL ? prev :
	    "");
	free(prev);
	mcp_progress(c, msg);
	free(msg);
}

/* Release a call (its verb has replied, or the session never sent it). */
static void
mcp_call_free(struct mcp_call *c)
{
	if (c->tick != NULL)
		event_free(c->tick);
	json_decref(c->id);
	json_decref(c->args);
	json_decref(c->token);
	free(c);
}

/* Off the session: no reply, no progress; the verb's reply still frees it. */
static void
mcp_call_abandon(struct mcp_call *c)
{
	TAILQ_REMOVE(&c->m->calls, c, entry);
	c->m = NULL;
	if (c->tick != NULL) {
		event_free(c->tick);
		c->tick = NULL;
	}
}

/* A close the session sent for an abandoned spawn: nothing to say. */
static void
mcp_orphan_closed(json_t *body, void *arg)
{
	(void)body;
	(void)arg;
}

/* Close an agent no client holds any more (its session or its call went). */
static void
mcp_close_orphan(struct api *api, const char *agent)
{
	json_t	*req = json_pack("{s:s, s:s}", "verb", "close", "target",
		    agent);

	api_call(api, req, mcp_orphan_closed, NULL);
	json_decref(req);
}

/*
 * A verb replied: the tool result goes out, or, when the call was
 * abandoned, an agent its spawn started is closed (nobody holds its id).
 */
static void
mcp_replied(json_t *body, void *arg)
{
	struct mcp_call	*c = arg;
	const char	*agent = json_string_value(json_object_get(body,
			    "agent_id"));
	void		(*settled)(void *) = c->settled;
	void		*sarg = c->arg;

	if (c->m == NULL) {
		if (mcp_tool_spawns(c->tool) && agent != NULL)
			mcp_close_orphan(c->api, agent);
	} else {
		if (mcp_tool_spawns(c->tool) && agent != NULL)
			json_array_append_new(c->m->agents, json_string(agent));
		TAILQ_REMOVE(&c->m->calls, c, entry);
		mcp_send(c->m, jsonrpc_result_new(c->id, mcp_tool_result(
		    c->tool, c->args, body)), c->id);
	}
	mcp_call_free(c);
	if (settled != NULL)
		settled(sarg);
}

/* An error reply to a request. */
static void
mcp_error(struct mcp *m, const json_t *id, int code, const char *msg)
{
	mcp_send(m, jsonrpc_error_new(id, code, "%s", msg), id);
}

/* initialize: the client's version when we speak it, else our newest. */
static void
mcp_initialize(struct mcp *m, const struct jsonrpc_msg *msg)
{
	const char	*want = json_string_value(json_object_get(msg->params,
			    "protocolVersion"));
	size_t		 i;

	if (m->phase != MP_NEW) {
		mcp_error(m, msg->id, JSONRPC_INVALID_REQUEST,
		    "already initialized");
		return;
	}
	if (want == NULL) {
		mcp_error(m, msg->id, JSONRPC_INVALID_PARAMS,
		    "initialize needs \"protocolVersion\"");
		return;
	}
	m->version = mcp_versions[0];
	for (i = 0; mcp_versions[i] != NULL; i++)
		if (strcmp(want, mcp_versions[i]) == 0)
			m->version = mcp_versions[i];
	m->phase = MP_READY;
	mcp_send(m, jsonrpc_result_new(msg->id, json_pack("{s:s, "
	    "s:{s:{}, s:{}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion",
	    m->version, "capabilities", "tools", "logging", "serverInfo",
	    "name", PACKAGE_NAME, "title", "ccw-supervisor agents and loops",
	    "version", PACKAGE_VERSION, "instructions",
	    "Each agent is a separate process with a real deadline: "
	    "spawn_agent returns its agent_id at once; wait_agent, send_input "
	    "and close_agent take it.  loop_start runs a whole CCW loop; "
	    "follow it with loop_status.")), msg->id);
}

/* ping: an empty result, even before initialize. */
static void
mcp_ping(struct mcp *m, const struct jsonrpc_msg *msg)
{
	mcp_send(m, jsonrpc_result_new(msg->id, json_object()), msg->id);
}

/* tools/list: every tool, in one page. */
static void
mcp_tools(struct mcp *m, const struct jsonrpc_msg *msg)
{
	mcp_send(m, jsonrpc_result_new(msg->id, mcp_tools_list()), msg->id);
}

/* logging/setLevel: the lowest level sent from now on. */
static void
mcp_set_level(struct mcp *m, const struct jsonrpc_msg *msg)
{
	const char	*lv = json_string_value(json_object_get(msg->params,
			    "level"));
	int		 i;

	for (i = 0; lv != NULL && mcp_levels[i] != NULL; i++)
		if (strcmp(lv, mcp_levels[i]) == 0)
			break;
	if (lv == NULL || mcp_levels[i] == NULL) {
		mcp_error(m, msg->id, JSONRPC_INVALID_PARAMS, "\"level\" must "
		    "be one of: debug info notice warning error critical "
		    "alert emergency");
		return;
	}
	m->level = i;
	mcp_send(m, jsonrpc_result_new(msg->id, json_object()), msg->id);
}

/*
 * tools/call: the tool's verb through the table; its reply (now or
 * later) is the result.  An unknown tool is a protocol error; bad
 * arguments and a verb's failure are results with isError.
 */
static void
mcp_call_tool(struct mcp *m, const struct jsonrpc_msg *msg)
{
	const char		*name = json_string_value(json_object_get(
				    msg->params, "name"));
	const json_t		*args = json_object_get(msg->params,
				    "arguments");
	const json_t		*meta = json_object_get(msg->params, "_meta");
	const json_t		*token = json_object_get(meta, "progressToken");
	const struct mcp_tool	*t;
	struct mcp_call		*c;
	struct timeval		 tv = { MCP_TICK_MS / 1000,
				    (MCP_TICK_MS % 1000) * 1000 };
	json_t			*req;
	char			*err = NULL;

	if (name == NULL || (t = mcp_tool_find(name)) == NULL) {
		mcp_send(m, jsonrpc_error_new(msg->id, JSONRPC_INVALID_PARAMS,
		    "unknown tool: %.64s", name != NULL ? name : "(no name)"),
		    msg->id);
		return;
	}
	if (args != NULL && json_is_null(args))
		args = NULL;
	if ((req = mcp_tool_request(t, args, &err)) == NULL) {
		mcp_send(m, jsonrpc_result_new(msg->id, mcp_tool_error(err)),
		    msg->id);
		free(err);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->m = m;
	c->api = m->cfg.api;
	c->settled = m->cfg.settled;
	c->arg = m->cfg.arg;
	c->tool = t;
	c->id = json_incref((json_t *)msg->id);
	c->args = args != NULL ? json_deep_copy(args) : NULL;
	if (json_is_string(token) || json_is_integer(token))
		c->token = json_incref((json_t *)token);
	TAILQ_INSERT_TAIL(&m->calls, c, entry);
	if (mcp_tool_waits(t) && c->token != NULL) {
		c->tick = event_new(m->base, -1, EV_PERSIST, mcp_tick, c);
		event_add(c->tick, &tv);
	}
	/* the reply may come before api_call returns: c is not touched after */
	api_call_as(m->cfg.api, req, "mcp", mcp_replied, c);
	json_decref(req);
}

/* The requests a client may send, and whether before initialize too. */
static const struct {
	const char	*method;
	void		(*fn)(struct mcp *, const struct jsonrpc_msg *);
	int		 early;
} mcp_methods[] = {
	{ "initialize", mcp_initialize, 1 },
	{ "ping", mcp_ping, 1 },
	{ "tools/list", mcp_tools, 0 },
	{ "tools/call", mcp_call_tool, 0 },
	{ "logging/setLevel", mcp_set_level, 0 },
};

/* A request: its handler answers it, now or when its verb replies. */
static void
mcp_request(struct mcp *m, const struct jsonrpc_msg *msg)
{
	size_t	i;

	for (i = 0; i < sizeof mcp_methods / sizeof mcp_methods[0]; i++)
		if (strcmp(msg->method, mcp_methods[i].method) == 0)
			break;
	if (i == sizeof mcp_methods / sizeof mcp_methods[0]) {
		mcp_send(m, jsonrpc_error_new(msg->id, JSONRPC_NO_METHOD,
		    "method not found: %.64s", msg->method), msg->id);
		return;
	}
	if (m->phase == MP_NEW && !mcp_methods[i].early) {
		mcp_error(m, msg->id, JSONRPC_INVALID_REQUEST,
		    "not initialized: send initialize first");
		return;
	}
	if (msg->params != NULL && !json_is_object(msg->params)) {
		mcp_error(m, msg->id, JSONRPC_INVALID_PARAMS,
		    "\"params\" must be an object");
		return;
	}
	mcp_methods[i].fn(m, msg);
}

/*
 * notifications/cancelled: the request is abandoned, its reply never
 * sent; a wait stops waiting (it kills nothing), a spawn's agent is
 * closed when its reply comes (mcp_replied).
 */
static void
mcp_cancelled(struct mcp *m, const struct jsonrpc_msg *msg)
{
	const json_t	*rid = json_object_get(msg->params, "requestId");
	struct mcp_call	*c;

	TAILQ_FOREACH(c, &m->calls, entry)
		if (rid != NULL && json_equal(c->id, (json_t *)rid))
			break;
	if (c != NULL)
		mcp_call_abandon(c);
}

/* A notification: never answered; the unknown ones are ignored. */
static void
mcp_notify(struct mcp *m, const struct jsonrpc_msg *msg)
{
	if (strcmp(msg->method, "notifications/cancelled") == 0 &&
	    json_is_object(msg->params))
		mcp_cancelled(m, msg);
}

/*
 * An event of the bus: a worker's progress goes to the waits on it;
 * every event is a log message (progress at debug, the rest at info).
 */
static void
mcp_event(void *arg, uint64_t seq, const char *name, const json_t *fields)
{
	struct mcp	*m = arg;
	struct mcp_call	*c;
	const json_t	*t;
	const char	*agent = json_string_value(json_object_get(fields,
			    "agent_id"));
	const char	*text = json_string_value(json_object_get(fields,
			    "text"));
	char		*msg;
	json_t		*data;
	size_t		 i;
	int		 progress = strcmp(name, "worker_progress") == 0;

	if (progress && agent != NULL)
		TAILQ_FOREACH(c, &m->calls, entry) {
			if (c->tick == NULL)
				continue;
			t = json_object_get(c->args, "targets");
			for (i = 0; i < json_array_size(t); i++)
				if (json_is_string(json_array_get(t, i)) &&
				    strcmp(json_string_value(json_array_get(t,
				    i)), agent) == 0)
					break;
			if (i == json_array_size(t))
				continue;
			xasprintf(&msg, "%s: %s", agent, text != NULL ? text :
			    "working");
			mcp_progress(c, msg);
			free(msg);
		}
	data = json_is_object(fields) ? json_deep_copy(fields) : json_object();
	json_object_set_new(data, "event", json_string(name));
	json_object_set_new(data, "seq", json_integer((json_int_t)seq));
	mcp_log(m, progress ? 0 : MCP_LEVEL_INFO, data);
}

/* One message from the client (borrowed): answered through cfg.send. */
void
mcp_message(struct mcp *m, const json_t *v)
{
	struct jsonrpc_msg	 msg;
	const char		*why;

	switch (jsonrpc_classify(v, &msg, &why)) {
	case JR_INVALID:
		mcp_error(m, msg.id, JSONRPC_INVALID_REQUEST, why);
		break;
	case JR_REQUEST:
		mcp_request(m, &msg);
		break;
	case JR_NOTIFY:
		mcp_notify(m, &msg);
		break;
	case JR_RESULT:
	case JR_ERROR:
		break;	/* we send no requests: nothing to match */
	}
}

/* A session on cfg's verb table (and bus: progress, log messages). */
struct mcp *
mcp_new(const struct mcp_cfg *cfg)
{
	struct mcp	*m = xcalloc(1, sizeof *m);

	m->cfg = *cfg;
	m->base = cfg->api->host.sup->base;
	m->phase = MP_NEW;
	m->level = MCP_LEVEL_NONE;
	TAILQ_INIT(&m->calls);
	m->agents = json_array();
	if (cfg->bus != NULL)
		m->obs = bus_observe(cfg->bus, mcp_event, m);
	return m;
}

/*
 * The session goes: calls still pending are abandoned (no reply sent),
 * and the agents it spawned are closed: their ids died with the session
 * (serve's DELETE, a stdio client's EOF), so nobody could close them.
 * An agent that already ended just answers the close with an error.
 */
void
mcp_free(struct mcp *m)
{
	struct mcp_call	*c;
	size_t		 i;

	if (m == NULL)
		return;
	if (m->obs != NULL)
		bus_unobserve(m->cfg.bus, m->obs);
	while ((c = TAILQ_FIRST(&m->calls)) != NULL)
		mcp_call_abandon(c);
	for (i = 0; i < json_array_size(m->agents); i++)
		mcp_close_orphan(m->cfg.api, json_string_value(
		    json_array_get(m->agents, i)));
	json_decref(m->agents);
	free(m);
}

int
mcp_idle(const struct mcp *m)
{
	return TAILQ_EMPTY(&m->calls);
}

int
mcp_ready(const struct mcp *m)
{
	return m->phase == MP_READY;
}

const char *
mcp_version(const struct mcp *m)
{
	return m->version;
}

/*
 * A sup's progress hook (sup.progress, progress_arg the bus): an agent's
 * PROGRESS as the worker_progress event a loop's workers publish, so
 * waits on agents the verbs spawned report it too.
 */
void
mcp_agent_progress(struct agent *a, void *bus)
{
	bus_publish(bus, "worker_progress", json_pack("{s:s, s:s?, s:s?, "
	    "s:s?}", "agent_id", a->id, "role", a->role, "tool", a->tool,
	    "text", a->last_progress));
}
