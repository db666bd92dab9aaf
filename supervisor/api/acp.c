/*
 * acp.c: the ACP agent's protocol: initialize, the session methods
 * (new, load, resume, prompt, cancel; sessions capped per process), a
 * prompt turn as one run of the session's loop on its project's host,
 * and a worker's questions as session/request_permission.  The loop
 * files are the verb table's (loop_open, loop_update, loop_status);
 * running and stopping a loop is the host's.  Events become updates,
 * and every message goes out, in acpupdate.c.
 */
#include <config.h>

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acpint.h"
#include "api.h"
#include "host.h"
#include "jsonrpc.h"
#include "log.h"
#include "loopopen.h"
#include "state.h"
#include "sup.h"
#include "xmalloc.h"

/* An api verb in flight for a request (or a session's turn). */
enum acp_op { AO_NEW, AO_LOAD, AO_RESUME, AO_UPDATE };

struct acp_call {
	struct acp		*acp;
	enum acp_op		 op;
	json_t			*id;		/* the request's */
	char			*cwd;
	char			*sid;		/* the session's id */
	char			*mode;		/* session/new's _meta.mode */
	struct acp_project	 proj;
};

/* The reply to a request of the client (result stolen). */
static void
acp_result(struct acp *acp, const json_t *id, json_t *result)
{
	acp_send(acp, jsonrpc_result_new(id, result));
}

/* The session of that id, or NULL. */
static struct acp_session *
acp_find(struct acp *acp, const char *id)
{
	struct acp_session	*s;

	if (id == NULL)
		return NULL;
	TAILQ_FOREACH(s, &acp->sessions, entry)
		if (strcmp(s->id, id) == 0)
			return s;
	return NULL;
}

/* The session of that id, made (idle) when new. */
static struct acp_session *
acp_session_get(struct acp *acp, const char *id, const char *cwd,
    const struct acp_project *proj)
{
	struct acp_session	*s;

	if ((s = acp_find(acp, id)) == NULL) {
		s = xcalloc(1, sizeof *s);
		s->acp = acp;
		s->id = xstrdup(id);
		s->asker = json_object();
		TAILQ_INIT(&s->perms);
		TAILQ_INSERT_TAIL(&acp->sessions, s, entry);
		acp->nsessions++;
	}
	free(s->cwd);
	s->cwd = xstrdup(cwd);
	s->proj = *proj;
	return s;
}

static void
acp_session_free(struct acp_session *s)
{
	json_decref(s->prompt_id);
	json_decref(s->plan);
	json_decref(s->asker);
	json_decref(s->questions);
	json_decref(s->answers);
	json_decref(s->end);
	json_decref(s->usage);
	free(s->last_summary);
	free(s->ask_role);
	free(s->mode);
	free(s->cwd);
	free(s->id);
	free(s);
}

/* The agent on the caller's transport. */
struct acp *
acp_new(const struct acp_cfg *cfg)
{
	struct acp	*acp = xcalloc(1, sizeof *acp);

	acp->cfg = *cfg;
	if (acp->cfg.max_sessions == 0)
		acp->cfg.max_sessions = ACP_SESSIONS_MAX;
	acp->calls = jsonrpc_calls_new();
	TAILQ_INIT(&acp->sessions);
	return acp;
}

/* Its sessions (their loops already gone: the caller waits for them). */
void
acp_free(struct acp *acp)
{
	struct acp_session	*s;

	if (acp == NULL)
		return;
	jsonrpc_calls_free(acp->calls);	/* its replies see no loop */
	while ((s = TAILQ_FIRST(&acp->sessions)) != NULL) {
		TAILQ_REMOVE(&acp->sessions, s, entry);
		acp_session_free(s);
	}
	free(acp);
}

/* Loops running now. */
size_t
acp_running(const struct acp *acp)
{
	return acp->running;
}

/*
 * Stop every running loop (EOF, a signal): each turn ends cancelled,
 * each loop left running with why in its file (host_loop_interrupt).
 */
