/*
 * adapterutil.c: the helpers every tool-*.c shares: argv assembly from
 * the spec's options, tolerant access to JSON fields, the bounded texts
 * a tool_stream keeps, and API errors and retries read from a stream.
 * The table of tools (adapters.c) is above this file, never below it.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "adapter.h"
#include "result.h"

/* One owner frees everything the stream parsers allocated. */
void
tool_stream_clear(struct tool_stream *ts)
{
	free(ts->session_id);
	free(ts->final_text);
	free(ts->last_text);
	free(ts->error);
	free(ts->retry);
	memset(ts, 0, sizeof *ts);
}

/* argv[0]: the configured binary wins; an empty one means "not set". */
void
adapter_argv_begin(const struct tool_spec *spec, const char *dflt,
    struct strv *argv)
{
	if (spec->binary != NULL && spec->binary[0] != '\0')
		strv_push(argv, spec->binary);
	else
		strv_push(argv, dflt);
}

/* extra_args are the user's escape hatch; non-strings are skipped. */
void
adapter_argv_extra(const struct tool_spec *spec, struct strv *argv)
{
	json_t	*extra, *v;
	size_t	 i;

	if (!json_is_object(spec->options))
		return;
	extra = json_object_get(spec->options, "extra_args");
	if (!json_is_array(extra))
		return;
	json_array_foreach(extra, i, v) {
		if (json_is_string(v))
			strv_push(argv, json_string_value(v));
	}
}

/* execv wants a NULL after the last argument; n does not count it. */
void
adapter_argv_end(struct strv *argv)
{
	argv->v = xreallocarray(argv->v, argv->n + 1, sizeof *argv->v);
	argv->v[argv->n] = NULL;
}

/* A string option, or NULL when absent, empty or of another type. */
const char *
adapter_opt(const struct tool_spec *spec, const char *key)
{
	const char	*s;

	if (!json_is_object(spec->options))
		return NULL;
	s = json_string_value(json_object_get(spec->options, key));
	if (s == NULL || s[0] == '\0')
		return NULL;
	return s;
}

/* A boolean option; anything but true/false keeps the default. */
int
adapter_opt_bool(const struct tool_spec *spec, const char *key, int dflt)
{
	json_t	*v;

	if (!json_is_object(spec->options))
		return dflt;
	v = json_object_get(spec->options, key);
	if (json_is_boolean(v))
		return json_is_true(v);
	return dflt;
}

