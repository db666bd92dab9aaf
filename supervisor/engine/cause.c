/*
 * cause.c: the cause of a failed worker as one line, "KIND: REASON": KIND
 * a word of proto/outcome.h's table, REASON the RESULT's reason, else the
 * last line of the tool's stderr, else its summary, else its exit code
 * or signal.  Pure: read from a report, never from text a person wrote.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cause.h"
#include "outcome.h"
#include "xmalloc.h"

/* A string member, NULL when absent or blank. */
static const char *
cause_str(const json_t *o, const char *k)
{
	const char	*s = json_string_value(json_object_get(o, k));
	const char	*p;

	for (p = s; p != NULL && *p != '\0'; p++)
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			return s;
	return NULL;
}

/*
 * The last line of text that is not blank: a CLI's stderr ends with the
 * line saying why it gave up; the lines before are its progress.
 */
static char *
cause_last_line(const char *s)
{
	const char	*end = s + strlen(s), *b;

	while (end > s && (end[-1] == '\n' || end[-1] == '\r' ||
	    end[-1] == ' ' || end[-1] == '\t'))
		end--;
	for (b = end; b > s && b[-1] != '\n'; b--)
		;
	return xstrndup(b, (size_t)(end - b));
}

/*
 * The words, on one line and bounded: a reason goes into an error entry,
 * a table cell and a terminal line, none of which wants a stack trace.
 */
static void
cause_add(struct sbuf *b, const char *s, int last_line)
{
	char	*t = last_line ? cause_last_line(s) : xstrdup(s), *p;
	size_t	 n;

	for (p = t; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	n = strlen(t);
	if (n > CAUSE_REASON_MAX) {
		n = CAUSE_REASON_MAX;
		while (n > 0 && ((unsigned char)t[n] & 0xc0) == 0x80)
			n--;	/* not inside a UTF-8 sequence */
	}
	sbuf_add(b, t, n);
	if (n < strlen(t))
		sbuf_puts(b, "...");
	free(t);
}

/*
 * The kind: the report's error_kind when it is a word of the table, a
 * deadline when the supervisor timed it out, else none: the worker
 * reported its own failure, in its own words, and no kind is made up.
 */
static enum outcome_kind
cause_kind(const json_t *rep)
{
	enum outcome_kind	 k = outcome_find(cause_str(rep, "error_kind"));

	if (k == OUTCOME_NONE && json_is_true(json_object_get(rep,
	    "timed_out")))
		return OUTCOME_TIMEOUT;
	return k;
}

/* Why the worker of this report failed: "KIND: REASON", or "REASON". */
char *
cause_of(const json_t *rep)
{
	struct sbuf		 b = { NULL, 0, 0 };
	const json_t		*ec = json_object_get(rep, "exit_code");
	const json_t		*sig = json_object_get(rep, "signal");
	enum outcome_kind	 k = cause_kind(rep);
	const char		*s;

	if (k != OUTCOME_NONE)
		sbuf_printf(&b, "%s: ", outcome_name(k));
	if ((s = cause_str(rep, "reason")) != NULL)
		cause_add(&b, s, 0);
	else if ((s = cause_str(rep, "stderr_tail")) != NULL)
		cause_add(&b, s, 1);
	else if ((s = cause_str(rep, "summary")) != NULL)
		cause_add(&b, s, 0);
	else if (json_is_integer(sig) && json_integer_value(sig) > 0)
		sbuf_printf(&b, "killed by signal %lld",
		    (long long)json_integer_value(sig));
	else if (json_is_integer(ec))
		sbuf_printf(&b, "exit code %lld",
		    (long long)json_integer_value(ec));
	else
		sbuf_puts(&b, "no result");
	return b.p;
}

/*
 * A failed worker for an error entry: "WHO: failed (KIND: REASON)", or
 * "WHO: failed: REASON" when it reported its own failure (no kind), with
 * "timed out" or "gave no result" for "failed" when so.
 */
char *
cause_line(const char *who, const json_t *rep)
{
	const char	*st = cause_str(rep, "status");
	const char	*how = json_is_true(json_object_get(rep, "timed_out")) ?
	    "timed out" : st == NULL ? "gave no result" : "failed";
	char		*c = cause_of(rep), *out;

	if (cause_kind(rep) != OUTCOME_NONE)
		xasprintf(&out, "%s: %s (%s)", who, how, c);
	else
		xasprintf(&out, "%s: %s: %s", who, how, c);
	free(c);
	return out;
}

/*
 * Whether the report is a failure whatever else it says: a status of
 * failed, a deadline, an error kind of the table, or a worker that
 * errored.  A workflow's score or gate never reads such a run as passed.
 */
int
cause_failed(const json_t *rep)
{
	const char	*st = cause_str(rep, "status");
	const char	*as = cause_str(rep, "agent_status");

	return json_is_true(json_object_get(rep, "timed_out")) ||
	    (st != NULL && strcmp(st, "failed") == 0) ||
	    outcome_find(cause_str(rep, "error_kind")) != OUTCOME_NONE ||
	    (as != NULL && strcmp(as, "errored") == 0);
}