void
acp_stop_all(struct acp *acp, const char *why)
{
	struct acp_session	*s;

	TAILQ_FOREACH(s, &acp->sessions, entry) {
		s->cancelled = 1;
		if (s->hl != NULL)
			host_loop_interrupt(s->hl, why);
	}
}

/* The end of a turn: its stop reason, then the caller may exit. */
static void
acp_turn_end(struct acp_session *s, const char *reason)
{
	struct acp	*acp = s->acp;

	if (s->prompt_id != NULL)
		acp_result(acp, s->prompt_id, json_pack("{s:s}", "stopReason",
		    reason));
	json_decref(s->prompt_id);
	s->prompt_id = NULL;
	s->turn = AT_IDLE;
	s->cancelled = 0;
	if (acp->cfg.idle != NULL)
		acp->cfg.idle(acp->cfg.arg);
}

/* An agent message (one chunk), then the turn's end. */
static void
acp_turn_say(struct acp_session *s, const char *text, const char *reason)
{
	acp_update(s, json_pack("{s:s, s:o}", "sessionUpdate",
	    "agent_message_chunk", "content", acp_text(text)));
	acp_turn_end(s, reason);
}

/* The open's outcome: a refused loop ends the turn saying why. */
static void
acp_loop_opened(void *arg, struct host_loop *hl, int code, const char *err)
{
	struct acp_session	*s = arg;
	char			*msg;

	(void)hl;
	(void)code;
	if (err == NULL)
		return;		/* it runs (a completed loop is refused, code 0) */
	s->hl = NULL;
	s->acp->running--;
	xasprintf(&msg, "loop %s did not run: %s", s->id, err != NULL ? err :
	    "refused");
	acp_turn_say(s, msg, s->cancelled ? "cancelled" : "end_turn");
	free(msg);
}

/* A loop event: updates for the client. */
static void
acp_loop_event(void *arg, struct host_loop *hl, uint64_t seq,
    const char *name, const json_t *f)
{
	(void)hl;
	(void)seq;
	acpupdate_event(arg, name, f);
	acpperm_event(arg, name, f);
}

/*
 * The loop ended (its workers gone, its lock released): the summary,
 * then the stop reason: cancelled after session/cancel, max_turn_requests
 * at max_iterations, else end_turn (a failed loop too, saying why).
 */
static void
acp_loop_done(void *arg, struct host_loop *hl, int code)
{
	struct acp_session	*s = arg;
	char			*msg;

	(void)hl;
	s->hl = NULL;
	s->acp->running--;
	jsonrpc_calls_drop(s->acp->calls, s);	/* a late answer is ignored */
	acpperm_drop(s);
	json_decref(s->questions);
	s->questions = NULL;
	msg = acpupdate_summary(s, code);
	acp_turn_say(s, msg, s->cancelled && code == EXIT_STOPPED ?
	    "cancelled" : acpupdate_max_turns(s) ? "max_turn_requests" :
	    "end_turn");
	free(msg);
}

static void	acp_ask_next(struct acp_session *);

/* The client's choice for the open question; the last one answers all. */
static void
acp_ask_reply(void *arg, const json_t *result, const json_t *error)
{
	struct acp_session	*s = arg;
	const json_t		*out = json_object_get(result, "outcome");
	const json_t		*q, *opt;
	const char		*oid, *kind;
	size_t			 i;

	if (s->hl == NULL || s->questions == NULL)
		return;		/* dropped, or the loop went meanwhile */
	kind = json_string_value(json_object_get(out, "outcome"));
	oid = json_string_value(json_object_get(out, "optionId"));
	q = json_array_get(s->questions, json_array_size(s->answers));
	opt = NULL;
	if (error == NULL && kind != NULL && strcmp(kind, "selected") == 0 &&
	    oid != NULL && sscanf(oid, "option-%zu", &i) == 1)
		opt = json_array_get(json_object_get(q, "options"), i);
	if (!json_is_string(opt)) {
		/* cancelled, refused or unknown: no answer, the step fails */
		json_decref(s->questions);
		s->questions = NULL;
		(void)host_loop_answer(s->hl, NULL);
		return;
	}
	json_array_append(s->answers, (json_t *)opt);
	acp_ask_next(s);
}

