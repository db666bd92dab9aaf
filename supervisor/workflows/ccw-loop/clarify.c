/*
 * clarify.c: a worker's clarification questions (CLARIFICATION_NEEDED):
 * the headless answers (each question's Recommended option), the answer
 * text sent back to the worker, the questions and answers kept in the
 * role's section of skill_state, the failure_reason of a loop they end.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"
#include "xmalloc.h"

/* A string member, or NULL. */
static const char *
clarify_s(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/*
 * Headless answers: each question's Recommended option, else its first
 * option.  NULL, with the question named in *why, when one has neither.
 */
json_t *
clarify_recommended(const json_t *questions, char **why)
{
	const json_t	*q, *rec;
	json_t		*out;
	size_t		 i;

	*why = NULL;
	if (json_array_size(questions) == 0) {
		*why = xstrdup("the worker asked for clarification but no "
		    "question could be read");
		return NULL;
	}
	out = json_array();
	json_array_foreach(questions, i, q) {
		rec = json_object_get(q, "recommended");
		if (!json_is_string(rec))
			rec = json_array_get(json_object_get(q, "options"), 0);
		if (!json_is_string(rec) || json_string_length(rec) == 0) {
			xasprintf(why, "%s: %s (no recommended option)",
			    clarify_s(q, "id") != NULL ? clarify_s(q, "id") : "Q",
			    clarify_s(q, "question") != NULL ?
			    clarify_s(q, "question") : "?");
			json_decref(out);
			return NULL;
		}
		json_array_append(out, (json_t *)rec);
	}
	return out;
}

/* The answers as the text appended to the role's prompt for its re-run. */
char *
clarify_answer_text(const json_t *questions, const json_t *answers)
{
	const json_t	*q;
	char		*s, *t;
	size_t		 i;

	s = xstrdup("\n## CLARIFICATION ANSWERS\n\nYour questions were "
	    "answered:\n");
	json_array_foreach(questions, i, q) {
		xasprintf(&t, "%s- %s: %s -> %s\n", s,
		    clarify_s(q, "id") != NULL ? clarify_s(q, "id") : "Q",
		    clarify_s(q, "question") != NULL ?
		    clarify_s(q, "question") : "?",
		    json_string_value(json_array_get(answers, i)) != NULL ?
		    json_string_value(json_array_get(answers, i)) : "(none)");
		free(s);
		s = t;
	}
	xasprintf(&t, "%s\nContinue with these answers; do not ask again. "
	    "End with the WORKER_RESULT block.\n", s);
	free(s);
	return t;
}

/*
 * skill_state.open_questions: a role's questions while they are open
 * (answers NULL), marked answered once answers come; the capsule shows
 * the open ones to a resumed worker.
 */
void
clarify_questions(json_t *ss, const char *role, const json_t *questions,
    const json_t *answers)
{
	json_t		*list = json_array(), *e;
	const json_t	*q;
	size_t		 i;

	json_array_foreach(questions, i, q) {
		if (!json_is_object(q))
			continue;
		e = json_pack("{s:s?, s:s?, s:O?, s:O?, s:s, s:b}",
		    "id", clarify_s(q, "id"), "question", clarify_s(q, "question"),
		    "options", json_object_get(q, "options"),
		    "recommended", json_object_get(q, "recommended"),
		    "phase", role, "blocking", 1);
		if (answers != NULL && json_is_string(json_array_get(answers,
		    i))) {
			json_object_set_new(e, "status",
			    json_string("answered"));
			json_object_set(e, "answer",
			    json_array_get(answers, i));
		} else
			json_object_set_new(e, "status", json_string("open"));
		json_array_append_new(list, e);
	}
	json_object_set_new(ss, "open_questions", list);
}

/* The failure_reason of a loop ended by a question: why, or the first one. */
char *
clarify_reason(const char *role, const json_t *qs, const char *why)
{
	const json_t	*q = json_array_get(qs, 0);
	char		*reason;

	if (why != NULL)
		xasprintf(&reason, "%s: clarification needed: %s", role, why);
	else
		xasprintf(&reason, "%s: clarification needed: %s: %s", role,
		    clarify_s(q, "id") != NULL ? clarify_s(q, "id") : "Q1",
		    clarify_s(q, "question") != NULL ? clarify_s(q, "question") :
		    "?");
	return reason;
}
