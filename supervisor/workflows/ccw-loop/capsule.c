/*
 * capsule.c: the resume capsule.  Owns the mapping from a LoopState to
 * seed 004's CompactCapsule (hard denies, open questions, resume point,
 * gate, write transactions, source anchors with file hashes, stop hook),
 * its validation and its English rendering for a worker's prompt.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "capsule.h"
#include "ccw-loop.h"
#include "xmalloc.h"

#define CAPSULE_MAX_ITEMS	50	/* per list: the prompt stays small */
#define CAPSULE_MAX_LINE	500	/* bytes of one rendered line */

/* The roles in auto order: ccw-loop's (roles-ccw.c). */
#define CAPSULE_NROLES	((long long)LOOP_NROLES)
#define capsule_role(i)	(ccw_loop_roles[(i)].name)

struct capsule_buf {
	char	*p;
	size_t	 len, cap;
};

/* A string member, or NULL when absent or of another type. */
static const char *
capsule_str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* An integer member (a whole real counts), or the fallback. */
static long long
capsule_int(const json_t *o, const char *k, long long dflt)
{
	const json_t	*v = json_object_get(o, k);
	double		 d = json_number_value(v);

	if (json_is_integer(v))
		return (long long)json_integer_value(v);
	return json_is_real(v) && d >= -1e15 && d <= 1e15 &&
	    d == (double)(long long)d ? (long long)d : dflt;
}

/* Case-insensitive substring test, for classifying failure reasons. */
static int
capsule_has(const char *hay, const char *needle)
{
	return hay != NULL && strcasestr(hay, needle) != NULL;
}

/* Append a formatted string; the buffer grows as needed. */
static void __attribute__((format(printf, 2, 3)))
capsule_printf(struct capsule_buf *b, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		b->cap = b->cap * 2 + (size_t)n + 1;
		b->p = xreallocarray(b->p, b->cap, 1);
	}
}

/*
 * One line of the rendering.  Text from the state is untrusted: control
 * bytes become spaces (an agent's question must not forge a heading) and
 * a long line is cut at a character boundary.
 */
