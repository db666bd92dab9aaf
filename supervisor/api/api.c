/*
 * api.c: the one verb table: each verb's name, argument schema and
 * handler; a request is checked against its row (types, required
 * members, sizes) before its handler runs, so a bad request is a JSON
 * error and never reaches the engine.  Also the agent verbs themselves.
 */
#include <config.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiint.h"
#include "budget.h"
#include "committer.h"
#include "log.h"
#include "retire.h"
#include "sup.h"
#include "toolconfig.h"
#include "xmalloc.h"

/* What an argument must be. */
enum api_type {
	AT_STR,		/* a string of at most max bytes */
	AT_MS,		/* a non-negative integer */
	AT_BOOL,
	AT_STRS,	/* a non-empty array of at most max strings */
	AT_ONE_OF,	/* one of the words in `words` */
	AT_POS,		/* an integer >= 1 */
	AT_TAGS,	/* an array (maybe empty) of at most max strings */
	AT_COUNT,	/* an integer from 1 to max */
	AT_BUDGET,	/* the state's budget object (engine/budget.c) */
};

struct api_arg {
	const char	*name;
	enum api_type	 type;
	int		 required;
	size_t		 max;		/* AT_STR: bytes; AT_STRS: items */
	const char	*words;		/* AT_ONE_OF: "any all" */
};

struct api_verb {
	const char		*name;
	api_handler_fn		 fn;
	const struct api_arg	*args;	/* ended by a NULL name */
};

static void	api_spawn(struct api_pending *, const json_t *);
static void	api_wait(struct api_pending *, const json_t *);
static void	api_send_input(struct api_pending *, const json_t *);
static void	api_close(struct api_pending *, const json_t *);
static void	api_result(struct api_pending *, const json_t *);
static void	api_list(struct api_pending *, const json_t *);

#define ARG_END	{ NULL, AT_STR, 0, 0, NULL }

static const struct api_arg spawn_args[] = {
	{ "role", AT_STR, 1, API_NAME_MAX, NULL },
	{ "message", AT_STR, 0, API_TEXT_MAX, NULL },
	{ "tool", AT_STR, 0, API_NAME_MAX, NULL },
	{ "command", AT_STR, 0, API_TEXT_MAX, NULL },
	{ "model", AT_STR, 0, API_NAME_MAX, NULL },
	{ "cwd", AT_STR, 0, API_NAME_MAX, NULL },
	{ "attempts", AT_COUNT, 0, CONFIG_MAX_ATTEMPTS, NULL },
	{ "check", AT_STR, 0, API_TEXT_MAX, NULL },
	ARG_END
};
static const struct api_arg wait_args[] = {
	{ "targets", AT_STRS, 1, API_TARGETS_MAX, NULL },
	{ "timeout_ms", AT_MS, 0, 0, NULL },
	{ "mode", AT_ONE_OF, 0, 0, "any all" },
	ARG_END
};
static const struct api_arg input_args[] = {
	{ "target", AT_STR, 1, API_NAME_MAX, NULL },
	{ "message", AT_STR, 1, API_TEXT_MAX, NULL },
	{ "interrupt", AT_BOOL, 0, 0, NULL },
	ARG_END
};
static const struct api_arg close_args[] = {
	{ "target", AT_STR, 1, API_NAME_MAX, NULL },
	{ "grace_ms", AT_MS, 0, 0, NULL },
	ARG_END
};
static const struct api_arg target_args[] = {
	{ "target", AT_STR, 1, API_NAME_MAX, NULL },
	ARG_END
};
static const struct api_arg no_args[] = { ARG_END };
static const struct api_arg loop_args[] = {
	{ "loop_id", AT_STR, 1, API_NAME_MAX, NULL },
	ARG_END
};
static const struct api_arg open_args[] = {
	{ "loop_id", AT_STR, 0, API_NAME_MAX, NULL },
	{ "title", AT_STR, 0, API_TEXT_MAX, NULL },
	{ "description", AT_STR, 0, API_TEXT_MAX, NULL },
	{ "max_iterations", AT_POS, 0, 0, NULL },
	{ "start", AT_BOOL, 0, 0, NULL },
	{ "task", AT_STR, 0, API_TEXT_MAX, NULL },
	{ "mode", AT_ONE_OF, 0, 0, "auto parallel" },
	{ "budget", AT_BUDGET, 0, 0, NULL },
	ARG_END
};
/* loop_resume: a raised budget goes in the same commit as running */
static const struct api_arg resume_args[] = {
	{ "loop_id", AT_STR, 1, API_NAME_MAX, NULL },
	{ "budget", AT_BUDGET, 0, 0, NULL },
	ARG_END
};

