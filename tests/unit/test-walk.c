/*
 * test-walk.c: the validation walker on hand-made bodies, one case per
 * rule, the depth limit at exactly 64 and 65 levels, and the types
 * walk_unpack gives scalars.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "tap.h"

#define B(s)	(const uint8_t *)(s), sizeof(s) - 1

struct wcase {
	const char	*name;
	const uint8_t	*body;
	size_t		 len;
	enum proto_err	 want;
};

static const struct wcase cases[] = {
	{ "empty map", B("\x80"), PROTO_OK },
	{ "map of every scalar", B("\x87\xa1" "a\xc0\xa1" "b\xc3\xa1" "c\xcb"
	    "\x3f\xf0\0\0\0\0\0\0\xa1" "d\xcf\xff\xff\xff\xff\xff\xff\xff\xff"
	    "\xa1" "e\xd3\x80\0\0\0\0\0\0\0\xa1" "f\xe0\xa1" "g\xca\0\0\0\0"),
	    PROTO_OK },
	{ "map16 and str8 key", B("\xde\x00\x01\xd9\x01" "k\x01"), PROTO_OK },
	{ "zero length", (const uint8_t *)"", 0, PROTO_E_EMPTY },
	{ "array at top", B("\x91\xc0"), PROTO_E_NOTMAP },
	{ "string at top", B("\xa1x"), PROTO_E_NOTMAP },
	{ "map32 claiming 2^32-1 pairs", B("\xdf\xff\xff\xff\xff"), PROTO_E_COUNT },
	{ "array32 claiming 2^32-1 items", B("\x81\xa1" "a\xdd\xff\xff\xff\xff"),
	    PROTO_E_COUNT },
	{ "array16 over the bytes left", B("\x81\xa1" "a\xdc\x00\x05\xc0\xc0"),
	    PROTO_E_COUNT },
	{ "str32 longer than the body", B("\x81\xa1" "a\xdb\x7f\xff\xff\xff" "ab"),
	    PROTO_E_SHORT },
	{ "map missing its value", B("\x81\xa1" "a"), PROTO_E_SHORT },
	{ "uint64 cut short", B("\x81\xa1" "a\xcf\x00\x01"), PROTO_E_SHORT },
	{ "length prefix cut short", B("\x81\xa1" "a\xda\x00"), PROTO_E_SHORT },
	{ "bytes after the map", B("\x80\xc0"), PROTO_E_TRAILING },
	{ "bin8", B("\x81\xa1" "a\xc4\x01x"), PROTO_E_BADBYTE },
	{ "ext8", B("\x81\xa1" "a\xc7\x01\x01x"), PROTO_E_BADBYTE },
	{ "fixext1", B("\x81\xa1" "a\xd4\x01x"), PROTO_E_BADBYTE },
	{ "never-used 0xc1", B("\x81\xa1" "a\xc1"), PROTO_E_BADBYTE },
	{ "integer key", B("\x81\x01\x02"), PROTO_E_KEY },
	{ "nested integer key", B("\x81\xa1" "a\x81\xc0\xc0"), PROTO_E_KEY },
	{ "bad continuation byte", B("\x81\xa1" "a\xa2\xc3\x28"), PROTO_E_UTF8 },
	{ "overlong slash", B("\x81\xa1" "a\xa2\xc0\xaf"), PROTO_E_UTF8 },
	{ "surrogate half", B("\x81\xa1" "a\xa3\xed\xa0\x80"), PROTO_E_UTF8 },
	{ "past U+10FFFF", B("\x81\xa1" "a\xa4\xf4\x90\x80\x80"), PROTO_E_UTF8 },
	{ "sequence cut by string end", B("\x81\xa1" "a\xa2\xe2\x82"), PROTO_E_UTF8 },
	{ "invalid key text", B("\x81\xa1\xff\xc0"), PROTO_E_UTF8 },
	{ "NUL in text", B("\x81\xa1" "a\xa1\x00"), PROTO_E_UTF8 },
	{ "valid 4-byte text", B("\x81\xa1" "a\xa4\xf0\x9f\x98\x80"), PROTO_OK },
};

/* Build a body of a map holding `levels` nested single-item arrays. */
static uint8_t *
nested(int levels, size_t *len)
{
	uint8_t	*b = malloc((size_t)levels + 8);
	size_t	 n = 0;
	int	 i;

	b[n++] = 0x81;
	b[n++] = 0xa1;
	b[n++] = 'a';
	for (i = 0; i < levels; i++)
		b[n++] = 0x91;
	b[n++] = 0xc0;
	*len = n;
	return b;
}

