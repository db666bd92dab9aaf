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

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* One loop of the test and what its events showed. */
struct qrun {
	struct hostfix	*h;
	int		 nasked;	/* question_asked events */
	int		 listed;	/* ... whose record host_questions had */
	int		 answered;	/* host_question_answer returned 0 */
	int		 told;		/* question_answered via http by alice */
	char		 qid[32];	/* the last question's id */
	int		 code;		/* -1 until done */
};

/* question_asked: listed, then answered through the host. */
static void
qrun_asked(struct qrun *q, const json_t *o)
{
	const char	*id = json_string_value(json_object_get(
			    json_object_get(o, "question"), "id"));
	json_t		*all = host_questions(q->h->host), *r;
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
	if (host_question_answer(q->h->host, id, "postgres", "alice", "http",
	    &err) == 0)
		q->answered++;
	else
		tap_diag("host_question_answer: %s", err);
	free(err);
}

static void
qrun_event(void *arg, struct host_loop *hl, uint64_t seq, const char *name,
    const json_t *o)
{
	struct qrun	*q = arg;

	(void)hl;
	(void)seq;
	if (strcmp(name, "question_asked") == 0)
		qrun_asked(q, o);
	else if (strcmp(name, "question_answered") == 0 &&
	    json_is_string(json_object_get(o, "via")) &&
	    strcmp(json_string_value(json_object_get(o, "via")), "http") == 0 &&
	    strcmp(json_string_value(json_object_get(o, "by")), "alice") == 0)
		q->told++;
}

static void
qrun_opened(void *arg, struct host_loop *hl, int code, const char *err)
{
	struct qrun	*q = arg;

	(void)hl;
	if (err == NULL)
		return;
	tap_ok(0, "open: %s", err);
	q->code = code;
	event_base_loopbreak(q->h->base);
}

static void
qrun_done(void *arg, struct host_loop *hl, int code)
{
	struct qrun	*q = arg;

	(void)hl;
	q->code = code;
	event_base_loopbreak(q->h->base);
}

/* Run loop ID to its end. */
static void
qrun_run(struct hostfix *h, struct qrun *q, const char *id)
{
	struct loop_spec	 spec;
	struct host_observer	 obs;
	char			*err = NULL;

	q->h = h;
	q->code = -1;
	memset(&spec, 0, sizeof spec);
	spec.id = id;
	spec.task = "Store the users";
	spec.mode = "auto";
	spec.state = &ccw_loop_state;
	memset(&obs, 0, sizeof obs);
	obs.opened = qrun_opened;
	obs.done = qrun_done;
	obs.event = qrun_event;
	obs.arg = q;
	if (host_loop_open(h->host, &spec, NULL, &obs, &err) == NULL) {
		tap_ok(0, "host_loop_open %s: %s", id, err);
		free(err);
		return;
	}
	event_base_dispatch(h->base);
}

/* The summary of a role's last output ({id}.workers/ROLE.output.json). */
static char *
qrun_summary(struct hostfix *h, const char *id, const char *role)
{
	json_t	*o;
	char	*path, *out;

	xasprintf(&path, "%s/%s.workers/%s.output.json", h->state_dir, id,
	    role);
	o = json_load_file(path, 0, NULL);
	free(path);
	out = xstrdup(json_string_value(json_object_get(o, "summary")) !=
	    NULL ? json_string_value(json_object_get(o, "summary")) : "");
	json_decref(o);
	return out;
}

/* The stored loop's file functions, the loop ended. */
static void
qrun_files(struct hostfix *h, struct qrun *q, const char *id)
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
	char		 cwd[PATH_MAX], *cmd, *s;
	size_t		 i;

	if (getcwd(cwd, sizeof cwd) == NULL)
		fatal("getcwd");
	/* every role asks once, then says which database it was told */
	xasprintf(&cmd, "p=$(timeout 0.5 cat); case \"$p\" in "
	    "*'Which database? -> '*) db=${p##*Which database? -> }; "
	    "db=${db%%%%[!a-z]*}; exec '%s/tests/fake-agent' result success "
	    "\"used $db\";; *) exec '%s/tests/fake-agent' clarify;; esac",
	    cwd, cwd);
	if (hostfix_init_cmd(&h, "hostq", 0, 0, cmd) != 0) {
		free(cmd);
		return 0;
	}
	free(cmd);
	for (i = 0; i < h.cfg.nroles; i++) {
		h.cfg.roles[i].question_timeout_ms = 60000;
		h.cfg.roles[i].on_question_timeout = 1;	/* fail */
	}

	memset(&q, 0, sizeof q);
	qrun_run(&h, &q, "hq-1");
	tap_ok(q.code == EXIT_OK, "answered through the host: the loop "
	    "completed (exit %d)", q.code);
	tap_ok(q.nasked == 5 && q.listed == 5 && q.answered == 5,
	    "each role's question_asked found its open record in "
	    "host_questions and host_question_answer took the answer (%d "
	    "asked, %d listed, %d answered)", q.nasked, q.listed, q.answered);
	tap_ok(q.told == 5, "question_answered said by alice via http (%d)",
	    q.told);
	s = qrun_summary(&h, "hq-1", "develop");
	tap_ok(strcmp(s, "used postgres") == 0, "the worker's re-run got "
	    "the answer given through the host (%s)", s);
	free(s);
	qrun_files(&h, &q, "hq-1");
	hostfix_free(&h);
	return tap_done();
}
