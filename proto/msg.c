/*
 * msg.c: the message table (name, direction, fields) and the table-driven
 * typed readers and writers.  Adding a field means one struct member in
 * proto.h and one line here; decode, encode and free follow the table.
 */
#include <config.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "xmalloc.h"

enum fkind { F_STR, F_U64, F_I64, F_BOOL, F_REAL, F_STRV, F_JSON };

struct field {
	const char	*name;
	enum fkind	 kind;
	size_t		 off;
	int		 required;
};

struct msgdef {
	const char		*name;
	int			 dir;
	const struct field	*fields;
	size_t			 nfields;
};

#define REQ	1
#define OPT	0
#define FLD(st, m, k, r)	{ #m, k, offsetof(struct st, m), r }
#define NF(a)			(sizeof(a) / sizeof((a)[0]))

static const struct field hello_fields[] = {
	FLD(msg_hello, pid, F_U64, REQ),
	FLD(msg_hello, index, F_U64, REQ),
	FLD(msg_hello, role, F_STR, REQ),
	FLD(msg_hello, version, F_STR, REQ),
};
static const struct field assign_fields[] = {
	FLD(msg_assign, loop_id, F_STR, REQ),
	FLD(msg_assign, agent_id, F_STR, REQ),
	FLD(msg_assign, role, F_STR, REQ),
	FLD(msg_assign, prompt, F_STR, REQ),
	FLD(msg_assign, tool, F_STR, REQ),
	FLD(msg_assign, model, F_STR, OPT),
	FLD(msg_assign, command, F_STR, OPT),
	FLD(msg_assign, cwd, F_STR, OPT),
	FLD(msg_assign, log_path, F_STR, OPT),
	FLD(msg_assign, capsule, F_STR, OPT),
	FLD(msg_assign, timeout_ms, F_U64, REQ),
	FLD(msg_assign, idle_ms, F_U64, REQ),
	FLD(msg_assign, options, F_JSON, OPT),
};
static const struct field started_fields[] = {
	FLD(msg_started, tool_pid, F_U64, REQ),
	FLD(msg_started, argv, F_STRV, REQ),
	FLD(msg_started, cwd, F_STR, REQ),
	FLD(msg_started, log_path, F_STR, REQ),
	FLD(msg_started, session_id, F_STR, OPT),
};
static const struct field progress_fields[] = {
	FLD(msg_progress, kind, F_STR, REQ),
	FLD(msg_progress, text, F_STR, REQ),
	FLD(msg_progress, tokens_in, F_U64, REQ),
	FLD(msg_progress, tokens_out, F_U64, REQ),
	FLD(msg_progress, cost, F_REAL, REQ),
};
static const struct field input_fields[] = {
	FLD(msg_input, submission_id, F_U64, REQ),
	FLD(msg_input, message, F_STR, REQ),
	FLD(msg_input, interrupt, F_BOOL, REQ),
};
static const struct field input_ack_fields[] = {
	FLD(msg_input_ack, submission_id, F_U64, REQ),
	FLD(msg_input_ack, delivery, F_STR, REQ),
	FLD(msg_input_ack, error, F_STR, OPT),
};
static const struct field result_fields[] = {
	FLD(msg_result, status, F_STR, REQ),
	FLD(msg_result, action, F_STR, OPT),
	FLD(msg_result, summary, F_STR, OPT),
	FLD(msg_result, files_changed, F_STRV, REQ),
	FLD(msg_result, next_suggestion, F_STR, OPT),
	FLD(msg_result, loop_back_to, F_STR, OPT),
	FLD(msg_result, detailed_output, F_STR, OPT),
	FLD(msg_result, questions, F_JSON, OPT),
	FLD(msg_result, exit_code, F_I64, REQ),
	FLD(msg_result, signal, F_I64, REQ),
	FLD(msg_result, duration_ms, F_U64, REQ),
	FLD(msg_result, session_id, F_STR, OPT),
	FLD(msg_result, usage, F_JSON, OPT),
	FLD(msg_result, reason, F_STR, OPT),
	FLD(msg_result, stderr_tail, F_STR, OPT),
	FLD(msg_result, error_kind, F_STR, OPT),
	FLD(msg_result, files_source, F_STR, OPT),
	FLD(msg_result, turns, F_U64, OPT),
	FLD(msg_result, tool_pid, F_U64, OPT),
	FLD(msg_result, argv, F_STRV, OPT),
	FLD(msg_result, retry_after_ms, F_U64, OPT),
	FLD(msg_result, log_tail, F_STR, OPT),
	FLD(msg_result, files_claimed, F_STRV, OPT),
	FLD(msg_result, worktree, F_JSON, OPT),
};
static const struct field close_fields[] = {
	FLD(msg_close, grace_ms, F_U64, REQ),
	FLD(msg_close, reason, F_STR, OPT),
};
static const struct field bye_fields[] = {
	FLD(msg_bye, reason, F_STR, OPT),
};
static const struct field error_fields[] = {
	FLD(msg_error, code, F_STR, REQ),
	FLD(msg_error, message, F_STR, REQ),
};
static const struct field ping_fields[] = {
	FLD(msg_ping, seq, F_U64, REQ),
};
static const struct field perm_ask_fields[] = {
	FLD(msg_perm_ask, id, F_U64, REQ),
	FLD(msg_perm_ask, tool_name, F_STR, REQ),
	FLD(msg_perm_ask, input, F_JSON, OPT),
	FLD(msg_perm_ask, tool_use_id, F_STR, OPT),
};
static const struct field perm_reply_fields[] = {
	FLD(msg_perm_reply, id, F_U64, REQ),
	FLD(msg_perm_reply, allow, F_BOOL, REQ),
	FLD(msg_perm_reply, message, F_STR, OPT),
};
static const struct field call_fields[] = {
	FLD(msg_call, body, F_JSON, REQ),
};
static const struct field event_fields[] = {
	FLD(msg_event, seq, F_U64, REQ),
	FLD(msg_event, type, F_STR, REQ),
	FLD(msg_event, data, F_JSON, REQ),
};

