/*
 * replay.h: a finished loop as one self-contained HTML document that
 * steps through its actions (replay.c); `state export --html` writes it,
 * serve's GET /loops/:id/replay serves it.
 */
#ifndef CCW_REPLAY_H
#define CCW_REPLAY_H

#include <stddef.h>

#include <jansson.h>

/* serve's header lines for the document (the file carries a meta tag) */
extern const char replay_csp_header[];

json_t	*replay_collect(int, const char *, char **);	/* dirfd, id: NULL + why */
char	*replay_render(const json_t *, int, size_t *);	/* data, standalone */

#endif
