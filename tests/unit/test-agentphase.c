/*
 * test-agentphase.c: the agent's state machine (agentphase.c), table
 * driven: every phase, fact and event combined; what the table allows
 * lands where it says, everything else is refused and changes nothing.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "tap.h"

#define ANY	-1

/* One allowed transition: from a phase, with facts (ANY: either). */
struct allowed {
	enum agent_phase	from;
	enum agent_event	ev;
	int			hello, eof, reaped;
	enum agent_phase	to;
};

static const struct allowed allowed[] = {
	{ AP_SPAWNING,	AE_HELLO,	0, ANY, ANY,	AP_RUNNING },
	{ AP_CLOSING,	AE_HELLO,	0, ANY, ANY,	AP_CLOSING },
	{ AP_SPAWNING,	AE_CLOSE,	ANY, ANY, ANY,	AP_CLOSING },
	{ AP_RUNNING,	AE_CLOSE,	ANY, ANY, ANY,	AP_CLOSING },
	{ AP_DONE,	AE_CLOSE,	ANY, ANY, ANY,	AP_CLOSED },
	{ AP_SPAWNING,	AE_KILL,	ANY, ANY, ANY,	AP_SPAWNING },
	{ AP_RUNNING,	AE_KILL,	ANY, ANY, ANY,	AP_RUNNING },
	{ AP_CLOSING,	AE_KILL,	ANY, ANY, ANY,	AP_CLOSING },
	{ AP_SPAWNING,	AE_EOF,		ANY, 0, ANY,	AP_SPAWNING },
	{ AP_RUNNING,	AE_EOF,		ANY, 0, ANY,	AP_RUNNING },
	{ AP_CLOSING,	AE_EOF,		ANY, 0, ANY,	AP_CLOSING },
	{ AP_SPAWNING,	AE_REAPED,	ANY, ANY, 0,	AP_SPAWNING },
	{ AP_RUNNING,	AE_REAPED,	ANY, ANY, 0,	AP_RUNNING },
	{ AP_CLOSING,	AE_REAPED,	ANY, ANY, 0,	AP_CLOSING },
	{ AP_SPAWNING,	AE_FINISH,	ANY, 1, 1,	AP_DONE },
	{ AP_RUNNING,	AE_FINISH,	ANY, 1, 1,	AP_DONE },
	{ AP_CLOSING,	AE_FINISH,	ANY, 1, 1,	AP_CLOSED },
	{ AP_RUNNING,	AE_TURN,	ANY, 1, 1,	AP_SPAWNING },
	{ AP_DONE,	AE_TURN,	ANY, ANY, ANY,	AP_SPAWNING },
};
#define NALLOWED	(sizeof allowed / sizeof allowed[0])

/* Does a fact match a row's want (ANY matches both)? */
static int
fact_is(int want, int have)
{
	return want == ANY || want == have;
}

/* The row that allows ev from this state, or NULL. */
static const struct allowed *
find_allowed(const struct agent *a, enum agent_event ev)
{
	size_t	i;

	for (i = 0; i < NALLOWED; i++)
		if (allowed[i].from == a->phase && allowed[i].ev == ev &&
		    fact_is(allowed[i].hello, a->hello) &&
		    fact_is(allowed[i].eof, a->eof) &&
		    fact_is(allowed[i].reaped, a->reaped))
			return &allowed[i];
	return NULL;
}

/* The phase and the facts are as they were. */
static int
same(const struct agent *a, const struct agent *b)
{
	return a->phase == b->phase && a->hello == b->hello &&
	    a->eof == b->eof && a->reaped == b->reaped &&
	    a->killed == b->killed;
}

/* One agent in a phase with facts (bit 0 hello, eof, reaped, killed). */
static void
agent_at(struct agent *a, enum agent_phase p, int f)
{
	memset(a, 0, sizeof *a);
	snprintf(a->id, sizeof a->id, "agent-1");
	a->phase = p;
	a->hello = f & 1;
	a->eof = (f >> 1) & 1;
	a->reaped = (f >> 2) & 1;
	a->killed = (f >> 3) & 1;
}

