/*
 * ws.c: serve's /ws, the event bus as a WebSocket (RFC 6455): the
 * upgrade handshake's checks and answer, the clients (each one's
 * message assembler and last word heard), the events sse.c writes,
 * tapped and sent as text frames, pings, pongs and the close handshake.
 * The frames' bytes are wsframe.c's; the connection is http.c's.
 */
#include <config.h>

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/event.h>
#include <jansson.h>

#include "clock.h"
#include "http.h"
#include "sse.h"
#include "ws.h"
#include "wsframe.h"
#include "xmalloc.h"

struct ws_client {
	TAILQ_ENTRY(ws_client)	 entry;
	struct ws		*ws;
	struct http_req		*req;
	struct wsmsg		 msg;
	uint64_t		 heard_ms;	/* its last frame (monotonic) */
	int			 behind;	/* a write failed: closing */
};
TAILQ_HEAD(ws_clients, ws_client);

struct ws {
	struct event_base	*base;
	struct sse		*sse;
	struct ws_clients	 clients;
	struct event		*ping_ev;
	uint64_t		 ping_ms;
	size_t			 msg_max;
	struct ws_stats		 st;
};

/* Arms the ping timer a ping interval from now. */
static void
ws_arm(struct ws *w)
{
	struct timeval	tv;

	tv.tv_sec = (time_t)(w->ping_ms / 1000);
	tv.tv_usec = (suseconds_t)(w->ping_ms % 1000 * 1000);
	evtimer_add(w->ping_ev, &tv);
}

/*
 * A whole frame's bytes to one client in one write (so that a client
 * over its bound loses whole frames only).  0, or -1 when it has fallen
 * behind: http.c closes it and its on_close follows.
 */
static int
ws_write(struct ws_client *cl, const void *frame, size_t n)
{
	if (cl->behind)
		return -1;
	if (http_stream_write(cl->req, frame, n) != 0) {
		cl->behind = 1;
		cl->ws->st.dropped++;
		return -1;
	}
	return 0;
}

/* A frame of the n bytes at p: header and payload in one buffer. */
static uint8_t *
ws_frame(int opcode, const void *p, size_t n, size_t *len)
{
	uint8_t	 hdr[WSFRAME_HDR_MAX], *buf;
	size_t	 h = wsframe_header(hdr, opcode, n);

	buf = xmalloc(h + n);
	memcpy(buf, hdr, h);
	if (n > 0)
		memcpy(buf + h, p, n);
	*len = h + n;
	return buf;
}

/* One frame to one client: ws_write's answer. */
static int
ws_send(struct ws_client *cl, int opcode, const void *p, size_t n)
{
	uint8_t	*buf;
	size_t	 len;
	int	 rc;

	buf = ws_frame(opcode, p, n, &len);
	rc = ws_write(cl, buf, len);
	free(buf);
	return rc;
}

/* Forgets a client; the last one also stops the tap on sse's events. */
static void
ws_forget(struct ws_client *cl)
{
	struct ws	*w = cl->ws;

	TAILQ_REMOVE(&w->clients, cl, entry);
	w->st.clients--;
	wsmsg_clear(&cl->msg);
	free(cl);
	if (w->st.clients == 0) {
		sse_tap(w->sse, NULL, NULL);
		evtimer_del(w->ping_ev);
	}
}

/* The client left, or http.c closed it (fallen behind). */
static void
ws_gone(struct http_req *r, void *arg)
{
	(void)r;
	ws_forget(arg);
}

/*
 * Our side of the close handshake: a close frame with code, then the
 * connection flushed and closed by http.c (what the client still sends
 * is read and dropped).  The client is forgotten now.
 */
static void
ws_close(struct ws_client *cl, int code)
{
	struct http_req	*r = cl->req;
	uint8_t		 p[2] = { (uint8_t)(code >> 8), (uint8_t)code };

	(void)ws_send(cl, WS_OP_CLOSE, p, sizeof p);
	http_req_on_close(r, NULL, NULL);
	ws_forget(cl);
	http_stream_end(r);
}

/* A protocol error: closed with its code (1002, 1007, 1009). */
static void
ws_fail(struct ws_client *cl, int code)
{
	cl->ws->st.failed++;
	ws_close(cl, code);
}

