/*
 * attempts.c: best-of-N (issue 27): how many attempts of one task a
 * role's step runs (run --attempts for develop, config
 * roles.ROLE.attempts), the rule that picks one of them, defined here
 * once (tests passed, then the smallest diff, then the fastest, then the
 * lowest index), and the record of all N in skill_state.ROLE.attempts.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "attempts.h"
#include "ccw-loop.h"
#include "flowdef.h"
#include "plan.h"
#include "toolconfig.h"
#include "xmalloc.h"

/* One attempt as the rule sees it. */
struct attempt {
	int		 ok;		/* its run did not fail */
	int		 passed;	/* ok, and its check passed (or none) */
	json_int_t	 diff;		/* insertions + deletions */
	json_int_t	 ms;		/* its run's duration */
};

/*
 * The attempts a role's step runs: --attempts (develop's), else the
 * role's config, else 1.
 */
unsigned
attempts_count(const struct config *c, const struct plan_overrides *o,
    const char *role)
{
	int	ri = config_role_index(c, role);

	if (o != NULL && o->attempts > 0 && strcmp(role,
	    loop_role_name(LOOP_DEVELOP)) == 0)
		return o->attempts;
	return ri >= 0 && c->roles[ri].attempts > 0 ? c->roles[ri].attempts :
	    1;
}

/* The most attempts any role runs: above 1, an auto loop is isolated. */
unsigned
attempts_most(const struct config *c, const struct plan_overrides *o)
{
	unsigned	n, most = 1;
	size_t		i;

	for (i = 0; i < c->nroles; i++)
		if ((n = attempts_count(c, o, c->wf->roles[i].name)) > most)
			most = n;
	return most;
}

/* A number member of o, 0 when absent. */
static json_int_t
attempts_num(const json_t *o, const char *key)
{
	return (json_int_t)json_number_value(json_object_get(o, key));
}

/* THE RULE: does a beat b?  (A tie keeps the earlier, lower index.) */
static int
attempts_better(const struct attempt *a, const struct attempt *b)
{
	if (a->passed != b->passed)
		return a->passed;
	if (a->ok != b->ok)
		return a->ok;
	if (a->diff != b->diff)
		return a->diff < b->diff;
	return a->ms < b->ms;
}

/* Why attempt a was picked, or lost to the winner w (owned). */
static char *
attempts_why(const struct attempt *a, const struct attempt *w, int picked)
{
	char	*s;

	if (picked)
		xasprintf(&s, "picked: %s, a diff of %lld lines, %lld ms",
		    a->passed ? "tests passed" : "none passed",
		    (long long)a->diff, (long long)a->ms);
	else if (!a->ok)
		s = xstrdup("its run failed");
	else if (!a->passed && w->passed)
		s = xstrdup("tests failed");
	else if (a->diff != w->diff)
		xasprintf(&s, "a larger diff (%lld lines against %lld)",
		    (long long)a->diff, (long long)w->diff);
	else if (a->ms != w->ms)
		xasprintf(&s, "slower (%lld ms against %lld)",
		    (long long)a->ms, (long long)w->ms);
	else
		s = xstrdup("a tie: the lower index is picked");
	return s;
}

/* The attempt i's record: the run, its check, its diff, the verdict. */
static json_t *
attempts_entry(const json_t *res, const json_t *t, const struct attempt *a,
    int picked, char *why)
{
	const json_t	*chk = json_object_get(t, "check");
	json_t		*e;

	e = json_pack("{s:O?, s:O?, s:s, s:s, s:O?, s:I, s:b, s:b, s:s}",
	    "agent", json_object_get(res, "agent_id"), "branch",
	    json_object_get(t, "branch"), "outcome", a->ok ? "success" :
	    "failed", "check", json_string_value(json_object_get(t,
	    "outcome")) != NULL ? json_string_value(json_object_get(t,
	    "outcome")) : "unchecked", "stat", json_object_get(t, "stat"),
	    "duration_ms", a->ms, "passed", a->passed, "picked", picked,
	    "why", why);
	if (chk != NULL)
		json_object_set_new(e, "check_rc", json_pack("{s:O?, s:O?,"
		    " s:O?}", "rc", json_object_get(chk, "rc"), "ms",
		    json_object_get(chk, "ms"), "timed_out", json_object_get(
		    chk, "timed_out")));
	free(why);
	return e;
}

/*
 * The n attempts' results (ok: each run's outcome not failed) and try's
 * reply (its items in the same order; NULL: not isolated, nothing
 * checked): the winner's index by the rule, all n recorded in
 * skill_state.ROLE.attempts {n, picked, passed, none_passed, list}.
 */
size_t
attempts_pick(json_t *ss, const char *role, const json_t *const *res,
    const int *ok, size_t n, const json_t *tried)
{
	struct attempt	*a = xcalloc(n, sizeof *a);
	const json_t	*t, *st;
	const char	*co;
	json_t		*list = json_array(), *sec;
	size_t		 i, w = 0, npass = 0;

	for (i = 0; i < n; i++) {
		t = json_array_get(json_object_get(tried, "items"), i);
		st = json_object_get(t, "stat");
		co = json_string_value(json_object_get(t, "outcome"));
		a[i].ok = ok[i];
		a[i].passed = ok[i] && (co == NULL || strcmp(co, "passed") ==
		    0 || strcmp(co, "unchecked") == 0);
		a[i].diff = attempts_num(st, "insertions") + attempts_num(st,
		    "deletions");
		a[i].ms = attempts_num(res[i], "duration_ms");
		npass += a[i].passed;
		if (i > 0 && attempts_better(&a[i], &a[w]))
			w = i;
	}
	for (i = 0; i < n; i++)
		json_array_append_new(list, attempts_entry(res[i],
		    json_array_get(json_object_get(tried, "items"), i), &a[i],
		    i == w, attempts_why(&a[i], &a[w], i == w)));
	if (!json_is_object(sec = json_object_get(ss, role))) {
		sec = json_object();
		json_object_set_new(ss, role, sec);
	}
	json_object_set_new(sec, "attempts", json_pack("{s:I, s:O?, s:I,"
	    " s:b, s:o}", "n", (json_int_t)n, "picked", json_object_get(res[w],
	    "agent_id"), "passed", (json_int_t)npass, "none_passed",
	    npass == 0, "list", list));
	free(a);
	return w;
}