static void __attribute__((format(printf, 2, 3)))
capsule_line(struct capsule_buf *b, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;
	size_t	 n, i;
	int	 len;

	va_start(ap, fmt);
	len = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	n = (size_t)len;
	if (n > CAPSULE_MAX_LINE) {
		n = CAPSULE_MAX_LINE;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			s[i] = ' ';
	capsule_printf(b, "%.*s%s\n", (int)n, s, n < (size_t)len ? "..." : "");
	free(s);
}

/* Add a string to an array unless an equal one is there already. */
static void
capsule_add_unique(json_t *arr, const char *s)
{
	size_t		 i;
	const json_t	*e;

	json_array_foreach(arr, i, e)
		if (strcmp(json_string_value(e), s) == 0)
			return;
	json_array_append_new(arr, json_string(s));
}

/* Does a completed_actions entry name the role ("develop", or CCW's
 * "action-develop-with-file")? */
static int
capsule_names_role(const char *e, const char *role)
{
	size_t	n = strlen(role);

	if (e != NULL && strncmp(e, "action-", 7) == 0)
		e += 7;
	return e != NULL && strncmp(e, role, n) == 0 &&
	    (e[n] == '\0' || e[n] == '-');
}


/* --- the sections, each from the state */

/*
 * A stop hook fired when the loop ended: done when completed; for a
 * failure, the reason says whether the budget ran out, it was stuck
 * (timeouts, no progress) or it was blocked.  A paused loop has none.
 */
static json_t *
capsule_stop(const json_t *st)
{
	const char	*status = capsule_str(st, "status");
	const char	*reason = capsule_str(st, "failure_reason");
	const char	*type = "blocked";
	long long	 cur, max;

	if (status != NULL && strcmp(status, "completed") == 0)
		return json_pack("{s:s, s:s+}", "type", "done", "reason",
		    "loop completed at ", capsule_str(st, "completed_at") ?
		    capsule_str(st, "completed_at") : "an unrecorded time");
	if (status == NULL || strcmp(status, "failed") != 0)
		return NULL;
	cur = capsule_int(st, "current_iteration", -1);
	max = capsule_int(st, "max_iterations", -1);
	if ((max > 0 && cur >= max) || capsule_has(reason, "max_iterations") ||
	    capsule_has(reason, "budget"))
		type = "budget-exhausted";
	else if (capsule_has(reason, "timed out") ||
	    capsule_has(reason, "timeout") || capsule_has(reason, "stuck") ||
	    capsule_has(reason, "no progress"))
		type = "stuck";
	return json_pack("{s:s, s:s}", "type", type, "reason",
	    reason != NULL && reason[0] != '\0' ? reason : "loop failed");
}

/*
 * Hard denies are what blocks the loop outright: an error of the complete
 * action (completion was refused), an error marked hard-deny or blocking
 * by whoever recorded it, and a failure that blocked the loop (not a
 * person's stop, an exhausted budget or a timeout: those are only the
 * stop hook).  A failed validation is a soft deny: it is in the gate.
 */
static json_t *
capsule_hard_denies(const json_t *ss, const json_t *stop)
{
	json_t		*out = json_array();
	const json_t	*e;
	const char	*act, *msg, *sev;
	char		*line;
	size_t		 i;

	json_array_foreach(json_object_get(ss, "errors"), i, e) {
		act = capsule_str(e, "action");
		msg = capsule_str(e, "message");
		if (msg == NULL || msg[0] == '\0')
			continue;
		sev = capsule_str(e, "severity");
		if (sev == NULL)
			sev = capsule_str(e, "kind");
		if ((act == NULL || strcmp(act, "complete") != 0) &&
		    (sev == NULL || strcmp(sev, "hard-deny") != 0) &&
		    !json_is_true(json_object_get(e, "blocking")))
			continue;
		xasprintf(&line, "%s: %s", act != NULL ? act : "loop", msg);
		capsule_add_unique(out, line);
		free(line);
	}
	msg = capsule_str(stop, "reason");
	if (capsule_str(stop, "type") != NULL &&
	    strcmp(capsule_str(stop, "type"), "blocked") == 0 &&
	    !capsule_has(msg, "stopped by")) {
		xasprintf(&line, "loop failed: %s", msg);
		capsule_add_unique(out, line);
		free(line);
	}
	while (json_array_size(out) > CAPSULE_MAX_ITEMS)
		json_array_remove(out, 0);
	return out;
}

/*
 * The questions of the last needs_input result, which the run engine keeps
 * in skill_state.open_questions until they are answered.  An entry marked
 * answered (a status other than "open", or an answer) is no longer open.
 */
static json_t *
capsule_questions(const json_t *ss)
{
	json_t		*out = json_array();
	const json_t	*q;
	const char	*text, *id, *phase, *status;
	char		 gen[32];
	size_t		 i;

	json_array_foreach(json_object_get(ss, "open_questions"), i, q) {
		if ((text = capsule_str(q, "question")) == NULL)
			continue;
		status = capsule_str(q, "status");
		if ((status != NULL && strcmp(status, "open") != 0) ||
		    json_is_string(json_object_get(q, "answer")))
			continue;
		if ((id = capsule_str(q, "id")) == NULL || id[0] == '\0') {
			snprintf(gen, sizeof gen, "Q%zu", i + 1);
			id = gen;
		}
		if ((phase = capsule_str(q, "phase")) == NULL &&
		    (phase = capsule_str(ss, "current_action")) == NULL)
			phase = "init";
		json_array_append_new(out, json_pack("{s:s, s:s, s:b, s:s}",
		    "id", id, "question", text, "blocking",
		    !json_is_false(json_object_get(q, "blocking")),
		    "phase", phase));
		if (json_array_size(out) == CAPSULE_MAX_ITEMS)
			break;
	}
	return out;
}

/*
 * Where to continue: the phase is the current action; the next action is
 * the role at action_index (the engine saves the index of the action to
 * run next), else the one after the current action once that is recorded
 * done.  When it is the current action itself, that action stopped
 * half-way (failed, interrupted): "resume ROLE".
 */
static json_t *
capsule_resume(const json_t *st, const json_t *ss, const json_t *questions)
{
	const char	*cur = capsule_str(ss, "current_action");
	const char	*status = capsule_str(st, "status"), *next;
	const json_t	*q, *done = json_object_get(ss, "completed_actions");
	json_t		*snap;
	long long	 idx = capsule_int(ss, "action_index", -1);
	size_t		 i;

	if (status != NULL && strcmp(status, "completed") == 0)
		return json_null();
	if (cur != NULL && cur[0] == '\0')
		cur = NULL;
	if (idx < 0) {
		for (idx = 0; cur != NULL && idx < CAPSULE_NROLES &&
		    strcmp(cur, capsule_role(idx)) != 0; idx++)
			;
		if (cur == NULL || idx == CAPSULE_NROLES)
			idx = 0;
		else if (capsule_names_role(json_string_value(json_array_get(
		    done, json_array_size(done) - 1)), cur))
			idx++;
	}
	next = capsule_role(idx < CAPSULE_NROLES ? idx : CAPSULE_NROLES - 1);
	snap = json_pack("{s:s, s:s+}", "phase", cur != NULL ? cur : "init",
	    "nextAction", cur != NULL && strcmp(cur, next) == 0 ? "resume " :
	    "", next);
	json_array_foreach(questions, i, q) {
		if (json_is_true(json_object_get(q, "blocking"))) {
			json_object_set(snap, "pendingQuestionId",
			    json_object_get(q, "id"));
			break;
		}
	}
	return snap;
}

/*
 * The gate is validation: passed as recorded; a failing test is a soft
 * deny; a validation that failed without naming a test, or never ran, asks
 * for evidence.
 */
static json_t *
capsule_gate(const json_t *ss)
{
	const json_t	*val = json_object_get(ss, "validate");
	const json_t	*failed = json_object_get(val, "failed_tests");
	const json_t	*results = json_object_get(val, "test_results");
	const json_t	*t, *r;
	const char	*name, *why;
	json_t		*gate, *findings = json_array();
	char		*msg, *reason = NULL, rate[64] = "";
	size_t		 i, j, nfail = 0;
	int		 passed, ran;

	passed = json_is_true(json_object_get(val, "passed"));
	ran = json_is_string(json_object_get(val, "last_run_at")) ||
	    json_array_size(results) > 0 || json_array_size(failed) > 0;
	/* the named failures, else those the results mark failed */
	json_array_foreach(json_array_size(failed) > 0 ? failed : results,
	    i, t) {
		if (json_is_string(t))
			name = json_string_value(t);
		else if (json_is_string(json_object_get(t, "status")) &&
		    strcmp(capsule_str(t, "status"), "failed") == 0)
			name = capsule_str(t, "test_name");
		else
			continue;
		if (name == NULL)
			continue;
		why = NULL;
		json_array_foreach(results, j, r) {
			if (json_is_string(json_object_get(r, "test_name")) &&
			    strcmp(capsule_str(r, "test_name"), name) == 0) {
				why = capsule_str(r, "error_message");
				break;
			}
		}
		nfail++;
		if (json_array_size(findings) >= CAPSULE_MAX_ITEMS)
			continue;
		xasprintf(&msg, "%s: %s", name, why != NULL ? why : "failed");
		json_array_append_new(findings, json_pack("{s:s, s:s, s:s}",
		    "severity", "soft-deny", "policy", "tests-pass",
		    "message", msg));
		free(msg);
	}
	if (!passed && nfail == 0)
		json_array_append_new(findings, json_pack("{s:s, s:s, s:s}",
		    "severity", "evidence-required", "policy",
		    "validation-evidence", "message", ran ? "validation failed "
		    "without naming a failing test" : "no test results yet: "
		    "run validate before complete"));
	if (json_is_number(json_object_get(val, "pass_rate")))
		snprintf(rate, sizeof rate, ", pass rate %.1f%%",
		    json_number_value(json_object_get(val, "pass_rate")));
	if (!passed && nfail > 0)
		xasprintf(&reason, "validation failed: %zu failing test(s)%s",
		    nfail, rate);
	else if (!passed)
		reason = xstrdup(ran ? "validation did not pass" :
		    "validation has not run yet");
	gate = json_pack("{s:b, s:o}", "passed", passed, "findings",
	    findings);
	if (reason != NULL)
		json_object_set_new(gate, "reason", json_string(reason));
	free(reason);
	return gate;
}

/*
 * Writes: each file a develop task changed, "written" when the task
 * completed ("verified" when a passing validation ran after it), "planned"
 * when the task failed or was interrupted; a file two parallel workers
 * both changed is "blocked" until a person resolves it.
 */
static json_t *
capsule_writes(const json_t *ss)
{
	const json_t	*val = json_object_get(ss, "validate");
	const json_t	*t, *f, *c;
	const char	*tid, *tst, *status, *done, *ran;
	json_t		*out = json_array();
	char		*id, gen[32];
	size_t		 i, j;

	ran = json_is_true(json_object_get(val, "passed")) ?
	    capsule_str(val, "last_run_at") : NULL;
	json_array_foreach(json_object_get(json_object_get(ss, "develop"),
	    "tasks"), i, t) {
		if ((tid = capsule_str(t, "id")) == NULL || tid[0] == '\0') {
			snprintf(gen, sizeof gen, "task-%zu", i + 1);
			tid = gen;
		}
		tst = capsule_str(t, "status");
		done = capsule_str(t, "completed_at");
		if (tst == NULL || strcmp(tst, "completed") != 0)
			status = "planned";
		else if (ran != NULL && done != NULL && strcmp(ran, done) > 0)
			status = "verified";
		else
			status = "written";
		json_array_foreach(json_object_get(t, "files_changed"), j, f) {
			if (!json_is_string(f) || json_string_length(f) == 0)
				continue;
			xasprintf(&id, "%s.%zu", tid, j + 1);
			json_array_append_new(out, json_pack("{s:s, s:O, s:s}",
			    "id", id, "path", f, "status", status));
			free(id);
		}
	}
	json_array_foreach(json_object_get(json_object_get(ss,
	    "parallel_results"), "conflicts"), i, c) {
		if (!json_is_string(json_object_get(c, "file")))
			continue;
		snprintf(gen, sizeof gen, "conflict.%zu", i + 1);
		json_array_append_new(out, json_pack("{s:s, s:O, s:s}", "id",
		    gen, "path", json_object_get(c, "file"), "status",
		    "blocked"));
	}
	while (json_array_size(out) > CAPSULE_MAX_ITEMS)
		json_array_remove(out, 0);
	return out;
}


/*
 * The hash of a file the loop wrote, read relative to the project root:
 * FNV-1a 64 (portable, no library, enough to notice a change) in hex, or
 * what kept it from being read.  A name that leaves the root is not read;
 * a link is not followed; a FIFO cannot block.
 */
static const char *
capsule_hash_file(const char *root, const char *path, char hex[17])
{
	unsigned char	 buf[16384];
	struct stat	 sb;
	const char	*rel = path, *p;
	char		*full;
	uint64_t	 h = 0xcbf29ce484222325ULL;
	ssize_t		 n, i;
	int		 fd;

	if (root == NULL)
		return "unknown";
	if (path[0] == '/') {
		if (strncmp(path, root, strlen(root)) != 0 ||
		    path[strlen(root)] != '/')
			return "outside-root";
		rel = path + strlen(root) + 1;
	}
	for (p = rel; p != NULL; p = strchr(p, '/'), p = p ? p + 1 : NULL)
		if (strncmp(p, "..", 2) == 0 && (p[2] == '/' || p[2] == '\0'))
			return "outside-root";
	xasprintf(&full, "%s/%s", root, rel);
	fd = open(full, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	free(full);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? "missing" :
		    "unreadable";
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return "not-a-file";
	}
	while ((n = read(fd, buf, sizeof buf)) != 0) {
		if (n < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++)
			h = (h ^ buf[i]) * 0x100000001b3ULL;
	}
	close(fd);
	if (n < 0)
		return "unreadable";
	snprintf(hex, 17, "%016llx", (unsigned long long)h);
	return hex;
}

/* Anchors: each distinct file of the writes, with how many name it. */
static json_t *
capsule_anchors(const json_t *writes, const char *root)
{
	json_t		*out = json_array(), *a = NULL;
	const json_t	*w;
	const char	*path;
	char		 hex[17];
	size_t		 i, j;

	json_array_foreach(writes, i, w) {
		path = capsule_str(w, "path");
		json_array_foreach(out, j, a)
			if (strcmp(capsule_str(a, "path"), path) == 0)
				break;
		if (j < json_array_size(out)) {
			json_object_set_new(a, "refCount", json_integer(
			    capsule_int(a, "refCount", 0) + 1));
			continue;
		}
		json_array_append_new(out, json_pack("{s:s, s:s, s:i}",
		    "path", path, "fileHash", capsule_hash_file(root, path,
		    hex), "refCount", 1));
	}
	return out;
}


/*
 * The project root from the state directory: ROOT/.loop or
 * ROOT/.workflow/.loop; any other directory gives no root.
 */
static char *
capsule_root(const char *dir)
{
	static const char *const tails[] = { ".workflow/.loop", ".loop" };
	char	*d;
	size_t	 n, t, i;

	if (dir == NULL || dir[0] == '\0')
		return NULL;
	d = xstrdup(dir);
	n = strlen(d);
	while (n > 1 && d[n - 1] == '/')
		d[--n] = '\0';
	for (i = 0; i < sizeof tails / sizeof tails[0]; i++) {
		t = strlen(tails[i]);
		if (n < t || strcmp(d + n - t, tails[i]) != 0 ||
		    (n > t && d[n - t - 1] != '/'))
			continue;
		if (n == t)
			strcpy(d, ".");
		else
			d[n - t - (n - t > 1)] = '\0';	/* "/.loop" keeps "/" */
		return d;
	}
	free(d);
	return NULL;
}

/* --- the API */

/* The capsule of a state; the root names where files_changed are read. */
json_t *
capsule_build_root(const json_t *st, const char *state_dir, const char *root)
{
	const json_t	*ss = json_object_get(st, "skill_state");
	json_t		*c, *questions, *writes, *snap, *stop;
	char		 now[40], *r;
	const char	*trace = capsule_str(st, "loop_id");
	size_t		 i;

	if (!json_is_object(ss))
		ss = NULL;
	r = root != NULL ? xstrdup(root) : capsule_root(state_dir);
	/* no trailing slash: names are joined as root + "/" + rel */
	for (i = r != NULL ? strlen(r) : 0; i > 0 && r[i - 1] == '/'; i--)
		r[i - 1] = '\0';
	clock_iso(NULL, 1, now, sizeof now);
	questions = capsule_questions(ss);
	writes = capsule_writes(ss);
	snap = capsule_resume(st, ss, questions);
	stop = capsule_stop(st);
	c = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:s}",
	    "hardDenySummary", capsule_hard_denies(ss, stop),
	    "openQuestions", questions,
	    "resumeSnapshot", snap,
	    "currentGate", capsule_gate(ss),
	    "writeTransactions", writes,
	    "sourceAnchors", capsule_anchors(writes, r),
	    "traceId", trace != NULL ? trace : "",
	    "createdAt", now);
	if (stop != NULL)
		json_object_set_new(c, "stopHook", stop);
	free(r);
	return c;
}