/*
 * walk_unpack types scalars as msgpack-c does: the typed readers and
 * json.c depend on POSITIVE/NEGATIVE_INTEGER and FLOAT32/64.
 */
static void
check_unpack(void)
{
	static const uint8_t body[] = "\x88\xa1" "a\xd0\xfe\xa1" "b\xd1\x00\x05"
	    "\xa1" "c\xd3\x80\0\0\0\0\0\0\0\xa1" "d\xcf\xff\xff\xff\xff\xff"
	    "\xff\xff\xff\xa1" "e\xca\x3f\xc0\0\0\xa1" "f\xf0\xa1" "g\xc2"
	    "\xa1" "h\xda\x00\x02hi";
	msgpack_object_kv	*kv;
	msgpack_zone		 z;
	msgpack_object		 o;

	msgpack_zone_init(&z, 256);
	tap_is_int(walk_unpack(body, sizeof body - 1, &z, &o), PROTO_OK,
	    "scalars unpack");
	kv = o.via.map.ptr;
	tap_ok(o.type == MSGPACK_OBJECT_MAP && o.via.map.size == 8,
	    "a map of 8");
	tap_ok(kv[0].val.type == MSGPACK_OBJECT_NEGATIVE_INTEGER &&
	    kv[0].val.via.i64 == -2, "int8 -2 is negative");
	tap_ok(kv[1].val.type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
	    kv[1].val.via.u64 == 5, "int16 5 is positive");
	tap_ok(kv[2].val.type == MSGPACK_OBJECT_NEGATIVE_INTEGER &&
	    kv[2].val.via.i64 == INT64_MIN, "int64 minimum");
	tap_ok(kv[3].val.type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
	    kv[3].val.via.u64 == UINT64_MAX, "uint64 maximum");
	tap_ok(kv[4].val.type == MSGPACK_OBJECT_FLOAT32 &&
	    kv[4].val.via.f64 == 1.5, "float32 1.5");
	tap_ok(kv[5].val.type == MSGPACK_OBJECT_NEGATIVE_INTEGER &&
	    kv[5].val.via.i64 == -16, "negative fixint");
	tap_ok(kv[6].val.type == MSGPACK_OBJECT_BOOLEAN &&
	    !kv[6].val.via.boolean, "false");
	tap_ok(kv[7].key.type == MSGPACK_OBJECT_STR &&
	    kv[7].val.type == MSGPACK_OBJECT_STR && kv[7].val.via.str.size ==
	    2 && memcmp(kv[7].val.via.str.ptr, "hi", 2) == 0, "str16");
	tap_is_int(walk_unpack((const uint8_t *)"\x91\xc0", 2, &z, &o),
	    PROTO_E_NOTMAP, "unpack validates first");
	msgpack_zone_destroy(&z);
}

int
main(void)
{
	uint8_t	*b;
	size_t	 i, len;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		tap_is_int(walk_body(cases[i].body, cases[i].len), cases[i].want,
		    "%s -> %s", cases[i].name, proto_errname(cases[i].want));

	/* The top map is level 1, so 63 arrays inside it make 64 levels. */
	b = nested(63, &len);
	tap_is_int(walk_body(b, len), PROTO_OK, "64 levels accepted");
	free(b);
	b = nested(64, &len);
	tap_is_int(walk_body(b, len), PROTO_E_DEPTH, "65 levels refused");
	free(b);
	b = nested(100000, &len);
	tap_is_int(walk_body(b, len), PROTO_E_DEPTH, "100000 levels refused");
	free(b);
	check_unpack();
	return tap_done();
}
