/*
 * chan.c: owns the bufferevent (two for a pair of pipes) and the read
 * loop that turns its input into messages.  Memory is bounded by the frame limit: a header is
 * checked before its body is waited for.  Callbacks may free the channel;
 * the free is deferred until the read loop has unwound.
 */
#include <config.h>

#include <sys/ioctl.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "chan.h"
#include "xmalloc.h"

struct chan {
	struct bufferevent	*bev;		/* reads (and writes, on one fd) */
	struct bufferevent	*wbev;		/* writes: bev, or wfd's own */
	int			 fd, wfd;
	int			 accept_dir;
	uint32_t		 max;
	chan_msg_cb		 on_msg;
	chan_end_cb		 on_end;
	void			*arg;
	struct evbuffer		*scratch;	/* frames written straight to the socket */
	void			(*on_drained)(struct chan *, void *);
	void			(*on_partial)(struct chan *, void *);
	int			 busy;		/* inside a callback */
	int			 dead;		/* freed while busy */
	int			 ended;		/* on_end delivered */
};

static void	chan_destroy(struct chan *);

/* Deliver the end event once and stop reading. */
static void
chan_end(struct chan *c, enum proto_err e, const char *why)
{
	if (c->ended)
		return;
	c->ended = 1;
	bufferevent_disable(c->bev, EV_READ);
	c->busy++;
	c->on_end(c, e, why, c->arg);
	c->busy--;
}

/* Drain every whole frame in the input buffer. */
static void
chan_read_cb(struct bufferevent *bev, void *arg)
{
	struct chan	*c = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	struct msg	 m;
	enum proto_err	 e;

	c->busy++;
	while (!c->dead && !c->ended) {
		e = frame_read(in, c->max, &m);
		if (e == PROTO_E_AGAIN)
			break;
		if (e == PROTO_OK && !(msg_dir(m.type) & c->accept_dir))
			e = PROTO_E_DIRECTION;
		if (e != PROTO_OK) {
			msg_clear(&m);
			chan_end(c, e, proto_strerror(e));
			break;
		}
		c->on_msg(c, &m, c->arg);
		msg_clear(&m);
	}
	if (!c->dead && !c->ended && c->on_partial != NULL &&
	    evbuffer_get_length(in) > 0)
		c->on_partial(c, c->arg);
	c->busy--;
	if (c->dead && c->busy == 0)
		chan_destroy(c);
}

/* EOF or a socket error; leftover bytes decide between clean and truncated. */
static void
chan_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct chan	*c = arg;
	enum proto_err	 e;
	char		 why[128];

	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	/*
	 * A write that failed (EPIPE: the peer exited after its last frame,
	 * as we sent a PING or a CLOSE) ends nothing by itself: what the
	 * peer wrote before is still to be read, and the read side's EOF
	 * decides between a clean end and a truncated one.
	 */
	if ((what & BEV_EVENT_WRITING) && !(what & BEV_EVENT_READING)) {
		bufferevent_disable(c->wbev, EV_WRITE);
		(void)evbuffer_drain(bufferevent_get_output(c->wbev),
		    evbuffer_get_length(bufferevent_get_output(c->wbev)));
		return;
	}
	c->busy++;
	/*
	 * ECONNRESET on a read: the peer closed with our frames (a PING)
	 * unread, after everything it wrote reached us; that is its EOF.
	 */
	if ((what & BEV_EVENT_ERROR) && EVUTIL_SOCKET_ERROR() == ECONNRESET) {
		what &= ~BEV_EVENT_ERROR;
		what |= BEV_EVENT_EOF;
	}
	if (what & BEV_EVENT_ERROR) {
		snprintf(why, sizeof why, "channel error: %s",
		    strerror(EVUTIL_SOCKET_ERROR()));
		chan_end(c, PROTO_E_IO, why);
	} else {
		e = frame_eof(bufferevent_get_input(bev), c->max);
		chan_end(c, e, e == PROTO_OK ? "end of stream" :
		    proto_strerror(e));
	}
	c->busy--;
	if (c->dead && c->busy == 0)
		chan_destroy(c);
}

/*
 * The peer is known dead, but the socket may live on in a descendant that
 * inherited it: take what is readable now (bounded by what the kernel
 * holds at this instant, so a writer cannot keep us here), decode it, and
 * end the channel as if at EOF.  The end callback runs as for an EOF.
 */
void
chan_drain_end(struct chan *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);
	enum proto_err	 e;
	int		 avail = 0, n;

	if (c->dead || c->ended)
		return;
	if (ioctl(c->fd, FIONREAD, &avail) != 0)
		avail = 0;
	/* the bufferevent keeps its input's end frozen to all but itself */
	evbuffer_unfreeze(in, 0);
	while (avail > 0 && (n = evbuffer_read(in, c->fd, avail)) > 0)
		avail -= n;
	evbuffer_freeze(in, 0);
	c->busy++;
	chan_read_cb(c->bev, c);
	if (!c->dead && !c->ended) {
		e = frame_eof(in, c->max);
		chan_end(c, e, e == PROTO_OK ? "the peer is gone" :
		    proto_strerror(e));
	}
	c->busy--;
	if (c->dead && c->busy == 0)
		chan_destroy(c);
}

/* Output fully written: tell whoever waits for that (a worker exiting). */
static void
chan_write_cb(struct bufferevent *bev, void *arg)
{
	struct chan	*c = arg;

	(void)bev;
	if (c->on_drained != NULL && !c->dead)
		c->on_drained(c, c->arg);
}

/*
 * Wrap fd (non-blocking; the channel owns it from now on).  accept_dir is
 * the MSG_DIR_* a received message must carry.
 */
