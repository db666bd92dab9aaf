/*
 * serve.c: serve's HTTP front end: the route table (path patterns with
 * ":id" captures, what each row asks), servehost.c's guard first, the
 * token (Bearer or its cookie), /health, /api/auth/token, /api/events,
 * /ws, /api/agents through the verb table, requests waiting for a reply.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "api.h"
#include "bus.h"
#include "committer.h"
#include "host.h"
#include "jsonrpc.h"
#include "serveint.h"
#include "sse.h"
#include "sup.h"
#include "ws.h"
#include "xmalloc.h"

/*
 * What a route asks of a request.  0 (every row unless it says
 * otherwise): Host and Origin (servehost.c), then the token.
 */
#define SERVE_OPEN	0x1	/* nothing: it holds no data (/health) */
#define SERVE_NOTOKEN	0x2	/* Host and Origin, no token */
#define SERVE_RPC	0x4	/* refusals as JSON-RPC errors (/mcp) */

/* One route: a request matching it runs fn with the row's op. */
struct serve_route {
	enum http_method	 method;
	const char		*pattern;
	serve_route_fn		 fn;
	unsigned		 flags;		/* SERVE_OPEN... */
	enum serve_op		 op;		/* SOP_NONE: fn serves one route */
};

/* The 401's challenge: without it MCP clients fall back to OAuth. */
#define SERVE_CHALLENGE	"WWW-Authenticate: Bearer realm=\"ccw-supervisor\"\r\n"
#define SERVE_COOKIE	"ccw_token"

static void	serve_health(struct serve *, struct http_req *,
		    const struct serve_match *);
static void	serve_token(struct serve *, struct http_req *,
		    const struct serve_match *);
static void	serve_events(struct serve *, struct http_req *,
		    const struct serve_match *);
static void	serve_agents(struct serve *, struct http_req *,
		    const struct serve_match *);
static void	serve_ws(struct serve *, struct http_req *,
		    const struct serve_match *);