/* Tools mix log lines into stdout; only JSON objects are events. */
json_t *
adapter_parse(const char *line, size_t len)
{
	json_t		*j;
	json_error_t	 err;
	size_t		 i;

	if (line == NULL)
		return NULL;
	for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t' ||
	    line[i] == '\r' || line[i] == '\n'); i++)
		;
	if (i == len || line[i] != '{')
		return NULL;
	j = json_loadb(line + i, len - i, JSON_ALLOW_NUL, &err);
	if (j == NULL)
		return NULL;
	if (!json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* A field that is not a string is treated as absent, never trusted. */
const char *
adapter_str(const json_t *obj, const char *key)
{
	if (!json_is_object(obj))
		return NULL;
	return json_string_value(json_object_get(obj, key));
}

/* Token counts: negative, fractional junk or wrong types count as 0. */
uint64_t
adapter_uint(const json_t *obj, const char *key)
{
	json_t	*v;
	double	 d;

	if (!json_is_object(obj))
		return 0;
	v = json_object_get(obj, key);
	if (json_is_integer(v))
		return json_integer_value(v) > 0 ?
		    (uint64_t)json_integer_value(v) : 0;
	if (json_is_real(v)) {
		d = json_real_value(v);
		if (isfinite(d) && d > 0 && d < 18446744073709551616.0)
			return (uint64_t)d;
	}
	return 0;
}

/* Did the CLI report this number at all (so 0 means zero, not unknown)? */
int
adapter_has_number(const json_t *obj, const char *key)
{
	return json_is_object(obj) && json_is_number(json_object_get(obj, key));
}

/* Costs: a usable non-negative number, else 0. */
double
adapter_real(const json_t *obj, const char *key)
{
	json_t	*v;
	double	 d;

	if (!json_is_object(obj))
		return 0;
	v = json_object_get(obj, key);
	if (!json_is_number(v))
		return 0;
	d = json_number_value(v);
	return isfinite(d) && d > 0 ? d : 0;
}

/* Keep the tail of an over-long text: the WORKER_RESULT block is last. */
static char *
adapter_tail(char *s, size_t len)
{
	size_t	cut;

	if (len <= ADAPTER_TEXT_MAX)
		return s;
	cut = len - ADAPTER_TEXT_MAX;
	while (cut < len && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut++;
	memmove(s, s + cut, len - cut + 1);
	return s;
}

/* Replace an owned string; NULL clears it. */
void
adapter_set(char **dst, const char *s)
{
	char	*n = NULL;

	if (s != NULL)
		n = adapter_tail(xstrdup(s), strlen(s));
	free(*dst);
	*dst = n;
}

/* Streams deliver the answer in pieces; glue them with sep between. */
void
adapter_append(char **dst, const char *sep, const char *s)
{
	size_t	 have, slen, add;
	char	*n;

	if (s == NULL)
		return;
	if (*dst == NULL) {
		adapter_set(dst, s);
		return;
	}
	have = strlen(*dst);
	slen = sep != NULL ? strlen(sep) : 0;
	add = strlen(s);
	if (add > ADAPTER_TEXT_MAX) {
		adapter_set(dst, s);
		return;
	}
	n = xreallocarray(*dst, 1, have + slen + add + 1);
	memcpy(n + have, sep != NULL ? sep : "", slen);
	memcpy(n + have + slen, s, add + 1);
	*dst = adapter_tail(n, have + slen + add);
}

/* PROGRESS shows one short line: flat whitespace, cut between characters. */
void
adapter_progress(struct tool_stream *ts, const char *prefix, const char *text)
{
	char		 buf[ADAPTER_SHORT_MAX + 4];
	size_t		 n = 0, last = 0;
	int		 space = 0, cut = 0;
	unsigned char	 c;

	if (text == NULL)
		text = "";
	for (; *text != '\0'; text++) {
		c = (unsigned char)*text;
		if (c < 0x20 || c == 0x7f || c == ' ') {
			space = n > 0;
			continue;
		}
		if (space) {
			if (n + 1 > ADAPTER_SHORT_MAX) {
				cut = 1;
				break;
			}
			buf[n++] = ' ';
			space = 0;
		}
		if ((c & 0xc0) != 0x80)
			last = n;
		if (n + 1 > ADAPTER_SHORT_MAX) {
			cut = 1;
			break;
		}
		buf[n++] = (char)c;
	}
	if (cut && n > 0 && ((unsigned char)*text & 0xc0) == 0x80)
		n = last;
	if (cut) {
		while (n > 0 && buf[n - 1] == ' ')
			n--;
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	free(ts->last_text);
	if (n == 0)
		ts->last_text = xstrdup(prefix);
	else
		xasprintf(&ts->last_text, "%s: %s", prefix, buf);
}

/* Tool calls read as "tool: NAME DETAIL" whatever the tool's own schema. */
void
adapter_progress_tool(struct tool_stream *ts, const char *name,
    const char *detail)
{
	char	*text;

	if (name == NULL || name[0] == '\0')
		name = "?";
	if (detail == NULL || detail[0] == '\0') {
		adapter_progress(ts, "tool", name);
		return;
	}
	xasprintf(&text, "%s %s", name, detail);
	adapter_progress(ts, "tool", text);
	free(text);
}

/* A session id goes into a resume argv: refuse option-like junk. */
int
adapter_session_ok(const char *id)
{
	size_t		i, len;
	unsigned char	c;

	if (id == NULL)
		return 0;
	len = strlen(id);
	if (len == 0 || len > 200 || id[0] == '-')
		return 0;
	for (i = 0; i < len; i++) {
		c = (unsigned char)id[i];
		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') &&
		    !(c >= '0' && c <= '9') && strchr("._:-", c) == NULL)
			return 0;
	}
	return 1;
}

/* The id returns in a resume argv: keep the first good one. */
void
adapter_session(struct tool_stream *ts, const char *id)
{
	if (ts->session_id != NULL || !adapter_session_ok(id))
		return;
	ts->session_id = xstrdup(id);
}

/* options.permission; anything unknown is the safe middle, never full. */
enum permission
adapter_permission(const struct tool_spec *spec)
{
	const char	*p = adapter_opt(spec, "permission");

	if (p != NULL && strcmp(p, "read-only") == 0)
		return PERM_READ_ONLY;
	if (p != NULL && strcmp(p, "full") == 0)
		return PERM_FULL;
	return PERM_WORKSPACE_WRITE;
}

/*
 * An API error the CLI reported while it keeps retrying.  Auth and a
 * missing model will not heal by retrying: they end the turn now (final,
 * failed) with the error's kind.  Anything else is reported as a retry,
 * and its text and kind kept: if the CLI then exits without a final word,
 * or gives up without naming a kind, the last retry is why.
 */
void
adapter_api_error(struct tool_stream *ts, long status, const char *msg,
    uint64_t attempt, uint64_t max)
{
	enum outcome_kind kind = fallback_kind_status(status, msg);
	char		*text, st[32] = "", at[64] = "";

	/* The turn already ended on a fatal error: later retries are noise. */
	if (ts->final_seen)
		return;
	if (kind == OUTCOME_NONE)
		kind = fallback_kind(msg);
	if (status > 0)
		snprintf(st, sizeof st, "HTTP %ld", status);
	if (attempt > 0 && max > 0)
		snprintf(at, sizeof at, "attempt %llu/%llu",
		    (unsigned long long)attempt, (unsigned long long)max);
	else if (attempt > 0)
		snprintf(at, sizeof at, "attempt %llu",
		    (unsigned long long)attempt);
	xasprintf(&text, "API error%s%s%s%s%s%s", st[0] ? " " : "", st,
	    msg != NULL ? ": " : "", msg != NULL ? msg : "", at[0] ? ", " : "",
	    at);
	if (kind == OUTCOME_RATE_LIMITED || kind == OUTCOME_QUOTA_EXHAUSTED)
		retryafter_note(ts, msg);
	ts->error_kind = kind;
	if (kind == OUTCOME_AUTH || kind == OUTCOME_MODEL) {
		ts->final_seen = 1;
		ts->final_failed = 1;
		adapter_set(&ts->error, text);
		adapter_progress(ts, "failed", text);
	} else {
		/* the reason if the CLI exits after it without a final word */
		adapter_set(&ts->error, text);
		adapter_set(&ts->retry, text);
		adapter_progress(ts, "retry", text);
	}
	free(text);
}

/*
 * The CLI gave up: the kind of its final error (an HTTP status if it
 * named one, else its words, else the kind of the last retry it reported,
 * which is what it gave up on).  A rate limit or quota notes the wait the
 * text names; a quota with a known reset is a rate limit to wait out.
 */
void
adapter_fail_kind(struct tool_stream *ts, long status, const char *msg)
{
	enum outcome_kind k = fallback_kind_status(status, msg);

	if (k == OUTCOME_NONE)
		k = fallback_kind(msg);
	if (k == OUTCOME_TOOL_ERROR && ts->error_kind != OUTCOME_NONE)
		k = ts->error_kind;
	if (k == OUTCOME_RATE_LIMITED || k == OUTCOME_QUOTA_EXHAUSTED)
		retryafter_note(ts, msg);
	ts->error_kind = fallback_settle(k, ts->retry_after_ms);
}

/*
 * A line of the tool's stderr.  gemini and qwen log their retries there
 * ("Attempt 2 failed with status 429. Retrying with backoff...",
 * "Attempt 1 failed: rate limit exceeded"); returns 1 when the line was one.
 */
int
adapter_stderr_line(struct tool_stream *ts, const char *line, size_t len)
{
	char		*s, *p, *end, *msg;
	unsigned long	 attempt;
	long		 status = 0;

	if (len < 16 || len > 4096)
		return 0;
	s = xstrndup(line, len);
	/* gemini: "Suggested retry after 7s.. Retrying after 7345ms..." */
	if (strstr(s, "Suggested retry after") != NULL)
		retryafter_note(ts, s);
	if ((p = strstr(s, "Attempt ")) == NULL ||
	    (attempt = strtoul(p + 8, &end, 10)) == 0 ||
	    strncmp(end, " failed", 7) != 0) {
		free(s);
		return 0;
	}
	msg = end + 7;
	if (strncmp(msg, " with status ", 13) == 0)
		status = strtol(msg + 13, &msg, 10);
	msg += strspn(msg, ":. ");
	if (strncmp(msg, "Retrying", 8) == 0 && (p = strstr(msg, "... ")))
		msg = p + 4;
	adapter_api_error(ts, status, *msg != '\0' ? msg : NULL, attempt, 0);
	free(s);
	return 1;
}

/* The most telling argument of a tool call, whichever CLI named it. */
const char *
adapter_tool_detail(const json_t *input)
{
	static const char *const keys[] = {
		"command", "file_path", "filePath", "absolute_path", "path",
		"dir_path", "pattern", "url", "query", "description", "prompt",
	};
	const char	*s;
	size_t		 i;

	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if ((s = adapter_str(input, keys[i])) != NULL)
			return s;
	}
	return NULL;
}
