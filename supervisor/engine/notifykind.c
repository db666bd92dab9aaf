/*
 * notifykind.c: THE table of notification kinds (notify.h): each kind's
 * config word, the bus event it comes from (LOOP_COMPLETED split by its
 * final_status; stuck and held are the notifier's timers), and the words
 * of its one line for people.  Every list of kinds is read from here.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notify.h"
#include "xmalloc.h"

/*
 * The kinds.  stuck: a running loop with no event for stuck_ms; held:
 * a provider_hold not followed by its provider_open within held_ms
 * (both notify.c's timers, so no event of their own here).
 */
static const struct notify_kind	notify_kinds[] = {
	{ "needs_input", "question_asked", NULL, "needs input" },
	{ "failed", "LOOP_COMPLETED", "failed", "failed" },
	{ "completed", "LOOP_COMPLETED", "completed", "completed" },
	{ "batch_completed", "batch_completed", NULL, "batch completed" },
	{ "budget_warning", "budget_warning", NULL, "budget warning" },
	{ "budget_reached", "budget_reached", NULL, "budget reached" },
	{ "stuck", NULL, NULL, "no progress" },
	{ "held", NULL, NULL, "held by a rate limit" },
};

#define NOTIFY_NKINDS	(sizeof notify_kinds / sizeof notify_kinds[0])

/* How many kinds there are (walk them with notify_kind_at). */
size_t
notify_kind_count(void)
{
	return NOTIFY_NKINDS;
}

/* The i-th kind, or NULL past the end. */
const struct notify_kind *
notify_kind_at(size_t i)
{
	return i < NOTIFY_NKINDS ? &notify_kinds[i] : NULL;
}

/* A config word's kind, or NULL (a rule naming no kind is refused). */
const struct notify_kind *
notify_kind_find(const char *name)
{
	size_t	i;

	for (i = 0; name != NULL && i < NOTIFY_NKINDS; i++)
		if (strcmp(name, notify_kinds[i].name) == 0)
			return &notify_kinds[i];
	return NULL;
}

/*
 * The kind a bus event is, or NULL: the row naming the event (and, for
 * LOOP_COMPLETED, its final_status: a stop or a pause notifies nobody).
 */
const struct notify_kind *
notify_kind_of(const char *event, const json_t *fields)
{
	const char	*st = json_string_value(json_object_get(fields,
			    "final_status"));
	size_t		 i;

	for (i = 0; event != NULL && i < NOTIFY_NKINDS; i++) {
		if (notify_kinds[i].event == NULL ||
		    strcmp(event, notify_kinds[i].event) != 0)
			continue;
		if (notify_kinds[i].final_status == NULL)
			return &notify_kinds[i];
		if (st != NULL && strcmp(st, notify_kinds[i].final_status)
		    == 0)
			return &notify_kinds[i];
	}
	return NULL;
}

/* "a, b, c" of n words: the kinds' and the sink types' "one of" lists. */
char *
notify_join(const char *(*word)(size_t), size_t n)
{
	char	*s = xstrdup(""), *t;
	size_t	 i;

	for (i = 0; i < n; i++) {
		xasprintf(&t, "%s%s%s", s, i > 0 ? ", " : "", word(i));
		free(s);
		s = t;
	}
	return s;
}

/* The i-th kind's word. */
static const char *
notify_kind_word(size_t i)
{
	return notify_kinds[i].name;
}

/* "a, b, c": the kinds, for a config error's "one of". */
char *
notify_kind_list(void)
{
	return notify_join(notify_kind_word, NOTIFY_NKINDS);
}

/*
 * The body's one line for people: "loop L failed: why" (the event's
 * reason, question or budget, when it has one), who being "loop L" or
 * "batch B" (NULL: a provider's hold).
 */
char *
notify_kind_text(const struct notify_kind *k, const char *who,
    const json_t *ev)
{
	const json_t	*q = json_object_get(ev, "question");
	const char	*why;
	char		*s;

	why = json_string_value(json_object_get(ev, "reason"));
	if (json_is_object(q))
		why = json_string_value(json_object_get(q, "question"));
	if (why == NULL)
		why = json_string_value(json_object_get(ev, "budget"));
	if (why == NULL)
		why = json_string_value(json_object_get(ev, "provider"));
	xasprintf(&s, "ccw-supervisor: %s%s%s%s%s", who != NULL ? who : "",
	    who != NULL ? " " : "", k->says, why != NULL ? ": " : "",
	    why != NULL ? why : "");
	return s;
}