/*
 * The next open question as session/request_permission on the asking
 * worker's tool call, one option each; all answered: to the loop.
 */
static void
acp_ask_next(struct acp_session *s)
{
	const json_t	*q, *o, *rec;
	const char	*agent, *text;
	json_t		*opts, *tc, *ans;
	char		 oid[32], *title;
	size_t		 i;

	if (json_array_size(s->answers) == json_array_size(s->questions)) {
		ans = s->answers;
		s->answers = NULL;
		json_decref(s->questions);
		s->questions = NULL;
		(void)host_loop_answer_via(s->hl, ans, NULL, "acp");
		json_decref(ans);
		return;
	}
	q = json_array_get(s->questions, json_array_size(s->answers));
	rec = json_object_get(q, "recommended");
	opts = json_array();
	json_array_foreach(json_object_get(q, "options"), i, o) {
		if (!json_is_string(o))
			continue;
		snprintf(oid, sizeof oid, "option-%zu", i);
		json_array_append_new(opts, json_pack("{s:s, s:s, s:s}",
		    "optionId", oid, "name", json_string_value(o), "kind",
		    "allow_once"));
		if (json_equal(o, rec))
			json_object_set_new(json_array_get(opts,
			    json_array_size(opts) - 1), "_meta", json_pack(
			    "{s:b}", "recommended", 1));
	}
	agent = json_string_value(json_object_get(s->asker, s->ask_role));
	text = json_string_value(json_object_get(q, "question"));
	xasprintf(&title, "%s asks: %s", s->ask_role, text != NULL ? text :
	    "?");
	tc = json_pack("{s:s, s:s, s:s}", "toolCallId", agent != NULL ? agent :
	    s->ask_role, "title", title, "kind", "think");
	free(title);
	acp_send(s->acp, jsonrpc_calls_request(s->acp->calls,
	    "session/request_permission", json_pack("{s:s, s:o, s:o, s:{s:O?}}",
	    "sessionId", s->id, "toolCall", tc, "options", opts, "_meta",
	    "question", q), acp_ask_reply, s));
}

/* A worker's questions: asked one by one (host.h's ask). */
static void
acp_loop_ask(void *arg, struct host_loop *hl, const char *role,
    const json_t *qs)
{
	struct acp_session	*s = arg;

	(void)hl;
	json_decref(s->questions);
	json_decref(s->answers);
	free(s->ask_role);
	s->questions = json_deep_copy(qs);
	s->answers = json_array();
	s->ask_role = xstrdup(role);
	if (json_array_size(qs) == 0) {
		json_decref(s->questions);
		s->questions = NULL;
		(void)host_loop_answer(s->hl, NULL);
		return;
	}
	acp_ask_next(s);
}

/* The session's loop on its project's host: the turn runs. */
static void
acp_turn_run(struct acp_session *s)
{
	struct host_observer	 obs;
	struct loop_spec	 spec;
	char			*err = NULL, *msg;

	if (s->cancelled) {
		acp_turn_end(s, "cancelled");
		return;
	}
	memset(&spec, 0, sizeof spec);
	spec.id = s->id;
	spec.mode = s->mode;
	memset(&obs, 0, sizeof obs);
	obs.opened = acp_loop_opened;
	obs.event = acp_loop_event;
	obs.done = acp_loop_done;
	obs.ask = acp_loop_ask;
	obs.arg = s;
	json_decref(s->end);
	s->end = NULL;
	if ((s->hl = host_loop_open(s->proj.host, &spec, NULL, &obs,
	    &err)) == NULL) {
		xasprintf(&msg, "loop %s did not run: %s", s->id, err);
		acp_turn_say(s, msg, "end_turn");
		free(msg);
		free(err);
		return;
	}
	s->turn = AT_RUNNING;
	s->acp->running++;
	acpupdate_plan_send(s);
}

