/*
 * servemcp.c: serve's /mcp, MCP's Streamable HTTP transport (revision
 * 2025-06-18) over the session core (mcp.c): the sessions (created by
 * initialize, named by Mcp-Session-Id, ended by DELETE, expired when
 * idle, capped: the least recently used idle one evicted at the cap),
 * each POST waiting for its reply (JSON, or SSE when notifications come
 * first), the GET stream for what belongs to no request, and the
 * refusals (403, 404, 406, 409, 415, 400, 503) with JSON-RPC bodies.
 */
#include <config.h>

#include <sys/queue.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "jsonrpc.h"
#include "log.h"
#include "mcp.h"
#include "serveint.h"
#include "xmalloc.h"

#define SERVEMCP_ERROR	-32000	/* a transport refusal's JSON-RPC code */

struct servemcp_sess;

/*
 * A POST carrying a request, waiting for its reply.  QUEUED: what the
 * session sent for it waits in queue for the flush; STREAMING: SSE
 * headers are out, the rest follows as events, the reply last.
 */
enum servemcp_post_state {
	SMP_WAITING,
	SMP_STREAMING
};

struct servemcp_post {
	TAILQ_ENTRY(servemcp_post)	 entry;
	struct servemcp_sess		*sess;
	struct http_req			*r;
	json_t				*id;	/* the request's */
	json_t				*queue;	/* messages for the flush */
	enum servemcp_post_state	 state;
	int				 sse_ok;	/* Accept lists SSE */
	int				 init;	/* its reply names the session */
};
TAILQ_HEAD(servemcp_posts, servemcp_post);

/*
 * One MCP session: its core, its open POSTs, its GET stream, the timer
 * that ends it once idle (armed only while it is: no POST open, no GET
 * stream, no call of its core running).
 */
struct servemcp_sess {
	TAILQ_ENTRY(servemcp_sess)	 entry;
	struct servemcp			*sm;
	char				 id[33];
	struct mcp			*m;
	struct servemcp_posts		 posts;
	struct http_req			*get;	/* the GET stream or NULL */
	json_t				*getq;	/* messages for it */
	struct event			*flush;
	struct event			*expire;	/* idle: ends it */
	int				 busy;	/* in the flush */
	int				 dead;	/* ended: freed after it */
};
TAILQ_HEAD(servemcp_sesses, servemcp_sess);

/* The sessions, least recently used first (the eviction's order). */
struct servemcp {
	struct serve		*s;
	struct servemcp_sesses	 sesses;
	size_t			 n;
	struct servemcp_stats	 st;	/* max, idle_s; counters */
};

static void	servemcp_sess_end(struct servemcp_sess *);

/*
 * A refusal: HTTP code, and a JSON-RPC error body (id NULL: the
 * transport refuses the message, no request answered).
 */
static void
servemcp_fail(struct http_req *r, int code, int rpc, const json_t *id,
    const char *msg)
{
	json_t	*j = jsonrpc_error_new(id, rpc, "%s", msg);

	http_reply_json(r, code, j);
	json_decref(j);
}