/* The capsule of a state kept in state_dir (ROOT/.loop). */
json_t *
capsule_build(const json_t *st, const char *state_dir)
{
	return capsule_build_root(st, state_dir, NULL);
}

/* Record a message in an optional list. */
static void
capsule_note(struct strv *sv, const char *msg, size_t *n)
{
	if (sv != NULL)
		strv_push(sv, msg);
	if (n != NULL)
		(*n)++;
}

/*
 * Seed 004's validateCompactCapsule: the required members, then the
 * semantic checks.  Returns the number of missing members (0: valid).
 */
int
capsule_validate(const json_t *c, struct strv *missing, struct strv *warnings)
{
	static const char *const lists[] = { "hardDenySummary",
	    "openQuestions", "currentGate", "writeTransactions",
	    "sourceAnchors" };
	const json_t	*e;
	const char	*s;
	size_t		 nmiss = 0, i, nblock = 0, nplanned = 0;

	s = capsule_str(c, "traceId");
	if (s == NULL || s[0] == '\0')
		capsule_note(missing, "traceId", &nmiss);
	s = capsule_str(c, "createdAt");
	if (s == NULL || s[0] == '\0')
		capsule_note(missing, "createdAt", &nmiss);
	for (i = 0; i < sizeof lists / sizeof lists[0]; i++)
		if (i == 2 ? !json_is_object(json_object_get(c, lists[i])) :
		    !json_is_array(json_object_get(c, lists[i])))
			capsule_note(missing, lists[i], &nmiss);
	if (json_array_size(json_object_get(c, "hardDenySummary")) > 0 &&
	    !json_is_object(json_object_get(c, "currentGate")))
		capsule_note(missing, "currentGate (hard deny present but "
		    "gate state missing)", &nmiss);
	json_array_foreach(json_object_get(c, "openQuestions"), i, e)
		nblock += json_is_true(json_object_get(e, "blocking"));
	if (nblock > 0 && !json_is_object(json_object_get(c, "resumeSnapshot")))
		capsule_note(warnings, "blocking question present but no "
		    "resumeSnapshot: the resume point may be lost", NULL);
	json_array_foreach(json_object_get(c, "writeTransactions"), i, e)
		nplanned += capsule_str(e, "status") != NULL &&
		    strcmp(capsule_str(e, "status"), "planned") == 0;
	if (nplanned > 0 &&
	    json_array_size(json_object_get(c, "sourceAnchors")) == 0)
		capsule_note(warnings, "planned write transaction present but "
		    "no source anchor: write verification may fail after "
		    "resume", NULL);
	return (int)nmiss;
}


