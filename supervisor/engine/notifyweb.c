/*
 * notifyweb.c: the webhook notification sink: its config (an http URL, a
 * 0600 secret file, the retry policy) and each delivery, a POST signed
 * with HMAC-SHA256 on the caller's base, retried with jittered backoff.
 */
#include <config.h>

#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/buffer.h>
#include <event2/keyvalq_struct.h>

#include "notify.h"
#include "sha256.h"
#include "xmalloc.h"

#define WEB_TIMEOUT_MS		10000
#define WEB_RETRIES		4
#define WEB_BACKOFF_MS		1000
#define WEB_BACKOFF_CAP_MS	60000		/* the doubling stops here */
#define WEB_RETRY_AFTER_MAX_S	3600		/* a 429's Retry-After, at most */
#define WEB_SECRET_MAX		4096
#define WEB_SNIPPET		200		/* response body kept for errors */

/* One sink: where to POST, the secret, the retry policy, what is in flight. */
struct webhook {
	char			*name;
	char			*host;		/* to connect to (no brackets) */
	char			*hosthdr;	/* the Host header */
	char			*path;		/* path and query */
	int			 port;
	uint8_t			*secret;	/* NULL: unsigned */
	size_t			 secret_len;
	unsigned		 timeout_ms, retries, backoff_ms;
	struct event_base	*base;		/* the first send's; dns is on it */
	struct evdns_base	*dns;
	struct webdel		*inflight;
};

/*
 * What a delivery's one timer is for: the wait before a try, the try's
 * deadline, or the try's answer, acted on from the loop and not inside
 * evhttp's callback (which goes on using the connection after it).
 */
enum web_phase {
	WEB_WAIT,
	WEB_TRY,
	WEB_ANSWERED,
};

/* One delivery: the body, its id and signature, the attempt in flight. */
struct webdel {
	struct webhook			*wh;
	struct webdel			*next, **prevp;
	struct event_base		*base;
	char				*body;
	size_t				 len;
	char				 id[17];
	char				 sig[8 + 2 * SHA256_LEN];
	notify_done_fn			 done;
	void				*arg;
	unsigned			 attempts;
	struct evhttp_connection	*conn;		/* the attempt in flight */
	struct event			*timer;		/* its deadline, or the wait */
	enum web_phase			 phase;		/* what the timer is for */
	int				 code;		/* the answer's status, or 0 */
	unsigned			 retry_after_s;
	char				 msg[WEB_SNIPPET + 64];	/* why it failed */
	int				 neterr;	/* an evhttp error was seen */
	enum evhttp_request_error	 err;
	char				 snippet[WEB_SNIPPET + 1];
	size_t				 snip;
};

static void	web_attempt(struct webdel *);

/* Config errors name the key in full, as config.c's messages do. */
static int
web_conf_error(char **err, const char *name, const char *key,
    const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	free(*err);
	xasprintf(err, "notify.sinks.%s.%s: %s", name, key,
	    msg != NULL ? msg : "invalid");
	free(msg);
	return -1;
}

/* An optional non-negative integer key no larger than max. */
static int
web_conf_uint(const json_t *conf, const char *name, const char *key,
    unsigned max, unsigned *out, char **err)
{
	const json_t	*v = json_object_get(conf, key);

	if (v == NULL)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > (json_int_t)max)
		return web_conf_error(err, name, key,
		    "expected an integer from 0 to %u", max);
	*out = (unsigned)json_integer_value(v);
	return 0;
}

/*
 * The URL: http only (no TLS library is linked: a local TLS proxy does
 * https), a host, the port (80 by default), the path and query.
 */
