/*
 * test-bus.c: the host's event bus: numbers only grow, every observer
 * sees every event in order (also those published from an observer), an
 * observer can leave from its own callback, replay gives what a late
 * reader missed or says it is too late.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus.h"
#include "tap.h"

struct seen {
	struct bus		*b;
	struct bus_observer	*self;
	char			 log[256];
	uint64_t		 last;
	int			 ordered;	/* 1 while numbers grow by one */
	int			 leave_at;	/* leave on this number */
	int			 echo;		/* publish "echo" on "ping" */
};

/* Record "name:seq," and check the numbers come one by one. */
static void
seen_cb(void *arg, uint64_t seq, const char *name, const json_t *f)
{
	struct seen	*s = arg;
	size_t		 n = strlen(s->log);

	(void)f;
	if (s->last != 0 && seq != s->last + 1)
		s->ordered = 0;
	s->last = seq;
	snprintf(s->log + n, sizeof s->log - n, "%s:%llu,", name,
	    (unsigned long long)seq);
	if (s->echo && strcmp(name, "ping") == 0)
		bus_publish(s->b, "echo", json_pack("{s:I}", "of",
		    (json_int_t)seq));
	if (s->leave_at != 0 && seq == (uint64_t)s->leave_at)
		bus_unobserve(s->b, s->self);
}

int
main(void)
{
	struct bus	*b = bus_new(4);
	struct seen	 a, c, r;

	memset(&a, 0, sizeof a);
	memset(&c, 0, sizeof c);
	a.b = c.b = b;
	a.ordered = c.ordered = 1;
	tap_ok(bus_last(b) == 0, "a new bus has published nothing");
	a.self = bus_observe(b, seen_cb, &a);
	c.self = bus_observe(b, seen_cb, &c);
	c.leave_at = 2;
	a.echo = 1;
	tap_ok(bus_publish(b, "one", NULL) == 1, "the first event is 1");
	tap_ok(bus_publish(b, "ping", json_object()) == 2, "the second is 2");
	tap_is_str(a.log, "one:1,ping:2,echo:3,", "the echo published from "
	    "an observer comes after the event it answers");
	tap_is_str(c.log, "one:1,ping:2,", "an observer that left in its own "
	    "callback hears nothing after");
	tap_ok(a.ordered && c.ordered, "every observer saw the numbers in "
	    "order");
	bus_publish(b, "three", NULL);
	tap_ok(bus_last(b) == 4, "numbers only grow (4)");

	memset(&r, 0, sizeof r);
	tap_ok(bus_replay(b, 1, seen_cb, &r) == 0, "replay after 1: kept");
	tap_is_str(r.log, "ping:2,echo:3,three:4,", "replay gives what was "
	    "missed, in order");
	bus_publish(b, "five", NULL);
	bus_publish(b, "six", NULL);
	memset(&r, 0, sizeof r);
	tap_ok(bus_replay(b, 1, seen_cb, &r) == -1 && r.log[0] == '\0',
	    "replay after an event the ring dropped: too late, nothing given");
	tap_ok(bus_replay(b, 6, seen_cb, &r) == 0 && r.log[0] == '\0',
	    "replay from the last: nothing to give");
	bus_unobserve(b, a.self);
	bus_free(b);
	return tap_done();
}