/*
 * One whole control frame (payload p, n <= 125 bytes, masked): a ping
 * gets its pong with the same payload, a close the close handshake's
 * answer (its code echoed; a close that breaks the rules: 1002/1007), a
 * pong only shows the client alive.  0, or -1 once the client is gone.
 */
static int
ws_control(struct ws_client *cl, const struct wsframe *f, const uint8_t *p)
{
	uint8_t	pl[WSFRAME_CONTROL_MAX];
	int	code;

	memcpy(pl, p, f->len);
	wsframe_unmask(pl, f->len, f->mask);
	switch (f->opcode) {
	case WS_OP_PING:
		(void)ws_send(cl, WS_OP_PONG, pl, f->len);
		return 0;
	case WS_OP_CLOSE:
		if (wsframe_close_code(pl, f->len, &code) != 0)
			ws_fail(cl, code);
		else
			ws_close(cl, code);
		return -1;
	default:
		return 0;
	}
}

/*
 * The client's bytes: whole frames taken one by one; the rest (part of
 * a frame) left for the next read.  A data message is read and dropped:
 * /ws only sends.  Returns the bytes used (all once the client is gone).
 */
static size_t
ws_data(struct http_req *r, const void *data, size_t len, void *arg)
{
	struct ws_client	*cl = arg;
	const uint8_t		*p = data;
	struct wsframe		 f;
	size_t			 used = 0;
	int			 code;

	(void)r;
	while (used < len) {
		switch (wsframe_parse(p + used, len - used, cl->ws->msg_max, &f,
		    &code)) {
		case WSF_MORE:
			return used;
		case WSF_BAD:
			ws_fail(cl, code);
			return len;
		case WSF_OK:
			break;
		}
		cl->heard_ms = clock_mono_ms();
		if (f.opcode >= WS_OP_CLOSE) {
			if (ws_control(cl, &f, p + used + f.hlen) != 0)
				return len;
		} else {
			switch (wsmsg_add(&cl->msg, &f, p + used + f.hlen,
			    &code)) {
			case WSM_BAD:
				ws_fail(cl, code);
				return len;
			case WSM_DONE:
				wsmsg_reset(&cl->msg);
				break;
			case WSM_MORE:
				break;
			}
		}
		used += f.hlen + f.len;
	}
	return used;
}

/* An event sse.c wrote: the same JSON as a text frame to every client. */
static void
ws_tap(void *arg, uint64_t seq, const char *type, const json_t *fields)
{
	struct ws		*w = arg;
	struct ws_client	*cl;
	char			*json;
	uint8_t			*frame;
	size_t			 len;

	(void)seq;
	if ((json = sse_json(type, fields)) == NULL)
		return;
	frame = ws_frame(WS_OP_TEXT, json, strlen(json), &len);
	TAILQ_FOREACH(cl, &w->clients, entry)
		if (ws_write(cl, frame, len) == 0)
			w->st.sent++;
	free(frame);
	free(json);
}

/*
 * Each ping interval: a client silent for two of them (no pong, no
 * frame at all) is dropped; every other one is pinged.
 */
static void
ws_ping_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ws		*w = arg;
	struct ws_client	*cl, *next;
	uint64_t		 now = clock_mono_ms();

	(void)fd;
	(void)what;
	for (cl = TAILQ_FIRST(&w->clients); cl != NULL; cl = next) {
		next = TAILQ_NEXT(cl, entry);
		if (now - cl->heard_ms >= 2 * w->ping_ms) {
			w->st.dropped++;
			ws_close(cl, WS_CLOSE_GOING_AWAY);
		} else
			(void)ws_send(cl, WS_OP_PING, NULL, 0);
	}
	if (!TAILQ_EMPTY(&w->clients))
		ws_arm(w);
}

/*
 * /ws on base for sse's events; ping_ms and msg_max (a client message's
 * most bytes): 0 for the defaults.
 */
struct ws *
ws_new(struct event_base *base, struct sse *sse, uint64_t ping_ms,
    size_t msg_max)
{
	struct ws	*w = xcalloc(1, sizeof *w);

	w->base = base;
	w->sse = sse;
	w->ping_ms = ping_ms != 0 ? ping_ms : WS_PING_MS;
	w->msg_max = msg_max != 0 ? msg_max : WS_MSG_MAX;
	TAILQ_INIT(&w->clients);
	w->ping_ev = evtimer_new(base, ws_ping_cb, w);
	return w;
}

