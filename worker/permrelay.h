/*
 * permrelay.h: the permission relay (issue 29): `ccw-worker
 * --permission-relay SOCKET`, the stdio MCP server a CLI asks before a
 * tool use (permrelay.c), and the worker's socket it asks (permsock.c).
 */
#ifndef CCW_PERMRELAY_H
#define CCW_PERMRELAY_H

#include "proto.h"

struct worker;

#define PERMRELAY_SERVER	"ccw_permission"	/* the MCP server's name */
#define PERMRELAY_TOOL		"ask"			/* its one tool */
#define PERMRELAY_LINE_MAX	(1024u * 1024)	/* a longer line is garbage */

int	permrelay_main(int, char **);
int	permsock_open(struct worker *, char **);
void	permsock_reply(struct worker *, const struct msg_perm_reply *);
void	permsock_close(struct worker *);

#endif
