/*
 * test-frame.c: the header is judged byte by byte, whole frames come out
 * of an evbuffer however the bytes were split, and end-of-stream leftovers
 * are classified.
 */
#include <config.h>

#include <string.h>

#include <event2/buffer.h>

#include "proto.h"
#include "samples.h"
#include "tap.h"

/* Header checks as bytes arrive. */
static void
check_header(void)
{
	struct frame_hdr	hdr;
	uint8_t			h[PROTO_HDR_LEN];

	frame_hdr_encode(h, MSG_RESULT, 300);
	tap_is_int(frame_hdr_decode(h, 3, PROTO_MAX_BODY, &hdr), PROTO_E_AGAIN,
	    "3 good bytes: need more");
	tap_is_int(frame_hdr_decode(h, 10, PROTO_MAX_BODY, &hdr), PROTO_OK,
	    "whole header accepted");
	tap_ok(hdr.type == MSG_RESULT && hdr.length == 300, "type and length");
	tap_is_int(frame_hdr_decode(h, 10, 299, &hdr), PROTO_E_TOOBIG,
	    "length over a smaller limit");
	tap_is_int(frame_hdr_decode((const uint8_t *)"X", 1, PROTO_MAX_BODY,
	    &hdr), PROTO_E_MAGIC, "garbage refused after one byte");
	h[2] = PROTO_VERSION + 1;
	tap_is_int(frame_hdr_decode(h, 3, PROTO_MAX_BODY, &hdr),
	    PROTO_E_VERSION, "a later version refused after three bytes");
	h[2] = PROTO_VERSION - 1;
	tap_is_int(frame_hdr_decode(h, 3, PROTO_MAX_BODY, &hdr),
	    PROTO_E_VERSION, "an earlier version (1, without PING) refused");
	h[2] = PROTO_VERSION;
	h[3] = 0x80;
	tap_is_int(frame_hdr_decode(h, 4, PROTO_MAX_BODY, &hdr), PROTO_E_FLAGS,
	    "reserved flags refused");
	frame_hdr_encode(h, 0, 1);
	tap_is_int(frame_hdr_decode(h, 6, PROTO_MAX_BODY, &hdr), PROTO_E_TYPE,
	    "type 0 refused before the length arrives");
	frame_hdr_encode(h, MSG__MAX, 1);
	tap_is_int(frame_hdr_decode(h, 10, PROTO_MAX_BODY, &hdr), PROTO_E_TYPE,
	    "type past the table refused");
	frame_hdr_encode(h, MSG_BYE, 0);
	tap_is_int(frame_hdr_decode(h, 10, PROTO_MAX_BODY, &hdr), PROTO_E_EMPTY,
	    "length 0 refused");
}

/* All samples written into one buffer, then fed back one byte at a time. */
static void
check_stream(void)
{
	struct evbuffer	*all = evbuffer_new(), *in = evbuffer_new();
	struct msg	 m;
	enum proto_err	 e;
	size_t		 total, i;
	int		 t, got = 0, order_ok = 1;
	uint8_t		 byte;

	for (t = MSG_HELLO; t < MSG__MAX; t++) {
		sample_msg(t, &m);
		e = frame_write(all, &m, PROTO_MAX_BODY);
		if (e != PROTO_OK)
			tap_diag("frame_write %s: %s", msg_name(t), proto_errname(e));
		msg_clear(&m);
	}
	total = evbuffer_get_length(all);
	for (i = 0; i < total; i++) {
		evbuffer_remove(all, &byte, 1);
		evbuffer_add(in, &byte, 1);
		while ((e = frame_read(in, PROTO_MAX_BODY, &m)) == PROTO_OK) {
			if ((int)m.type != MSG_HELLO + got)
				order_ok = 0;
			got++;
			msg_clear(&m);
		}
		if (e != PROTO_E_AGAIN)
			break;
	}
	tap_is_int(got, MSG__MAX - 1, "every frame decoded from 1-byte pieces");
	tap_ok(order_ok, "frames arrive in order");
	tap_is_int(frame_eof(in, PROTO_MAX_BODY), PROTO_OK,
	    "nothing left at the end");
	evbuffer_free(all);
	evbuffer_free(in);
}

/* Leftovers at end of stream. */
static void
check_eof(void)
{
	struct evbuffer	*b = evbuffer_new();
	struct msg	 m;
	uint8_t		 h[PROTO_HDR_LEN];

	evbuffer_add(b, "CW", 2);
	tap_is_int(frame_eof(b, PROTO_MAX_BODY), PROTO_E_TRUNCATED,
	    "partial header is truncated");
	evbuffer_drain(b, 2);
	frame_hdr_encode(h, MSG_BYE, 20);
	evbuffer_add(b, h, sizeof h);
	evbuffer_add(b, "\x81", 1);
	tap_is_int(frame_read(b, PROTO_MAX_BODY, &m), PROTO_E_AGAIN,
	    "partial body waits");
	tap_is_int(frame_eof(b, PROTO_MAX_BODY), PROTO_E_TRUNCATED,
	    "partial body is truncated");
	evbuffer_drain(b, evbuffer_get_length(b));
	evbuffer_add(b, "zz", 2);
	tap_is_int(frame_eof(b, PROTO_MAX_BODY), PROTO_E_MAGIC,
	    "garbage tail is garbage");
	evbuffer_free(b);
}

/* The writer refuses frames the reader would refuse. */
static void
check_write_limit(void)
{
	struct evbuffer	*b = evbuffer_new();
	struct msg	 m;

	sample_msg(MSG_ASSIGN, &m);
	tap_is_int(frame_write(b, &m, 64), PROTO_E_TOOBIG,
	    "frame over the limit not written");
	tap_is_int((long long)evbuffer_get_length(b), 0, "buffer untouched");
	msg_clear(&m);
	evbuffer_free(b);
}

int
main(void)
{
	check_header();
	check_stream();
	check_eof();
	check_write_limit();
	return tap_done();
}
