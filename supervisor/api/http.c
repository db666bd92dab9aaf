/*
 * http.c: serve's HTTP/1.1 server: the listener (paused while accept
 * fails: lpause.c), the connections and their phases, the limits (head,
 * body, per-request deadline, idle deadline, connection cap, unsent
 * stream bytes) and the replies.  Requests go to one handler; routing is
 * the caller's.
 */
#include <config.h>

#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "http.h"
#include "lpause.h"
#include "xmalloc.h"

#define HTTP_LINGER_MS	2000	/* reading what a refused client still sends */

/*
 * A connection's phase.  IDLE: between requests (the idle deadline);
 * HEAD and BODY: reading a request (its absolute deadline); BUSY: the
 * handler holds the request; STREAM: a reply of unknown length is being
 * written; CLOSING: the last reply is flushed, then the write side shut
 * and the rest read and dropped until EOF or the linger deadline.
 */
enum http_phase {
	HTTP_IDLE,
	HTTP_READ_HEAD,
	HTTP_READ_BODY,
	HTTP_BUSY,
	HTTP_STREAM,
	HTTP_CLOSING
};

struct http_conn;

struct http_req {
	struct http_conn	*conn;
	struct http_head	 head;
	char			*body;
	size_t			 body_len;
	http_close_fn		 on_close;
	void			*on_close_arg;
	http_shape_fn		 shape;		/* its JSON reply reshaped */
	void			*shape_arg;
	http_data_fn		 on_data;	/* an upgraded stream's input */
	void			*on_data_arg;
};

struct http_conn {
	TAILQ_ENTRY(http_conn)	 entry;
	struct http_server	*srv;
	struct bufferevent	*bev;
	struct event		*timer;
	enum http_phase		 phase;
	struct http_req		*req;		/* HEAD..STREAM */
	int			 keep_alive;	/* after the current reply */
	int			 shut;		/* write side shut (CLOSING) */
	int			 peer_eof;	/* the client sends no more */
	char			 peer[64];
};
TAILQ_HEAD(http_conns, http_conn);

struct http_server {
	struct event_base	*base;
	struct http_limits	 lim;
	http_handler_fn		 handler;
	void			*arg;
	struct evconnlistener	*listener;
	struct lpause		*pause;		/* accept's back-off */
	struct http_conns	 conns;
	struct http_stats	 stats;
	int			 port;
	int			 loopback;
};

static void	http_conn_free(struct http_conn *);
static void	http_conn_read_cb(struct bufferevent *, void *);

static const struct {
	int		 code;
	const char	*text;
} http_texts[] = {
	{ 101, "Switching Protocols" }, { 200, "OK" }, { 201, "Created" }, { 202, "Accepted" },
	{ 204, "No Content" }, { 400, "Bad Request" },
	{ 401, "Unauthorized" }, { 403, "Forbidden" }, { 404, "Not Found" },
	{ 405, "Method Not Allowed" }, { 408, "Request Timeout" },
	{ 409, "Conflict" }, { 411, "Length Required" },
	{ 413, "Content Too Large" }, { 415, "Unsupported Media Type" },
	{ 421, "Misdirected Request" },
	{ 422, "Unprocessable Content" }, { 426, "Upgrade Required" },
	{ 429, "Too Many Requests" },
	{ 431, "Request Header Fields Too Large" },
	{ 500, "Internal Server Error" }, { 501, "Not Implemented" },
	{ 503, "Service Unavailable" }, { 505, "HTTP Version Not Supported" },
};

/* The reason phrase of a status code. */
const char *
http_status_text(int code)
{
	size_t	i;

	for (i = 0; i < sizeof http_texts / sizeof http_texts[0]; i++)
		if (http_texts[i].code == code)
			return http_texts[i].text;
	return "Unknown";
}

/* Arms the connection's one timer for ms from now (0: disarm). */
static void
http_conn_arm(struct http_conn *c, uint64_t ms)
{
	struct timeval	tv;

	if (ms == 0) {
		evtimer_del(c->timer);
		return;
	}
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000 * 1000);
	evtimer_add(c->timer, &tv);
}

/* Frees a request; the client is told nothing. */
static void
http_req_free(struct http_req *r)
{
	http_head_clear(&r->head);
	free(r->body);
	free(r);
}

