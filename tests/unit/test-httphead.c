/*
 * test-httphead.c: the request-head parser of serve's HTTP server on good
 * heads, on every refusal it owns (each with its status code) and on
 * every way of cutting a good head short.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "httphead.h"
#include "tap.h"

#define MAX	16384

/* Parses s whole; returns the status, *code the refusal's. */
static enum http_head_status
parse(const char *s, struct http_head *h, size_t *used, int *code,
    const char **why)
{
	*code = 0;
	*why = NULL;
	*used = 0;
	return http_head_parse(s, strlen(s), MAX, h, used, code, why);
}

/* A head that must be refused with that code. */
static void
refused(const char *s, int want, const char *what)
{
	struct http_head	 h;
	size_t			 used;
	int			 code;
	const char		*why;
	enum http_head_status	 st = parse(s, &h, &used, &code, &why);

	tap_ok(st == HTTP_HEAD_BAD && code == want, "%s: %d (got %s %d: %s)",
	    what, want, st == HTTP_HEAD_BAD ? "refused" : "not refused", code,
	    why != NULL ? why : "-");
	if (st == HTTP_HEAD_DONE)
		http_head_clear(&h);
}

/* A cookie walker's reader: appends "value|" to arg; stops at "stop". */
static int
cookie_seen(const char *v, size_t n, void *arg)
{
	char	*out = arg;

	strncat(out, v, n);
	strcat(out, "|");
	return n == 4 && memcmp(v, "stop", 4) == 0 ? 7 : 0;
}

/* Every cookie of a name across Cookie fields, in order, and the stop. */
static void
cookies(void)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: x\r\nCookie: a=1;"
	    " ab=2;a=3\r\nCookie:  a=; b=4 ;a=stop; a=5\r\n\r\n";
	struct http_head	 h;
	size_t			 used;
	int			 code;
	const char		*why;
	char			 seen[64] = "";

	tap_ok(parse(req, &h, &used, &code, &why) == HTTP_HEAD_DONE,
	    "a head with two Cookie fields");
	tap_is_int(http_head_cookies(&h, "a", cookie_seen, seen), 7,
	    "http_head_cookies: the reader's non-zero is returned");
	tap_is_str(seen, "1|3||stop|", "each cookie 'a' in order, not 'ab'; "
	    "the walk stops where the reader says");
	seen[0] = '\0';
	tap_is_int(http_head_cookies(&h, "zz", cookie_seen, seen), 0,
	    "no such cookie: 0");
	http_head_clear(&h);
}