/* The value of a string member for rendering, "?" when there is none. */
static const char *
capsule_rs(const json_t *o, const char *k)
{
	const char	*s = capsule_str(o, k);

	return s != NULL ? s : "?";
}

/* The sections after the resume point: gate, writes, anchors, stop. */
static void
capsule_render_tail(struct capsule_buf *b, const json_t *c)
{
	const json_t	*gate = json_object_get(c, "currentGate");
	const json_t	*e, *hook = json_object_get(c, "stopHook");
	size_t		 i;

	if (json_is_object(gate)) {
		capsule_printf(b, "\n### Gate\nPassed: %s\n",
		    json_is_true(json_object_get(gate, "passed")) ? "yes" :
		    "no");
		if (capsule_str(gate, "reason") != NULL)
			capsule_line(b, "Reason: %s", capsule_str(gate, "reason"));
		if (json_array_size(json_object_get(gate, "findings")) > 0)
			capsule_printf(b, "Findings:\n");
		json_array_foreach(json_object_get(gate, "findings"), i, e)
			capsule_line(b, "- [%s] %s: %s", capsule_rs(e, "severity"),
			    capsule_rs(e, "policy"), capsule_rs(e, "message"));
	}
	if (json_array_size(json_object_get(c, "writeTransactions")) > 0)
		capsule_printf(b, "\n### Write Transactions\n");
	json_array_foreach(json_object_get(c, "writeTransactions"), i, e)
		capsule_line(b, "- %s %s [%s]", capsule_rs(e, "id"),
		    capsule_rs(e, "path"), capsule_rs(e, "status"));
	if (json_array_size(json_object_get(c, "sourceAnchors")) > 0)
		capsule_printf(b, "\n### Source Anchors\n");
	json_array_foreach(json_object_get(c, "sourceAnchors"), i, e)
		capsule_line(b, "- %s: %lld anchor(s), fileHash=%.12s",
		    capsule_rs(e, "path"), capsule_int(e, "refCount", 0),
		    capsule_rs(e, "fileHash"));
	if (capsule_str(c, "completionPromiseId") != NULL) {
		capsule_printf(b, "\n");
		capsule_line(b, "### Completion Promise: %s",
		    capsule_str(c, "completionPromiseId"));
	}
	if (json_is_object(hook)) {
		capsule_printf(b, "\n### Stop Hook\n");
		capsule_line(b, "Type: %s", capsule_rs(hook, "type"));
		capsule_line(b, "Reason: %s", capsule_rs(hook, "reason"));
	}
}

