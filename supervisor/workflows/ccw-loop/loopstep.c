/*
 * loopstep.c: a step whose runs end short of success: a worker's
 * questions (answered by the person, the Recommended options, or the
 * loop fails) and its re-run; a parallel step that failed in every role
 * tried again after the retry policy's wait, or the loop fails (attempts
 * spent, or every failure of a kind the policy does not retry).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "chan.h"
#include "log.h"
#include "loopint.h"
#include "xmalloc.h"

/* Fail the loop on a question nobody may answer. */
static void
loop_clarify_fail(struct loop *l, const char *role, const json_t *qs,
    const char *why)
{
	char	*reason = clarify_reason(role, qs, why);

	loop_end(l, EXIT_FAILED, "failed", reason);
	free(reason);
}

/* Run a role again with the answers appended to its prompt. */
static void
loop_rerun(struct loop *l, int slot, const json_t *answers)
{
	struct loop_run	*r = l->cur[slot];
	const json_t	*qs = json_object_get(r->result, "questions");
	char		*text;
	uint64_t	 left, nudge;

	clarify_questions(l->ss, loop_role(l, r->role), qs, answers);
	if (l->phase == LP_PAUSING || l->phase == LP_ENDING)
		return;		/* the step is redone on resume */
	text = clarify_answer_text(qs, answers);
	/* the batch deadline holds for the re-run too */
	loop_batch_left(l, &left, &nudge);
	l->cur[slot] = loop_spawn(l, r->role, text, left, nudge,
	    r->rounds + 1);
	free(text);
	if (l->cur[slot] == NULL)
		l->cur[slot] = r;
}

/*
 * A worker asked questions: the person answers (interactive, or any
 * mode when a host's observer asks: cfg.ask_always), the
 * Recommended options do (headless), or the loop fails (--on-clarify
 * fail, no option to take, or still asking after 3 answers).  Returns 1
 * when the step must wait.
 */
int
loop_clarify(struct loop *l, int slot)
{
	struct loop_run	*r = l->cur[slot];
	const json_t	*qs = json_object_get(r->result, "questions");
	const char	*role = loop_role(l, r->role);
	json_t		*ans = NULL;
	char		*why = NULL;
	int		 may;

	may = !l->cfg.clarify_fail && r->rounds < LOOP_MAX_CLARIFY;
	clarify_questions(l->ss, role, qs, NULL);
	if (may && l->cfg.hooks.ask != NULL && (l->cfg.mode ==
	    LOOP_INTERACTIVE || l->cfg.ask_always)) {
		/* pausing: not asked now; the step is redone on resume */
		if (loop_transition(l, LE_ASK, slot) != 0)
			return 0;
		l->cfg.hooks.ask(l->cfg.hooks.arg, role, qs);
		return 1;
	}
	if (may)
		ans = clarify_recommended(qs, &why);
	if (ans == NULL) {
		loop_clarify_fail(l, role, qs, l->cfg.clarify_fail ? NULL :
		    why != NULL ? why : "still asking after 3 answers");
		free(why);
		return 1;
	}
	loop_rerun(l, slot, ans);
	json_decref(ans);
	return l->cur[slot] != r;
}

/* Interactive answers came (NULL: none, the loop fails). */
void
loop_answer(struct loop *l, const json_t *answers)
{
	struct loop_run	*r;

	if (loop_transition(l, LE_ANSWER, 0) != 0)
		return;		/* no question is open (or the loop ends) */
	r = l->cur[l->ask_slot];
	if (answers == NULL)
		loop_clarify_fail(l, loop_role(l, r->role), json_object_get(
		    r->result, "questions"), "no answer was given");
	else
		loop_rerun(l, l->ask_slot, answers);
	loop_kick(l);
}

/*
 * The error kind that makes the failed step final: every run's is one
 * the retry policy names non-retryable (NULL: it may be tried again).
 */
