/*
 * wsframe.h: RFC 6455's wire form, pure (no I/O): a client's frame read
 * from bytes with every rule a server must enforce, its message put
 * together from fragments within a size limit, a server frame's header,
 * the handshake's accept key, and the close codes.
 */
#ifndef CCW_WSFRAME_H
#define CCW_WSFRAME_H

#include <stddef.h>
#include <stdint.h>

/* Opcodes (section 5.2). */
#define WS_OP_CONT	0x0
#define WS_OP_TEXT	0x1
#define WS_OP_BINARY	0x2
#define WS_OP_CLOSE	0x8
#define WS_OP_PING	0x9
#define WS_OP_PONG	0xa

/* Close codes (section 7.4.1). */
#define WS_CLOSE_NORMAL		1000
#define WS_CLOSE_GOING_AWAY	1001
#define WS_CLOSE_PROTOCOL	1002
#define WS_CLOSE_NO_STATUS	1005	/* never sent: a close without one */
#define WS_CLOSE_BAD_DATA	1007	/* a text message not UTF-8 */
#define WS_CLOSE_TOO_BIG	1009

#define WSFRAME_HDR_MAX		14	/* 2 + 8 (length) + 4 (mask) */
#define WSFRAME_CONTROL_MAX	125	/* a control frame's payload */
#define WSFRAME_ACCEPT_LEN	28	/* base64 of a SHA-1 */

/* One frame's header as read. */
struct wsframe {
	int		 fin;
	int		 opcode;
	int		 masked;
	uint8_t		 mask[4];
	size_t		 hlen;		/* header bytes */
	size_t		 len;		/* payload bytes after them */
};

enum wsframe_res {
	WSF_MORE,		/* not a whole frame yet */
	WSF_OK,			/* hlen + len bytes are one frame */
	WSF_BAD			/* close with *code */
};

/* A message being put together from its data frames. */
struct wsmsg {
	uint8_t		*buf;
	size_t		 len;
	size_t		 max;		/* a message's most bytes: 1009 beyond */
	int		 opcode;	/* TEXT or BINARY; 0 between messages */
};

enum wsmsg_res {
	WSM_MORE,		/* a fragment kept: the message goes on */
	WSM_DONE,		/* buf, len, opcode: one whole message */
	WSM_BAD			/* close with *code */
};

enum wsframe_res wsframe_parse(const uint8_t *, size_t, size_t,
		    struct wsframe *, int *);
void		 wsframe_unmask(uint8_t *, size_t, const uint8_t[4]);
size_t		 wsframe_header(uint8_t[WSFRAME_HDR_MAX], int, size_t);
int		 wsframe_utf8_ok(const uint8_t *, size_t);
int		 wsframe_close_code(const uint8_t *, size_t, int *);
int		 wsframe_accept(const char *, char[WSFRAME_ACCEPT_LEN + 1]);

void		 wsmsg_init(struct wsmsg *, size_t);
enum wsmsg_res	 wsmsg_add(struct wsmsg *, const struct wsframe *,
		    const uint8_t *, int *);
void		 wsmsg_reset(struct wsmsg *);
void		 wsmsg_clear(struct wsmsg *);

#endif
