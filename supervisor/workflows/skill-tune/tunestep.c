/*
 * tunestep.c: what every step of a skill-tune run (tuneact.c,
 * tuneapply.c, tune.c) records through: the time, its events, the
 * TuningState saved, an action's begin and end, an error against the
 * budget, the next phase, and the fixes by id.  It calls no step.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "sup.h"
#include "tunedrv.h"
#include "xmalloc.h"

/* Now, for every timestamp of the state. */
const char *
tune_now(char *buf)
{
	clock_iso(NULL, 1, buf, 40);
	return buf;
}

/* A step for the command's output. */
void
tune_emit(struct tune *t, const char *name, json_t *data)
{
	if (t->hooks.event != NULL)
		t->hooks.event(t->hooks.arg, name, data);
	json_decref(data);
}

/* Validate and write; a write that fails ends the run (exit 70). */
int
tune_save(struct tune *t)
{
	char	*err = NULL;

	if (tunestate_save(t->wfd, t->st, &err) == 0)
		return 0;
	log_warnx("tune %s: %s", t->id, err);
	tune_emit(t, "error", json_pack("{s:s, s:s}", "action", "save",
	    "message", err));
	free(err);
	t->exit_status = EXIT_INTERNAL;
	tune_enter(t, TP_STOPPED);
	return -1;
}

/* An action starts: current_action, and its start for the history. */
void
tune_begin(struct tune *t, const char *action)
{
	char	now[40];

	free(t->t0);
	t->t0 = xstrdup(tune_now(now));
	tunestate_action_begin(t->st, action, now);
	tune_emit(t, "action_started", json_pack("{s:s}", "action", action));
}

/* An action ended with result (success, failure, skipped). */
void
tune_end(struct tune *t, const char *action, const char *result,
    const json_t *files)
{
	char	now[40];

	tunestate_action_end(t->st, action, result, t->t0, tune_now(now),
	    files);
	tune_emit(t, "action_completed", json_pack("{s:s, s:s}", "action",
	    action, "result", result));
}

/* An error entry; 1 when the budget is spent. */
int
tune_error(struct tune *t, const char *action, const char *msg)
{
	char	now[40];

	tunestate_error(t->st, action, msg, 1, tune_now(now));
	tune_emit(t, "error", json_pack("{s:s, s:s}", "action", action,
	    "message", msg));
	return tunestate_over_budget(t->st);
}

/* The next phase runs on the next turn, never inside a callback. */
void
tune_enter(struct tune *t, enum tune_phase p)
{
	t->phase = p;
	event_active(t->next_ev, EV_TIMEOUT, 0);
}

/* The fix by id in proposed_fixes. */
json_t *
tune_fix(const struct tune *t, const char *id)
{
	json_t	*f;
	size_t	 i;

	json_array_foreach(json_object_get(t->st, "proposed_fixes"), i, f)
		if (strcmp(json_string_value(json_object_get(f, "id")), id) ==
		    0)
			return f;
	return NULL;
}

/* The latest applied_fixes entry of a fix. */
json_t *
tune_applied(const struct tune *t, const char *id)
{
	json_t	*a, *last = NULL;
	size_t	 i;

	json_array_foreach(json_object_get(t->st, "applied_fixes"), i, a)
		if (strcmp(json_string_value(json_object_get(a, "fix_id")), id)
		    == 0)
			last = a;
	return last;
}
