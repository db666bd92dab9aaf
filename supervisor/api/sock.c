/*
 * sock.c: the control socket's connections: the peer's uid checked at
 * accept and its connections capped, proto/ frames in and out through a
 * chan (its limits, its reader), each REQUEST to the verb table or to
 * subscribe, each reply and bus event out as a frame; a client past its
 * unsent-bytes bound is dropped, one idle or slow past its deadline is
 * closed, and a reply whose client left is let go.
 */
#include <config.h>

#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "api.h"
#include "bus.h"
#include "chan.h"
#include "log.h"
#include "lpause.h"
#include "sock.h"
#include "xmalloc.h"

/*
 * A connection.  Its one timer is the idle deadline between frames
 * (none while a call is pending or it subscribed: those end on their
 * own) or, from a frame's first byte, the frame's absolute deadline.
 * The list is kept least recently active first (moved at each frame).
 */
struct sock_conn {
	TAILQ_ENTRY(sock_conn)	 entry;
	struct sock		*sock;
	struct chan		*chan;
	struct event		*timer;
	struct bus_observer	*obs;		/* subscribed */
	size_t			 npending;	/* calls to the verb table */
	uid_t			 uid;
	int			 in_frame;	/* part of a frame is buffered */
	int			 replaying;	/* the bound is judged after */
};
TAILQ_HEAD(sock_conns, sock_conn);

/* A call to the verb table; conn is NULL once its client left. */
struct sock_call {
	TAILQ_ENTRY(sock_call)	 entry;
	struct sock		*sock;
	struct sock_conn	*conn;
};
TAILQ_HEAD(sock_calls, sock_call);

struct sock {
	struct event_base	*base;
	struct sock_cfg		 cfg;
	char			*path;
	struct evconnlistener	*lev;
	struct lpause		*pause;		/* accept's back-off */
	int			 lockfd;
	dev_t			 dev;
	ino_t			 ino;
	struct sock_conns	 conns;
	struct sock_calls	 calls;
	struct sock_stats	 st;
};

/*
 * Close a connection now: its calls are orphaned (their replies are let
 * go), it leaves the bus; safe from inside its chan's or the bus's
 * callbacks (both defer their own frees).
 */
static void
sock_conn_close(struct sock_conn *cn)
{
	struct sock		*s = cn->sock;
	struct sock_call	*call;

	if (cn->npending > 0)
		TAILQ_FOREACH(call, &s->calls, entry)
			if (call->conn == cn)
				call->conn = NULL;
	if (cn->obs != NULL) {
		bus_unobserve(s->cfg.bus, cn->obs);
		s->st.subscribers--;
	}
	TAILQ_REMOVE(&s->conns, cn, entry);
	s->st.open--;
	event_free(cn->timer);
	chan_free(cn->chan);
	free(cn);
	lpause_wake(s->pause);
}

/*
 * Between frames: the idle deadline, unless a pending call or a
 * subscription holds the client (a frame begun keeps its own deadline).
 */
static void
sock_conn_rest(struct sock_conn *cn)
{
	if (cn->in_frame)
		return;
	if (cn->npending == 0 && cn->obs == NULL)
		chan_arm_ms(cn->timer, cn->sock->cfg.idle_ms);
	else
		evtimer_del(cn->timer);
}

/* The deadline passed: idle too long, or a frame too slow; closed. */
static void
sock_conn_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct sock_conn	*cn = arg;
	struct sock		*s = cn->sock;

	(void)fd;
	(void)what;
	if (cn->in_frame) {
		s->st.closed_slow++;
		log_warnx("control socket: closed a connection: a frame not "
		    "whole %" PRIu64 " ms after its first byte",
		    s->cfg.frame_ms);
	} else {
		s->st.closed_idle++;
		log_info("control socket: closed a connection idle for %"
		    PRIu64 " ms", s->cfg.idle_ms);
	}
	sock_conn_close(cn);
}

/*
 * After a frame was queued (e its chan_send's result): a client whose
 * unsent bytes pass out_max is dropped, never waited for, so the others
 * go on; so is one whose socket failed.  -1 when the conn is gone.
 */