struct chan *
chan_new(struct event_base *base, int fd, int accept_dir, uint32_t max,
    chan_msg_cb on_msg, chan_end_cb on_end, void *arg)
{
	return chan_new_pair(base, fd, fd, accept_dir, max, on_msg, on_end,
	    arg);
}

/*
 * The same on two descriptors, read from rfd and written to wfd (a
 * worker behind a launcher: its stdin and stdout, pipes under sshd).
 * Both non-blocking and owned by the channel; rfd == wfd is chan_new.
 */
struct chan *
chan_new_pair(struct event_base *base, int rfd, int wfd, int accept_dir,
    uint32_t max, chan_msg_cb on_msg, chan_end_cb on_end, void *arg)
{
	struct chan	*c;

	c = xcalloc(1, sizeof *c);
	c->bev = bufferevent_socket_new(base, rfd, BEV_OPT_CLOSE_ON_FREE);
	c->wbev = rfd == wfd ? c->bev :
	    bufferevent_socket_new(base, wfd, BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL || c->wbev == NULL)
		goto fail;
	c->fd = rfd;
	c->wfd = wfd;
	c->accept_dir = accept_dir;
	c->max = max;
	c->on_msg = on_msg;
	c->on_end = on_end;
	c->arg = arg;
	c->scratch = evbuffer_new();
	bufferevent_setcb(c->bev, chan_read_cb, chan_write_cb, chan_event_cb, c);
	if (c->wbev != c->bev)
		bufferevent_setcb(c->wbev, NULL, chan_write_cb, chan_event_cb,
		    c);
	if (bufferevent_enable(c->bev, c->wbev == c->bev ?
	    EV_READ | EV_WRITE : EV_READ) != 0 ||
	    (c->wbev != c->bev && bufferevent_enable(c->wbev, EV_WRITE) != 0)) {
		evbuffer_free(c->scratch);
		goto fail;
	}
	return c;
fail:
	if (c->wbev != NULL && c->wbev != c->bev)
		bufferevent_free(c->wbev);
	if (c->bev != NULL)
		bufferevent_free(c->bev);
	free(c);
	return NULL;
}

/*
 * Send one message.  With nothing queued it goes straight to the socket
 * (a round trip then costs one write, not an epoll change, a wakeup and a
 * write); what the socket does not take is queued for the bufferevent.
 */
enum proto_err
chan_send(struct chan *c, const struct msg *m)
{
	struct evbuffer	*out = bufferevent_get_output(c->wbev);
	enum proto_err	 e;

	if (c->dead)
		return PROTO_E_TRUNCATED;
	if (evbuffer_get_length(out) > 0)
		return frame_write(out, m, c->max);
	if ((e = frame_write(c->scratch, m, c->max)) != PROTO_OK)
		return e;
	(void)evbuffer_write(c->scratch, c->wfd);
	if (evbuffer_get_length(c->scratch) > 0 &&
	    evbuffer_add_buffer(out, c->scratch) != 0)
		return PROTO_E_NOMEM;
	return PROTO_OK;
}

/* Call fn whenever everything queued has been written. */
void
chan_on_drained(struct chan *c, void (*fn)(struct chan *, void *))
{
	c->on_drained = fn;
}

/*
 * Call fn after each read that leaves part of a frame buffered (a server
 * times a frame from its first byte: sock.c's frame deadline).
 */
void
chan_on_partial(struct chan *c, void (*fn)(struct chan *, void *))
{
	c->on_partial = fn;
}

/* Append frames encoded earlier with frame_write (moved, not copied). */
int
chan_send_buffer(struct chan *c, struct evbuffer *frames)
{
	if (c->dead)
		return -1;
	return evbuffer_add_buffer(bufferevent_get_output(c->wbev), frames);
}

/* Bytes written by chan_send and not yet taken by the kernel. */
size_t
chan_queued(struct chan *c)
{
	return evbuffer_get_length(bufferevent_get_output(c->wbev));
}

/* The socket, for shutdown(2) or diagnostics. */
int
chan_fd(struct chan *c)
{
	return c->fd;
}

/* Release the bufferevent and close the socket. */
static void
chan_destroy(struct chan *c)
{
	evbuffer_free(c->scratch);
	if (c->wbev != c->bev)
		bufferevent_free(c->wbev);
	bufferevent_free(c->bev);
	free(c);
}

/*
 * An event base for either program.  Its timers use the precise
 * monotonic clock: libevent's default coarse clock fires deadlines up to
 * a tick early, and "never nudge before the timeout" is a promise.
 */
struct event_base *
chan_base_new(void)
{
	struct event_config	*cfg;
	struct event_base	*base;

	if ((cfg = event_config_new()) == NULL)
		return NULL;
	event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	return base;
}

/*
 * Add ev (a timer, or an fd event's timeout) to fire after ms from now.
 * libevent measures from the time it cached at the top of the loop turn;
 * after work that blocked (a commit, a lock) that is in the past and the
 * timer would fire early, so the cache is refreshed first.
 */
int
chan_arm_ms(struct event *ev, uint64_t ms)
{
	struct timeval	tv;

	event_base_update_cache_time(event_get_base(ev));
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	return event_add(ev, &tv);
}

/* Close the channel; safe from inside its own callbacks. */
void
chan_free(struct chan *c)
{
	if (c == NULL)
		return;
	if (c->busy > 0) {
		c->dead = 1;
		bufferevent_disable(c->bev, EV_READ | EV_WRITE);
		bufferevent_disable(c->wbev, EV_READ | EV_WRITE);
		return;
	}
	chan_destroy(c);
}
