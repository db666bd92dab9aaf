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
#include "buf.h"
#include "bqfile.h"
#include "cmdutil.h"
#include "xmalloc.h"

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
junit_esc(struct sbuf *b, const char *str, int attr)
{
	const unsigned char	*s = (const unsigned char *)str;
	size_t			 n;

	for (; *s != '\0'; s += n) {
		n = 1;
		switch (*s) {
		case '&': sbuf_puts(b, "&amp;"); continue;
		case '<': sbuf_puts(b, "&lt;"); continue;
		case '>': sbuf_puts(b, "&gt;"); continue;
		case '"': sbuf_puts(b, "&quot;"); continue;
		case '\'': sbuf_puts(b, "&apos;"); continue;
		case '\t': case '\n': case '\r':
			if (attr)
				sbuf_printf(b, "&#%d;", *s);
			else
				sbuf_add(b, (const char *)s, 1);
			continue;
		}
		if (*s < 0x20 || *s == 0x7f)
			continue;
		if ((n = junit_utf8(s)) == 0) {
			n = 1;
			continue;
		}
		sbuf_add(b, (const char *)s, n);
	}
}

/* A string member, "" when absent. */
static const char *
junit_str(const json_t *o, const char *key)
{
	return cmd_json_str(o, key, "");
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
	struct sbuf	 b = { NULL, 0, 0 };
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
	sbuf_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	sbuf_printf(&b, "<testsuites tests=\"%zu\" failures=\"%zu\" "
	    "skipped=\"%zu\" time=\"%.3f\">\n", json_array_size(items), nfail,
	    nskip, total);
	sbuf_puts(&b, "  <testsuite name=\"");
	junit_esc(&b, suite, 1);
	sbuf_printf(&b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
	    "skipped=\"%zu\" time=\"%.3f\">\n", json_array_size(items), nfail,
	    nskip, total);
	json_array_foreach(items, i, it) {
		st = junit_str(it, "status");
		sbuf_puts(&b, "    <testcase classname=\"");
		junit_esc(&b, suite, 1);
		sbuf_puts(&b, "\" name=\"");
		junit_esc(&b, junit_str(it, "id"), 1);
		if (junit_str(it, "title")[0] != '\0') {
			sbuf_puts(&b, ": ");
			junit_esc(&b, junit_str(it, "title"), 1);
		}
		sbuf_printf(&b, "\" time=\"%.3f\"", junit_secs(it));
		if (strcmp(st, "completed") == 0) {
			sbuf_puts(&b, "/>\n");
			continue;
		}
		sbuf_puts(&b, ">\n");
		if (strcmp(st, "blocked") == 0 || strcmp(st, "skipped") == 0) {
			/* blocked: which dependency did not complete */
			reason = junit_str(it, "failure_reason");
			sbuf_puts(&b, "      <skipped message=\"");
			junit_esc(&b, st, 1);
			if (reason[0] != '\0') {
				sbuf_puts(&b, ": ");
				junit_esc(&b, reason, 1);
			}
			sbuf_puts(&b, "\"/>\n");
		} else {
			reason = junit_str(it, "failure_reason");
			sbuf_puts(&b, "      <failure message=\"");
			junit_esc(&b, reason[0] != '\0' ? reason : st, 1);
			sbuf_puts(&b, "\" type=\"");
			junit_esc(&b, st, 1);
			sbuf_puts(&b, "\">");
			junit_esc(&b, reason[0] != '\0' ? reason : st, 0);
			sbuf_puts(&b, "</failure>\n");
		}
		sbuf_puts(&b, "    </testcase>\n");
	}
	sbuf_puts(&b, "  </testsuite>\n</testsuites>\n");
	return b.p;
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