/* The last reply is queued: flush it, then shut and drain (see phases). */
static void
http_conn_closing(struct http_conn *c)
{
	c->phase = HTTP_CLOSING;
	c->keep_alive = 0;
	if (!c->peer_eof)
		bufferevent_enable(c->bev, EV_READ);
	http_conn_arm(c, HTTP_LINGER_MS);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0 &&
	    !c->shut) {
		shutdown(bufferevent_getfd(c->bev), SHUT_WR);
		c->shut = 1;
	}
}

/*
 * Writes a status line and the common fields; len (UINT64_MAX: none, the
 * body runs to the close) and the connection's fate come from c.
 */
static void
http_conn_status(struct http_conn *c, int code, const char *ctype,
    const char *extra, uint64_t len)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);

	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n", code,
	    http_status_text(code));
	if (ctype != NULL)
		evbuffer_add_printf(out, "Content-Type: %s\r\n", ctype);
	if (len != UINT64_MAX)
		evbuffer_add_printf(out, "Content-Length: %llu\r\n",
		    (unsigned long long)len);
	evbuffer_add_printf(out, "Cache-Control: no-store\r\n"
	    "X-Content-Type-Options: nosniff\r\nConnection: %s\r\n%s\r\n",
	    c->keep_alive ? "keep-alive" : "close", extra != NULL ? extra : "");
	if (code >= 100 && code < 600)
		c->srv->stats.by_class[code / 100]++;
}

/* The server's own refusals: a JSON error, and the connection closes. */
static void
http_conn_refuse(struct http_conn *c, int code, const char *why)
{
	json_t	*j = json_pack("{s:b,s:s}", "success", 0, "error", why);
	char	*s = json_dumps(j, JSON_COMPACT);

	c->keep_alive = 0;
	http_conn_status(c, code, "application/json", NULL, strlen(s));
	evbuffer_add(bufferevent_get_output(c->bev), s, strlen(s));
	free(s);
	json_decref(j);
	if (c->req != NULL) {
		http_req_free(c->req);
		c->req = NULL;
	}
	http_conn_closing(c);
}

/* A complete request: to the handler, reading paused until the reply. */
static void
http_conn_dispatch(struct http_conn *c)
{
	c->phase = HTTP_BUSY;
	http_conn_arm(c, 0);
	bufferevent_disable(c->bev, EV_READ);
	c->srv->stats.requests++;
	c->srv->handler(c->req, c->srv->arg);
}

/* Reads the body of the current request once it is all there. */
static void
http_conn_body(struct http_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);
	struct http_req	*r = c->req;
	size_t		 want = (size_t)r->head.content_length;

	if (evbuffer_get_length(in) < want)
		return;
	r->body = xmalloc(want + 1);
	evbuffer_remove(in, r->body, want);
	r->body[want] = '\0';
	r->body_len = want;
	http_conn_dispatch(c);
}

/* Parses a head out of the input; on success on to the body. */
static void
http_conn_head(struct http_conn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->bev);
	struct http_head	 h;
	size_t			 len = evbuffer_get_length(in), used = 0, n;
	const char		*why = NULL, *buf;
	int			 code = 0;

	if (len == 0)
		return;
	if (c->phase == HTTP_IDLE) {
		c->phase = HTTP_READ_HEAD;
		http_conn_arm(c, c->srv->lim.request_ms);
	}
	n = len < c->srv->lim.head_max + 1 ? len : c->srv->lim.head_max + 1;
	buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)n);
	switch (http_head_parse(buf, n, c->srv->lim.head_max, &h, &used,
	    &code, &why)) {
	case HTTP_HEAD_MORE:
		return;
	case HTTP_HEAD_BAD:
		http_conn_refuse(c, code, why);
		return;
	case HTTP_HEAD_DONE:
		break;
	}
	evbuffer_drain(in, used);
	c->req = xcalloc(1, sizeof *c->req);
	c->req->conn = c;
	c->req->head = h;
	c->keep_alive = h.keep_alive;
	if (h.content_length > c->srv->lim.body_max) {
		http_conn_refuse(c, 413, "request body too large");
		return;
	}
	c->phase = HTTP_READ_BODY;
	http_conn_body(c);
}

