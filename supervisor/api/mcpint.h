/*
 * mcpint.h: what the MCP session (mcp.c) asks of its tool table
 * (mcptools.c): the tools listed, a call's arguments as a verb request,
 * a verb's reply as a tool result.
 */
#ifndef CCW_MCPINT_H
#define CCW_MCPINT_H

#include <jansson.h>

struct mcp_tool;

json_t			*mcp_tools_list(void);
const struct mcp_tool	*mcp_tool_find(const char *);
const char		*mcp_tool_name(const struct mcp_tool *);
json_t			*mcp_tool_request(const struct mcp_tool *,
			    const json_t *, char **);
json_t			*mcp_tool_result(const struct mcp_tool *,
			    const json_t *, const json_t *);
json_t			*mcp_tool_error(const char *);
int			 mcp_tool_spawns(const struct mcp_tool *);
int			 mcp_tool_waits(const struct mcp_tool *);

#endif
