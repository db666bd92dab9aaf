/*
 * proto.h: the wire protocol shared by ccw-supervisor and ccw-worker.
 * Owns the frame header, the error codes, the message structs and the
 * functions that turn bytes into messages and back.  man/ccw-proto.7 is
 * the normative description; this header must agree with it.
 */
#ifndef CCW_PROTO_H
#define CCW_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <msgpack.h>

struct evbuffer;

#define PROTO_VERSION		2
#define PROTO_MAGIC0		'C'
#define PROTO_MAGIC1		'W'
#define PROTO_HDR_LEN		10
#define PROTO_MAX_BODY		(16u * 1024 * 1024)
#define PROTO_MAX_DEPTH		64

enum proto_err {
	PROTO_OK = 0,
	PROTO_E_AGAIN,		/* not a whole frame yet */
	PROTO_E_TRUNCATED,	/* stream ended inside a frame */
	PROTO_E_MAGIC,		/* header does not start with "CW" */
	PROTO_E_VERSION,	/* header version is not PROTO_VERSION */
	PROTO_E_FLAGS,		/* reserved header byte not zero */
	PROTO_E_TYPE,		/* unknown message type */
	PROTO_E_EMPTY,		/* body length zero */
	PROTO_E_TOOBIG,		/* body length over the maximum */
	PROTO_E_NOTMAP,		/* body is not a msgpack map */
	PROTO_E_COUNT,		/* container claims more items than bytes left */
	PROTO_E_DEPTH,		/* nesting deeper than PROTO_MAX_DEPTH */
	PROTO_E_SHORT,		/* an object runs past the end of the body */
	PROTO_E_TRAILING,	/* bytes after the map inside the body */
	PROTO_E_BADBYTE,	/* a msgpack type we never send (bin, ext, 0xc1) */
	PROTO_E_UTF8,		/* a string that is not valid UTF-8 */
	PROTO_E_KEY,		/* a map key that is not a string */
	PROTO_E_FIELDTYPE,	/* a known field holds the wrong type */
	PROTO_E_MISSING,	/* a required field is absent */
	PROTO_E_DUPKEY,		/* a field appears twice */
	PROTO_E_RANGE,		/* a number does not fit its field */
	PROTO_E_DIRECTION,	/* a message sent the wrong way */
	PROTO_E_IO,		/* the channel's socket failed */
	PROTO_E_NOMEM,
	PROTO_E__MAX
};

enum msg_type {
	MSG_NONE = 0,
	MSG_HELLO = 1,
	MSG_ASSIGN = 2,
	MSG_STARTED = 3,
	MSG_PROGRESS = 4,
	MSG_INPUT = 5,
	MSG_INPUT_ACK = 6,
	MSG_RESULT = 7,
	MSG_CLOSE = 8,
	MSG_BYE = 9,
	MSG_ERROR = 10,
	MSG_REQUEST = 11,	/* control socket: a client's verb call */
	MSG_REPLY = 12,		/* control socket: the answer to one */
	MSG_EVENT = 13,		/* control socket: one event of the bus */
	MSG_PING = 14,		/* heartbeat on a remote worker's channel */
	MSG_PONG = 15,		/* its answer, the same seq */
	MSG_PERM_ASK = 16,	/* a CLI's permission request (permrelay) */
	MSG_PERM_REPLY = 17,	/* its answer: allow or deny */
	MSG__MAX
};

/* Who may send a message; the receiver rejects the wrong direction. */
#define MSG_DIR_TO_SUPERVISOR	0x1
#define MSG_DIR_TO_WORKER	0x2
/* The control socket (supervisor/api/sock.c): never on a worker's channel. */
#define MSG_DIR_TO_SERVER	0x4
#define MSG_DIR_TO_CLIENT	0x8

/* A list of owned strings. */
struct strv {
	char	**v;
	size_t	  n;
};

/*
 * Message bodies.  Every char * and json_t * is owned by the message and
 * released by msg_clear(); NULL means "absent" for optional fields.
 * Numbers and booleans are always present on the wire.
 */
struct msg_hello {
	uint64_t	 pid;
	uint64_t	 index;
	char		*role;
	char		*version;
};

struct msg_assign {
	char		*loop_id;
	char		*agent_id;
	char		*role;
	char		*prompt;
	char		*tool;
	char		*model;
	char		*command;
	char		*cwd;
	char		*log_path;
	char		*capsule;
	uint64_t	 timeout_ms;
	uint64_t	 idle_ms;
	json_t		*options;
};

struct msg_started {
	uint64_t	 tool_pid;
	struct strv	 argv;
	char		*cwd;
	char		*log_path;
	char		*session_id;
};

struct msg_progress {
	char		*kind;
	char		*text;
	uint64_t	 tokens_in;
	uint64_t	 tokens_out;
	double		 cost;
};

