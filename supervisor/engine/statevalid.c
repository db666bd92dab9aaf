/*
 * statevalid.c: a loop state checked against seed 000's LoopState: the
 * members' types as tables of rules (the engine's, then the sections of
 * the workflow's table), then the consistency rules across them (the
 * status rules here, the workflow's check).  Every error is a "path:
 * message" line for the caller.
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "budget.h"
#include "clock.h"
#include "flowdef.h"
#include "state.h"
#include "xmalloc.h"

/*
 * --- validation: seed 000's LoopState, as tables of member rules.  The
 * engine's members here; a workflow's sections come from its table.
 */
#define R	STATE_R
#define R_INT	STATE_R_INT
#define R_ENUM	STATE_R_ENUM
#define R_SUB	STATE_R_SUB
#define R_END	STATE_R_END
#define SKILL_MAX	32	/* skill_state's rules, the workflow's too */

struct state_vctx {
	struct strv	*errs;
	int		 n;
};

static const char *const state_statuses[] = { "created", "running", "paused",
    "completed", "failed", NULL };
static const char *const state_modes[] = { "interactive", "auto", "parallel",
    NULL };

static const struct state_vrule state_r_error[] = {
	R("action", V_STR, V_REQ), R("message", V_STR, V_REQ),
	R("timestamp", V_TS, V_REQ), R("kind", V_STR, 0),
	R("reason", V_STR, 0), R_END
};
/* skill_state's own members; the workflow's go between mode and errors. */
static const struct state_vrule state_r_head[] = {
	R("current_action", V_STR, V_REQ | V_NULL),
	R("last_action", V_STR, V_REQ | V_NULL),
	R("completed_actions", V_STRS, V_REQ),
	R_ENUM("mode", V_REQ, state_modes), R_END
};
/* skill_state.usage: the engine's sum of its workers' (ccw-loop/loop.c). */
static const struct state_vrule state_r_usage[] = {
	R_INT("input_tokens", V_REQ, 0), R_INT("output_tokens", V_REQ, 0),
	R("cost_usd", V_NUM, V_REQ | V_NULL),
	R_INT("wall_ms", 0, 0), R_END
};
static const struct state_vrule state_r_tail[] = {
	R_SUB("errors", V_LIST, V_REQ, state_r_error),
	R_INT("errors_dropped", 0, 0),
	R_SUB("usage", V_OBJ, V_NULL, state_r_usage), R_END
};
/* skill_state is checked on its own, against the rules built for it. */
static const struct state_vrule state_r_loop[] = {
	R("loop_id", V_STR, V_REQ), R("title", V_STR, V_REQ),
	R("description", V_STR, V_REQ), R_INT("max_iterations", V_REQ, 1),
	R_ENUM("status", V_REQ, state_statuses),
	R_INT("current_iteration", V_REQ, 0), R("created_at", V_TS, V_REQ),
	R("updated_at", V_TS, V_REQ), R("completed_at", V_TS, V_NULL),
	R("failure_reason", V_STR, V_NULL),
	R_SUB("budget", V_OBJ, V_NULL, budget_vrules),
	R("pause_reason", V_STR, V_NULL),
	R("skill_state", V_OBJ, V_NULL), R_END
};

/* Errors are "path: message" so that a person finds the field at once. */
void
state_verr(struct state_vctx *v, const char *path, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg, *line;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		msg = NULL;
	va_end(ap);
	xasprintf(&line, "%s: %s", *path != '\0' ? path : "state",
	    msg != NULL ? msg : "?");
	if (v->errs != NULL)
		strv_push(v->errs, line);
	free(line);
	free(msg);
	v->n++;
}

/* A JSON value's kind, for messages. */
static const char *
state_vkind(const json_t *j)
{
	static const char *const kinds[] = { "an object", "an array",
	    "a string", "an integer", "a real", "a boolean", "a boolean",
	    "null" };

	return kinds[json_typeof(j)];
}

/* An integer, or a real with no fraction (a JavaScript number is both). */
int
state_json_int(const json_t *j, long long *out)
{
	double	d;

	if (json_is_integer(j)) {
		*out = json_integer_value(j);
		return 1;
	}
	if (!json_is_real(j))
		return 0;
	d = json_real_value(j);
	if (!(d > -9e18 && d < 9e18) || d != (double)(long long)d)
		return 0;
	*out = (long long)d;
	return 1;
}