/* Every client told "going away" (1001) and closed; before sse_free. */
void
ws_free(struct ws *w)
{
	if (w == NULL)
		return;
	while (!TAILQ_EMPTY(&w->clients))
		ws_close(TAILQ_FIRST(&w->clients), WS_CLOSE_GOING_AWAY);
	sse_tap(w->sse, NULL, NULL);
	event_free(w->ping_ev);
	free(w);
}

/* Does any field called name list tok (comma-separated, any case)? */
static int
ws_field_has(const struct http_head *h, const char *name, const char *tok)
{
	const char	*v, *e;
	size_t		 i, n, tl = strlen(tok);

	for (i = 0; i < h->nfields; i++) {
		if (strcmp(h->fields[i].name, name) != 0)
			continue;
		for (v = h->fields[i].value; *v != '\0'; v = *e ? e + 1 : e) {
			v += strspn(v, " \t");
			e = v + strcspn(v, ",");
			n = (size_t)(e - v);
			while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
				n--;
			if (n == tl && strncasecmp(v, tok, tl) == 0)
				return 1;
		}
	}
	return 0;
}

/* A refused handshake: CCW's error shape, with fields telling what to send. */
static void
ws_refuse(struct ws *w, struct http_req *r, int code, const char *extra,
    const char *why)
{
	json_t	*j = json_pack("{s:b,s:s}", "success", 0, "error", why);
	char	*d = json_dumps(j, JSON_COMPACT), *b;

	w->st.refused++;
	xasprintf(&b, "%s\n", d);
	http_reply(r, code, "application/json", extra, b, strlen(b));
	free(b);
	free(d);
	json_decref(j);
}

/*
 * GET /ws (Host, Origin and the token already checked by serve): the
 * handshake of section 4.2.  Not an upgrade to a WebSocket: 426 naming
 * it; another version than 13: 426 naming 13; no valid key: 400.
 * Otherwise 101 and the client gets the events from now on.
 */
void
ws_attach(struct ws *w, struct http_req *r)
{
	const struct http_head	*h = http_req_head(r);
	const char		*key = http_head_field(h, "sec-websocket-key");
	const char		*ver = http_head_field(h, "sec-websocket-version");
	struct ws_client	*cl;
	char			 acc[WSFRAME_ACCEPT_LEN + 1], *extra;

	if (!ws_field_has(h, "upgrade", "websocket") ||
	    !ws_field_has(h, "connection", "upgrade") || h->minor < 1) {
		ws_refuse(w, r, 426, "Upgrade: websocket\r\nConnection: "
		    "Upgrade\r\n", "a WebSocket: GET with Upgrade: websocket");
		return;
	}
	if (ver == NULL || strcmp(ver, "13") != 0) {
		ws_refuse(w, r, 426, "Sec-WebSocket-Version: 13\r\n",
		    "Sec-WebSocket-Version: 13 only");
		return;
	}
	if (key == NULL || wsframe_accept(key, acc) != 0) {
		ws_refuse(w, r, 400, NULL, "Sec-WebSocket-Key: not 16 bytes "
		    "in base64");
		return;
	}
	cl = xcalloc(1, sizeof *cl);
	cl->ws = w;
	cl->req = r;
	cl->heard_ms = clock_mono_ms();
	wsmsg_init(&cl->msg, w->msg_max);
	xasprintf(&extra, "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Accept: %s\r\n", acc);
	if (http_upgrade(r, extra, ws_data, cl) != 0) {
		free(extra);
		wsmsg_clear(&cl->msg);
		free(cl);
		ws_refuse(w, r, 400, NULL, "cannot upgrade this request");
		return;
	}
	free(extra);
	http_req_on_close(r, ws_gone, cl);
	if (TAILQ_EMPTY(&w->clients)) {
		sse_tap(w->sse, ws_tap, w);
		ws_arm(w);
	}
	TAILQ_INSERT_TAIL(&w->clients, cl, entry);
	w->st.clients++;
	w->st.opened++;
}

/* A copy of the counters (/metrics, tests). */
void
ws_stats(const struct ws *w, struct ws_stats *st)
{
	*st = w->st;
}
