/*
 * fallback.c: what a result says when the agent did not say it: the
 * summary from the answer's last paragraph, the reason from the tool's
 * last meaningful stderr line, and the kind of an API error (one of
 * proto/outcome.h's, read from the words and statuses the CLIs print).
 */
#include <config.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "outcome.h"
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

/*
 * Case-insensitive substring; a number only as a whole number, so that a
 * port or a request id ("127.0.0.1:40123") is no HTTP 401.
 */
static int
fallback_has(const char *s, const char *word)
{
	size_t		 n = strlen(word);
	const char	*p;
	int		 num = n > 0 && strspn(word, "0123456789") == n;

	for (p = s; *p != '\0'; p++) {
		if (strncasecmp(p, word, n) != 0)
			continue;
		if (!num || ((p == s || !isdigit((unsigned char)p[-1])) &&
		    !isdigit((unsigned char)p[n])))
			return 1;
	}
	return 0;
}

/*
 * The kind an HTTP status names, or OUTCOME_NONE.  529 (Anthropic's
 * overloaded_error) is an overload, and so is any 5xx whose message says
 * so (a 503 "overloaded"); any other 5xx is the provider failing, not the
 * network: the request did reach it.
 */
enum outcome_kind
fallback_kind_status(long status, const char *msg)
{
	if (status == 401 || status == 403)
		return OUTCOME_AUTH;
	if (status == 404)
		return OUTCOME_MODEL;
	if (status == 429)
		return fallback_kind(msg) == OUTCOME_QUOTA_EXHAUSTED ?
		    OUTCOME_QUOTA_EXHAUSTED : OUTCOME_RATE_LIMITED;
	if (status == 529)
		return OUTCOME_OVERLOADED;
	if (status >= 500 && status <= 599)
		return msg != NULL && fallback_has(msg, "overload") ?
		    OUTCOME_OVERLOADED : OUTCOME_SERVER_ERROR;
	return OUTCOME_NONE;
}

/*
 * The kind a CLI's error message tells, by the words the five CLIs use
 * (tests/streams/); OUTCOME_TOOL_ERROR when it tells none.  The order
 * matters: a quota message also says 429 or RESOURCE_EXHAUSTED, an
 * overload also says 529 or 503.
 */
enum outcome_kind
fallback_kind(const char *msg)
{
	static const struct {
		const char		*word;
		enum outcome_kind	 kind;
	} words[] = {
		{ "401", OUTCOME_AUTH }, { "403", OUTCOME_AUTH },
		{ "unauthorized", OUTCOME_AUTH }, { "forbidden", OUTCOME_AUTH },
		{ "api key", OUTCOME_AUTH }, { "api_key", OUTCOME_AUTH },
		{ "api-key", OUTCOME_AUTH }, { "apikey", OUTCOME_AUTH },
		{ "not logged in", OUTCOME_AUTH }, { "/login", OUTCOME_AUTH },
		{ "authenticat", OUTCOME_AUTH }, { "auth type", OUTCOME_AUTH },
		{ "credential", OUTCOME_AUTH },
		{ "insufficient_quota", OUTCOME_QUOTA_EXHAUSTED },
		{ "quota exceeded", OUTCOME_QUOTA_EXHAUSTED },
		{ "exceeded your current quota", OUTCOME_QUOTA_EXHAUSTED },
		{ "daily quota", OUTCOME_QUOTA_EXHAUSTED },
		{ "perday", OUTCOME_QUOTA_EXHAUSTED },
		{ "usage limit", OUTCOME_QUOTA_EXHAUSTED },
		{ "overloaded", OUTCOME_OVERLOADED },
		{ "high demand", OUTCOME_OVERLOADED },	/* codex, on a 500 */
		{ "429", OUTCOME_RATE_LIMITED },
		{ "rate limit", OUTCOME_RATE_LIMITED },
		{ "rate_limit", OUTCOME_RATE_LIMITED },
		{ "too many requests", OUTCOME_RATE_LIMITED },
		{ "quota", OUTCOME_RATE_LIMITED },
		{ "resource_exhausted", OUTCOME_RATE_LIMITED },
		{ "does not exist", OUTCOME_MODEL },
		{ "model not found", OUTCOME_MODEL },
		{ "not_found_error", OUTCOME_MODEL }, { "404", OUTCOME_MODEL },
		{ "unknown model", OUTCOME_MODEL },
		{ "internal server error", OUTCOME_SERVER_ERROR },
		{ "server_error", OUTCOME_SERVER_ERROR },
		{ "server error", OUTCOME_SERVER_ERROR },
		{ "bad gateway", OUTCOME_SERVER_ERROR },
		{ "service unavailable", OUTCOME_SERVER_ERROR },
		{ "fetch failed", OUTCOME_NETWORK }, { "connect", OUTCOME_NETWORK },
		{ "network", OUTCOME_NETWORK }, { "econnrefused", OUTCOME_NETWORK },
		{ "econnreset", OUTCOME_NETWORK },
		{ "enotfound", OUTCOME_NETWORK }, { "timed out", OUTCOME_NETWORK },
		{ "timeout", OUTCOME_NETWORK },
		{ "stream disconnected", OUTCOME_NETWORK },
		/* bare numbers last: "after 5000ms" is no HTTP 500 */
		{ "529", OUTCOME_OVERLOADED },
		{ "500", OUTCOME_SERVER_ERROR }, { "502", OUTCOME_SERVER_ERROR },
		{ "503", OUTCOME_SERVER_ERROR }, { "504", OUTCOME_SERVER_ERROR },
	};
	size_t	i;

	if (msg == NULL)
		return OUTCOME_TOOL_ERROR;
	for (i = 0; i < sizeof words / sizeof words[0]; i++)
		if (fallback_has(msg, words[i].word))
			return words[i].kind;
	return OUTCOME_TOOL_ERROR;
}

/*
 * The last word on a kind, once the wait is known: a quota whose reset
 * the CLI or API named is a rate limit to wait out (the provider's gate
 * holds until then, as for any 429); a quota with no reset in sight is
 * used up, and waiting would learn nothing.
 */
enum outcome_kind
fallback_settle(enum outcome_kind k, uint64_t retry_after_ms)
{
	if (k == OUTCOME_QUOTA_EXHAUSTED && retry_after_ms > 0)
		return OUTCOME_RATE_LIMITED;
	return k;
}
