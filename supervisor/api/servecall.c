/*
 * servecall.c: what serve's route handlers share: a request waiting for
 * api replies (the call), the body read as JSON, CCW's reply shapes, and
 * the count of loops hosted.  The route table (serve.c) names handlers;
 * handlers call here; nothing here calls either, so no circle.
 */
#include <config.h>

#include <stdlib.h>

#include "api.h"
#include "gitrun.h"
#include "host.h"
#include "serveint.h"
#include "xmalloc.h"

/* Loops every root's host drives now. */
size_t
serve_hosted(const struct serve *s)
{
	size_t	i, n = 0;

	for (i = 0; i < s->cfg.nroots; i++)
		n += host_nloops(s->cfg.roots[i].host);
	return n;
}

/* The client left before the verb answered: the reply will be dropped. */
static void
serve_call_gone(struct http_req *r, void *arg)
{
	struct serve_call	*c = arg;

	(void)r;
	c->r = NULL;
}

/* A request that will wait for api replies (freed by serve_call_end). */
struct serve_call *
serve_call_new(struct serve *s, struct http_req *r, struct serve_root *root,
    const char *id)
{
	struct serve_call	*c = xcalloc(1, sizeof *c);

	c->s = s;
	c->r = r;
	c->root = root;
	c->id = id != NULL ? xstrdup(id) : NULL;
	TAILQ_INSERT_TAIL(&s->calls, c, entry);
	http_req_on_close(r, serve_call_gone, c);
	return c;
}

/*
 * Done with the call: the request was answered (the server freed it
 * with its on_close: never touched again) or has gone.  A git run it
 * still waits for (serve's shutdown) is killed, never left to call it.
 */
void
serve_call_end(struct serve_call *c)
{
	gitrun_cancel(c->git);
	TAILQ_REMOVE(&c->s->calls, c, entry);
	json_decref(c->keep);
	free(c->id);
	free(c);
}

/* The api's reply: to the call's next step, unless its client left. */
static void
serve_call_reply(json_t *reply, void *arg)
{
	struct serve_call	*c = arg;

	if (c->s->freeing)
		return;
	if (c->r == NULL) {
		serve_call_end(c);
		return;
	}
	c->next(c, reply);
}

/* One verb for the call (req stolen); its reply goes to next. */
void
serve_call_api(struct serve_call *c, json_t *req, serve_next_fn next)
{
	c->next = next;
	api_call_as(c->root->api, req, c->via != NULL ? c->via : "http",
	    serve_call_reply, c);
	json_decref(req);
}

/*
 * The request's body as a JSON object (new reference), or NULL with
 * the reply sent (400); an empty body is {} when allowed.
 */
json_t *
serve_body(struct http_req *r, int empty_ok)
{
	json_error_t	 jerr;
	const char	*b;
	size_t		 len;
	json_t		*j;

	b = http_req_body(r, &len);
	if (len == 0 && empty_ok)
		return json_object();
	j = json_loadb(b != NULL ? b : "", len, JSON_REJECT_DUPLICATES, &jerr);
	if (j == NULL || !json_is_object(j)) {
		json_decref(j);
		serve_ccw_error(r, 400, 1, "Invalid JSON body");
		return NULL;
	}
	return j;
}

/*
 * CCW's error shapes: a body route answers {"error": msg}, the others
 * {"success": false, "error": msg}.
 */
void
serve_ccw_error(struct http_req *r, int code, int body_route, const char *msg)
{
	json_t	*j;

	if (r == NULL)
		return;
	j = body_route ? json_pack("{s:s}", "error", msg) :
	    json_pack("{s:b,s:s}", "success", 0, "error", msg);
	http_reply_json(r, code, j);
	json_decref(j);
}

/* {"success": true, ...members of extra} (extra stolen). */
void
serve_ok(struct http_req *r, json_t *extra)
{
	json_t	*j = json_pack("{s:b}", "success", 1);

	json_object_update(j, extra);
	json_decref(extra);
	http_reply_json(r, 200, j);
	json_decref(j);
}