static const struct api_arg questions_args[] = {
	{ "loop_id", AT_STR, 0, API_NAME_MAX, NULL },
	{ "status", AT_ONE_OF, 0, 0, "open all" },
	ARG_END
};
static const struct api_arg answer_args[] = {
	{ "question_id", AT_STR, 1, API_NAME_MAX, NULL },
	{ "answer", AT_STR, 1, API_TEXT_MAX, NULL },
	{ "by", AT_STR, 0, API_NAME_MAX, NULL },
	{ "loop_id", AT_STR, 0, API_NAME_MAX, NULL },
	ARG_END
};

static const struct api_arg update_args[] = {
	{ "loop_id", AT_STR, 1, API_NAME_MAX, NULL },
	{ "title", AT_STR, 0, API_TEXT_MAX, NULL },
	{ "description", AT_STR, 0, API_TEXT_MAX, NULL },
	{ "max_iterations", AT_POS, 0, 0, NULL },
	{ "tags", AT_TAGS, 0, API_TARGETS_MAX, NULL },
	{ "priority", AT_ONE_OF, 0, 0, "low medium high" },
	{ "notes", AT_STR, 0, API_TEXT_MAX, NULL },
	ARG_END
};

/* The table; api_verb_names below lists it in the same order. */
static const struct api_verb api_table[] = {
	{ "spawn", api_spawn, spawn_args },
	{ "wait", api_wait, wait_args },
	{ "send_input", api_send_input, input_args },
	{ "close", api_close, close_args },
	{ "result", api_result, target_args },
	{ "list", api_list, no_args },
	{ "loop_open", api_loop_open, open_args },
	{ "loop_status", api_loop_status, loop_args },
	{ "loop_pause", api_loop_pause, loop_args },
	{ "loop_resume", api_loop_resume, resume_args },
	{ "loop_stop", api_loop_stop, loop_args },
	{ "loop_update", api_loop_update, update_args },
	{ "list_questions", api_questions_list, questions_args },
	{ "answer_question", api_question_answer, answer_args },
};

const char api_verb_names[] = "spawn, wait, send_input, close, result, "
    "list, loop_open, loop_status, loop_pause, loop_resume, loop_stop, "
    "loop_update, list_questions, answer_question";

/* What a type is called in an error. */
static const char *
api_type_name(const struct api_arg *a)
{
	switch (a->type) {
	case AT_STR:
		return "a string";
	case AT_MS:
		return "a non-negative integer";
	case AT_BOOL:
		return "a boolean";
	case AT_STRS:
		return "a non-empty array of strings";
	case AT_TAGS:
		return "an array of strings";
	case AT_ONE_OF:
		return "one of";
	case AT_POS:
		return "an integer >= 1";
	case AT_COUNT:
		return "an integer from 1 to";
	case AT_BUDGET:
		return "a budget object";
	}
	return "?";
}

/* Is w one of the space-separated words? */
static int
api_word_in(const char *w, const char *words)
{
	size_t	n = strlen(w);
	const char *p;

	for (p = words; *p != '\0'; p += strcspn(p, " "), p += *p == ' ')
		if (strncmp(p, w, n) == 0 && (p[n] == ' ' || p[n] == '\0') &&
		    n > 0)
			return 1;
	return 0;
}

