/*
 * sha1.h: SHA-1 (FIPS 180-4) of a byte string, for the WebSocket
 * handshake's Sec-WebSocket-Accept (RFC 6455 section 4.2.2), where the
 * protocol fixes the hash; nothing here is meant for security.
 */
#ifndef CCW_SHA1_H
#define CCW_SHA1_H

#include <stddef.h>
#include <stdint.h>

#define SHA1_LEN	20

void	sha1_digest(const void *, size_t, uint8_t[SHA1_LEN]);

#endif
