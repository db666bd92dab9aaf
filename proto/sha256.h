/*
 * sha256.h: SHA-256 (FIPS 180-4) of a byte string and HMAC-SHA256
 * (RFC 2104) over it, for the webhook sink's X-CCW-Signature header,
 * where a receiver checks the body came from the holder of the secret.
 */
#ifndef CCW_SHA256_H
#define CCW_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN	32

void	sha256_digest(const void *, size_t, uint8_t[SHA256_LEN]);
void	sha256_hmac(const void *, size_t, const void *, size_t,
	    uint8_t[SHA256_LEN]);

#endif
