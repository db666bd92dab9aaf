/*
 * test-loopphase.c: the loop's state machine (loopphase.c), table
 * driven: every phase, pending question and exit code combined with every
 * event; the allowed ones land where the table says, the rest are
 * refused and change nothing.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "loopint.h"
#include "tap.h"

#define ANY	-2

/* An event with its argument, as the callers send it. */
struct ev {
	enum loop_event	 ev;
	int		 arg;
	const char	*name;
};

static const struct ev evs[] = {
	{ LE_ASK, 2, "ask(slot 2)" },
	{ LE_ASK, -1, "ask(menu)" },
	{ LE_CHOOSE, 0, "choose" },
	{ LE_ANSWER, 0, "answer" },
	{ LE_PAUSE, 0, "pause" },
	{ LE_RESUME, 0, "resume" },
	{ LE_END, EXIT_FAILED, "end(failed)" },
	{ LE_END, EXIT_STOPPED, "end(stopped)" },
	{ LE_FINISH, 0, "finish" },
};
#define NEVS	(sizeof evs / sizeof evs[0])

/* One allowed transition (ANY: the slot or exit code does not matter). */
struct allowed {
	enum loop_phase	from;
	size_t		ev;		/* index in evs */
	int		slot, code;	/* the loop's ask_slot, exit_code */
	enum loop_phase	to;
};

static const struct allowed allowed[] = {
	{ LP_RUNNING,	0, ANY, ANY,	LP_ASKING },
	{ LP_RUNNING,	1, ANY, ANY,	LP_ASKING },
	{ LP_ASKING,	2, -1, ANY,	LP_RUNNING },	/* menu answered */
	{ LP_ASKING,	3, 1, ANY,	LP_RUNNING },	/* question answered */
	{ LP_RUNNING,	4, ANY, ANY,	LP_PAUSING },
	{ LP_PAUSING,	5, ANY, ANY,	LP_RUNNING },
	{ LP_RUNNING,	6, ANY, ANY,	LP_ENDING },
	{ LP_ASKING,	6, ANY, ANY,	LP_ENDING },
	{ LP_PAUSING,	6, ANY, ANY,	LP_ENDING },
	{ LP_RUNNING,	7, ANY, ANY,	LP_ENDING },
	{ LP_ASKING,	7, ANY, ANY,	LP_ENDING },
	{ LP_PAUSING,	7, ANY, ANY,	LP_ENDING },
	/* a stop overrides an ending under way, once */
	{ LP_ENDING,	7, ANY, EXIT_FAILED, LP_ENDING },
	{ LP_ENDING,	8, ANY, ANY,	LP_DONE },
};
#define NALLOWED	(sizeof allowed / sizeof allowed[0])

/* The row that allows evs[e] from this loop, or NULL. */
static const struct allowed *
find_allowed(const struct loop *l, size_t e)
{
	size_t	i;

	for (i = 0; i < NALLOWED; i++)
		if (allowed[i].from == l->phase && allowed[i].ev == e &&
		    (allowed[i].slot == ANY || allowed[i].slot == l->ask_slot) &&
		    (allowed[i].code == ANY || allowed[i].code == l->exit_code))
			return &allowed[i];
	return NULL;
}

/* Every phase x slot x exit code x event against the table. */
static void
check_table(struct loop *l)
{
	static const int	 slots[] = { -1, 1 };
	static const int	 codes[] = { EXIT_FAILED, EXIT_STOPPED };
	const struct allowed	*row;
	struct loop		 was;
	size_t			 e;
	int			 p, s, c, rc, bad = 0, n = 0, nok = 0;

	for (p = LP_RUNNING; p <= LP_DONE; p++)
		for (s = 0; s < 2; s++)
			for (c = 0; c < 2; c++)
				for (e = 0; e < NEVS; e++) {
					l->phase = p;
					l->ask_slot = slots[s];
					l->exit_code = codes[c];
					was = *l;
					row = find_allowed(l, e);
					rc = loop_transition(l, evs[e].ev, evs[e].arg);
					n++;
					if (row != NULL && (rc != 0 ||
					    l->phase != row->to)) {
						tap_diag("%s from %s: rc %d, now %s",
						    evs[e].name, loop_phase_name(p), rc,
						    loop_phase_name(l->phase));
						bad++;
					} else if (row == NULL && (rc != -1 ||
					    memcmp(l, &was, sizeof was) != 0)) {
						tap_diag("%s from %s (slot %d, code %d)"
						    " was not refused cleanly",
						    evs[e].name, loop_phase_name(p),
						    slots[s], codes[c]);
						bad++;
					}
					nok += row != NULL;
				}
	tap_ok(bad == 0, "%d phase x slot x exit code x event: %d allowed "
	    "land where the table says, the rest are refused and change "
	    "nothing (%d wrong)", n, nok, bad);
}

/* What the events record: the slot asked, the exit code of an end. */
static void
check_data(struct loop *l)
{
	memset(l, 0, sizeof *l);
	tap_ok(loop_transition(l, LE_ASK, 3) == 0 && l->ask_slot == 3 &&
	    loop_transition(l, LE_CHOOSE, 0) == -1 &&
	    loop_transition(l, LE_ANSWER, 0) == 0 && l->phase == LP_RUNNING,
	    "a question's slot is kept; only an answer closes it");
	tap_ok(loop_transition(l, LE_ASK, -1) == 0 && l->ask_slot == -1 &&
	    loop_transition(l, LE_ANSWER, 0) == -1 &&
	    loop_transition(l, LE_ASK, -1) == -1 &&
	    loop_transition(l, LE_CHOOSE, 0) == 0, "the menu: one at a time, "
	    "closed by a choice");
	tap_ok(loop_transition(l, LE_PAUSE, 0) == 0 &&
	    loop_transition(l, LE_ASK, 0) == -1 && l->phase == LP_PAUSING,
	    "nothing is asked while pausing");
	tap_ok(loop_transition(l, LE_END, EXIT_PAUSED) == 0 &&
	    l->exit_code == EXIT_PAUSED && loop_transition(l, LE_END,
	    EXIT_FAILED) == -1 && l->exit_code == EXIT_PAUSED,
	    "the first end's exit code holds against a later end");
	tap_ok(loop_transition(l, LE_END, EXIT_STOPPED) == 0 &&
	    l->exit_code == EXIT_STOPPED && loop_transition(l, LE_END,
	    EXIT_STOPPED) == -1, "a stop overrides it, once");
	tap_ok(loop_transition(l, LE_CHOOSE, 0) == -1 &&
	    loop_transition(l, LE_RESUME, 0) == -1 &&
	    l->phase == LP_ENDING, "an ending loop takes no choice nor resume");
	tap_ok(loop_transition(l, LE_FINISH, 0) == 0 && l->phase == LP_DONE,
	    "finish: done");
	tap_ok(loop_transition(l, LE_END, EXIT_STOPPED) == -1 &&
	    loop_transition(l, LE_FINISH, 0) == -1 &&
	    loop_transition(l, LE_RESUME, 0) == -1 && l->phase == LP_DONE &&
	    l->exit_code == EXIT_STOPPED, "no event leaves done");
}

int
main(void)
{
	struct loop	*l = calloc(1, sizeof *l);

	check_table(l);
	check_data(l);
	free(l);
	return tap_done();
}
