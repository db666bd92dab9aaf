/*
 * test-sha256.c: SHA-256 against the FIPS 180-2 appendix B vectors and
 * the padding's edge lengths, HMAC-SHA256 against RFC 4231's test cases
 * 1-4, 6 and 7 (5 is a truncated output, which nothing here uses).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "tap.h"

/* The digest as lower-case hex, the form every vector is written in. */
static void
hex(const uint8_t d[SHA256_LEN], char out[2 * SHA256_LEN + 1])
{
	size_t	i;

	for (i = 0; i < SHA256_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* FIPS 180-2 B.1-B.3, and lengths either side of each padding case. */
static void
check_digests(void)
{
	static const struct { size_t n; const char *want; } edge[] = {
		{ 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ 55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072" },
		{ 56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e" },
		{ 63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2" },
		{ 64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c" },
		{ 119, "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c" },
		{ 120, "13f05a0b594787f5ecd315edc96141bd3243203d1b7d4f0836f37308b276ba98" },
	};
	uint8_t	 d[SHA256_LEN];
	char	 h[2 * SHA256_LEN + 1], *m;
	size_t	 i;

	sha256_digest("abc", 3, d);
	hex(d, h);
	tap_is_str(h, "ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad", "FIPS B.1: abc");
	m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha256_digest(m, strlen(m), d);
	hex(d, h);
	tap_is_str(h, "248d6a61d20638b8e5c026930c3e6039"
	    "a33ce45964ff2167f6ecedd419db06c1", "FIPS B.2: 448 bits");
	m = malloc(1000000);
	memset(m, 'a', 1000000);
	sha256_digest(m, 1000000, d);
	free(m);
	hex(d, h);
	tap_is_str(h, "cdc76e5c9914fb9281a1c7e284d73e67"
	    "f1809a48a497200e046d39ccc7112cd0", "FIPS B.3: a million 'a'");
	m = malloc(128);
	memset(m, 'x', 128);
	for (i = 0; i < sizeof edge / sizeof edge[0]; i++) {
		sha256_digest(m, edge[i].n, d);
		hex(d, h);
		tap_is_str(h, edge[i].want, "%zu bytes of 'x'", edge[i].n);
	}
	free(m);
}

/* RFC 4231 section 4: each case's key, data and HMAC-SHA256. */
static void
check_hmacs(void)
{
	static const struct {
		int		 tc;
		uint8_t		 kbyte;		/* key: klen times kbyte, */
		size_t		 klen;		/* or 1..klen when kbyte is 0 */
		const char	*data;
		uint8_t		 dbyte;		/* data: 50 times dbyte if no data */
		const char	*want;
	} v[] = {
		{ 1, 0x0b, 20, "Hi There", 0,
		  "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
		{ 2, 0, 0, "what do ya want for nothing?", 0,
		  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
		{ 3, 0xaa, 20, NULL, 0xdd,
		  "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },
		{ 4, 0, 25, NULL, 0xcd,
		  "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b" },
		{ 6, 0xaa, 131,
		  "Test Using Larger Than Block-Size Key - Hash Key First", 0,
		  "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
		{ 7, 0xaa, 131,
		  "This is a test using a larger than block-size key and a "
		  "larger than block-size data. The key needs to be hashed "
		  "before being used by the HMAC algorithm.", 0,
		  "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2" },
	};
	uint8_t		 key[131], data[50], d[SHA256_LEN];
	const void	*k, *m;
	size_t		 i, j, klen, mlen;
	char		 h[2 * SHA256_LEN + 1];

	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		if (v[i].tc == 2)
			k = "Jefe", klen = 4;
		else {
			for (j = 0; j < v[i].klen; j++)
				key[j] = v[i].kbyte != 0 ? v[i].kbyte :
				    (uint8_t)(j + 1);
			k = key, klen = v[i].klen;
		}
		if (v[i].data != NULL)
			m = v[i].data, mlen = strlen(v[i].data);
		else {
			memset(data, v[i].dbyte, sizeof data);
			m = data, mlen = sizeof data;
		}
		sha256_hmac(k, klen, m, mlen, d);
		hex(d, h);
		tap_is_str(h, v[i].want, "RFC 4231 test case %d", v[i].tc);
	}
}

int
main(void)
{
	check_digests();
	check_hmacs();
	return tap_done();
}
