/*
 * test-chan.c: the channel over a real socketpair and event loop: frames
 * dribbled a byte at a time, a large frame through a full socket buffer,
 * every way a peer can misbehave ending the channel with its error, a
 * channel on a pair of pipes (a worker behind a launcher), and a peer
 * that exits with our frames unread (a reset, not a violation).
 */
#include <config.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "chan.h"
#include "samples.h"
#include "tap.h"
#include "xmalloc.h"

struct rx {
	int		 nmsg;
	int		 types[16];
	int		 ended;
	enum proto_err	 err;
	int		 free_on_msg;
	size_t		 prompt_len;
};

/* Record a message; optionally free the channel from inside the callback. */
static void
rx_msg(struct chan *c, struct msg *m, void *arg)
{
	struct rx	*rx = arg;

	if (rx->nmsg < 16)
		rx->types[rx->nmsg] = m->type;
	rx->nmsg++;
	if (m->type == MSG_ASSIGN)
		rx->prompt_len = strlen(m->u.assign.prompt);
	if (rx->free_on_msg)
		chan_free(c);
}

/* Record the end event. */
static void
rx_end(struct chan *c, enum proto_err e, const char *why, void *arg)
{
	struct rx	*rx = arg;

	(void)c;
	(void)why;
	rx->ended++;
	rx->err = e;
}

/* Run the loop until cond is true or 2000 iterations pass. */
static void
spin(struct event_base *base, const int *cond)
{
	int	i;

	for (i = 0; i < 2000 && !*cond; i++)
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
}

/* Write raw bytes to the peer one at a time, letting the loop run. */
static void
dribble(struct event_base *base, int fd, const uint8_t *p, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (write(fd, p + i, 1) != 1)
			break;
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	}
}

/* Serialize a sample message to bytes (caller frees). */
static uint8_t *
framed(enum msg_type t, size_t *len)
{
	struct evbuffer	*b = evbuffer_new();
	struct msg	 m;
	uint8_t		*out;

	sample_msg(t, &m);
	frame_write(b, &m, PROTO_MAX_BODY);
	msg_clear(&m);
	*len = evbuffer_get_length(b);
	out = xmalloc(*len);
	evbuffer_remove(b, out, *len);
	evbuffer_free(b);
	return out;
}

/*
 * One scenario: a supervisor-side channel on sv[0], raw bytes into sv[1],
 * then optionally a close of sv[1].  Returns what the channel saw.
 */
static struct rx
scenario(const uint8_t *bytes, size_t n, int close_after, int free_on_msg)
{
	struct event_base	*base = event_base_new();
	struct chan		*c;
	struct rx		 rx = { 0 };
	int			 sv[2];

	rx.free_on_msg = free_on_msg;
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv);
	c = chan_new(base, sv[0], MSG_DIR_TO_SUPERVISOR, PROTO_MAX_BODY,
	    rx_msg, rx_end, &rx);
	dribble(base, sv[1], bytes, n);
	if (close_after)
		close(sv[1]);
	spin(base, &rx.ended);
	if (!free_on_msg)
		chan_free(c);
	if (!close_after)
		close(sv[1]);
	event_base_free(base);
	return rx;
}

/* A worker-side channel receives a 4 MiB ASSIGN through a full socket. */
static void
check_large(void)
{
	struct event_base	*base = event_base_new();
	struct chan		*a, *b;
	struct rx		 ra = { 0 }, rb = { 0 };
	struct msg		 m;
	size_t			 big = 4u << 20;
	int			 sv[2];

	socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv);
	a = chan_new(base, sv[0], MSG_DIR_TO_SUPERVISOR, PROTO_MAX_BODY,
	    rx_msg, rx_end, &ra);
	b = chan_new(base, sv[1], MSG_DIR_TO_WORKER, PROTO_MAX_BODY,
	    rx_msg, rx_end, &rb);
	sample_msg(MSG_ASSIGN, &m);
	free(m.u.assign.prompt);
	m.u.assign.prompt = xmalloc(big + 1);
	memset(m.u.assign.prompt, 'p', big);
	m.u.assign.prompt[big] = '\0';
	tap_is_int(chan_send(a, &m), PROTO_OK, "4 MiB ASSIGN queued");
	msg_clear(&m);
	sample_msg(MSG_CLOSE, &m);
	chan_send(a, &m);
	msg_clear(&m);
	while (rb.nmsg < 2 && event_base_loop(base, EVLOOP_ONCE) == 0)
		;
	tap_is_int(rb.nmsg, 2, "both frames arrive");
	tap_is_int((long long)rb.prompt_len, (long long)big,
	    "large prompt intact");
	tap_is_int((long long)chan_queued(a), 0, "output fully flushed");
	chan_free(a);
	spin(base, &rb.ended);
	tap_ok(rb.ended == 1 && rb.err == PROTO_OK, "peer close is a clean EOF");
	chan_free(b);
	event_base_free(base);
}

/*
 * --stdio: the channel on two pipes, as sshd gives a remote command.
 * PING one way, PONG back; the writer's close is a clean EOF.
 */