/* A verb of the table for a call of ours. */
static void
acp_verb(struct acp_project *p, json_t *req, void (*cb)(json_t *, void *),
    struct acp_call *c)
{
	api_call(p->api, req, cb, c);
	json_decref(req);
}

static void
acp_call_free(struct acp_call *c)
{
	json_decref(c->id);
	free(c->cwd);
	free(c->sid);
	free(c->mode);
	free(c);
}

/*
 * A verb's reply: session/new's loop created, load's and resume's loop
 * read (load replays it), a prompt's task written (refused while the
 * file says running: a resumed loop keeps its task).
 */
static void
acp_verb_done(json_t *body, void *arg)
{
	struct acp_call		*c = arg;
	struct acp		*acp = c->acp;
	struct acp_session	*s;
	const char		*err = json_string_value(json_object_get(body,
				    "error"));

	if (c->op == AO_UPDATE) {
		if ((s = acp_find(acp, c->sid)) != NULL) {
			if (err != NULL)
				log_info("acp: session %s: %s (the loop keeps "
				    "its task)", s->id, err);
			acp_turn_run(s);
		}
		acp_call_free(c);
		return;
	}
	acp->opening--;
	if (!json_is_true(json_object_get(body, "ok"))) {
		/* the code the verb's kind maps to (errcode.c) */
		acp_send(acp, jsonrpc_error_new(c->id, err_code_jsonrpc(
		    api_reply_code(body)), "%s", err != NULL ? err : "failed"));
		acp_call_free(c);
		if (acp->cfg.idle != NULL)
			acp->cfg.idle(acp->cfg.arg);
		return;
	}
	s = acp_session_get(acp, c->sid, c->cwd, &c->proj);
	if (c->mode != NULL) {
		free(s->mode);
		s->mode = xstrdup(c->mode);
	}
	acpupdate_plan_new(s, json_object_get(body, "loop"));
	if (c->op == AO_LOAD)
		acpupdate_replay(s, json_object_get(body, "loop"));
	acp_result(acp, c->id, c->op == AO_NEW ? json_pack("{s:s}",
	    "sessionId", s->id) : json_object());
	acp_call_free(c);
	if (acp->cfg.idle != NULL)
		acp->cfg.idle(acp->cfg.arg);
}

/* cwd: absolute and an existing directory; its project opened. */
static int
acp_cwd(struct acp *acp, const json_t *params, const char **cwd,
    struct acp_project *proj, char **err)
{
	struct stat	 st;

	*cwd = json_string_value(json_object_get(params, "cwd"));
	if (*cwd == NULL || (*cwd)[0] != '/') {
		*err = xstrdup("cwd must be an absolute path");
		return -1;
	}
	if (stat(*cwd, &st) != 0 || !S_ISDIR(st.st_mode)) {
		xasprintf(err, "cwd %s is not an existing directory", *cwd);
		return -1;
	}
	return acp->cfg.project(acp->cfg.arg, *cwd, proj, err);
}

/*
 * session/new, session/load, session/resume: the project of cwd, then
 * the loop created (new; _meta.max_iterations and _meta.mode set it up)
 * or read (load, resume: it must exist).
 */
static void
acp_session_open(struct acp *acp, const json_t *id, const json_t *params,
    enum acp_op op)
{
	struct acp_project	 proj;
	struct acp_call		*c;
	struct acp_session	*s;
	const json_t		*meta = json_object_get(params, "_meta");
	const json_t		*mi = json_object_get(meta, "max_iterations");
	const char		*cwd, *sid, *mode;
	char			*err = NULL;
	json_t			*req;

