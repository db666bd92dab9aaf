/*
 * permrelay.c: `ccw-worker --permission-relay SOCKET`, a stdio MCP server
 * of one tool that claude's --permission-prompt-tool calls before a tool
 * use it may not make unasked.  Each call is relayed to the worker over
 * SOCKET (permsock.c) and its answer handed back; anything that goes
 * wrong on the way is a denial, never a hang or an allow.
 */
#include <config.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "permrelay.h"
#include "xmalloc.h"

/*
 * One line of fp, at most PERMRELAY_LINE_MAX bytes kept (*toolong: the
 * rest was read and dropped, so that the next line is whole).  NULL at
 * the end of input.
 */
static char *
relay_line(FILE *fp, size_t *len, int *toolong)
{
	char	*buf = NULL;
	size_t	 cap = 0;
	int	 ch;

	*len = 0;
	*toolong = 0;
	while ((ch = getc(fp)) != EOF && ch != '\n') {
		if (*len >= PERMRELAY_LINE_MAX) {
			*toolong = 1;
			continue;
		}
		if (*len + 1 >= cap) {
			cap = cap ? cap * 2 : 256;
			buf = xreallocarray(buf, cap, 1);
		}
		buf[(*len)++] = (char)ch;
	}
	if (ch == EOF && *len == 0 && !*toolong) {
		free(buf);
		return NULL;
	}
	if (buf == NULL)
		buf = xmalloc(1);
	buf[*len] = '\0';
	return buf;
}

/* One JSON-RPC message on stdout, whole and flushed: claude reads lines. */
static void
relay_send(json_t *msg)
{
	char	*s = json_dumps(msg, JSON_COMPACT);

	fputs(s, stdout);
	fputc('\n', stdout);
	fflush(stdout);
	free(s);
	json_decref(msg);
}

/* A JSON-RPC error for request id (json null when it had none). */
static void
relay_error(json_t *id, int code, const char *text)
{
	relay_send(json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0",
	    "id", id != NULL ? id : json_null(), "error", "code", code,
	    "message", text));
}

/* The denial the CLI gets when the worker could not be asked. */
static char *
relay_deny(const char *why)
{
	json_t	*d;
	char	*s, *msg;

	xasprintf(&msg, "permission denied: the supervisor could not be "
	    "asked (%s)", why);
	d = json_pack("{s:s, s:s}", "behavior", "deny", "message", msg);
	s = json_dumps(d, JSON_COMPACT);
	json_decref(d);
	free(msg);
	return s;
}