static int
web_conf_url(struct webhook *wh, const json_t *v, char **err)
{
	struct evhttp_uri	*u;
	const char		*s, *host, *path, *q;
	size_t			 n;

	if (!json_is_string(v) || *(s = json_string_value(v)) == '\0')
		return web_conf_error(err, wh->name, "url",
		    "expected a string http://HOST[:PORT]/PATH");
	if ((u = evhttp_uri_parse_with_flags(s, 0)) == NULL)
		return web_conf_error(err, wh->name, "url", "not a URL: %s", s);
	if (evhttp_uri_get_scheme(u) != NULL &&
	    strcasecmp(evhttp_uri_get_scheme(u), "https") == 0) {
		evhttp_uri_free(u);
		return web_conf_error(err, wh->name, "url", "https is not "
		    "supported (no TLS library): use http, or an https "
		    "proxy on loopback");
	}
	host = evhttp_uri_get_host(u);
	if (evhttp_uri_get_scheme(u) == NULL ||
	    strcasecmp(evhttp_uri_get_scheme(u), "http") != 0 ||
	    host == NULL || *host == '\0' || evhttp_uri_get_userinfo(u)) {
		evhttp_uri_free(u);
		return web_conf_error(err, wh->name, "url", "expected "
		    "http://HOST[:PORT]/PATH (no user info): %s", s);
	}
	wh->port = evhttp_uri_get_port(u) > 0 ? evhttp_uri_get_port(u) : 80;
	n = strlen(host);
	wh->host = host[0] == '[' && n > 2 ? xstrndup(host + 1, n - 2) :
	    xstrdup(host);
	if (wh->port == 80)
		wh->hosthdr = xstrdup(host);
	else
		xasprintf(&wh->hosthdr, "%s:%d", host, wh->port);
	path = evhttp_uri_get_path(u);
	q = evhttp_uri_get_query(u);
	xasprintf(&wh->path, "%s%s%s", path != NULL && *path != '\0' ? path :
	    "/", q != NULL ? "?" : "", q != NULL ? q : "");
	evhttp_uri_free(u);
	return 0;
}

/*
 * The secret must be ours alone: a regular file (not a symlink, not a
 * FIFO that would block the open), owned by us, mode exactly 0600.  One
 * trailing newline (an editor's) is not part of it.
 */
static int
web_conf_secret(struct webhook *wh, const json_t *v, char **err)
{
	struct stat	 st;
	ssize_t		 r;
	size_t		 n = 0;
	int		 fd;

	if (!json_is_string(v) || *json_string_value(v) == '\0')
		return web_conf_error(err, wh->name, "secret_file",
		    "expected a path");
	fd = open(json_string_value(v),
	    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd == -1)
		return web_conf_error(err, wh->name, "secret_file", "%s: %s",
		    json_string_value(v), errno == ELOOP ? "a symlink" :
		    strerror(errno));
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & 07777) != 0600 || st.st_uid != geteuid()) {
		close(fd);
		return web_conf_error(err, wh->name, "secret_file", "%s: must "
		    "be a regular file of mode 0600 owned by uid %u",
		    json_string_value(v), (unsigned)geteuid());
	}
	if (st.st_size > WEB_SECRET_MAX + 2) {	/* + "\r\n" */
		close(fd);
		return web_conf_error(err, wh->name, "secret_file", "%s: "
		    "longer than %d bytes", json_string_value(v),
		    WEB_SECRET_MAX);
	}
	wh->secret = xmalloc(WEB_SECRET_MAX + 1);
	while ((r = read(fd, wh->secret + n, WEB_SECRET_MAX + 1 - n)) > 0 &&
	    (n += (size_t)r) <= WEB_SECRET_MAX)
		;
	close(fd);
	if (n > 0 && wh->secret[n - 1] == '\n')
		n--;
	if (n > 0 && wh->secret[n - 1] == '\r')
		n--;
	wh->secret_len = n;
	if (r < 0 || n == 0 || n > WEB_SECRET_MAX)
		return web_conf_error(err, wh->name, "secret_file", "%s: %s",
		    json_string_value(v), r < 0 ? strerror(errno) : n == 0 ?
		    "empty" : "longer than the limit");
	return 0;
}

/* Frees a sink whose deliveries are all gone. */
static void
web_free_conf(struct webhook *wh)
{
	if (wh->dns != NULL)
		evdns_base_free(wh->dns, 0);
	if (wh->secret != NULL)
		explicit_bzero(wh->secret, WEB_SECRET_MAX + 1);
	free(wh->secret);
	free(wh->name);
	free(wh->host);
	free(wh->hosthdr);
	free(wh->path);
	free(wh);
}

/* The sink's object as the contract gives it; unknown keys are errors. */
static int
web_parse(const json_t *conf, const char *name, void **sink, char **err)
{
	static const char *const keys[] = { "type", "url", "secret_file",
		"timeout_ms", "retries", "backoff_ms" };
	struct webhook	*wh = xcalloc(1, sizeof *wh);
	const char	*key;
	json_t		*v;
	size_t		 i;

	*sink = NULL;
	wh->name = xstrdup(name);
	wh->timeout_ms = WEB_TIMEOUT_MS;
	wh->retries = WEB_RETRIES;
	wh->backoff_ms = WEB_BACKOFF_MS;
	json_object_foreach((json_t *)conf, key, v) {
		for (i = 0; i < sizeof keys / sizeof keys[0] &&
		    strcmp(key, keys[i]) != 0; i++)
			;
		if (i == sizeof keys / sizeof keys[0]) {
			web_conf_error(err, name, key, "unknown key");
			goto fail;
		}
	}
	if (web_conf_url(wh, json_object_get(conf, "url"), err) == -1 ||
	    ((v = json_object_get(conf, "secret_file")) != NULL &&
	    web_conf_secret(wh, v, err) == -1) ||
	    web_conf_uint(conf, name, "timeout_ms", 3600000, &wh->timeout_ms,
	    err) == -1 ||
	    web_conf_uint(conf, name, "retries", 100, &wh->retries, err) == -1 ||
	    web_conf_uint(conf, name, "backoff_ms", WEB_BACKOFF_CAP_MS,
	    &wh->backoff_ms, err) == -1)
		goto fail;
	if (wh->timeout_ms == 0) {
		web_conf_error(err, name, "timeout_ms", "must be positive");
		goto fail;
	}
	*sink = wh;
	return 0;
fail:
	web_free_conf(wh);
	return -1;
}

