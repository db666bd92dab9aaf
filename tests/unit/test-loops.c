/*
 * test-loops.c: one process, one event base, one child reaper hosting
 * many ccw-loop loops of fake agents at once, half in auto mode, half in
 * parallel: every loop must end completed with a valid state file and
 * each of its actions recorded once.  This is what `serve` will do, and
 * it links no CLI code: the engine's host API (host.h) only.
 */
#include <config.h>

#include <sys/stat.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "ccw-loop.h"
#include "bus.h"
#include "log.h"
#include "loop.h"
#include "hostfix.h"
#include "loopopen.h"
#include "state.h"
#include "sup.h"
#include "tap.h"
#include "xmalloc.h"

/* The state file of ccw-loop (its sections and rules). */
#define WS	(&ccw_loop_state)

#define NLOOPS_MAX	64

/* What the host's bus carried: in order, one LOOP_COMPLETED per loop. */
struct busview {
	uint64_t	 last;
	int		 ordered;
	int		 completed[NLOOPS_MAX];
	int		 n;
};

/* Every event of every loop comes through here, numbered. */
static void
busview_cb(void *arg, uint64_t seq, const char *name, const json_t *f)
{
	struct busview	*v = arg;
	const char	*id = json_string_value(json_object_get(f, "loop_id"));
	int		 i;

	if (seq != v->last + 1)
		v->ordered = 0;
	v->last = seq;
	v->n++;
	if (strcmp(name, "LOOP_COMPLETED") == 0 && id != NULL &&
	    sscanf(id, "many-%d", &i) == 1 && i >= 0 && i < NLOOPS_MAX)
		v->completed[i]++;
}

/* The loop's file: completed, valid, each auto action once. */
static int
hosted_check(struct hostfix_loop *x, int dirfd)
{
	json_t		*st = NULL, *ca;
	char		*err = NULL;
	const char	*status;
	size_t		 n;
	int		 good;

	if (state_load(dirfd, x->id, &st, &err) != STATE_OK) {
		tap_diag("%s: %s", x->id, err);
		free(err);
		return 0;
	}
	status = json_string_value(json_object_get(st, "status"));
	ca = json_object_get(json_object_get(st, "skill_state"),
	    "completed_actions");
	n = json_array_size(ca);
	good = x->code == EXIT_OK && status != NULL &&
	    strcmp(status, "completed") == 0 &&
	    state_validate(WS, st, NULL) == 0;
	/* auto: init develop debug validate complete, once each */
	if (x->mode == LOOP_AUTO && n != 5)
		good = 0;
	if (!good)
		tap_diag("%s: exit %d, status %s, %zu actions", x->id, x->code,
		    status != NULL ? status : "?", n);
	json_decref(st);
	return good;
}

int
main(int argc, char **argv)
{
	struct hostfix		 h;
	struct hostfix_loop	*xs;
	char			 id[32];
	int			 i, n = argc > 1 ? atoi(argv[1]) : 50, nok = 0;
	int			 auto_ok = 0, once = 0;
	struct busview		 bv;

	if (n < 2 || n > NLOOPS_MAX)
		n = 50;
	/*
	 * under valgrind (TESTS_WRAPPER) 12 loops, under the sanitizers 24,
	 * take every path 50 do (the plain build hosts the 50)
	 */
	if (argc < 2 && getenv("TESTS_WRAPPER") != NULL &&
	    *getenv("TESTS_WRAPPER") != '\0')
		n = 12;
	else if (argc < 2 && getenv("CCW_SANITIZERS") != NULL &&
	    strcmp(getenv("CCW_SANITIZERS"), "yes") == 0)
		n = 24;
	if (hostfix_init(&h, "loops", 50, 20) != 0)
		return 0;
	h.n = n;
	memset(&bv, 0, sizeof bv);
	bv.ordered = 1;
	bus_observe(h.bus, busview_cb, &bv);
	xs = xcalloc((size_t)n, sizeof *xs);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "many-%02d", i);
		if (hostfix_open(&h, &xs[i], id, i % 2 ? LOOP_PARALLEL :
		    LOOP_AUTO, NULL) != 0)
			break;
	}
	tap_ok(i == n, "%d loops started on one event base (%d of them)", n, i);
	if (i == n)
		event_base_dispatch(h.base);
	tap_ok(h.ndone == n, "every loop ended (%d of %d)", h.ndone, n);
	for (i = 0; i < n; i++)
		if (xs[i].opened && hosted_check(&xs[i], h.dirfd)) {
			nok++;
			auto_ok += xs[i].mode == LOOP_AUTO;
		}
	tap_ok(nok == n, "%d of %d loops completed with a valid state file",
	    nok, n);
	tap_ok(auto_ok == (n + 1) / 2, "auto loops: each action once (%d)",
	    auto_ok);
	tap_ok(nok - auto_ok == n / 2, "parallel loops completed (%d)",
	    nok - auto_ok);
	for (i = 0; i < n; i++)
		once += bv.completed[i] == 1;
	tap_ok(bv.ordered && bv.n > 0 && (uint64_t)bv.n == bus_last(h.bus),
	    "one bus for all loops: %d events numbered 1..%llu in order",
	    bv.n, (unsigned long long)bus_last(h.bus));
	tap_ok(once == n, "the bus carried one LOOP_COMPLETED per loop (%d)",
	    once);
	free(xs);
	hostfix_free(&h);
	return tap_done();
}