	if (acp_cwd(acp, params, &cwd, &proj, &err) != 0) {
		acp_send(acp, jsonrpc_error_new(id, JSONRPC_INVALID_PARAMS,
		    "%s", err));
		free(err);
		return;
	}
	sid = json_string_value(json_object_get(params, "sessionId"));
	if (op != AO_NEW && (sid == NULL || !state_id_valid(sid))) {
		acp_send(acp, jsonrpc_error_new(id, JSONRPC_INVALID_PARAMS,
		    "sessionId must be a loop id"));
		return;
	}
	s = op != AO_NEW ? acp_find(acp, sid) : NULL;
	if (s != NULL && s->turn != AT_IDLE) {
		acp_send(acp, jsonrpc_error_new(id, JSONRPC_INVALID_PARAMS,
		    "session %s has a prompt running", sid));
		return;
	}
	/* a new one (no loop made for it) only within the cap */
	if (s == NULL && acp->nsessions + acp->opening >=
	    acp->cfg.max_sessions) {
		acp_send(acp, jsonrpc_error_new(id, ACP_ERROR_SESSIONS,
		    "too many sessions: this agent holds at most %zu (start "
		    "another agent process)", acp->cfg.max_sessions));
		return;
	}
	mode = json_string_value(json_object_get(meta, "mode"));
	c = xcalloc(1, sizeof *c);
	c->acp = acp;
	c->op = op;
	c->id = json_incref((json_t *)id);
	c->cwd = xstrdup(cwd);
	c->sid = op == AO_NEW ? state_id_generate() : xstrdup(sid);
	c->mode = mode != NULL ? xstrdup(mode) : NULL;
	c->proj = proj;
	acp->opening++;
	if (op == AO_NEW)
		req = json_pack("{s:s, s:s, s:s, s:I}", "verb", "loop_open",
		    "loop_id", c->sid, "title", "ACP session (no prompt yet)",
		    "max_iterations", json_is_integer(mi) &&
		    json_integer_value(mi) > 0 ? json_integer_value(mi) : 10);
	else
		req = json_pack("{s:s, s:s}", "verb", "loop_status", "loop_id",
		    c->sid);
	acp_verb(&proj, req, acp_verb_done, c);
}

/* The prompt's text blocks joined: the task; NULL when it has none. */
static char *
acp_prompt_text(const json_t *prompt)
{
	const json_t	*b;
	const char	*t;
	char		*s = NULL, *n;
	size_t		 i;

	json_array_foreach(prompt, i, b) {
		t = json_string_value(json_object_get(b, "text"));
		if (t == NULL || strcmp(json_string_value(json_object_get(b,
		    "type")) != NULL ? json_string_value(json_object_get(b,
		    "type")) : "", "text") != 0)
			continue;
		if (s == NULL)
			s = xstrdup(t);
		else {
			xasprintf(&n, "%s\n\n%s", s, t);
			free(s);
			s = n;
		}
	}
	return s;
}

/*
 * session/prompt: the text is the loop's task (written with loop_update
 * unless the file says running), then the loop runs; the reply comes
 * when it ends.
 */
static void
acp_prompt(struct acp *acp, const json_t *id, const json_t *params)
{
	struct acp_session	*s;
	struct acp_call		*c;
	char			*text, *title;
	json_t			*req;

	s = acp_find(acp, json_string_value(json_object_get(params,
	    "sessionId")));
	if (s == NULL) {
		acp_send(acp, jsonrpc_error_new(id, JSONRPC_INVALID_PARAMS,
		    "no such session (session/new or session/load first)"));
		return;
	}
	if (s->turn != AT_IDLE) {
		acp_send(acp, jsonrpc_error_new(id, JSONRPC_INVALID_PARAMS,
		    "session %s has a prompt running", s->id));
		return;
	}
	if ((text = acp_prompt_text(json_object_get(params,
	    "prompt"))) == NULL) {
		acp_send(acp, jsonrpc_error_new(id, JSONRPC_INVALID_PARAMS,
		    "the prompt has no text block"));
		return;
	}
	s->prompt_id = json_incref((json_t *)id);
	s->turn = AT_UPDATING;
	s->cancelled = 0;
	title = loopopen_title(text);
	c = xcalloc(1, sizeof *c);
	c->acp = acp;
	c->op = AO_UPDATE;
	c->sid = xstrdup(s->id);
	req = json_pack("{s:s, s:s, s:s, s:s}", "verb", "loop_update",
	    "loop_id", s->id, "title", title, "description", text);
	free(title);
	free(text);
	acp_verb(&s->proj, req, acp_verb_done, c);
}

