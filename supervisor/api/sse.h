/*
 * sse.h: a host's event bus as Server-Sent Events (serve's /api/events):
 * every client's stream, replay from Last-Event-ID, and the coalescing of
 * frequent events per (type, loop) with the trailing value always sent.
 */
#ifndef CCW_SSE_H
#define CCW_SSE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct bus;
struct event_base;
struct http_req;
struct sse;

/* A tap's view of one event: its bus seq, type and fields (borrowed). */
typedef void	(*sse_tap_fn)(void *, uint64_t, const char *, const json_t *);

#define SSE_FLUSH_MS		20	/* how long a coalesced event waits */
#define SSE_HEARTBEAT_MS	15000	/* a comment line on a quiet stream */

struct sse	*sse_new(struct event_base *, struct bus *, uint64_t,
		    uint64_t);
void		 sse_free(struct sse *);
int		 sse_attach(struct sse *, struct http_req *);
size_t		 sse_nclients(const struct sse *);
uint64_t	 sse_sent(const struct sse *);
size_t		 sse_queued_max(const struct sse *);
size_t		 sse_pending(const struct sse *);
int		 sse_coalesced_type(const char *);
char		*sse_json(const char *, const json_t *);
void		 sse_tap(struct sse *, sse_tap_fn, void *);

#endif
