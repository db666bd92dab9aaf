/*
 * ask.c: a step whose worker asked (CLARIFICATION_NEEDED): the questions
 * put to the queue, the wait for their answers (the answers file, the
 * terminal's hook, the role's deadline and its policy), and the asking
 * role run again with them.  It reaches loop.c's commit only through the
 * loop's save hooks (loopint.h), so it never calls back into loop.c.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "askwatch.h"
#include "clock.h"
#include "loopint.h"
#include "question.h"
#include "state.h"
#include "xmalloc.h"

static void	ask_stop(struct loop *);

/* Fail the loop on a question nobody may answer. */
static void
ask_fail(struct loop *l, const char *role, const json_t *qs,
    const char *why)
{
	char	*reason = clarify_reason(role, qs, why);

	questions_drop(l);	/* nobody will answer them now */
	loop_end(l, EXIT_FAILED, "failed", reason);
	free(reason);
}

/* The role's question_timeout_ms and on_question_timeout. */
static uint64_t
ask_timeout(const struct loop *l, int role, int *policy)
{
	const struct config	*c = l->cfg.config;

	*policy = QP_RECOMMENDED;
	if (c == NULL || role < 0 || (size_t)role >= c->nroles)
		return 0;
	*policy = c->roles[role].on_question_timeout;
	return c->roles[role].question_timeout_ms;
}

/*
 * Run the asking role again with the answers (skill_state.asking says
 * who asked): its tool's session resumed with the answer text when it
 * reported one, else a fresh run with the answers appended; the history
 * says which.
 */
static void
ask_rerun(struct loop *l, int slot, const json_t *answers)
{
	json_t		*ask = json_incref(json_object_get(l->ss, "asking"));
	const char	*sid = json_string_value(json_object_get(ask,
			    "session_id"));
	int		 role = workflow_role_index(l->wf, json_string_value(
			    json_object_get(ask, "role")));
	json_t		*qs = questions_worker(l);
	struct loop_run	*n;
	char		*text;
	uint64_t	 left, nudge;

	clarify_questions(l->ss, loop_role(l, role), qs, answers);
	json_object_del(l->ss, "asking");
	if (l->phase == LP_PAUSING || l->phase == LP_ENDING || role < 0) {
		json_decref(qs);
		json_decref(ask);
		return;		/* the step is redone on resume */
	}
	text = clarify_answer_text(qs, answers);
	json_decref(qs);
	prompt_record(l->store, json_pack("{s:s, s:s, s:s, s:s?}", "event",
	    "question_rerun", "role", loop_role(l, role), "delivery",
	    sid != NULL ? "resume_session" : "fresh", "session_id", sid));
	/* the batch deadline holds for the re-run too */
	loop_batch_left(l, &left, &nudge);
	n = loop_spawn_resume(l, role, text, left, nudge, (int)json_integer_value(
	    json_object_get(ask, "rounds")) + 1, sid);
	free(text);
	json_decref(ask);	/* sid was its */
	if (n != NULL)
		l->cur[slot] = n;
	if (l->ncur <= slot && n != NULL)
		l->ncur = slot + 1;
}

/* The answers to what was asked are in: the role runs again with them. */
static void
ask_answered(struct loop *l, const json_t *answers)
{
	ask_stop(l);
	if (loop_transition(l, LE_ANSWER, 0) != 0)
		return;
	ask_rerun(l, l->ask_slot, answers);
	l->save(l, l->saved);
	loop_kick(l);
}

/*
 * Nobody answered by the deadline: the role's on_question_timeout.
 * recommended answers (via "policy"; none to take fails), fail ends
 * the loop failed, pause ends it paused with the questions open.
 */
static void
ask_expired(struct loop *l, int role, int policy)
{
	json_t	*qs = questions_worker(l), *ans = NULL;
	char	*why = NULL, *reason;

	questions_expire(l, question_policies[policy]);
	if (policy == QP_RECOMMENDED &&
	    (ans = clarify_recommended(qs, &why)) != NULL) {
		questions_set(l, ans, NULL, "policy");
		ask_answered(l, ans);
	} else if (policy == QP_PAUSE) {
		xasprintf(&reason, "%s: a question was not answered in time "
		    "(on_question_timeout pause)", loop_role(l, role));
		ans = json_pack("{s:s}", "pause_reason", reason);
		state_store_update(l->store, ans);	/* borrowed */
		loop_end(l, EXIT_PAUSED, "pause", reason);
		free(reason);
	} else {
		xasprintf(&reason, "nobody answered by the deadline%s%s",
		    why != NULL ? ": " : "", why != NULL ? why : "");
		ask_fail(l, loop_role(l, role), qs, reason);
		free(reason);
	}
	json_decref(ans);
	json_decref(qs);
	free(why);
}

