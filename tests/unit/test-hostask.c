/*
 * test-hostask.c: a hosted loop's questions through its observer
 * (host.h's ask and host_loop_answer): an auto loop whose workers ask
 * (CLARIFICATION_NEEDED) hears them at the observer, and the answer the
 * observer gives (not the Recommended one) reaches the worker's re-run;
 * no answer fails the step "no answer was given"; without an ask hook
 * the loop still takes the Recommended option itself.
 */
#include <config.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "ccw-loop.h"
#include "hostfix.h"
#include "log.h"
#include "state.h"
#include "sup.h"
#include "tap.h"
#include "xmalloc.h"

/* One loop of the test and what its observer saw. */
struct asked {
	struct hostfix	*h;
	const char	*answer;	/* NULL: answer none */
	int		 nask;		/* ask calls */
	int		 role_ok;	/* every ask named a role */
	int		 nq;		/* questions of the last ask */
	int		 answered;	/* host_loop_answer returned 0 */
	int		 code;		/* -1 until done */
};

/* The questions: answered at once with the test's word (or none). */
static void
asked_ask(void *arg, struct host_loop *hl, const char *role,
    const json_t *qs)
{
	struct asked	*a = arg;
	json_t		*ans = NULL;

	a->nask++;
	if (role == NULL || *role == '\0')
		a->role_ok = 0;
	a->nq = (int)json_array_size(qs);
	if (a->answer != NULL)
		ans = json_pack("[s]", a->answer);
	if (host_loop_answer(hl, ans) == 0)
		a->answered++;
	json_decref(ans);
}

static void
asked_opened(void *arg, struct host_loop *hl, int code, const char *err)
{
	struct asked	*a = arg;

	(void)hl;
	if (err == NULL)
		return;		/* runs (a completed loop is refused, code 0) */
	tap_ok(0, "open: %s", err);
	a->code = code;
	event_base_loopbreak(a->h->base);
}

static void
asked_done(void *arg, struct host_loop *hl, int code)
{
	struct asked	*a = arg;

	(void)hl;
	a->code = code;
	event_base_loopbreak(a->h->base);
}

/* Run loop ID to its end, the observer's ask set when with_ask. */
static void
asked_run(struct hostfix *h, struct asked *a, const char *id, int with_ask)
{
	struct loop_spec	 spec;
	struct host_observer	 obs;
	char			*err = NULL;

	a->h = h;
	a->code = -1;
	a->role_ok = 1;
	memset(&spec, 0, sizeof spec);
	spec.id = id;
	spec.task = "Store the users";
	spec.mode = "auto";
	spec.state = &ccw_loop_state;
	memset(&obs, 0, sizeof obs);
	obs.opened = asked_opened;
	obs.done = asked_done;
	obs.ask = with_ask ? asked_ask : NULL;
	obs.arg = a;
	if (host_loop_open(h->host, &spec, NULL, &obs, &err) == NULL) {
		tap_ok(0, "host_loop_open %s: %s", id, err);
		free(err);
		return;
	}
	event_base_dispatch(h->base);
}

/* A string of the loop's state file (a path of keys), or "" */
static char *
asked_get(struct hostfix *h, const char *id, const char *k1, const char *k2)
{
	json_t	*st = NULL, *v;
	char	*err = NULL, *out;

	if (state_load_at(h->dirfd, id, ".json", STATE_LOAD_NOQUARANTINE, &st,
	    NULL, &err) != STATE_OK) {
		free(err);
		return xstrdup("");
	}
	v = json_object_get(st, k1);
	if (k2 != NULL)
		v = json_object_get(v, k2);
	out = xstrdup(json_string_value(v) != NULL ? json_string_value(v) :
	    "");
	json_decref(st);
	return out;
}

int
main(void)
{
	struct hostfix	 h;
	struct asked	 a, b, c;
	char		*s;

	if (hostfix_init_asking(&h, "hostask") != 0)
		return 0;

	memset(&a, 0, sizeof a);
	a.answer = "postgres";
	asked_run(&h, &a, "ask-yes", 1);
	tap_ok(a.code == EXIT_OK, "answered by the observer: the loop "
	    "completed (exit %d)", a.code);
	tap_ok(a.nask == 5 && a.answered == 5 && a.role_ok && a.nq == 1,
	    "each of the 5 roles asked the observer once, one question "
	    "(%d asks, %d answered, %d questions)", a.nask, a.answered, a.nq);
	s = asked_get(&h, "ask-yes", "status", NULL);
	tap_ok(strcmp(s, "completed") == 0, "its state: completed (%s)", s);
	free(s);
	s = hostfix_summary(&h, "ask-yes", "develop");
	tap_ok(strcmp(s, "used postgres") == 0, "the worker's re-run got the "
	    "observer's answer, not the Recommended one (%s)", s);
	free(s);

	memset(&b, 0, sizeof b);
	b.answer = NULL;
	asked_run(&h, &b, "ask-none", 1);
	tap_ok(b.code == EXIT_FAILED && b.nask == 1, "no answer: the loop "
	    "failed at the first question (exit %d, %d asks)", b.code, b.nask);
	s = asked_get(&h, "ask-none", "failure_reason", NULL);
	tap_ok(strstr(s, "no answer was given") != NULL, "its failure_reason "
	    "says no answer was given (%s)", s);
	free(s);

	memset(&c, 0, sizeof c);
	asked_run(&h, &c, "ask-off", 0);
	tap_ok(c.code == EXIT_OK && c.nask == 0, "no ask hook: the loop takes "
	    "the Recommended option itself (exit %d, %d asks)", c.code,
	    c.nask);
	s = hostfix_summary(&h, "ask-off", "develop");
	tap_ok(strcmp(s, "used sqlite") == 0, "and its worker got sqlite (%s)",
	    s);
	free(s);

	hostfix_free(&h);
	return tap_done();
}
