/*
 * verbs.c: wait, send_input and close as asynchronous requests with
 * their own timers.  A request ends in exactly one callback: satisfied,
 * timed out, or failed.  A child's own deadline is never relied on.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "chan.h"
#include "clock.h"
#include "log.h"
#include "retire.h"
#include "sup.h"
#include "xmalloc.h"

#define INPUT_ACK_MS	10000

enum req_kind { REQ_WAIT, REQ_INPUT, REQ_CLOSE };

struct req {
	TAILQ_ENTRY(req)	 entry;
	struct verbs		*v;
	enum req_kind		 kind;
	struct event		*timer;
	uint64_t		 due;		/* its timer's, clock_mono_ms */
	uint64_t		 left;		/* stood still: what it had left */
	int			 still;		/* a target is frozen */
	void			*arg;
	/* wait */
	struct strv		 targets;
	int			 all;
	verbs_wait_cb		 wait_cb;
	/* send_input */
	char			 agent_id[24];
	uint64_t		 submission;
	int			 resumed;	/* by a new turn: no ack */
	verbs_input_cb		 input_cb;
	/* close */
	char			*previous;
	verbs_close_cb		 close_cb;
};

TAILQ_HEAD(req_list, req);

struct verbs {
	struct sup	*sup;
	struct req_list	 reqs;
};

/* Unlink and free a request. */
static void
req_free(struct req *r)
{
	TAILQ_REMOVE(&r->v->reqs, r, entry);
	if (r->timer != NULL)
		event_free(r->timer);
	strv_clear(&r->targets);
	free(r->previous);
	free(r);
}

/*
 * A retired agent's final status (retire.c: its report beside its log),
 * or NULL: a wait on an agent that finished and retired is satisfied.
 */
static json_t *
verbs_retired(struct verbs *v, const char *id)
{
	json_t	*rep = retire_read(v->sup, id), *st;

	st = json_incref(json_object_get(rep, "agent_status"));
	json_decref(rep);
	if (st != NULL && !json_is_string(st)) {
		json_decref(st);
		st = NULL;
	}
	return st;
}

/* The status map of a wait's targets, and whether it is satisfied. */
static json_t *
verbs_status(struct verbs *v, const struct strv *t, int all, int *satisfied)
{
	json_t		*map = json_object(), *st;
	struct agent	*a;
	size_t		 i, nfinal = 0;

	for (i = 0; i < t->n; i++) {
		a = agent_find(v->sup, t->v[i]);
		st = a == NULL ? verbs_retired(v, t->v[i]) : NULL;
		json_object_set_new(map, t->v[i], st != NULL ? st :
		    json_string(a == NULL ? "not_found" :
		    agent_status_name(a->status)));
		if (a == NULL || agent_final(a))
			nfinal++;
	}
	*satisfied = all ? nfinal == t->n : nfinal > 0;
	return map;
}

/* Answer a wait and forget it. */
static void
verbs_wait_finish(struct req *r, int timed_out)
{
	json_t	*map;
	int	 sat;

	map = verbs_status(r->v, &r->targets, r->all, &sat);
	r->wait_cb(map, timed_out, r->arg);
	json_decref(map);
	req_free(r);
}

/* A timer of any request fired. */
static void
verbs_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct req	*r = arg;

	(void)fd;
	(void)ev;
	switch (r->kind) {
	case REQ_WAIT:
		verbs_wait_finish(r, 1);
		break;
	case REQ_INPUT:
		if (r->input_cb == NULL)
			;
		else if (r->resumed)
			r->input_cb(r->submission, "turn", NULL, r->arg);
		else
			r->input_cb(0, NULL, "no acknowledgement from the worker",
			    r->arg);
		req_free(r);
		break;
	case REQ_CLOSE:
		/* agent_close's own timer kills; we only keep waiting. */
		break;
	}
}

/* Is an agent the request is about frozen (freeze.c)? */
static int
verbs_frozen(const struct req *r)
{
	struct agent	*a;
	size_t		 i;

	if (r->kind == REQ_INPUT)
		return (a = agent_find(r->v->sup, r->agent_id)) != NULL &&
		    a->frozen;
	for (i = 0; r->kind == REQ_WAIT && i < r->targets.n; i++)
		if ((a = agent_find(r->v->sup, r->targets.v[i])) != NULL &&
		    a->frozen)
			return 1;
	return 0;
}

