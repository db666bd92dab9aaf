/*
 * err.c: names and one-line descriptions of the protocol error codes, so
 * logs and tests speak of "PROTO_E_DEPTH" rather than 11.
 */
#include <config.h>

#include "proto.h"

static const struct {
	const char	*name;
	const char	*text;
} proto_errs[PROTO_E__MAX] = {
	[PROTO_OK] =		{ "PROTO_OK", "no error" },
	[PROTO_E_AGAIN] =	{ "PROTO_E_AGAIN", "incomplete frame" },
	[PROTO_E_TRUNCATED] =	{ "PROTO_E_TRUNCATED", "stream ended inside a frame" },
	[PROTO_E_MAGIC] =	{ "PROTO_E_MAGIC", "bad frame magic (garbage in stream)" },
	[PROTO_E_VERSION] =	{ "PROTO_E_VERSION", "protocol version mismatch" },
	[PROTO_E_FLAGS] =	{ "PROTO_E_FLAGS", "reserved header bits set" },
	[PROTO_E_TYPE] =	{ "PROTO_E_TYPE", "unknown message type" },
	[PROTO_E_EMPTY] =	{ "PROTO_E_EMPTY", "frame body is empty" },
	[PROTO_E_TOOBIG] =	{ "PROTO_E_TOOBIG", "frame body over the size limit" },
	[PROTO_E_NOTMAP] =	{ "PROTO_E_NOTMAP", "frame body is not a map" },
	[PROTO_E_COUNT] =	{ "PROTO_E_COUNT", "container count exceeds the bytes left" },
	[PROTO_E_DEPTH] =	{ "PROTO_E_DEPTH", "nesting too deep" },
	[PROTO_E_SHORT] =	{ "PROTO_E_SHORT", "object runs past the end of the body" },
	[PROTO_E_TRAILING] =	{ "PROTO_E_TRAILING", "bytes after the body's map" },
	[PROTO_E_BADBYTE] =	{ "PROTO_E_BADBYTE", "unsupported msgpack type" },
	[PROTO_E_UTF8] =	{ "PROTO_E_UTF8", "string is not valid UTF-8 text" },
	[PROTO_E_KEY] =		{ "PROTO_E_KEY", "map key is not a string" },
	[PROTO_E_FIELDTYPE] =	{ "PROTO_E_FIELDTYPE", "field has the wrong type" },
	[PROTO_E_MISSING] =	{ "PROTO_E_MISSING", "required field missing" },
	[PROTO_E_DUPKEY] =	{ "PROTO_E_DUPKEY", "field given twice" },
	[PROTO_E_RANGE] =	{ "PROTO_E_RANGE", "number out of range" },
	[PROTO_E_DIRECTION] =	{ "PROTO_E_DIRECTION", "message sent in the wrong direction" },
	[PROTO_E_IO] =		{ "PROTO_E_IO", "channel I/O error" },
	[PROTO_E_NOMEM] =	{ "PROTO_E_NOMEM", "out of memory" },
};

/* Human text for an error code. */
const char *
proto_strerror(enum proto_err e)
{
	if ((unsigned)e >= PROTO_E__MAX)
		return "unknown protocol error";
	return proto_errs[e].text;
}

/* Stable symbolic name, used by tests and logs. */
const char *
proto_errname(enum proto_err e)
{
	if ((unsigned)e >= PROTO_E__MAX)
		return "PROTO_E_UNKNOWN";
	return proto_errs[e].name;
}
