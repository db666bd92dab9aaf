/*
 * sha1.c: SHA-1 (FIPS 180-4) in one call over a whole byte string: the
 * 64-byte blocks, the padding with the bit length, the digest big-endian.
 */
#include <config.h>

#include <string.h>

#include "sha1.h"

/* Rotates x left by n bits (0 < n < 32). */
static uint32_t
sha1_rol(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

/* Mixes one 64-byte block into the state h, as FIPS 180-4 6.1.2 says. */
static void
sha1_block(uint32_t h[5], const uint8_t *p)
{
	uint32_t	w[80], a, b, c, d, e, f, k, t;
	unsigned	i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (; i < 80; i++)
		w[i] = sha1_rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
	for (i = 0; i < 80; i++) {
		if (i < 20)
			f = (b & c) | (~b & d), k = 0x5a827999;
		else if (i < 40)
			f = b ^ c ^ d, k = 0x6ed9eba1;
		else if (i < 60)
			f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
		else
			f = b ^ c ^ d, k = 0xca62c1d6;
		t = sha1_rol(a, 5) + f + e + k + w[i];
		e = d, d = c, c = sha1_rol(b, 30), b = a, a = t;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

/*
 * The digest of len bytes at data: the whole blocks straight from the
 * input, the tail and the padding (0x80, zeros, the bit length) from a
 * local copy of at most two blocks.
 */
void
sha1_digest(const void *data, size_t len, uint8_t out[SHA1_LEN])
{
	uint32_t	 h[5] = { 0x67452301, 0xefcdab89, 0x98badcfe,
			    0x10325476, 0xc3d2e1f0 };
	const uint8_t	*p = data;
	uint8_t		 tail[128];
	uint64_t	 bits = (uint64_t)len * 8;
	size_t		 n = len % 64, full = len - n, tlen, i;

	for (i = 0; i < full; i += 64)
		sha1_block(h, p + i);
	memset(tail, 0, sizeof tail);
	if (n > 0)
		memcpy(tail, p + full, n);
	tail[n] = 0x80;
	tlen = n < 56 ? 64 : 128;
	for (i = 0; i < 8; i++)
		tail[tlen - 1 - i] = (uint8_t)(bits >> (8 * i));
	for (i = 0; i < tlen; i += 64)
		sha1_block(h, tail + i);
	for (i = 0; i < 20; i++)
		out[i] = (uint8_t)(h[i / 4] >> (24 - 8 * (i % 4)));
}
