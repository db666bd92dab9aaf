/*
 * test-limits.c: how each adapter reads a failed attempt from real CLI
 * output (the 401, 429 and quota streams of tests/streams): the error
 * kind, the wait a rate limit names (retry_after_ms), and the usage.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "result.h"
#include "streamfeed.h"
#include "tap.h"

#define L(s)	(s), sizeof(s) - 1

/*
 * API errors (real streams, tests/streams/README.md): auth and a missing
 * model end the turn with a kind; 429/5xx are retries reported as such.
 */
static void
test_api_errors(void)
{
	const struct adapter	*ad;
	struct tool_stream	 ts;

	feed("claude", "claude-401.jsonl", &ts);
	tap_ok(ts.final_seen && ts.final_failed &&
	    ts.error_kind == OUTCOME_AUTH, "claude 401 api_retry: final, "
	    "failed, kind auth");
	tap_is_str(ts.error, "API error HTTP 401: authentication_failed, "
	    "attempt 1/10", "claude 401: the reason names status and attempt");
	tool_stream_clear(&ts);

	feed("claude", "claude-429.jsonl", &ts);
	tap_ok(!ts.final_seen && ts.retry != NULL && strstr(ts.retry,
	    "HTTP 429") != NULL && strstr(ts.retry, "attempt 3/10") != NULL,
	    "claude 429 api_retry: not final, a retry \"%s\"",
	    ts.retry ? ts.retry : "(null)");
	tool_stream_clear(&ts);

	feed("claude", "claude-404.jsonl", &ts);
	tap_ok(ts.final_failed && ts.error_kind == OUTCOME_MODEL,
	    "claude 404 result: failed, kind model");
	tool_stream_clear(&ts);

	feed("codex", "codex-401.jsonl", &ts);
	tap_ok(ts.final_failed && ts.error_kind == OUTCOME_AUTH &&
	    ts.error != NULL &&
	    strstr(ts.error, "401 Unauthorized") != NULL,
	    "codex 401 Reconnecting: failed, kind auth, the CLI's message");
	tool_stream_clear(&ts);

	feed("codex", "codex-429.jsonl", &ts);
	tap_ok(!ts.final_seen && ts.retry != NULL &&
	    strstr(ts.retry, "429") != NULL && strstr(ts.retry, "2/5") != NULL,
	    "codex 429 Reconnecting: a retry \"%s\"",
	    ts.retry ? ts.retry : "(null)");
	tool_stream_clear(&ts);

	feed("codex", "codex-offline.jsonl", &ts);
	tap_ok(!ts.final_seen && ts.retry != NULL,
	    "codex offline: retries, not final");
	tool_stream_clear(&ts);

	memset(&ts, 0, sizeof ts);
	ad = adapter_find("codex");
	feed_line(ad, &ts, L("{\"type\":\"item.completed\",\"item\":{\"id\":"
	    "\"item_0\",\"type\":\"error\",\"message\":\"Model metadata for "
	    "`m` not found.\"}}"));
	tap_ok(ts.error == NULL && !ts.final_seen,
	    "codex warning item: no error, not final");
	tool_stream_clear(&ts);

	tap_ok(adapter_stderr_line(&ts, L("Attempt 2 failed with status 500. "
	    "Retrying with backoff... _ApiError: x")) && !ts.final_seen &&
	    ts.retry != NULL && strstr(ts.retry, "HTTP 500") != NULL &&
	    strstr(ts.retry, "attempt 2") != NULL,
	    "gemini stderr 500: a retry \"%s\"", ts.retry ? ts.retry : "");
	tool_stream_clear(&ts);
	tap_ok(adapter_stderr_line(&ts, L("Attempt 1 failed: mock rate limit "
	    "exceeded, retry later")) && !ts.final_seen && ts.retry != NULL &&
	    strstr(ts.retry, "rate limit") != NULL,
	    "gemini stderr 429: a retry");
	tool_stream_clear(&ts);
	tap_ok(!adapter_stderr_line(&ts, L("Attempting to connect")) &&
	    ts.retry == NULL, "other stderr lines are not retries");
	tool_stream_clear(&ts);

	tap_ok(feed("claude", "claude-success.jsonl", &ts) == 0 &&
	    ts.cost_seen, "claude reports a cost");
	tool_stream_clear(&ts);
	tap_ok(feed("codex", "codex-success.jsonl", &ts) == 0 &&
	    !ts.cost_seen, "codex reports no cost");
	tool_stream_clear(&ts);
}

