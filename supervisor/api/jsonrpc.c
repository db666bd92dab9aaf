/*
 * jsonrpc.c: JSON-RPC 2.0 messages for mcp and acp: what a message is
 * (checked before any handler sees it, so a malformed one is answered
 * with an error and never crashes or wedges the peer's session), the
 * bodies we send, and our own calls waiting for the peer's replies.
 */
#include <config.h>

#include <sys/queue.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "xmalloc.h"

/* An id a peer may use: a string or an integer (MCP forbids null). */
static int
jsonrpc_id_ok(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

/*
 * What v is.  JR_INVALID sets *why; m->id is then the message's id when
 * it had a usable one, so the error can name it.
 */
enum jsonrpc_kind
jsonrpc_classify(const json_t *v, struct jsonrpc_msg *m, const char **why)
{
	const json_t	*ver, *id, *method, *params;

	memset(m, 0, sizeof *m);
	m->kind = JR_INVALID;
	*why = NULL;
	if (json_is_array(v)) {
		*why = "batches are not supported";
		return m->kind;
	}
	if (!json_is_object(v)) {
		*why = "a message must be a JSON object";
		return m->kind;
	}
	id = json_object_get(v, "id");
	if (id != NULL && jsonrpc_id_ok(id))
		m->id = id;
	ver = json_object_get(v, "jsonrpc");
	if (!json_is_string(ver) || strcmp(json_string_value(ver), "2.0") != 0) {
		*why = "\"jsonrpc\" must be \"2.0\"";
		return m->kind;
	}
	if (id != NULL && !jsonrpc_id_ok(id)) {
		*why = "\"id\" must be a string or an integer";
		return m->kind;
	}
	method = json_object_get(v, "method");
	if (method != NULL) {
		params = json_object_get(v, "params");
		if (!json_is_string(method) || json_string_length(method) == 0) {
			*why = "\"method\" must be a non-empty string";
			return m->kind;
		}
		if (params != NULL && !json_is_object(params) &&
		    !json_is_array(params)) {
			*why = "\"params\" must be an object or an array";
			return m->kind;
		}
		m->method = json_string_value(method);
		m->params = params;
		m->kind = id != NULL ? JR_REQUEST : JR_NOTIFY;
		return m->kind;
	}
	m->result = json_object_get(v, "result");
	m->error = json_object_get(v, "error");
	if (id == NULL || (m->result == NULL) == (m->error == NULL)) {
		*why = "neither a request, a notification nor a response";
		return m->kind;
	}
	if (m->error != NULL && !json_is_object(m->error)) {
		*why = "\"error\" must be an object";
		return m->kind;
	}
	m->kind = m->result != NULL ? JR_RESULT : JR_ERROR;
	return m->kind;
}

/*
 * One line of a stdio session: the value, or NULL with *errbody the
 * -32700 reply to send (NULL too for an empty line, which is skipped).
 */
json_t *
jsonrpc_parse(const char *line, size_t len, json_t **errbody)
{
	json_error_t	 jerr;
	json_t		*v;

	*errbody = NULL;
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
	    line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return NULL;
	if ((v = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL)
		*errbody = jsonrpc_error_new(NULL, JSONRPC_PARSE_ERROR,
		    "parse error: %s (column %d)", jerr.text, jerr.column);
	return v;
}

/* A reply carrying result (stolen) for the request whose id is id. */
json_t *
jsonrpc_result_new(const json_t *id, json_t *result)
{
	json_t	*body = json_pack("{s:s}", "jsonrpc", "2.0");

	json_object_set(body, "id", id != NULL ? (json_t *)id : json_null());
	json_object_set_new(body, "result", result);
	return body;
}

/* An error reply: code and message, for id (NULL: null, as the spec says). */
json_t *
jsonrpc_error_new(const json_t *id, int code, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;
	json_t	*body = json_pack("{s:s}", "jsonrpc", "2.0");

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	json_object_set(body, "id", id != NULL ? (json_t *)id : json_null());
	json_object_set_new(body, "error", json_pack("{s:i, s:s}", "code",
	    code, "message", msg != NULL ? msg : "error"));
	free(msg);
	return body;
}

/* A notification: method with params (stolen; NULL: none). */
json_t *
jsonrpc_notify_new(const char *method, json_t *params)
{
	json_t	*body = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method",
	    method);

	if (params != NULL)
		json_object_set_new(body, "params", params);
	return body;
}

struct jsonrpc_call {
	TAILQ_ENTRY(jsonrpc_call)	 entry;
	json_int_t			 id;
	jsonrpc_reply_fn		 fn;
	void				*arg;
};
TAILQ_HEAD(jsonrpc_call_list, jsonrpc_call);

struct jsonrpc_calls {
	struct jsonrpc_call_list	 list;
	json_int_t			 next;
	size_t				 n;
};

struct jsonrpc_calls *
jsonrpc_calls_new(void)
{
	struct jsonrpc_calls	*cs = xcalloc(1, sizeof *cs);

	TAILQ_INIT(&cs->list);
	cs->next = 1;
	return cs;
}

/* Every call still waiting is told it was dropped, then forgotten. */
void
jsonrpc_calls_free(struct jsonrpc_calls *cs)
{
	struct jsonrpc_call	*c;

	if (cs == NULL)
		return;
	while ((c = TAILQ_FIRST(&cs->list)) != NULL) {
		TAILQ_REMOVE(&cs->list, c, entry);
		c->fn(c->arg, NULL, NULL);
		free(c);
	}
	free(cs);
}

/*
 * A request of ours (params stolen) whose reply goes to fn: the body to
 * send.  Our ids are integers counting up, never reused in a session.
 */
json_t *
jsonrpc_calls_request(struct jsonrpc_calls *cs, const char *method,
    json_t *params, jsonrpc_reply_fn fn, void *arg)
{
	struct jsonrpc_call	*c = xcalloc(1, sizeof *c);
	json_t			*body = jsonrpc_notify_new(method, params);

	c->id = cs->next++;
	c->fn = fn;
	c->arg = arg;
	TAILQ_INSERT_TAIL(&cs->list, c, entry);
	cs->n++;
	json_object_set_new(body, "id", json_integer(c->id));
	return body;
}

/* A reply from the peer (JR_RESULT, JR_ERROR): 0 when it was ours, else -1. */
int
jsonrpc_calls_reply(struct jsonrpc_calls *cs, const struct jsonrpc_msg *m)
{
	struct jsonrpc_call	*c;

	if (!json_is_integer(m->id))
		return -1;
	TAILQ_FOREACH(c, &cs->list, entry)
		if (c->id == json_integer_value(m->id))
			break;
	if (c == NULL)
		return -1;
	TAILQ_REMOVE(&cs->list, c, entry);
	cs->n--;
	c->fn(c->arg, m->kind == JR_RESULT ? m->result : NULL,
	    m->kind == JR_ERROR ? m->error : NULL);
	free(c);
	return 0;
}

/* Forget the calls made for arg (it is going away); fn is not called. */
void
jsonrpc_calls_drop(struct jsonrpc_calls *cs, void *arg)
{
	struct jsonrpc_call	*c, *tmp;

	for (c = TAILQ_FIRST(&cs->list); c != NULL; c = tmp) {
		tmp = TAILQ_NEXT(c, entry);
		if (c->arg == arg) {
			TAILQ_REMOVE(&cs->list, c, entry);
			cs->n--;
			free(c);
		}
	}
}

size_t
jsonrpc_calls_count(const struct jsonrpc_calls *cs)
{
	return cs->n;
}