/*
 * ASKING on the answers file: its new lines taken; every question
 * answered runs the role again, a deadline passed applies the policy.
 */
void
ask_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct loop	*l = arg;
	struct timeval	 tv;
	json_t		*ans;
	uint64_t	 now;
	int		 role, policy;

	(void)fd;
	(void)ev;
	if (l->phase != LP_ASKING || l->ask_slot < 0) {
		ask_stop(l);
		return;
	}
	if (questions_take(l) > 0)
		l->save(l, l->saved);
	if ((ans = questions_answers(l)) != NULL) {
		ask_answered(l, ans);
		json_decref(ans);
		return;
	}
	if ((now = clock_mono_ms()) < l->ask_deadline || loop_held(l)) {
		/* held: the deadline stands still (ask_thawed moves it) */
		if (l->ask_watch != NULL && now < l->ask_deadline) {
			tv.tv_sec = (time_t)((l->ask_deadline - now) / 1000);
			tv.tv_usec = (suseconds_t)((l->ask_deadline - now) %
			    1000) * 1000;
			event_add(l->ask_ev, &tv);
		}
		return;
	}
	ask_stop(l);
	role = workflow_role_index(l->wf, json_string_value(json_object_get(
	    json_object_get(l->ss, "asking"), "role")));
	(void)ask_timeout(l, role, &policy);
	ask_expired(l, role, policy);
}

/*
 * The loop was held held_ms while asking: like its workers' deadlines,
 * the question's stood still, so it moves on by as much (the records'
 * deadline too) and its timer is armed again for what was left.
 */
void
ask_thawed(struct loop *l, uint64_t held_ms)
{
	struct timeval	tv = { 0, LOOP_ASK_POLL_MS * 1000 };
	uint64_t	now = clock_mono_ms(), left;

	if (l->phase != LP_ASKING || l->ask_slot < 0 || l->ask_deadline == 0)
		return;
	l->ask_deadline += held_ms;
	left = l->ask_deadline > now ? l->ask_deadline - now : 0;
	questions_rearm(l, left > 0 ? left : 1);
	l->save(l, l->saved);
	if (l->ask_watch != NULL) {
		tv.tv_sec = (time_t)(left / 1000);
		tv.tv_usec = (suseconds_t)(left % 1000) * 1000;
	}
	event_add(l->ask_ev, &tv);
}

/* No longer waiting on the answers file: its poll and watch end. */
static void
ask_stop(struct loop *l)
{
	evtimer_del(l->ask_ev);
	askwatch_free(l->ask_watch);	/* from its own callback too */
	l->ask_watch = NULL;
}

/* The answers file was written (askwatch.c): look now. */
static void
ask_kick(void *arg)
{
	ask_tick(-1, 0, arg);
}

/* The questions are in the file: now a front end may answer them. */
static void
ask_saved(struct state_store *s, int rc, const char *err, void *arg)
{
	struct loop	*l = arg;

	l->saved(s, rc, err, arg);
	if (rc == 0 && l->phase == LP_ASKING)
		questions_tell(l);
}

/*
 * Wait for the answers file up to timeout_ms (ASKING the slot): told of
 * its writes by inotify, the timer then only the deadline's; polled
 * every LOOP_ASK_POLL_MS without it.
 */
static int
ask_file(struct loop *l, int slot, uint64_t timeout_ms)
{
	struct timeval	tv = { 0, LOOP_ASK_POLL_MS * 1000 };

	if (loop_transition(l, LE_ASK, slot) != 0)
		return -1;
	l->ask_deadline = clock_mono_ms() + timeout_ms;
	if (!l->cfg.watch_poll && l->ask_watch == NULL)
		l->ask_watch = askwatch_new(l->base, l->cfg.dirfd, l->cfg.id,
		    ask_kick, l);
	if (l->ask_watch != NULL) {
		tv.tv_sec = (time_t)(timeout_ms / 1000);
		tv.tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000;
	}
	event_add(l->ask_ev, &tv);
	l->save(l, ask_saved);	/* then told */
	return 0;
}

