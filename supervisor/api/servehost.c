/*
 * servehost.c: which names serve answers to (localhost, 127.0.0.1,
 * [::1], the --http host, each --allowed-host) and the guard every
 * route but an open one passes first: Host must name one of them, an
 * Origin when sent must be http(s) on one (DNS rebinding, CSRF).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serveint.h"
#include "xmalloc.h"

/* This machine's own names: a rebound browser never sends one of them. */
static const char *const servehost_local[] = {
	"localhost", "127.0.0.1", "[::1]", NULL
};

/* Listen addresses that are no name: any interface, never a Host. */
static const char *const servehost_unspecified[] = {
	"", "0.0.0.0", "[::]", "::", NULL
};

/* One "host[:port]": the host part [*hb, *he) and the port (0: none). */
struct servehost_name {
	const char	*hb, *he;
	unsigned	 port;
};

/*
 * Splits [b, e) as "host[:port]" (an IPv6 literal in brackets, a port
 * of digits, 1-65535; an empty one counts as none).  0, or -1 for
 * anything else (userinfo, a path, blanks, a second colon).
 */
static int
servehost_split(const char *b, const char *e, struct servehost_name *n)
{
	const char	*p;
	unsigned long	 port = 0;

	if (b < e && *b == '[') {
		if ((p = memchr(b, ']', (size_t)(e - b))) == NULL)
			return -1;
		p++;
	} else
		for (p = b; p < e && *p != ':'; p++)
			;
	n->hb = b;
	n->he = p;
	if (p == b)
		return -1;
	for (; b < p; b++)
		if (*b == '@' || *b == '/' || *b == ' ' || *b == '\t' ||
		    *b == '\\' || *b == '?' || *b == '#')
			return -1;
	if (p < e) {
		if (*p++ != ':')
			return -1;
		for (; p < e; p++) {
			if (*p < '0' || *p > '9' || port > 65535)
				return -1;
			port = port * 10 + (unsigned long)(*p - '0');
		}
		if (port > 65535)
			return -1;
	}
	n->port = (unsigned)port;
	return 0;
}

/* Is the host part of n the name [b, b + len) (any case)? */
static int
servehost_eq(const struct servehost_name *n, const char *b, size_t len)
{
	return (size_t)(n->he - n->hb) == len &&
	    strncasecmp(n->hb, b, len) == 0;
}

/* Is the host part of n the name s (any case)? */
static int
servehost_is(const struct servehost_name *n, const char *s)
{
	return servehost_eq(n, s, strlen(s));
}

/*
 * Does the request's "host[:port]" [b, e) name this server?  origin: it
 * is an Origin's, whose port (its own, else the scheme's default
 * defport) must be ours: a page on another port of this machine is
 * another site.  A Host's port is not judged on our names: a browser
 * puts there the port it reached, ours, or a proxy's (a rebound page
 * is told by its name).  An --allowed-host NAME takes any port, or,
 * NAME:PORT, that port when the request names one.
 */
static int
servehost_ours(const struct serve *s, const char *b, const char *e,
    int origin, unsigned defport)
{
	struct servehost_name	 n, a;
	unsigned		 port;
	size_t			 i;

	if (servehost_split(b, e, &n) != 0)
		return 0;
	port = n.port != 0 ? n.port : defport;
	for (i = 0; i < s->cfg.nallowed; i++) {
		const char *an = s->cfg.allowed_hosts[i];

		if (servehost_split(an, an + strlen(an), &a) == 0 &&
		    servehost_eq(&n, a.hb, (size_t)(a.he - a.hb)) &&
		    (a.port == 0 || port == 0 || port == a.port))
			return 1;
	}
	if (origin && port != (unsigned)http_server_port(s->http))
		return 0;
	for (i = 0; servehost_local[i] != NULL; i++)
		if (servehost_is(&n, servehost_local[i]))
			return 1;
	for (i = 0; servehost_unspecified[i] != NULL; i++)
		if (strcasecmp(s->listen_host, servehost_unspecified[i]) == 0)
			return 0;
	return servehost_is(&n, s->listen_host);
}

/* How many fields of that (lower-case) name the request holds. */
static size_t
servehost_count(const struct http_head *h, const char *name)
{
	size_t	i, n = 0;

	for (i = 0; i < h->nfields; i++)
		n += strcmp(h->fields[i].name, name) == 0;
	return n;
}

/*
 * The guard of every route but the open ones, run before the route and
 * before the token: NULL (pass), or why not with *code set: an Origin
 * that is not http(s) on one of our names, "null" included, 403; a
 * Host naming another server (a rebound name: attacker.example) 421;
 * none at all (HTTP/1.0) 400 (two: the parser's 400, httphead.c).
 */
const char *
servehost_refused(const struct serve *s, const struct http_head *h,
    int *code)
{
	const char	*o = http_head_field(h, "origin");
	const char	*host = http_head_field(h, "host"), *b;
	unsigned	 defport;

	*code = 403;
	if (o != NULL) {
		if (servehost_count(h, "origin") != 1)
			return "Origin not allowed (more than one)";
		if (strncasecmp(o, "http://", 7) == 0) {
			b = o + 7;
			defport = 80;
		} else if (strncasecmp(o, "https://", 8) == 0) {
			b = o + 8;
			defport = 443;
		} else
			return "Origin not allowed";
		if (!servehost_ours(s, b, b + strlen(b), 1, defport))
			return "Origin not allowed";
	}
	*code = 400;
	if (host == NULL)
		return "a Host header field is needed";
	*code = 421;
	if (!servehost_ours(s, host, host + strlen(host), 0, 0))
		return "Host not allowed: this server answers to localhost, "
		    "127.0.0.1, [::1] and its --allowed-host names";
	return NULL;
}

/*
 * Is name fit for --allowed-host: a host name or address, an IPv6 one
 * in brackets, maybe ":port"?  0, or -1 with *err set.
 */
int
servehost_valid(const char *name, char **err)
{
	struct servehost_name	 n;

	if (servehost_split(name, name + strlen(name), &n) != 0) {
		xasprintf(err, "--allowed-host %s: want a host name or "
		    "address, maybe with :PORT (no scheme, path or user)",
		    name);
		return -1;
	}
	return 0;
}