/* session/cancel: the turn's loop stopped (the kill ladder). */
static void
acp_cancel(struct acp *acp, const json_t *params)
{
	struct acp_session	*s;

	s = acp_find(acp, json_string_value(json_object_get(params,
	    "sessionId")));
	if (s == NULL || s->turn == AT_IDLE)
		return;
	s->cancelled = 1;
	if (s->hl != NULL)
		host_loop_interrupt(s->hl, "cancelled by the client "
		    "(session/cancel)");
}

/* initialize: version 1, what we do, who we are. */
static void
acp_initialize(struct acp *acp, const json_t *id)
{
	acp_result(acp, id, json_pack("{s:i, s:{s:b, s:{s:b, s:b, s:b},"
	    " s:{s:b, s:b}, s:{s:{}}}, s:[], s:{s:s, s:s, s:s}}",
	    "protocolVersion", ACP_PROTOCOL_VERSION,
	    "agentCapabilities", "loadSession", 1,
	    "promptCapabilities", "image", 0, "audio", 0, "embeddedContext", 0,
	    "mcpCapabilities", "http", 0, "sse", 0,
	    "sessionCapabilities", "resume",
	    "authMethods",
	    "agentInfo", "name", "ccw-supervisor", "title", "ccw-supervisor",
	    "version", PACKAGE_VERSION));
}

/* A request or notification of the client. */
static void
acp_dispatch(struct acp *acp, const struct jsonrpc_msg *m)
{
	const json_t	*id = m->kind == JR_REQUEST ? m->id : NULL;
	const char	*meth = m->method;

	if (m->kind == JR_NOTIFY) {
		if (strcmp(meth, "session/cancel") == 0)
			acp_cancel(acp, m->params);
		return;		/* others ($/cancel_request ...): ignored */
	}
	if (m->params != NULL && !json_is_object(m->params)) {
		acp_send(acp, jsonrpc_error_new(id, JSONRPC_INVALID_PARAMS,
		    "params must be an object"));
		return;
	}
	if (strcmp(meth, "initialize") == 0)
		acp_initialize(acp, id);
	else if (strcmp(meth, "authenticate") == 0)
		acp_result(acp, id, json_object());
	else if (strcmp(meth, "session/new") == 0)
		acp_session_open(acp, id, m->params, AO_NEW);
	else if (strcmp(meth, "session/load") == 0)
		acp_session_open(acp, id, m->params, AO_LOAD);
	else if (strcmp(meth, "session/resume") == 0)
		acp_session_open(acp, id, m->params, AO_RESUME);
	else if (strcmp(meth, "session/prompt") == 0)
		acp_prompt(acp, id, m->params);
	else
		acp_send(acp, jsonrpc_error_new(id, JSONRPC_NO_METHOD,
		    "Method not found: %s", meth));
}

/* One line from the client: a message, a reply to ours, or an error back. */
void
acp_line(struct acp *acp, const char *line, size_t len)
{
	struct jsonrpc_msg	 m;
	const char		*why;
	json_t			*v, *err;

	if ((v = jsonrpc_parse(line, len, &err)) == NULL) {
		if (err != NULL)
			acp_send(acp, err);
		return;
	}
	switch (jsonrpc_classify(v, &m, &why)) {
	case JR_REQUEST:
	case JR_NOTIFY:
		acp_dispatch(acp, &m);
		break;
	case JR_RESULT:
	case JR_ERROR:
		if (jsonrpc_calls_reply(acp->calls, &m) != 0)
			log_info("acp: a reply to no call of ours ignored");
		break;
	case JR_INVALID:
		acp_send(acp, jsonrpc_error_new(m.id, JSONRPC_INVALID_REQUEST,
		    "%s", why));
		break;
	}
	json_decref(v);
}