/*
 * An upgraded stream's input, to its reader: as many bytes as it takes
 * are dropped (it keeps an incomplete frame for the next read; it bounds
 * its own frames).  A reader that ended the stream has the rest dropped.
 */
static void
http_conn_data(struct http_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);
	struct http_req	*r = c->req;
	size_t		 len = evbuffer_get_length(in), used;
	const void	*buf;

	if (len == 0)
		return;
	buf = evbuffer_pullup(in, (ev_ssize_t)len);
	used = r->on_data(r, buf, len, r->on_data_arg);
	if (c->phase != HTTP_STREAM || used > len)
		used = len;
	evbuffer_drain(in, used);
}

/* Input: a request's head or body, or what a closing client still sends. */
static void
http_conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct http_conn	*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);

	switch (c->phase) {
	case HTTP_IDLE:
	case HTTP_READ_HEAD:
		http_conn_head(c);
		break;
	case HTTP_READ_BODY:
		http_conn_body(c);
		break;
	case HTTP_STREAM:
		if (c->req != NULL && c->req->on_data != NULL) {
			http_conn_data(c);
			break;
		}
		/* FALLTHROUGH */
	case HTTP_CLOSING:
		/* nothing a client sends now means anything */
		evbuffer_drain(in, evbuffer_get_length(in));
		break;
	case HTTP_BUSY:
		break;		/* reading is off: kept for the next request */
	}
}

/*
 * Output drained: a closing connection shuts its write side, or is done
 * if the client has already shut its own.
 */
static void
http_conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct http_conn	*c = arg;

	if (c->phase != HTTP_CLOSING)
		return;
	if (c->peer_eof) {
		http_conn_free(c);
		return;
	}
	if (!c->shut) {
		shutdown(bufferevent_getfd(bev), SHUT_WR);
		c->shut = 1;
	}
}

/*
 * EOF or an error.  A client that half-closes after its request still
 * gets its reply (flushed before the close); one that leaves a stream or
 * errs is gone.
 */
static void
http_conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct http_conn	*c = arg;

	if ((what & BEV_EVENT_ERROR) || !(what & BEV_EVENT_EOF) ||
	    c->phase == HTTP_STREAM) {
		http_conn_free(c);
		return;
	}
	c->peer_eof = 1;
	c->keep_alive = 0;
	if (c->phase == HTTP_BUSY)
		return;
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		http_conn_free(c);
	else if (c->phase != HTTP_CLOSING)
		http_conn_closing(c);
}

/* The connection's deadline: idle, request, or linger. */
static void
http_conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;

	(void)fd;
	(void)what;
	switch (c->phase) {
	case HTTP_READ_HEAD:
	case HTTP_READ_BODY:
		http_conn_refuse(c, 408, "request not received in time");
		break;
	case HTTP_IDLE:
	case HTTP_CLOSING:
		http_conn_free(c);
		break;
	case HTTP_BUSY:
	case HTTP_STREAM:
		break;
	}
}

/* Tells the handler its client went away, frees everything of c. */
static void
http_conn_free(struct http_conn *c)
{
	struct http_server	*srv = c->srv;
	struct http_req		*r = c->req;

	TAILQ_REMOVE(&c->srv->conns, c, entry);
	c->srv->stats.open--;
	if (c->phase == HTTP_STREAM)
		c->srv->stats.streams--;
	c->req = NULL;
	if (r != NULL) {
		r->conn = NULL;
		if (r->on_close != NULL)
			r->on_close(r, r->on_close_arg);
		http_req_free(r);
	}
	event_free(c->timer);
	bufferevent_free(c->bev);
	free(c);
	lpause_wake(srv->pause);
}

/* Back to reading after a reply on a persistent connection. */
static void
http_conn_next(struct http_conn *c)
{
	http_req_free(c->req);
	c->req = NULL;
	if (!c->keep_alive) {
		http_conn_closing(c);
		return;
	}
	c->phase = HTTP_IDLE;
	http_conn_arm(c, c->srv->lim.idle_ms);
	bufferevent_enable(c->bev, EV_READ);
	/* a pipelined request may already be buffered */
	if (evbuffer_get_length(bufferevent_get_input(c->bev)) > 0)
		http_conn_read_cb(c->bev, c);
}

