/*
 * gate.h: a host's provider gate (DESIGN.md section 9): per provider (the
 * tool name of a spawn) a cap of workers alive at once, a FIFO of the
 * starts waiting, and a hold after a rate limit (the provider's reset
 * time, else a jittered exponential backoff).  gate.c owns it.
 */
#ifndef CCW_GATE_H
#define CCW_GATE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct config;
struct event_base;
struct gate;
struct gate_wait;

#define GATE_BACKOFF_MIN_MS	1000	/* the first unknown hold */
#define GATE_BACKOFF_MAX_MS	60000	/* doubling stops here */
#define GATE_JITTER_PCT		20	/* +- on every backoff */

/* A start admitted: called from the event loop, never inside gate_enter. */
typedef void	(*gate_cb)(void *);
/* provider_hold / provider_open with their fields (borrowed). */
typedef void	(*gate_event_fn)(void *, const char *, const json_t *);

struct gate	*gate_new(struct event_base *, gate_event_fn, void *);
void		 gate_free(struct gate *);
void		 gate_set_cap(struct gate *, const char *, unsigned);
void		 gate_set_caps(struct gate *, const struct config *);
void		 gate_set_backoff(struct gate *, uint64_t, uint64_t);

/*
 * Ask to start a worker on PROVIDER: cb(arg) runs once the provider is
 * not held and has a free slot, in FIFO order; the slot is then taken
 * (give it back with gate_leave).  The handle is gone once cb runs or
 * gate_cancel returns.  A NULL gate admits at once: gate_enter returns
 * NULL and never calls cb, and the caller goes ahead itself.
 */
struct gate_wait *gate_enter(struct gate *, const char *, gate_cb, void *);
void		 gate_cancel(struct gate_wait *);
void		 gate_leave(struct gate *, const char *);

/*
 * A rate limit: no start on PROVIDER until now + retry_after_ms, or (0:
 * unknown) a backoff that doubles on each hold until gate_ok.  A hold
 * never shortens one in force.  Every call is a no-op on a NULL gate.
 */
void		 gate_hold(struct gate *, const char *, uint64_t);
void		 gate_ok(struct gate *, const char *);

/* For tests and status: slots taken, starts waiting, hold left (ms). */
unsigned	 gate_alive(const struct gate *, const char *);
size_t		 gate_waiting(const struct gate *, const char *);
uint64_t	 gate_held_ms(const struct gate *, const char *);

#endif
