/*
 * batch-junit.c: batch's JUnit XML report (--junit F): a testsuite with
 * tests, failures, skipped and time; a testcase per item (name: its id
 * and title), <failure message=...> with the failure_reason of a failed
 * one, <skipped/> for a blocked or skipped one.  Text is XML-escaped and
 * stripped of what XML 1.0 cannot hold (control characters, bad UTF-8).
 */
#include <config.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch-junit.h"
#include "bqfile.h"
#include "xmalloc.h"

struct jbuf {
	char	*s;
	size_t	 len, cap;
};

/* n bytes appended. */
static void
jbuf_put(struct jbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = xreallocarray(b->s, b->cap, 1);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* A string appended. */
static void
jbuf_str(struct jbuf *b, const char *s)
{
	jbuf_put(b, s, strlen(s));
}

/* Formatted text appended (numbers and fixed words only). */
static void __attribute__((format(printf, 2, 3)))
jbuf_add(struct jbuf *b, const char *fmt, ...)
{
	char	 tmp[256];
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		jbuf_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n :
		    sizeof(tmp) - 1);
}

/* The length of a valid UTF-8 sequence at s (0: not one). */
static size_t
junit_utf8(const unsigned char *s)
{
	uint32_t	 c;
	size_t		 n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ||
	    c == 0xfffe || c == 0xffff)) || (n == 4 && (c < 0x10000 ||
	    c > 0x10ffff)))
		return 0;
	return n;
}

/*
 * s escaped for an attribute or text: & < > " ' as entities; tab, LF
 * and CR as character references in attributes (kept in text); other
 * control characters and invalid UTF-8 dropped (XML 1.0 has no way to
 * say them).
 */
static void
junit_esc(struct jbuf *b, const char *str, int attr)
{
	const unsigned char	*s = (const unsigned char *)str;
	size_t			 n;

	for (; *s != '\0'; s += n) {
		n = 1;
		switch (*s) {
		case '&': jbuf_str(b, "&amp;"); continue;
		case '<': jbuf_str(b, "&lt;"); continue;
		case '>': jbuf_str(b, "&gt;"); continue;
		case '"': jbuf_str(b, "&quot;"); continue;
		case '\'': jbuf_str(b, "&apos;"); continue;
		case '\t': case '\n': case '\r':
			if (attr)
				jbuf_add(b, "&#%d;", *s);
			else
				jbuf_put(b, (const char *)s, 1);
			continue;
		}
		if (*s < 0x20 || *s == 0x7f)
			continue;
		if ((n = junit_utf8(s)) == 0) {
			n = 1;
			continue;
		}
		jbuf_put(b, (const char *)s, n);
	}
}

/* A string member, "" when absent. */
static const char *
junit_str(const json_t *o, const char *key)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

/* An item's duration in seconds (duration_ms, 0 when absent). */
static double
junit_secs(const json_t *o)
{
	json_t	*v = json_object_get(o, "duration_ms");

	return json_is_number(v) && json_number_value(v) > 0 ?
	    json_number_value(v) / 1000.0 : 0.0;
}

/*
 * The report as text (NULL and *err when items is not an array of
 * objects).  Statuses: completed passes; failed is a failure; blocked and
 * skipped are skipped; any other (a batch stopped early: pending,
 * running) is a failure with the status said, since the item did not
 * complete.
 */
char *
junit_text(const char *suite, const json_t *items, char **err)
{
	struct jbuf	 b = { NULL, 0, 0 };
	const json_t	*it;
	const char	*st, *reason;
	size_t		 i, nfail = 0, nskip = 0;
	double		 total = 0;

	if (!json_is_array(items)) {
		xasprintf(err, "junit: the items are not an array");
		return NULL;
	}
	json_array_foreach(items, i, it) {
		if (!json_is_object(it)) {
			xasprintf(err, "junit: item %zu is not an object", i);
			return NULL;
		}
		st = junit_str(it, "status");
		if (strcmp(st, "blocked") == 0 || strcmp(st, "skipped") == 0)
			nskip++;
		else if (strcmp(st, "completed") != 0)
			nfail++;
		total += junit_secs(it);
	}
	jbuf_add(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	jbuf_add(&b, "<testsuites tests=\"%zu\" failures=\"%zu\" "
	    "skipped=\"%zu\" time=\"%.3f\">\n", json_array_size(items), nfail,
	    nskip, total);
	jbuf_str(&b, "  <testsuite name=\"");
	junit_esc(&b, suite, 1);
	jbuf_add(&b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
	    "skipped=\"%zu\" time=\"%.3f\">\n", json_array_size(items), nfail,
	    nskip, total);
	json_array_foreach(items, i, it) {
		st = junit_str(it, "status");
		jbuf_str(&b, "    <testcase classname=\"");
		junit_esc(&b, suite, 1);
		jbuf_str(&b, "\" name=\"");
		junit_esc(&b, junit_str(it, "id"), 1);
		if (junit_str(it, "title")[0] != '\0') {
			jbuf_str(&b, ": ");
			junit_esc(&b, junit_str(it, "title"), 1);
		}
		jbuf_add(&b, "\" time=\"%.3f\"", junit_secs(it));
		if (strcmp(st, "completed") == 0) {
			jbuf_str(&b, "/>\n");
			continue;
		}
		jbuf_str(&b, ">\n");
		if (strcmp(st, "blocked") == 0 || strcmp(st, "skipped") == 0) {
			jbuf_str(&b, "      <skipped message=\"");
			junit_esc(&b, st, 1);
			jbuf_str(&b, "\"/>\n");
		} else {
			reason = junit_str(it, "failure_reason");
			jbuf_str(&b, "      <failure message=\"");
			junit_esc(&b, reason[0] != '\0' ? reason : st, 1);
			jbuf_str(&b, "\" type=\"");
			junit_esc(&b, st, 1);
			jbuf_str(&b, "\">");
			junit_esc(&b, reason[0] != '\0' ? reason : st, 0);
			jbuf_str(&b, "</failure>\n");
		}
		jbuf_str(&b, "    </testcase>\n");
	}
	jbuf_str(&b, "  </testsuite>\n</testsuites>\n");
	return b.s;
}

/* The report written to path (temp, fsync, rename): 0, or -1 and *err. */
int
junit_write(const char *path, const char *suite, const json_t *items,
    char **err)
{
	char	*text;
	int	 rc;

	*err = NULL;
	if ((text = junit_text(suite, items, err)) == NULL)
		return -1;
	rc = bqfile_write_atomic(path, text, strlen(text), NULL, err);
	free(text);
	return rc;
}