/*
 * A request's timer stands still while an agent it is about is frozen,
 * what it had left kept, and runs on with that once none is: a frozen
 * worker's deadlines are not spent while it cannot work.
 */
static void
verbs_still(struct req *r)
{
	uint64_t	now = clock_mono_ms();
	int		still = verbs_frozen(r);

	if (r->timer == NULL || still == r->still)
		return;
	r->still = still;
	if (still) {
		r->left = r->due > now ? r->due - now : 0;
		event_del(r->timer);
		return;
	}
	r->due = now + r->left;
	chan_arm_ms(r->timer, r->left);
}

/* Arm a request's timer (standing still if its agent is frozen). */
static void
verbs_arm(struct req *r, uint64_t ms)
{
	r->timer = evtimer_new(r->v->sup->base, verbs_timer_cb, r);
	r->due = clock_mono_ms() + ms;
	chan_arm_ms(r->timer, ms);
	verbs_still(r);
}

/* An agent was frozen or thawed: the timers of its requests follow. */
static void
verbs_on_frozen(struct agent *a, int frozen, void *arg)
{
	struct verbs	*v = arg;
	struct req	*r;

	(void)a;
	(void)frozen;
	TAILQ_FOREACH(r, &v->reqs, entry)
		verbs_still(r);
}

/* An agent became DONE: answer waits and closes that it satisfies. */
static void
verbs_on_done(struct agent *a, void *arg)
{
	struct verbs	*v = arg;
	struct req	*r, *next;
	json_t		*map;
	int		 sat;

	for (r = TAILQ_FIRST(&v->reqs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, entry);
		if (r->kind == REQ_WAIT) {
			map = verbs_status(v, &r->targets, r->all, &sat);
			json_decref(map);
			if (sat)
				verbs_wait_finish(r, 0);
		} else if (r->kind == REQ_CLOSE &&
		    strcmp(r->agent_id, a->id) == 0) {
			r->close_cb(r->previous, r->arg);
			req_free(r);
		} else if (r->kind == REQ_INPUT && !r->resumed &&
		    strcmp(r->agent_id, a->id) == 0) {
			if (r->input_cb != NULL)
				r->input_cb(0, NULL, "agent ended before "
				    "acknowledging input", r->arg);
			req_free(r);
		}
	}
}

/* An INPUT_ACK arrived. */
static void
verbs_on_ack(struct agent *a, uint64_t sub, const char *delivery,
    const char *error, void *arg)
{
	struct verbs	*v = arg;
	struct req	*r;

	TAILQ_FOREACH(r, &v->reqs, entry)
		if (r->kind == REQ_INPUT && r->submission == sub &&
		    strcmp(r->agent_id, a->id) == 0)
			break;
	if (r == NULL)
		return;
	if (r->input_cb != NULL)
		r->input_cb(sub, error != NULL ? NULL : delivery, error, r->arg);
	req_free(r);
}

/* Attach to the table's hooks. */
struct verbs *
verbs_new(struct sup *s)
{
	struct verbs	*v = xcalloc(1, sizeof *v);

	v->sup = s;
	TAILQ_INIT(&v->reqs);
	s->hooks.done = verbs_on_done;
	s->hooks.input_ack = verbs_on_ack;
	s->hooks.frozen = verbs_on_frozen;
	s->hooks_arg = v;
	return v;
}

/* Drop pending requests without answering them (shutdown). */
void
verbs_free(struct verbs *v)
{
	while (!TAILQ_EMPTY(&v->reqs))
		req_free(TAILQ_FIRST(&v->reqs));
	v->sup->hooks.done = NULL;
	v->sup->hooks.input_ack = NULL;
	v->sup->hooks.frozen = NULL;
	free(v);
}

/*
 * The owner of arg's pending send_inputs is going: they are never
 * answered.  They stay listed until their own end (ack, timer, the
 * agent's end), so a request list being walked is not changed under it.
 */
void
verbs_cancel_inputs(struct verbs *v, void *arg)
{
	struct req	*r;

	TAILQ_FOREACH(r, &v->reqs, entry)
		if (r->kind == REQ_INPUT && r->arg == arg)
			r->input_cb = NULL;
}