/* Whether a (non-null) value has the rule's type. */
static int
state_vtype(const json_t *j, int type)
{
	long long	ll;

	switch (type) {
	case V_STR:
	case V_ENUM:	return json_is_string(j);
	case V_INT:	return state_json_int(j, &ll);
	case V_NUM:
	case V_PCT:	return json_is_number(j);
	case V_BOOL:	return json_is_boolean(j);
	case V_TS:	return json_is_string(j) &&
			    clock_iso_valid(json_string_value(j));
	case V_OBJ:	return json_is_object(j);
	default:	return json_is_array(j);
	}
}

/*
 * A member's path ("pfx.key"), built only when it is needed (an error, a
 * member to go into): formatting it for every member was a tenth of a
 * commit's CPU (issue 30).
 */
static const char *
state_vpath(char *buf, size_t len, const char *pfx, const char *key)
{
	snprintf(buf, len, "%s%s%s", pfx, *pfx ? "." : "", key);
	return buf;
}

/* A value that has the right type but may still be out of bounds. */
static void
state_vvalue(struct state_vctx *v, const json_t *j, const char *pfx,
    const struct state_vrule *r)
{
	char		 list[128], path[256];
	size_t		 off = 0;
	long long	 ll;
	int		 i;

	if (r->type == V_ENUM) {
		for (i = 0; r->names[i] != NULL; i++)
			if (strcmp(json_string_value(j), r->names[i]) == 0)
				return;
		list[0] = '\0';
		for (i = 0; r->names[i] != NULL && off < sizeof list; i++)
			off += (size_t)snprintf(list + off, sizeof list - off,
			    "%s%s", i > 0 ? "|" : "", r->names[i]);
		state_verr(v, state_vpath(path, sizeof path, pfx, r->key),
		    "'%.40s' is not one of %s", json_string_value(j), list);
	} else if (r->type == V_INT && state_json_int(j, &ll) && ll < r->min)
		state_verr(v, state_vpath(path, sizeof path, pfx, r->key),
		    "%lld is less than %lld", ll, r->min);
	else if (r->type == V_PCT && !(json_number_value(j) >= 0 &&
	    json_number_value(j) <= 100))
		state_verr(v, state_vpath(path, sizeof path, pfx, r->key),
		    "%g is not within 0-100", json_number_value(j));
}

/* An object against its rules, into members that are objects or lists. */
static void
state_vobject(struct state_vctx *v, const json_t *o, const char *pfx,
    const struct state_vrule *rules)
{
	static const char *const names[] = { "a string", "an integer",
	    "a number", "a number", "a boolean", "an ISO 8601 timestamp",
	    "a string", "an object", "an array", "an array" };
	const struct state_vrule	*r;
	const json_t			*j, *e;
	char				 path[256], ep[300];
	size_t				 i;

	for (r = rules; r->key != NULL; r++) {
		if ((j = json_object_get(o, r->key)) == NULL) {
			if (r->fl & V_REQ)
				state_verr(v, state_vpath(path, sizeof path,
				    pfx, r->key), "missing");
		} else if (json_is_null(j)) {
			if (!(r->fl & V_NULL))
				state_verr(v, state_vpath(path, sizeof path,
				    pfx, r->key), "must be %s, not null",
				    names[r->type]);
		} else if (!state_vtype(j, r->type)) {
			state_vpath(path, sizeof path, pfx, r->key);
			if (r->type == V_TS && json_is_string(j))
				state_verr(v, path, "'%.40s' is not an ISO 8601 "
				    "timestamp", json_string_value(j));
			else
				state_verr(v, path, "must be %s, not %s",
				    names[r->type], state_vkind(j));
		} else if (r->type == V_OBJ && r->sub != NULL)
			state_vobject(v, j, state_vpath(path, sizeof path, pfx,
			    r->key), r->sub);
		else if (r->type == V_LIST || r->type == V_STRS) {
			state_vpath(path, sizeof path, pfx, r->key);
			json_array_foreach(j, i, e) {
				if (r->type == V_STRS && json_is_string(e))
					continue;
				snprintf(ep, sizeof ep, "%s[%zu]", path, i);
				if (r->type == V_STRS || !json_is_object(e))
					state_verr(v, ep, "must be %s, not %s",
					    r->type == V_STRS ? "a string" :
					    "an object", state_vkind(e));
				else
					state_vobject(v, e, ep, r->sub);
			}
		} else
			state_vvalue(v, j, pfx, r);
	}
}