#define TO_SUP	MSG_DIR_TO_SUPERVISOR
#define TO_WRK	MSG_DIR_TO_WORKER
#define DEF(n, d, f)	{ n, d, f, NF(f) }

static const struct msgdef msgdefs[MSG__MAX] = {
	[MSG_HELLO] =		DEF("HELLO", TO_SUP, hello_fields),
	[MSG_ASSIGN] =		DEF("ASSIGN", TO_WRK, assign_fields),
	[MSG_STARTED] =		DEF("STARTED", TO_SUP, started_fields),
	[MSG_PROGRESS] =	DEF("PROGRESS", TO_SUP, progress_fields),
	[MSG_INPUT] =		DEF("INPUT", TO_WRK, input_fields),
	[MSG_INPUT_ACK] =	DEF("INPUT_ACK", TO_SUP, input_ack_fields),
	[MSG_RESULT] =		DEF("RESULT", TO_SUP, result_fields),
	[MSG_CLOSE] =		DEF("CLOSE", TO_WRK, close_fields),
	[MSG_BYE] =		DEF("BYE", TO_SUP, bye_fields),
	[MSG_ERROR] =		DEF("ERROR", TO_SUP | TO_WRK, error_fields),
	[MSG_REQUEST] =		DEF("REQUEST", MSG_DIR_TO_SERVER, call_fields),
	[MSG_REPLY] =		DEF("REPLY", MSG_DIR_TO_CLIENT, call_fields),
	[MSG_EVENT] =		DEF("EVENT", MSG_DIR_TO_CLIENT, event_fields),
	[MSG_PING] =		DEF("PING", TO_WRK, ping_fields),
	[MSG_PONG] =		DEF("PONG", TO_SUP, ping_fields),
	[MSG_PERM_ASK] =	DEF("PERM_ASK", TO_SUP, perm_ask_fields),
	[MSG_PERM_REPLY] =	DEF("PERM_REPLY", TO_WRK, perm_reply_fields),
};

/* The table entry for a type, or NULL when the type is unknown. */
static const struct msgdef *
msg_def(int type)
{
	if (type <= MSG_NONE || type >= MSG__MAX)
		return NULL;
	return &msgdefs[type];
}

/* Name of a message type for logs ("?" when unknown). */
const char *
msg_name(int type)
{
	const struct msgdef	*d = msg_def(type);

	return d != NULL ? d->name : "?";
}

/* Which directions a type may travel in (0 when unknown). */
int
msg_dir(int type)
{
	const struct msgdef	*d = msg_def(type);

	return d != NULL ? d->dir : 0;
}

/* Append a copy of s. */
void
strv_push(struct strv *sv, const char *s)
{
	sv->v = xreallocarray(sv->v, sv->n + 1, sizeof *sv->v);
	sv->v[sv->n++] = xstrdup(s);
}

