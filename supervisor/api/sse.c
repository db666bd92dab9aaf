/*
 * sse.c: the event bus as Server-Sent Events.  Owns the list of streaming
 * clients, the pending slots that coalesce frequent events per (type,
 * loop) for SSE_FLUSH_MS, and the wire form: "id: SEQ", "event: TYPE",
 * "data: {type, ...fields, timestamp}".  A client resuming from
 * Last-Event-ID gets the bus's ring after it, or a "reset" event when the
 * ring no longer reaches back that far (it must fetch the state anew).
 */
#include <config.h>

#include <sys/queue.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "bus.h"
#include "clock.h"
#include "http.h"
#include "sse.h"
#include "xmalloc.h"

struct sse_client {
	TAILQ_ENTRY(sse_client)	 entry;
	struct sse		*sse;
	struct http_req		*req;
	uint64_t		 last;	/* the last seq written to it */
};
TAILQ_HEAD(sse_clients, sse_client);

/* A coalesced event waiting for the flush: the latest of its kind. */
struct sse_slot {
	TAILQ_ENTRY(sse_slot)	 entry;
	char			*type;
	char			*loop;
	char			*agent;	/* a worker's event: per agent */
	uint64_t		 seq;
	json_t			*fields;
};
TAILQ_HEAD(sse_slots, sse_slot);

struct sse {
	struct event_base	*base;
	struct bus		*bus;
	struct bus_observer	*obs;
	struct sse_clients	 clients;
	struct sse_slots	 slots;
	struct event		*flush_ev;
	struct event		*beat_ev;
	uint64_t		 flush_ms;
	uint64_t		 beat_ms;
	uint64_t		 sent;		/* events written, all clients */
	size_t			 nclients;
	sse_tap_fn		 tap;		/* /ws: each event sent, once */
	void			*tap_arg;
};

/*
 * The types worth coalescing: each says "now it is like this", so only
 * the latest matters.  A step's, a log line's or an end's event each
 * says something of its own and is never dropped.
 */
int
sse_coalesced_type(const char *type)
{
	return strcmp(type, "LOOP_STATE_UPDATE") == 0 ||
	    strcmp(type, "worker_progress") == 0;
}

/* Arms a timer ms from now. */
static void
sse_arm(struct event *ev, uint64_t ms)
{
	struct timeval	tv;

	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000 * 1000);
	evtimer_add(ev, &tv);
}

/* The client left (or was closed for falling behind). */
static void
sse_client_gone(struct http_req *r, void *arg)
{
	struct sse_client	*cl = arg;

	(void)r;
	TAILQ_REMOVE(&cl->sse->clients, cl, entry);
	cl->sse->nclients--;
	free(cl);
}

/*
 * An event as CCW's dashboard reads it (SSE's data, /ws's text): the
 * fields with "type" first and a "timestamp" when the event had none.
 */
char *
sse_json(const char *type, const json_t *fields)
{
	json_t		*o = json_pack("{s:s}", "type", type);
	char		*data, ts[40];

	if (json_is_object(fields))
		json_object_update(o, (json_t *)fields);
	json_object_set_new(o, "type", json_string(type));
	if (json_object_get(o, "timestamp") == NULL) {
		clock_iso(NULL, 1, ts, sizeof ts);
		json_object_set_new(o, "timestamp", json_string(ts));
	}
	data = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(o);
	return data;
}

/* One event in SSE form: its id, its type, its data. */
static char *
sse_format(uint64_t seq, const char *type, const json_t *fields, size_t *len)
{
	char		*data = sse_json(type, fields), *out;

	*len = (size_t)xasprintf(&out, "id: %" PRIu64 "\nevent: %s\ndata: %s"
	    "\n\n", seq, type, data != NULL ? data : "{}");
	free(data);
	return out;
}

/*
 * Writes an event to every client that has not had it.  A client that
 * has fallen too far behind is closed by the server (its on_close runs
 * on a later turn; until then writes to it fail harmlessly).
 */
static void
sse_write_all(struct sse *s, uint64_t seq, const char *type,
    const json_t *fields)
{
	struct sse_client	*cl;
	char			*buf = NULL;
	size_t			 len = 0;

	if (s->tap != NULL)
		s->tap(s->tap_arg, seq, type, fields);
	TAILQ_FOREACH(cl, &s->clients, entry) {
		if (cl->last >= seq)
			continue;
		if (buf == NULL)
			buf = sse_format(seq, type, fields, &len);
		if (http_stream_write(cl->req, buf, len) == 0) {
			cl->last = seq;
			s->sent++;
		}
	}
	free(buf);
}

