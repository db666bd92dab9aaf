/*
 * attempts.c: best-of-N (issue 27): how many attempts of one task a
 * role's step runs (run --attempts for develop, config
 * roles.ROLE.attempts) and the record of all N in
 * skill_state.ROLE.attempts; the rule that picks one is engine/bestof.c.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "attempts.h"
#include "bestof.h"
#include "ccw-loop.h"
#include "flowdef.h"
#include "plan.h"
#include "toolconfig.h"
#include "xmalloc.h"

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

/*
 * The n attempts' results (ok: each run's outcome not failed) and try's
 * reply (its items in the same order; NULL: not isolated, nothing
 * checked): the winner's index by the rule (bestof.c), all n recorded
 * in skill_state.ROLE.attempts {n, picked, passed, none_passed, list}.
 */
size_t
attempts_pick(json_t *ss, const char *role, const json_t *const *res,
    const int *ok, size_t n, const json_t *tried)
{
	json_t		*list, *sec;
	size_t		 w, npass;

	w = bestof_pick(res, ok, n, tried, &list, &npass);
	if (!json_is_object(sec = json_object_get(ss, role))) {
		sec = json_object();
		json_object_set_new(ss, role, sec);
	}
	json_object_set_new(sec, "attempts", json_pack("{s:I, s:O?, s:I,"
	    " s:b, s:o}", "n", (json_int_t)n, "picked", json_object_get(res[w],
	    "agent_id"), "passed", (json_int_t)npass, "none_passed",
	    npass == 0, "list", list));
	return w;
}