/* A session id: 128 random bits as hex (visible ASCII, as MCP wants). */
static int
servemcp_new_id(char out[33])
{
	unsigned char	b[16];
	size_t		i;

	if (getentropy(b, sizeof b) != 0)
		return -1;
	for (i = 0; i < sizeof b; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	return 0;
}

/*
 * The session an Mcp-Session-Id names, or NULL.  Named by a request, it
 * is used: the most recent of the table (evicted last), not idle now.
 */
static struct servemcp_sess *
servemcp_find(struct servemcp *sm, const char *id)
{
	struct servemcp_sess	*ss;

	TAILQ_FOREACH(ss, &sm->sesses, entry)
		if (strcmp(ss->id, id) == 0) {
			TAILQ_REMOVE(&sm->sesses, ss, entry);
			TAILQ_INSERT_TAIL(&sm->sesses, ss, entry);
			evtimer_del(ss->expire);
			return ss;
		}
	return NULL;
}

/*
 * Idle: nothing of the client's open (no POST, no GET stream) and no
 * call of its core running (a client that left mid-call still has it).
 */
static int
servemcp_sess_idle(const struct servemcp_sess *ss)
{
	return !ss->dead && TAILQ_EMPTY(&ss->posts) && ss->get == NULL &&
	    (ss->m == NULL || mcp_idle(ss->m));
}

/*
 * After anything that may change whether the session is idle: the idle
 * clock runs while it is (started when it became so: a pending timer
 * keeps its start), else stopped.
 */
static void
servemcp_settle(struct servemcp_sess *ss)
{
	struct timeval	tv;

	if (ss->dead)
		return;
	if (!servemcp_sess_idle(ss)) {
		evtimer_del(ss->expire);
		return;
	}
	if (evtimer_pending(ss->expire, NULL))
		return;
	tv.tv_sec = (time_t)ss->sm->st.idle_s;
	tv.tv_usec = 0;
	evtimer_add(ss->expire, &tv);
}

/* Frees a POST's record (its request answered or gone: never touched). */
static void
servemcp_post_free(struct servemcp_post *p)
{
	TAILQ_REMOVE(&p->sess->posts, p, entry);
	json_decref(p->id);
	json_decref(p->queue);
	free(p);
}

/*
 * The client left before the reply: it will be dropped when it comes.
 * One that left its initialize never learns the session's id: ended.
 */
static void
servemcp_post_gone(struct http_req *r, void *arg)
{
	struct servemcp_post	*p = arg;
	struct servemcp_sess	*ss = p->sess;
	int			 init = p->init;

	(void)r;
	servemcp_post_free(p);
	if (init)
		servemcp_sess_end(ss);
	else
		servemcp_settle(ss);
}

/* The GET stream's client left. */
static void
servemcp_get_gone(struct http_req *r, void *arg)
{
	struct servemcp_sess	*ss = arg;

	(void)r;
	ss->get = NULL;
	servemcp_settle(ss);
}

/* One message as an SSE event on a stream; -1 when the client lags. */
static int
servemcp_event(struct http_req *r, const json_t *msg)
{
	char	*data = json_dumps(msg, JSON_COMPACT), *ev;
	int	 n, rc;

	if (data == NULL)
		return -1;
	n = xasprintf(&ev, "event: message\ndata: %s\n\n", data);
	rc = http_stream_write(r, ev, (size_t)n);
	free(ev);
	free(data);
	return rc;
}

/*
 * Sends what waits for one POST.  Notifications before the reply turn
 * the answer into an SSE stream when the client takes one (else they
 * are dropped: a JSON answer holds one message); the reply ends it.
 * 1 when the POST is finished with (freed), else 0.
 */
static int
servemcp_post_flush(struct servemcp_post *p)
{
	struct jsonrpc_msg	 msg;
	struct http_req		*r = p->r;
	struct servemcp_sess	*ss;
	const char		*why;
	char			 extra[64] = "", *body;
	int			 init = p->init;
	json_t			*v;
	size_t			 n;

	while (json_array_size(p->queue) > 0) {
		v = json_incref(json_array_get(p->queue, 0));
		json_array_remove(p->queue, 0);
		jsonrpc_classify(v, &msg, &why);
		if (msg.kind != JR_RESULT && msg.kind != JR_ERROR) {
			if (p->sse_ok && !p->init && p->state == SMP_WAITING &&
			    http_stream_begin(r, "text/event-stream") == 0)
				p->state = SMP_STREAMING;
			if (p->state == SMP_STREAMING)
				(void)servemcp_event(r, v);
			json_decref(v);
			continue;
		}
		/* the reply: the request is answered, then forgotten */
		http_req_on_close(r, NULL, NULL);
		if (p->state == SMP_STREAMING) {
			(void)servemcp_event(r, v);
			servemcp_post_free(p);
			http_stream_end(r);
		} else {
			if (p->init && msg.kind == JR_RESULT) {
				snprintf(extra, sizeof extra,
				    "Mcp-Session-Id: %s\r\n", p->sess->id);
				p->sess->sm->st.opened++;	/* kept */
			}
			body = json_dumps(v, JSON_COMPACT);
			n = body != NULL ? strlen(body) : 0;
			ss = p->sess;
			servemcp_post_free(p);
			http_reply(r, 200, "application/json", extra, body, n);
			free(body);
			/* a refused initialize: no session to keep */
			if (*extra == '\0' && init)
				servemcp_sess_end(ss);
		}
		json_decref(v);
		return 1;
	}
	return 0;
}

/* The memory of an ended session (its flush event may be running). */
static void
servemcp_sess_release(struct servemcp_sess *ss)
{
	event_free(ss->flush);
	event_free(ss->expire);
	json_decref(ss->getq);
	free(ss);
}

/*
 * Ends a session: out of the table (later requests naming it get 404),
 * its core freed (it closes what its calls started), its open POSTs
 * answered 404 and its GET stream ended.  Freed now, or by the flush it
 * happens in.
 */
static void
servemcp_sess_end(struct servemcp_sess *ss)
{
	struct servemcp_post	*p;
	struct http_req		*r;

	if (ss->dead)
		return;
	ss->dead = 1;
	evtimer_del(ss->expire);
	TAILQ_REMOVE(&ss->sm->sesses, ss, entry);
	ss->sm->n--;
	mcp_free(ss->m);
	ss->m = NULL;
	while ((p = TAILQ_FIRST(&ss->posts)) != NULL) {
		r = p->r;
		http_req_on_close(r, NULL, NULL);
		if (p->state == SMP_STREAMING) {
			servemcp_post_free(p);
			http_stream_end(r);
		} else {
			servemcp_post_free(p);
			servemcp_fail(r, 404, SERVEMCP_ERROR, NULL,
			    "the session has ended");
		}
	}
	if ((r = ss->get) != NULL) {
		ss->get = NULL;
		http_req_on_close(r, NULL, NULL);
		http_stream_end(r);
	}
	if (!ss->busy)
		servemcp_sess_release(ss);
}

/*
 * The session's messages go out from here, a turn of the event loop
 * after the core sent them: never inside the core's call, and an answer
 * (whose connection may then read a pipelined request, even a DELETE of
 * this session) never under anyone's feet.
 */
static void
servemcp_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct servemcp_sess	*ss = arg;
	struct servemcp_post	*p;
	json_t			*q;
	size_t			 i;

	(void)fd;
	(void)what;
	ss->busy = 1;
	q = ss->getq;
	ss->getq = json_array();
	for (i = 0; ss->get != NULL && i < json_array_size(q); i++)
		(void)servemcp_event(ss->get, json_array_get(q, i));
	json_decref(q);
again:
	TAILQ_FOREACH(p, &ss->posts, entry)
		if (json_array_size(p->queue) > 0 && servemcp_post_flush(p)) {
			if (ss->dead)
				break;
			goto again;
		}
	ss->busy = 0;
	if (ss->dead)
		servemcp_sess_release(ss);
	else
		servemcp_settle(ss);
}