/* Write all of s to fd (a blocking socket). */
static int
relay_write_all(int fd, const char *s, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		if ((n = write(fd, s, len)) < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The worker's one-line answer on fd, or NULL (EOF first, too long). */
static char *
relay_read_answer(int fd)
{
	char	*buf = xmalloc(4096), *nl;
	size_t	 len = 0, cap = 4096;
	ssize_t	 n;

	for (;;) {
		if (len + 1 >= cap) {
			if (cap > PERMRELAY_LINE_MAX)
				break;
			cap *= 2;
			buf = xreallocarray(buf, cap, 1);
		}
		if ((n = read(fd, buf + len, cap - len - 1)) < 0 &&
		    errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		if ((nl = memchr(buf, '\n', len)) != NULL) {
			*nl = '\0';
			return buf;
		}
	}
	free(buf);
	return NULL;
}

/*
 * Ask the worker at sock: the request as one line, its answer as one
 * line, which must be a behavior the CLI knows; else a denial.
 */
static char *
relay_ask(const char *sock, const json_t *args)
{
	struct sockaddr_un	 sun;
	json_t			*req, *ans;
	char			*line, *reply;
	const char		*b;
	int			 fd, rc;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(sock) >= sizeof sun.sun_path)
		return relay_deny("socket path too long");
	strcpy(sun.sun_path, sock);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		if (fd >= 0)
			close(fd);
		return relay_deny("its worker is gone");
	}
	req = json_pack("{s:O?, s:O?, s:O?}", "tool_name", json_object_get(
	    args, "tool_name"), "input", json_object_get(args, "input"),
	    "tool_use_id", json_object_get(args, "tool_use_id"));
	line = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	rc = relay_write_all(fd, line, strlen(line));
	if (rc == 0)
		rc = relay_write_all(fd, "\n", 1);
	free(line);
	reply = rc == 0 ? relay_read_answer(fd) : NULL;
	close(fd);
	if (reply == NULL)
		return relay_deny("its worker did not answer");
	ans = json_loads(reply, 0, NULL);
	b = json_string_value(json_object_get(ans, "behavior"));
	if (b == NULL || (strcmp(b, "allow") != 0 && strcmp(b, "deny") != 0)) {
		free(reply);
		reply = relay_deny("its worker's answer was not one");
	}
	json_decref(ans);
	return reply;
}

/* The answer to one request (a new reference), or NULL: an error sent. */
static json_t *
relay_result(const char *sock, const char *method, json_t *params,
    json_t *id)
{
	const json_t	*pv = json_object_get(params, "protocolVersion");
	char		*text;
	json_t		*r;

	if (strcmp(method, "initialize") == 0)
		return json_pack("{s:s, s:{s:{}}, s:{s:s, s:s}}",
		    "protocolVersion", json_is_string(pv) ?
		    json_string_value(pv) : "2025-06-18", "capabilities",
		    "tools", "serverInfo", "name", "ccw-permission", "version",
		    PACKAGE_VERSION);
	if (strcmp(method, "ping") == 0)
		return json_object();
	if (strcmp(method, "tools/list") == 0)
		return json_pack("{s:[{s:s, s:s, s:{s:s, s:{s:{s:s}, "
		    "s:{s:s}, s:{s:s}}, s:[s, s]}}]}", "tools", "name",
		    PERMRELAY_TOOL, "description", "Ask the supervisor's "
		    "operator whether a tool use may go on", "inputSchema",
		    "type", "object", "properties", "tool_name", "type",
		    "string", "input", "type", "object", "tool_use_id",
		    "type", "string", "required", "tool_name", "input");
	if (strcmp(method, "tools/call") != 0) {
		relay_error(id, -32601, "method not found");
		return NULL;
	}
	if (!json_is_string(json_object_get(params, "name")) ||
	    strcmp(json_string_value(json_object_get(params, "name")),
	    PERMRELAY_TOOL) != 0) {
		relay_error(id, -32602, "unknown tool");
		return NULL;
	}
	text = relay_ask(sock, json_object_get(params, "arguments"));
	r = json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text",
	    text);
	free(text);
	return r;
}

/* One line from the CLI: a request answered, a notification dropped. */
static void
relay_one(const char *sock, const char *line, size_t len, int toolong)
{
	json_t		*msg, *id, *res;
	const char	*method;

	if (toolong || (msg = json_loadb(line, len, 0, NULL)) == NULL) {
		relay_error(NULL, -32700, toolong ? "line too long" :
		    "parse error");
		return;
	}
	id = json_object_get(msg, "id");
	method = json_string_value(json_object_get(msg, "method"));
	if (!json_is_object(msg) || method == NULL) {
		if (id != NULL)
			relay_error(id, -32600, "invalid request");
	} else if (id != NULL && (res = relay_result(sock, method,
	    json_object_get(msg, "params"), id)) != NULL)
		relay_send(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
		    id, "result", res));
	json_decref(msg);
}

/* The relay's main: lines in until the CLI closes our stdin. */
int
permrelay_main(int argc, char **argv)
{
	char	*line;
	size_t	 len;
	int	 toolong;

	if (argc != 3) {
		fprintf(stderr, "usage: ccw-worker --permission-relay "
		    "SOCKET\n");
		return 2;
	}
	while ((line = relay_line(stdin, &len, &toolong)) != NULL) {
		if (len > 0 || toolong)
			relay_one(argv[2], line, len, toolong);
		free(line);
	}
	return 0;
}
