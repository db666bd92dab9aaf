/*
 * http-serve.c: serve's HTTP server (supervisor/api/http.c) behind a few
 * test routes, for tests/regress/http-limits.sh.  Usage:
 *   http-serve PORTFILE [-c CONNS] [-r REQUEST_MS] [-i IDLE_MS] [-s STREAM]
 *       [-k KEEP] [-w PING_MS]
 * Listens on 127.0.0.1, any port, written to PORTFILE once listening.
 *   GET  /health      {"ok":true}
 *   POST /echo        {"bytes":N,"sum":S} (S: the sum of the body's bytes)
 *   GET  /later       {"later":true} 100 ms later (an answer that waits)
 *   GET  /stream      text/event-stream: an event every 10 ms, 64 KiB each
 *                     with ?big=1, until the client leaves or falls behind
 *   GET  /stats       the server's counters and how many waiting answers
 *                     and streams were told their client left
 *   GET  /events      the bus as Server-Sent Events (supervisor/api/sse.c)
 *   GET  /ws          the same events as a WebSocket (supervisor/api/ws.c),
 *                     pinging every PING_MS (-w; default ws.c's)
 *   POST /publish     [{"type": T, ...fields}, ...] onto the bus, in order
 * -k N: the bus keeps N events for replay (default 1024).
 * Every other path 404, a wrong method 405.  SIGTERM: frees all, exit 0.
 */
#include <config.h>

#include <sys/resource.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "bus.h"
#include "http.h"
#include "sse.h"
#include "ws.h"
#include "xmalloc.h"

struct hs_pending {
	struct hs		*hs;
	struct http_req		*req;
	struct event		*ev;
	int			 big;
	unsigned long		 seq;
};

struct hs {
	struct event_base	*base;
	struct http_server	*srv;
	struct bus		*bus;
	struct sse		*sse;
	struct ws		*ws;
	unsigned long		 told;		/* on_close calls */
	unsigned long		 inflight;
};

/* The client left: forget the request, drop its timer. */
static void
hs_gone(struct http_req *r, void *arg)
{
	struct hs_pending	*p = arg;

	(void)r;
	p->hs->told++;
	p->hs->inflight--;
	event_free(p->ev);
	free(p);
}

/* /later's answer, or /stream's next event. */
static void
hs_tick(evutil_socket_t fd, short what, void *arg)
{
	struct hs_pending	*p = arg;
	struct timeval		 tv = { 0, 10000 };
	json_t			*j;
	char			*ev;
	size_t			 n;

	(void)fd;
	(void)what;
	if (strcmp(http_req_head(p->req)->path, "/later") == 0) {
		j = json_pack("{s:b}", "later", 1);
		p->hs->inflight--;
		http_reply_json(p->req, 200, j);
		json_decref(j);
		event_free(p->ev);
		free(p);
		return;
	}
	n = p->big ? 65536 : 16;
	ev = xmalloc(n + 64);
	n = (size_t)snprintf(ev, n + 64, "id: %lu\ndata: %0*d\n\n", ++p->seq,
	    (int)n, 0);
	/* a client too far behind is closed: hs_gone runs later */
	if (http_stream_write(p->req, ev, n) == 0)
		evtimer_add(p->ev, &tv);
	free(ev);
}

/* POST /publish: each object onto the bus; the reply has the last seq. */
static void
hs_publish(struct hs *hs, struct http_req *r)
{
	json_t		*arr, *e, *f, *j;
	json_error_t	 jerr;
	const char	*body, *type;
	uint64_t	 seq = 0;
	size_t		 len, i;

	body = http_req_body(r, &len);
	if ((arr = json_loadb(body, len, 0, &jerr)) == NULL ||
	    !json_is_array(arr)) {
		json_decref(arr);
		http_reply_error(r, 400, "not a JSON array");
		return;
	}
	json_array_foreach(arr, i, e) {
		type = json_string_value(json_object_get(e, "type"));
		if (type == NULL)
			continue;
		f = json_deep_copy(e);
		json_object_del(f, "type");
		seq = bus_publish(hs->bus, type, f);
	}
	json_decref(arr);
	j = json_pack("{s:I}", "seq", (json_int_t)seq);
	http_reply_json(r, 200, j);
	json_decref(j);
}

