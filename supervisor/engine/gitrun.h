/*
 * gitrun.h: one `ccw-worker --git VERB` run on the caller's event base:
 * the request as JSON on its stdin, the reply read from its stdout, its
 * stderr into the log, a deadline on its process group, its exit told by
 * the process's children registry.  Never blocks the base.
 */
#ifndef CCW_GITRUN_H
#define CCW_GITRUN_H

#include <stdint.h>

#include <jansson.h>

struct children;
struct event_base;
struct gitrun;

#define GITRUN_REPLY_MAX	(1024 * 1024)	/* stdout read at most */
#define GITRUN_KILL_MS		2000		/* SIGTERM to SIGKILL */

/*
 * The run ended: rc is its exit status (0 the verb ran, 1 git failed,
 * 2 a bad request; -1 it could not run, was killed or timed out), reply
 * its stdout as JSON (NULL if none; borrowed for the call), err a
 * message when rc != 0 (the reply's "error", else stderr's tail, else
 * how it ended).  The run is freed after the callback returns.
 */
typedef void	(*gitrun_cb)(int, const json_t *, const char *, void *);

struct gitrun	*gitrun_start(struct event_base *, struct children *,
		    const char *, const json_t *, uint64_t, const char *,
		    gitrun_cb, void *, char **);
void		 gitrun_cancel(struct gitrun *);

#endif