/* One argument against its row: NULL, or why not (static or *buf). */
static const char *
api_check_arg(const struct api_arg *a, const json_t *v, char **buf)
{
	double	lim[BUDGET_NKINDS];
	size_t	i;

	switch (a->type) {
	case AT_STR:
		if (!json_is_string(v))
			return api_type_name(a);
		if (json_string_length(v) > a->max)
			xasprintf(buf, "at most %zu bytes (got %zu)", a->max,
			    json_string_length(v));
		else if (strlen(json_string_value(v)) != json_string_length(v))
			return "a string without NUL";
		return *buf;
	case AT_MS:
		return json_is_integer(v) && json_integer_value(v) >= 0 ?
		    NULL : api_type_name(a);
	case AT_POS:
		return json_is_integer(v) && json_integer_value(v) >= 1 ?
		    NULL : api_type_name(a);
	case AT_COUNT:
		if (json_is_integer(v) && json_integer_value(v) >= 1 &&
		    json_integer_value(v) <= (json_int_t)a->max)
			return NULL;
		xasprintf(buf, "an integer from 1 to %zu", a->max);
		return *buf;
	case AT_BOOL:
		return json_is_boolean(v) ? NULL : api_type_name(a);
	case AT_BUDGET:
		return budget_parse(v, lim, buf) == 0 ? NULL : *buf;
	case AT_ONE_OF:
		if (json_is_string(v) && api_word_in(json_string_value(v),
		    a->words))
			return NULL;
		xasprintf(buf, "one of: %s", a->words);
		return *buf;
	case AT_STRS:
	case AT_TAGS:
		if (!json_is_array(v) || (json_array_size(v) == 0 &&
		    a->type == AT_STRS))
			return api_type_name(a);
		if (json_array_size(v) > a->max) {
			xasprintf(buf, "at most %zu strings", a->max);
			return *buf;
		}
		for (i = 0; i < json_array_size(v); i++)
			if (!json_is_string(json_array_get(v, i)) ||
			    json_string_length(json_array_get(v, i)) >
			    API_NAME_MAX)
				return "an array of short strings";
		return NULL;
	}
	return "?";
}

/*
 * A member its row refuses: the message names the verb; "detail" says
 * it without (a front end quoting the member alone reads that).
 */
static void
api_fail_member(struct api_pending *p, const struct api_verb *vb,
    const struct api_arg *a, const char *why)
{
	json_t	*body;
	char	*d;

	xasprintf(&d, "\"%s\" must be %s", a->name, why);
	body = api_error_new(NULL, ERR_INVALID, "%s: %s", vb->name, d);
	json_object_del(body, "id");
	json_object_set_new(body, "detail", json_string(d));
	free(d);
	api_reply(p, body);
}

/* The request against the verb's row: 0, or -1 with the reply sent. */
static int
api_check(struct api_pending *p, const struct api_verb *vb, const json_t *req)
{
	const struct api_arg	*a;
	const char		*why;
	const json_t		*v;
	char			*buf = NULL;

	for (a = vb->args; a->name != NULL; a++) {
		v = json_object_get(req, a->name);
		if (v == NULL || json_is_null(v)) {
			if (!a->required)
				continue;
			api_fail(p, ERR_INVALID, "%s needs \"%s\": %s",
			    vb->name, a->name, api_type_name(a));
			return -1;
		}
		if ((why = api_check_arg(a, v, &buf)) != NULL) {
			api_fail_member(p, vb, a, why);
			free(buf);
			return -1;
		}
	}
	return 0;
}

/*
 * One request: a JSON object with "verb" and the verb's arguments; the
 * reply comes through cb, now or later (wait, close, the loop verbs).
 * A front end speaking JSON lines (the socket, control) calls this.
 */
void
api_call(struct api *api, const json_t *req, api_reply_cb cb, void *arg)
{
	api_call_as(api, req, "socket", cb, arg);
}

/*
 * The same from a named front end (via: static, "http", "mcp"): a
 * verb that records who acted through what (answer_question) reads it,
 * never the request (a client cannot claim another front end).
 */
void
api_call_as(struct api *api, const json_t *req, const char *via,
    api_reply_cb cb, void *arg)
{
	struct api_pending	*p = xcalloc(1, sizeof *p);
	const json_t		*id = json_object_get(req, "id"), *vj;
	const char		*verb;
	size_t			 i;

	p->api = api;
	p->id = json_incref(id != NULL ? (json_t *)id : json_null());
	p->cb = cb;
	p->arg = arg;
	p->via = via;
	TAILQ_INSERT_TAIL(&api->pending, p, entry);
	if (!json_is_object(req)) {
		api_fail(p, ERR_INVALID, "a request must be a JSON object");
		return;
	}
	vj = json_object_get(req, "verb");
	if ((verb = json_string_value(vj)) == NULL) {
		api_fail(p, ERR_INVALID, "no \"verb\" string");
		return;
	}
	for (i = 0; i < sizeof api_table / sizeof api_table[0]; i++)
		if (strcmp(api_table[i].name, verb) == 0)
			break;
	if (i == sizeof api_table / sizeof api_table[0]) {
		api_fail(p, ERR_INVALID, "unknown verb '%.64s' (%s)", verb,
		    api_verb_names);
		return;
	}
	if (api_check(p, &api_table[i], req) == 0)
		api_table[i].fn(p, req);
}

/* A string member or NULL (the row checked its type). */
static const char *
api_str(const json_t *req, const char *key)
{
	return json_string_value(json_object_get(req, key));
}

