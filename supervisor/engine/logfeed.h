/*
 * logfeed.h: a loop's workers' log files followed as lines, coalesced
 * per tick and bounded per second, for LOOP_LOG_ENTRY events.
 */
#ifndef CCW_LOGFEED_H
#define CCW_LOGFEED_H

#include <stddef.h>

struct event_base;
struct logfeed;

/* Lines of one worker (agent, step): several joined by '\n'. */
typedef void (*logfeed_cb)(void *, const char *, const char *,
    const char *);

struct logfeed	*logfeed_new(struct event_base *, unsigned, size_t,
		    logfeed_cb, void *);	/* lines, bytes a second */
void		 logfeed_free(struct logfeed *);
void		 logfeed_add(struct logfeed *, const char *, const char *,
		    const char *);		/* agent, step, log path */
void		 logfeed_end(struct logfeed *, const char *);	/* agent */

#endif
