/*
 * test-msg.c: every message type survives encode -> decode -> encode
 * unchanged, every typed-reader failure is reported with its code, and
 * bodies decode at every depth ccw-proto(7) allows (64) and no deeper.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "samples.h"
#include "tap.h"

/* Encode, decode, re-encode one sample; both encodings must be equal. */
static void
roundtrip(enum msg_type t)
{
	msgpack_sbuffer	a, b;
	struct msg	m, d;
	enum proto_err	e;

	sample_msg(t, &m);
	msgpack_sbuffer_init(&a);
	msgpack_sbuffer_init(&b);
	tap_is_int(msg_encode(&m, &a), PROTO_OK, "%s encodes", msg_name(t));
	e = msg_decode(t, (uint8_t *)a.data, a.size, &d);
	tap_is_int(e, PROTO_OK, "%s decodes", msg_name(t));
	tap_is_int(msg_encode(&d, &b), PROTO_OK, "%s re-encodes", msg_name(t));
	tap_ok(a.size == b.size && memcmp(a.data, b.data, a.size) == 0,
	    "%s round trip is byte-identical (%zu bytes)", msg_name(t), a.size);
	msg_clear(&m);
	msg_clear(&d);
	msgpack_sbuffer_destroy(&a);
	msgpack_sbuffer_destroy(&b);
}

/* Field values that the byte comparison alone would not name. */
static void
check_values(void)
{
	msgpack_sbuffer	sb;
	struct msg	m, d;

	sample_msg(MSG_RESULT, &m);
	msgpack_sbuffer_init(&sb);
	msg_encode(&m, &sb);
	msg_decode(MSG_RESULT, (uint8_t *)sb.data, sb.size, &d);
	tap_is_str(d.u.result.status, "success", "result status");
	tap_is_int((long long)d.u.result.files_changed.n, 2, "files_changed count");
	tap_is_str(d.u.result.files_changed.v[1], "src/b.c", "files_changed[1]");
	tap_is_int(d.u.result.exit_code, -1, "negative exit code kept");
	tap_is_int(d.u.result.signal, 9, "signal kept");
	tap_ok(json_equal(d.u.result.usage, m.u.result.usage), "usage JSON equal");
	tap_ok(json_is_real(json_object_get(d.u.result.usage, "cost_usd")),
	    "real stays real");
	tap_ok(json_is_integer(json_object_get(d.u.result.usage, "input_tokens")),
	    "integer stays integer");
	msg_clear(&m);
	msg_clear(&d);
	msgpack_sbuffer_destroy(&sb);

	sample_msg(MSG_ASSIGN, &m);
	msgpack_sbuffer_init(&sb);
	msg_encode(&m, &sb);
	msg_decode(MSG_ASSIGN, (uint8_t *)sb.data, sb.size, &d);
	tap_is_str(d.u.assign.prompt, m.u.assign.prompt, "UTF-8 prompt kept");
	tap_ok(json_equal(d.u.assign.options, m.u.assign.options),
	    "options JSON equal");
	msg_clear(&m);
	msg_clear(&d);
	msgpack_sbuffer_destroy(&sb);
}

/* Optional fields left NULL are not sent and come back NULL. */
/* RESULT's later fields round-trip, and a RESULT without them decodes. */
static void
check_result_fields(void)
{
	msgpack_sbuffer	sb;
	msgpack_packer	pk;
	struct msg	m, d;

	msg_init(&m, MSG_RESULT);
	m.u.result.status = strdup("failed");
	m.u.result.error_kind = strdup("auth");
	m.u.result.files_source = strdup("git");
	m.u.result.turns = 3;
	m.u.result.tool_pid = 4242;
	strv_push(&m.u.result.argv, "codex");
	strv_push(&m.u.result.argv, "resume");
	strv_push(&m.u.result.files_claimed, "add.sh");
	msgpack_sbuffer_init(&sb);
	tap_is_int(msg_encode(&m, &sb), PROTO_OK, "RESULT with turns encodes");
	tap_is_int(msg_decode(MSG_RESULT, (uint8_t *)sb.data, sb.size, &d),
	    PROTO_OK, "RESULT with turns decodes");
	tap_ok(d.u.result.error_kind != NULL && d.u.result.files_source !=
	    NULL && strcmp(d.u.result.error_kind, "auth") == 0 &&
	    strcmp(d.u.result.files_source, "git") == 0 &&
	    d.u.result.turns == 3 && d.u.result.tool_pid == 4242 &&
	    d.u.result.argv.n == 2 && strcmp(d.u.result.argv.v[1],
	    "resume") == 0, "error_kind, files_source, turns, tool_pid, argv");
	tap_ok(d.u.result.files_claimed.n == 1 && d.u.result.files_changed.n ==
	    0 && strcmp(d.u.result.files_claimed.v[0], "add.sh") == 0,
	    "files_claimed round-trips apart from files_changed");
	msg_clear(&m);
	msg_clear(&d);
	msgpack_sbuffer_destroy(&sb);

	/* What a worker from before these fields sends. */
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 5);
	msgpack_pack_str_with_body(&pk, "status", 6);
	msgpack_pack_str_with_body(&pk, "success", 7);
	msgpack_pack_str_with_body(&pk, "files_changed", 13);
	msgpack_pack_array(&pk, 0);
	msgpack_pack_str_with_body(&pk, "exit_code", 9);
	msgpack_pack_int64(&pk, 0);
	msgpack_pack_str_with_body(&pk, "signal", 6);
	msgpack_pack_int64(&pk, 0);
	msgpack_pack_str_with_body(&pk, "duration_ms", 11);
	msgpack_pack_uint64(&pk, 5);
	tap_is_int(msg_decode(MSG_RESULT, (uint8_t *)sb.data, sb.size, &d),
	    PROTO_OK, "an older worker's RESULT decodes");
	tap_ok(d.u.result.error_kind == NULL && d.u.result.files_source ==
	    NULL && d.u.result.turns == 0 && d.u.result.argv.n == 0 &&
	    d.u.result.files_claimed.n == 0,
	    "... with the newer fields absent");
	msg_clear(&d);
	msgpack_sbuffer_destroy(&sb);
}

