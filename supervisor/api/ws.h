/*
 * ws.h: serve's /ws: the event bus (the same events as /api/events) as
 * an RFC 6455 WebSocket, one JSON text message per event, on the event
 * loop: the handshake, every client's frames, pings and the close.
 */
#ifndef CCW_WS_H
#define CCW_WS_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct http_req;
struct sse;
struct ws;

#define WS_MSG_MAX	65536	/* a client's message: closed 1009 beyond */
#define WS_PING_MS	15000	/* a ping each; two unanswered: dropped */

struct ws_stats {
	size_t		 clients;	/* open now */
	uint64_t	 opened;	/* handshakes accepted */
	uint64_t	 refused;	/* handshakes refused (400, 426) */
	uint64_t	 sent;		/* events written, all clients */
	uint64_t	 failed;	/* closed for a protocol error (1002, */
					/* 1007, 1009) */
	uint64_t	 dropped;	/* fallen behind, or silent too long */
};

struct ws	*ws_new(struct event_base *, struct sse *, uint64_t, size_t);
void		 ws_free(struct ws *);
void		 ws_attach(struct ws *, struct http_req *);
void		 ws_stats(const struct ws *, struct ws_stats *);

#endif
