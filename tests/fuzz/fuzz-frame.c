/*
 * fuzz-frame.c: libFuzzer target for frame and body decoding.  Besides
 * "no crash, no leak" it checks that whatever decodes re-encodes to bytes
 * that decode to the same encoding.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "feed.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* decode(encode(m)) must encode to the same bytes again. */
static void
fuzz_reencode(const struct msg *m)
{
	msgpack_sbuffer	a, b;
	struct msg	d;

	msgpack_sbuffer_init(&a);
	msgpack_sbuffer_init(&b);
	if (msg_encode(m, &a) == PROTO_OK) {
		if (msg_decode(m->type, (uint8_t *)a.data, a.size, &d) !=
		    PROTO_OK)
			abort();
		if (msg_encode(&d, &b) != PROTO_OK || a.size != b.size ||
		    memcmp(a.data, b.data, a.size) != 0)
			abort();
		msg_clear(&d);
	}
	msgpack_sbuffer_destroy(&a);
	msgpack_sbuffer_destroy(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct msg	m;
	int		n;

	/* The stream path, with a small limit so TOOBIG is reachable. */
	(void)feed_stream(data, len, 4096, &n);

	/* The body path directly: the first byte picks the type. */
	if (len > 0 && msg_decode((enum msg_type)(data[0] % MSG__MAX),
	    data + 1, len - 1, &m) == PROTO_OK)
		fuzz_reencode(&m);
	msg_clear(&m);
	return 0;
}