/* Random bytes for ids and jitter; the clock when getrandom cannot. */
static void
web_random(void *buf, size_t n)
{
	struct timespec	ts;
	uint8_t		*p = buf;
	size_t		 i;

	if (getrandom(buf, n, GRND_NONBLOCK) == (ssize_t)n)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (i = 0; i < n; i++)
		p[i] = (uint8_t)((uint64_t)ts.tv_nsec >> (8 * (i % 4))) ^
		    (uint8_t)(i * 131u);
}

/* Lower-case hex of n bytes into out (2n + 1 bytes). */
static void
web_hex(const uint8_t *p, size_t n, char *out)
{
	static const char	digits[] = "0123456789abcdef";
	size_t			i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

/* Arms the delivery's one timer for what comes next. */
static void
web_timer_set(struct webdel *d, unsigned ms, enum web_phase phase)
{
	struct timeval	tv = { ms / 1000, (ms % 1000) * 1000 };

	d->phase = phase;
	evtimer_add(d->timer, &tv);
}

/* Drops the attempt in flight: no callback of it comes after this. */
static void
web_drop_conn(struct webdel *d)
{
	if (d->conn != NULL)
		evhttp_connection_free(d->conn);
	d->conn = NULL;
}

/*
 * The end of a delivery: it leaves the sink and is freed before done
 * runs, so done may free the sink or send again.
 */
static void
web_finish(struct webdel *d, int ok, const char *error)
{
	notify_done_fn	 done = d->done;
	void		*arg = d->arg;
	unsigned	 attempts = d->attempts;
	char		*msg = error != NULL ? xstrdup(error) : NULL;

	web_drop_conn(d);
	*d->prevp = d->next;
	if (d->next != NULL)
		d->next->prevp = d->prevp;
	event_free(d->timer);
	free(d->body);
	free(d);
	done(arg, ok, msg, attempts);
	free(msg);
}

/*
 * The wait before attempt n+1: backoff_ms doubled n-1 times up to the
 * cap, the upper half of it random (so many senders spread out), and
 * never shorter than a 429's Retry-After.
 */
static unsigned
web_backoff(const struct webdel *d, unsigned retry_after_s)
{
	unsigned	ms = d->wh->backoff_ms, i, r;

	for (i = 1; i < d->attempts && ms < WEB_BACKOFF_CAP_MS; i++)
		ms *= 2;
	if (ms > WEB_BACKOFF_CAP_MS)
		ms = WEB_BACKOFF_CAP_MS;
	web_random(&r, sizeof r);
	ms = ms / 2 + r % (ms - ms / 2 + 1);
	if (retry_after_s > WEB_RETRY_AFTER_MAX_S)
		retry_after_s = WEB_RETRY_AFTER_MAX_S;
	return ms > retry_after_s * 1000 ? ms : retry_after_s * 1000;
}

/* A failed attempt: the last one, or a final answer, ends the delivery. */
static void
web_failed(struct webdel *d, int retry, unsigned retry_after_s,
    const char *error)
{
	if (!retry || d->attempts > d->wh->retries) {
		web_finish(d, 0, error);
		return;
	}
	web_timer_set(d, web_backoff(d, retry_after_s), WEB_WAIT);
}

/*
 * The try's answer, on the loop's turn after evhttp gave it (so its
 * connection can go now): 2xx is done; 5xx, 429 and no response at all
 * are tried again; any other status is the receiver's final word.
 */
static void
web_answered(struct webdel *d)
{
	web_drop_conn(d);
	if (d->code >= 200 && d->code < 300)
		web_finish(d, 1, NULL);
	else
		web_failed(d, d->code <= 0 || d->code == 429 || d->code >= 500,
		    d->retry_after_s, d->msg);
}

/* The timer: try again, act on an answer, or give up on a slow try. */
static void
web_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct webdel	*d = arg;
	char		 msg[64];

	(void)fd, (void)what;
	if (d->phase == WEB_WAIT) {
		web_attempt(d);
		return;
	}
	if (d->phase == WEB_ANSWERED) {
		web_answered(d);
		return;
	}
	web_drop_conn(d);
	snprintf(msg, sizeof msg, "timeout after %u ms", d->wh->timeout_ms);
	web_failed(d, 1, 0, msg);
}