/* A checked integer member, or def when absent. */
static uint64_t
api_ms(const json_t *req, const char *key, uint64_t def)
{
	const json_t	*v = json_object_get(req, key);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : def;
}

/* spawn: the host plans the request from its configuration, then start. */
static void
api_spawn(struct api_pending *p, const json_t *req)
{
	struct api		*api = p->api;
	struct api_spawn	 sp;
	struct agent_req	 ar;
	struct agent		*a;
	char			*err = NULL, dir[PATH_MAX];

	if (api->host.plan == NULL) {
		api_fail(p, ERR_UNAVAILABLE,
		    "spawn: this front end cannot start agents");
		return;
	}
	if (api_ms(req, "attempts", 1) > 1) {	/* best-of-N: apiattempts.c */
		api_attempts_spawn(p, req);
		return;
	}
	api_spawn_fill(req, &sp);
	if (api_str(req, "cwd") != NULL) {
		if (api_spawn_cwd(p, api_str(req, "cwd"), dir) != 0)
			return;
		sp.cwd = dir;
	}
	memset(&ar, 0, sizeof ar);
	if (api->host.plan(api->host.plan_arg, &sp, &ar, &err) != 0) {
		api_fail(p, ERR_INVALID, "%s", err != NULL ? err :
		    "spawn refused");
		free(err);
		return;
	}
	a = agent_spawn(api->host.sup, &ar);
	json_decref(ar.options);
	api_reply(p, json_pack("{s:b, s:s}", "ok", 1, "agent_id", a->id));
}

/*
 * wait answered: each agent's status, and for each that ended with an
 * outcome kind that kind, so that a caller learns why without another
 * call (agent_result has the whole story).
 */
static void
api_waited(json_t *status, int timed_out, void *arg)
{
	struct api_pending	*p = arg;
	struct agent		*a;
	const char		*id;
	json_t			*v, *kinds = json_object();

	json_object_foreach(status, id, v) {
		a = agent_find(p->api->host.sup, id);
		if (a != NULL && agent_final(a) &&
		    report_kind(a) != OUTCOME_NONE)
			json_object_set_new(kinds, id,
			    json_string(outcome_name(report_kind(a))));
	}
	api_reply(p, json_pack("{s:b, s:O, s:b, s:o}", "ok", 1, "status",
	    status, "timed_out", timed_out, "error_kinds", kinds));
}

/* wait: targets, timeout_ms, mode any|all. */
static void
api_wait(struct api_pending *p, const json_t *req)
{
	const json_t	*t = json_object_get(req, "targets");
	const char	*mode = api_str(req, "mode");
	struct strv	 ids = { NULL, 0 };
	char		*err = NULL;
	size_t		 i;
	enum err_code	 code;

	if (api_attempts_wait(p, req, api_ms(req, "timeout_ms",
	    API_WAIT_MS)))
		return;
	for (i = 0; i < json_array_size(t); i++)
		strv_push(&ids, json_string_value(json_array_get(t, i)));
	if ((code = verbs_wait(p->api->verbs, ids.v, ids.n, api_ms(req,
	    "timeout_ms", API_WAIT_MS), mode != NULL && strcmp(mode, "all") ==
	    0, api_waited, p, &err)) != ERR_NONE) {
		api_fail(p, code, "%s", err);
		free(err);
	}
	strv_clear(&ids);
}

/* send_input acknowledged (or failed). */
static void
api_input_done(uint64_t sub, const char *how, const char *err, void *arg)
{
	if (err != NULL)
		api_fail(arg, ERR_UNAVAILABLE, "%s", err);
	else
		api_reply(arg, json_pack("{s:b, s:I, s:s?}", "ok", 1,
		    "submission_id", (json_int_t)sub, "delivery", how));
}

/* send_input: target, message, interrupt. */
static void
api_send_input(struct api_pending *p, const json_t *req)
{
	char		*err = NULL;
	enum err_code	 code;

	if ((code = verbs_send_input(p->api->verbs, api_str(req, "target"),
	    api_str(req, "message"), json_is_true(json_object_get(req,
	    "interrupt")), api_input_done, p, &err)) != ERR_NONE) {
		api_fail(p, code, "%s", err);
		free(err);
	}
}

/* close finished. */
static void
api_closed(const char *prev, void *arg)
{
	api_reply(arg, json_pack("{s:b, s:s}", "ok", 1, "previous_status",
	    prev));
}

