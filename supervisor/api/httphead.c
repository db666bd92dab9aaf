/*
 * httphead.c: parses an HTTP/1.1 request head (RFC 9112) from a byte
 * buffer: the request line, the header fields, Content-Length and the
 * connection's persistence.  Pure: no I/O, every refusal a status code.
 */
#include <config.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "httphead.h"
#include "xmalloc.h"

static const struct {
	enum http_method	 method;
	const char		*name;
} http_methods[] = {
	{ HTTP_GET, "GET" }, { HTTP_HEAD, "HEAD" }, { HTTP_POST, "POST" },
	{ HTTP_PUT, "PUT" }, { HTTP_PATCH, "PATCH" },
	{ HTTP_DELETE, "DELETE" }, { HTTP_OPTIONS, "OPTIONS" },
};

/* RFC 9110 tchar: what a method or a field name may hold. */
static int
http_is_tchar(int c)
{
	return isalnum(c) || (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* The method's name for logs and Allow headers. */
const char *
http_method_name(enum http_method m)
{
	size_t	i;

	for (i = 0; i < sizeof http_methods / sizeof http_methods[0]; i++)
		if (http_methods[i].method == m)
			return http_methods[i].name;
	return "OTHER";
}

/* One hex digit's value, or -1. */
static int
http_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * Percent-decodes len bytes into out (at least len + 1 bytes); plus: '+'
 * is a space (a query).  -1 for a bad escape or an encoded NUL: a path
 * holding a NUL would be cut short when it names a file.
 */
static int
http_unescape(const char *s, size_t len, char *out, int plus)
{
	size_t	i, o = 0;
	int	hi, lo;

	for (i = 0; i < len; i++) {
		if (s[i] == '%') {
			if (i + 2 >= len)
				return -1;
			if ((hi = http_hexval((unsigned char)s[i + 1])) < 0 ||
			    (lo = http_hexval((unsigned char)s[i + 2])) < 0 ||
			    (hi == 0 && lo == 0))
				return -1;
			out[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else
			out[o++] = plus && s[i] == '+' ? ' ' : s[i];
	}
	out[o] = '\0';
	return 0;
}

/* Frees what a parse left in h and zeroes it. */
void
http_head_clear(struct http_head *h)
{
	size_t	i;

	for (i = 0; i < h->nfields; i++) {
		free(h->fields[i].name);
		free(h->fields[i].value);
	}
	free(h->fields);
	free(h->path);
	free(h->query);
	memset(h, 0, sizeof *h);
}

/* The first field of that (lower-case) name, or NULL. */
const char *
http_head_field(const struct http_head *h, const char *name)
{
	size_t	i;

	for (i = 0; i < h->nfields; i++)
		if (strcmp(h->fields[i].name, name) == 0)
			return h->fields[i].value;
	return NULL;
}

/*
 * Each cookie called name in the Cookie fields, in order: fn(value, its
 * length, arg) until one returns non-zero, which is returned; else 0.
 * One walk for every reader (serve's token, CCW's session and CSRF).
 */
int
http_head_cookies(const struct http_head *h, const char *name,
    int (*fn)(const char *, size_t, void *), void *arg)
{
	const char	*v, *e;
	size_t		 i, k = strlen(name);
	int		 rc;

	for (i = 0; i < h->nfields; i++) {
		if (strcmp(h->fields[i].name, "cookie") != 0)
			continue;
		for (v = h->fields[i].value; *v != '\0'; v = *e ? e + 1 : e) {
			v += strspn(v, " \t");
			e = v + strcspn(v, ";");
			if (strncmp(v, name, k) == 0 && v[k] == '=' &&
			    (rc = fn(v + k + 1, (size_t)(e - v) - k - 1,
			    arg)) != 0)
				return rc;
		}
	}
	return 0;
}

/* Whether a comma-separated field value holds the token (any case). */
static int
http_has_token(const char *v, const char *tok)
{
	size_t	n = strlen(tok), k;

	while (v != NULL && *v != '\0') {
		while (*v == ' ' || *v == '\t' || *v == ',')
			v++;
		for (k = 0; v[k] != '\0' && v[k] != ','; k++)
			;
		while (k > 0 && (v[k - 1] == ' ' || v[k - 1] == '\t'))
			k--;
		if (k == n && strncasecmp(v, tok, n) == 0)
			return 1;
		v += k;
		while (*v != '\0' && *v != ',')
			v++;
	}
	return 0;
}

/* The request line: method, target, version.  0 or a status code. */
static int
http_parse_line(const char *s, size_t len, struct http_head *h,
    const char **why)
{
	const char	*sp1, *sp2, *t, *q, *end = s + len;
	size_t		 i, ml, tl;

	if ((sp1 = memchr(s, ' ', len)) == NULL ||
	    (sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1))) == NULL ||
	    memchr(sp2 + 1, ' ', (size_t)(end - sp2 - 1)) != NULL) {
		*why = "malformed request line";
		return 400;
	}
	ml = (size_t)(sp1 - s);
	for (i = 0; i < ml; i++)
		if (!http_is_tchar((unsigned char)s[i]))
			break;
	if (ml == 0 || i < ml) {
		*why = "malformed method";
		return 400;
	}
	if (ml > HTTP_METHOD_MAX) {
		*why = "method not implemented";
		return 501;
	}
	memcpy(h->method_name, s, ml);
	h->method_name[ml] = '\0';
	h->method = HTTP_OTHER;
	for (i = 0; i < sizeof http_methods / sizeof http_methods[0]; i++)
		if (strcmp(http_methods[i].name, h->method_name) == 0)
			h->method = http_methods[i].method;
	if ((size_t)(end - sp2 - 1) != 8 || strncmp(sp2 + 1, "HTTP/", 5) != 0 ||
	    !isdigit((unsigned char)sp2[6]) || sp2[7] != '.' ||
	    !isdigit((unsigned char)sp2[8])) {
		*why = "malformed HTTP version";
		return 400;
	}
	if (sp2[6] != '1') {
		*why = "HTTP version not supported";
		return 505;
	}
	h->minor = sp2[8] - '0';
	t = sp1 + 1;
	tl = (size_t)(sp2 - t);
	for (i = 0; i < tl; i++)
		if ((unsigned char)t[i] <= ' ' || (unsigned char)t[i] >= 0x7f) {
			*why = "malformed request target";
			return 400;
		}
	/* absolute-form (a proxy's): keep the path */
	if (tl > 7 && (strncasecmp(t, "http://", 7) == 0)) {
		for (i = 7; i < tl && t[i] != '/'; i++)
			;
		t += i;
		tl -= i;
		if (tl == 0) {
			t = "/";
			tl = 1;
		}
	}
	if (tl == 1 && *t == '*' && h->method == HTTP_OPTIONS) {
		h->path = xstrdup("*");
		h->query = xstrdup("");
		return 0;
	}
	if (tl == 0 || *t != '/') {
		*why = "the request target is not a path";
		return 400;
	}
	if ((q = memchr(t, '?', tl)) == NULL)
		q = t + tl;
	h->path = xmalloc((size_t)(q - t) + 1);
	if (http_unescape(t, (size_t)(q - t), h->path, 0) != 0) {
		*why = "bad percent-encoding in the path";
		return 400;
	}
	h->query = q < t + tl ? xstrndup(q + 1, (size_t)(t + tl - q - 1)) :
	    xstrdup("");
	return 0;
}

/* One "name: value" line.  0 or a status code. */
static int
http_parse_field(const char *s, size_t len, struct http_head *h,
    const char **why)
{
	const char	*c, *v, *e;
	size_t		 i, nl;
	char		*name;

	if (len > 0 && (*s == ' ' || *s == '\t')) {
		*why = "obsolete line folding in a header field";
		return 400;
	}
	if ((c = memchr(s, ':', len)) == NULL || c == s) {
		*why = "malformed header field";
		return 400;
	}
	nl = (size_t)(c - s);
	for (i = 0; i < nl; i++)
		if (!http_is_tchar((unsigned char)s[i])) {
			*why = "malformed header field name";
			return 400;
		}
	for (v = c + 1, e = s + len; v < e && (*v == ' ' || *v == '\t'); v++)
		;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	for (c = v; c < e; c++)
		if (((unsigned char)*c < ' ' && *c != '\t') || *c == 0x7f) {
			*why = "control character in a header field";
			return 400;
		}
	if (h->nfields == HTTP_FIELDS_MAX) {
		*why = "too many header fields";
		return 431;
	}
	name = xstrndup(s, nl);
	for (i = 0; i < nl; i++)
		name[i] = (char)tolower((unsigned char)name[i]);
	h->fields = xreallocarray(h->fields, h->nfields + 1,
	    sizeof *h->fields);
	h->fields[h->nfields].name = name;
	h->fields[h->nfields].value = xstrndup(v, (size_t)(e - v));
	h->nfields++;
	return 0;
}

/* Content-Length (every copy the same digits), Transfer-Encoding, Host
 * (one, RFC 9112 3.2). */
static int
http_parse_framing(struct http_head *h, const char **why)
{
	const char	*v, *first = NULL;
	uint64_t	 n;
	size_t		 i;

	for (i = 0; i < h->nfields; i++) {
		if (strcmp(h->fields[i].name, "content-length") != 0)
			continue;
		v = h->fields[i].value;
		if (first != NULL && strcmp(first, v) != 0) {
			*why = "conflicting Content-Length fields";
			return 400;
		}
		first = v;
		for (n = 0; *v != '\0'; v++) {
			if (!isdigit((unsigned char)*v) ||
			    n > (UINT64_MAX - 9) / 10) {
				*why = "malformed Content-Length";
				return 400;
			}
			n = n * 10 + (uint64_t)(*v - '0');
		}
		if (v == h->fields[i].value) {
			*why = "malformed Content-Length";
			return 400;
		}
		h->content_length = n;
	}
	if (http_head_field(h, "transfer-encoding") != NULL) {
		*why = first != NULL ? "both Transfer-Encoding and "
		    "Content-Length" : "Transfer-Encoding is not accepted in "
		    "requests: send Content-Length";
		return first != NULL ? 400 : 501;
	}
	if (h->minor >= 1 && http_head_field(h, "host") == NULL) {
		*why = "no Host header field";
		return 400;
	}
	for (n = 0, i = 0; i < h->nfields; i++)
		n += strcmp(h->fields[i].name, "host") == 0;
	if (n > 1) {
		*why = "more than one Host header field";
		return 400;
	}
	v = http_head_field(h, "connection");
	h->keep_alive = h->minor >= 1 ? !http_has_token(v, "close") :
	    http_has_token(v, "keep-alive");
	return 0;
}

/*
 * Parses the head at the start of buf (len bytes; a head longer than max
 * bytes is refused with 431).  Lines end in CRLF or a bare LF; empty lines
 * before the request line are skipped (RFC 9112 2.2).  On DONE *used is
 * the head's length with its blank line; on BAD *code and *why are set
 * and h is cleared.
 */
enum http_head_status
http_head_parse(const char *buf, size_t len, size_t max, struct http_head *h,
    size_t *used, int *code, const char **why)
{
	const char	*p = buf, *blank = NULL, *nl = NULL, *line;
	size_t		 ll, head;
	int		 rc = 0, first = 1;

	memset(h, 0, sizeof *h);
	while (p < buf + len && (*p == '\r' || *p == '\n'))
		p++;
	for (line = p; line < buf + len; line = nl + 1) {
		if ((nl = memchr(line, '\n', (size_t)(buf + len - line))) == NULL)
			break;
		if (nl == line || (nl == line + 1 && *line == '\r')) {
			blank = line;
			break;
		}
	}
	if (blank == NULL && len <= max)
		return HTTP_HEAD_MORE;
	if (blank == NULL || (head = (size_t)(nl + 1 - buf)) > max) {
		*code = 431;
		*why = "request header fields too large";
		return HTTP_HEAD_BAD;
	}
	for (line = p; rc == 0 && line < blank; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(blank - line));
		ll = (size_t)(nl - line);
		if (ll > 0 && line[ll - 1] == '\r')
			ll--;
		if (memchr(line, '\r', ll) != NULL ||
		    memchr(line, '\0', ll) != NULL) {
			*why = "stray CR or NUL in the head";
			rc = 400;
		} else if (first)
			rc = http_parse_line(line, ll, h, why);
		else
			rc = http_parse_field(line, ll, h, why);
		first = 0;
	}
	if (rc == 0 && first) {
		*why = "no request line";
		rc = 400;
	}
	if (rc == 0)
		rc = http_parse_framing(h, why);
	if (rc != 0) {
		http_head_clear(h);
		*code = rc;
		return HTTP_HEAD_BAD;
	}
	*used = head;
	return HTTP_HEAD_DONE;
}

/*
 * The decoded value of key in a query string ("a=1&b=x%20y"), into out
 * (size n): 1 found, 0 absent, -1 malformed or longer than n - 1.
 */
int
http_query_get(const char *query, const char *key, char *out, size_t n)
{
	const char	*p = query, *amp, *eq;
	size_t		 kl = strlen(key), vl;
	char		*tmp;
	int		 rc;

	while (p != NULL && *p != '\0') {
		if ((amp = strchr(p, '&')) == NULL)
			amp = p + strlen(p);
		eq = memchr(p, '=', (size_t)(amp - p));
		if ((eq != NULL ? (size_t)(eq - p) : (size_t)(amp - p)) == kl &&
		    strncmp(p, key, kl) == 0) {
			vl = eq != NULL ? (size_t)(amp - eq - 1) : 0;
			tmp = xmalloc(vl + 1);
			rc = http_unescape(eq != NULL ? eq + 1 : "", vl, tmp, 1);
			if (rc == 0 && strlen(tmp) < n)
				memcpy(out, tmp, strlen(tmp) + 1);
			else
				rc = -1;
			free(tmp);
			return rc == 0 ? 1 : -1;
		}
		p = *amp == '&' ? amp + 1 : amp;
	}
	return 0;
}
