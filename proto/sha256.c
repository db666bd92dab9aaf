/*
 * sha256.c: SHA-256 (FIPS 180-4) as an incremental context (the HMAC
 * hashes a padded key and the message without joining them), and
 * HMAC-SHA256 (RFC 2104) on it.
 */
#include <config.h>

#include <string.h>

#include "sha256.h"

/* The running hash: the state, the unfinished block, the byte count. */
struct sha256_ctx {
	uint32_t	h[8];
	uint8_t		buf[64];
	size_t		fill;
	uint64_t	len;
};

/* FIPS 180-4 4.2.2: the first 32 bits of the cube roots of 64 primes. */
static const uint32_t sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* Rotates x right by n bits (0 < n < 32). */
static uint32_t
sha256_ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

/* Mixes one 64-byte block into the state h, as FIPS 180-4 6.2.2 says. */
static void
sha256_block(uint32_t h[8], const uint8_t *p)
{
	uint32_t	w[64], v[8], s0, s1, t1, t2;
	unsigned	i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (; i < 64; i++) {
		s0 = sha256_ror(w[i - 15], 7) ^ sha256_ror(w[i - 15], 18) ^
		    (w[i - 15] >> 3);
		s1 = sha256_ror(w[i - 2], 17) ^ sha256_ror(w[i - 2], 19) ^
		    (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	memcpy(v, h, sizeof v);
	for (i = 0; i < 64; i++) {
		t1 = v[7] + (sha256_ror(v[4], 6) ^ sha256_ror(v[4], 11) ^
		    sha256_ror(v[4], 25)) + ((v[4] & v[5]) ^ (~v[4] & v[6])) +
		    sha256_k[i] + w[i];
		t2 = (sha256_ror(v[0], 2) ^ sha256_ror(v[0], 13) ^
		    sha256_ror(v[0], 22)) +
		    ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
		memmove(v + 1, v, 7 * sizeof v[0]);
		v[4] += t1;
		v[0] = t1 + t2;
	}
	for (i = 0; i < 8; i++)
		h[i] += v[i];
}

/* FIPS 180-4 5.3.3: the first 32 bits of the square roots of 8 primes. */
static void
sha256_init(struct sha256_ctx *c)
{
	static const uint32_t	iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372,
				    0xa54ff53a, 0x510e527f, 0x9b05688c,
				    0x1f83d9ab, 0x5be0cd19 };

	memcpy(c->h, iv, sizeof iv);
	c->fill = 0;
	c->len = 0;
}

/* Whole blocks go straight from the input; a tail waits in buf. */
static void
sha256_update(struct sha256_ctx *c, const void *data, size_t len)
{
	const uint8_t	*p = data;
	size_t		 n;

	c->len += len;
	if (c->fill > 0) {
		n = 64 - c->fill < len ? 64 - c->fill : len;
		memcpy(c->buf + c->fill, p, n);
		c->fill += n, p += n, len -= n;
		if (c->fill < 64)
			return;
		sha256_block(c->h, c->buf);
		c->fill = 0;
	}
	for (; len >= 64; p += 64, len -= 64)
		sha256_block(c->h, p);
	memcpy(c->buf, p, len);
	c->fill = len;
}

/* The padding (0x80, zeros, the bit length), then the state big-endian. */
static void
sha256_final(struct sha256_ctx *c, uint8_t out[SHA256_LEN])
{
	uint8_t		pad[72] = { 0x80 };
	uint64_t	bits = c->len * 8;
	size_t		n = c->fill < 56 ? 56 - c->fill : 120 - c->fill, i;

	for (i = 0; i < 8; i++)
		pad[n + i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_update(c, pad, n + 8);
	for (i = 0; i < SHA256_LEN; i++)
		out[i] = (uint8_t)(c->h[i / 4] >> (24 - 8 * (i % 4)));
}

/* The digest of len bytes at data, in one call. */
void
sha256_digest(const void *data, size_t len, uint8_t out[SHA256_LEN])
{
	struct sha256_ctx	c;

	sha256_init(&c);
	sha256_update(&c, data, len);
	sha256_final(&c, out);
}

/*
 * RFC 2104: H((K ^ opad) || H((K ^ ipad) || text)), a key longer than
 * the block hashed first, a shorter one padded with zeros.
 */
void
sha256_hmac(const void *key, size_t klen, const void *msg, size_t mlen,
    uint8_t out[SHA256_LEN])
{
	struct sha256_ctx	c;
	uint8_t			k[64] = { 0 }, pad[64], inner[SHA256_LEN];
	size_t			i;

	if (klen > sizeof k)
		sha256_digest(key, klen, k);
	else if (klen > 0)
		memcpy(k, key, klen);
	for (i = 0; i < sizeof pad; i++)
		pad[i] = k[i] ^ 0x36;
	sha256_init(&c);
	sha256_update(&c, pad, sizeof pad);
	sha256_update(&c, msg, mlen);
	sha256_final(&c, inner);
	for (i = 0; i < sizeof pad; i++)
		pad[i] = k[i] ^ 0x5c;
	sha256_init(&c);
	sha256_update(&c, pad, sizeof pad);
	sha256_update(&c, inner, sizeof inner);
	sha256_final(&c, out);
}