/*
 * What the core sends (mcp_send_fn): queued on the POST it belongs to,
 * or for the GET stream; gone with its POST's client, or dropped while
 * no GET stream is open.  The flush runs either way: a dropped reply
 * may have ended the last call of an idle session (its clock starts).
 */
static void
servemcp_send(void *arg, const json_t *msg, const json_t *about)
{
	struct servemcp_sess	*ss = arg;
	struct servemcp_post	*p;

	if (ss->dead)
		return;
	if (about == NULL) {
		if (ss->get != NULL)
			json_array_append_new(ss->getq, json_deep_copy(msg));
	} else {
		TAILQ_FOREACH(p, &ss->posts, entry)
			if (json_equal(p->id, (json_t *)about))
				break;
		if (p != NULL)
			json_array_append_new(p->queue, json_deep_copy(msg));
	}
	event_active(ss->flush, EV_TIMEOUT, 0);
}

/* Idle for the whole idle time: ended as a DELETE ends it. */
static void
servemcp_expire_cb(evutil_socket_t fd, short what, void *arg)
{
	struct servemcp_sess	*ss = arg;

	(void)fd;
	(void)what;
	if (!servemcp_sess_idle(ss))
		return;
	ss->sm->st.expired++;
	log_info("mcp: session %.8s... idle for %llu s: ended", ss->id,
	    (unsigned long long)ss->sm->st.idle_s);
	servemcp_sess_end(ss);
}

