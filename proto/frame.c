/*
 * frame.c: the 10-byte frame header and moving whole frames in and out of
 * libevent buffers.  A header is judged byte by byte as it arrives, so
 * garbage is refused at once and a body is never buffered before its
 * length has been checked against the limit.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "proto.h"

/* Write a header for a body of len bytes. */
void
frame_hdr_encode(uint8_t *h, uint16_t type, uint32_t len)
{
	h[0] = PROTO_MAGIC0;
	h[1] = PROTO_MAGIC1;
	h[2] = PROTO_VERSION;
	h[3] = 0;
	h[4] = type >> 8;
	h[5] = type & 0xff;
	h[6] = len >> 24;
	h[7] = (len >> 16) & 0xff;
	h[8] = (len >> 8) & 0xff;
	h[9] = len & 0xff;
}

/*
 * Judge the first n bytes of a header.  PROTO_E_AGAIN means "valid so
 * far, need more"; the header is filled only when all ten bytes passed.
 */
enum proto_err
frame_hdr_decode(const uint8_t *h, size_t n, uint32_t max,
    struct frame_hdr *hdr)
{
	uint32_t	len;
	uint16_t	type;

	if ((n > 0 && h[0] != PROTO_MAGIC0) || (n > 1 && h[1] != PROTO_MAGIC1))
		return PROTO_E_MAGIC;
	if (n > 2 && h[2] != PROTO_VERSION)
		return PROTO_E_VERSION;
	if (n > 3 && h[3] != 0)
		return PROTO_E_FLAGS;
	if (n < 6)
		return PROTO_E_AGAIN;
	type = (uint16_t)(h[4] << 8 | h[5]);
	if (msg_dir(type) == 0)
		return PROTO_E_TYPE;
	if (n < PROTO_HDR_LEN)
		return PROTO_E_AGAIN;
	len = (uint32_t)h[6] << 24 | (uint32_t)h[7] << 16 |
	    (uint32_t)h[8] << 8 | h[9];
	if (len == 0)
		return PROTO_E_EMPTY;
	if (len > max)
		return PROTO_E_TOOBIG;
	hdr->version = h[2];
	hdr->flags = h[3];
	hdr->type = type;
	hdr->length = len;
	return PROTO_OK;
}

/*
 * Take one whole frame off the front of in and decode it into m (which
 * the caller clears with msg_clear).  PROTO_E_AGAIN leaves in untouched.
 * On any other error the stream is unusable and the peer must be dropped.
 */
enum proto_err
frame_read(struct evbuffer *in, uint32_t max, struct msg *m)
{
	struct frame_hdr	 hdr;
	uint8_t			 h[PROTO_HDR_LEN];
	enum proto_err		 e;
	size_t			 have = evbuffer_get_length(in);
	ev_ssize_t		 got;
	const uint8_t		*body;

	msg_init(m, MSG_NONE);
	got = evbuffer_copyout(in, h, have < sizeof h ? have : sizeof h);
	if (got < 0)
		return PROTO_E_NOMEM;
	if ((e = frame_hdr_decode(h, (size_t)got, max, &hdr)) != PROTO_OK)
		return e;
	if (have - PROTO_HDR_LEN < hdr.length)
		return PROTO_E_AGAIN;
	evbuffer_drain(in, PROTO_HDR_LEN);
	body = evbuffer_pullup(in, hdr.length);
	if (body == NULL)
		return PROTO_E_NOMEM;
	e = msg_decode(hdr.type, body, hdr.length, m);
	evbuffer_drain(in, hdr.length);
	return e;
}

/*
 * What is left in a buffer when its stream ended: nothing is fine, a
 * partial valid frame is PROTO_E_TRUNCATED, garbage is reported as such.
 */
enum proto_err
frame_eof(struct evbuffer *in, uint32_t max)
{
	struct frame_hdr	hdr;
	uint8_t			h[PROTO_HDR_LEN];
	size_t			have = evbuffer_get_length(in);
	ev_ssize_t		got;
	enum proto_err		e;

	if (have == 0)
		return PROTO_OK;
	got = evbuffer_copyout(in, h, have < sizeof h ? have : sizeof h);
	if (got < 0)
		return PROTO_E_NOMEM;
	e = frame_hdr_decode(h, (size_t)got, max, &hdr);
	if (e == PROTO_OK || e == PROTO_E_AGAIN)
		return PROTO_E_TRUNCATED;
	return e;
}

/* Encode m as one frame at the end of out; nothing is added on error. */
enum proto_err
frame_write(struct evbuffer *out, const struct msg *m, uint32_t max)
{
	msgpack_sbuffer	sb;
	enum proto_err	e;
	uint8_t		h[PROTO_HDR_LEN];

	msgpack_sbuffer_init(&sb);
	if ((e = msg_encode(m, &sb)) != PROTO_OK)
		goto out;
	if (sb.size > max) {
		e = PROTO_E_TOOBIG;
		goto out;
	}
	frame_hdr_encode(h, (uint16_t)m->type, (uint32_t)sb.size);
	if (evbuffer_expand(out, sizeof h + sb.size) != 0 ||
	    evbuffer_add(out, h, sizeof h) != 0 ||
	    evbuffer_add(out, sb.data, sb.size) != 0)
		e = PROTO_E_NOMEM;
out:
	msgpack_sbuffer_destroy(&sb);
	return e;
}