/*
 * Seed 004's renderCompactCapsulePrompt in English: only the sections
 * with content (the gate always: it is required), then the rules that
 * apply after a resume.  Safe on a capsule of any shape.
 */
char *
capsule_render(const json_t *c)
{
	struct capsule_buf	 b = { NULL, 0, 0 };
	const json_t		*e, *snap = json_object_get(c, "resumeSnapshot");
	size_t			 i, nblock = 0;
	int			 blocking;

	b.cap = 1024;
	b.p = xmalloc(b.cap);
	b.p[0] = '\0';
	capsule_printf(&b, "## Compact Capsule (resume context)\n\n");
	capsule_line(&b, "Trace ID: %s", capsule_rs(c, "traceId"));
	capsule_line(&b, "Created at: %s", capsule_rs(c, "createdAt"));
	if (json_array_size(json_object_get(c, "hardDenySummary")) > 0)
		capsule_printf(&b, "\n### Hard Deny\n");
	json_array_foreach(json_object_get(c, "hardDenySummary"), i, e)
		capsule_line(&b, "- %s", json_is_string(e) ?
		    json_string_value(e) : "?");
	if (json_array_size(json_object_get(c, "openQuestions")) > 0)
		capsule_printf(&b, "\n### Open Questions\n");
	json_array_foreach(json_object_get(c, "openQuestions"), i, e) {
		blocking = json_is_true(json_object_get(e, "blocking"));
		nblock += blocking;
		capsule_line(&b, "- %s%s: %s", capsule_rs(e, "id"), blocking ?
		    " [BLOCKING]" : "", capsule_rs(e, "question"));
	}
	if (json_is_object(snap)) {
		capsule_printf(&b, "\n### Resume Point\n");
		capsule_line(&b, "Phase: %s", capsule_rs(snap, "phase"));
		capsule_line(&b, "Next action: %s", capsule_rs(snap,
		    "nextAction"));
		if (capsule_str(snap, "pendingQuestionId") != NULL)
			capsule_line(&b, "Pending question: %s",
			    capsule_str(snap, "pendingQuestionId"));
	}
	capsule_render_tail(&b, c);
	capsule_printf(&b, "\n### Rules after resume\n");
	if (json_array_size(json_object_get(c, "hardDenySummary")) > 0)
		capsule_printf(&b, "- A hard deny is never bypassed: fix the "
		    "state or bring the evidence.\n");
	if (nblock > 0)
		capsule_printf(&b, "- With a blocking question open, the only "
		    "action is to answer it or revise the facts.\n");
	if (json_array_size(json_object_get(c, "writeTransactions")) > 0)
		capsule_printf(&b, "- Re-check the source anchors (file "
		    "hashes) before continuing a write.\n");
	capsule_printf(&b, "- Do not restore facts or evidence from memory: "
	    "read them from the loop state.\n");
	return b.p;
}

/*
 * A capsule is worth its place in a prompt once the loop has a past: an
 * iteration, a finished action, a pause or failure, an error, or a
 * question waiting for its answer.
 */
int
capsule_needed(const json_t *st)
{
	const json_t	*ss = json_object_get(st, "skill_state");
	const char	*status = capsule_str(st, "status");

	if (capsule_int(st, "current_iteration", 0) > 0)
		return 1;
	if (status != NULL && (strcmp(status, "paused") == 0 ||
	    strcmp(status, "failed") == 0))
		return 1;
	return json_array_size(json_object_get(ss, "completed_actions")) > 0 ||
	    json_array_size(json_object_get(ss, "errors")) > 0 ||
	    json_array_size(json_object_get(ss, "open_questions")) > 0;
}
