/*
 * test-loops.c: one process, one event base, one child reaper hosting
 * many ccw-loop loops of fake agents at once, half in auto mode, half in
 * parallel: every loop must end completed with a valid state file and
 * each of its actions recorded once.  This is what `serve` will do, and
 * it links no CLI code: the engine's loopopen, plan and loop API only.
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

#include "log.h"
#include "loop.h"
#include "hostfix.h"
#include "loopopen.h"
#include "state.h"
#include "sup.h"
#include "tap.h"
#include "xmalloc.h"

#define NLOOPS_MAX	64

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
	    strcmp(status, "completed") == 0 && state_validate(st, NULL) == 0;
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
	int			 auto_ok = 0;

	if (n < 2 || n > NLOOPS_MAX)
		n = 50;
	if (hostfix_init(&h, "loops", 50, 20) != 0)
		return 0;
	h.n = n;
	xs = xcalloc((size_t)n, sizeof *xs);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "many-%02d", i);
		if (hostfix_open(&h, &xs[i], id, i % 2 ? LOOP_PARALLEL :
		    LOOP_AUTO, NULL) != 0)
			break;
		loop_start(xs[i].l);
	}
	tap_ok(i == n, "%d loops started on one event base (%d of them)", n, i);
	if (i == n)
		event_base_dispatch(h.base);
	tap_ok(h.ndone == n, "every loop ended (%d of %d)", h.ndone, n);
	for (i = 0; i < n; i++)
		if (xs[i].l != NULL && hosted_check(&xs[i], h.dirfd)) {
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
		hostfix_loop_free(&xs[i]);
	free(xs);
	hostfix_free(&h);
	return tap_done();
}
