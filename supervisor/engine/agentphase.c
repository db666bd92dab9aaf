/*
 * agentphase.c: an agent's lifecycle as one state machine.  Every phase
 * change and every lifecycle fact (HELLO, EOF, reaped, killed) goes
 * through agent_transition, which refuses what cannot happen.
 */
#include <config.h>

#include "agent.h"
#include "log.h"

/* Status names as DESIGN.md section 3 spells them. */
const char *
agent_status_name(enum agent_status st)
{
	switch (st) {
	case AS_PENDING_INIT:	return "pending_init";
	case AS_RUNNING:	return "running";
	case AS_INTERRUPTED:	return "interrupted";
	case AS_COMPLETED:	return "completed";
	case AS_ERRORED:	return "errored";
	case AS_SHUTDOWN:	return "shutdown";
	}
	return "unknown";
}

/*
 * A worker told to make its own worktree (options.worktree: git worktree
 * add, the copies, the setup command such as `npm ci`) is blocked in git
 * or in that setup until it says STARTED, and answers no ping meanwhile.
 * It is neither lost nor idle for as long as that may take: the setup's
 * own deadline plus one git command's (the worker kills either at its
 * deadline, and a worker that dies is seen at its exit).  0: not making
 * one (started already, or no worktree).
 */
uint64_t
agent_setting_up(const struct agent *a)
{
	const json_t	*wt;

	if (a->started.type != MSG_NONE || agent_final(a) ||
	    !json_is_object(wt = json_object_get(a->options, "worktree")))
		return 0;
	return (uint64_t)json_integer_value(json_object_get(wt, "setup_ms")) +
	    AGENT_WORKTREE_GIT_MS;
}

/* Final = anything but pending_init and running (and interrupted). */
int
agent_final(const struct agent *a)
{
	return a->phase == AP_DONE || a->phase == AP_CLOSED;
}

/* Phase names for logs and tests. */
const char *
agent_phase_name(enum agent_phase p)
{
	switch (p) {
	case AP_SPAWNING:	return "spawning";
	case AP_RUNNING:	return "running";
	case AP_CLOSING:	return "closing";
	case AP_DONE:		return "done";
	case AP_CLOSED:		return "closed";
	}
	return "unknown";
}

/* Event names for logs and tests. */
const char *
agent_event_name(enum agent_event e)
{
	switch (e) {
	case AE_HELLO:		return "hello";
	case AE_CLOSE:		return "close";
	case AE_KILL:		return "kill";
	case AE_EOF:		return "eof";
	case AE_REAPED:		return "reaped";
	case AE_FINISH:		return "finish";
	case AE_TURN:		return "turn";
	}
	return "unknown";
}

/* A worker is still ours to hear from or signal. */
static int
agent_phase_live(enum agent_phase p)
{
	return p == AP_SPAWNING || p == AP_RUNNING || p == AP_CLOSING;
}

/*
 * The one place an agent's phase changes.  Returns 0 when the event was
 * applied, -1 when it cannot happen in the phase (logged; the phase and
 * the facts are left as they were): the caller turns that into its own
 * error (a second HELLO is a protocol violation, a second close is
 * refused).
 */
int
agent_transition(struct agent *a, enum agent_event ev)
{
	enum agent_phase	p = a->phase, to = p;

	switch (ev) {
	case AE_HELLO:
		/* a HELLO already on its way when we closed is still one */
		if (a->hello || (p != AP_SPAWNING && p != AP_CLOSING))
			goto refused;
		a->hello = 1;
		if (p == AP_SPAWNING)
			to = AP_RUNNING;
		break;
	case AE_CLOSE:
		if (p == AP_SPAWNING || p == AP_RUNNING)
			to = AP_CLOSING;
		else if (p == AP_DONE)
			to = AP_CLOSED;
		else
			goto refused;
		break;
	case AE_KILL:
		if (!agent_phase_live(p))
			goto refused;
		a->killed = 1;
		break;
	case AE_EOF:
		if (!agent_phase_live(p) || a->eof)
			goto refused;
		a->eof = 1;
		break;
	case AE_REAPED:
		if (!agent_phase_live(p) || a->reaped)
			goto refused;
		a->reaped = 1;
		break;
	case AE_FINISH:
		if (!agent_phase_live(p) || !a->eof || !a->reaped)
			goto refused;
		to = p == AP_CLOSING ? AP_CLOSED : AP_DONE;
		break;
	case AE_TURN:
		/* a turn follows a finished one, or one queued as it ended */
		if (p != AP_DONE && (p != AP_RUNNING || !a->eof || !a->reaped))
			goto refused;
		a->eof = a->reaped = a->hello = a->killed = 0;
		to = AP_SPAWNING;
		break;
	default:
		goto refused;
	}
	if (to != p)
		log_debug("%s: %s -> %s (%s)", a->id, agent_phase_name(p),
		    agent_phase_name(to), agent_event_name(ev));
	a->phase = to;
	return 0;
refused:
	log_debug("%s: %s refused in phase %s", a->id, agent_event_name(ev),
	    agent_phase_name(p));
	return -1;
}