/* What went wrong on the wire, for the failure's message. */
static void
web_error_cb(enum evhttp_request_error err, void *arg)
{
	struct webdel	*d = arg;

	d->neterr = 1;
	d->err = err;
}

/*
 * The response body, as it comes: its first bytes kept for the error
 * message (one line, printable), the rest dropped (evhttp drains it).
 */
static void
web_chunk_cb(struct evhttp_request *req, void *arg)
{
	struct webdel	*d = arg;
	struct evbuffer	*in = evhttp_request_get_input_buffer(req);
	ev_ssize_t	 n;
	size_t		 i;

	if (d->snip < WEB_SNIPPET) {
		n = evbuffer_copyout(in, d->snippet + d->snip,
		    WEB_SNIPPET - d->snip);
		for (i = d->snip; n > 0 && i < d->snip + (size_t)n; i++)
			if ((unsigned char)d->snippet[i] < 0x20 ||
			    (unsigned char)d->snippet[i] == 0x7f)
				d->snippet[i] = ' ';
		if (n > 0)
			d->snip += (size_t)n;
	}
	d->snippet[d->snip] = '\0';
}

/* The seconds of a 429's Retry-After (an HTTP date counts as none). */
static unsigned
web_retry_after(struct evhttp_request *req)
{
	const char	*v = evhttp_find_header(
			    evhttp_request_get_input_headers(req), "Retry-After");
	char		*end;
	unsigned long	 s;

	if (v == NULL)
		return 0;
	errno = 0;
	s = strtoul(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || s > WEB_RETRY_AFTER_MAX_S)
		return s > WEB_RETRY_AFTER_MAX_S ? WEB_RETRY_AFTER_MAX_S : 0;
	return (unsigned)s;
}

/*
 * The try's end as evhttp tells it (req NULL or status 0: no answer),
 * kept for web_answered on the loop's next turn.
 */
static void
web_response_cb(struct evhttp_request *req, void *arg)
{
	struct webdel	*d = arg;

	d->code = req != NULL ? evhttp_request_get_response_code(req) : 0;
	d->retry_after_s = d->code == 429 ? web_retry_after(req) : 0;
	if (d->code > 0)
		snprintf(d->msg, sizeof d->msg, "HTTP %d%s%s", d->code,
		    d->snip > 0 ? ": " : "", d->snippet);
	else
		snprintf(d->msg, sizeof d->msg, "%s", !d->neterr ?
		    "connection failed, no response" :
		    d->err == EVREQ_HTTP_TIMEOUT ? "timeout" :
		    d->err == EVREQ_HTTP_EOF ? "connection failed or closed "
		    "before a response" : d->err == EVREQ_HTTP_INVALID_HEADER ?
		    "an invalid response" : "connection error");
	web_timer_set(d, 0, WEB_ANSWERED);
}

/* The request's headers: the receiver's dedupe id and the signature. */
static void
web_headers(struct webdel *d, struct evhttp_request *req)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);

	evhttp_add_header(h, "Host", d->wh->hosthdr);
	evhttp_add_header(h, "Content-Type", "application/json");
	evhttp_add_header(h, "User-Agent", "ccw-supervisor/" PACKAGE_VERSION);
	evhttp_add_header(h, "Connection", "close");
	evhttp_add_header(h, "X-CCW-Delivery", d->id);
	if (d->wh->secret != NULL)
		evhttp_add_header(h, "X-CCW-Signature", d->sig);
}

/*
 * The resolver of names: /etc/resolv.conf and /etc/hosts, read once a
 * sink.  It must not keep the loop alive while idle, and the flag that
 * says so must come first: evdns_base_new(INITIALIZE_NAMESERVERS) left
 * the nameserver's socket as a persistent event (libevent 2.1.12).
 */