/* Frees a slot out of the list. */
static void
sse_slot_drop(struct sse *s, struct sse_slot *sl)
{
	TAILQ_REMOVE(&s->slots, sl, entry);
	json_decref(sl->fields);
	free(sl->type);
	free(sl->loop);
	free(sl->agent);
	free(sl);
}

/*
 * Sends pending slots in their sequence order (the list's: a slot moves
 * to the tail whenever it takes a newer event); loop NULL: all of them.
 */
static void
sse_flush(struct sse *s, const char *loop)
{
	struct sse_slot	*sl, *next;

	for (sl = TAILQ_FIRST(&s->slots); sl != NULL; sl = next) {
		next = TAILQ_NEXT(sl, entry);
		if (loop != NULL && strcmp(sl->loop, loop) != 0)
			continue;
		sse_write_all(s, sl->seq, sl->type, sl->fields);
		sse_slot_drop(s, sl);
	}
}

/* The coalescing window is over. */
static void
sse_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sse_flush(arg, NULL);
}

/* A quiet stream gets a comment line: proxies keep it, dead peers show. */
static void
sse_beat_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sse		*s = arg;
	struct sse_client	*cl;

	(void)fd;
	(void)what;
	TAILQ_FOREACH(cl, &s->clients, entry)
		(void)http_stream_write(cl->req, ":\n\n", 3);
	sse_arm(s->beat_ev, s->beat_ms);
}

/*
 * A bus event.  A coalesced type replaces its (type, loop) slot and waits
 * for the flush; a worker's event has a slot per agent, so that the
 * parallel workers of one loop each keep their latest line.  Any other
 * event first sends its loop's pending slots so that a client never sees
 * a loop's events out of order.
 */
static void
sse_bus_cb(void *arg, uint64_t seq, const char *type, const json_t *fields)
{
	struct sse	*s = arg;
	struct sse_slot	*sl;
	const char	*loop, *agent;

	if (s->nclients == 0 && s->tap == NULL)
		return;
	loop = json_string_value(json_object_get(fields, "loop_id"));
	if (loop == NULL)
		loop = "";
	agent = json_string_value(json_object_get(fields, "agent_id"));
	if (agent == NULL)
		agent = "";
	if (!sse_coalesced_type(type)) {
		sse_flush(s, loop);
		sse_write_all(s, seq, type, fields);
		return;
	}
	TAILQ_FOREACH(sl, &s->slots, entry)
		if (strcmp(sl->type, type) == 0 &&
		    strcmp(sl->loop, loop) == 0 && strcmp(sl->agent, agent) == 0)
			break;
	if (sl != NULL) {
		TAILQ_REMOVE(&s->slots, sl, entry);
		json_decref(sl->fields);
	} else {
		sl = xcalloc(1, sizeof *sl);
		sl->type = xstrdup(type);
		sl->loop = xstrdup(loop);
		sl->agent = xstrdup(agent);
	}
	sl->seq = seq;
	/* a published event's fields are never changed: shared, not copied */
	sl->fields = json_incref((json_t *)fields);
	TAILQ_INSERT_TAIL(&s->slots, sl, entry);
	if (!evtimer_pending(s->flush_ev, NULL))
		sse_arm(s->flush_ev, s->flush_ms);
}

/* Replay into one new client. */
static void
sse_replay_cb(void *arg, uint64_t seq, const char *type, const json_t *fields)
{
	struct sse_client	*cl = arg;
	char			*buf;
	size_t			 len;

	buf = sse_format(seq, type, fields, &len);
	if (http_stream_write(cl->req, buf, len) == 0) {
		cl->last = seq;
		cl->sse->sent++;
	}
	free(buf);
}

