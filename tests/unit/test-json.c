/*
 * test-json.c: JSON <-> msgpack is lossless for the state file's types
 * and refuses what JSON cannot hold.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "tap.h"

/* json -> msgpack -> json; returns the new value or NULL. */
static json_t *
through(const json_t *in, enum proto_err *ep)
{
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	msgpack_unpacked	 up;
	json_t			*out = NULL;
	size_t			 off = 0;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	*ep = json_to_msgpack(&pk, in);
	if (*ep == PROTO_OK) {
		msgpack_unpacked_init(&up);
		msgpack_unpack_next(&up, sb.data, sb.size, &off);
		*ep = json_from_msgpack(&up.data, &out);
		msgpack_unpacked_destroy(&up);
	}
	msgpack_sbuffer_destroy(&sb);
	return out;
}

/* Unpack raw msgpack bytes and convert them to JSON. */
static enum proto_err
from_bytes(const char *b, size_t len)
{
	msgpack_unpacked	 up;
	json_t			*out = NULL;
	enum proto_err		 e;
	size_t			 off = 0;

	msgpack_unpacked_init(&up);
	msgpack_unpack_next(&up, b, len, &off);
	e = json_from_msgpack(&up.data, &out);
	msgpack_unpacked_destroy(&up);
	json_decref(out);
	return e;
}

/* A value nested `levels` arrays deep. */
static json_t *
deep(int levels)
{
	json_t	*v = json_null(), *a;
	int	 i;

	for (i = 0; i < levels; i++) {
		a = json_array();
		json_array_append_new(a, v);
		v = a;
	}
	return v;
}

int
main(void)
{
	static const char *doc =
	    "{\"loop_id\":\"loop-v2-1\",\"n\":10,\"neg\":-3,\"big\":9007199254740993,"
	    "\"r\":1.0,\"pi\":3.25,\"t\":true,\"f\":false,\"z\":null,"
	    "\"arr\":[1,\"two\",[3.5],{\"k\":\"v\"}],\"u\":\"caf\\u00e9 \\ud83d\\ude00\","
	    "\"empty\":{},\"ea\":[]}";
	json_error_t	 jerr;
	json_t		*in, *out, *v;
	enum proto_err	 e;
	char		*s1, *s2;

	in = json_loads(doc, 0, &jerr);
	tap_ok(in != NULL, "sample document parses");
	out = through(in, &e);
	tap_is_int(e, PROTO_OK, "round trip succeeds");
	tap_ok(json_equal(in, out), "round trip is json_equal");
	s1 = json_dumps(in, JSON_COMPACT | JSON_SORT_KEYS);
	s2 = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
	tap_is_str(s2, s1, "round trip prints identically (1.0 stays real)");
	tap_ok(json_is_integer(json_object_get(out, "big")) &&
	    json_integer_value(json_object_get(out, "big")) == 9007199254740993LL,
	    "integer above 2^53 exact");
	free(s1);
	free(s2);
	json_decref(in);
	json_decref(out);

	v = deep(63);
	out = through(v, &e);
	tap_is_int(e, PROTO_OK, "63 nested arrays inside a message fit");
	json_decref(out);
	json_decref(v);
	v = deep(64);
	out = through(v, &e);
	tap_is_int(e, PROTO_E_DEPTH, "64 nested arrays inside a message refused");
	tap_ok(out == NULL, "nothing returned on error");
	json_decref(v);

	tap_is_int(from_bytes("\xcf\xff\xff\xff\xff\xff\xff\xff\xff", 9),
	    PROTO_E_RANGE, "uint64 above INT64_MAX refused");
	tap_is_int(from_bytes("\xc4\x01x", 3), PROTO_E_BADBYTE, "bin refused");
	tap_is_int(from_bytes("\x81\x01\xc0", 3), PROTO_E_KEY,
	    "non-string key refused");
	tap_is_int(from_bytes("\x82\xa1k\x01\xa1k\x02", 7), PROTO_E_DUPKEY,
	    "duplicate key refused");
	tap_is_int(from_bytes("\xa1\xff", 2), PROTO_E_UTF8,
	    "invalid UTF-8 refused");
	tap_is_int(from_bytes("\xcb\x7f\xf8\0\0\0\0\0\0", 9), PROTO_E_RANGE,
	    "NaN refused");
	return tap_done();
}
