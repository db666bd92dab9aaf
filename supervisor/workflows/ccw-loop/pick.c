/*
 * pick.c: the run engine's best-of-N step (issue 27): how many attempts
 * of a role a step starts, and once they are all in, the one whose work
 * is merged (attempts.c's count and rule, isolate.c's try), the losers
 * taken out of the step.  loop.c calls it; it calls nothing of loop.c.
 */
#include <config.h>

#include <string.h>

#include "attempts.h"
#include "isolate.h"
#include "loopint.h"

/*
 * A role's attempts in this step, 1 unless the step is isolated (not a
 * git repository, isolation none: one run).  The first role of a step
 * with more than one is the step's att_role.
 */
unsigned
pick_attempts(struct loop *l, int role)
{
	unsigned	n = attempts_count(l->cfg.config, &l->cfg.over,
			    loop_role(l, role));

	if (n < 2 || !isolate_active(l->iso) || (l->attempting &&
	    l->att_role != role))
		return 1;
	l->attempting = 1;
	l->att_role = role;
	return n;
}

/*
 * The step's attempts (att_role's runs) judged (try: the check in each
 * kept worktree, each diff), one picked by attempts.c's rule; the
 * losers leave cur (kept in runs), the winner stays in its role's
 * place, the only one merged and taken.  All N recorded and told
 * (attempts_picked).  Busy while try runs; failed with *why (the loop
 * ends).
 */
enum isolate_st
pick_winner(struct loop *l, char **why)
{
	const char	*agents[LOOP_MAX_RUNS];
	const json_t	*res[LOOP_MAX_RUNS], *tried = NULL;
	int		 ok[LOOP_MAX_RUNS], at[LOOP_MAX_RUNS], i, n = 0, k = 0;
	const char	*role = loop_role(l, l->att_role);
	enum isolate_st	 st;
	size_t		 w;

	for (i = 0; i < l->ncur; i++)
		if (l->cur[i]->role == l->att_role) {
			at[n] = i;
			agents[n] = l->cur[i]->a->id;
			res[n] = l->cur[i]->result;
			ok[n] = strcmp(l->wf->outcome(role, res[n]), "failed") !=
			    0;
			n++;
		}
	st = isolate_try(l->iso, role, agents, (size_t)n, &tried, why);
	if (st != ISO_READY)
		return st;
	w = attempts_pick(l->ss, role, res, ok, (size_t)n, tried);
	loop_event(l, "attempts_picked", json_pack("{s:s, s:s, s:O}", "role",
	    role, "agent_id", agents[w], "attempts", json_object_get(
	    json_object_get(l->ss, role), "attempts")));
	for (i = 0; i < l->ncur; i++)	/* the losers out, order kept */
		if (l->cur[i]->role != l->att_role || i == at[w])
			l->cur[k++] = l->cur[i];
	l->ncur = k;
	l->attempting = 0;
	return ISO_READY;
}