/* Every route; a path matching none is 404, a method not listed 405. */
static const struct serve_route serve_routes[] = {
	{ HTTP_GET, "/", serve_page, SERVE_NOTOKEN, SOP_NONE },
	{ HTTP_GET, "/health", serve_health, SERVE_OPEN, SOP_NONE },
	{ HTTP_GET, "/metrics", serve_metrics, SERVE_NOTOKEN, SOP_NONE },
	{ HTTP_GET, "/api/auth/token", serve_token, SERVE_NOTOKEN, SOP_NONE },
	{ HTTP_GET, "/api/events", serve_events, 0, SOP_NONE },
	{ HTTP_GET, "/ws", serve_ws, 0, SOP_NONE },
	{ HTTP_GET, "/api/agents", serve_agents, 0, SOP_LIST },
	{ HTTP_POST, "/api/agents", serve_agents, 0, SOP_SPAWN },
	{ HTTP_POST, "/api/agents/wait", serve_agents, 0, SOP_WAIT },
	{ HTTP_GET, "/api/agents/:id", serve_agents, 0, SOP_RESULT },
	{ HTTP_DELETE, "/api/agents/:id", serve_agents, 0, SOP_CLOSE },
	{ HTTP_POST, "/api/agents/:id/input", serve_agents, 0, SOP_INPUT },
	{ HTTP_POST, "/api/agents/:id/close", serve_agents, 0, SOP_CLOSE },
	{ HTTP_GET, "/api/loops/v2", serve_loops_list, 0, SOP_NONE },
	{ HTTP_POST, "/api/loops/v2", serve_loops_create, 0, SOP_NONE },
	/* first: "tasks/start" is a task id, not the loop "tasks" */
	{ HTTP_GET, "/api/loops/v2/tasks/:taskId", serve_tasks_get, 0,
	  SOP_NONE },
	{ HTTP_PUT, "/api/loops/v2/tasks/:taskId", serve_tasks_update, 0,
	  SOP_NONE },
	{ HTTP_DELETE, "/api/loops/v2/tasks/:taskId", serve_tasks_delete, 0,
	  SOP_NONE },
	{ HTTP_GET, "/api/loops/v2/:id", serve_loops_get, 0, SOP_NONE },
	{ HTTP_PUT, "/api/loops/v2/:id", serve_loops_update, 0, SOP_NONE },
	{ HTTP_DELETE, "/api/loops/v2/:id", serve_loops_delete, 0, SOP_NONE },
	{ HTTP_PATCH, "/api/loops/v2/:id/status", serve_loops_status, 0,
	  SOP_NONE },
	{ HTTP_GET, "/api/loops/v2/:id/tasks", serve_tasks_list, 0, SOP_NONE },
	{ HTTP_POST, "/api/loops/v2/:id/tasks", serve_tasks_add, 0, SOP_NONE },
	{ HTTP_PUT, "/api/loops/v2/:id/tasks/reorder", serve_tasks_reorder, 0,
	  SOP_NONE },
	{ HTTP_POST, "/api/loops/v2/:id/start", serve_loops_action, 0,
	  SOP_START },
	{ HTTP_POST, "/api/loops/v2/:id/pause", serve_loops_action, 0,
	  SOP_PAUSE },
	{ HTTP_POST, "/api/loops/v2/:id/resume", serve_loops_action, 0,
	  SOP_RESUME },
	{ HTTP_POST, "/api/loops/v2/:id/stop", serve_loops_action, 0,
	  SOP_STOP },
	{ HTTP_GET, "/loops/:id/replay", serve_replay, 0, SOP_NONE },
	{ HTTP_GET, "/api/loops/v2/:id/workers", serve_loop_workers, 0,
	  SOP_NONE },
	{ HTTP_GET, "/api/loops/v2/:id/logs/:agent", serve_loop_log, 0,
	  SOP_NONE },
	{ HTTP_GET, "/loops/:id", serve_page_loop, SERVE_NOTOKEN, SOP_NONE },
	{ HTTP_GET, "/api/questions", serve_questions_list, 0, SOP_NONE },
	{ HTTP_POST, "/api/questions/:id/answer", serve_questions_answer, 0,
	  SOP_NONE },
	{ HTTP_POST, "/mcp", serve_mcp, SERVE_RPC, SOP_NONE },
	{ HTTP_GET, "/mcp", serve_mcp, SERVE_RPC, SOP_NONE },
	{ HTTP_DELETE, "/mcp", serve_mcp, SERVE_RPC, SOP_NONE },
	/* CCW's dashboard SPA (serveccw.c): its workspace, CSRF, v1 loops */
	{ HTTP_GET, "/api/switch-path", serveccw_switch_path, 0, SOP_NONE },
	{ HTTP_GET, "/api/csrf-token", serveccw_csrf_token, 0, SOP_NONE },
	{ HTTP_GET, "/api/loops", serveccw_loops_list, 0, SOP_NONE },
	{ HTTP_POST, "/api/loops", serveccw_loops_create, 0, SOP_NONE },
	{ HTTP_POST, "/api/loops/:id/pause", serveccw_loops_action, 0,
	  SOP_PAUSE },
	{ HTTP_POST, "/api/loops/:id/resume", serveccw_loops_action, 0,
	  SOP_RESUME },
	{ HTTP_POST, "/api/loops/:id/stop", serveccw_loops_action, 0,
	  SOP_STOP },
};
#define SERVE_NROUTES	(sizeof serve_routes / sizeof serve_routes[0])

/*
 * Does PATH fit PATTERN segment by segment?  A ":name" segment takes
 * any non-empty segment (copied into m->buf); 1 or 0.
 */
static int
serve_match_path(const char *pattern, const char *path,
    struct serve_match *m)
{
	const char	*p = pattern, *q = path, *pe, *qe;
	size_t		 used = 0, n;
	int		 ncap = 0;

