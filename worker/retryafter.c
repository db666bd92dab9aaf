/*
 * retryafter.c: the wait a rate-limited CLI or its API named, read from
 * the words the five CLIs print (the 429 and quota streams of
 * tests/streams): "retry after 7s", "try again in 1m30s",
 * "retryDelay": "7s", a reset epoch.
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "adapter.h"

#define RETRYAFTER_MAX_MS	(8ull * 24 * 3600 * 1000)	/* a week and a day */

/* Milliseconds per unit word ("ms", "s", "sec", "minutes", ...); 0: none. */
static uint64_t
retryafter_unit(const char *p, size_t *len)
{
	static const struct {
		const char	*word;
		uint64_t	 ms;
	} units[] = {	/* longest first: "ms" before "m", "min" before "m" */
		{ "milliseconds", 1 }, { "millisecond", 1 }, { "ms", 1 },
		{ "seconds", 1000 }, { "second", 1000 }, { "secs", 1000 },
		{ "sec", 1000 }, { "s", 1000 },
		{ "minutes", 60000 }, { "minute", 60000 }, { "mins", 60000 },
		{ "min", 60000 }, { "m", 60000 },
		{ "hours", 3600000 }, { "hour", 3600000 }, { "hrs", 3600000 },
		{ "hr", 3600000 }, { "h", 3600000 },
	};
	size_t	i, n;

	for (i = 0; i < sizeof units / sizeof units[0]; i++) {
		n = strlen(units[i].word);
		if (strncasecmp(p, units[i].word, n) == 0 &&
		    !isalpha((unsigned char)p[n])) {
			*len = n;
			return units[i].ms;
		}
	}
	return 0;
}

/*
 * A duration at p: "7", "7s", "1.5s", "500ms", "6m0s", "2h 5m",
 * "20 seconds".  A bare number is seconds (the Retry-After header's
 * form).  Returns milliseconds, 0 when p holds none.
 */
static uint64_t
retryafter_duration(const char *p)
{
	uint64_t	 total = 0, unit;
	double		 v;
	char		*end;
	size_t		 len;
	int		 parts = 0;

	for (;;) {
		while (*p == ' ' || *p == '"')
			p++;
		if (!isdigit((unsigned char)*p))
			break;
		v = strtod(p, &end);
		p = end;
		while (*p == ' ')
			p++;
		if ((unit = retryafter_unit(p, &len)) == 0) {
			if (parts == 0)
				total = (uint64_t)(v * 1000.0 + 0.5);
			break;
		}
		total += (uint64_t)(v * (double)unit + 0.5);
		p += len;
		parts++;
	}
	return total;
}

/* A Unix time at p (seconds, or milliseconds when 13 digits) as a wait. */
static uint64_t
retryafter_epoch(const char *p, uint64_t now_ms)
{
	unsigned long long	 v;
	char			*end;
	size_t			 digits;

	p += strspn(p, " \":=|");
	v = strtoull(p, &end, 10);
	digits = (size_t)(end - p);
	if (digits == 10)
		v *= 1000;
	else if (digits != 13)
		return 0;
	return v > now_ms ? v - now_ms : 0;
}

/* Wall clock in milliseconds: reset epochs are measured against it. */
static uint64_t
retryafter_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The wait a message names, in milliseconds from now_ms (0: the wall
 * clock); 0 when it names none.  Phrases are tried in order, the first
 * that yields a wait wins; "Retrying after 5632ms" is the CLI's own
 * backoff, not the API's word, and is not one of them.
 */
uint64_t
retryafter_parse(const char *text, uint64_t now_ms)
{
	static const struct {
		const char	*phrase;
		int		 epoch;
	} phrases[] = {
		{ "retry after", 0 }, { "retry-after", 0 },
		{ "retrydelay", 0 },
		{ "try again in", 0 }, { "retry in", 0 }, { "resets in", 0 },
		{ "resets at", 1 }, { "resetsat", 1 }, { "reset_at", 1 },
		{ "resets_at", 1 }, { "limit reached|", 1 },
	};
	const char	*s;
	uint64_t	 ms;
	size_t		 i, n;

	if (text == NULL)
		return 0;
	if (now_ms == 0)
		now_ms = retryafter_now();
	for (i = 0; i < sizeof phrases / sizeof phrases[0]; i++) {
		n = strlen(phrases[i].phrase);
		for (s = text; *s != '\0'; s++) {
			if (strncasecmp(s, phrases[i].phrase, n) != 0)
				continue;
			if (phrases[i].epoch)
				ms = retryafter_epoch(s + n, now_ms);
			else
				ms = retryafter_duration(s + n + strspn(s + n,
				    "\":= "));
			if (ms > 0 && ms <= RETRYAFTER_MAX_MS)
				return ms;
		}
	}
	return 0;
}

/* Keep the wait a rate-limit message names; a later one replaces it. */
void
retryafter_note(struct tool_stream *ts, const char *text)
{
	uint64_t	ms = retryafter_parse(text, ts->now_ms);

	if (ms > 0)
		ts->retry_after_ms = ms;
}
