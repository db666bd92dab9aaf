/*
 * fallback.c: what a result says when the agent did not say it: the
 * summary from the answer's last paragraph, the reason from the tool's
 * last meaningful stderr line, and the kind of an API error (DESIGN.md
 * section 5: auth, model, rate_limited, network, tool_error).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "result.h"
#include "xmalloc.h"

#define REASON_MAX	400	/* bytes of a stderr line used as a reason */
#define SUMMARY_MAX	2000	/* bytes of a paragraph used as a summary */

/* Valid UTF-8 copy of at most max bytes, cut between characters. */
static char *
fallback_copy(const char *p, size_t n, size_t max)
{
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)p[n] & 0xc0) == 0x80)
			n--;
	}
	return xstrndup(p, n);
}

/*
 * Is this stderr line worth showing as the reason?  Stack frames,
 * runtime banners and bare punctuation are not what the user needs.
 */
static int
fallback_meaningful(const char *s, size_t n)
{
	size_t	i;
	int	alpha = 0;

	if (n == 0 || s[0] == ' ' || s[0] == '\t')
		return 0;
	if (n >= 8 && memcmp(s, "Node.js ", 8) == 0)
		return 0;
	for (i = 0; i < n; i++)
		if ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z'))
			alpha++;
	return alpha >= 3;
}

/* The last meaningful line of text (owned), or NULL if there is none. */
char *
fallback_reason(const char *text)
{
	const char	*end, *start;

	if (text == NULL)
		return NULL;
	end = text + strlen(text);
	while (end > text) {
		while (end > text && (end[-1] == '\n' || end[-1] == '\r'))
			end--;
		for (start = end; start > text && start[-1] != '\n'; start--)
			;
		if (fallback_meaningful(start, (size_t)(end - start)))
			return fallback_copy(start, (size_t)(end - start),
			    REASON_MAX);
		end = start;
	}
	return NULL;
}

/* Is [p, p+n) only blanks? */
static int
fallback_blank(const char *p, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\n')
			return 0;
	return 1;
}

/*
 * An answer without a WORKER_RESULT block still ends with what the agent
 * concluded: its last paragraph (blank-line separated), trimmed.
 */
char *
fallback_summary(const char *text)
{
	const char	*end, *pos, *ls, *start;

	if (text == NULL)
		return NULL;
	end = text + strlen(text);
	while (end > text && strchr(" \t\r\n", end[-1]) != NULL)
		end--;
	if (end == text)
		return NULL;
	/* Walk back line by line to the first blank one. */
	for (pos = end;; pos = ls - 1) {
		for (ls = pos; ls > text && ls[-1] != '\n'; ls--)
			;
		if (fallback_blank(ls, (size_t)(pos - ls))) {
			start = pos;
			break;
		}
		if (ls == text) {
			start = text;
			break;
		}
	}
	while (start < end && strchr(" \t\r\n", *start) != NULL)
		start++;
	return fallback_copy(start, (size_t)(end - start), SUMMARY_MAX);
}

/* Case-insensitive substring. */
static int
fallback_has(const char *s, const char *word)
{
	size_t	n = strlen(word);

	for (; *s != '\0'; s++)
		if (strncasecmp(s, word, n) == 0)
			return 1;
	return 0;
}

/* The error kind of an HTTP status, or NULL if it names none. */
const char *
fallback_kind_status(long status)
{
	if (status == 401 || status == 403)
		return "auth";
	if (status == 404)
		return "model";
	if (status == 429)
		return "rate_limited";
	if (status >= 500 && status <= 599)
		return "network";
	return NULL;
}

/*
 * The error kind a CLI's error message tells, by the words the five CLIs
 * use (tests/streams/); "tool_error" when it tells none.
 */
const char *
fallback_kind(const char *msg)
{
	static const struct {
		const char	*word;
		const char	*kind;
	} words[] = {
		{ "401", "auth" }, { "403", "auth" }, { "unauthorized", "auth" },
		{ "forbidden", "auth" }, { "api key", "auth" },
		{ "api_key", "auth" }, { "api-key", "auth" },
		{ "apikey", "auth" }, { "not logged in", "auth" },
		{ "/login", "auth" }, { "authenticat", "auth" },
		{ "auth type", "auth" }, { "credential", "auth" },
		{ "429", "rate_limited" }, { "rate limit", "rate_limited" },
		{ "rate_limit", "rate_limited" }, { "quota", "rate_limited" },
		{ "resource_exhausted", "rate_limited" },
		{ "overloaded", "rate_limited" },
		{ "does not exist", "model" }, { "model not found", "model" },
		{ "not_found_error", "model" }, { "404", "model" },
		{ "unknown model", "model" },
		{ "fetch failed", "network" }, { "connect", "network" },
		{ "network", "network" }, { "econnrefused", "network" },
		{ "enotfound", "network" }, { "timed out", "network" },
		{ "timeout", "network" }, { "stream disconnected", "network" },
		{ "500", "network" }, { "502", "network" }, { "503", "network" },
		{ "internal server error", "network" },
	};
	size_t	i;

	if (msg == NULL)
		return "tool_error";
	for (i = 0; i < sizeof words / sizeof words[0]; i++)
		if (fallback_has(msg, words[i].word))
			return words[i].kind;
	return "tool_error";
}
