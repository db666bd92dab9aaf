/*
 * json.c: lossless conversion between jansson values and msgpack for the
 * types the state file uses (string, integer, real, bool, null, array,
 * object).  Integers stay integers and reals stay reals both ways.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "proto.h"
#include "xmalloc.h"

static enum proto_err	json_from_obj(const msgpack_object *, int, json_t **);
static enum proto_err	json_put_value(msgpack_packer *, const json_t *, int);

/* Build a jansson array from a msgpack array. */
static enum proto_err
json_from_array(const msgpack_object_array *a, int depth, json_t **out)
{
	enum proto_err	 e;
	json_t		*arr, *v;
	uint32_t	 i;

	if ((arr = json_array()) == NULL)
		return PROTO_E_NOMEM;
	for (i = 0; i < a->size; i++) {
		if ((e = json_from_obj(&a->ptr[i], depth + 1, &v)) != PROTO_OK) {
			json_decref(arr);
			return e;
		}
		if (json_array_append_new(arr, v) != 0) {
			json_decref(arr);
			return PROTO_E_NOMEM;
		}
	}
	*out = arr;
	return PROTO_OK;
}

/* Build a jansson object; keys must be text and appear once. */
static enum proto_err
json_from_map(const msgpack_object_map *m, int depth, json_t **out)
{
	enum proto_err	 e;
	json_t		*obj, *v;
	char		*key;
	uint32_t	 i;

	if ((obj = json_object()) == NULL)
		return PROTO_E_NOMEM;
	for (i = 0; i < m->size; i++) {
		const msgpack_object *k = &m->ptr[i].key;

		if (k->type != MSGPACK_OBJECT_STR) {
			e = PROTO_E_KEY;
			goto fail;
		}
		if (!walk_utf8_valid((const uint8_t *)k->via.str.ptr,
		    k->via.str.size)) {
			e = PROTO_E_UTF8;
			goto fail;
		}
		key = xstrndup(k->via.str.ptr, k->via.str.size);
		if (json_object_get(obj, key) != NULL) {
			free(key);
			e = PROTO_E_DUPKEY;
			goto fail;
		}
		e = json_from_obj(&m->ptr[i].val, depth + 1, &v);
		if (e == PROTO_OK && json_object_set_new(obj, key, v) != 0)
			e = PROTO_E_NOMEM;
		free(key);
		if (e != PROTO_OK)
			goto fail;
	}
	*out = obj;
	return PROTO_OK;
fail:
	json_decref(obj);
	return e;
}

/*
 * Convert one msgpack object.  Depth counts containers only, as the walker
 * does, and guards callers that skipped the walker.
 */
static enum proto_err
json_from_obj(const msgpack_object *o, int depth, json_t **out)
{
	json_t	*v = NULL;

	if ((o->type == MSGPACK_OBJECT_ARRAY || o->type == MSGPACK_OBJECT_MAP) &&
	    depth > PROTO_MAX_DEPTH)
		return PROTO_E_DEPTH;
	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
		v = json_null();
		break;
	case MSGPACK_OBJECT_BOOLEAN:
		v = json_boolean(o->via.boolean);
		break;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		if (o->via.u64 > (uint64_t)INT64_MAX)
			return PROTO_E_RANGE;
		v = json_integer((json_int_t)o->via.u64);
		break;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		v = json_integer((json_int_t)o->via.i64);
		break;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		if (!isfinite(o->via.f64))
			return PROTO_E_RANGE;
		v = json_real(o->via.f64);
		break;
	case MSGPACK_OBJECT_STR:
		if (!walk_utf8_valid((const uint8_t *)o->via.str.ptr,
		    o->via.str.size))
			return PROTO_E_UTF8;
		v = json_stringn(o->via.str.ptr, o->via.str.size);
		break;
	case MSGPACK_OBJECT_ARRAY:
		return json_from_array(&o->via.array, depth, out);
	case MSGPACK_OBJECT_MAP:
		return json_from_map(&o->via.map, depth, out);
	default:
		return PROTO_E_BADBYTE;
	}
	if (v == NULL)
		return PROTO_E_NOMEM;
	*out = v;
	return PROTO_OK;
}

/*
 * Public entry: a new reference in *out on success.  The object counts as
 * one level below the message map it came from.
 */
enum proto_err
json_from_msgpack(const msgpack_object *o, json_t **out)
{
	*out = NULL;
	return json_from_obj(o, 2, out);
}

/* Pack one string as msgpack str. */
static int
json_put_str(msgpack_packer *pk, const char *s, size_t len)
{
	if (msgpack_pack_str(pk, len) != 0)
		return -1;
	return msgpack_pack_str_body(pk, s, len);
}

/* Pack an object's members; the order is jansson's iteration order. */
static enum proto_err
json_put_object(msgpack_packer *pk, const json_t *j, int depth)
{
	enum proto_err	 e;
	const char	*key;
	json_t		*v;

	if (msgpack_pack_map(pk, json_object_size(j)) != 0)
		return PROTO_E_NOMEM;
	json_object_foreach((json_t *)j, key, v) {
		if (json_put_str(pk, key, strlen(key)) != 0)
			return PROTO_E_NOMEM;
		if ((e = json_put_value(pk, v, depth + 1)) != PROTO_OK)
			return e;
	}
	return PROTO_OK;
}

/* Pack one value, refusing what the receiving walker would refuse. */
static enum proto_err
json_put_value(msgpack_packer *pk, const json_t *j, int depth)
{
	enum proto_err	e;
	size_t		i, len;
	const char	*s;
	int		rc = 0;

	if ((json_is_object(j) || json_is_array(j)) && depth > PROTO_MAX_DEPTH)
		return PROTO_E_DEPTH;
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return json_put_object(pk, j, depth);
	case JSON_ARRAY:
		if (msgpack_pack_array(pk, json_array_size(j)) != 0)
			return PROTO_E_NOMEM;
		for (i = 0; i < json_array_size(j); i++)
			if ((e = json_put_value(pk, json_array_get(j, i),
			    depth + 1)) != PROTO_OK)
				return e;
		return PROTO_OK;
	case JSON_STRING:
		s = json_string_value(j);
		len = json_string_length(j);
		if (!walk_utf8_valid((const uint8_t *)s, len))
			return PROTO_E_UTF8;
		rc = json_put_str(pk, s, len);
		break;
	case JSON_INTEGER:
		rc = msgpack_pack_int64(pk, json_integer_value(j));
		break;
	case JSON_REAL:
		rc = msgpack_pack_double(pk, json_real_value(j));
		break;
	case JSON_TRUE:
		rc = msgpack_pack_true(pk);
		break;
	case JSON_FALSE:
		rc = msgpack_pack_false(pk);
		break;
	case JSON_NULL:
		rc = msgpack_pack_nil(pk);
		break;
	}
	return rc == 0 ? PROTO_OK : PROTO_E_NOMEM;
}

/* Public entry: pack j as it would sit one level inside a message map. */
enum proto_err
json_to_msgpack(msgpack_packer *pk, const json_t *j)
{
	return json_put_value(pk, j, 2);
}
