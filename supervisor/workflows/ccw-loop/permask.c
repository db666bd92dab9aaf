/*
 * permask.c: a CLI's permission request (a role with ask_permissions,
 * issue 29) as a question of kind "permission" in the loop's queue:
 * options allow and deny, recommended by the role's permission, under
 * its question_timeout_ms and on_question_timeout.  The answer goes
 * back to the live worker (agent_perm_reply); the tool waits meanwhile.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "loopint.h"
#include "question.h"
#include "xmalloc.h"

#define PERMASK_DETAIL_MAX	200	/* the input's bytes in the text */
#define PERMASK_INPUT_MAX	4096	/* a larger input is not kept */

/* One request waiting for its question's answer. */
struct permask {
	TAILQ_ENTRY(permask)	 entry;
	char			 agent_id[24];
	uint64_t		 req;		/* the worker's id of it */
	char			 qid[QUESTION_ID_LEN + 1];
	int			 policy;	/* on_question_timeout */
	uint64_t		 deadline;	/* clock_mono_ms; 0: none */
	int			 told;		/* question_asked told */
};

/* What the question says of the input: its command or path, else JSON. */
static char *
permask_detail(const json_t *input)
{
	const char	*s = json_string_value(json_object_get(input,
			    "command"));
	char		*d, *j = NULL;
	size_t		 n;

	if (s == NULL)
		s = json_string_value(json_object_get(input, "file_path"));
	if (s == NULL)
		s = j = json_dumps(input != NULL ? input : json_null(),
		    JSON_COMPACT | JSON_ENCODE_ANY);
	if (s == NULL)
		s = "";
	n = strnlen(s, PERMASK_DETAIL_MAX);
	while (n > 0 && s[n] != '\0' && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;		/* not inside a UTF-8 sequence */
	d = xstrndup(s, n);
	free(j);
	return d;
}

/*
 * The recommended answer: what the role's permission allows unasked.
 * A read-only role's tool may change nothing, so deny; else allow.
 */
static const char *
permask_recommended(const struct agent *a)
{
	const char	*p = json_string_value(json_object_get(a->options,
			    "permission"));

	return p != NULL && strcmp(p, "read-only") == 0 ? "deny" : "allow";
}

/* Whether an answer lets the tool use go on ("allow", "yes"). */
static int
permask_allows(const char *answer)
{
	return strcasecmp(answer, "allow") == 0 ||
	    strcasecmp(answer, "yes") == 0;
}

/* The question's record: kind permission, the tool and its input. */
static json_t *
permask_record(struct loop *l, const struct agent *a,
    const struct msg_perm_ask *ask, uint64_t tmo)
{
	json_t	*wq, *rec;
	char	*detail = permask_detail(ask->input), *text, *dump, now[40];

	xasprintf(&text, "%s asks to use %s: %s", a->tool, ask->tool_name,
	    detail);
	wq = json_pack("{s:s, s:[s, s], s:s, s:s?}", "question", text,
	    "options", "allow", "deny", "recommended", permask_recommended(a),
	    "id", ask->tool_use_id);
	clock_iso(NULL, 1, now, sizeof now);
	rec = question_record(l->cfg.id, a->id, a->role, wq, tmo, now);
	json_object_set_new(rec, "kind", json_string("permission"));
	json_object_set_new(rec, "tool_name", json_string(ask->tool_name));
	dump = json_dumps(ask->input, JSON_COMPACT | JSON_ENCODE_ANY);
	if (ask->input != NULL && dump != NULL &&
	    strlen(dump) <= PERMASK_INPUT_MAX)
		json_object_set(rec, "input", ask->input);
	free(dump);
	free(detail);
	free(text);
	json_decref(wq);
	return rec;
}

/* Forget a request (its question answered, expired or moot). */
static void
permask_free(struct loop *l, struct permask *p)
{
	TAILQ_REMOVE(&l->perms, p, entry);
	free(p);
}

/* The answer down to the worker: allow, or deny with the reason. */
static void
permask_reply(struct loop *l, struct permask *p, const char *answer)
{
	struct agent	*a = agent_find(&l->sup, p->agent_id);
	char		*why = NULL;

	if (a != NULL && !permask_allows(answer))
		xasprintf(&why, "denied by the operator%s%s", strcasecmp(answer,
		    "deny") != 0 ? ": " : "", strcasecmp(answer, "deny") != 0 ?
		    answer : "");
	if (a != NULL)
		(void)agent_perm_reply(a, p->req, permask_allows(answer), why);
	free(why);
	permask_free(l, p);
}

/*
 * The deadline passed: recommended answers for the role's permission;
 * fail and pause deny, and the loop ends failed or paused saying why.
 */
static int
permask_expired(struct loop *l, struct permask *p, json_t *q)
{
	const char	*pol = question_policies[p->policy];
	const char	*rec = json_string_value(json_object_get(q,
			    "recommended"));
	char		*reason;
	int		 policy = p->policy;

	loop_event(l, "question_expired", json_pack("{s:s, s:s}",
	    "question_id", p->qid, "policy", pol));
	prompt_record(l->store, json_pack("{s:s, s:s, s:s}", "event",
	    "question_expired", "question_id", p->qid, "policy", pol));
	if (policy == QP_RECOMMENDED && rec != NULL) {
		questions_answer(l, q, rec, NULL, "policy");
		permask_reply(l, p, rec);
		return 0;
	}
	question_expire(q);
	permask_reply(l, p, "deny");
	xasprintf(&reason, "%s: a permission request was not answered in "
	    "time (on_question_timeout %s)", json_string_value(
	    json_object_get(q, "role")), pol);
	if (policy == QP_PAUSE)
		state_store_update(l->store, json_pack("{s:s}",
		    "pause_reason", reason));
	loop_end(l, policy == QP_PAUSE ? EXIT_PAUSED : EXIT_FAILED,
	    policy == QP_PAUSE ? "pause" : "failed", reason);
	free(reason);
	return 1;
}

/*
 * One request against its record: answered goes down; gone (its worker
 * ended, or the record was dropped) is forgotten, the record expired;
 * past its deadline the policy.  1 when the state changed, 2 when the
 * loop ended too (its requests are gone).
 */
static int
permask_check(struct loop *l, struct permask *p, uint64_t now)
{
	json_t		*q = question_find(json_object_get(l->ss,
			    "questions"), p->qid);
	struct agent	*a = agent_find(&l->sup, p->agent_id);
	const char	*st = json_string_value(json_object_get(q, "status"));

	if (q != NULL && st != NULL && strcmp(st, "answered") == 0) {
		permask_reply(l, p, json_string_value(json_object_get(q,
		    "answer")));
		return 0;
	}
	if (q == NULL || !question_is_open(q) || a == NULL ||
	    a->phase != AP_RUNNING) {
		if (q != NULL && question_is_open(q))
			question_expire(q);
		permask_free(l, p);
		return 1;
	}
	if (p->deadline == 0 || now < p->deadline)
		return 0;
	return permask_expired(l, p, q) + 1;
}

/*
 * Every LOOP_ASK_POLL_MS while requests wait: the answers file's new
 * lines taken, each request checked.  Held, the deadlines stand still.
 */
static void
permask_poll_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct loop	*l = arg;
	struct permask	*p, *next;
	struct timeval	 tv = { 0, LOOP_ASK_POLL_MS * 1000 };
	uint64_t	 now = clock_mono_ms();
	int		 changed, rc;

	(void)fd;
	(void)ev;
	changed = questions_take(l) > 0;
	for (p = TAILQ_FIRST(&l->perms); p != NULL; p = next) {
		next = TAILQ_NEXT(p, entry);
		if (loop_held(l) && p->deadline != 0)
			p->deadline += LOOP_ASK_POLL_MS;
		if ((rc = permask_check(l, p, now)) == 2)
			return;		/* the loop ended: saved, told */
		changed |= rc;
	}
	if (changed)
		l->save(l, l->saved);
	/* the lines taken may answer a step's clarification too: look now */
	if (changed && l->phase == LP_ASKING)
		event_active(l->ask_ev, EV_TIMEOUT, 0);
	if (!TAILQ_EMPTY(&l->perms) && l->perm_ev != NULL)
		evtimer_add(l->perm_ev, &tv);
}

