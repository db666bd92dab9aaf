/*
 * question.c: the queue of questions' records (skill_state.questions[],
 * one per question a worker asked: open, then answered or expired) and
 * the answers file {id}.answers.jsonl, one JSON line an answer that a
 * front end outside the driving process appends and the loop takes.
 */
#include <config.h>

#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "errcode.h"
#include "host.h"
#include "question.h"
#include "state.h"
#include "xmalloc.h"

#define QUESTION_LINE_MAX	(64 * 1024)	/* one answer line, at most */
#define QUESTION_WINDOW		(16 * QUESTION_LINE_MAX)	/* read at once */

const char *const question_policies[] = { "recommended", "fail", "pause",
	NULL };

/* A string member, or NULL. */
static const char *
question_s(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/*
 * "q-" and 12 hex digits from getrandom: unique over the host, so a
 * front end's route needs no loop id.
 */
static void
question_id_new(char id[QUESTION_ID_LEN + 1])
{
	unsigned char	b[6];
	size_t		i;

	if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
		uint64_t	x = clock_mono_ms() ^ ((uint64_t)getpid() << 32);

		for (i = 0; i < sizeof b; i++)
			b[i] = (unsigned char)(x >> (8 * i));
	}
	memcpy(id, "q-", 2);
	for (i = 0; i < sizeof b; i++)
		snprintf(id + 2 + 2 * i, 3, "%02x", b[i]);
}

/* The wall-clock time timeout_ms from now, ISO 8601, into buf. */
void
question_deadline(uint64_t timeout_ms, char *buf, size_t len)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(timeout_ms / 1000);
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	clock_iso(&ts, 1, buf, len);
}

/*
 * The record of one worker question (q as its result holds it: id,
 * question, options, recommended), asked now; its deadline timeout_ms
 * on (0: none, null).  "ref" keeps the worker's own id (Q1) for the
 * answer text sent back.
 */
json_t *
question_record(const char *loop_id, const char *agent_id, const char *role,
    const json_t *q, uint64_t timeout_ms, const char *now)
{
	char		 id[QUESTION_ID_LEN + 1], dl[40];
	const json_t	*opts = json_object_get(q, "options");

	question_id_new(id);
	question_deadline(timeout_ms, dl, sizeof dl);
	return json_pack("{s:s, s:s, s:s?, s:s, s:s, s:O, s:O?, s:s, s:s?, "
	    "s:s, s:n, s:n, s:n, s:s?}", "id", id, "loop_id", loop_id,
	    "agent_id", agent_id, "role", role, "question",
	    question_s(q, "question") != NULL ? question_s(q, "question") : "?",
	    "options", json_is_array(opts) ? opts : json_array(),
	    "recommended", json_is_string(json_object_get(q, "recommended")) ?
	    json_object_get(q, "recommended") : NULL, "asked_at", now,
	    "deadline", timeout_ms > 0 ? dl : NULL, "status", "open",
	    "answer", "answered_by", "via", "ref", question_s(q, "id"));
}

/* The record of that id in a questions array, or NULL (borrowed). */
json_t *
question_find(const json_t *qs, const char *qid)
{
	json_t	*q;
	size_t	 i;

	json_array_foreach(qs, i, q)
		if (qid != NULL && question_s(q, "id") != NULL &&
		    strcmp(question_s(q, "id"), qid) == 0)
			return q;
	return NULL;
}

/* Whether a record still waits for its answer. */
int
question_is_open(const json_t *q)
{
	return question_s(q, "status") != NULL &&
	    strcmp(question_s(q, "status"), "open") == 0;
}

/* Answered: the answer, who gave it, through what front end, when. */
void
question_answer_set(json_t *q, const char *answer, const char *by,
    const char *via, const char *at)
{
	json_object_set_new(q, "status", json_string("answered"));
	json_object_set_new(q, "answer", json_string(answer));
	json_object_set_new(q, "answered_by", by != NULL ? json_string(by) :
	    json_null());
	json_object_set_new(q, "via", via != NULL ? json_string(via) :
	    json_null());
	if (at != NULL)
		json_object_set_new(q, "answered_at", json_string(at));
}

/* Nobody answered by the deadline (the policy said fail or pause). */
void
question_expire(json_t *q)
{
	json_object_set_new(q, "status", json_string("expired"));
}

/* The open records of a state (its skill_state.questions) onto out. */
void
question_open_append(const json_t *st, json_t *out)
{
	const json_t	*q;
	size_t		 i;

	json_array_foreach(json_object_get(json_object_get(st,
	    "skill_state"), "questions"), i, q)
		if (question_is_open(q))
			json_array_append(out, (json_t *)q);
}

/* {id}.answers.jsonl: the answers file's name beside the state file. */
char *
question_answers_name(const char *loop_id)
{
	char	*name;

	xasprintf(&name, "%s.answers.jsonl", loop_id);
	return name;
}

/*
 * One window of the answers file, [*off, *off + len): its complete lines
 * taken (objects appended to out, anything else counted in *junk), a
 * line longer than QUESTION_LINE_MAX skipped up to its newline (junk
 * too); *off moves past what was decided.  0 when the window had no
 * newline to decide on (a partial last line waits).
 */
