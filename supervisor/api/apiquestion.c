/*
 * apiquestion.c: the queue of questions as two verbs of the table,
 * list_questions and answer_question: the host's live loops through
 * host.h (host_questions, host_question_answer), the stored ones (not
 * run here, or driven by another process) through their files
 * (question_file_list, question_file_answer) on the api's thread.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "apiint.h"
#include "committer.h"
#include "host.h"
#include "state.h"
#include "sup.h"
#include "xmalloc.h"

/* One question verb's file work; the thread fills found, record, err. */
struct api_qjob {
	struct api_pending	*p;
	char			*loop_id;	/* one loop, or NULL: all */
	int			 all;		/* list: every status */
	char			*qid;		/* answer: the question, */
	char			*answer;	/* its answer, who gave it */
	char			*by;
	json_t			*found;		/* list: loop id -> records */
	json_t			*record;	/* answer: the one answered */
	enum err_code		 code;		/* ERR_NONE, or why not */
	char			*err;
};

/*
 * Each loop of the directory (state_dir_each), or the one the job names:
 * fn(job, dirfd, id) on the api's thread until it returns nonzero.
 */
static void
api_q_each(struct api_qjob *j, int dirfd, state_each_fn fn)
{
	if (j->loop_id != NULL)
		(void)fn(j, dirfd, j->loop_id);
	else
		state_dir_each(dirfd, fn, j);
}

/* A loop's every question as its state file holds them (a new array). */
static json_t *
api_q_records(int dirfd, const char *id)
{
	json_t	*st = NULL, *qs;
	char	*err = NULL;

	if (state_load_at(dirfd, id, ".json", STATE_LOAD_NOQUARANTINE, &st,
	    NULL, &err) != STATE_OK) {
		free(err);
		json_decref(st);
		return json_array();
	}
	qs = json_object_get(json_object_get(st, "skill_state"), "questions");
	qs = json_is_array(qs) ? json_deep_copy(qs) : json_array();
	json_decref(st);
	return qs;
}

/* The record of question qid in an array of records, or NULL. */
static json_t *
api_q_find(const json_t *records, const char *qid)
{
	json_t	*q;
	size_t	 i;

	json_array_foreach(records, i, q)
		if (json_is_string(json_object_get(q, "id")) &&
		    strcmp(json_string_value(json_object_get(q, "id")),
		    qid) == 0)
			return q;
	return NULL;
}

/* list, on the thread: one loop's open questions (or all of them). */
static int
api_q_list_one(void *arg, int dirfd, const char *id)
{
	struct api_qjob	*j = arg;
	json_t		*qs;
	char	*err = NULL;

	if (j->all)
		qs = api_q_records(dirfd, id);
	else if ((qs = question_file_list(dirfd, id, &err)) == NULL) {
		free(err);	/* a loop mid-write or gone: not listed */
		return 0;
	}
	if (json_array_size(qs) > 0)
		json_object_set_new(j->found, id, qs);
	else
		json_decref(qs);
	return 0;
}

/*
 * The record as the answer makes it (a new one): what the caller sees
 * at once, whether the loop took it yet or will when it runs.
 */
static json_t *
api_q_answered(const json_t *rec, const char *answer, const char *by,
    const char *via)
{
	json_t	*q = json_deep_copy(rec);

	json_object_set_new(q, "status", json_string("answered"));
	json_object_set_new(q, "answer", json_string(answer));
	json_object_set_new(q, "answered_by", by != NULL ? json_string(by) :
	    json_null());
	json_object_set_new(q, "via", json_string(via));
	return q;
}

/*
 * answer, on the thread: the loop whose file holds question qid gets the
 * answer in its answers file (question_file_answer refuses one no
 * longer open: answered, expired).  1 once the question is found.
 */
static int
api_q_answer_one(void *arg, int dirfd, const char *id)
{
	struct api_qjob	*j = arg;
	json_t		*qs, *rec;
	int		 rc;

	qs = api_q_records(dirfd, id);
	if ((rec = api_q_find(qs, j->qid)) != NULL) {
		if ((rc = question_file_answer(dirfd, id, j->qid, j->answer,
		    j->by, j->p->via, &j->err)) == 0)
			j->record = api_q_answered(rec, j->answer, j->by,
			    j->p->via);
		else
			j->code = (enum err_code)-rc;
	}
	json_decref(qs);
	return rec != NULL;
}

/* On the api's thread: the job's walk. */
static void
api_q_run(void *arg)
{
	struct api_qjob	*j = arg;

	if (j->qid == NULL) {
		api_q_each(j, j->p->api->dirfd, api_q_list_one);
		return;
	}
	api_q_each(j, j->p->api->dirfd, api_q_answer_one);
	if (j->record == NULL && j->code == ERR_NONE) {
		j->code = ERR_NOT_FOUND;
		xasprintf(&j->err, "no question %s", j->qid);
	}
}

/* Does a record belong to the loop asked for (NULL: any)? */
static int
api_q_of(const json_t *q, const char *loop_id)
{
	const char	*l = json_string_value(json_object_get(q, "loop_id"));

	return loop_id == NULL || (l != NULL && strcmp(l, loop_id) == 0);
}

/*
 * The list: the live loops' open questions (the host's memory is ahead
 * of their files), then the stored loops' from their files; with
 * status all, a live loop's answered and expired ones from its file.
 */