/* No request is pending. */
int
verbs_idle(struct verbs *v)
{
	return TAILQ_EMPTY(&v->reqs);
}

/* A new request of the given kind, linked in. */
static struct req *
req_new(struct verbs *v, enum req_kind kind, void *arg)
{
	struct req	*r = xcalloc(1, sizeof *r);

	r->v = v;
	r->kind = kind;
	r->arg = arg;
	TAILQ_INSERT_TAIL(&v->reqs, r, entry);
	return r;
}

/*
 * wait(targets, timeout, any|all).  Unknown targets are an error.  A wait
 * that is satisfied already answers at once; on timeout nothing is killed.
 */
enum err_code
verbs_wait(struct verbs *v, char *const *targets, size_t n,
    uint64_t timeout_ms, int all, verbs_wait_cb cb, void *arg, char **err)
{
	struct req	*r;
	json_t		*map;
	size_t		 i;
	int		 sat;

	if (n == 0) {
		*err = xstrdup("wait needs at least one target");
		return ERR_INVALID;
	}
	for (i = 0; i < n; i++) {
		if (agent_find(v->sup, targets[i]) != NULL)
			continue;
		if ((map = verbs_retired(v, targets[i])) == NULL) {
			xasprintf(err, "unknown agent '%s'", targets[i]);
			return ERR_NOT_FOUND;
		}
		json_decref(map);
	}
	r = req_new(v, REQ_WAIT, arg);
	r->all = all;
	r->wait_cb = cb;
	for (i = 0; i < n; i++)
		strv_push(&r->targets, targets[i]);
	map = verbs_status(v, &r->targets, all, &sat);
	json_decref(map);
	if (sat) {
		verbs_wait_finish(r, 0);
		return 0;
	}
	verbs_arm(r, timeout_ms);
	return 0;
}

/* send_input: answered when the worker acknowledges, or after 10 s. */
enum err_code
verbs_send_input(struct verbs *v, const char *id, const char *text,
    int interrupt, verbs_input_cb cb, void *arg, char **err)
{
	return verbs_send_input_within(v, id, text, interrupt, INPUT_ACK_MS,
	    cb, arg, err);
}

/*
 * send_input, the acknowledgement awaited at most ack_ms: a driver with
 * deadlines of its own (the ladder's nudge) bounds it by them.
 */
enum err_code
verbs_send_input_within(struct verbs *v, const char *id, const char *text,
    int interrupt, uint64_t ack_ms, verbs_input_cb cb, void *arg, char **err)
{
	struct agent	*a = agent_find(v->sup, id);
	struct req	*r;
	uint64_t	 sub;
	int		 rc;

	if (a == NULL) {
		xasprintf(err, "unknown agent '%s'", id);
		return ERR_NOT_FOUND;
	}
	if ((rc = agent_send_input(a, text, interrupt, &sub, err)) < 0)
		return ERR_CONFLICT;	/* not running, or its channel failed */
	r = req_new(v, REQ_INPUT, arg);
	snprintf(r->agent_id, sizeof r->agent_id, "%s", a->id);
	r->submission = sub;
	r->input_cb = cb;
	/* a new turn (turn.c) is the delivery: answered on the next pass */
	r->resumed = rc == 1;
	verbs_arm(r, r->resumed ? 0 : ack_ms);
	return 0;
}

/* close: answered once the worker and its tool are gone. */
enum err_code
verbs_close(struct verbs *v, const char *id, uint64_t grace_ms,
    verbs_close_cb cb, void *arg, char **err)
{
	struct agent	*a = agent_find(v->sup, id);
	struct req	*r;
	const char	*prev;

	if (a == NULL) {
		xasprintf(err, "unknown agent '%s'", id);
		return ERR_NOT_FOUND;
	}
	prev = agent_status_name(a->status);
	if (a->result.type == MSG_RESULT && !agent_final(a))
		prev = "completed";
	r = req_new(v, REQ_CLOSE, arg);
	snprintf(r->agent_id, sizeof r->agent_id, "%s", a->id);
	r->previous = xstrdup(prev);
	r->close_cb = cb;
	if (agent_close(a, grace_ms, err) != 0) {
		req_free(r);
		return ERR_CONFLICT;	/* already closed */
	}
	if (agent_final(a)) {
		r->close_cb(r->previous, r->arg);
		req_free(r);
	}
	return 0;
}