/*
 * Whether a person is asked at the terminal (hooks.permission: the
 * interactive mode, or a host's ask_always): then no deadline is no
 * answer at once, the request waits for that person.
 */
static int
permask_prompts(const struct loop *l)
{
	return l->cfg.hooks.permission != NULL &&
	    (l->cfg.mode == LOOP_INTERACTIVE || l->cfg.ask_always);
}

/* The record is in the state file: front ends may answer it now. */
static void
permask_saved(struct state_store *s, int rc, const char *err, void *arg)
{
	struct loop	*l = arg;
	struct permask	*p;
	json_t		*q;

	l->saved(s, rc, err, arg);
	TAILQ_FOREACH(p, &l->perms, entry)
		if (!p->told && (q = question_find(json_object_get(l->ss,
		    "questions"), p->qid)) != NULL && question_is_open(q)) {
			p->told = 1;
			loop_event(l, "question_asked", json_pack("{s:O}",
			    "question", q));
			if (permask_prompts(l))
				l->cfg.hooks.permission(l->cfg.hooks.arg, q);
		}
}

/*
 * sup.perm: a worker of this loop asks leave for a tool use.  A record
 * in the queue; with no question_timeout_ms (headless) the recommended
 * answer at once, else the wait for a front end's answer (with none,
 * when the terminal prompts: permask_prompts).
 */
