/*
 * ladder.c: the deadline ladder every driver of an agent climbs: wait for
 * the result, send the ## TIMEOUT nudge, wait again, close.  It owns the
 * phase of that climb and guarantees one done callback, whichever way the
 * agent ends (result, timeout, an early close by the caller).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "chan.h"
#include "log.h"
#include "sup.h"
#include "xmalloc.h"

struct ladder {
	struct verbs		*v;
	struct agent		*a;
	uint64_t		 timeout_ms, nudge_ms, grace_ms;
	enum ladder_phase	 phase;
	ladder_done_cb		 done;
	void			*arg;
	struct event		*idle_ev;	/* idle_ms check, when set */
	uint64_t		 quiet_since;	/* idle measured from here too */
	uint64_t		 quiet_frozen;	/* agent_frozen_ms() then */
	int			 stale;		/* waits to ignore (preempted) */
	int			 idled;		/* this step is the idle check's */
	int			 idle_nudge;	/* and so was the nudge */
};

static void	ladder_waited(json_t *, int, void *);
static void	ladder_step(struct ladder *, int);

/* The agent is gone: the one done callback. */
static void
ladder_closed(const char *prev, void *arg)
{
	struct ladder	*l = arg;

	(void)prev;
	if (l->phase == LADDER_DONE)
		return;
	l->phase = LADDER_DONE;
	/* a nudge still unacknowledged must not call a freed ladder */
	verbs_cancel_inputs(l->v, l);
	if (l->idle_ev != NULL)
		event_del(l->idle_ev);
	l->done(l->a, l->arg);
}

/* Close now (once), with grace_ms for the tool to stop. */
void
ladder_close(struct ladder *l, uint64_t grace_ms)
{
	char	*err = NULL;

	if (l->phase == LADDER_CLOSING || l->phase == LADDER_DONE)
		return;
	l->phase = LADDER_CLOSING;
	if (verbs_close(l->v, l->a->id, grace_ms, ladder_closed, l,
	    &err) != 0) {
		log_debug("%s", err);
		free(err);
		ladder_closed(NULL, l);
	}
}

/* Wait ms for the agent; the answer climbs the next rung. */
static void
ladder_wait(struct ladder *l, uint64_t ms, uint64_t grace_on_error)
{
	char	*err = NULL, *ids[1] = { l->a->id };

	if (verbs_wait(l->v, ids, 1, ms, 0, ladder_waited, l, &err) != 0) {
		log_warnx("%s", err);
		free(err);
		ladder_close(l, grace_on_error);
	}
}

/*
 * What became of the nudge, for the report.  The nudge_ms wait runs from
 * the moment it was sent, not from this answer: a worker that cannot
 * answer (stopped, wedged) must not stretch the role's deadlines.
 */
static void
ladder_nudged(uint64_t sub, const char *how, const char *err, void *arg)
{
	struct ladder	*l = arg;

	(void)sub;
	if (l->phase == LADDER_DONE)
		return;
	/*
	 * nudged only when the worker acknowledged it, never on hope; one
	 * queued for a resumed turn reaches the tool only if its turn ends
	 */
	if (err != NULL) {
		log_info("%s: nudge not delivered: %s", l->a->id, err);
		l->a->nudge = "failed";
	} else if (how != NULL && strcmp(how, "resume") == 0) {
		l->a->nudge = "queued";
	} else {
		l->a->nudge = "delivered";
		l->a->nudged = 1;
	}
}

/* Seconds for people: 600, 1.5. */
static double
ladder_s(uint64_t ms)
{
	return (double)ms / 1000.0;
}

/*
 * A timed-out agent's kind and why, said the way its timer saw it: the
 * idle check (silence) is not the deadline, and each names its seconds.
 * A CLI still retrying its provider (an overloaded API) when the time
 * ran out is the likeliest cause, so its last retry's words go along.
 */
static void
ladder_verdict(struct ladder *l)
{
	const char	*r = l->a->last_retry;
	const char	*sep = r != NULL ? "; still retrying: " : "";

	if (l->idled || l->idle_nudge)
		agent_end_kind(l->a, OUTCOME_IDLE, "no output for %g s%s%s",
		    ladder_s(l->a->idle_ms), sep, r != NULL ? r : "");
	else
		agent_end_kind(l->a, OUTCOME_TIMEOUT, "deadline of %g s "
		    "passed (no result %g s after the nudge)%s%s",
		    ladder_s(l->timeout_ms), ladder_s(l->nudge_ms), sep,
		    r != NULL ? r : "");
}