static int
sock_conn_judge(struct sock_conn *cn, enum proto_err e)
{
	struct sock	*s = cn->sock;

	if (e != PROTO_OK) {
		log_warnx("control socket: a frame not sent: %s",
		    proto_strerror(e));
		if (e != PROTO_E_TOOBIG) {
			sock_conn_close(cn);
			return -1;
		}
	}
	if (!cn->replaying && chan_queued(cn->chan) > s->cfg.out_max) {
		log_warnx("control socket: a client fell %zu bytes behind; "
		    "dropped", chan_queued(cn->chan));
		s->st.dropped_slow++;
		sock_conn_close(cn);
		return -1;
	}
	return 0;
}

/* A reply frame; one the frame limit refuses becomes an error reply. */
static int
sock_conn_reply(struct sock_conn *cn, json_t *body)
{
	struct msg	 m;
	json_t		*err;
	enum proto_err	 e;

	msg_init(&m, MSG_REPLY);
	m.u.call.body = body;
	if ((e = chan_send(cn->chan, &m)) == PROTO_E_TOOBIG) {
		err = api_error_new(json_object_get(body, "id"), ERR_INTERNAL,
		    "the reply is over the socket's frame limit (%u bytes)",
		    SOCK_FRAME_MAX);
		m.u.call.body = err;
		e = chan_send(cn->chan, &m);
		json_decref(err);
	}
	if (sock_conn_judge(cn, e) != 0)
		return -1;
	sock_conn_rest(cn);
	return 0;
}

/* The verb table answered: to the client, or let go if it left. */
static void
sock_replied(json_t *body, void *arg)
{
	struct sock_call	*call = arg;
	struct sock		*s = call->sock;

	TAILQ_REMOVE(&s->calls, call, entry);
	s->st.pending--;
	if (call->conn == NULL) {
		s->st.orphaned++;
	} else {
		call->conn->npending--;
		(void)sock_conn_reply(call->conn, body);
	}
	free(call);
}

/* One bus event to a subscriber (live or replayed). */
static void
sock_event(void *arg, uint64_t seq, const char *type, const json_t *fields)
{
	struct sock_conn	*cn = arg;
	struct msg		 m;

	msg_init(&m, MSG_EVENT);
	m.u.event.seq = seq;
	m.u.event.type = (char *)type;
	m.u.event.data = (json_t *)fields;
	(void)sock_conn_judge(cn, chan_send(cn->chan, &m));
}

/* Answer a request of our own (the id added); -1 when the conn is gone. */
static int
sock_answer(struct sock_conn *cn, const json_t *req, json_t *body)
{
	int	rc;

	json_object_set(body, "id", json_object_get(req, "id") != NULL ?
	    json_object_get(req, "id") : json_null());
	rc = sock_conn_reply(cn, body);
	json_decref(body);
	return rc;
}

/*
 * {"verb": "subscribe", "after": SEQ}: the reply ({"last": the bus's
 * latest number}), then the kept events after SEQ (or a "reset" event
 * when the ring no longer reaches back), then every new event.  Without
 * "after", only the new ones.
 */