int
permask_on_ask(struct agent *a, const struct msg_perm_ask *ask, void *arg)
{
	struct loop		*l = arg;
	const struct config	*c = l->cfg.config;
	int			 role = workflow_role_index(l->wf, a->role);
	struct permask		*p;
	json_t			*rec;
	uint64_t		 tmo = 0;
	struct timeval		 tv = { 0, LOOP_ASK_POLL_MS * 1000 };

	p = xcalloc(1, sizeof *p);
	snprintf(p->agent_id, sizeof p->agent_id, "%s", a->id);
	p->req = ask->id;
	p->policy = QP_RECOMMENDED;
	if (c != NULL && role >= 0 && (size_t)role < c->nroles) {
		tmo = c->roles[role].question_timeout_ms;
		p->policy = c->roles[role].on_question_timeout;
	}
	rec = permask_record(l, a, ask, tmo);
	snprintf(p->qid, sizeof p->qid, "%s", json_string_value(
	    json_object_get(rec, "id")));
	questions_add(l, rec);
	TAILQ_INSERT_TAIL(&l->perms, p, entry);
	if (tmo == 0 && !permask_prompts(l)) {
		loop_event(l, "question_asked", json_pack("{s:O}", "question",
		    rec));
		questions_answer(l, rec, permask_recommended(a), NULL,
		    "policy");
		permask_reply(l, p, permask_recommended(a));
		json_decref(rec);
		l->save(l, l->saved);
		return 0;
	}
	json_decref(rec);
	p->deadline = tmo != 0 ? clock_mono_ms() + tmo : 0;
	if (l->perm_ev == NULL)
		l->perm_ev = evtimer_new(l->base, permask_poll_cb, l);
	evtimer_add(l->perm_ev, &tv);
	l->save(l, permask_saved);
	return 0;
}

/*
 * The loop finishes (loop_finish): its workers are gone, so no request
 * will be answered; their records expire before the state's last save
 * (each relay denied as its worker went).
 */
void
permask_drop(struct loop *l)
{
	struct permask	*p;
	json_t		*q;

	while ((p = TAILQ_FIRST(&l->perms)) != NULL) {
		q = question_find(json_object_get(l->ss, "questions"), p->qid);
		if (q != NULL && question_is_open(q))
			question_expire(q);
		permask_free(l, p);
	}
	if (l->perm_ev != NULL)
		evtimer_del(l->perm_ev);
}

/* The loop is freed: what is left goes (its workers are gone). */
void
permask_end(struct loop *l)
{
	while (!TAILQ_EMPTY(&l->perms))
		permask_free(l, TAILQ_FIRST(&l->perms));
	if (l->perm_ev != NULL)
		event_free(l->perm_ev);
	l->perm_ev = NULL;
}
