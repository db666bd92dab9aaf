/*
 * feed.h: push a byte string through the same path a channel uses, for the
 * fuzz target and the invalid-frame corpus test.
 */
#ifndef CCW_FEED_H
#define CCW_FEED_H

#include "proto.h"

enum proto_err	feed_stream(const uint8_t *, size_t, uint32_t, int *);

#endif
