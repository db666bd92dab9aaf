/*
 * loopphase.c: a loop's phase as one state machine.  loop.c decides
 * what to do; every change of phase (asking, pausing,
 * ending, done) goes through loop_transition, which refuses the rest.
 */
#include <config.h>

#include "log.h"
#include "loopint.h"

/* Phase names for logs and tests. */
const char *
loop_phase_name(enum loop_phase p)
{
	switch (p) {
	case LP_RUNNING:	return "running";
	case LP_ASKING:		return "asking";
	case LP_PAUSING:	return "pausing";
	case LP_ENDING:		return "ending";
	case LP_DONE:		return "done";
	}
	return "unknown";
}

/* Event names for the log. */
static const char *
loop_event_name(enum loop_event e)
{
	switch (e) {
	case LE_ASK:		return "ask";
	case LE_CHOOSE:		return "choose";
	case LE_ANSWER:		return "answer";
	case LE_PAUSE:		return "pause";
	case LE_RESUME:		return "resume";
	case LE_END:		return "end";
	case LE_FINISH:		return "finish";
	}
	return "unknown";
}

/*
 * The one place a loop's phase changes; arg is LE_ASK's slot or LE_END's
 * exit code.  Returns 0 when applied, -1 when the event cannot happen in
 * the phase (logged; nothing changes).  An end is final but for a stop:
 * it overrides an ending already under way, once.
 */
int
loop_transition(struct loop *l, enum loop_event ev, int arg)
{
	enum loop_phase	p = l->phase, to = p;

	switch (ev) {
	case LE_ASK:
		if (p != LP_RUNNING)
			goto refused;
		l->ask_slot = arg < 0 ? -1 : arg;
		to = LP_ASKING;
		break;
	case LE_CHOOSE:
	case LE_ANSWER:
		/* the answer must be to what was asked: the menu or a slot */
		if (p != LP_ASKING || (ev == LE_CHOOSE) != (l->ask_slot < 0))
			goto refused;
		to = LP_RUNNING;
		break;
	case LE_PAUSE:
		if (p != LP_RUNNING)
			goto refused;
		to = LP_PAUSING;
		break;
	case LE_RESUME:
		if (p != LP_PAUSING)
			goto refused;
		to = LP_RUNNING;
		break;
	case LE_END:
		if (p == LP_DONE || (p == LP_ENDING && (arg != EXIT_STOPPED ||
		    l->exit_code == EXIT_STOPPED)))
			goto refused;
		l->exit_code = arg;
		to = LP_ENDING;
		break;
	case LE_FINISH:
		if (p != LP_ENDING)
			goto refused;
		to = LP_DONE;
		break;
	default:
		goto refused;
	}
	log_debug("loop %s: %s -> %s (%s)", l->cfg.id != NULL ? l->cfg.id :
	    "?", loop_phase_name(p), loop_phase_name(to), loop_event_name(ev));
	l->phase = to;
	return 0;
refused:
	log_debug("loop %s: %s refused in phase %s", l->cfg.id != NULL ?
	    l->cfg.id : "?", loop_event_name(ev), loop_phase_name(p));
	return -1;
}