/* What a rate-limited or out-of-quota attempt must give, per stream. */
static const struct {
	const char	*tool;
	const char	*file;
	const char	*stderr_file;	/* fed after stdout, or NULL */
	int		 final;		/* the stream ended the turn */
	enum outcome_kind kind;		/* error_kind once final, else none */
	uint64_t	 retry_after_ms;
	int		 cost_seen;
} limits[] = {
	{ "claude", "claude-429.jsonl", NULL, 0, OUTCOME_NONE, 2207, 0 },
	{ "claude", "claude-429-retryafter.jsonl", NULL, 1, OUTCOME_RATE_LIMITED,
	    7000, 1 },
	{ "claude", "claude-quota.jsonl", NULL, 1, OUTCOME_RATE_LIMITED, 5000, 1 },
	{ "codex", "codex-429-retryafter.jsonl", NULL, 1, OUTCOME_RATE_LIMITED, 0,
	    0 },
	{ "codex", "codex-quota.jsonl", NULL, 1, OUTCOME_QUOTA_EXHAUSTED, 0, 0 },
	{ "gemini", "gemini-429.jsonl", "gemini-429.stderr", 1,
	    OUTCOME_RATE_LIMITED, 7000, 0 },
	{ "gemini", "gemini-quota.jsonl", NULL, 1, OUTCOME_QUOTA_EXHAUSTED, 0, 0 },
	{ "opencode", "opencode-429.jsonl", NULL, 1, OUTCOME_RATE_LIMITED, 3000,
	    0 },
	{ "qwen", "qwen-429.jsonl", NULL, 1, OUTCOME_RATE_LIMITED, 0, 0 },
	{ "opencode", "opencode-quota.jsonl", NULL, 1,
	    OUTCOME_QUOTA_EXHAUSTED, 0,
	    0 },
};

/* Each stream: final or not, the kind, the wait, no tokens invented. */
static void
test_limits(void)
{
	struct tool_stream	ts;
	size_t			i;

	for (i = 0; i < sizeof limits / sizeof limits[0]; i++) {
		if (feed(limits[i].tool, limits[i].file, &ts) != 0 ||
		    (limits[i].stderr_file != NULL &&
		    feed_stderr(limits[i].stderr_file, &ts) != 0)) {
			tap_ok(0, "%s: read", limits[i].file);
			tool_stream_clear(&ts);
			continue;
		}
		tap_ok(ts.final_seen == limits[i].final &&
		    ts.final_failed == limits[i].final,
		    "%s: final %d, failed %d", limits[i].file, ts.final_seen,
		    ts.final_failed);
		if (limits[i].kind != OUTCOME_NONE)
			tap_is_str(outcome_name(ts.error_kind),
			    outcome_name(limits[i].kind),
			    "%s: kind",
			    limits[i].file);
		else
			tap_ok(ts.retry != NULL, "%s: a retry \"%s\"",
			    limits[i].file, ts.retry ? ts.retry : "(null)");
		tap_is_int((long long)ts.retry_after_ms,
		    (long long)limits[i].retry_after_ms, "%s: retry_after_ms",
		    limits[i].file);
		tap_ok(ts.tokens_in == 0 && ts.tokens_out == 0 &&
		    ts.cost_seen == limits[i].cost_seen && ts.cost == 0,
		    "%s: no tokens, cost %s", limits[i].file,
		    limits[i].cost_seen ? "0 reported" : "not reported");
		tool_stream_clear(&ts);
	}

	/* gemini logs the API's retryDelay on stderr while it retries. */
	memset(&ts, 0, sizeof ts);
	tap_ok(feed_stderr("gemini-429.stderr", &ts) == 0 &&
	    !ts.final_seen && ts.retry != NULL && ts.retry_after_ms == 7000,
	    "gemini-429.stderr alone: a retry, retry_after_ms %llu",
	    (unsigned long long)ts.retry_after_ms);
	tool_stream_clear(&ts);
}

/*
 * The CLI gave up (tests/streams/, the stand-in's faults): the turn is
 * final and failed, with the kind of proto/outcome.h and the CLI's own
 * words as the reason.  An overload or a 5xx that the CLI gave up on
 * ends the turn at its final event, as an auth error does.
 */
