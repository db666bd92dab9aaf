/*
 * state-export.h: `state export ID [--html] [-o FILE]`: a loop's replay
 * as JSON or as one HTML file that opens without serve (state-export.c).
 */
#ifndef CCW_STATE_EXPORT_H
#define CCW_STATE_EXPORT_H

int	state_export(int, const char *, int, const char *);	/* dirfd, id, html, FILE or NULL */

#endif
