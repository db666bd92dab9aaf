/*
 * hold.c: a loop held where it is (a budget reached, a person's pause
 * with --pause-policy freeze): every live run's worker frozen, no new
 * worker started, then thawed to go on.  loop_held / loop_thawed on the
 * loop's events and in its history.
 */
#include <config.h>

#include <stdlib.h>

#include <jansson.h>

#include "clock.h"
#include "log.h"
#include "loop.h"
#include "loopint.h"
#include "xmalloc.h"

/*
 * Hold the loop: its running workers frozen (a remote one goes on: said
 * in the log), none started until loop_unhold.  The file's status is
 * the caller's to write.  -1 when it is held already or ending.
 */
int
loop_hold(struct loop *l, const char *reason)
{
	struct loop_run	*r;
	int		 n = 0;

	if (l->held || l->phase == LP_ENDING || l->phase == LP_DONE)
		return -1;
	l->held = 1;
	l->held_at = clock_mono_ms();
	free(l->held_why);
	l->held_why = xstrdup(reason != NULL ? reason : "held");
	TAILQ_FOREACH(r, &l->runs, entry)
		if (r->a != NULL && !agent_final(r->a) &&
		    agent_freeze(r->a, l->held_why) == 0)
			n++;
	log_info("loop %s: held (%s): %d worker%s frozen", l->cfg.id,
	    l->held_why, n, n == 1 ? "" : "s");
	prompt_record(l->store, json_pack("{s:s, s:s, s:i}", "event",
	    "loop_held", "reason", l->held_why, "frozen", n));
	loop_event(l, "loop_held", json_pack("{s:s, s:i}", "reason",
	    l->held_why, "frozen", n));
	return 0;
}

/*
 * Let a held loop go on: its workers thawed (their deadlines with what
 * they had left); the kick makes the starts it held back (loop.c) and
 * takes the next decision.
 */
void
loop_unhold(struct loop *l)
{
	struct loop_run	*r;
	uint64_t	 ms;

	if (!l->held)
		return;
	l->held = 0;
	ms = clock_mono_ms() - l->held_at;
	TAILQ_FOREACH(r, &l->runs, entry)
		if (r->a != NULL && r->a->frozen)
			agent_thaw(r->a);
	log_info("loop %s: thawed after %llu ms", l->cfg.id,
	    (unsigned long long)ms);
	prompt_record(l->store, json_pack("{s:s, s:s, s:I}", "event",
	    "loop_thawed", "reason", l->held_why, "held_ms", (json_int_t)ms));
	loop_event(l, "loop_thawed", json_pack("{s:I}", "held_ms",
	    (json_int_t)ms));
	loop_kick(l);
}

/* Is the loop held? */
int
loop_held(const struct loop *l)
{
	return l->held;
}