/*
 * Room for one more session at the cap: the least recently used idle
 * one ended (its id then gets 404, its client initializes anew); 0, or
 * -1 when every session is busy.
 */
static int
servemcp_evict(struct servemcp *sm)
{
	struct servemcp_sess	*ss;

	TAILQ_FOREACH(ss, &sm->sesses, entry)
		if (servemcp_sess_idle(ss)) {
			sm->st.evicted++;
			log_info("mcp: %zu sessions: the least recently used "
			    "idle one (%.8s...) ended for a new one", sm->n,
			    ss->id);
			servemcp_sess_end(ss);
			return 0;
		}
	return -1;
}

/* A new session on root 0's verb table and the hosts' bus, or NULL. */
static struct servemcp_sess *
servemcp_sess_new(struct servemcp *sm)
{
	struct servemcp_sess	*ss = xcalloc(1, sizeof *ss);
	struct mcp_cfg		 cfg;

	if (servemcp_new_id(ss->id) != 0) {
		free(ss);
		return NULL;
	}
	ss->sm = sm;
	TAILQ_INIT(&ss->posts);
	ss->getq = json_array();
	ss->flush = evtimer_new(sm->s->base, servemcp_flush_cb, ss);
	ss->expire = evtimer_new(sm->s->base, servemcp_expire_cb, ss);
	memset(&cfg, 0, sizeof cfg);
	cfg.api = sm->s->cfg.roots[0].api;
	cfg.bus = sm->s->cfg.bus;
	cfg.send = servemcp_send;
	cfg.arg = ss;
	ss->m = mcp_new(&cfg);
	TAILQ_INSERT_TAIL(&sm->sesses, ss, entry);
	sm->n++;
	return ss;
}

/*
 * The session a request names: NULL with the answer sent when it names
 * none (400) or one we do not know (404: ended, or never ours).
 */
static struct servemcp_sess *
servemcp_named(struct servemcp *sm, struct http_req *r)
{
	const char		*id = http_head_field(http_req_head(r),
				    "mcp-session-id");
	struct servemcp_sess	*ss;

	if (id == NULL) {
		servemcp_fail(r, 400, SERVEMCP_ERROR, NULL,
		    "Bad Request: Mcp-Session-Id header is required");
		return NULL;
	}
	if ((ss = servemcp_find(sm, id)) == NULL)
		servemcp_fail(r, 404, SERVEMCP_ERROR, NULL,
		    "Session not found");
	return ss;
}

/* POST's checks, in the spec's order: what is sent and how it may come. */
static json_t *
servemcp_post_body(struct http_req *r)
{
	const struct http_head	*h = http_req_head(r);
	const char		*b;
	size_t			 len;
	json_t			*v, *err = NULL;

	if (!servemcp_accepts(h, "application/json") ||
	    !servemcp_accepts(h, "text/event-stream")) {
		servemcp_fail(r, 406, SERVEMCP_ERROR, NULL, "Not Acceptable: "
		    "Accept must list application/json and text/event-stream");
		return NULL;
	}
	if (!servemcp_is_json(h)) {
		servemcp_fail(r, 415, SERVEMCP_ERROR, NULL, "Unsupported "
		    "Media Type: Content-Type must be application/json");
		return NULL;
	}
	b = http_req_body(r, &len);
	if ((v = jsonrpc_parse(b, len, &err)) == NULL) {
		if (err == NULL)
			err = jsonrpc_error_new(NULL, JSONRPC_PARSE_ERROR,
			    "parse error: the body is empty");
		http_reply_json(r, 400, err);
		json_decref(err);
		return NULL;
	}
	return v;
}