static void
check_optional(void)
{
	msgpack_sbuffer	sb;
	struct msg	m, d;

	msg_init(&m, MSG_RESULT);
	m.u.result.status = strdup("unknown");
	msgpack_sbuffer_init(&sb);
	tap_is_int(msg_encode(&m, &sb), PROTO_OK, "minimal RESULT encodes");
	tap_is_int(msg_decode(MSG_RESULT, (uint8_t *)sb.data, sb.size, &d),
	    PROTO_OK, "minimal RESULT decodes");
	tap_ok(d.u.result.summary == NULL && d.u.result.usage == NULL &&
	    d.u.result.files_changed.n == 0, "absent fields stay absent");
	msg_clear(&m);
	msg_clear(&d);
	msgpack_sbuffer_destroy(&sb);

	msg_init(&m, MSG_BYE);
	m.u.bye.reason = strdup("bad \xff text");
	msgpack_sbuffer_init(&sb);
	tap_is_int(msg_encode(&m, &sb), PROTO_E_UTF8,
	    "encoder refuses invalid UTF-8");
	msg_clear(&m);
	msgpack_sbuffer_destroy(&sb);
}

/* Decode a hand-packed BYE/CLOSE/INPUT body and compare the error. */
static void
expect(enum msg_type t, msgpack_sbuffer *sb, enum proto_err want,
    const char *what)
{
	struct msg	d;

	tap_is_int(msg_decode(t, (uint8_t *)sb->data, sb->size, &d), want,
	    "%s -> %s", what, proto_errname(want));
	msg_clear(&d);
	msgpack_sbuffer_clear(sb);
}

/* Pack a str key. */
static void
key(msgpack_packer *pk, const char *k)
{
	msgpack_pack_str(pk, strlen(k));
	msgpack_pack_str_body(pk, k, strlen(k));
}

/* Typed-reader failures, each with its own code. */
static void
check_errors(void)
{
	msgpack_sbuffer	sb;
	msgpack_packer	pk;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);

	msgpack_pack_map(&pk, 1);
	key(&pk, "reason");
	msgpack_pack_int(&pk, 42);
	expect(MSG_BYE, &sb, PROTO_E_FIELDTYPE, "int where text is required");

	msgpack_pack_map(&pk, 1);
	key(&pk, "reason");
	msgpack_pack_nil(&pk);
	expect(MSG_BYE, &sb, PROTO_OK, "nil for an optional string");

	msgpack_pack_map(&pk, 1);
	key(&pk, "grace_ms");
	msgpack_pack_int(&pk, -5);
	expect(MSG_CLOSE, &sb, PROTO_E_RANGE, "negative unsigned");

	msgpack_pack_map(&pk, 1);
	key(&pk, "reason");
	msgpack_pack_nil(&pk);
	expect(MSG_CLOSE, &sb, PROTO_E_MISSING, "missing grace_ms");

	msgpack_pack_map(&pk, 2);
	key(&pk, "grace_ms");
	msgpack_pack_uint64(&pk, 1);
	key(&pk, "grace_ms");
	msgpack_pack_uint64(&pk, 2);
	expect(MSG_CLOSE, &sb, PROTO_E_DUPKEY, "duplicate key");

	msgpack_pack_map(&pk, 2);
	key(&pk, "grace_ms");
	msgpack_pack_uint64(&pk, 1);
	key(&pk, "future_field");
	msgpack_pack_array(&pk, 0);
	expect(MSG_CLOSE, &sb, PROTO_OK, "unknown key ignored");

	msgpack_pack_map(&pk, 3);
	key(&pk, "submission_id");
	msgpack_pack_uint64(&pk, 1);
	key(&pk, "message");
	msgpack_pack_str(&pk, 2);
	msgpack_pack_str_body(&pk, "hi", 2);
	key(&pk, "interrupt");
	msgpack_pack_int(&pk, 1);
	expect(MSG_INPUT, &sb, PROTO_E_FIELDTYPE, "int where bool is required");

	msgpack_pack_map(&pk, 4);
	key(&pk, "tool_pid");
	msgpack_pack_uint64(&pk, 1);
	key(&pk, "argv");
	msgpack_pack_array(&pk, 1);
	msgpack_pack_int(&pk, 3);
	key(&pk, "cwd");
	key(&pk, "/");
	key(&pk, "log_path");
	key(&pk, "x");
	expect(MSG_STARTED, &sb, PROTO_E_FIELDTYPE, "argv holding an int");

	msgpack_pack_map(&pk, 2);
	key(&pk, "grace_ms");
	msgpack_pack_uint64(&pk, 1);
	key(&pk, "reason");
	msgpack_pack_str(&pk, 3);
	msgpack_pack_str_body(&pk, "a\0b", 3);
	expect(MSG_CLOSE, &sb, PROTO_E_UTF8, "NUL inside text");

	tap_is_int(msg_decode(MSG_NONE, (const uint8_t *)"\x80", 1,
	    &(struct msg){ 0 }), PROTO_E_TYPE, "type 0 refused");
	msgpack_sbuffer_destroy(&sb);
}

