/*
 * walk.c: the validation walker.  It reads a frame body as raw msgpack
 * before msgpack-c ever sees it, so that a 5-byte header claiming 2^32
 * array items, a 1000-deep nest or a non-UTF-8 string is refused without
 * allocating anything.  After it passes, walk_unpack builds the object
 * tree in O(body length): msgpack-c's own unpacker stops at 32 levels,
 * below the 64 the protocol allows.
 */
#include <config.h>

#include <string.h>

#include "proto.h"

struct walker {
	const uint8_t	*p;
	size_t		 left;
};

static enum proto_err	walk_obj(struct walker *, int, int);

/* Big-endian read of n (1, 2 or 4) bytes; caller checked the length. */
static uint32_t
walk_be(const uint8_t *p, int n)
{
	uint32_t	v = 0;
	int		i;

	for (i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

/* Consume n bytes of payload; fails when the body ends first. */
static enum proto_err
walk_skip(struct walker *w, size_t n)
{
	if (n > w->left)
		return PROTO_E_SHORT;
	w->p += n;
	w->left -= n;
	return PROTO_OK;
}

/* Read an n-byte length prefix that follows the type byte. */
static enum proto_err
walk_len(struct walker *w, int n, uint32_t *len)
{
	if ((size_t)n > w->left)
		return PROTO_E_SHORT;
	*len = walk_be(w->p, n);
	w->p += n;
	w->left -= n;
	return PROTO_OK;
}

/*
 * Strict UTF-8: no overlong forms, no surrogates, nothing past U+10FFFF.
 * NUL is refused too: every string we carry becomes a C string.
 */
int
walk_utf8_valid(const uint8_t *s, size_t n)
{
	size_t		i = 0, k, need;
	uint32_t	cp, min;

	while (i < n) {
		uint8_t c = s[i];

		if (c == 0)
			return 0;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			need = 1; cp = c & 0x1f; min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			need = 2; cp = c & 0x0f; min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			need = 3; cp = c & 0x07; min = 0x10000;
		} else
			return 0;
		if (need > n - i - 1)
			return 0;
		for (k = 1; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += need + 1;
	}
	return 1;
}

/* A string payload of len bytes: present and valid text. */
static enum proto_err
walk_str(struct walker *w, uint32_t len)
{
	if (len > w->left)
		return PROTO_E_SHORT;
	if (!walk_utf8_valid(w->p, len))
		return PROTO_E_UTF8;
	return walk_skip(w, len);
}

/*
 * A container of n items (maps count keys and values).  The count is
 * checked against the bytes left before anything else: every item needs
 * at least one byte.
 */
static enum proto_err
walk_items(struct walker *w, uint32_t n, int is_map, int depth)
{
	enum proto_err	e;
	uint32_t	i;

	if (depth > PROTO_MAX_DEPTH)
		return PROTO_E_DEPTH;
	if ((is_map && n > w->left / 2) || (!is_map && n > w->left))
		return PROTO_E_COUNT;
	for (i = 0; i < n; i++) {
		if (is_map && (e = walk_obj(w, depth + 1, 1)) != PROTO_OK)
			return e;
		if ((e = walk_obj(w, depth + 1, 0)) != PROTO_OK)
			return e;
	}
	return PROTO_OK;
}

/* Walk one object.  is_key: it stands in key position and must be a str. */
static enum proto_err
walk_obj(struct walker *w, int depth, int is_key)
{
	enum proto_err	e;
	uint32_t	len;
	uint8_t		b;

	if (w->left == 0)
		return PROTO_E_SHORT;
	b = *w->p++;
	w->left--;

	if (b >= 0xa0 && b <= 0xbf)
		return walk_str(w, b & 0x1f);
	if (b >= 0xd9 && b <= 0xdb) {
		if ((e = walk_len(w, 1 << (b - 0xd9), &len)) != PROTO_OK)
			return e;
		return walk_str(w, len);
	}
	if (is_key)
		return PROTO_E_KEY;

	if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
		return PROTO_OK;
	if (b >= 0x80 && b <= 0x8f)
		return walk_items(w, b & 0x0f, 1, depth);
	if (b >= 0x90 && b <= 0x9f)
		return walk_items(w, b & 0x0f, 0, depth);
	switch (b) {
	case 0xca:
		return walk_skip(w, 4);
	case 0xcb:
		return walk_skip(w, 8);
	case 0xcc: case 0xcd: case 0xce: case 0xcf:
		return walk_skip(w, (size_t)1 << (b - 0xcc));
	case 0xd0: case 0xd1: case 0xd2: case 0xd3:
		return walk_skip(w, (size_t)1 << (b - 0xd0));
	case 0xdc: case 0xdd:
		if ((e = walk_len(w, b == 0xdc ? 2 : 4, &len)) != PROTO_OK)
			return e;
		return walk_items(w, len, 0, depth);
	case 0xde: case 0xdf:
		if ((e = walk_len(w, b == 0xde ? 2 : 4, &len)) != PROTO_OK)
			return e;
		return walk_items(w, len, 1, depth);
	default:
		/* 0xc1 (never used), bin, ext, fixext: we never send them. */
		return PROTO_E_BADBYTE;
	}
}

/*
 * Validate a whole frame body: exactly one map with string keys, sane
 * counts, bounded depth, valid text, and nothing after it.
 */
enum proto_err
walk_body(const uint8_t *body, size_t len)
{
	struct walker	w = { body, len };
	enum proto_err	e;
	uint8_t		b;

	if (len == 0)
		return PROTO_E_EMPTY;
	b = body[0];
	if (!((b >= 0x80 && b <= 0x8f) || b == 0xde || b == 0xdf))
		return PROTO_E_NOTMAP;
	if ((e = walk_obj(&w, 1, 0)) != PROTO_OK)
		return e;
	if (w.left != 0)
		return PROTO_E_TRAILING;
	return PROTO_OK;
}

/* --- the unpacker of validated bodies */

struct builder {
	const uint8_t	*p;
	msgpack_zone	*z;
};

static enum proto_err	walk_build(struct builder *, msgpack_object *);

/* Big-endian read of n (1, 2, 4 or 8) bytes, consumed. */
static uint64_t
walk_take(struct builder *b, int n)
{
	uint64_t	v = 0;
	int		i;

	for (i = 0; i < n; i++)
		v = (v << 8) | b->p[i];
	b->p += n;
	return v;
}

/* A signed integer of n bytes, typed as msgpack-c types it. */
static void
walk_build_int(struct builder *b, int n, msgpack_object *o)
{
	uint64_t	u = walk_take(b, n);
	int64_t		v;

	/* Sign-extend from n bytes without relying on implementation casts. */
	if (n < 8 && (u >> (n * 8 - 1)) != 0)
		u |= ~(uint64_t)0 << (n * 8);
	v = u <= (uint64_t)INT64_MAX ? (int64_t)u :
	    -(int64_t)(~u) - 1;
	if (v >= 0) {
		o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
		o->via.u64 = (uint64_t)v;
	} else {
		o->type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
		o->via.i64 = v;
	}
}

/* A container of n items; maps hold n key/value pairs. */
static enum proto_err
walk_build_items(struct builder *b, uint32_t n, int is_map, msgpack_object *o)
{
	enum proto_err	e;
	uint32_t	i;

	o->type = is_map ? MSGPACK_OBJECT_MAP : MSGPACK_OBJECT_ARRAY;
	if (is_map) {
		o->via.map.size = n;
		o->via.map.ptr = NULL;
	} else {
		o->via.array.size = n;
		o->via.array.ptr = NULL;
	}
	if (n == 0)
		return PROTO_OK;
	if (is_map) {
		o->via.map.ptr = msgpack_zone_malloc(b->z,
		    (size_t)n * sizeof *o->via.map.ptr);
		if (o->via.map.ptr == NULL)
			return PROTO_E_NOMEM;
	} else {
		o->via.array.ptr = msgpack_zone_malloc(b->z,
		    (size_t)n * sizeof *o->via.array.ptr);
		if (o->via.array.ptr == NULL)
			return PROTO_E_NOMEM;
	}
	for (i = 0; i < n; i++) {
		e = is_map ? walk_build(b, &o->via.map.ptr[i].key) :
		    walk_build(b, &o->via.array.ptr[i]);
		if (e == PROTO_OK && is_map)
			e = walk_build(b, &o->via.map.ptr[i].val);
		if (e != PROTO_OK)
			return e;
	}
	return PROTO_OK;
}

/* One object of a body walk_body accepted: no bounds left to check. */
static enum proto_err
walk_build(struct builder *b, msgpack_object *o)
{
	uint32_t	len, bits;
	uint64_t	bits64;
	float		f;
	uint8_t		c = *b->p++;

	memset(o, 0, sizeof *o);
	if (c <= 0x7f) {
		o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
		o->via.u64 = c;
		return PROTO_OK;
	}
	if (c >= 0xe0) {
		o->type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
		o->via.i64 = (int64_t)c - 256;
		return PROTO_OK;
	}
	if (c <= 0x8f)
		return walk_build_items(b, c & 0x0f, 1, o);
	if (c <= 0x9f)
		return walk_build_items(b, c & 0x0f, 0, o);
	if (c <= 0xbf || (c >= 0xd9 && c <= 0xdb)) {
		len = c <= 0xbf ? (uint32_t)(c & 0x1f) :
		    (uint32_t)walk_take(b, 1 << (c - 0xd9));
		o->type = MSGPACK_OBJECT_STR;
		o->via.str.ptr = (const char *)b->p;
		o->via.str.size = len;
		b->p += len;
		return PROTO_OK;
	}
	switch (c) {
	case 0xc0:
		o->type = MSGPACK_OBJECT_NIL;
		return PROTO_OK;
	case 0xc2: case 0xc3:
		o->type = MSGPACK_OBJECT_BOOLEAN;
		o->via.boolean = c == 0xc3;
		return PROTO_OK;
	case 0xca:
		bits = (uint32_t)walk_take(b, 4);
		memcpy(&f, &bits, sizeof f);
		o->type = MSGPACK_OBJECT_FLOAT32;
		o->via.f64 = f;
		return PROTO_OK;
	case 0xcb:
		bits64 = walk_take(b, 8);
		memcpy(&o->via.f64, &bits64, sizeof o->via.f64);
		o->type = MSGPACK_OBJECT_FLOAT64;
		return PROTO_OK;
	case 0xcc: case 0xcd: case 0xce: case 0xcf:
		o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
		o->via.u64 = walk_take(b, 1 << (c - 0xcc));
		return PROTO_OK;
	case 0xd0: case 0xd1: case 0xd2: case 0xd3:
		walk_build_int(b, 1 << (c - 0xd0), o);
		return PROTO_OK;
	case 0xdc: case 0xdd:
		len = (uint32_t)walk_take(b, c == 0xdc ? 2 : 4);
		return walk_build_items(b, len, 0, o);
	case 0xde: case 0xdf:
		len = (uint32_t)walk_take(b, c == 0xde ? 2 : 4);
		return walk_build_items(b, len, 1, o);
	default:
		/* walk_body refused every other byte. */
		return PROTO_E_BADBYTE;
	}
}

/*
 * Validate a body and build its object tree in z (strings point into
 * body, which must outlive *out).  Any depth walk_body accepts, up to
 * PROTO_MAX_DEPTH, is built; deeper is PROTO_E_DEPTH from the walker.
 */
enum proto_err
walk_unpack(const uint8_t *body, size_t len, msgpack_zone *z,
    msgpack_object *out)
{
	struct builder	b = { body, z };
	enum proto_err	e;

	if ((e = walk_body(body, len)) != PROTO_OK)
		return e;
	return walk_build(&b, out);
}
