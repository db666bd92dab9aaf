/*
 * question.h: the queue of questions' records and files (question.c):
 * a worker's clarification as records in skill_state.questions[], their
 * answers, and {id}.answers.jsonl, where a front end in another process
 * appends an answer for the driving loop to take.  The front ends' API
 * (question_file_list, question_file_answer, host_questions) is in
 * host.h.
 */
#ifndef CCW_QUESTION_H
#define CCW_QUESTION_H

#include <sys/types.h>

#include <stdint.h>

#include <jansson.h>

#define QUESTION_ID_LEN	14	/* "q-" and 12 hex digits */

/* on_question_timeout: what a deadline nobody answered by does */
enum question_policy {
	QP_RECOMMENDED,		/* the recommended option, via "policy" */
	QP_FAIL,		/* the step fails, and the loop */
	QP_PAUSE,		/* the loop pauses; the questions stay open */
};
extern const char *const question_policies[];	/* their words, NULL-ended */

void		 question_deadline(uint64_t, char *, size_t);
json_t		*question_record(const char *, const char *, const char *,
		    const json_t *, uint64_t, const char *);
json_t		*question_find(const json_t *, const char *);
int		 question_is_open(const json_t *);
void		 question_answer_set(json_t *, const char *, const char *,
		    const char *, const char *);
void		 question_expire(json_t *);
void		 question_open_append(const json_t *, json_t *);
json_t		*question_answers_read(int, const char *, off_t *, size_t *);
char		*question_answers_name(const char *);

#endif
