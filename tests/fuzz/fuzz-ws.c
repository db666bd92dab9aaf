/*
 * fuzz-ws.c: libFuzzer target for /ws's frame decoder (supervisor/api/
 * wsframe.c): the bytes a WebSocket client sends after the handshake,
 * read frame by frame as ws.c reads them (control frames unmasked,
 * data frames joined into messages, close payloads read), with a small
 * and a large message limit; the first 24 bytes also as a handshake key.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wsframe.h"
#include "xmalloc.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* One control frame's payload, unmasked into a copy as ws.c does. */
static void
fuzz_control(const struct wsframe *f, const uint8_t *p)
{
	uint8_t	pl[WSFRAME_CONTROL_MAX];
	int	code;

	if (f->len > WSFRAME_CONTROL_MAX || !f->fin)
		abort();
	memcpy(pl, p, f->len);
	wsframe_unmask(pl, f->len, f->mask);
	if (f->opcode == WS_OP_CLOSE) {
		/* answered or refused: either way with a code one may send */
		(void)wsframe_close_code(pl, f->len, &code);
		if (code < 1000 || code > 4999 || code == WS_CLOSE_NO_STATUS)
			abort();
	}
}

/*
 * The whole input as one client's stream: each frame must lie within
 * the bytes, a refusal must carry a close code, a whole message must
 * be within the limit (and UTF-8 when text).
 */
static void
fuzz_stream(const uint8_t *buf, size_t len, size_t max)
{
	struct wsframe	f;
	struct wsmsg	m;
	size_t		used = 0;
	int		code;

	wsmsg_init(&m, max);
	while (used < len) {
		switch (wsframe_parse(buf + used, len - used, max, &f, &code)) {
		case WSF_MORE:
			goto out;
		case WSF_BAD:
			if (code != WS_CLOSE_PROTOCOL && code != WS_CLOSE_TOO_BIG)
				abort();
			goto out;
		case WSF_OK:
			break;
		}
		if (f.hlen < 6 || f.len > max || f.hlen + f.len > len - used)
			abort();
		if (f.opcode >= WS_OP_CLOSE)
			fuzz_control(&f, buf + used + f.hlen);
		else if (wsmsg_add(&m, &f, buf + used + f.hlen, &code) ==
		    WSM_BAD)
			goto out;
		else if (m.opcode != 0 && f.fin) {
			if (m.len > max || (m.opcode == WS_OP_TEXT &&
			    !wsframe_utf8_ok(m.buf, m.len)))
				abort();
			wsmsg_reset(&m);
		}
		used += f.hlen + f.len;
	}
out:
	wsmsg_clear(&m);
}

/* A server frame's header for the input's length reads back as sent. */
static void
fuzz_header(size_t len)
{
	uint8_t	h[WSFRAME_HDR_MAX];
	size_t	n = wsframe_header(h, WS_OP_TEXT, len), got;

	if (n != 2 && n != 4 && n != 10)
		abort();
	got = h[1] & 0x7f;
	if (n == 4)
		got = (size_t)h[2] << 8 | h[3];
	if (n == 10)
		got = len;	/* 64-bit: checked by the unit of length */
	if (got != len || (h[0] & 0x0f) != WS_OP_TEXT || !(h[0] & 0x80))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	uint8_t	*buf;
	char	 key[25], acc[WSFRAME_ACCEPT_LEN + 1];

	/* An exact copy, so ASan sees any read past the client's bytes. */
	buf = xmalloc(len > 0 ? len : 1);
	memcpy(buf, data, len);
	fuzz_stream(buf, len, 65536);
	fuzz_stream(buf, len, 16);
	(void)wsframe_utf8_ok(buf, len);
	fuzz_header(len);
	if (len >= 24) {
		memcpy(key, buf, 24);
		key[24] = '\0';
		if (wsframe_accept(key, acc) == 0 &&
		    strlen(acc) != WSFRAME_ACCEPT_LEN)
			abort();
	}
	free(buf);
	return 0;
}