	memset(m->cap, 0, sizeof m->cap);
	while (*p == '/' && *q == '/') {
		p++;
		q++;
		pe = p + strcspn(p, "/");
		qe = q + strcspn(q, "/");
		if (*p == ':') {
			n = (size_t)(qe - q);
			if (n == 0 || ncap >= SERVE_CAPTURES ||
			    used + n + 1 > sizeof m->buf)
				return 0;
			memcpy(m->buf + used, q, n);
			m->buf[used + n] = '\0';
			m->cap[ncap++] = m->buf + used;
			used += n + 1;
		} else if (pe - p != qe - q || memcmp(p, q, (size_t)(pe - p)))
			return 0;
		p = pe;
		q = qe;
	}
	return *p == '\0' && *q == '\0';
}

/* A loopback peer (IPv4 127/8, ::1, or IPv4 mapped). */
static int
serve_peer_loopback(const char *peer)
{
	return strncmp(peer, "127.", 4) == 0 || strcmp(peer, "::1") == 0 ||
	    strncmp(peer, "::ffff:127.", 11) == 0;
}

/* Is v (n bytes) the token?  Compared without an early exit. */
static int
serve_token_is(const struct serve *s, const char *v, size_t n)
{
	const char	*t = s->cfg.token;
	size_t		 i;
	unsigned	 diff = 0;

	if (n != strlen(t))
		return 0;
	for (i = 0; i < n; i++)
		diff |= (unsigned)(v[i] ^ t[i]);
	return diff == 0;
}

/* One ccw_token cookie's value: is it the token (arg: the server)? */
static int
serve_cookie_is(const char *v, size_t n, void *arg)
{
	const struct serve *const	*s = arg;

	return serve_token_is(*s, v, n);
}

/*
 * Does a Cookie field carry the token (ccw_token=...)?  Only from our
 * own pages: a request another site made (Sec-Fetch-Site: same-site,
 * cross-site) is not authorized by it, even where the browser sent it
 * (SameSite counts another port of this host as the same site).
 */
static int
serve_cookie_ok(const struct serve *s, const struct http_head *h)
{
	const char	*site = http_head_field(h, "sec-fetch-site");

	if (site != NULL && strcmp(site, "same-origin") != 0 &&
	    strcmp(site, "none") != 0)
		return 0;
	return http_head_cookies(h, SERVE_COOKIE, serve_cookie_is, &s) != 0;
}

/* Authorization: Bearer TOKEN, or the token's cookie. */
static int
serve_authorized(const struct serve *s, struct http_req *r)
{
	const struct http_head	*h = http_req_head(r);
	const char		*v = http_head_field(h, "authorization");

	if (v != NULL && strncasecmp(v, "Bearer ", 7) == 0) {
		v += 7;
		while (*v == ' ')
			v++;
		if (serve_token_is(s, v, strlen(v)))
			return 1;
	}
	return serve_cookie_ok(s, h);
}

/*
 * A refusal before the route runs: CCW's error shape, or a JSON-RPC
 * error without an id on /mcp (what MCP clients read); extra: fields.
 */
static void
serve_refuse(struct http_req *r, const struct serve_route *rt, int code,
    const char *extra, const char *msg)
{
	json_t	*j;
	char	*b, *d;

	if (rt != NULL && (rt->flags & SERVE_RPC))
		j = jsonrpc_error_new(NULL, -32000, "%s", msg);
	else
		j = json_pack("{s:b,s:s}", "success", 0, "error", msg);
	d = json_dumps(j, JSON_COMPACT);
	xasprintf(&b, "%s\n", d);
	http_reply(r, code, "application/json", extra, b, strlen(b));
	free(b);
	free(d);
	json_decref(j);
}

/*
 * The one handler: the route, then what its row asks (Host and Origin
 * before anything else, even a 404 or 405: a foreign page learns
 * nothing; then the token), then the route's function.
 */
