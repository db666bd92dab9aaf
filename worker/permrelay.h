/*
 * permrelay.h: the permission relay (issue 29): `ccw-worker
 * --permission-relay SOCKET`, the stdio MCP server a CLI asks before a
 * tool use (permrelay.c), and the worker's socket it asks (permsock.c).
 */
#ifndef CCW_PERMRELAY_H
#define CCW_PERMRELAY_H

#include "proto.h"

struct worker;

/* the MCP server's name, its one tool, the longest line either end reads */
#define PERMRELAY_SERVER	"ccw_permission"
#define PERMRELAY_TOOL		"ask"
#define PERMRELAY_LINE_MAX	(1024u * 1024)

int	permrelay_main(int, char **);
int	permsock_open(struct worker *, char **);
void	permsock_reply(struct worker *, const struct msg_perm_reply *);
void	permsock_close(struct worker *);

#endif