/* A new client; over the cap it is answered 503 and closed at once. */
static void
http_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	static const char	 body[] =
	    "{\"success\":false,\"error\":\"too many connections\"}\n";
	struct http_server	*srv = arg;
	struct http_conn	*c;
	char			 host[INET6_ADDRSTRLEN] = "?", busy[256];
	int			 n;

	(void)l;
	(void)salen;
	lpause_accepted(srv->pause);
	if (srv->stats.open >= srv->lim.conns_max) {
		/* one small write to a fresh socket: it fits its buffer */
		srv->stats.refused++;
		n = snprintf(busy, sizeof busy, "HTTP/1.1 503 Service "
		    "Unavailable\r\nContent-Type: application/json\r\n"
		    "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
		    sizeof body - 1, body);
		(void)!send(fd, busy, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
		close(fd);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->srv = srv;
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)sa)->sin_addr,
		    host, sizeof host);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6,
		    &((struct sockaddr_in6 *)(void *)sa)->sin6_addr, host,
		    sizeof host);
	snprintf(c->peer, sizeof c->peer, "%s", host);
	c->bev = bufferevent_socket_new(srv->base, fd, BEV_OPT_CLOSE_ON_FREE);
	c->timer = evtimer_new(srv->base, http_conn_timer_cb, c);
	bufferevent_setcb(c->bev, http_conn_read_cb, http_conn_write_cb,
	    http_conn_event_cb, c);
	c->phase = HTTP_IDLE;
	c->keep_alive = 1;
	TAILQ_INSERT_TAIL(&srv->conns, c, entry);
	srv->stats.accepted++;
	srv->stats.open++;
	http_conn_arm(c, srv->lim.idle_ms);
	bufferevent_enable(c->bev, EV_READ);
}

/* accept(2) failed (out of descriptors): paused, not spinning. */
static void
http_accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct http_server	*srv = arg;

	(void)l;
	lpause_failed(srv->pause, EVUTIL_SOCKET_ERROR());
}

/* A server on base; nothing listens until http_server_listen. */
struct http_server *
http_server_new(struct event_base *base, const struct http_limits *lim,
    http_handler_fn handler, void *arg)
{
	struct http_server	*srv = xcalloc(1, sizeof *srv);

	srv->base = base;
	srv->lim = *lim;
	srv->handler = handler;
	srv->arg = arg;
	TAILQ_INIT(&srv->conns);
	return srv;
}

/*
 * "ADDR:PORT" or "[ADDR6]:PORT" into ss; port 0 means any free one.  0, or
 * -1 and an error.  (evutil_parse_sockaddr_port refuses port 0.)
 */
static int
http_parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
    char **err)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;
	const char		*colon = strrchr(spec, ':');
	char			 host[INET6_ADDRSTRLEN + 2], *end;
	size_t			 hl;
	long			 port;

	memset(ss, 0, sizeof *ss);
	if (colon == NULL || colon[1] == '\0' ||
	    (hl = (size_t)(colon - spec)) == 0 || hl >= sizeof host)
		goto bad;
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || port < 0 || port > 65535)
		goto bad;
	memcpy(host, spec, hl);
	host[hl] = '\0';
	if (host[0] == '[' && host[hl - 1] == ']') {
		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &sin6->sin6_addr) != 1)
			goto bad;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*len = sizeof *sin6;
		return 0;
	}
	if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		goto bad;
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	*len = sizeof *sin;
	return 0;
bad:
	xasprintf(err, "%s: not ADDR:PORT (e.g. 127.0.0.1:3456 or "
	    "[::1]:3456)", spec);
	return -1;
}

/*
 * Listens on "ADDR:PORT" (port 0: any free one, see http_server_port).
 * 0, or -1 and an error for the caller.
 */