static int
question_answers_window(int fd, off_t *off, size_t len, json_t *out,
    size_t *junk)
{
	char	*buf = xmalloc(len + 1), *p, *nl;
	json_t	*o;
	ssize_t	 n = pread(fd, buf, len, *off);
	int	 moved = 0;

	if (n <= 0) {
		free(buf);
		return 0;
	}
	buf[n] = '\0';
	for (p = buf; (nl = memchr(p, '\n', (size_t)(buf + n - p))) != NULL;
	    p = nl + 1) {
		*nl = '\0';
		o = nl - p < QUESTION_LINE_MAX ? json_loads(p, 0, NULL) : NULL;
		if (json_is_object(o))
			json_array_append(out, o);
		else if (nl > p)
			(*junk)++;
		json_decref(o);
		moved = 1;
	}
	/* a window of one unfinished line longer than a line may be: junk */
	if (!moved && n >= QUESTION_LINE_MAX) {
		(*junk)++;
		p = buf + n;
		moved = 1;
	}
	*off += p - buf;
	free(buf);
	return moved;
}

/*
 * The answers appended since *off (the file's complete lines; a partial
 * last line waits for its newline), a new array of objects; *off moves
 * past what was read, *junk counts the lines that were no answer (not
 * an object, or longer than QUESTION_LINE_MAX).  A flood is read a
 * window at a time, so an answer after it is still taken; a file that
 * shrank (rotated) is read again from its start.  No file: an empty
 * array.
 */
json_t *
question_answers_read(int dirfd, const char *loop_id, off_t *off,
    size_t *junk)
{
	json_t		*out = json_array();
	char		*name = question_answers_name(loop_id);
	struct stat	 sb;
	size_t		 len;
	int		 fd;

	*junk = 0;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	free(name);
	if (fd == -1)
		return out;
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return out;
	}
	if (sb.st_size < *off)
		*off = 0;
	while (sb.st_size > *off) {
		len = (size_t)(sb.st_size - *off);
		if (len > QUESTION_WINDOW)
			len = QUESTION_WINDOW;
		if (!question_answers_window(fd, off, len, out, junk))
			break;
	}
	close(fd);
	return out;
}

/* A stored loop's state, or NULL and *err. */
static json_t *
question_state(int dirfd, const char *loop_id, char **err)
{
	json_t	*st = NULL;

	*err = NULL;
	if (loop_id == NULL || !state_id_valid(loop_id)) {
		xasprintf(err, "not a loop id: %s", loop_id != NULL ? loop_id :
		    "(none)");
		return NULL;
	}
	if (state_load(dirfd, loop_id, &st, err) != STATE_OK) {
		json_decref(st);
		if (*err == NULL)
			xasprintf(err, "loop %s: cannot read its state", loop_id);
		return NULL;
	}
	return st;
}

/* A stored loop's open questions, a new array; NULL and *err. */
json_t *
question_file_list(int dirfd, const char *loop_id, char **err)
{
	json_t	*st, *out;

	if ((st = question_state(dirfd, loop_id, err)) == NULL)
		return NULL;
	out = json_array();
	question_open_append(st, out);
	json_decref(st);
	return out;
}

/*
 * Append an answer to a stored loop's answers file, once its state shows
 * the question open: one line, one write(2), O_APPEND and O_NOFOLLOW, so
 * concurrent front ends never interleave.  0, else -(enum err_code).
 */
int
question_file_answer(int dirfd, const char *loop_id, const char *qid,
    const char *answer, const char *by, const char *via, char **err)
{
	json_t	*st, *q, *line;
	char	*s, *name, now[40], *buf;
	size_t	 len;
	int	 fd, rc = 0;

	if (qid == NULL || answer == NULL || *answer == '\0') {
		xasprintf(err, "a question id and an answer are needed");
		return -ERR_INVALID;
	}
	if ((st = question_state(dirfd, loop_id, err)) == NULL)
		return -ERR_NOT_FOUND;
	q = question_find(json_object_get(json_object_get(st, "skill_state"),
	    "questions"), qid);
	if (q == NULL || !question_is_open(q)) {
		xasprintf(err, "loop %s: %s: %s", loop_id, qid, q == NULL ?
		    "no such question" : "not open");
		json_decref(st);
		return q == NULL ? -ERR_NOT_FOUND : -ERR_CONFLICT;
	}
	json_decref(st);
	clock_iso(NULL, 1, now, sizeof now);
	line = json_pack("{s:s, s:s, s:s?, s:s?, s:s}", "question_id", qid,
	    "answer", answer, "by", by, "via", via, "at", now);
	s = json_dumps(line, JSON_COMPACT);
	json_decref(line);
	len = strlen(s);
	if (len + 1 > QUESTION_LINE_MAX) {
		free(s);
		xasprintf(err, "the answer is too long");
		return -ERR_INVALID;
	}
	xasprintf(&buf, "%s\n", s);
	free(s);
	name = question_answers_name(loop_id);
	fd = openat(dirfd, name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd == -1 || write(fd, buf, len + 1) != (ssize_t)(len + 1)) {
		xasprintf(err, "%s: %s", name, strerror(errno));
		rc = -ERR_INTERNAL;
	}
	if (fd != -1)
		close(fd);
	free(name);
	free(buf);
	return rc;
}