/* POST /mcp: one JSON-RPC message for a session (initialize makes one). */
static void
servemcp_post(struct servemcp *sm, struct http_req *r)
{
	const struct http_head	*h = http_req_head(r);
	struct servemcp_sess	*ss;
	struct servemcp_post	*p;
	struct jsonrpc_msg	 msg;
	const char		*why;
	json_t			*v, *e;

	if ((v = servemcp_post_body(r)) == NULL)
		return;
	if (jsonrpc_classify(v, &msg, &why) == JR_INVALID) {
		e = jsonrpc_error_new(msg.id, JSONRPC_INVALID_REQUEST, "%s",
		    why);
		http_reply_json(r, 400, e);
		json_decref(e);
		goto out;
	}
	if (!servemcp_version_ok(h)) {
		servemcp_fail(r, 400, SERVEMCP_ERROR, NULL, "Bad Request: "
		    "unsupported MCP-Protocol-Version");
		goto out;
	}
	if (http_head_field(h, "mcp-session-id") != NULL ||
	    msg.kind != JR_REQUEST || strcmp(msg.method, "initialize") != 0) {
		if ((ss = servemcp_named(sm, r)) == NULL)
			goto out;
	} else if (sm->n >= sm->st.max && servemcp_evict(sm) != 0) {
		sm->st.refused++;
		servemcp_fail(r, 503, SERVEMCP_ERROR, NULL, "Service "
		    "Unavailable: too many MCP sessions, none idle");
		goto out;
	} else if ((ss = servemcp_sess_new(sm)) == NULL) {
		servemcp_fail(r, 500, JSONRPC_INTERNAL, NULL,
		    "no random bytes for a session id");
		goto out;
	}
	if (msg.kind != JR_REQUEST) {
		/* a notification or a response: accepted, nothing to say */
		mcp_message(ss->m, v);
		http_reply(r, 202, NULL, NULL, NULL, 0);
		servemcp_settle(ss);
		goto out;
	}
	TAILQ_FOREACH(p, &ss->posts, entry)
		if (json_equal(p->id, (json_t *)msg.id)) {
			e = jsonrpc_error_new(msg.id, JSONRPC_INVALID_REQUEST,
			    "a request with this id is still running");
			http_reply_json(r, 400, e);
			json_decref(e);
			servemcp_settle(ss);
			goto out;
		}
	p = xcalloc(1, sizeof *p);
	p->sess = ss;
	p->r = r;
	p->id = json_deep_copy(msg.id);
	p->queue = json_array();
	p->state = SMP_WAITING;
	p->sse_ok = 1;		/* checked above: Accept lists it */
	p->init = ss->m != NULL && !mcp_ready(ss->m) &&
	    strcmp(msg.method, "initialize") == 0;
	TAILQ_INSERT_TAIL(&ss->posts, p, entry);
	http_req_on_close(r, servemcp_post_gone, p);
	mcp_message(ss->m, v);
out:
	json_decref(v);
}

/*
 * GET /mcp: the session's stream for what belongs to no request (log
 * messages); one per session (409 for a second).
 */
