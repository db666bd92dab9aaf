/*
 * test-hostq.c: the queue of questions' engine API (host.h): a hosted
 * auto loop whose roles ask (CLARIFICATION_NEEDED) with
 * question_timeout_ms set and no observer's ask: each question_asked
 * finds the record in host_questions, host_question_answer answers it
 * (via "http") and the worker's re-run gets that answer; once the loop
 * ended, the stored loop's file functions: question_file_list (nothing
 * open), question_file_answer refused for an answered or unknown
 * question and for a bad loop id; host_question_answer: not found.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "ccw-loop.h"
#include "errcode.h"
#include "hostfix.h"
#include "log.h"
#include "state.h"
#include "sup.h"
#include "tap.h"
#include "xmalloc.h"

/* One loop of the test (hostfix's first) and what its events showed. */
struct qrun {
	struct hostfix_loop	 x;
	int			 nasked;	/* question_asked events */
	int			 listed;	/* ... found in host_questions */
	int			 answered;	/* host_question_answer: 0 */
	int			 told;		/* question_answered by alice
						   via http */
	char			 qid[32];	/* the last question's id */
};

/* question_asked: listed, then answered through the host. */
static void
qrun_asked(struct qrun *q, const json_t *o)
{
	const char	*id = json_string_value(json_object_get(
			    json_object_get(o, "question"), "id"));
	json_t		*all = host_questions(q->x.h->host), *r;
	char		*err = NULL;
	size_t		 i;

	q->nasked++;
	json_array_foreach(all, i, r)
		if (id != NULL && strcmp(json_string_value(json_object_get(r,
		    "id")), id) == 0 && strcmp(json_string_value(
		    json_object_get(r, "status")), "open") == 0)
			q->listed++;
	json_decref(all);
	if (id == NULL)
		return;
	snprintf(q->qid, sizeof q->qid, "%s", id);
	if (host_question_answer(q->x.h->host, id, "postgres", "alice",
	    "http", &err) == 0)
		q->answered++;
	else
		tap_diag("host_question_answer: %s", err);
	free(err);
}

/* The loop's events (hostfix.h's callback). */
static void
qrun_event(struct hostfix_loop *x, const char *name, const json_t *o)
{
	struct qrun	*q = (struct qrun *)x;
	const char	*via, *by;

	if (strcmp(name, "question_asked") == 0) {
		qrun_asked(q, o);
		return;
	}
	via = json_string_value(json_object_get(o, "via"));
	by = json_string_value(json_object_get(o, "by"));
	if (strcmp(name, "question_answered") == 0 && via != NULL &&
	    strcmp(via, "http") == 0 && by != NULL && strcmp(by, "alice") == 0)
		q->told++;
}

/* The stored loop's file functions, the loop ended. */
static void
qrun_files(struct hostfix *h, const struct qrun *q, const char *id)
{
	json_t	*open;
	char	*err = NULL;
	int	 rc;

	open = question_file_list(h->dirfd, id, &err);
	tap_ok(open != NULL && json_array_size(open) == 0,
	    "question_file_list: nothing open once answered (%s)",
	    err != NULL ? err : "ok");
	json_decref(open);
	free(err);
	err = NULL;
	rc = question_file_answer(h->dirfd, id, q->qid, "sqlite", NULL,
	    "cli", &err);
	tap_ok(rc == -ERR_CONFLICT && err != NULL, "question_file_answer: an "
	    "answered question is refused, conflict (%d: %s)", rc, err);
	free(err);
	err = NULL;
	rc = question_file_answer(h->dirfd, id, "q-000000000000", "x", NULL,
	    "cli", &err);
	tap_ok(rc == -ERR_NOT_FOUND, "an unknown question: not found (%d)",
	    rc);
	free(err);
	err = NULL;
	rc = question_file_answer(h->dirfd, "../x", q->qid, "x", NULL, "cli",
	    &err);
	tap_ok(rc == -ERR_NOT_FOUND && err != NULL, "a bad loop id: refused "
	    "(%d)", rc);
	free(err);
	err = NULL;
	rc = host_question_answer(h->host, q->qid, "x", NULL, "http", &err);
	tap_ok(rc == -ERR_NOT_FOUND, "host_question_answer: the loop no "
	    "longer live: not found (%d)", rc);
	free(err);
}

int
main(void)
{
	struct hostfix	 h;
	struct qrun	 q;
	char		*s;
	size_t		 i;

	if (hostfix_init_asking(&h, "hostq") != 0)
		return 0;
	for (i = 0; i < h.cfg.nroles; i++) {
		h.cfg.roles[i].question_timeout_ms = 60000;
		h.cfg.roles[i].on_question_timeout = 1;	/* fail */
	}

	memset(&q, 0, sizeof q);
	h.n = 1;
	if (hostfix_open(&h, &q.x, "hq-1", LOOP_AUTO, qrun_event) == 0)
		event_base_dispatch(h.base);
	tap_ok(q.x.code == EXIT_OK, "answered through the host: the loop "
	    "completed (exit %d)", q.x.code);
	tap_ok(q.nasked == 5 && q.listed == 5 && q.answered == 5,
	    "each role's question_asked found its open record in "
	    "host_questions and host_question_answer took the answer (%d "
	    "asked, %d listed, %d answered)", q.nasked, q.listed, q.answered);
	tap_ok(q.told == 5, "question_answered said by alice via http (%d)",
	    q.told);
	s = hostfix_summary(&h, "hq-1", "develop");
	tap_ok(strcmp(s, "used postgres") == 0, "the worker's re-run got "
	    "the answer given through the host (%s)", s);
	free(s);
	qrun_files(&h, &q, "hq-1");
	hostfix_free(&h);
	return tap_done();
}