static json_t *
api_q_merge(struct api *api, const char *loop_id, json_t *found, int all)
{
	json_t		*out = json_array(), *live, *qs, *q;
	const char	*id;
	size_t		 i;

	live = api->host.loops != NULL ? host_questions(api->host.loops) :
	    json_array();
	json_array_foreach(live, i, q)
		if (api_q_of(q, loop_id))
			json_array_append(out, q);
	json_object_foreach(found, id, qs) {
		if (!all && api->host.loops != NULL &&
		    host_loop_find(api->host.loops, id) != NULL)
			continue;
		json_array_foreach(qs, i, q)
			if (api_q_find(live, json_string_value(
			    json_object_get(q, "id"))) == NULL &&
			    api_q_of(q, loop_id))
				json_array_append(out, q);
	}
	json_decref(live);
	return out;
}

/* The job's memory (its call answered, or to be). */
static void
api_q_free(struct api_qjob *j)
{
	json_decref(j->found);
	json_decref(j->record);
	free(j->loop_id);
	free(j->qid);
	free(j->answer);
	free(j->by);
	free(j->err);
	free(j);
}

/* Back on the loop: the reply; the job freed. */
static void
api_q_done(void *arg)
{
	struct api_qjob	*j = arg;

	if (j->code != ERR_NONE)
		api_fail(j->p, j->code, "%s", j->err != NULL ? j->err :
		    "not answered");
	else if (j->qid == NULL)
		api_reply(j->p, json_pack("{s:b, s:o}", "ok", 1, "questions",
		    api_q_merge(j->p->api, j->loop_id, j->found, j->all)));
	else
		api_reply(j->p, json_pack("{s:b, s:O}", "ok", 1, "question",
		    j->record));
	api_q_free(j);
}

/*
 * The job to the api's thread; without a state directory (none made
 * yet) only the live loops count, at once.
 */
static void
api_q_submit(struct api_qjob *j)
{
	struct api	*api = j->p->api;
	int		 rc;

	if ((rc = api_loop_dir(api, 0)) != 0) {
		if (rc < 0) {
			j->code = ERR_UNAVAILABLE;
			j->err = xstrdup(api->dir_error);
		} else if (j->qid != NULL) {
			j->code = ERR_NOT_FOUND;
			xasprintf(&j->err, "no question %s", j->qid);
		}
		api_q_done(j);
		return;
	}
	if (api_loop_committer(j->p) != 0) {	/* answered there */
		api_q_free(j);
		return;
	}
	if (committer_submit(api->committer, api_q_run, api_q_done, j) != 0) {
		api_q_run(j);
		api_q_done(j);
	}
}

/* A new job for p, or NULL with p answered (a bad loop id). */
static struct api_qjob *
api_q_new(struct api_pending *p, const json_t *req)
{
	const char	*id = json_string_value(json_object_get(req, "loop_id"));
	struct api_qjob	*j;

	if (id != NULL && !state_id_valid(id)) {
		api_fail(p, ERR_INVALID, "Invalid loop ID format: '%.*s'",
		    STATE_ID_MAX, id);
		return NULL;
	}
	j = xcalloc(1, sizeof *j);
	j->p = p;
	j->loop_id = id != NULL ? xstrdup(id) : NULL;
	j->found = json_object();
	return j;
}

/* list_questions: loop_id (one loop), status open (default) or all. */
void
api_questions_list(struct api_pending *p, const json_t *req)
{
	const char	*st = json_string_value(json_object_get(req, "status"));
	struct api_qjob	*j;

	if ((j = api_q_new(p, req)) == NULL)
		return;
	j->all = st != NULL && strcmp(st, "all") == 0;
	api_q_submit(j);
}

/*
 * answer_question: a live loop's open question is answered in memory
 * (the worker gets it now); any other goes to its loop's answers file.
 */
void
api_question_answer(struct api_pending *p, const json_t *req)
{
	struct api	*api = p->api;
	const char	*qid = json_string_value(json_object_get(req,
			    "question_id"));
	const char	*answer = json_string_value(json_object_get(req,
			    "answer"));
	const char	*by = json_string_value(json_object_get(req, "by"));
	struct api_qjob	*j;
	json_t		*live, *rec;
	char		*err = NULL;
	int		 rc;

	if (*answer == '\0') {
		api_fail(p, ERR_INVALID, "answer_question: an empty answer");
		return;
	}
	if ((j = api_q_new(p, req)) == NULL)
		return;
	live = api->host.loops != NULL ? host_questions(api->host.loops) :
	    json_array();
	if ((rec = api_q_find(live, qid)) != NULL && api_q_of(rec,
	    j->loop_id)) {
		if ((rc = host_question_answer(api->host.loops, qid, answer,
		    by, p->via, &err)) == 0)
			j->record = api_q_answered(rec, answer, by, p->via);
		else {
			j->code = (enum err_code)-rc;
			j->err = err;
		}
		j->qid = xstrdup(qid);
		json_decref(live);
		api_q_done(j);
		return;
	}
	json_decref(live);
	j->qid = xstrdup(qid);
	j->answer = xstrdup(answer);
	j->by = by != NULL ? xstrdup(by) : NULL;
	api_q_submit(j);
}