static void
servemcp_get(struct servemcp *sm, struct http_req *r)
{
	struct servemcp_sess	*ss;

	if (http_req_head(r)->method == HTTP_HEAD) {
		http_reply(r, 405, NULL, "Allow: GET, POST, DELETE\r\n", NULL,
		    0);
		return;
	}
	if (!servemcp_accepts(http_req_head(r), "text/event-stream")) {
		servemcp_fail(r, 406, SERVEMCP_ERROR, NULL, "Not Acceptable: "
		    "Accept must list text/event-stream");
		return;
	}
	if (!servemcp_version_ok(http_req_head(r))) {
		servemcp_fail(r, 400, SERVEMCP_ERROR, NULL, "Bad Request: "
		    "unsupported MCP-Protocol-Version");
		return;
	}
	if ((ss = servemcp_named(sm, r)) == NULL)
		return;
	if (ss->get != NULL) {
		servemcp_fail(r, 409, SERVEMCP_ERROR, NULL, "Conflict: this "
		    "session already has its GET stream");
		servemcp_settle(ss);
		return;
	}
	if (http_stream_begin(r, "text/event-stream") != 0) {
		servemcp_settle(ss);
		return;
	}
	ss->get = r;
	http_req_on_close(r, servemcp_get_gone, ss);
	/* a comment: the client sees the stream open at once */
	(void)http_stream_write(r, ": mcp\n\n", 7);
}

/* DELETE /mcp: the client ends its session. */
static void
servemcp_delete(struct servemcp *sm, struct http_req *r)
{
	struct servemcp_sess	*ss;

	if ((ss = servemcp_named(sm, r)) == NULL)
		return;
	sm->st.deleted++;
	servemcp_sess_end(ss);
	http_reply(r, 200, NULL, NULL, NULL, 0);
}

/* The /mcp route (Host, Origin and the token checked by serve_handle). */
void
serve_mcp(struct serve *s, struct http_req *r, const struct serve_match *m)
{
	(void)m;
	switch (http_req_head(r)->method) {
	case HTTP_POST:
		servemcp_post(s->mcp, r);
		break;
	case HTTP_DELETE:
		servemcp_delete(s->mcp, r);
		break;
	default:
		servemcp_get(s->mcp, r);
		break;
	}
}

/*
 * The idle time: SERVE_MCP_IDLE_S, or $CCW_MCP_IDLE_S (seconds, 1 or
 * more: the tests' short one); a bad value is warned about and ignored.
 */
static uint64_t
servemcp_idle_s(void)
{
	const char		*v = getenv("CCW_MCP_IDLE_S");
	char			*end;
	unsigned long long	 n;

	if (v == NULL || *v == '\0')
		return SERVE_MCP_IDLE_S;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (*v < '0' || *v > '9' || *end != '\0' || errno != 0 || n == 0 ||
	    n > SERVE_MCP_IDLE_MAX_S) {
		log_warnx("CCW_MCP_IDLE_S=%s: not a number of seconds from 1 "
		    "to %d; %d s", v, SERVE_MCP_IDLE_MAX_S, SERVE_MCP_IDLE_S);
		return SERVE_MCP_IDLE_S;
	}
	return n;
}

/* The sessions' table; max: how many may be open at once. */
struct servemcp *
servemcp_new(struct serve *s, size_t max)
{
	struct servemcp	*sm = xcalloc(1, sizeof *sm);

	sm->s = s;
	sm->st.max = max;
	sm->st.idle_s = servemcp_idle_s();
	TAILQ_INIT(&sm->sesses);
	return sm;
}

/* Sessions open now, the limits and what ended them (/metrics). */
void
servemcp_stats(const struct servemcp *sm, struct servemcp_stats *st)
{
	*st = sm->st;
	st->open = sm->n;
}

/*
 * Every session ended (their agents closed by the core); the requests
 * are answered or closed, the server frees their connections after.
 */
void
servemcp_free(struct servemcp *sm)
{
	if (sm == NULL)
		return;
	while (!TAILQ_EMPTY(&sm->sesses))
		servemcp_sess_end(TAILQ_FIRST(&sm->sesses));
	free(sm);
}
