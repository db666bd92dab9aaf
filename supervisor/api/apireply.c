/*
 * apireply.c: the verb table's replies: a call answered once, and the
 * error body every front end reads ({"ok": false, "error": text,
 * "code": kind}); front ends map the kind (errcode.h), never the text.
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "apiint.h"

/* The error body without its id: the message and its kind's name. */
static json_t *
api_error_body(enum err_code code, const char *fmt, va_list ap)
{
	char	*msg;
	json_t	*body;

	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	body = json_pack("{s:b, s:s, s:s}", "ok", 0, "error",
	    msg != NULL ? msg : "error", "code", err_code_name(code));
	free(msg);
	return body;
}

/* An error body with the request's id: also for a front end's own errors. */
json_t *
api_error_new(const json_t *id, enum err_code code, const char *fmt, ...)
{
	va_list	 ap;
	json_t	*body;

	va_start(ap, fmt);
	body = api_error_body(code, fmt, ap);
	va_end(ap);
	json_object_set(body, "id", id != NULL ? (json_t *)id : json_null());
	return body;
}

/*
 * The kind of a reply: none when it succeeded; a failure without a
 * known "code" is internal (never mistaken for a success).
 */
enum err_code
api_reply_code(const json_t *reply)
{
	const char	*name;

	if (json_is_true(json_object_get(reply, "ok")))
		return ERR_NONE;
	name = json_string_value(json_object_get(reply, "code"));
	return name != NULL ? err_code_parse(name) : ERR_INTERNAL;
}

/*
 * Answer a call (once): the id goes last, as control always printed it;
 * the call leaves the pending list before the callback runs, so a front
 * end asking api_idle from it sees the truth.
 */
void
api_reply(struct api_pending *p, json_t *body)
{
	struct api	*api = p->api;

	TAILQ_REMOVE(&api->pending, p, entry);
	json_object_set(body, "id", p->id);
	if (!api->freeing)
		p->cb(body, p->arg);
	json_decref(body);
	json_decref(p->id);
	free(p);
}