static void
sock_subscribe(struct sock_conn *cn, const json_t *req)
{
	struct sock	*s = cn->sock;
	const json_t	*after = json_object_get(req, "after");
	struct msg	 m;
	json_t		*data;
	int		 gap;

	if (s->cfg.bus == NULL || cn->obs != NULL) {
		(void)sock_answer(cn, req, s->cfg.bus == NULL ?
		    api_error_new(NULL, ERR_UNAVAILABLE,
		    "this server has no events") :
		    api_error_new(NULL, ERR_CONFLICT, "already subscribed"));
		return;
	}
	if (after != NULL && (!json_is_integer(after) ||
	    json_integer_value(after) < 0)) {
		(void)sock_answer(cn, req, api_error_new(NULL, ERR_INVALID,
		    "\"after\" must be a non-negative integer"));
		return;
	}
	if (sock_answer(cn, req, json_pack("{s:b, s:I}", "ok", 1, "last",
	    (json_int_t)bus_last(s->cfg.bus))) != 0)
		return;
	cn->replaying = 1;
	gap = after == NULL ? 0 : bus_replay(s->cfg.bus,
	    (uint64_t)json_integer_value(after), sock_event, cn);
	if (gap != 0) {
		data = json_pack("{s:I}", "after",
		    (json_int_t)json_integer_value(after));
		msg_init(&m, MSG_EVENT);
		m.u.event.seq = bus_last(s->cfg.bus);
		m.u.event.type = (char *)"reset";
		m.u.event.data = data;
		(void)chan_send(cn->chan, &m);
		json_decref(data);
	}
	cn->replaying = 0;
	if (sock_conn_judge(cn, PROTO_OK) != 0)
		return;
	cn->obs = bus_observe(s->cfg.bus, sock_event, cn);
	s->st.subscribers++;
	sock_conn_rest(cn);
}

/* sock_stats: the socket's counters, at once. */
static void
sock_stats_verb(struct sock_conn *cn, const json_t *req)
{
	json_t	*reply = sock_stats_json(cn->sock);

	json_object_set_new(reply, "ok", json_true());
	(void)sock_answer(cn, req, reply);
}

/*
 * The verbs the socket answers itself, before the host's and the verb
 * table's: adding one is a row and its handler.
 */
static const struct sock_verb {
	const char	*name;
	void		(*fn)(struct sock_conn *, const json_t *);
} sock_verbs[] = {
	{ "subscribe", sock_subscribe },
	{ "sock_stats", sock_stats_verb },
};

/* One request: ours (sock_verbs), the host's, the verb table's. */
static void
sock_request(struct sock_conn *cn, const json_t *req)
{
	struct sock		*s = cn->sock;
	struct sock_call	*call;
	const char		*verb;
	json_t			*reply = NULL;
	size_t			 i;

	s->st.requests++;
	if (!json_is_object(req)) {
		(void)sock_answer(cn, req, api_error_new(NULL, ERR_INVALID,
		    "a request must be a JSON object"));
		return;
	}
	verb = json_string_value(json_object_get(req, "verb"));
	for (i = 0; verb != NULL && i < sizeof sock_verbs /
	    sizeof sock_verbs[0]; i++)
		if (strcmp(verb, sock_verbs[i].name) == 0) {
			sock_verbs[i].fn(cn, req);
			return;
		}
	if (s->cfg.local != NULL)
		(void)s->cfg.local(s->cfg.local_arg, req, &reply);
	if (reply != NULL) {
		(void)sock_answer(cn, req, reply);
		return;
	}
	call = xcalloc(1, sizeof *call);
	call->sock = s;
	call->conn = cn;
	TAILQ_INSERT_TAIL(&s->calls, call, entry);
	cn->npending++;
	s->st.pending++;
	/* the reply may come at once and drop the conn: cn is not used after */
	api_call(s->cfg.api, req, sock_replied, call);
}

/*
 * A frame from a client (the chan only passes REQUESTs: MSG_DIR_TO_SERVER):
 * no deadline while it is answered (its reply starts the idle one); the
 * client becomes the most recently active.
 */
static void
sock_on_msg(struct chan *ch, struct msg *m, void *arg)
{
	struct sock_conn	*cn = arg;
	struct sock		*s = cn->sock;

	(void)ch;
	cn->in_frame = 0;
	evtimer_del(cn->timer);
	TAILQ_REMOVE(&s->conns, cn, entry);
	TAILQ_INSERT_TAIL(&s->conns, cn, entry);
	sock_request(cn, m->u.call.body);
}

/* Part of a frame came: it has frame_ms from this first byte to be whole. */
static void
sock_on_partial(struct chan *ch, void *arg)
{
	struct sock_conn	*cn = arg;

	(void)ch;
	if (cn->in_frame)
		return;
	cn->in_frame = 1;
	chan_arm_ms(cn->timer, cn->sock->cfg.frame_ms);
}

