/*
 * chan.h: a framed message channel on one non-blocking socket (or a
 * pair of pipes), driven by libevent bufferevents.  Used by the supervisor
 * (one per worker) and by the worker (its fd 3, or stdin and stdout).
 */
#ifndef CCW_CHAN_H
#define CCW_CHAN_H

#include "proto.h"

struct event;
struct event_base;
struct evbuffer;
struct chan;

/*
 * Called once per decoded message.  The message is borrowed: the channel
 * clears it after the callback, so take a field by copying it or by
 * setting the pointer to NULL.
 */
typedef void	(*chan_msg_cb)(struct chan *, struct msg *, void *);

/*
 * Called once when the channel ends: err is PROTO_OK for a clean EOF,
 * a protocol error (PROTO_E_TRUNCATED when the peer died mid-frame), or
 * PROTO_E_IO; why is a one-line explanation.  No callback follows it.
 */
typedef void	(*chan_end_cb)(struct chan *, enum proto_err, const char *,
		    void *);

struct chan	*chan_new(struct event_base *, int, int, uint32_t,
		    chan_msg_cb, chan_end_cb, void *);
struct chan	*chan_new_pair(struct event_base *, int, int, int, uint32_t,
		    chan_msg_cb, chan_end_cb, void *);
enum proto_err	 chan_send(struct chan *, const struct msg *);
int		 chan_send_buffer(struct chan *, struct evbuffer *);
size_t		 chan_queued(struct chan *);
void		 chan_on_drained(struct chan *, void (*)(struct chan *, void *));
void		 chan_on_partial(struct chan *, void (*)(struct chan *, void *));
int		 chan_fd(struct chan *);
void		 chan_drain_end(struct chan *);
void		 chan_free(struct chan *);
struct event_base *chan_base_new(void);
int		 chan_arm_ms(struct event *, uint64_t);

#endif
