/*
 * bestof.c: best-of-N's rule, defined once (issue 27): tests passed,
 * then the smallest diff, then the fastest, then the lowest index; and
 * each attempt's record with why it was picked or lost.  ccw-loop's
 * steps and the front ends' spawn with "attempts" both pick by it.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "bestof.h"
#include "xmalloc.h"

/* One attempt as the rule sees it. */
struct attempt {
	int		 ok;		/* its run did not fail */
	int		 passed;	/* ok, and its check passed (or none) */
	json_int_t	 diff;		/* insertions + deletions */
	json_int_t	 ms;		/* its run's duration */
};

/* A number member of o, 0 when absent. */
static json_int_t
bestof_num(const json_t *o, const char *key)
{
	return (json_int_t)json_number_value(json_object_get(o, key));
}

/* THE RULE: does a beat b?  (A tie keeps the earlier, lower index.) */
static int
bestof_better(const struct attempt *a, const struct attempt *b)
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
bestof_why(const struct attempt *a, const struct attempt *w, int picked)
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
bestof_entry(const json_t *res, const json_t *t, const struct attempt *a,
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
 * The n attempts' results (report or RESULT json with agent_id and
 * duration_ms; ok: the run did not fail) and try's reply (its items in
 * the same order; NULL: nothing checked): the winner's index, *list
 * each attempt's record (owned), *npass how many passed.
 */
size_t
bestof_pick(const json_t *const *res, const int *ok, size_t n,
    const json_t *tried, json_t **list, size_t *npass)
{
	struct attempt	*a = xcalloc(n, sizeof *a);
	const json_t	*t, *st;
	const char	*co;
	size_t		 i, w = 0;

	*npass = 0;
	for (i = 0; i < n; i++) {
		t = json_array_get(json_object_get(tried, "items"), i);
		st = json_object_get(t, "stat");
		co = json_string_value(json_object_get(t, "outcome"));
		a[i].ok = ok[i];
		a[i].passed = ok[i] && (co == NULL || strcmp(co, "passed") ==
		    0 || strcmp(co, "unchecked") == 0);
		a[i].diff = bestof_num(st, "insertions") + bestof_num(st,
		    "deletions");
		a[i].ms = bestof_num(res[i], "duration_ms");
		*npass += a[i].passed;
		if (i > 0 && bestof_better(&a[i], &a[w]))
			w = i;
	}
	*list = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(*list, bestof_entry(res[i],
		    json_array_get(json_object_get(tried, "items"), i), &a[i],
		    i == w, bestof_why(&a[i], &a[w], i == w)));
	free(a);
	return w;
}