int
main(void)
{
	static const char good[] = "\r\nPOST /api/loops/v2/a%20b?x=1&y=two+"
	    "words&z=%2F HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n"
	    "X-Thing:  spaced value \t\r\nConnection: Keep-Alive\r\n\r\nhello";
	struct http_head	 h;
	size_t			 used, i, n;
	int			 code, more = 1;
	const char		*why;
	char			 v[32], *big;

	tap_ok(parse(good, &h, &used, &code, &why) == HTTP_HEAD_DONE,
	    "a good head parses");
	tap_is_int((long long)used, (long long)(strlen(good) - 5),
	    "used: the head with its blank line, not the body");
	tap_ok(h.method == HTTP_POST && strcmp(h.method_name, "POST") == 0,
	    "method POST");
	tap_is_str(h.path, "/api/loops/v2/a b", "the path is decoded");
	tap_is_str(h.query, "x=1&y=two+words&z=%2F", "the query is kept raw");
	tap_ok(http_query_get(h.query, "y", v, sizeof v) == 1 &&
	    strcmp(v, "two words") == 0, "a query value is decoded (%s)", v);
	tap_ok(http_query_get(h.query, "z", v, sizeof v) == 1 &&
	    strcmp(v, "/") == 0, "%%2F in a query value");
	tap_ok(http_query_get(h.query, "nope", v, sizeof v) == 0,
	    "an absent query key");
	tap_ok(http_query_get("k=0123456789", "k", v, 5) == -1,
	    "a query value longer than the buffer is refused");
	tap_is_int((long long)h.content_length, 5, "Content-Length");
	tap_is_str(http_head_field(&h, "x-thing"), "spaced value",
	    "field names are lower case; values trimmed");
	tap_ok(h.keep_alive && h.minor == 1, "HTTP/1.1 keeps the connection");
	http_head_clear(&h);
	cookies();

	/* every cut of the good head is incomplete, never an error */
	n = strlen(good) - 5 - 1;
	for (i = 0; i < n && more; i++)
		if (http_head_parse(good, i, MAX, &h, &used, &code, &why) !=
		    HTTP_HEAD_MORE)
			more = 0;
	tap_ok(more, "every prefix of a good head asks for more (%zu)", i);

	tap_ok(parse("GET / HTTP/1.0\nHost: x\n\n", &h, &used, &code, &why) ==
	    HTTP_HEAD_DONE && !h.keep_alive && h.method == HTTP_GET,
	    "bare LF lines; HTTP/1.0 closes by default");
	http_head_clear(&h);
	tap_ok(parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
	    &h, &used, &code, &why) == HTTP_HEAD_DONE && !h.keep_alive,
	    "Connection: close");
	http_head_clear(&h);
	tap_ok(parse("GET http://example.com/x?a=b HTTP/1.1\r\nHost: x\r\n\r\n",
	    &h, &used, &code, &why) == HTTP_HEAD_DONE &&
	    strcmp(h.path, "/x") == 0 && strcmp(h.query, "a=b") == 0,
	    "absolute-form: the path and query kept");
	http_head_clear(&h);
	tap_ok(parse("BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n", &h, &used, &code,
	    &why) == HTTP_HEAD_DONE && h.method == HTTP_OTHER,
	    "an unknown method parses (the router answers 405)");
	http_head_clear(&h);

	/* the limit: 431 as soon as no head can fit, never waiting */
	n = MAX + 100;
	big = malloc(n + 1);
	memcpy(big, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: ", 33);
	memset(big + 33, 'a', n - 33);
	big[n] = '\0';
	tap_ok(http_head_parse(big, MAX, MAX, &h, &used, &code, &why) ==
	    HTTP_HEAD_MORE, "exactly the limit, no end yet: more");
	tap_ok(http_head_parse(big, MAX + 1, MAX, &h, &used, &code, &why) ==
	    HTTP_HEAD_BAD && code == 431, "one byte over the limit: 431");
	memcpy(big + MAX + 10, "\r\n\r\n", 4);
	tap_ok(http_head_parse(big, n, MAX, &h, &used, &code, &why) ==
	    HTTP_HEAD_BAD && code == 431, "a complete head over the limit: 431");
	free(big);

	refused("GET /\r\n\r\n", 400, "no version");
	refused("GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400, "two spaces");
	refused("G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400, "a bad method token");
	refused("ABCDEFGHIJKLMNOPQ / HTTP/1.1\r\nHost: x\r\n\r\n", 501,
	    "a 17-byte method");
	refused("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505, "HTTP/2.0");
	refused("GET / HTTX/1.1\r\nHost: x\r\n\r\n", 400, "not HTTP");
	refused("GET x HTTP/1.1\r\nHost: x\r\n\r\n", 400, "not a path");
	refused("GET /a%2 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "a cut escape");
	refused("GET /a%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "a bad escape");
	refused("GET /a%00b HTTP/1.1\r\nHost: x\r\n\r\n", 400, "an encoded NUL");
	refused("GET / HTTP/1.1\r\n\r\n", 400, "HTTP/1.1 without Host");
	refused("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400,
	    "obsolete line folding");
	refused("GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400,
	    "a space before the colon");
	refused("GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 400,
	    "a field without a colon");
	refused("GET / HTTP/1.1\r\nHost: x\x01y\r\n\r\n", 400,
	    "a control character in a value");
	refused("GET / HTTP/1.1\r\nHost: x\ry\r\n\r\n", 400, "a stray CR");
	refused("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n", 400,
	    "a malformed Content-Length");
	refused("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400,
	    "a negative Content-Length");
	refused("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: "
	    "99999999999999999999999\r\n\r\n", 400,
	    "an overflowing Content-Length");
	refused("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
	    "Content-Length: 2\r\n\r\n", 400, "conflicting Content-Lengths");
	refused("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
	    "\r\n", 501, "a chunked request body");
	refused("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
	    "Content-Length: 3\r\n\r\n", 400, "Transfer-Encoding and "
	    "Content-Length (smuggling)");
	refused("GET / HTTP/1.1\r\nHost: x\r\nhost: y\r\n\r\n", 400,
	    "two Host fields (RFC 9112 3.2)");
	refused("GET / HTTP/1.0\r\nHost: x\r\nHost: x\r\n\r\n", 400,
	    "two Host fields alike, HTTP/1.0");
	big = malloc(HTTP_FIELDS_MAX * 8 + 64);
	strcpy(big, "GET / HTTP/1.1\r\nHost: x\r\n");
	for (i = 0; i < HTTP_FIELDS_MAX; i++)
		strcat(big, "A: b\r\n");
	strcat(big, "\r\n");
	refused(big, 431, "more than HTTP_FIELDS_MAX fields");
	free(big);
	return tap_done();
}