static void
serve_handle(struct http_req *r, void *arg)
{
	struct serve		*s = arg;
	const struct http_head	*h = http_req_head(r);
	const struct serve_route *rt, *hit = NULL;
	struct serve_match	 m, mm;
	char			 allow[128] = "", extra[160];
	const char		*why;
	size_t			 i;
	int			 found = 0, guarded = 0, code;

	for (i = 0; i < SERVE_NROUTES; i++) {
		rt = &serve_routes[i];
		if (!serve_match_path(rt->pattern, h->path, &mm))
			continue;
		found = 1;
		guarded |= !(rt->flags & SERVE_OPEN);
		if (rt->method == h->method || (h->method == HTTP_HEAD &&
		    rt->method == HTTP_GET)) {
			hit = rt;
			m = mm;
			m.op = rt->op;
			break;
		}
		if (strstr(allow, http_method_name(rt->method)) == NULL)
			snprintf(allow + strlen(allow), sizeof allow -
			    strlen(allow), "%s%s", *allow ? ", " : "",
			    http_method_name(rt->method));
	}
	/* open: the row hit says so; no row hit (405), every row matched */
	if ((hit != NULL ? !(hit->flags & SERVE_OPEN) : !found || guarded) &&
	    (why = servehost_refused(s, h, &code)) != NULL) {
		serve_refuse(r, hit, code, NULL, why);
		return;
	}
	if (hit == NULL && found) {
		snprintf(extra, sizeof extra, "Allow: %s\r\n", allow);
		serve_refuse(r, NULL, 405, extra, "Method not allowed");
		return;
	}
	if (hit == NULL) {
		http_reply_error(r, 404, "no route for %s", h->path);
		return;
	}
	if (!(hit->flags & (SERVE_OPEN | SERVE_NOTOKEN)) &&
	    !serve_authorized(s, r)) {
		serve_refuse(r, hit, 401, SERVE_CHALLENGE, "Unauthorized");
		return;
	}
	hit->fn(s, r, &m);
}

/* GET /health: alive, and what it hosts. */
static void
serve_health(struct serve *s, struct http_req *r, const struct serve_match *m)
{
	size_t	 n = serve_hosted(s);
	json_t	*j;

	(void)m;
	j = json_pack("{s:s,s:I,s:I}", "status", "ok", "loops_running",
	    (json_int_t)n, "roots", (json_int_t)s->cfg.nroots);
	http_reply_json(r, 200, j);
	json_decref(j);
}

/*
 * GET /api/auth/token: CCW's scheme, to loopback peers only, and only
 * past the guard (Host and Origin ours: never to a rebound page).  The
 * token also as an HttpOnly cookie, which authorizes the status page
 * (it fetches this again on a 401: a restarted serve has a new token);
 * a token a cookie cannot carry gets none.
 */
static void
serve_token(struct serve *s, struct http_req *r, const struct serve_match *m)
{
	const char	*t = s->cfg.token;
	char		*extra = NULL, *b;
	json_t		*j;

	(void)m;
	if (!serve_peer_loopback(http_req_peer(r))) {
		http_reply_error(r, 403, "the token is given to loopback "
		    "clients only");
		return;
	}
	if (t[strcspn(t, ";,\"\\ \t")] == '\0')
		xasprintf(&extra, "Set-Cookie: %s=%s; HttpOnly; "
		    "SameSite=Strict; Path=/\r\n",
		    SERVE_COOKIE, t);
	j = json_pack("{s:s}", "token", t);
	b = json_dumps(j, JSON_COMPACT);
	http_reply(r, 200, "application/json", extra, b, strlen(b));
	free(b);
	free(extra);
	json_decref(j);
}

/* GET /api/events: the bus as Server-Sent Events (sse.c). */
static void
serve_events(struct serve *s, struct http_req *r, const struct serve_match *m)
{
	(void)m;
	if (sse_attach(s->sse, r) != 0)
		http_reply_error(r, 400, "cannot stream this request");
}

/* GET /ws: the same events as a WebSocket (ws.c). */
static void
serve_ws(struct serve *s, struct http_req *r, const struct serve_match *m)
{
	(void)m;
	ws_attach(s->ws, r);
}

/*
 * An agent verb's reply: as the table gives it, without the request id;
 * its status the kind's (errcode.c), 200 for a success.
 */