static void
check_pair(void)
{
	struct event_base	*base = event_base_new();
	struct chan		*w, *s;
	struct rx		 rw = { 0 }, rs = { 0 };
	struct msg		 m;
	int			 down[2], up[2];

	pipe2(down, O_NONBLOCK | O_CLOEXEC);
	pipe2(up, O_NONBLOCK | O_CLOEXEC);
	w = chan_new_pair(base, down[0], up[1], MSG_DIR_TO_WORKER,
	    PROTO_MAX_BODY, rx_msg, rx_end, &rw);
	s = chan_new_pair(base, up[0], down[1], MSG_DIR_TO_SUPERVISOR,
	    PROTO_MAX_BODY, rx_msg, rx_end, &rs);
	tap_ok(w != NULL && s != NULL, "pair: channels on two pipes each");
	sample_msg(MSG_PING, &m);
	tap_is_int(chan_send(s, &m), PROTO_OK, "pair: PING sent");
	msg_clear(&m);
	while (rw.nmsg < 1 && event_base_loop(base, EVLOOP_ONCE) == 0)
		;
	tap_ok(rw.nmsg == 1 && rw.types[0] == MSG_PING, "pair: PING received");
	sample_msg(MSG_PONG, &m);
	chan_send(w, &m);
	msg_clear(&m);
	while (rs.nmsg < 1 && event_base_loop(base, EVLOOP_ONCE) == 0)
		;
	tap_ok(rs.nmsg == 1 && rs.types[0] == MSG_PONG, "pair: PONG back");
	chan_free(w);
	spin(base, &rs.ended);
	tap_ok(rs.ended == 1 && rs.err == PROTO_OK,
	    "pair: the far side's end is a clean EOF");
	chan_free(s);
	event_base_free(base);
}

/*
 * The peer sends its last frame and exits with our PING unread: a unix
 * socket then reads ECONNRESET, which must end the channel as an EOF
 * after the frame (before: a protocol violation, the agent errored).
 */
static void
check_reset(void)
{
	struct event_base	*base = event_base_new();
	struct chan		*c;
	struct rx		 rx = { 0 };
	struct msg		 m;
	uint8_t			*f;
	size_t			 n;
	int			 sv[2];

	socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv);
	c = chan_new(base, sv[0], MSG_DIR_TO_SUPERVISOR, PROTO_MAX_BODY,
	    rx_msg, rx_end, &rx);
	sample_msg(MSG_PING, &m);
	chan_send(c, &m);		/* never read by the peer */
	msg_clear(&m);
	f = framed(MSG_RESULT, &n);
	tap_ok(write(sv[1], f, n) == (ssize_t)n, "reset: the peer's RESULT");
	free(f);
	close(sv[1]);
	spin(base, &rx.ended);
	tap_ok(rx.nmsg == 1 && rx.types[0] == MSG_RESULT,
	    "reset: the RESULT is read");
	tap_ok(rx.ended == 1 && rx.err == PROTO_OK,
	    "reset: the end is a clean EOF, not a channel error");
	sample_msg(MSG_PING, &m);
	chan_send(c, &m);		/* EPIPE: nothing more to end */
	msg_clear(&m);
	spin(base, &rx.nmsg);
	tap_is_int(rx.ended, 1, "reset: a write after it ends nothing twice");
	chan_free(c);
	event_base_free(base);
}

int
main(void)
{
	uint8_t		*f1, *f2, *buf;
	size_t		 n1, n2;
	struct rx	 rx;
	uint8_t		 h[PROTO_HDR_LEN];

	/* as both programs do: a write to a gone peer fails, it does not kill */
	signal(SIGPIPE, SIG_IGN);

	f1 = framed(MSG_HELLO, &n1);
	f2 = framed(MSG_RESULT, &n2);
	buf = xmalloc(n1 + n2);
	memcpy(buf, f1, n1);
	memcpy(buf + n1, f2, n2);

	rx = scenario(buf, n1 + n2, 1, 0);
	tap_is_int(rx.nmsg, 2, "two frames from 1-byte writes");
	tap_ok(rx.types[0] == MSG_HELLO && rx.types[1] == MSG_RESULT, "in order");
	tap_ok(rx.ended == 1 && rx.err == PROTO_OK, "clean EOF once");

	rx = scenario(buf, n1 + n2 / 2, 1, 0);
	tap_is_int(rx.nmsg, 1, "first frame before a death mid-frame");
	tap_is_int(rx.err, PROTO_E_TRUNCATED, "death mid-frame is truncated");

	rx = scenario((const uint8_t *)"GARBAGE GARBAGE", 15, 0, 0);
	tap_is_int(rx.err, PROTO_E_MAGIC, "garbage ends the channel");
	tap_is_int(rx.nmsg, 0, "no message from garbage");

	frame_hdr_encode(h, MSG_RESULT, PROTO_MAX_BODY + 1);
	rx = scenario(h, sizeof h, 0, 0);
	tap_is_int(rx.err, PROTO_E_TOOBIG,
	    "oversized frame refused from its header alone");

	free(f2);
	f2 = framed(MSG_ASSIGN, &n2);
	rx = scenario(f2, n2, 0, 0);
	tap_is_int(rx.err, PROTO_E_DIRECTION, "ASSIGN sent to the supervisor");

	rx = scenario(buf, n1, 0, 1);
	tap_is_int(rx.nmsg, 1, "channel freed inside its callback");

	check_large();
	check_pair();
	check_reset();
	free(f1);
	free(f2);
	free(buf);
	return tap_done();
}
