/*
 * wsframe.c: RFC 6455's frames and messages as bytes, for a server: a
 * client's frame header checked (reserved bits, opcodes, masking, control
 * frames, lengths), its payload unmasked, fragments joined into a message
 * within a limit, text checked as UTF-8, close payloads read, a server
 * frame's header written and the handshake's Sec-WebSocket-Accept.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "sha1.h"
#include "wsframe.h"
#include "xmalloc.h"

/* Section 1.3: appended to the client's key before hashing. */
#define WSFRAME_GUID	"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

static const char wsframe_b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* A known opcode: data (0-2) or control (8-10); others fail the connection. */
static int
wsframe_opcode_known(int op)
{
	return op == WS_OP_CONT || op == WS_OP_TEXT || op == WS_OP_BINARY ||
	    op == WS_OP_CLOSE || op == WS_OP_PING || op == WS_OP_PONG;
}

/*
 * Reads one client frame's header from the n bytes at p.  WSF_OK when
 * the whole frame (header and payload) is there; WSF_MORE when it is
 * not yet; WSF_BAD with the close code when it breaks a rule: as early
 * as the header shows it, so that a frame over max (a payload's most
 * bytes) is refused before its bytes are waited for.
 */
enum wsframe_res
wsframe_parse(const uint8_t *p, size_t n, size_t max, struct wsframe *f,
    int *code)
{
	uint64_t	len;
	size_t		hlen = 2, i;

	memset(f, 0, sizeof *f);
	*code = WS_CLOSE_PROTOCOL;
	if (n < 2)
		return WSF_MORE;
	f->fin = (p[0] & 0x80) != 0;
	f->opcode = p[0] & 0x0f;
	f->masked = (p[1] & 0x80) != 0;
	/* no extension was agreed: a reserved bit set is an error */
	if ((p[0] & 0x70) != 0 || !wsframe_opcode_known(f->opcode) ||
	    !f->masked)
		return WSF_BAD;
	len = p[1] & 0x7f;
	if (f->opcode >= WS_OP_CLOSE && (!f->fin || len > WSFRAME_CONTROL_MAX))
		return WSF_BAD;
	if (len == 126) {
		if (n < 4)
			return WSF_MORE;
		len = (uint64_t)p[2] << 8 | p[3];
		hlen = 4;
	} else if (len == 127) {
		if (n < 10)
			return WSF_MORE;
		for (len = 0, i = 2; i < 10; i++)
			len = len << 8 | p[i];
		if (len >> 63)
			return WSF_BAD;
		hlen = 10;
	}
	if (len > max) {
		*code = WS_CLOSE_TOO_BIG;
		return WSF_BAD;
	}
	if (n < hlen + 4)
		return WSF_MORE;
	memcpy(f->mask, p + hlen, 4);
	f->hlen = hlen + 4;
	f->len = (size_t)len;
	*code = 0;
	return n - f->hlen >= f->len ? WSF_OK : WSF_MORE;
}

/* A client's payload in place: XOR with the mask, byte i with mask[i%4]. */
void
wsframe_unmask(uint8_t *p, size_t n, const uint8_t mask[4])
{
	size_t	i;

	for (i = 0; i < n; i++)
		p[i] ^= mask[i % 4];
}

/*
 * A server frame's header (final, unmasked: section 5.1) for a payload
 * of len bytes; its length in out.
 */
size_t
wsframe_header(uint8_t out[WSFRAME_HDR_MAX], int opcode, size_t len)
{
	size_t	i;

	out[0] = (uint8_t)(0x80 | (opcode & 0x0f));
	if (len < 126) {
		out[1] = (uint8_t)len;
		return 2;
	}
	if (len <= 0xffff) {
		out[1] = 126;
		out[2] = (uint8_t)(len >> 8);
		out[3] = (uint8_t)len;
		return 4;
	}
	out[1] = 127;
	for (i = 0; i < 8; i++)
		out[9 - i] = (uint8_t)((uint64_t)len >> (8 * i));
	return 10;
}

/*
 * Is it UTF-8 as RFC 3629 has it: shortest forms only, no surrogates,
 * nothing past U+10FFFF?  A text message must be (section 8.1).
 */
int
wsframe_utf8_ok(const uint8_t *p, size_t n)
{
	size_t		i = 0, k, need;
	uint32_t	cp, min;

	while (i < n) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if ((p[i] & 0xe0) == 0xc0)
			need = 1, cp = p[i] & 0x1f, min = 0x80;
		else if ((p[i] & 0xf0) == 0xe0)
			need = 2, cp = p[i] & 0x0f, min = 0x800;
		else if ((p[i] & 0xf8) == 0xf0)
			need = 3, cp = p[i] & 0x07, min = 0x10000;
		else
			return 0;
		if (n - i <= need)
			return 0;
		for (k = 1; k <= need; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += need + 1;
	}
	return 1;
}