static void
serve_agents_reply(struct serve_call *c, json_t *reply)
{
	json_t	*j = json_deep_copy(reply);

	json_object_del(j, "id");
	http_reply_json(c->r, err_code_http(api_reply_code(reply)), j);
	json_decref(j);
	serve_call_end(c);
}

/* The api verb of an /api/agents route's op (its row gives the op). */
static const char *
serve_agent_verb(enum serve_op op)
{
	switch (op) {
	case SOP_LIST:		return "list";
	case SOP_SPAWN:		return "spawn";
	case SOP_WAIT:		return "wait";
	case SOP_RESULT:	return "result";
	case SOP_INPUT:		return "send_input";
	case SOP_CLOSE:		return "close";
	default:		break;
	}
	return "list";
}

/*
 * /api/agents: the four verbs plus list and result, through the verb
 * table of the first root (its agent table).  GET list; POST spawn;
 * POST wait; GET :id result; POST :id/input send_input; POST :id/close
 * and DELETE :id close.
 */
static void
serve_agents(struct serve *s, struct http_req *r, const struct serve_match *m)
{
	const struct http_head	*h = http_req_head(r);
	json_t			*req;

	if (h->method == HTTP_GET || h->method == HTTP_HEAD ||
	    h->method == HTTP_DELETE)
		req = json_object();
	else if ((req = serve_body(r, 1)) == NULL)
		return;
	if (m->cap[0] != NULL)
		json_object_set_new(req, "target", json_string(m->cap[0]));
	json_object_set_new(req, "verb", json_string(serve_agent_verb(m->op)));
	serve_call_api(serve_call_new(s, r, &s->cfg.roots[0], NULL), req,
	    serve_agents_reply);
}

/* The server on base; nothing listens until serve_listen. */
struct serve *
serve_new(struct event_base *base, const struct serve_cfg *cfg, char **err)
{
	struct serve	*s;

	if (cfg->nroots == 0 || cfg->token == NULL || *cfg->token == '\0') {
		*err = xstrdup("serve needs a root and a token");
		return NULL;
	}
	s = xcalloc(1, sizeof *s);
	s->base = base;
	s->cfg = *cfg;
	TAILQ_INIT(&s->calls);
	if ((s->io = committer_new(base, err)) == NULL) {
		free(s);
		return NULL;
	}
	s->http = http_server_new(base, &cfg->limits, serve_handle, s);
	s->sse = sse_new(base, cfg->bus, 0, 0);
	s->ws = ws_new(base, s->sse, 0, 0);
	s->mcp = servemcp_new(s, SERVE_MCP_SESSIONS);
	s->ccw = serveccw_new();
	return s;
}

/* Listen on ADDR:PORT (port 0: any). */
int
serve_listen(struct serve *s, const char *addr, char **err)
{
	const char	*colon = strrchr(addr, ':');
	size_t		 n = colon != NULL ? (size_t)(colon - addr) : 0;

	/* the host part: a name it answers to (servehost.c) */
	if (n < sizeof s->listen_host) {
		memcpy(s->listen_host, addr, n);
		s->listen_host[n] = '\0';
	}
	return http_server_listen(s->http, addr, err);
}

/* The port it listens on. */
int
serve_port(const struct serve *s)
{
	return http_server_port(s->http);
}

/* Does it listen on loopback only? */
int
serve_loopback(const struct serve *s)
{
	return http_server_loopback(s->http);
}

/* Everything: streams and connections closed, calls dropped. */
void
serve_free(struct serve *s)
{
	struct serve_call	*c;

	if (s == NULL)
		return;
	s->freeing = 1;
	servemcp_free(s->mcp);
	committer_free(s->io);
	ws_free(s->ws);
	sse_free(s->sse);
	http_server_free(s->http);
	while ((c = TAILQ_FIRST(&s->calls)) != NULL) {
		c->r = NULL;
		serve_call_end(c);
	}
	serveccw_free(s->ccw);
	free(s);
}
