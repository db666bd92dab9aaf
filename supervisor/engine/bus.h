/*
 * bus.h: a host's one event bus: every loop's and agent's events in one
 * order, numbered by a sequence that only grows, delivered to a list of
 * observers and kept in a bounded ring for a late reader to replay.
 */
#ifndef CCW_BUS_H
#define CCW_BUS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct bus;
struct bus_observer;

/* One event: the name, its fields (borrowed for the call), its number. */
typedef void (*bus_cb)(void *, uint64_t, const char *, const json_t *);

struct bus	*bus_new(size_t);		/* keep the last N for replay */
void		 bus_free(struct bus *);
struct bus_observer *bus_observe(struct bus *, bus_cb, void *);
void		 bus_unobserve(struct bus *, struct bus_observer *);
uint64_t	 bus_publish(struct bus *, const char *, json_t *);	/* steals */
uint64_t	 bus_last(const struct bus *);	/* 0: nothing yet */
int		 bus_replay(const struct bus *, uint64_t, bus_cb, void *);

#endif