struct msg_input {
	uint64_t	 submission_id;
	char		*message;
	int		 interrupt;
};

struct msg_input_ack {
	uint64_t	 submission_id;
	char		*delivery;
	char		*error;
};

struct msg_result {
	char		*status;
	char		*action;
	char		*summary;
	struct strv	 files_changed;
	char		*next_suggestion;
	char		*loop_back_to;
	char		*detailed_output;
	json_t		*questions;
	int64_t		 exit_code;
	int64_t		 signal;
	uint64_t	 duration_ms;
	char		*session_id;
	json_t		*usage;
	char		*reason;
	char		*stderr_tail;
	char		*error_kind;	/* auth|model|rate_limited|network|tool_error */
	char		*files_source;	/* "git", "mtime", "worktree": how files_changed
					   was observed (absent: it was not) */
	uint64_t	 turns;		/* tool runs in this worker (0: old peer) */
	uint64_t	 tool_pid;	/* the latest turn's */
	struct strv	 argv;		/* the latest turn's */
	uint64_t	 retry_after_ms; /* rate_limited: wait this long from
					   when the worker saw it (0: unknown) */
	char		*log_tail;	/* --stdio: the log's last 256 KiB
					   (the log is on the worker's host) */
	struct strv	 files_claimed;	/* the answers' WORKER_RESULT lists */
	json_t		*worktree;	/* options.worktree's: path, branch,
					   base, head, files, stat */
};

struct msg_close {
	uint64_t	 grace_ms;
	char		*reason;
};

struct msg_bye {
	char		*reason;
};

/* PING and PONG: a remote channel's heartbeat (protocol 2). */
struct msg_ping {
	uint64_t	 seq;
};

/* PERM_ASK: the tool asks leave to run tool_name on input (issue 29). */
struct msg_perm_ask {
	uint64_t	 id;		/* the worker's, for the reply */
	char		*tool_name;
	json_t		*input;
	char		*tool_use_id;
};

/* PERM_REPLY: the owner's decision on the PERM_ASK of that id. */
struct msg_perm_reply {
	uint64_t	 id;
	int		 allow;
	char		*message;	/* a denial's reason, for the model */
};

struct msg_error {
	char		*code;
	char		*message;
};

/* A control socket's request or reply: one JSON object (json.c's mapping). */
struct msg_call {
	json_t		*body;
};

/* One event of a host's bus, as a subscriber of the control socket sees it. */
struct msg_event {
	uint64_t	 seq;
	char		*type;
	json_t		*data;
};

struct msg {
	enum msg_type	type;
	union {
		struct msg_hello	hello;
		struct msg_assign	assign;
		struct msg_started	started;
		struct msg_progress	progress;
		struct msg_input	input;
		struct msg_input_ack	input_ack;
		struct msg_result	result;
		struct msg_close	close;
		struct msg_bye		bye;
		struct msg_error	error;
		struct msg_call		call;	/* REQUEST, REPLY */
		struct msg_event	event;
		struct msg_ping		ping;	/* PING, PONG */
		struct msg_perm_ask	perm_ask;
		struct msg_perm_reply	perm_reply;
	} u;
};

/* The decoded header of one frame. */
struct frame_hdr {
	uint8_t		version;
	uint8_t		flags;
	uint16_t	type;
	uint32_t	length;
};

/* proto/err.c */
const char	*proto_strerror(enum proto_err);
const char	*proto_errname(enum proto_err);

/* proto/frame.c */
void		 frame_hdr_encode(uint8_t *, uint16_t, uint32_t);
enum proto_err	 frame_hdr_decode(const uint8_t *, size_t, uint32_t,
		    struct frame_hdr *);
enum proto_err	 frame_read(struct evbuffer *, uint32_t, struct msg *);
enum proto_err	 frame_eof(struct evbuffer *, uint32_t);
enum proto_err	 frame_write(struct evbuffer *, const struct msg *, uint32_t);

/* proto/walk.c */
enum proto_err	 walk_body(const uint8_t *, size_t);
enum proto_err	 walk_unpack(const uint8_t *, size_t, msgpack_zone *,
		    msgpack_object *);
int		 walk_utf8_valid(const uint8_t *, size_t);

/* proto/msg.c */
const char	*msg_name(int);
int		 msg_dir(int);
void		 msg_init(struct msg *, enum msg_type);
void		 msg_clear(struct msg *);
enum proto_err	 msg_decode(enum msg_type, const uint8_t *, size_t, struct msg *);
enum proto_err	 msg_encode(const struct msg *, msgpack_sbuffer *);
void		 strv_push(struct strv *, const char *);
void		 strv_clear(struct strv *);

/* proto/json.c */
enum proto_err	 json_from_msgpack(const msgpack_object *, json_t **);
enum proto_err	 json_to_msgpack(msgpack_packer *, const json_t *);

#endif
