/*
 * servequestions.c: the queue of questions over HTTP, GET /api/questions
 * and POST /api/questions/:id/answer, on the verb table (list_questions,
 * answer_question) of every root in turn: a question id is unique over
 * the host, so the route names no loop.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "serveint.h"
#include "state.h"
#include "xmalloc.h"

/*
 * A failed question verb: these routes are ours, not CCW's, so each
 * kind has its own status (err_code_http_own: a question no longer
 * open, a conflict, is 409).
 */
static void
serve_questions_fail(struct serve_call *c, const json_t *reply)
{
	enum err_code	 code = api_reply_code(reply);
	const char	*e = json_string_value(json_object_get(reply, "detail"));

	if (e == NULL)
		e = json_string_value(json_object_get(reply, "error"));
	serve_ccw_error(c->r, err_code_http_own(code),
	    0, e != NULL ? e : "failed");
	serve_call_end(c);
}

static void	serve_questions_got(struct serve_call *, json_t *);

/* The list verb of root c->step (c->keep: {"all", "questions"}). */
static void
serve_questions_ask(struct serve_call *c)
{
	json_t	*req;

	c->root = &c->s->cfg.roots[c->step];
	req = json_pack("{s:s,s:s}", "verb", "list_questions", "status",
	    json_is_true(json_object_get(c->keep, "all")) ? "all" : "open");
	if (c->id != NULL)
		json_object_set_new(req, "loop_id", json_string(c->id));
	serve_call_api(c, req, serve_questions_got);
}

/* One root's list: kept; the next root's, or the reply. */
static void
serve_questions_got(struct serve_call *c, json_t *reply)
{
	json_t	*all = json_object_get(c->keep, "questions");

	if (api_reply_code(reply) != ERR_NONE) {
		serve_questions_fail(c, reply);
		return;
	}
	json_array_extend(all, json_object_get(reply, "questions"));
	if ((size_t)++c->step < c->s->cfg.nroots) {
		serve_questions_ask(c);
		return;
	}
	serve_ok(c->r, json_pack("{s:O,s:I}", "data", all, "total",
	    (json_int_t)json_array_size(all)));
	serve_call_end(c);
}

/* GET /api/questions?loop=ID&status=open|all: every root's questions. */
void
serve_questions_list(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	const char		*q = http_req_head(r)->query;
	struct serve_call	*c;
	char			 st[8] = "", loop[STATE_ID_MAX + 1] = "";
	int			 has;

	(void)m;
	if (http_query_get(q, "status", st, sizeof st) < 0 || (*st != '\0' &&
	    strcmp(st, "open") != 0 && strcmp(st, "all") != 0)) {
		serve_ccw_error(r, 400, 0, "status: one of open, all");
		return;
	}
	if ((has = http_query_get(q, "loop", loop, sizeof loop)) < 0 ||
	    (has == 1 && !state_id_valid(loop))) {
		serve_ccw_error(r, 400, 0, "Invalid loop ID format");
		return;
	}
	c = serve_call_new(s, r, &s->cfg.roots[0], has == 1 ? loop : NULL);
	c->keep = json_pack("{s:b,s:[]}", "all", strcmp(st, "all") == 0,
	    "questions");
	serve_questions_ask(c);
}

static void	serve_answer_got(struct serve_call *, json_t *);

/* The answer verb on root c->step (c->keep: the request). */
static void
serve_answer_ask(struct serve_call *c)
{
	c->root = &c->s->cfg.roots[c->step];
	serve_call_api(c, json_incref(c->keep), serve_answer_got);
}

/* Answered, refused, or not this root's question: the next root's. */
static void
serve_answer_got(struct serve_call *c, json_t *reply)
{
	if (api_reply_code(reply) == ERR_NOT_FOUND &&
	    (size_t)c->step + 1 < c->s->cfg.nroots) {
		c->step++;
		serve_answer_ask(c);
		return;
	}
	if (api_reply_code(reply) != ERR_NONE) {
		serve_questions_fail(c, reply);
		return;
	}
	c->s->writes++;
	serve_ok(c->r, json_pack("{s:O}", "data", json_object_get(reply,
	    "question")));
	serve_call_end(c);
}

/*
 * POST /api/questions/:id/answer {"answer", "by"?, "via"?}: via is
 * "http" (default) or "page" (the loop page's form says so).
 */
void
serve_questions_answer(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	const json_t		*a, *by, *via;
	struct serve_call	*c;
	json_t			*body;

	if ((body = serve_body(r, 0)) == NULL)
		return;
	a = json_object_get(body, "answer");
	by = json_object_get(body, "by");
	via = json_object_get(body, "via");
	if (!json_is_string(a) || json_string_length(a) == 0 ||
	    (by != NULL && !json_is_string(by)) || (via != NULL &&
	    (!json_is_string(via) || (strcmp(json_string_value(via), "http") &&
	    strcmp(json_string_value(via), "page"))))) {
		json_decref(body);
		serve_ccw_error(r, 400, 0, "the body must be {\"answer\": "
		    "\"...\", \"by\"?: \"...\", \"via\"?: \"http\"|\"page\"}");
		return;
	}
	c = serve_call_new(s, r, &s->cfg.roots[0], NULL);
	c->via = via != NULL && strcmp(json_string_value(via), "page") == 0 ?
	    "page" : "http";
	c->keep = json_pack("{s:s,s:s,s:O,s:O?}", "verb", "answer_question",
	    "question_id", m->cap[0], "answer", a, "by", by);
	json_decref(body);
	serve_answer_ask(c);
}
