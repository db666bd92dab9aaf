/*
 * servemcphead.c: what serve's /mcp checks in a request's header fields
 * before a message reaches a session: Accept's media ranges, the body's
 * Content-Type, MCP-Protocol-Version, and Origin and Host against DNS
 * rebinding (a page elsewhere must not reach a local server).
 */
#include <config.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "serveint.h"

/* The revisions whose MCP-Protocol-Version header is honoured. */
static const char *const servemcp_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

/* Hosts a request may name: this machine, under the names it answers. */
static const char *const servemcp_local[] = {
	"localhost", "127.0.0.1", "[::1]", NULL
};

/* Trims blanks around [*b, *e). */
static void
servemcp_trim(const char **b, const char **e)
{
	while (*b < *e && (**b == ' ' || **b == '\t'))
		(*b)++;
	while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
		(*e)--;
}

/*
 * Does one media range [b, e) (parameters after ';') admit type, and is
 * it not refused with q=0?  Wildcards (all, or a major type) count.
 */
static int
servemcp_range_admits(const char *b, const char *e, const char *type)
{
	const char	*semi = memchr(b, ';', (size_t)(e - b)), *re, *q;
	const char	*slash = strchr(type, '/');
	size_t		 n;

	re = semi != NULL ? semi : e;
	servemcp_trim(&b, &re);
	n = (size_t)(re - b);
	if (!((n == 3 && memcmp(b, "*/*", 3) == 0) ||
	    (n == strlen(type) && strncasecmp(b, type, n) == 0) ||
	    (n == (size_t)(slash - type) + 2 && strncasecmp(b, type,
	    (size_t)(slash - type) + 1) == 0 && b[n - 1] == '*')))
		return 0;
	/* q=0 (0, 0.0, 0.00...) means "not this one" */
	for (q = semi; q != NULL && q < e; q = memchr(q + 1, ';',
	    (size_t)(e - q - 1))) {
		const char *p = q + 1;

		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (e - p >= 3 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
			for (p += 2; p < e && (*p == '0' || *p == '.'); p++)
				;
			return p < e && *p >= '1' && *p <= '9';
		}
	}
	return 1;
}

/* Does the request's Accept field list a range admitting type? */
int
servemcp_accepts(const struct http_head *h, const char *type)
{
	const char	*v = http_head_field(h, "accept"), *b, *e;

	if (v == NULL)
		return 0;
	for (b = v; *b != '\0'; b = *e != '\0' ? e + 1 : e) {
		e = b + strcspn(b, ",");
		if (servemcp_range_admits(b, e, type))
			return 1;
	}
	return 0;
}

/* Is the body's Content-Type application/json (any parameters)? */
int
servemcp_is_json(const struct http_head *h)
{
	const char	*v = http_head_field(h, "content-type"), *e;

	if (v == NULL)
		return 0;
	e = v + strcspn(v, ";");
	servemcp_trim(&v, &e);
	return e - v == 16 && strncasecmp(v, "application/json", 16) == 0;
}

/* An MCP-Protocol-Version we speak (or none: the spec's default). */
int
servemcp_version_ok(const struct http_head *h)
{
	const char	*v = http_head_field(h, "mcp-protocol-version");
	size_t		 i;

	if (v == NULL)
		return 1;
	for (i = 0; servemcp_versions[i] != NULL; i++)
		if (strcmp(v, servemcp_versions[i]) == 0)
			return 1;
	return 0;
}

/*
 * Is the host [b, e) (a port after it allowed) one we answer to: this
 * machine's names, or the address serve was told to listen on (not an
 * unspecified one: 0.0.0.0 in a browser reaches this machine too)?
 */
static int
servemcp_host_ok(const struct serve *s, const char *b, const char *e)
{
	const char	*end;
	size_t		 i, n;

	if (b < e && *b == '[') {
		if ((end = memchr(b, ']', (size_t)(e - b))) == NULL)
			return 0;
		end++;
	} else
		end = b + strcspn(b, ":/");
	if (end > e)
		end = e;
	if (end < e && *end != ':')
		return 0;
	n = (size_t)(end - b);
	for (i = 0; servemcp_local[i] != NULL; i++)
		if (n == strlen(servemcp_local[i]) &&
		    strncasecmp(b, servemcp_local[i], n) == 0)
			return 1;
	return s->listen_host[0] != '\0' && strcmp(s->listen_host,
	    "0.0.0.0") != 0 && strcmp(s->listen_host, "[::]") != 0 &&
	    n == strlen(s->listen_host) &&
	    strncasecmp(b, s->listen_host, n) == 0;
}

/*
 * DNS rebinding: an Origin, when sent, must be http(s) on a host we
 * answer to ("null" and any other scheme are refused); a Host must name
 * one too while serve listens on loopback only (beyond it the token is
 * the guard and clients use the machine's own names).  NULL, or why not.
 */
const char *
servemcp_origin_refused(const struct serve *s, const struct http_head *h)
{
	const char	*o = http_head_field(h, "origin");
	const char	*host = http_head_field(h, "host"), *b;

	if (o != NULL) {
		if (strncasecmp(o, "http://", 7) == 0)
			b = o + 7;
		else if (strncasecmp(o, "https://", 8) == 0)
			b = o + 8;
		else
			return "Origin not allowed";
		if (strchr(b, '@') != NULL || !servemcp_host_ok(s, b,
		    b + strcspn(b, "/")) || b[strcspn(b, "/")] != '\0')
			return "Origin not allowed";
	}
	if (host != NULL && serve_loopback(s) &&
	    !servemcp_host_ok(s, host, host + strlen(host)))
		return "Host not allowed";
	return NULL;
}
