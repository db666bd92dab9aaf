/*
 * questions.c: a loop's side of the queue of questions.  A worker's
 * clarification becomes records in skill_state.questions[] (question.c)
 * and skill_state.asking (the role, its session, its round), the events
 * question_asked / question_answered / question_expired, the history's
 * lines; answers come from the answers file, the terminal, ACP or the
 * timeout's policy.  loop.c decides when; this file keeps the records.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "loopint.h"
#include "question.h"
#include "xmalloc.h"

#define QUESTIONS_KEEP	100	/* records kept, the oldest answered go */

/* skill_state.questions, made when missing (borrowed). */
static json_t *
questions_all(struct loop *l)
{
	json_t	*qs = json_object_get(l->ss, "questions");

	if (!json_is_array(qs)) {
		qs = json_array();
		json_object_set_new(l->ss, "questions", qs);
	}
	return qs;
}

/* The records of the question now asked, in the worker's order. */
static void
questions_each(struct loop *l, void (*fn)(struct loop *, json_t *, size_t,
    void *), void *arg)
{
	const json_t	*ids = json_object_get(json_object_get(l->ss,
			    "asking"), "ids"), *id;
	json_t		*q;
	size_t		 i;

	json_array_foreach(ids, i, id)
		if ((q = question_find(questions_all(l),
		    json_string_value(id))) != NULL)
			fn(l, q, i, arg);
}

/* The oldest records that are not open go past QUESTIONS_KEEP. */
static void
questions_trim(json_t *qs)
{
	size_t	i = 0;

	while (json_array_size(qs) > QUESTIONS_KEEP && i < json_array_size(qs))
		if (!question_is_open(json_array_get(qs, i)))
			json_array_remove(qs, i);
		else
			i++;
}

/*
 * The worker of slot asked (its result's questions): a record each,
 * skill_state.asking saying who asked (role, session, round), an event
 * and a history line each (the events: questions_tell).  timeout_ms 0:
 * no deadline.
 */
void
questions_ask(struct loop *l, int slot, uint64_t timeout_ms)
{
	struct loop_run	*r = l->cur[slot];
	const json_t	*wq, *sid = json_object_get(r->result, "session_id");
	json_t		*rec, *ids = json_array();
	char		 now[40];
	size_t		 i;

	clock_iso(NULL, 1, now, sizeof now);
	json_array_foreach(json_object_get(r->result, "questions"), i, wq) {
		if (!json_is_object(wq))
			continue;
		rec = question_record(l->cfg.id, r->a != NULL ? r->a->id : NULL,
		    loop_role(l, r->role), wq, timeout_ms, now);
		json_array_append(ids, json_object_get(rec, "id"));
		questions_add(l, rec);
		json_decref(rec);
	}
	json_object_set_new(l->ss, "asking", json_pack("{s:s, s:i, s:O?, "
	    "s:o}", "role", loop_role(l, r->role), "rounds", r->rounds,
	    "session_id", json_is_string(sid) ? sid : NULL, "ids", ids));
}

/*
 * One record into the queue (a worker's question, or a CLI's permission
 * request: permask.c) with its history line; the oldest answered go.
 */
void
questions_add(struct loop *l, json_t *rec)
{
	json_array_append(questions_all(l), rec);
	prompt_record(l->store, json_pack("{s:s, s:O, s:O, s:s?}", "event",
	    "question_asked", "question_id", json_object_get(rec, "id"),
	    "role", json_object_get(rec, "role"), "question",
	    json_string_value(json_object_get(rec, "question"))));
	questions_trim(questions_all(l));
}

/* questions_tell's walk. */
static void
questions_tell_one(struct loop *l, json_t *q, size_t i, void *arg)
{
	(void)i;
	(void)arg;
	if (question_is_open(q))
		loop_event(l, "question_asked", json_pack("{s:O}", "question",
		    q));
}

/*
 * question_asked for each question now asked and open: told once the
 * state file shows them (a front end answering at once finds them).
 */
void
questions_tell(struct loop *l)
{
	questions_each(l, questions_tell_one, NULL);
}

/* One record answered: set, told, written in the history. */
void
questions_answer(struct loop *l, json_t *q, const char *answer,
    const char *by, const char *via)
{
	char	now[40];

	clock_iso(NULL, 1, now, sizeof now);
	question_answer_set(q, answer, by, via, now);
	prompt_record(l->store, json_pack("{s:s, s:O, s:O, s:s, s:s?, s:s?}",
	    "event", "question_answered", "question_id", json_object_get(q,
	    "id"), "role", json_object_get(q, "role"), "answer", answer, "by",
	    by, "via", via));
	loop_event(l, "question_answered", json_pack("{s:O, s:s, s:s?, s:s?}",
	    "question_id", json_object_get(q, "id"), "answer", answer, "by",
	    by, "via", via));
}

/*
 * The answers file's new lines, each taken when its question is open
 * (a late or repeated answer is ignored; a line that is no answer is
 * a question_junk event).  Returns how many were taken.
 */