/*
 * An ASSIGN whose options nest so that the deepest container sits at
 * `levels` (the body map is level 1): ccw-proto(7) allows 64.  The
 * options are packed as a placeholder string, then the arrays spliced in.
 */
static void
check_depth(int levels, enum proto_err want)
{
	msgpack_sbuffer	 sb;
	struct msg	 m, d;
	json_t		*j;
	uint8_t		*body, *at;
	size_t		 len, pre, n;
	int		 i, got;

	sample_msg(MSG_ASSIGN, &m);
	json_decref(m.u.assign.options);
	m.u.assign.options = json_string("@@@@");
	msgpack_sbuffer_init(&sb);
	msg_encode(&m, &sb);
	at = memmem(sb.data, sb.size, "\xa4@@@@", 5);
	tap_ok(at != NULL, "depth %d: placeholder found", levels);
	if (at == NULL)
		goto out;
	pre = (size_t)(at - (uint8_t *)sb.data);
	len = sb.size - 5 + (size_t)levels;
	body = malloc(len);
	memcpy(body, sb.data, pre);
	for (n = pre, i = 1; i < levels; i++)
		body[n++] = 0x91;
	body[n++] = 0xc0;
	memcpy(body + n, at + 5, sb.size - pre - 5);
	tap_is_int(msg_decode(MSG_ASSIGN, body, len, &d), want,
	    "%d levels -> %s", levels, proto_errname(want));
	if (want == PROTO_OK) {
		for (got = 1, j = d.u.assign.options; json_is_array(j);
		    j = json_array_get(j, 0))
			got++;
		tap_ok(got == levels && json_is_null(j) &&
		    strcmp(d.u.assign.prompt, m.u.assign.prompt) == 0,
		    "%d levels: every array kept, fields after it read",
		    levels);
	}
	msg_clear(&d);
	free(body);
out:
	msg_clear(&m);
	msgpack_sbuffer_destroy(&sb);
}

int
main(void)
{
	int	t;

	for (t = MSG_HELLO; t < MSG__MAX; t++)
		roundtrip(t);
	check_values();
	check_optional();
	check_result_fields();
	check_errors();
	check_depth(32, PROTO_OK);
	check_depth(33, PROTO_OK);
	check_depth(64, PROTO_OK);
	check_depth(65, PROTO_E_DEPTH);
	check_depth(2000, PROTO_E_DEPTH);
	tap_is_str(msg_name(MSG_INPUT_ACK), "INPUT_ACK", "names from the table");
	tap_is_str(msg_name(77), "?", "unknown type name");
	tap_is_int(msg_dir(MSG_ERROR), MSG_DIR_TO_SUPERVISOR | MSG_DIR_TO_WORKER,
	    "ERROR travels both ways");
	tap_is_int(msg_dir(MSG_REQUEST) & (MSG_DIR_TO_SUPERVISOR |
	    MSG_DIR_TO_WORKER), 0, "a control socket's REQUEST never travels "
	    "between supervisor and worker");
	tap_is_int(msg_dir(MSG_PING), MSG_DIR_TO_WORKER,
	    "PING goes to the worker only");
	tap_is_int(msg_dir(MSG_PONG), MSG_DIR_TO_SUPERVISOR,
	    "PONG goes to the supervisor only");
	tap_is_int(msg_dir(MSG_EVENT), MSG_DIR_TO_CLIENT,
	    "EVENT goes to a control socket's client only");
	return tap_done();
}