int
http_server_listen(struct http_server *srv, const char *spec, char **err)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t		 sl;

	if (http_parse_addr(spec, &ss, &sl, err) != 0)
		return -1;
	srv->listener = evconnlistener_new_bind(srv->base, http_accept_cb, srv,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
	    511, (struct sockaddr *)&ss, (int)sl);
	if (srv->listener == NULL) {
		xasprintf(err, "%s: cannot listen: %s", spec, strerror(errno));
		return -1;
	}
	/* with an error callback, libevent logs nothing itself */
	evconnlistener_set_error_cb(srv->listener, http_accept_error_cb);
	srv->pause = lpause_new(srv->base, srv->listener, "http");
	sl = sizeof ss;
	getsockname(evconnlistener_get_fd(srv->listener),
	    (struct sockaddr *)&ss, &sl);
	if (ss.ss_family == AF_INET6) {
		srv->port = ntohs(sin6->sin6_port);
		srv->loopback = IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr);
	} else {
		srv->port = ntohs(sin->sin_port);
		srv->loopback = (ntohl(sin->sin_addr.s_addr) >> 24) == 127;
	}
	return 0;
}

/* The port listened on (for port 0). */
int
http_server_port(const struct http_server *srv)
{
	return srv->port;
}

/* Whether only this machine can reach it. */
int
http_server_loopback(const struct http_server *srv)
{
	return srv->loopback;
}

/* A copy of the counters. */
void
http_server_stats(const struct http_server *srv, struct http_stats *st)
{
	*st = srv->stats;
}

/*
 * Closes the listener and every connection (their handlers told).  What
 * each is still owed (a WebSocket's close frame: "going away") is
 * written once if its socket takes it now; nothing waits for a client.
 */
void
http_server_free(struct http_server *srv)
{
	struct http_conn	*c;
	struct evbuffer		*out;

	if (srv == NULL)
		return;
	lpause_free(srv->pause);
	srv->pause = NULL;
	if (srv->listener != NULL)
		evconnlistener_free(srv->listener);
	while ((c = TAILQ_FIRST(&srv->conns)) != NULL) {
		/* the bufferevent keeps its output's start frozen */
		out = bufferevent_get_output(c->bev);
		evbuffer_unfreeze(out, 1);
		(void)evbuffer_write(out, bufferevent_getfd(c->bev));
		http_conn_free(c);
	}
	free(srv);
}

/* The parsed head of a request. */
const struct http_head *
http_req_head(const struct http_req *r)
{
	return &r->head;
}

/* The body (NUL-terminated for convenience; *len its length). */
const char *
http_req_body(const struct http_req *r, size_t *len)
{
	*len = r->body_len;
	return r->body != NULL ? r->body : "";
}

/* The client's address, for logs and the token route's loopback check. */
const char *
http_req_peer(const struct http_req *r)
{
	return r->conn != NULL ? r->conn->peer : "?";
}

/* Who to tell when the client goes away before the answer is complete. */
void
http_req_on_close(struct http_req *r, http_close_fn fn, void *arg)
{
	r->on_close = fn;
	r->on_close_arg = arg;
}

/*
 * The whole reply: status, type, extra fields (each "Name: v\r\n"), body.
 * The request is finished with; a HEAD request gets no body.
 */
void
http_reply(struct http_req *r, int code, const char *ctype, const char *extra,
    const void *body, size_t len)
{
	struct http_conn	*c = r->conn;

	http_conn_status(c, code, ctype, extra, len);
	if (r->head.method != HTTP_HEAD && len > 0)
		evbuffer_add(bufferevent_get_output(c->bev), body, len);
	bufferevent_enable(c->bev, EV_WRITE);
	http_conn_next(c);
}

/*
 * A handler answering in another front end's shapes (serveccw.c) has
 * the JSON reply of the handler it reuses go through fn first: fn
 * returns the body to send (a new reference, or NULL: j as it is) and
 * may add header lines (*extra, malloc'd).  Once, for the next reply.
 */
void
http_req_shape(struct http_req *r, http_shape_fn fn, void *arg)
{
	r->shape = fn;
	r->shape_arg = arg;
}

/* A JSON reply (j borrowed), with a trailing newline for curl users. */
void
http_reply_json(struct http_req *r, int code, const json_t *j)
{
	http_shape_fn	 fn = r->shape;
	json_t		*own = NULL;
	char		*s, *extra = NULL;
	size_t		 n;

	r->shape = NULL;
	if (fn != NULL && (own = fn(r, code, j, &extra, r->shape_arg)) != NULL)
		j = own;
	s = json_dumps(j, JSON_COMPACT);
	json_decref(own);
	if (s == NULL) {
		free(extra);
		http_reply_error(r, 500, "reply not encodable");
		return;
	}
	n = strlen(s);
	s = xreallocarray(s, n + 2, 1);
	s[n] = '\n';
	http_reply(r, code, "application/json", extra, s, n + 1);
	free(extra);
	free(s);
}