/*
 * A worker asked questions: records in the queue, then the person
 * answers (interactive, or any mode when a host's observer asks:
 * cfg.ask_always), a front end does through the answers file within
 * the role's question_timeout_ms, the Recommended options do (headless,
 * no timeout), or the loop fails (--on-clarify fail, no option to take,
 * or still asking after 3 answers).  Returns 1 when the step must wait.
 */
int
ask_clarify(struct loop *l, int slot)
{
	struct loop_run	*r = l->cur[slot];
	const json_t	*qs = json_object_get(r->result, "questions");
	const char	*role = loop_role(l, r->role);
	json_t		*ans = NULL, *shown;
	char		*why = NULL;
	int		 may, hook, policy;
	uint64_t	 tmo = ask_timeout(l, r->role, &policy);

	may = !l->cfg.clarify_fail && r->rounds < LOOP_MAX_CLARIFY;
	hook = may && l->cfg.hooks.ask != NULL && (l->cfg.mode ==
	    LOOP_INTERACTIVE || l->cfg.ask_always);
	clarify_questions(l->ss, role, qs, NULL);
	questions_ask(l, slot, tmo);
	if (hook || !may || tmo == 0)
		questions_tell(l);	/* answered here and now */
	if (hook) {
		/* pausing: not asked now; the step is redone on resume */
		if (loop_transition(l, LE_ASK, slot) != 0)
			return 0;
		shown = questions_worker(l);	/* with their question ids */
		l->cfg.hooks.ask(l->cfg.hooks.arg, role, shown);
		json_decref(shown);
		return 1;
	}
	if (may && tmo > 0)
		return ask_file(l, slot, tmo) == 0;
	if (may)
		ans = clarify_recommended(qs, &why);
	if (ans == NULL) {
		ask_fail(l, role, qs, l->cfg.clarify_fail ? NULL :
		    why != NULL ? why : "still asking after 3 answers");
		free(why);
		return 1;
	}
	questions_set(l, ans, NULL, "policy");
	ask_rerun(l, slot, ans);
	json_decref(ans);
	return l->cur[slot] != r;
}

/*
 * A resumed loop whose next action is the one that asked (its questions
 * in skill_state.asking, maybe answered while it was paused or its
 * driver dead): the answers waiting are taken and the role runs again
 * with them instead of asking again; still open, it waits for them
 * again.  Returns 1 when it took the step.
 */
int
ask_resume(struct loop *l, int role)
{
	const json_t	*ask = json_object_get(l->ss, "asking");
	json_t		*ans;
	int		 policy;
	uint64_t	 tmo;

	if (ask == NULL)
		return 0;
	if (l->cfg.mode == LOOP_INTERACTIVE || strcmp(loop_role(l, role),
	    json_string_value(json_object_get(ask, "role")) != NULL ?
	    json_string_value(json_object_get(ask, "role")) : "") != 0) {
		questions_drop(l);	/* another step now: never answered */
		return 0;
	}
	(void)questions_take(l);
	l->ncur = 0;
	l->batch = 0;
	l->attempting = 0;
	l->cur[0] = NULL;
	l->step_start = clock_mono_ms();
	if ((ans = questions_answers(l)) != NULL) {
		ask_rerun(l, 0, ans);
		json_decref(ans);
		l->save(l, l->saved);
		return 1;
	}
	tmo = ask_timeout(l, role, &policy);
	if (tmo == 0) {		/* no queue: the step is redone, as it was */
		questions_drop(l);
		return 0;
	}
	questions_rearm(l, tmo);
	return ask_file(l, 0, tmo) == 0;
}

/* Interactive answers came (NULL: none, the loop fails). */
void
loop_answer(struct loop *l, const json_t *answers)
{
	loop_answer_via(l, answers, NULL, NULL);
}

/*
 * The same, the records and the history saying who answered and
 * through what (the terminal, ACP).
 */
void
loop_answer_via(struct loop *l, const json_t *answers, const char *by,
    const char *via)
{
	const char	*role = json_string_value(json_object_get(
			    json_object_get(l->ss, "asking"), "role"));
	json_t		*qs;

	if (loop_transition(l, LE_ANSWER, 0) != 0)
		return;		/* no question is open (or the loop ends) */
	ask_stop(l);
	if (answers == NULL) {
		qs = questions_worker(l);
		ask_fail(l, role != NULL ? role : "?", qs,
		    "no answer was given");
		json_decref(qs);
	} else {
		questions_set(l, answers, by, via);
		ask_rerun(l, l->ask_slot, answers);
	}
	loop_kick(l);
}