/*
 * A wait ended.  A result: close (the result stays readable).  First
 * timeout: the nudge.  Second: a timed-out agent, closed.
 */
static void
ladder_step(struct ladder *l, int timed_out)
{
	char		*err = NULL;

	if (l->phase != LADDER_WAIT && l->phase != LADDER_NUDGE)
		return;
	/* a result in hand: no nudge (it would start a follow-up turn) */
	if (!timed_out || agent_final(l->a) ||
	    l->a->result.type == MSG_RESULT) {
		ladder_close(l, l->grace_ms);
		return;
	}
	if (l->phase == LADDER_WAIT) {
		l->phase = LADDER_NUDGE;
		l->idle_nudge = l->idled;
		l->quiet_since = clock_mono_ms();
		l->quiet_frozen = agent_frozen_ms(l->a);
		l->a->nudge = "sent";
		log_info("%s (%s): no result yet, nudging", l->a->id,
		    l->a->role);
		if (verbs_send_input_within(l->v, l->a->id, LADDER_NUDGE_TEXT,
		    0, l->nudge_ms, ladder_nudged, l, &err) != 0) {
			ladder_nudged(0, NULL, err, l);
			free(err);
		}
		ladder_wait(l, l->nudge_ms, l->grace_ms);
		return;
	}
	l->a->timed_out = 1;
	ladder_verdict(l);
	ladder_close(l, l->grace_ms);
}

/* A wait answered; one preempted by the idle check is ignored. */
static void
ladder_waited(json_t *status, int timed_out, void *arg)
{
	struct ladder	*l = arg;

	(void)status;
	if (l->stale > 0) {
		l->stale--;
		return;
	}
	ladder_step(l, timed_out);
}

/*
 * idle_ms: a worker silent that long (no message at all: progress comes
 * with every output line) counts as timed out, whatever its deadline.
 * The pending wait is preempted and its answer ignored.
 */
static void
ladder_idle_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct ladder	*l = arg;
	uint64_t	 now = clock_mono_ms(), last;

	(void)fd;
	(void)ev;
	if ((l->phase != LADDER_WAIT && l->phase != LADDER_NUDGE) ||
	    l->a->frozen)	/* frozen: silence is not its own */
		return;
	/* time frozen since quiet_since is not silence (t_activity moves) */
	last = l->quiet_since + (agent_frozen_ms(l->a) - l->quiet_frozen);
	if (l->a->t_activity > last)
		last = l->a->t_activity;
	if (now - last < l->a->idle_ms || agent_final(l->a) ||
	    agent_setting_up(l->a) > 0)	/* silent in git or its setup */
		return;
	log_info("%s: no output for %llu ms", l->a->id,
	    (unsigned long long)(now - last));
	l->stale++;
	l->idled = 1;
	ladder_step(l, 1);
	l->idled = 0;
}

/* Arm the idle check, a few times per idle period. */
static void
ladder_idle_arm(struct ladder *l)
{
	uint64_t	ms = l->a->idle_ms / 4;

	if (ms < 50)
		ms = 50;
	if (ms > 1000)
		ms = 1000;
	l->idle_ev = event_new(l->a->sup->base, -1, EV_PERSIST, ladder_idle_cb,
	    l);
	chan_arm_ms(l->idle_ev, ms);
}

/*
 * Start the climb for a freshly spawned agent.  The ladder belongs to the
 * caller, who frees it after done ran (or after verbs_free).
 */
struct ladder *
ladder_start(struct verbs *v, struct agent *a, uint64_t timeout_ms,
    uint64_t nudge_ms, uint64_t grace_ms, ladder_done_cb done, void *arg)
{
	struct ladder	*l = xcalloc(1, sizeof *l);

	l->v = v;
	l->a = a;
	l->timeout_ms = timeout_ms;
	l->nudge_ms = nudge_ms;
	l->grace_ms = grace_ms;
	l->phase = LADDER_WAIT;
	l->done = done;
	l->arg = arg;
	l->quiet_since = clock_mono_ms();
	l->quiet_frozen = agent_frozen_ms(a);
	if (a->idle_ms > 0 && !agent_final(a))
		ladder_idle_arm(l);
	ladder_wait(l, timeout_ms, 0);
	return l;
}

/* Where the climb is. */
enum ladder_phase
ladder_phase(const struct ladder *l)
{
	return l->phase;
}

/* Free a ladder whose done ran, or whose verbs are gone. */
void
ladder_free(struct ladder *l)
{
	if (l->idle_ev != NULL)
		event_free(l->idle_ev);
	free(l);
}