/* close: target, grace_ms (the host's default when absent). */
static void
api_close(struct api_pending *p, const json_t *req)
{
	char		*err = NULL;
	enum err_code	 code;

	if (api_attempts_close(p, req))
		return;
	if ((code = verbs_close(p->api->verbs, api_str(req, "target"),
	    api_ms(req, "grace_ms", p->api->host.grace_ms), api_closed, p,
	    &err)) != ERR_NONE) {
		api_fail(p, code, "%s", err);
		free(err);
	}
}

/* result: the agent's report, at once. */
static void
api_result(struct api_pending *p, const json_t *req)
{
	const char	*target = api_str(req, "target");
	struct agent	*a;

	json_t		*rep;

	if ((a = agent_find(p->api->host.sup, target)) == NULL) {
		/* retired (retire.c): the report it left beside its log */
		if ((rep = retire_read(p->api->host.sup, target)) != NULL)
			api_reply(p, json_pack("{s:b, s:o}", "ok", 1,
			    "result", rep));
		else
			api_fail(p, ERR_NOT_FOUND, "unknown agent '%s'",
			    target);
		return;
	}
	api_reply(p, json_pack("{s:b, s:o}", "ok", 1, "result",
	    report_agent(a)));
}

/* list: every agent's status, at once. */
static void
api_list(struct api_pending *p, const json_t *req)
{
	struct agent	*a;
	json_t		*map = json_object();

	(void)req;
	TAILQ_FOREACH(a, &p->api->host.sup->agents, entry)
		json_object_set_new(map, a->id,
		    json_string(agent_status_name(a->status)));
	api_reply(p, json_pack("{s:b, s:o}", "ok", 1, "agents", map));
}

/* The table on a host's agent table and state directory. */
struct api *
api_new(const struct api_host *host)
{
	struct api	*api = xcalloc(1, sizeof *api);

	api->host = *host;
	if (api->host.grace_ms == 0)
		api->host.grace_ms = API_GRACE_MS;
	TAILQ_INIT(&api->pending);
	TAILQ_INIT(&api->groups);
	api->verbs = verbs_new(host->sup);
	api->dirfd = -1;
	(void)api_loop_init(api);
	return api;
}

/* Every call still pending is dropped unanswered (the host is going). */
void
api_free(struct api *api)
{
	struct api_pending	*p;

	if (api == NULL)
		return;
	api->freeing = 1;
	atomic_store(&api->stopping, 1);
	api_attempts_free(api);
	api_loop_free(api);
	verbs_free(api->verbs);
	while ((p = TAILQ_FIRST(&api->pending)) != NULL) {
		TAILQ_REMOVE(&api->pending, p, entry);
		json_decref(p->id);
		free(p);
	}
	free(api);
}

/* Nothing is waiting for a reply. */
int
api_idle(const struct api *api)
{
	return TAILQ_EMPTY(&api->pending) && verbs_idle(api->verbs) &&
	    !api_attempts_busy(api);
}

/*
 * The words an AT_ONE_OF argument of verb takes ("auto parallel"), or
 * NULL: a front end offering the choice (serve's page) reads them here,
 * so the list is written once, in the table.
 */
const char *
api_arg_words(const char *verb, const char *arg)
{
	const struct api_arg	*a;
	size_t			 i;

	for (i = 0; i < sizeof api_table / sizeof api_table[0]; i++) {
		if (strcmp(api_table[i].name, verb) != 0)
			continue;
		for (a = api_table[i].args; a->name != NULL; a++)
			if (a->type == AT_ONE_OF && strcmp(a->name, arg) == 0)
				return a->words;
	}
	return NULL;
}

/*
 * The front end is going (end of input, a signal): every agent not yet
 * closed gets the close ladder (TERM, grace, KILL), and a loop verb
 * waiting for a lock another program holds gives up.
 */
void
api_close_all(struct api *api, uint64_t grace_ms)
{
	struct agent	*a;
	char		*err = NULL;

	atomic_store(&api->stopping, 1);
	api_attempts_end(api);
	TAILQ_FOREACH(a, &api->host.sup->agents, entry)
		if ((a->phase == AP_SPAWNING || a->phase == AP_RUNNING) &&
		    agent_close(a, grace_ms != 0 ? grace_ms :
		    api->host.grace_ms, &err) != 0) {
			free(err);
			err = NULL;
		}
}

/* The verbs under the table, for a host that drives agents itself too. */
struct verbs *
api_verbs(const struct api *api)
{
	return api->verbs;
}