static const struct {
	const char		*tool;
	const char		*file;
	enum outcome_kind	 kind;
	const char		*reason;	/* the start of ts.error */
} gaveup[] = {
	{ "claude", "claude-401.jsonl", OUTCOME_AUTH, "API error HTTP 401" },
	{ "claude", "claude-404.jsonl", OUTCOME_MODEL, "There's an issue" },
	{ "claude", "claude-429-retryafter.jsonl", OUTCOME_RATE_LIMITED,
	    "API Error: Request rejected (429)" },
	{ "claude", "claude-529.jsonl", OUTCOME_OVERLOADED,
	    "API Error: 529 Overloaded." },
	{ "claude", "claude-503.jsonl", OUTCOME_OVERLOADED,
	    "API Error: 503 mock service unavailable: overloaded." },
	{ "claude", "claude-500.jsonl", OUTCOME_SERVER_ERROR,
	    "API Error: 500 mock internal server error." },
	{ "codex", "codex-401.jsonl", OUTCOME_AUTH,
	    "unexpected status 401 Unauthorized" },
	{ "codex", "codex-quota.jsonl", OUTCOME_QUOTA_EXHAUSTED,
	    "Quota exceeded." },
	{ "codex", "codex-529.jsonl", OUTCOME_OVERLOADED,
	    "unexpected status 529" },
	{ "codex", "codex-503.jsonl", OUTCOME_OVERLOADED,
	    "unexpected status 503 Service Unavailable: mock service "
	    "unavailable: overloaded" },
	{ "codex", "codex-500.jsonl", OUTCOME_OVERLOADED,
	    "We\xe2\x80\x99re currently experiencing high demand" },
	{ "gemini", "gemini-500.jsonl", OUTCOME_SERVER_ERROR,
	    "[API Error: [{\"error\":{\"code\":500" },
	{ "gemini", "gemini-503.jsonl", OUTCOME_OVERLOADED,
	    "[API Error: mock service unavailable: overloaded]" },
	{ "gemini", "gemini-quota.jsonl", OUTCOME_QUOTA_EXHAUSTED,
	    "[API Error: You have exhausted your daily quota" },
	{ "opencode", "opencode-quota.jsonl", OUTCOME_QUOTA_EXHAUSTED,
	    "You exceeded your current quota" },
	{ "opencode", "opencode-failure.jsonl", OUTCOME_NETWORK,
	    "Cannot connect to API" },
	{ "qwen", "qwen-apierror.jsonl", OUTCOME_NETWORK,
	    "[API Error: Connection error." },
};

/* Each gave-up stream: final, failed, its kind and the CLI's words. */
static void
test_gaveup(void)
{
	struct tool_stream	ts;
	size_t			i, n;

	for (i = 0; i < sizeof gaveup / sizeof gaveup[0]; i++) {
		if (feed(gaveup[i].tool, gaveup[i].file, &ts) != 0) {
			tap_ok(0, "%s: read", gaveup[i].file);
			tool_stream_clear(&ts);
			continue;
		}
		n = strlen(gaveup[i].reason);
		tap_ok(ts.final_seen && ts.final_failed,
		    "%s: the CLI gave up: final, failed", gaveup[i].file);
		tap_is_str(outcome_name(ts.error_kind),
		    outcome_name(gaveup[i].kind), "%s: kind", gaveup[i].file);
		tap_ok(ts.error != NULL && strncmp(ts.error, gaveup[i].reason,
		    n) == 0, "%s: the CLI's words \"%.60s\"", gaveup[i].file,
		    ts.error != NULL ? ts.error : "(null)");
		tool_stream_clear(&ts);
	}
}

/* The phrases the CLIs and APIs use for a wait, and what is not one. */
static void
test_parse(void)
{
	static const struct {
		const char	*text;
		uint64_t	 ms;
	} cases[] = {
		{ "Suggested retry after 7s.. Retrying after 7345ms...", 7000 },
		{ "Rate limit reached for gpt-x. Please try again in 20s.",
		    20000 },
		{ "Please try again in 1.5s", 1500 },
		{ "Please try again in 6m0s.", 360000 },
		{ "try again in 250ms", 250 },
		{ "{\"retryDelay\": \"7s\"}", 7000 },
		{ "Retry-After: 30", 30000 },
		{ "limit resets in 2h 5m", 7500000 },
		{ "usage limit resets at 1795000100", 100000 },
		{ "Claude AI usage limit reached|1795000060", 60000 },
		{ "\"resetsAt\":1795000002500", 2500 },
		{ "Retrying after 5632ms...", 0 },
		{ "exceeded retry limit, last status: 429 Too Many Requests", 0 },
		{ "usage limit resets at 1794999999", 0 },
		{ "retry after 99999999s", 0 },
		{ "", 0 },
	};
	size_t	i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		tap_is_int((long long)retryafter_parse(cases[i].text,
		    1795000000000ull), (long long)cases[i].ms, "wait in \"%s\"",
		    cases[i].text);
	tap_ok(retryafter_parse(NULL, 0) == 0, "no text, no wait");
}

#undef L

/* Each group is independent; the plan is printed last. */
int
main(void)
{
	test_api_errors();
	test_limits();
	test_gaveup();
	test_parse();
	return tap_done();
}