/*
 * A close frame's payload (unmasked): empty, or a code and a UTF-8
 * reason.  0 and the code to answer with (1000 for an empty one), or -1
 * and the code to fail with: a one-byte payload, a code no endpoint may
 * send (section 7.4), a reason not UTF-8.
 */
int
wsframe_close_code(const uint8_t *p, size_t n, int *code)
{
	int	c;

	if (n == 0) {
		*code = WS_CLOSE_NORMAL;
		return 0;
	}
	*code = WS_CLOSE_PROTOCOL;
	if (n == 1)
		return -1;
	c = p[0] << 8 | p[1];
	if (!((c >= 1000 && c <= 1003) || (c >= 1007 && c <= 1011) ||
	    (c >= 3000 && c <= 4999)))
		return -1;
	if (!wsframe_utf8_ok(p + 2, n - 2)) {
		*code = WS_CLOSE_BAD_DATA;
		return -1;
	}
	*code = c;
	return 0;
}

/*
 * Sec-WebSocket-Accept for a Sec-WebSocket-Key: base64 of the SHA-1 of
 * the key and the GUID.  The key must be base64 of 16 bytes (24 chars,
 * "==" last, section 4.1); 0, or -1 for any other.
 */
int
wsframe_accept(const char *key, char out[WSFRAME_ACCEPT_LEN + 1])
{
	char		buf[24 + sizeof WSFRAME_GUID];
	uint8_t		d[SHA1_LEN + 1];
	uint32_t	v;
	size_t		i, o = 0;

	if (strlen(key) != 24 || strspn(key, wsframe_b64) != 22 ||
	    strcmp(key + 22, "==") != 0)
		return -1;
	memcpy(buf, key, 24);
	memcpy(buf + 24, WSFRAME_GUID, sizeof WSFRAME_GUID);
	sha1_digest(buf, 24 + sizeof WSFRAME_GUID - 1, d);
	d[SHA1_LEN] = 0;
	/* 20 bytes: six whole groups of three and one of two ("=" last) */
	for (i = 0; i < SHA1_LEN; i += 3) {
		v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 |
		    (i + 2 < SHA1_LEN ? d[i + 2] : 0);
		out[o++] = wsframe_b64[v >> 18 & 63];
		out[o++] = wsframe_b64[v >> 12 & 63];
		out[o++] = wsframe_b64[v >> 6 & 63];
		out[o++] = i + 2 < SHA1_LEN ? wsframe_b64[v & 63] : '=';
	}
	out[o] = '\0';
	return 0;
}

/* An empty assembler for messages of at most max bytes. */
void
wsmsg_init(struct wsmsg *m, size_t max)
{
	memset(m, 0, sizeof *m);
	m->max = max;
}

/*
 * A data frame (its payload p as sent, masked): the first of a message (TEXT or
 * BINARY) or its continuation.  WSM_DONE once the final fragment is in
 * (a text message then checked as UTF-8); WSM_BAD with the close code
 * for a continuation of nothing, a new message inside another, a
 * message over max.
 */
enum wsmsg_res
wsmsg_add(struct wsmsg *m, const struct wsframe *f, const uint8_t *p,
    int *code)
{
	*code = WS_CLOSE_PROTOCOL;
	if ((f->opcode == WS_OP_CONT) != (m->opcode != 0))
		return WSM_BAD;
	if (f->len > m->max - m->len) {
		*code = WS_CLOSE_TOO_BIG;
		return WSM_BAD;
	}
	if (m->opcode == 0)
		m->opcode = f->opcode;
	if (f->len > 0) {
		m->buf = xreallocarray(m->buf, m->len + f->len, 1);
		memcpy(m->buf + m->len, p, f->len);
		wsframe_unmask(m->buf + m->len, f->len, f->mask);
		m->len += f->len;
	}
	if (!f->fin)
		return WSM_MORE;
	if (m->opcode == WS_OP_TEXT && !wsframe_utf8_ok(m->buf, m->len)) {
		*code = WS_CLOSE_BAD_DATA;
		return WSM_BAD;
	}
	*code = 0;
	return WSM_DONE;
}

/* A message read: the assembler waits for the next one (buffer kept). */
void
wsmsg_reset(struct wsmsg *m)
{
	m->len = 0;
	m->opcode = 0;
}

/* Frees what the assembler holds. */
void
wsmsg_clear(struct wsmsg *m)
{
	free(m->buf);
	wsmsg_init(m, m->max);
}
