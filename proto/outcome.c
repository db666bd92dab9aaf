/*
 * outcome.c: the rows of the outcome-kind table (outcome.h).  Every
 * classifier (the adapters, the worker's fallbacks, the supervisor's
 * timers and reaper) returns one of these; every reader looks words up
 * here rather than spelling them.
 */
#include <config.h>

#include <string.h>

#include "outcome.h"

/* Indexed by enum outcome_kind; the order is the man page's. */
static const struct outcome_def outcome_table[OUTCOME__COUNT] = {
	[OUTCOME_NONE] = { "", 0, "success" },
	[OUTCOME_AUTH] = { "auth", OUTCOME_PROVIDER | OUTCOME_GIVE_UP,
	    "credentials missing or refused (HTTP 401/403, not logged in)" },
	[OUTCOME_MODEL] = { "model", OUTCOME_PROVIDER | OUTCOME_GIVE_UP,
	    "no such model, or the account may not use it (HTTP 404)" },
	[OUTCOME_RATE_LIMITED] = { "rate_limited",
	    OUTCOME_PROVIDER | OUTCOME_GATED,
	    "HTTP 429: wait for the provider's reset, then go on" },
	[OUTCOME_QUOTA_EXHAUSTED] = { "quota_exhausted",
	    OUTCOME_PROVIDER | OUTCOME_GIVE_UP,
	    "the plan's quota or credit is used up (insufficient_quota, "
	    "per-day quota)" },
	[OUTCOME_OVERLOADED] = { "overloaded",
	    OUTCOME_PROVIDER | OUTCOME_GIVE_UP,
	    "the provider is overloaded (HTTP 529, 503 overloaded)" },
	[OUTCOME_SERVER_ERROR] = { "server_error",
	    OUTCOME_PROVIDER | OUTCOME_GIVE_UP,
	    "the provider failed (HTTP 5xx)" },
	[OUTCOME_NETWORK] = { "network", OUTCOME_PROVIDER,
	    "the provider could not be reached (refused, DNS, reset)" },
	[OUTCOME_TIMEOUT] = { "timeout", OUTCOME_SUPERVISOR,
	    "the role's deadline passed" },
	[OUTCOME_IDLE] = { "idle", OUTCOME_SUPERVISOR,
	    "no output for the idle timeout" },
	[OUTCOME_LOST] = { "lost", OUTCOME_SUPERVISOR,
	    "the worker's host or launcher went away (ssh, Slurm, container)" },
	[OUTCOME_CRASHED] = { "crashed", OUTCOME_SUPERVISOR,
	    "the worker or its tool died by a signal or an unexpected exit" },
	[OUTCOME_PROTOCOL] = { "protocol", OUTCOME_SUPERVISOR,
	    "the worker broke the frame protocol" },
	[OUTCOME_TOOL_ERROR] = { "tool_error", 0,
	    "the tool failed for a reason of its own (non-zero exit)" },
	[OUTCOME_CANCELLED] = { "cancelled", OUTCOME_SUPERVISOR,
	    "closed or stopped on request" },
};

/* A row; NULL for a number no row has (a corrupt or newer peer's). */
const struct outcome_def *
outcome_at(enum outcome_kind k)
{
	if ((unsigned)k >= OUTCOME__COUNT)
		return NULL;
	return &outcome_table[k];
}

/* The kind of a wire word; unknown words and NULL read as none, so a
 * newer peer's kind never crashes an older reader. */
enum outcome_kind
outcome_find(const char *word)
{
	unsigned	i;

	if (word == NULL || *word == '\0')
		return OUTCOME_NONE;
	for (i = 1; i < OUTCOME__COUNT; i++)
		if (strcmp(word, outcome_table[i].name) == 0)
			return (enum outcome_kind)i;
	return OUTCOME_NONE;
}

/* The wire word; "" for none or out of range. */
const char *
outcome_name(enum outcome_kind k)
{
	const struct outcome_def *d = outcome_at(k);

	return d != NULL ? d->name : "";
}

/* Does a wire word name this kind?  (The one way to compare kinds.) */
int
outcome_is(const char *word, enum outcome_kind k)
{
	return k != OUTCOME_NONE && outcome_find(word) == k;
}