/* Free every string and the vector itself. */
void
strv_clear(struct strv *sv)
{
	size_t	i;

	for (i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = 0;
}

/* A zeroed message of the given type. */
void
msg_init(struct msg *m, enum msg_type type)
{
	memset(m, 0, sizeof *m);
	m->type = type;
}

/* Release everything the message owns; it can be reused after msg_init. */
void
msg_clear(struct msg *m)
{
	const struct msgdef	*d = msg_def(m->type);
	char			*base = (char *)&m->u;
	size_t			 i;

	for (i = 0; d != NULL && i < d->nfields; i++) {
		void *p = base + d->fields[i].off;

		switch (d->fields[i].kind) {
		case F_STR:
			free(*(char **)p);
			break;
		case F_STRV:
			strv_clear(p);
			break;
		case F_JSON:
			json_decref(*(json_t **)p);
			break;
		default:
			break;
		}
	}
	msg_init(m, m->type);
}

/* Copy a msgpack str (already validated text) into a C string. */
static char *
msg_str_dup(const msgpack_object *o)
{
	return xstrndup(o->via.str.ptr, o->via.str.size);
}

/* Read an array of strings into an strv. */
static enum proto_err
msg_get_strv(const msgpack_object *o, struct strv *sv)
{
	uint32_t	i;

	if (o->type != MSGPACK_OBJECT_ARRAY)
		return PROTO_E_FIELDTYPE;
	for (i = 0; i < o->via.array.size; i++)
		if (o->via.array.ptr[i].type != MSGPACK_OBJECT_STR)
			return PROTO_E_FIELDTYPE;
	sv->v = xcalloc(o->via.array.size, sizeof *sv->v);
	for (i = 0; i < o->via.array.size; i++)
		sv->v[sv->n++] = msg_str_dup(&o->via.array.ptr[i]);
	return PROTO_OK;
}

/* Store one field's value from a msgpack object, checking its type. */
static enum proto_err
msg_get_field(const struct field *f, const msgpack_object *o, void *p)
{
	/* nil stands for "absent" in optional text and JSON fields. */
	if (o->type == MSGPACK_OBJECT_NIL && !f->required &&
	    (f->kind == F_STR || f->kind == F_JSON))
		return PROTO_OK;

	switch (f->kind) {
	case F_STR:
		if (o->type != MSGPACK_OBJECT_STR)
			return PROTO_E_FIELDTYPE;
		*(char **)p = msg_str_dup(o);
		return PROTO_OK;
	case F_U64:
		if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
			return PROTO_E_RANGE;
		if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return PROTO_E_FIELDTYPE;
		*(uint64_t *)p = o->via.u64;
		return PROTO_OK;
	case F_I64:
		if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
			*(int64_t *)p = o->via.i64;
		else if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return PROTO_E_FIELDTYPE;
		else if (o->via.u64 > (uint64_t)INT64_MAX)
			return PROTO_E_RANGE;
		else
			*(int64_t *)p = (int64_t)o->via.u64;
		return PROTO_OK;
	case F_BOOL:
		if (o->type != MSGPACK_OBJECT_BOOLEAN)
			return PROTO_E_FIELDTYPE;
		*(int *)p = o->via.boolean ? 1 : 0;
		return PROTO_OK;
	case F_REAL:
		/* Other encoders pack 0.0 as integer 0; accept both. */
		if (o->type == MSGPACK_OBJECT_FLOAT32 ||
		    o->type == MSGPACK_OBJECT_FLOAT64)
			*(double *)p = o->via.f64;
		else if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
			*(double *)p = (double)o->via.u64;
		else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
			*(double *)p = (double)o->via.i64;
		else
			return PROTO_E_FIELDTYPE;
		return PROTO_OK;
	case F_STRV:
		return msg_get_strv(o, p);
	case F_JSON:
		return json_from_msgpack(o, (json_t **)p);
	}
	return PROTO_E_FIELDTYPE;
}

/* Match a key to a field by name; unknown keys are ignored (-1). */
static int
msg_find_field(const struct msgdef *d, const msgpack_object *k)
{
	size_t	i;

	for (i = 0; i < d->nfields; i++)
		if (strlen(d->fields[i].name) == k->via.str.size &&
		    memcmp(d->fields[i].name, k->via.str.ptr,
		    k->via.str.size) == 0)
			return (int)i;
	return -1;
}

/* Fill m from an unpacked map; m is cleared on failure. */
static enum proto_err
msg_from_map(const struct msgdef *d, const msgpack_object_map *map,
    struct msg *m)
{
	enum proto_err	e;
	uint32_t	seen = 0, i;
	size_t		j;
	int		idx;

	for (i = 0; i < map->size; i++) {
		idx = msg_find_field(d, &map->ptr[i].key);
		if (idx < 0)
			continue;
		if (seen & (1u << idx))
			return PROTO_E_DUPKEY;
		seen |= 1u << idx;
		e = msg_get_field(&d->fields[idx], &map->ptr[i].val,
		    (char *)&m->u + d->fields[idx].off);
		if (e != PROTO_OK)
			return e;
	}
	for (j = 0; j < d->nfields; j++)
		if (d->fields[j].required && !(seen & (1u << j)))
			return PROTO_E_MISSING;
	return PROTO_OK;
}

/*
 * Decode a frame body of the given type into m.  The walker runs first,
 * then the tree is built from the checked bytes (walk_unpack), so every
 * depth up to PROTO_MAX_DEPTH decodes and nothing deeper is allocated.
 */
enum proto_err
msg_decode(enum msg_type type, const uint8_t *body, size_t len,
    struct msg *m)
{
	const struct msgdef	*d = msg_def(type);
	msgpack_zone		 z;
	msgpack_object		 o;
	enum proto_err		 e;

	msg_init(m, type);
	if (d == NULL)
		return PROTO_E_TYPE;
	if (!msgpack_zone_init(&z, 4096))
		return PROTO_E_NOMEM;
	e = walk_unpack(body, len, &z, &o);
	if (e == PROTO_OK)
		e = o.type == MSGPACK_OBJECT_MAP ?
		    msg_from_map(d, &o.via.map, m) : PROTO_E_NOTMAP;
	msgpack_zone_destroy(&z);
	if (e != PROTO_OK)
		msg_clear(m);
	return e;
}

/* Is field f worth putting on the wire? Absent optional values are not. */
static int
msg_field_present(const struct field *f, const void *p)
{
	switch (f->kind) {
	case F_STR:
		return f->required || *(char *const *)p != NULL;
	case F_JSON:
		return *(json_t *const *)p != NULL;
	case F_STRV:
		return f->required || ((const struct strv *)p)->n > 0;
	default:
		return 1;
	}
}

/*
 * Pack one string, treating NULL as "".  Text that the receiving walker
 * would refuse is refused here, so a bad frame is never sent.
 */
static enum proto_err
msg_put_str(msgpack_packer *pk, const char *s)
{
	size_t	len = s != NULL ? strlen(s) : 0;

	if (s != NULL && !walk_utf8_valid((const uint8_t *)s, len))
		return PROTO_E_UTF8;
	if (msgpack_pack_str(pk, len) != 0 ||
	    msgpack_pack_str_body(pk, s != NULL ? s : "", len) != 0)
		return PROTO_E_NOMEM;
	return PROTO_OK;
}

/* Pack one field's value. */
static enum proto_err
msg_put_field(msgpack_packer *pk, const struct field *f, const void *p)
{
	const struct strv	*sv;
	enum proto_err		 e;
	size_t			 i;
	int			 rc = 0;

	switch (f->kind) {
	case F_STR:
		return msg_put_str(pk, *(char *const *)p);
	case F_U64:
		rc = msgpack_pack_uint64(pk, *(const uint64_t *)p);
		break;
	case F_I64:
		rc = msgpack_pack_int64(pk, *(const int64_t *)p);
		break;
	case F_BOOL:
		rc = *(const int *)p ? msgpack_pack_true(pk) :
		    msgpack_pack_false(pk);
		break;
	case F_REAL:
		rc = msgpack_pack_double(pk, *(const double *)p);
		break;
	case F_STRV:
		sv = p;
		if (msgpack_pack_array(pk, sv->n) != 0)
			return PROTO_E_NOMEM;
		for (i = 0; i < sv->n; i++)
			if ((e = msg_put_str(pk, sv->v[i])) != PROTO_OK)
				return e;
		return PROTO_OK;
	case F_JSON:
		return json_to_msgpack(pk, *(json_t *const *)p);
	}
	return rc == 0 ? PROTO_OK : PROTO_E_NOMEM;
}

/* Encode m's body (no header) into sb, which the caller owns. */
enum proto_err
msg_encode(const struct msg *m, msgpack_sbuffer *sb)
{
	const struct msgdef	*d = msg_def(m->type);
	const char		*base = (const char *)&m->u;
	msgpack_packer		 pk;
	enum proto_err		 e;
	size_t			 i, n = 0;

	if (d == NULL)
		return PROTO_E_TYPE;
	for (i = 0; i < d->nfields; i++)
		n += msg_field_present(&d->fields[i], base + d->fields[i].off);
	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	if (msgpack_pack_map(&pk, n) != 0)
		return PROTO_E_NOMEM;
	for (i = 0; i < d->nfields; i++) {
		const struct field *f = &d->fields[i];

		if (!msg_field_present(f, base + f->off))
			continue;
		if ((e = msg_put_str(&pk, f->name)) != PROTO_OK)
			return e;
		if ((e = msg_put_field(&pk, f, base + f->off)) != PROTO_OK)
			return e;
	}
	return PROTO_OK;
}