/*
 * Any document against a rule table (a workflow whose state file is not
 * a LoopState: skill-tune's TuningState), with the same types and
 * messages.  Returns the number of errors, each appended to errs.
 */
int
state_check_rules(const json_t *o, const struct state_vrule *rules,
    struct strv *errs)
{
	struct state_vctx	 v = { errs, 0 };

	if (!json_is_object(o))
		state_verr(&v, "", "not a JSON object");
	else
		state_vobject(&v, o, "", rules);
	return v.n;
}

/*
 * skill_state's rules: the engine's, the workflow's sections, errors;
 * current_action is one of the workflow's roles.  Returns the count.
 */
static size_t
state_vskill(const struct workflow_state *ws, struct state_vrule *out)
{
	const struct state_vrule	*r;
	size_t				 n = 0;

	for (r = state_r_head; r->key != NULL; r++)
		out[n++] = *r;
	if (ws != NULL && ws->roles != NULL) {
		out[0].type = V_ENUM;
		out[0].names = ws->roles;
	}
	for (r = ws != NULL ? ws->rules : NULL; r != NULL && r->key != NULL &&
	    n < SKILL_MAX - 3; r++)
		out[n++] = *r;
	for (r = state_r_tail; r->key != NULL; r++)
		out[n++] = *r;
	out[n] = *r;
	return n;
}

/*
 * Every error, not just the first, so that one look at a broken file
 * shows all that is wrong with it.  Unknown members are fine.  Returns
 * the number of errors (0: valid).
 */
int
state_validate(const struct workflow_state *ws, const json_t *st,
    struct strv *errs)
{
	struct state_vctx	 v = { errs, 0 };
	struct state_vrule	 skill[SKILL_MAX];
	const json_t		*j, *ss;
	const char		*status;
	long long		 cur, max;
	int			 has, i;

	if (!json_is_object(st)) {
		state_verr(&v, "", "not a JSON object");
		return v.n;
	}
	state_vobject(&v, st, "", state_r_loop);
	ss = json_object_get(st, "skill_state");
	if (json_is_object(ss)) {
		state_vskill(ws, skill);
		state_vobject(&v, ss, "skill_state", skill);
	}
	if ((j = json_object_get(st, "loop_id")) != NULL && json_is_string(j) &&
	    !state_id_valid(json_string_value(j)))
		state_verr(&v, "loop_id", "'%.40s' is not a valid loop id",
		    json_string_value(j));
	if (ws != NULL && ws->check != NULL)
		ws->check(st, &v);
	if (state_json_int(json_object_get(st, "current_iteration"), &cur) &&
	    state_json_int(json_object_get(st, "max_iterations"), &max) && cur > max)
		state_verr(&v, "current_iteration", "%lld exceeds "
		    "max_iterations %lld", cur, max);
	status = json_string_value(json_object_get(st, "status"));
	for (i = 0; status != NULL && state_statuses[i] != NULL; i++)
		if (strcmp(status, state_statuses[i]) == 0)
			break;
	if (status == NULL || state_statuses[i] == NULL)
		return v.n;	/* reported above; the rules below need one */
	/* an ended loop (completed or failed: CCW's stop) has its end time */
	j = json_object_get(st, "completed_at");
	has = j != NULL && !json_is_null(j);
	if (strcmp(status, "completed") == 0 && !has)
		state_verr(&v, "completed_at", "missing although status is %s",
		    status);
	else if (has && strcmp(status, "completed") != 0 &&
	    strcmp(status, "failed") != 0)
		state_verr(&v, "completed_at", "present although status is %s",
		    status);
	j = json_object_get(st, "failure_reason");
	if (j != NULL && !json_is_null(j) && strcmp(status, "failed") != 0)
		state_verr(&v, "failure_reason", "present although status is %s",
		    status);
	if (ws != NULL && ws->check_status != NULL)
		ws->check_status(st, &v);
	return v.n;
}
