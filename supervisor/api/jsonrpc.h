/*
 * jsonrpc.h: JSON-RPC 2.0 as MCP and ACP speak it (newline-delimited on
 * stdio, one message a POST on HTTP): an incoming message classified,
 * the bodies of results, errors, requests and notifications built, and
 * the calls this side made matched to the peer's replies.
 */
#ifndef CCW_JSONRPC_H
#define CCW_JSONRPC_H

#include <stddef.h>

#include <jansson.h>

#define JSONRPC_PARSE_ERROR	-32700
#define JSONRPC_INVALID_REQUEST	-32600
#define JSONRPC_NO_METHOD	-32601
#define JSONRPC_INVALID_PARAMS	-32602
#define JSONRPC_INTERNAL	-32603

enum jsonrpc_kind {
	JR_REQUEST,	/* method and id: answer it once */
	JR_NOTIFY,	/* method, no id: never answered */
	JR_RESULT,	/* id and result: a reply to one of our calls */
	JR_ERROR,	/* id and error: the same, failed */
	JR_INVALID,	/* none of these: answer -32600 (id when it had one) */
};

/* One message's parts, borrowed from the value classified. */
struct jsonrpc_msg {
	enum jsonrpc_kind	 kind;
	const json_t		*id;		/* NULL: none */
	const char		*method;
	const json_t		*params;	/* object or array; NULL: none */
	const json_t		*result;
	const json_t		*error;
};

enum jsonrpc_kind jsonrpc_classify(const json_t *, struct jsonrpc_msg *,
		    const char **);
json_t		*jsonrpc_parse(const char *, size_t, json_t **);
json_t		*jsonrpc_result_new(const json_t *, json_t *);
json_t		*jsonrpc_error_new(const json_t *, int, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
json_t		*jsonrpc_notify_new(const char *, json_t *);

/*
 * Calls this side made (ACP's session/request_permission, say), each
 * waiting for the peer's reply: fn gets the result or the error; both
 * NULL when the call is dropped (the peer left, jsonrpc_calls_free).
 */
struct jsonrpc_calls;
typedef void	(*jsonrpc_reply_fn)(void *, const json_t *, const json_t *);

struct jsonrpc_calls *jsonrpc_calls_new(void);
void		 jsonrpc_calls_free(struct jsonrpc_calls *);
json_t		*jsonrpc_calls_request(struct jsonrpc_calls *, const char *,
		    json_t *, jsonrpc_reply_fn, void *);
int		 jsonrpc_calls_reply(struct jsonrpc_calls *,
		    const struct jsonrpc_msg *);
void		 jsonrpc_calls_drop(struct jsonrpc_calls *, void *);
size_t		 jsonrpc_calls_count(const struct jsonrpc_calls *);

#endif