/* The routes above. */
static void
hs_handle(struct http_req *r, void *arg)
{
	struct hs		*hs = arg;
	const struct http_head	*h = http_req_head(r);
	struct http_stats	 st;
	struct ws_stats		 ws;
	struct hs_pending	*p;
	struct timeval		 tv = { 0, 100000 };
	const char		*body;
	size_t			 len, i;
	unsigned long long	 sum = 0;
	json_t			*j;
	char			 big[4];
	int			 want_get;

	want_get = strcmp(h->path, "/health") == 0 ||
	    strcmp(h->path, "/later") == 0 || strcmp(h->path, "/stream") == 0 ||
	    strcmp(h->path, "/stats") == 0 || strcmp(h->path, "/events") == 0 ||
	    strcmp(h->path, "/ws") == 0;
	if (!want_get && strcmp(h->path, "/echo") != 0 &&
	    strcmp(h->path, "/publish") != 0) {
		http_reply_error(r, 404, "no route %s", h->path);
		return;
	}
	if (want_get ? h->method != HTTP_GET && h->method != HTTP_HEAD :
	    h->method != HTTP_POST) {
		j = json_pack("{s:b,s:s}", "success", 0, "error",
		    "method not allowed");
		body = json_dumps(j, JSON_COMPACT);
		http_reply(r, 405, "application/json", want_get ?
		    "Allow: GET, HEAD\r\n" : "Allow: POST\r\n", body,
		    strlen(body));
		free((char *)body);
		json_decref(j);
		return;
	}
	if (strcmp(h->path, "/health") == 0) {
		j = json_pack("{s:b}", "ok", 1);
		http_reply_json(r, 200, j);
		json_decref(j);
	} else if (strcmp(h->path, "/echo") == 0) {
		body = http_req_body(r, &len);
		for (i = 0; i < len; i++)
			sum += (unsigned char)body[i];
		j = json_pack("{s:I,s:I}", "bytes", (json_int_t)len, "sum",
		    (json_int_t)sum);
		http_reply_json(r, 200, j);
		json_decref(j);
	} else if (strcmp(h->path, "/events") == 0) {
		(void)sse_attach(hs->sse, r);
	} else if (strcmp(h->path, "/ws") == 0) {
		ws_attach(hs->ws, r);
	} else if (strcmp(h->path, "/publish") == 0) {
		hs_publish(hs, r);
	} else if (strcmp(h->path, "/stats") == 0) {
		http_server_stats(hs->srv, &st);
		ws_stats(hs->ws, &ws);
		j = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,"
		    "s:I}", "ws_clients", (json_int_t)ws.clients, "ws_dropped",
		    (json_int_t)ws.dropped, "ws_sent", (json_int_t)ws.sent,
		    "accepted", (json_int_t)st.accepted, "refused",
		    (json_int_t)st.refused, "requests", (json_int_t)st.requests,
		    "open", (json_int_t)st.open, "streams",
		    (json_int_t)st.streams, "told", (json_int_t)hs->told,
		    "inflight", (json_int_t)hs->inflight, "sse_clients",
		    (json_int_t)sse_nclients(hs->sse), "sse_sent",
		    (json_int_t)sse_sent(hs->sse));
		http_reply_json(r, 200, j);
		json_decref(j);
	} else {
		if (strcmp(h->path, "/stream") == 0 &&
		    http_stream_begin(r, "text/event-stream") != 0) {
			http_reply_error(r, 400, "cannot stream");
			return;
		}
		p = xcalloc(1, sizeof *p);
		p->hs = hs;
		p->req = r;
		p->big = http_query_get(h->query, "big", big, sizeof big) == 1;
		p->ev = evtimer_new(hs->base, hs_tick, p);
		hs->inflight++;
		http_req_on_close(r, hs_gone, p);
		if (strcmp(h->path, "/stream") == 0)
			tv.tv_usec = 0;
		evtimer_add(p->ev, &tv);
	}
}

/* SIGTERM: out of the loop, everything freed. */
static void
hs_term(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

int
main(int argc, char **argv)
{
	struct http_limits	 lim = HTTP_LIMITS_DEFAULT;
	struct hs		 hs;
	struct event		*term;
	struct rlimit		 rl;
	FILE			*fp;
	char			 tmp[4096];
	char			*err = NULL;
	size_t			 keep = 1024;
	uint64_t		 ping_ms = 0;
	int			 c;

	while ((c = getopt(argc, argv, "c:r:i:s:k:w:")) != -1) {
		switch (c) {
		case 'w':
			ping_ms = strtoull(optarg, NULL, 10);
			break;
		case 'k':
			keep = strtoul(optarg, NULL, 10);
			break;
		case 'c':
			lim.conns_max = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'r':
			lim.request_ms = strtoull(optarg, NULL, 10);
			break;
		case 'i':
			lim.idle_ms = strtoull(optarg, NULL, 10);
			break;
		case 's':
			lim.stream_max = strtoull(optarg, NULL, 10);
			break;
		default:
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: http-serve PORTFILE [-c N] [-r MS] "
		    "[-i MS] [-s BYTES] [-k N] [-w MS]\n");
		return 2;
	}
	/* a thousand idle clients need a thousand descriptors */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	memset(&hs, 0, sizeof hs);
	hs.base = event_base_new();
	hs.srv = http_server_new(hs.base, &lim, hs_handle, &hs);
	hs.bus = bus_new(keep);
	hs.sse = sse_new(hs.base, hs.bus, 0, 0);
	hs.ws = ws_new(hs.base, hs.sse, ping_ms, 0);
	if (http_server_listen(hs.srv, "127.0.0.1:0", &err) != 0) {
		fprintf(stderr, "http-serve: %s\n", err);
		free(err);
		return 1;
	}
	/*
	 * Written whole, then renamed into place: a test that sees the file
	 * must never read it empty (it polls for it every 20 ms).
	 */
	snprintf(tmp, sizeof tmp, "%s.tmp", argv[optind]);
	if ((fp = fopen(tmp, "w")) == NULL)
		return 1;
	fprintf(fp, "%d\n", http_server_port(hs.srv));
	if (fclose(fp) != 0 || rename(tmp, argv[optind]) != 0)
		return 1;
	term = evsignal_new(hs.base, SIGTERM, hs_term, hs.base);
	evsignal_add(term, NULL);
	event_base_dispatch(hs.base);
	ws_free(hs.ws);
	sse_free(hs.sse);
	http_server_free(hs.srv);
	bus_free(hs.bus);
	event_free(term);
	event_base_free(hs.base);
	return 0;
}