/*
 * uid is at its cap: close its least recently active connection that no
 * call or subscription holds (a silent client, or one stuck mid-frame),
 * so that a flood of those never locks the user out.  0, or -1 when
 * every one is busy.
 */
static int
sock_evict(struct sock *s, uid_t uid)
{
	struct sock_conn	*cn;

	TAILQ_FOREACH(cn, &s->conns, entry)
		if (cn->uid == uid && cn->npending == 0 && cn->obs == NULL)
			break;
	if (cn == NULL)
		return -1;
	s->st.evicted++;
	log_info("control socket: uid %ld at its cap of %zu connections: "
	    "closed its least recently active idle one", (long)uid,
	    s->cfg.uid_max);
	sock_conn_close(cn);
	return 0;
}

/* How many connections uid has open. */
static size_t
sock_uid_count(const struct sock *s, uid_t uid)
{
	const struct sock_conn	*cn;
	size_t			 n = 0;

	TAILQ_FOREACH(cn, &s->conns, entry)
		n += cn->uid == uid;
	return n;
}

/* The client left, or sent what proto/ refuses: closed, counted. */
static void
sock_on_end(struct chan *ch, enum proto_err e, const char *why, void *arg)
{
	struct sock_conn	*cn = arg;

	(void)ch;
	if (e != PROTO_OK && e != PROTO_E_IO) {
		cn->sock->st.bad_frames++;
		log_warnx("control socket: closed a connection: %s", why);
	}
	sock_conn_close(cn);
}

/*
 * A new connection: only our own user's, up to conns_max, and up to
 * uid_max of one uid (room made by sock_evict).
 */
static void
sock_accept(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct sock		*s = arg;
	struct sock_conn	*cn;
	struct ucred		 cr;
	socklen_t		 crlen = sizeof cr;

	(void)lev;
	(void)sa;
	(void)salen;
	lpause_accepted(s->pause);
	memset(&cr, 0, sizeof cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) != 0 ||
	    cr.uid != geteuid()) {
		s->st.refused_uid++;
		log_warnx("control socket: refused a connection from uid %ld "
		    "(pid %ld): not ours", (long)cr.uid, (long)cr.pid);
		close(fd);
		return;
	}
	if (s->st.open >= s->cfg.conns_max) {
		s->st.refused_full++;
		log_warnx("control socket: refused a connection: %zu open",
		    s->st.open);
		close(fd);
		return;
	}
	if (sock_uid_count(s, cr.uid) >= s->cfg.uid_max &&
	    sock_evict(s, cr.uid) != 0) {
		s->st.refused_full++;
		log_warnx("control socket: refused a connection from uid %ld: "
		    "its %zu connections all wait for a call or subscribed",
		    (long)cr.uid, s->cfg.uid_max);
		close(fd);
		return;
	}
	cn = xcalloc(1, sizeof *cn);
	cn->sock = s;
	cn->uid = cr.uid;
	cn->chan = chan_new(s->base, fd, MSG_DIR_TO_SERVER, SOCK_FRAME_MAX,
	    sock_on_msg, sock_on_end, cn);
	if (cn->chan == NULL) {
		close(fd);
		free(cn);
		return;
	}
	chan_on_partial(cn->chan, sock_on_partial);
	cn->timer = evtimer_new(s->base, sock_conn_timeout, cn);
	TAILQ_INSERT_TAIL(&s->conns, cn, entry);
	s->st.open++;
	s->st.accepted++;
	sock_conn_rest(cn);
}

/* A deadline: the caller's, else the environment's (tests), else def. */
static uint64_t
sock_deadline(uint64_t cfg, const char *env, uint64_t def)
{
	const char		*v = getenv(env);
	char			*end;
	unsigned long long	 ms;

	if (cfg != 0)
		return cfg;
	if (v == NULL || *v < '1' || *v > '9')
		return def;
	ms = strtoull(v, &end, 10);
	return *end == '\0' ? (uint64_t)ms : def;
}