static struct evdns_base *
web_dns_new(struct event_base *base)
{
	struct evdns_base	*dns;

	dns = evdns_base_new(base, EVDNS_BASE_DISABLE_WHEN_INACTIVE);
	if (dns != NULL)
		(void)evdns_base_resolv_conf_parse(dns, DNS_OPTIONS_ALL,
		    "/etc/resolv.conf");
	/* none added (no descriptor to spare, say): made again next try */
	if (dns != NULL && evdns_base_count_nameservers(dns) == 0) {
		evdns_base_free(dns, 0);
		dns = NULL;
	}
	return dns;
}

/* An address, not a name: evhttp needs no resolver (nor blocks) for it. */
static int
web_host_numeric(const char *host)
{
	unsigned char	buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, host, buf) == 1 ||
	    inet_pton(AF_INET6, host, buf) == 1;
}

/*
 * One attempt: a fresh connection (the name resolved by evdns on the
 * base, never blocking), the POST, the deadline.  A failure to start
 * counts as a failed attempt.
 */
static void
web_attempt(struct webdel *d)
{
	struct webhook		*wh = d->wh;
	struct evhttp_request	*req;
	struct timeval		 tv = { wh->timeout_ms / 1000 + 1,
				    (wh->timeout_ms % 1000) * 1000 };
	int			 rc;

	d->attempts++;
	d->neterr = 0;
	d->snip = 0;
	d->snippet[0] = '\0';
	if (d->base != wh->base) {
		web_failed(d, 0, 0, "one sink used from two event bases");
		return;
	}
	if (wh->dns == NULL && !web_host_numeric(wh->host))
		wh->dns = web_dns_new(wh->base);
	if (wh->dns == NULL && !web_host_numeric(wh->host)) {
		web_failed(d, 1, 0, "no name server to resolve the host");
		return;
	}
	if ((d->conn = evhttp_connection_base_new(wh->base, wh->dns, wh->host,
	    (unsigned short)wh->port)) == NULL) {
		web_failed(d, 1, 0, "cannot start a connection");
		return;
	}
	/* evhttp's own (an idle time) a second after ours (the total) */
	evhttp_connection_set_timeout_tv(d->conn, &tv);
	req = evhttp_request_new(web_response_cb, d);
	evhttp_request_set_chunked_cb(req, web_chunk_cb);
	evhttp_request_set_error_cb(req, web_error_cb);
	web_headers(d, req);
	evbuffer_add(evhttp_request_get_output_buffer(req), d->body, d->len);
	/* a connect refused at once calls web_response_cb in here */
	d->phase = WEB_TRY;
	rc = evhttp_make_request(d->conn, req, EVHTTP_REQ_POST, wh->path);
	if (d->phase != WEB_TRY)
		return;
	if (rc == -1) {
		web_drop_conn(d);
		web_failed(d, 1, 0, "cannot start a request");
		return;
	}
	web_timer_set(d, wh->timeout_ms, WEB_TRY);
}

/*
 * A delivery: the body copied, signed once (every attempt carries the
 * same signature and id), the first attempt from the loop, so done is
 * never called before send returns.
 */
static void
web_send(void *sink, struct event_base *base, const char *body, size_t len,
    notify_done_fn done, void *arg)
{
	struct webhook	*wh = sink;
	struct webdel	*d = xcalloc(1, sizeof *d);
	uint8_t		 raw[SHA256_LEN];

	if (wh->base == NULL)
		wh->base = base;
	d->wh = wh;
	d->body = xmalloc(len + 1);
	memcpy(d->body, body, len);
	d->len = len;
	d->done = done;
	d->arg = arg;
	web_random(raw, 8);
	web_hex(raw, 8, d->id);
	if (wh->secret != NULL) {
		sha256_hmac(wh->secret, wh->secret_len, body, len, raw);
		memcpy(d->sig, "sha256=", 7);
		web_hex(raw, SHA256_LEN, d->sig + 7);
	}
	d->base = base;
	d->timer = evtimer_new(base, web_timer_cb, d);
	d->next = wh->inflight;
	d->prevp = &wh->inflight;
	if (d->next != NULL)
		d->next->prevp = &d->next;
	wh->inflight = d;
	web_timer_set(d, 0, WEB_WAIT);
}

/* Cancels every delivery (no done after this) and frees the sink. */
static void
web_free(void *sink)
{
	struct webhook	*wh = sink;
	struct webdel	*d;

	if (wh == NULL)
		return;
	while ((d = wh->inflight) != NULL) {
		wh->inflight = d->next;
		web_drop_conn(d);
		event_free(d->timer);
		free(d->body);
		free(d);
	}
	web_free_conf(wh);
}

/* Named members: notify.h's row may grow optional ones (NULL here). */
const struct notify_sink_type notify_webhook = {
	.type = "webhook",
	.parse = web_parse,
	.send = web_send,
	.free = web_free,
};