/* The SSE stream of bus on base; flush_ms, beat_ms: 0 for the defaults. */
struct sse *
sse_new(struct event_base *base, struct bus *bus, uint64_t flush_ms,
    uint64_t beat_ms)
{
	struct sse	*s = xcalloc(1, sizeof *s);

	s->base = base;
	s->bus = bus;
	s->flush_ms = flush_ms != 0 ? flush_ms : SSE_FLUSH_MS;
	s->beat_ms = beat_ms != 0 ? beat_ms : SSE_HEARTBEAT_MS;
	TAILQ_INIT(&s->clients);
	TAILQ_INIT(&s->slots);
	s->flush_ev = evtimer_new(base, sse_flush_cb, s);
	s->beat_ev = evtimer_new(base, sse_beat_cb, s);
	s->obs = bus_observe(bus, sse_bus_cb, s);
	sse_arm(s->beat_ev, s->beat_ms);
	return s;
}

/*
 * Pending slots are sent, then the clients are left to the HTTP server
 * (freeing it closes them; their on_close must not find us): detached.
 */
void
sse_free(struct sse *s)
{
	struct sse_client	*cl;

	if (s == NULL)
		return;
	sse_flush(s, NULL);
	while ((cl = TAILQ_FIRST(&s->clients)) != NULL) {
		http_req_on_close(cl->req, NULL, NULL);
		http_stream_end(cl->req);
		TAILQ_REMOVE(&s->clients, cl, entry);
		free(cl);
	}
	bus_unobserve(s->bus, s->obs);
	event_free(s->flush_ev);
	event_free(s->beat_ev);
	free(s);
}

/*
 * Turns a request into a stream of the bus: a Last-Event-ID (field, or
 * ?lastEventId= for clients that cannot set it) replays what came after;
 * without one the stream starts with what happens next.  0, or -1 if the
 * request cannot stream (it has been answered).
 */
int
sse_attach(struct sse *s, struct http_req *r)
{
	const struct http_head	*h = http_req_head(r);
	struct sse_client	*cl;
	const char		*v;
	char			 q[32], *end;
	uint64_t		 after = 0;
	int			 have = 0;
	json_t			*o;

	if ((v = http_head_field(h, "last-event-id")) == NULL &&
	    http_query_get(h->query, "lastEventId", q, sizeof q) == 1)
		v = q;
	if (v != NULL && *v != '\0') {
		after = strtoull(v, &end, 10);
		if (*end != '\0') {
			http_reply_error(r, 400, "Last-Event-ID: not a number");
			return -1;
		}
		have = 1;
	}
	if (http_stream_begin(r, "text/event-stream") != 0) {
		http_reply_error(r, 400, "cannot stream this request");
		return -1;
	}
	cl = xcalloc(1, sizeof *cl);
	cl->sse = s;
	cl->req = r;
	TAILQ_INSERT_TAIL(&s->clients, cl, entry);
	s->nclients++;
	http_req_on_close(r, sse_client_gone, cl);
	/* "retry" tells a browser's EventSource how soon to reconnect */
	(void)http_stream_write(r, "retry: 1000\n\n", 13);
	if (!have) {
		cl->last = bus_last(s->bus);
		return 0;
	}
	if (bus_replay(s->bus, after, sse_replay_cb, cl) != 0) {
		o = json_pack("{s:I,s:I}", "after", (json_int_t)after, "now",
		    (json_int_t)bus_last(s->bus));
		sse_replay_cb(cl, bus_last(s->bus), "reset", o);
		json_decref(o);
	}
	return 0;
}

/*
 * Another stream of the same events (serve's /ws): fn gets each event as
 * it is written to the SSE clients, coalesced alike, in the same order;
 * fn NULL: none.  One tap at a time.
 */
void
sse_tap(struct sse *s, sse_tap_fn fn, void *arg)
{
	s->tap = fn;
	s->tap_arg = arg;
}

/* Streams open now. */
size_t
sse_nclients(const struct sse *s)
{
	return s->nclients;
}

/* Events written since the start, counting each client's copy. */
uint64_t
sse_sent(const struct sse *s)
{
	return s->sent;
}

/* The deepest client queue: bytes written that its reader has not taken. */
size_t
sse_queued_max(const struct sse *s)
{
	const struct sse_client	*cl;
	size_t			 n, max = 0;

	TAILQ_FOREACH(cl, &s->clients, entry)
		if ((n = http_stream_queued(cl->req)) > max)
			max = n;
	return max;
}

/* Coalesced events waiting for the next flush. */
size_t
sse_pending(const struct sse *s)
{
	const struct sse_slot	*sl;
	size_t			 n = 0;

	TAILQ_FOREACH(sl, &s->slots, entry)
		n++;
	return n;
}
