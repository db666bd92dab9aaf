/*
 * streamfeed.h: feeding tests/streams/ (real CLI output) to an adapter's
 * line parser, for test-adapters and test-limits.
 */
#ifndef CCW_STREAMFEED_H
#define CCW_STREAMFEED_H

#include <stddef.h>

#include "adapter.h"

void	feed_line(const struct adapter *, struct tool_stream *, const char *,
	    size_t);
int	feed(const char *, const char *, struct tool_stream *);
int	feed_stderr(const char *, struct tool_stream *);

#endif
