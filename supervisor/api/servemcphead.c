/*
 * servemcphead.c: what serve's /mcp checks in a request's header fields
 * before a message reaches a session: Accept's media ranges, the body's
 * Content-Type and MCP-Protocol-Version (Origin and Host are serve's
 * guard of every route: servehost.c).
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
