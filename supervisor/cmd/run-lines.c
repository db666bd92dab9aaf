/*
 * run-lines.c: the plain line `run` prints on stderr for an engine event
 * (a worker's start and end, a retry, a requeue, a provider's hold, a
 * branch merged), one table of them, and the choice of view made once at
 * start-up: the live status lines on a terminal, these lines alone
 * elsewhere, or none.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"

/* A string field for messages, "" if absent. */
static const char *
line_s(const json_t *o, const char *k)
{
	const char	*s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "";
}

/* An integer field for messages, 0 if absent. */
static long long
line_i(const json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

/* A worker was spawned: which role, which agent, on which tool. */
static void
line_started(FILE *fp, const json_t *o)
{
	fprintf(fp, "[%s] %s started (%s)\n", line_s(o, "role"),
	    line_s(o, "agent_id"), line_s(o, "tool"));
}

/*
 * A worker ended: its status and summary, and for a failure the kind
 * and the engine's reason, so that a CI log says why without the state.
 */
static void
line_result(FILE *fp, const json_t *o)
{
	const char	*sum = line_s(o, "summary"), *why = line_s(o, "reason");
	const char	*kind = line_s(o, "error_kind");

	if (strcmp(why, sum) == 0)	/* said once is enough */
		why = "";
	fprintf(fp, "[%s] %s: %s%s%s", line_s(o, "role"),
	    line_s(o, "agent_id"), line_s(o, "status"), *sum ? " - " : "",
	    sum);
	if (*kind || *why)
		fprintf(fp, " (%s%s%s)", kind, *kind && *why ? ": " : "", why);
	fputc('\n', fp);
}

/* A step goes again after the retry policy's wait: which try, and why. */
static void
line_retry(FILE *fp, const json_t *o)
{
	fprintf(fp, "[%s] retry %lld of %lld in %lld ms%s%s\n",
	    line_s(o, "step"), line_i(o, "attempt"), line_i(o, "attempts"),
	    line_i(o, "delay_ms"), *line_s(o, "reason") ? ": " : "",
	    line_s(o, "reason"));
}

/* A rate-limited worker's step runs again once its provider opens. */
static void
line_requeued(FILE *fp, const json_t *o)
{
	fprintf(fp, "[%s] %s requeued (%s): %s\n", line_s(o, "role"),
	    line_s(o, "agent_id"), line_s(o, "tool"), line_s(o, "reason"));
}

/* A provider is held: no worker of its tool starts before the time. */
static void
line_hold(FILE *fp, const json_t *o)
{
	fprintf(fp, "[%s] rate limited: no start before %s (%s)\n",
	    line_s(o, "provider"), line_s(o, "until"), line_s(o, "reason"));
}

/* The hold is over. */
static void
line_open(FILE *fp, const json_t *o)
{
	fprintf(fp, "[%s] open again\n", line_s(o, "provider"));
}

/*
 * A writer's branch went through the merge queue: merged (with its diff
 * stat), empty, a conflict (its files) or a check that failed.
 */
static void
line_merge(FILE *fp, const json_t *o)
{
	const json_t	*st = json_object_get(o, "stat"), *f;
	size_t		 i;

	fprintf(fp, "[%s] %s: %s %s", line_s(o, "role"), line_s(o, "agent"),
	    line_s(o, "branch"), line_s(o, "outcome"));
	if (strcmp(line_s(o, "outcome"), "merged") == 0)
		fprintf(fp, " (%lld file%s, +%lld -%lld)", line_i(st, "files"),
		    line_i(st, "files") == 1 ? "" : "s", line_i(st,
		    "insertions"), line_i(st, "deletions"));
	json_array_foreach(json_object_get(json_object_get(o, "conflict"),
	    "files"), i, f)
		fprintf(fp, "%s%s", i == 0 ? " in " : ", ",
		    json_string_value(f));
	fputc('\n', fp);
}

static const struct {
	const char	*event;
	void		(*print)(FILE *, const json_t *);
} run_lines[] = {
	{ "worker_started", line_started },
	{ "worker_result", line_result },
	{ "step_retry", line_retry },
	{ "step_requeued", line_requeued },
	{ "provider_hold", line_hold },
	{ "provider_open", line_open },
	{ "merge_result", line_merge },
};

/* The event's line on fp, from the table; 0 when it has none. */
int
run_line_print(FILE *fp, const char *name, const json_t *o)
{
	size_t	i;

	for (i = 0; i < sizeof run_lines / sizeof run_lines[0]; i++)
		if (strcmp(name, run_lines[i].event) == 0) {
			run_lines[i].print(fp, o);
			fflush(fp);
			return 1;
		}
	return 0;
}

/*
 * Which view, once at start-up: --quiet and --json print none (stdout
 * has the events with --json); a terminal that can move its cursor (TERM
 * set and not "dumb") gets the live lines; else the plain lines, as a
 * CI log or a pipe wants them.
 */
enum run_view
run_view_pick(int quiet, int json)
{
	const char	*term = getenv("TERM");

	if (quiet || json)
		return RUN_VIEW_QUIET;
	if (isatty(STDERR_FILENO) && term != NULL && *term != '\0' &&
	    strcmp(term, "dumb") != 0)
		return RUN_VIEW_LIVE;
	return RUN_VIEW_PLAIN;
}