/* {"success": false, "error": "..."} with that status. */
void
http_reply_error(struct http_req *r, int code, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;
	json_t	*j;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	j = json_pack("{s:b,s:s}", "success", 0, "error", msg != NULL ? msg :
	    http_status_text(code));
	http_reply_json(r, code, j);
	json_decref(j);
	free(msg);
}

/*
 * Starts a reply of unknown length (text/event-stream): headers now, the
 * body with http_stream_write, the end by closing.  0, or -1 if the
 * request cannot stream (a HEAD request, a client already gone).
 */
int
http_stream_begin(struct http_req *r, const char *ctype)
{
	struct http_conn	*c = r->conn;

	if (c == NULL || r->head.method == HTTP_HEAD)
		return -1;
	c->keep_alive = 0;
	http_conn_status(c, 200, ctype, NULL, UINT64_MAX);
	c->phase = HTTP_STREAM;
	c->srv->stats.streams++;
	/* reading on: a client's EOF is how it leaves a stream */
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	return 0;
}

/*
 * Switches the connection to another protocol (a WebSocket): "101",
 * the extra fields (each "Name: v\r\n", Upgrade and Connection
 * included), then a stream both ways: what the client sends goes to
 * fn, what the caller sends with http_stream_write under the same
 * bound; it ends with http_stream_end or the client leaving (on_close).
 * 0, or -1 if the request cannot (a HEAD request, a client gone).
 */
int
http_upgrade(struct http_req *r, const char *extra, http_data_fn fn,
    void *arg)
{
	struct http_conn	*c = r->conn;

	if (c == NULL || r->head.method == HTTP_HEAD)
		return -1;
	c->keep_alive = 0;
	evbuffer_add_printf(bufferevent_get_output(c->bev),
	    "HTTP/1.1 101 %s\r\n%s\r\n", http_status_text(101), extra);
	c->srv->stats.by_class[1]++;
	c->phase = HTTP_STREAM;
	c->srv->stats.streams++;
	r->on_data = fn;
	r->on_data_arg = arg;
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	/* what came right behind the request is read on the next turn */
	if (evbuffer_get_length(bufferevent_get_input(c->bev)) > 0)
		bufferevent_trigger(c->bev, EV_READ, BEV_TRIG_IGNORE_WATERMARKS |
		    BEV_TRIG_DEFER_CALLBACKS);
	return 0;
}

/*
 * Queues stream bytes.  0, or -1 when the client has fallen stream_max
 * bytes behind: it is closed (its on_close runs after this returns).
 */
int
http_stream_write(struct http_req *r, const void *data, size_t len)
{
	struct http_conn	*c = r->conn;
	struct evbuffer		*out;

	if (c == NULL || c->phase != HTTP_STREAM)
		return -1;
	out = bufferevent_get_output(c->bev);
	if (evbuffer_get_length(out) + len > c->srv->lim.stream_max) {
		/* freed from the timer, not under the caller's feet */
		c->srv->stats.streams--;
		c->phase = HTTP_CLOSING;
		bufferevent_disable(c->bev, EV_READ | EV_WRITE);
		event_active(c->timer, EV_TIMEOUT, 0);
		return -1;
	}
	evbuffer_add(out, data, len);
	return 0;
}

/* Bytes written to a stream its client has not read yet (/metrics). */
size_t
http_stream_queued(const struct http_req *r)
{
	const struct http_conn	*c = r->conn;

	if (c == NULL || c->phase != HTTP_STREAM)
		return 0;
	return evbuffer_get_length(bufferevent_get_output(c->bev));
}

/* The stream is complete: flushed, then the connection closes. */
void
http_stream_end(struct http_req *r)
{
	struct http_conn	*c = r->conn;

	if (c == NULL)
		return;
	if (c->phase == HTTP_STREAM)
		c->srv->stats.streams--;
	http_req_free(c->req);
	c->req = NULL;
	http_conn_closing(c);
}