/* accept(2) failed (out of descriptors): paused, not spinning. */
static void
sock_accept_error(struct evconnlistener *lev, void *arg)
{
	struct sock	*s = arg;

	(void)lev;
	lpause_failed(s->pause, EVUTIL_SOCKET_ERROR());
}

/* Listen at cfg->path on base: the sock, or NULL and *err (naming the path). */
struct sock *
sock_listen(struct event_base *base, const struct sock_cfg *cfg, char **err)
{
	struct sock	*s = xcalloc(1, sizeof *s);
	int		 fd;

	s->base = base;
	s->cfg = *cfg;
	if (s->cfg.conns_max == 0)
		s->cfg.conns_max = SOCK_CONNS_MAX;
	if (s->cfg.out_max == 0)
		s->cfg.out_max = SOCK_OUT_MAX;
	if (s->cfg.uid_max == 0)
		s->cfg.uid_max = SOCK_UID_MAX;
	s->cfg.idle_ms = sock_deadline(cfg->idle_ms, SOCK_IDLE_ENV,
	    SOCK_IDLE_MS);
	s->cfg.frame_ms = sock_deadline(cfg->frame_ms, SOCK_FRAME_ENV,
	    SOCK_FRAME_MS);
	s->path = xstrdup(cfg->path);
	s->cfg.path = s->path;
	TAILQ_INIT(&s->conns);
	TAILQ_INIT(&s->calls);
	if (sockbind_open(s->path, &fd, &s->lockfd, &s->dev, &s->ino,
	    err) != 0) {
		free(s->path);
		free(s);
		return NULL;
	}
	s->lev = evconnlistener_new(base, sock_accept, s,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (s->lev == NULL) {
		xasprintf(err, "%s: cannot accept connections", s->path);
		close(fd);
		sockbind_close(s->path, s->lockfd, s->dev, s->ino);
		free(s->path);
		free(s);
		return NULL;
	}
	evconnlistener_set_error_cb(s->lev, sock_accept_error);
	s->pause = lpause_new(base, s->lev, "control socket");
	return s;
}

/*
 * Close every connection and the socket, remove the path if it is still
 * ours.  Free the api first (its pending calls hold our calls; api_free
 * drops them without a reply) and the bus after (we leave it here).
 */
void
sock_free(struct sock *s)
{
	struct sock_call	*call;

	if (s == NULL)
		return;
	lpause_free(s->pause);
	s->pause = NULL;
	while (!TAILQ_EMPTY(&s->conns))
		sock_conn_close(TAILQ_FIRST(&s->conns));
	while ((call = TAILQ_FIRST(&s->calls)) != NULL) {
		TAILQ_REMOVE(&s->calls, call, entry);
		free(call);
	}
	evconnlistener_free(s->lev);
	sockbind_close(s->path, s->lockfd, s->dev, s->ino);
	free(s->path);
	free(s);
}

/* The counters. */
void
sock_stats(const struct sock *s, struct sock_stats *st)
{
	*st = s->st;
}

/* The counters as a JSON object (the sock_stats verb, a metrics page). */
json_t *
sock_stats_json(const struct sock *s)
{
	const struct sock_stats	*st = &s->st;

	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
	    "s:I, s:I, s:I, s:I}", "path", s->path,
	    "accepted", (json_int_t)st->accepted,
	    "refused_uid", (json_int_t)st->refused_uid,
	    "refused_full", (json_int_t)st->refused_full,
	    "evicted", (json_int_t)st->evicted,
	    "closed_idle", (json_int_t)st->closed_idle,
	    "closed_slow", (json_int_t)st->closed_slow,
	    "bad_frames", (json_int_t)st->bad_frames,
	    "dropped_slow", (json_int_t)st->dropped_slow,
	    "requests", (json_int_t)st->requests,
	    "orphaned", (json_int_t)st->orphaned,
	    "open", (json_int_t)st->open,
	    "subscribers", (json_int_t)st->subscribers,
	    "pending", (json_int_t)st->pending);
}
