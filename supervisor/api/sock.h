/*
 * sock.h: the control socket a host mounts on its event base: the verb
 * table and the host's event bus over a unix socket, in proto/ frames
 * (REQUEST, REPLY, EVENT; man/ccw-proto.7), for `control --connect`.
 */
#ifndef CCW_SOCK_H
#define CCW_SOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

struct api;
struct bus;
struct event_base;
struct sock;

#define SOCK_FRAME_MAX	(8u << 20)	/* a frame's body, either way */
#define SOCK_CONNS_MAX	256		/* connections at once */
#define SOCK_OUT_MAX	(4u << 20)	/* unsent bytes before a client is dropped */
#define SOCK_UID_MAX	64		/* one uid's connections: then the least
					   recently active idle one is closed */
#define SOCK_IDLE_MS	60000		/* no frame, no call, no subscription */
#define SOCK_FRAME_MS	10000		/* a frame's first byte -> its last */
#define SOCK_IDLE_ENV	"CCW_SOCK_IDLE_MS"	/* overrides, for tests */
#define SOCK_FRAME_ENV	"CCW_SOCK_FRAME_MS"

/*
 * A verb the host answers itself before the verb table: 1 and *reply (a
 * new object; the request's id is added), or 0 when it is not one of its.
 */
typedef int	(*sock_local_fn)(void *, const json_t *, json_t **);

/* What the socket serves; all borrowed, outliving the sock (see sock_free). */
struct sock_cfg {
	const char	*path;
	struct api	*api;
	struct bus	*bus;		/* NULL: subscribe is refused */
	size_t		 conns_max;	/* 0: SOCK_CONNS_MAX */
	size_t		 out_max;	/* 0: SOCK_OUT_MAX */
	size_t		 uid_max;	/* 0: SOCK_UID_MAX */
	uint64_t	 idle_ms;	/* 0: $SOCK_IDLE_ENV, else SOCK_IDLE_MS */
	uint64_t	 frame_ms;	/* 0: $SOCK_FRAME_ENV, else SOCK_FRAME_MS */
	sock_local_fn	 local;		/* NULL: none */
	void		*local_arg;
};

/* What happened on the socket, for a /metrics page or a test. */
struct sock_stats {
	uint64_t	accepted;
	uint64_t	refused_uid;	/* another user's connection */
	uint64_t	refused_full;	/* over conns_max, or uid_max all busy */
	uint64_t	evicted;	/* closed idle to admit one at uid_max */
	uint64_t	closed_idle;	/* past idle_ms between frames */
	uint64_t	closed_slow;	/* a frame not whole within frame_ms */
	uint64_t	bad_frames;	/* closed for a frame proto/ refused */
	uint64_t	dropped_slow;	/* closed past out_max unsent bytes */
	uint64_t	requests;
	uint64_t	orphaned;	/* replies whose client had left */
	size_t		open;
	size_t		subscribers;
	size_t		pending;	/* calls waiting for the verb table */
};

struct sock	*sock_listen(struct event_base *, const struct sock_cfg *,
		    char **);
void		 sock_free(struct sock *);
void		 sock_stats(const struct sock *, struct sock_stats *);
json_t		*sock_stats_json(const struct sock *);

/* sockbind.c: the path (runtime dir, state dir) and its socket */
char		*sock_default_path(const char *, const char *);
int		 sockbind_open(const char *, int *, int *, dev_t *, ino_t *,
		    char **);
void		 sockbind_close(const char *, int, dev_t, ino_t);

#endif
