/*
 * bus.c: the host's event bus.  publish numbers an event, keeps it in a
 * ring and hands it to every observer in the order they came; an
 * observer may leave (or add another) from inside its own callback.
 * replay gives a reader that reconnects what it missed, or says it is
 * too late (the ring moved on).
 */
#include <config.h>

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "bus.h"
#include "xmalloc.h"

struct bus_observer {
	TAILQ_ENTRY(bus_observer) entry;
	bus_cb		 cb;
	void		*arg;
	int		 gone;		/* left during a delivery */
};
TAILQ_HEAD(bus_observers, bus_observer);

/* A kept event. */
struct bus_event {
	uint64_t	 seq;
	char		*name;
	json_t		*fields;
};

struct bus {
	struct bus_observers	 obs;
	struct bus_event	*ring;
	size_t			 cap;
	uint64_t		 seq;		/* the last number given */
	uint64_t		 told;		/* the last one delivered */
	int			 delivering;	/* inside an observer */
	int			 dead;		/* observers left meanwhile */
};

/* A bus keeping the last keep events (at least one). */
struct bus *
bus_new(size_t keep)
{
	struct bus	*b = xcalloc(1, sizeof *b);

	TAILQ_INIT(&b->obs);
	b->cap = keep > 0 ? keep : 1;
	b->ring = xcalloc(b->cap, sizeof *b->ring);
	return b;
}

/* Everything: the observers and the kept events. */
void
bus_free(struct bus *b)
{
	struct bus_observer	*o;
	size_t			 i;

	if (b == NULL)
		return;
	while ((o = TAILQ_FIRST(&b->obs)) != NULL) {
		TAILQ_REMOVE(&b->obs, o, entry);
		free(o);
	}
	for (i = 0; i < b->cap; i++) {
		free(b->ring[i].name);
		json_decref(b->ring[i].fields);
	}
	free(b->ring);
	free(b);
}

/* A new observer, told every event published from now on. */
struct bus_observer *
bus_observe(struct bus *b, bus_cb cb, void *arg)
{
	struct bus_observer	*o = xcalloc(1, sizeof *o);

	o->cb = cb;
	o->arg = arg;
	TAILQ_INSERT_TAIL(&b->obs, o, entry);
	return o;
}

/*
 * The observer leaves.  During a delivery it is only marked, so that the
 * loop walking the list never steps on freed memory; the sweep follows.
 */
void
bus_unobserve(struct bus *b, struct bus_observer *o)
{
	if (o == NULL)
		return;
	if (b->delivering > 0) {
		o->gone = 1;
		b->dead = 1;
		return;
	}
	TAILQ_REMOVE(&b->obs, o, entry);
	free(o);
}

/* Free the observers that left while events were being delivered. */
static void
bus_sweep(struct bus *b)
{
	struct bus_observer	*o, *next;

	for (o = TAILQ_FIRST(&b->obs); o != NULL; o = next) {
		next = TAILQ_NEXT(o, entry);
		if (o->gone) {
			TAILQ_REMOVE(&b->obs, o, entry);
			free(o);
		}
	}
	b->dead = 0;
}

/* Tell every observer (that was there when it came) about one event. */
static void
bus_deliver(struct bus *b, const struct bus_event *e)
{
	struct bus_observer	*o, *last;

	last = TAILQ_LAST(&b->obs, bus_observers);
	TAILQ_FOREACH(o, &b->obs, entry) {
		if (!o->gone)
			o->cb(o->arg, e->seq, e->name, e->fields);
		if (o == last)
			break;
	}
}

/*
 * Number the event, keep it, tell everyone; the fields are stolen.  An
 * event published from inside an observer is delivered after the one
 * being delivered, so every observer sees the numbers in order.
 */
uint64_t
bus_publish(struct bus *b, const char *name, json_t *fields)
{
	struct bus_event	*e;
	uint64_t		 seq = ++b->seq, first;

	if (fields == NULL)
		fields = json_object();
	e = &b->ring[(seq - 1) % b->cap];
	free(e->name);
	json_decref(e->fields);
	e->seq = seq;
	e->name = xstrdup(name);
	e->fields = fields;
	if (b->delivering > 0)
		return seq;
	b->delivering++;
	while (b->told < b->seq) {
		/* a burst larger than the ring: the overwritten are lost */
		first = b->seq > b->cap ? b->seq - b->cap + 1 : 1;
		if (b->told + 1 < first)
			b->told = first - 1;
		b->told++;
		bus_deliver(b, &b->ring[(b->told - 1) % b->cap]);
	}
	if (--b->delivering == 0 && b->dead)
		bus_sweep(b);
	return seq;
}

/* The number of the last event published; 0 before the first. */
uint64_t
bus_last(const struct bus *b)
{
	return b->seq;
}

/*
 * The kept events after seq, in order.  -1 when some were already
 * dropped from the ring: the reader must start over from a full view.
 */
int
bus_replay(const struct bus *b, uint64_t after, bus_cb cb, void *arg)
{
	const struct bus_event	*e;
	uint64_t		 first, s;

	first = b->seq > b->cap ? b->seq - b->cap + 1 : 1;
	if (after + 1 < first)
		return -1;
	for (s = after + 1; s <= b->seq; s++) {
		e = &b->ring[(s - 1) % b->cap];
		cb(arg, e->seq, e->name, e->fields);
	}
	return 0;
}