int
questions_take(struct loop *l)
{
	json_t		*lines, *q;
	const json_t	*ln;
	const char	*ans;
	size_t		 i, junk;
	int		 n = 0;

	lines = question_answers_read(l->cfg.dirfd, l->cfg.id, &l->ans_off,
	    &junk);
	if (junk > 0) {
		/* said, never silent: a front end's bad line, or a flood */
		log_warnx("loop %s: %zu line(s) of its answers file were no "
		    "answer; skipped", l->cfg.id, junk);
		loop_event(l, "question_junk", json_pack("{s:I}", "lines",
		    (json_int_t)junk));
	}
	json_array_foreach(lines, i, ln) {
		q = question_find(questions_all(l), json_string_value(
		    json_object_get(ln, "question_id")));
		ans = json_string_value(json_object_get(ln, "answer"));
		if (q == NULL || !question_is_open(q) || ans == NULL)
			continue;
		questions_answer(l, q, ans, json_string_value(
		    json_object_get(ln, "by")), json_string_value(
		    json_object_get(ln, "via")));
		n++;
	}
	json_decref(lines);
	return n;
}

/* questions_answers' walk: the answer, or a hole. */
static void
questions_collect(struct loop *l, json_t *q, size_t i, void *arg)
{
	json_t	*out = arg;

	(void)l;
	(void)i;
	json_array_append(out, json_is_string(json_object_get(q, "answer")) ?
	    json_object_get(q, "answer") : json_null());
}

/* Every question asked answered: their answers in order; else NULL. */
json_t *
questions_answers(struct loop *l)
{
	json_t	*out = json_array(), *a;
	size_t	 i;

	questions_each(l, questions_collect, out);
	json_array_foreach(out, i, a)
		if (!json_is_string(a))
			break;
	if (json_array_size(out) == 0 || i < json_array_size(out)) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* questions_set's walk: the i-th answer onto its open record. */
struct questions_by {
	const json_t	*answers;
	const char	*by, *via;
};

static void
questions_set_one(struct loop *l, json_t *q, size_t i, void *arg)
{
	struct questions_by	*b = arg;
	const char		*a = json_string_value(json_array_get(
				    b->answers, i));

	if (a != NULL && question_is_open(q))
		questions_answer(l, q, a, b->by, b->via);
}

/* Answers given at once (terminal, ACP, the policy) onto the records. */
void
questions_set(struct loop *l, const json_t *answers, const char *by,
    const char *via)
{
	struct questions_by	b = { answers, by, via };

	questions_each(l, questions_set_one, &b);
}

/* questions_expire's walk. */
static void
questions_expire_one(struct loop *l, json_t *q, size_t i, void *arg)
{
	const char	*policy = arg;

	(void)i;
	if (!question_is_open(q))
		return;
	if (strcmp(policy, "fail") == 0)
		question_expire(q);
	loop_event(l, "question_expired", json_pack("{s:O, s:s}",
	    "question_id", json_object_get(q, "id"), "policy", policy));
	prompt_record(l->store, json_pack("{s:s, s:O, s:s}", "event",
	    "question_expired", "question_id", json_object_get(q, "id"),
	    "policy", policy));
}

/*
 * The deadline passed with questions open: each told expired with the
 * policy applied (fail marks them expired; pause leaves them open for
 * an answer taken on resume; recommended answers them next).
 */
void
questions_expire(struct loop *l, const char *policy)
{
	questions_each(l, questions_expire_one, (void *)policy);
}

/* questions_drop's walk. */
static void
questions_drop_one(struct loop *l, json_t *q, size_t i, void *arg)
{
	(void)l;
	(void)i;
	(void)arg;
	if (question_is_open(q))
		question_expire(q);
}

/*
 * The questions asked will never be answered (the loop fails on them,
 * or their step is run afresh and asks anew): expired, so that no front
 * end lists them as waiting.
 */
void
questions_drop(struct loop *l)
{
	questions_each(l, questions_drop_one, NULL);
	json_object_del(l->ss, "asking");
}

/* questions_worker's walk: a record as the worker's question. */
static void
questions_as_worker(struct loop *l, json_t *q, size_t i, void *arg)
{
	(void)l;
	(void)i;
	json_array_append_new(arg, json_pack("{s:O?, s:O, s:O, s:O?, s:O}",
	    "id", json_object_get(q, "ref"), "question", json_object_get(q,
	    "question"), "options", json_object_get(q, "options"),
	    "recommended", json_object_get(q, "recommended"), "question_id",
	    json_object_get(q, "id")));
}

/*
 * The questions asked, as the worker's result held them (its own ids)
 * with each record's question_id: what the terminal shows, what the
 * answer text names.  A new array.
 */
json_t *
questions_worker(struct loop *l)
{
	json_t	*out = json_array();

	questions_each(l, questions_as_worker, out);
	return out;
}

/* questions_rearm's walk: a fresh deadline on each open record. */
static void
questions_deadline(struct loop *l, json_t *q, size_t i, void *arg)
{
	const char	*dl = arg;

	(void)l;
	(void)i;
	if (question_is_open(q))
		json_object_set_new(q, "deadline", dl != NULL ?
		    json_string(dl) : json_null());
}

/* A resumed loop waits again: the open records' deadline from now. */
void
questions_rearm(struct loop *l, uint64_t timeout_ms)
{
	char	dl[40];

	question_deadline(timeout_ms, dl, sizeof dl);
	questions_each(l, questions_deadline, timeout_ms > 0 ? dl : NULL);
}
