/*
 * feed.c: decodes frames from a complete byte string until an error or
 * the end, then judges the leftovers as a channel would at EOF.
 */
#include <config.h>

#include <event2/buffer.h>

#include "feed.h"

/* Returns the first error (PROTO_OK when every byte formed good frames). */
enum proto_err
feed_stream(const uint8_t *data, size_t len, uint32_t max, int *nframes)
{
	struct evbuffer	*in = evbuffer_new();
	struct msg	 m;
	enum proto_err	 e;

	*nframes = 0;
	if (in == NULL)
		return PROTO_E_NOMEM;
	evbuffer_add(in, data, len);
	while ((e = frame_read(in, max, &m)) == PROTO_OK) {
		(*nframes)++;
		msg_clear(&m);
	}
	msg_clear(&m);
	if (e == PROTO_E_AGAIN)
		e = frame_eof(in, max);
	evbuffer_free(in);
	return e;
}