static const char *
loop_final_kind(const struct loop *l)
{
	const char	*kind, *first = NULL;
	int		 i;

	for (i = 0; i < l->ncur; i++) {
		kind = json_string_value(json_object_get(l->cur[i]->result,
		    "error_kind"));
		if ((config_error_kind(kind) & l->cfg.retry.non_retryable) ==
		    0)
			return NULL;
		if (first == NULL)
			first = kind;
	}
	return first;
}

/*
 * The parallel step failed in every role: the next try only after the
 * retry policy's wait, armed from the clock now (a commit may just have
 * taken long); the loop fails once the attempts are spent.
 */
void
loop_retry(struct loop *l)
{
	const struct retry_cfg	*rt = &l->cfg.retry;
	uint64_t		 ms;
	const char		*kind;
	char			*reason;

	if ((kind = loop_final_kind(l)) != NULL) {
		xasprintf(&reason, "the parallel step failed in every role "
		    "with error kind %s, which the retry policy does not retry "
		    "(roles.ROLE.retry.non_retryable)", kind);
		loop_end(l, EXIT_FAILED, "failed", reason);
		free(reason);
		return;
	}
	if (l->failures >= rt->attempts) {
		xasprintf(&reason, "the parallel step failed in every role "
		    "%u times in a row (retry policy: %u attempts)",
		    l->failures, rt->attempts);
		loop_end(l, EXIT_FAILED, "failed", reason);
		free(reason);
		return;
	}
	ms = config_retry_delay(rt, l->failures);
	log_info("loop %s: every role failed: try %u in %llu ms", l->cfg.id,
	    l->failures + 1, (unsigned long long)ms);
	prompt_record(l->store, json_pack("{s:s, s:s, s:i, s:I}", "event",
	    "step_retry", "step", l->wf->parallel->name, "attempt",
	    (int)l->failures + 1, "delay_ms", (json_int_t)ms));
	loop_event(l, "step_retry", json_pack("{s:s, s:i, s:i, s:I}", "step",
	    l->wf->parallel->name, "attempt", (int)l->failures + 1, "attempts",
	    (int)rt->attempts, "delay_ms", (json_int_t)ms));
	chan_arm_ms(l->retry_ev, ms);
}

/*
 * An auto loop's action whose worker was lost with its host (launcher
 * killed, network cut, scancel: "worker lost"): the machine failed, not
 * the agent, so the role's retry policy gives it another try, as a
 * parallel step that failed in every role gets one.  Returns 1 with the
 * retry armed; 0 when the loop must end (not lost, or attempts spent).
 */
int
loop_retry_lost(struct loop *l, int role, const json_t *res)
{
	const char		*why = json_string_value(json_object_get(res,
				    "reason"));
	const struct retry_cfg	*rt;
	uint64_t		 ms;

	if (why == NULL || strncmp(why, "worker lost", 11) != 0 ||
	    l->cfg.config == NULL || role < 0 ||
	    (size_t)role >= l->cfg.config->nroles)
		return 0;
	rt = &l->cfg.config->roles[role].retry;
	if (++l->failures >= rt->attempts)
		return 0;
	ms = config_retry_delay(rt, l->failures);
	log_info("loop %s: %s lost its worker: try %u in %llu ms", l->cfg.id,
	    loop_role(l, role), l->failures + 1, (unsigned long long)ms);
	prompt_record(l->store, json_pack("{s:s, s:s, s:i, s:I}", "event",
	    "step_retry", "step", loop_role(l, role), "attempt",
	    (int)l->failures + 1, "delay_ms", (json_int_t)ms));
	loop_event(l, "step_retry", json_pack("{s:s, s:i, s:i, s:I}", "step",
	    loop_role(l, role), "attempt", (int)l->failures + 1, "attempts",
	    (int)rt->attempts, "delay_ms", (json_int_t)ms));
	chan_arm_ms(l->retry_ev, ms);
	return 1;
}

/* The retry's wait is over: the step goes again (unless ended since). */
void
loop_retry_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	loop_kick(arg);
}