/* Every phase x facts x event against the table. */
static void
check_table(void)
{
	struct agent		 a, was;
	const struct allowed	*row;
	int			 p, ev, f, rc, bad = 0, n = 0, nok = 0;

	for (p = AP_SPAWNING; p <= AP_CLOSED; p++)
		for (f = 0; f < 16; f++)
			for (ev = AE_HELLO; ev <= AE_TURN; ev++) {
				agent_at(&a, p, f);
				agent_at(&was, p, f);
				row = find_allowed(&a, ev);
				rc = agent_transition(&a, ev);
				n++;
				if (row != NULL && (rc != 0 ||
				    a.phase != row->to)) {
					tap_diag("%s from %s: rc %d, now %s",
					    agent_event_name(ev),
					    agent_phase_name(p), rc,
					    agent_phase_name(a.phase));
					bad++;
				} else if (row == NULL && (rc != -1 ||
				    !same(&a, &was))) {
					tap_diag("%s from %s (facts %x) was not "
					    "refused cleanly", agent_event_name(ev),
					    agent_phase_name(p), f);
					bad++;
				} else if (row != NULL)
					nok++;
			}
	tap_is_int(bad, 0, "%d combinations: allowed ones land where the "
	    "table says, the others are refused and change nothing", n);
	tap_ok(nok > 0 && nok < n, "%d of them are allowed", nok);
}

/* A life through the machine: what each event records or refuses. */
static void
check_life(void)
{
	struct agent	a;

	agent_at(&a, AP_SPAWNING, 0);
	tap_ok(agent_transition(&a, AE_HELLO) == 0 && a.hello &&
	    a.phase == AP_RUNNING, "HELLO: running, hello recorded");
	tap_ok(agent_transition(&a, AE_HELLO) == -1 && a.phase == AP_RUNNING,
	    "a second HELLO is refused");
	tap_ok(agent_transition(&a, AE_FINISH) == -1 && a.phase == AP_RUNNING,
	    "no FINISH before EOF and reaped");
	tap_ok(agent_transition(&a, AE_EOF) == 0 && a.eof &&
	    agent_transition(&a, AE_FINISH) == -1, "EOF alone does not end it");
	tap_ok(agent_transition(&a, AE_EOF) == -1, "a second EOF is refused");
	tap_ok(agent_transition(&a, AE_KILL) == 0 && a.killed,
	    "KILL is recorded");
	tap_ok(agent_transition(&a, AE_REAPED) == 0 && a.reaped &&
	    agent_transition(&a, AE_FINISH) == 0 && a.phase == AP_DONE,
	    "EOF and reaped: FINISH makes it done");
	tap_ok(agent_transition(&a, AE_EOF) == -1 &&
	    agent_transition(&a, AE_REAPED) == -1 &&
	    agent_transition(&a, AE_KILL) == -1 &&
	    agent_transition(&a, AE_FINISH) == -1 && a.phase == AP_DONE,
	    "a done agent has no worker to hear from or kill");
	tap_ok(agent_transition(&a, AE_TURN) == 0 && a.phase == AP_SPAWNING &&
	    !a.hello && !a.eof && !a.reaped && !a.killed,
	    "a follow-up turn starts over with no facts");
	tap_ok(agent_transition(&a, AE_CLOSE) == 0 && a.phase == AP_CLOSING &&
	    agent_transition(&a, AE_CLOSE) == -1 && a.phase == AP_CLOSING,
	    "closing twice is refused");
	tap_ok(agent_transition(&a, AE_HELLO) == 0 && a.hello &&
	    a.phase == AP_CLOSING, "a HELLO already sent when closed is heard");
	(void)agent_transition(&a, AE_EOF);
	(void)agent_transition(&a, AE_REAPED);
	tap_ok(agent_transition(&a, AE_FINISH) == 0 && a.phase == AP_CLOSED,
	    "closed while live: FINISH makes it closed");
	tap_ok(agent_transition(&a, AE_TURN) == -1 &&
	    agent_transition(&a, AE_CLOSE) == -1 && a.phase == AP_CLOSED,
	    "closed: no turn, no second close");
}

int
main(void)
{
	check_table();
	check_life();
	return tap_done();
}
