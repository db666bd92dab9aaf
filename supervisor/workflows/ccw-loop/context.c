/*
 * context.c: what flows from one role to the next.  init's plan becomes
 * develop tasks and its test command is kept; each prompt gets a short
 * "### Context" of what its role needs (the task at hand, the failing
 * tests, develop's last change, the test command), never the whole state.
 * Pure: no I/O.
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "loop.h"
#include "xmalloc.h"

#define CTX_MAX_TASKS	20	/* tasks taken from one plan */
#define CTX_MAX_TEXT	300	/* bytes of a task, a summary, an error */
#define CTX_MAX_LIST	8	/* failing tests or pending tasks shown */
#define CTX_MAX_PROMPT	4000	/* bytes of the current task's instructions */
#define CTX_TEST_KEY	"test_command:"

/* A string member, or NULL. */
static const char *
ctx_s(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/*
 * One line of a plan without its list marker ("- ", "* ", "1. ", "2) ",
 * "[ ] "), blanks trimmed; its length in *n.  NULL for what is no task:
 * empty lines, headings, "Plan:"-like labels, code fences.
 */
static const char *
ctx_task_text(const char *p, size_t len, size_t *n)
{
	const char	*e = p + len;

	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	if (p == e || *p == '#' || *p == '`' || e[-1] == ':')
		return NULL;
	if (e - p > 2 && (*p == '-' || *p == '*' || *p == '+') && p[1] == ' ')
		p += 2;
	else if (p < e && *p >= '0' && *p <= '9') {
		const char *q = p;

		while (q < e && *q >= '0' && *q <= '9')
			q++;
		if (q + 1 < e && (*q == '.' || *q == ')') && q[1] == ' ')
			p = q + 2;
	}
	if (e - p > 4 && strncmp(p, "[ ] ", 4) == 0)
		p += 4;
	while (p < e && *p == ' ')
		p++;
	if (p == e)
		return NULL;
	*n = (size_t)(e - p);
	return p;
}

/* A piece of text as a JSON string cut at CTX_MAX_TEXT, whole characters. */
static json_t *
ctx_cut(const char *p, size_t n)
{
	json_t	*j;

	if (n > CTX_MAX_TEXT) {
		n = CTX_MAX_TEXT;
		while (n > 0 && ((unsigned char)p[n] & 0xc0) == 0x80)
			n--;
	}
	j = json_stringn(p, n);
	return j != NULL ? j : json_string("(not UTF-8)");
}

/*
 * init's DETAILED_OUTPUT: a "test_command: CMD" line becomes
 * skill_state.test_command; the other lines, one task each, become
 * develop tasks when the loop has none yet (a tasks file wins).
 */
void
context_plan(json_t *ss, const char *detail, const char *now)
{
	json_t		*tasks = json_array(), *dev;
	const char	*p, *nl, *t;
	char		 id[32];
	size_t		 n, len, k = 0;

	for (p = detail; p != NULL && *p != '\0'; p = nl) {
		if ((nl = strchr(p, '\n')) == NULL)
			nl = p + strlen(p);
		len = (size_t)(nl - p);
		if (*nl == '\n')
			nl++;
		if ((t = ctx_task_text(p, len, &n)) == NULL)
			continue;
		if (n > strlen(CTX_TEST_KEY) &&
		    strncasecmp(t, CTX_TEST_KEY, strlen(CTX_TEST_KEY)) == 0) {
			t += strlen(CTX_TEST_KEY);
			n -= strlen(CTX_TEST_KEY);
			while (n > 0 && (*t == ' ' || *t == '`')) {
				t++;
				n--;
			}
			while (n > 0 && t[n - 1] == '`')
				n--;
			if (n > 0)
				json_object_set_new(ss, "test_command",
				    ctx_cut(t, n));
			continue;
		}
		if (k == CTX_MAX_TASKS)
			continue;
		snprintf(id, sizeof id, "task-%03zu", ++k);
		json_array_append_new(tasks, json_pack("{s:s, s:o}", "id", id,
		    "description", ctx_cut(t, n)));
	}
	dev = json_object_get(ss, "develop");
	if (json_array_size(json_object_get(dev, "tasks")) == 0 && k > 0)
		merge_tasks(ss, tasks, now);
	json_decref(tasks);
}

/* A growable string, for the context section. */
struct cbuf {
	char	*p;
};

/* Append printf-style text. */
static void __attribute__((format(printf, 2, 3)))
ctx_add(struct cbuf *b, const char *fmt, ...)
{
	va_list	 ap;
	char	*s, *t;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s == NULL)
		return;
	xasprintf(&t, "%s%s", b->p != NULL ? b->p : "", s);
	free(b->p);
	free(s);
	b->p = t;
}

/* develop: the task at hand and what is still pending after it. */
static void
ctx_tasks(struct cbuf *b, const json_t *ss)
{
	const json_t	*t, *tasks = json_object_get(json_object_get(ss,
			    "develop"), "tasks");
	const char	*st;
	size_t		 i, shown = 0;
	int		 first = 1;

	json_array_foreach(tasks, i, t) {
		st = ctx_s(t, "status");
		if (st == NULL || (strcmp(st, "pending") != 0 &&
		    strcmp(st, "in_progress") != 0))
			continue;
		if (first) {
			ctx_add(b, "Your task now (%s): %.300s\n",
			    ctx_s(t, "id") ? ctx_s(t, "id") : "?",
			    ctx_s(t, "description") ? ctx_s(t, "description") :
			    "");
			/* a front end's instructions for it (CCW's task) */
			if (ctx_s(t, "prompt_template") != NULL)
				ctx_add(b, "Its instructions:\n%.*s\n",
				    CTX_MAX_PROMPT, ctx_s(t, "prompt_template"));
			first = 0;
		} else if (shown++ < CTX_MAX_LIST)
			ctx_add(b, "%s%s: %.300s%s%.300s%s", shown == 1 ?
			    "Still planned after it: " : "; ",
			    ctx_s(t, "id") ? ctx_s(t, "id") : "?",
			    ctx_s(t, "description") ? ctx_s(t, "description") :
			    "", ctx_s(t, "prompt_template") ? " (instructions: " :
			    "", ctx_s(t, "prompt_template") ? ctx_s(t,
			    "prompt_template") : "", ctx_s(t, "prompt_template") ?
			    ")" : "");
	}
	if (shown > 0)
		ctx_add(b, "\n");
}

/* The tests the last validation found failing, with their messages. */
static void
ctx_failing(struct cbuf *b, const json_t *ss)
{
	const json_t	*val = json_object_get(ss, "validate"), *t, *f;
	const char	*msg;
	size_t		 i, j;

	if (json_is_true(json_object_get(val, "passed")) ||
	    json_array_size(json_object_get(val, "failed_tests")) == 0)
		return;
	ctx_add(b, "Failing tests from the last validation (%zu):\n",
	    json_array_size(json_object_get(val, "failed_tests")));
	json_array_foreach(json_object_get(val, "failed_tests"), i, f) {
		if (i == CTX_MAX_LIST) {
			ctx_add(b, "- ...\n");
			break;
		}
		msg = NULL;
		json_array_foreach(json_object_get(val, "test_results"), j, t)
			if (json_equal(json_object_get(t, "test_name"), f))
				msg = ctx_s(t, "error_message");
		ctx_add(b, "- %.300s%s%.300s\n", json_string_value(f) ?
		    json_string_value(f) : "?", msg != NULL ? ": " : "",
		    msg != NULL ? msg : "");
	}
}

/* What develop did last: its summary and the files it changed. */
static void
ctx_develop(struct cbuf *b, const json_t *ss)
{
	const json_t	*dev = json_object_get(ss, "develop"), *t, *f;
	const char	*sum = ctx_s(json_object_get(json_object_get(ss,
			    "worker_results"), "develop"), "summary");
	const char	*cur = ctx_s(dev, "current_task");
	size_t		 i, k;

	if (sum == NULL && cur == NULL)
		return;
	ctx_add(b, "Develop's last change: %.300s\n", sum != NULL ? sum :
	    "(no summary)");
	json_array_foreach(json_object_get(dev, "tasks"), i, t) {
		if (cur == NULL || ctx_s(t, "id") == NULL ||
		    strcmp(ctx_s(t, "id"), cur) != 0)
			continue;
		json_array_foreach(json_object_get(t, "files_changed"), k, f)
			ctx_add(b, "%s%s", k == 0 ? "Files it changed: " :
			    ", ", json_string_value(f) ? json_string_value(f) :
			    "?");
		if (k > 0)
			ctx_add(b, "\n");
	}
}

/* The test command: the configuration's, else init's, else a hint. */
static void
ctx_test(struct cbuf *b, const json_t *ss, const char *configured)
{
	const char	*cmd = configured != NULL ? configured :
			    ctx_s(ss, "test_command");

	if (cmd != NULL)
		ctx_add(b, "Test command: %s\n", cmd);
	else
		ctx_add(b, "Test command: none configured; find how the "
		    "project's tests run (a Makefile check or test target, "
		    "package.json scripts.test, tests/run.sh, pytest) and "
		    "run them.\n");
}

/*
 * The "### Context" section of a role's prompt: only what that role
 * needs.  "" when there is nothing to say (owned by the caller).
 */
char *
context_render(const json_t *ss, const char *role, const char *test_command)
{
	struct cbuf	b = { NULL };
	char		*out;

	if (role != NULL && strcmp(role, "develop") == 0) {
		ctx_tasks(&b, ss);
		ctx_failing(&b, ss);
	} else if (role != NULL && (strcmp(role, "debug") == 0 ||
	    strcmp(role, "validate") == 0)) {
		ctx_develop(&b, ss);
		ctx_failing(&b, ss);
		ctx_test(&b, ss, test_command);
	}
	if (b.p == NULL)
		return xstrdup("");
	xasprintf(&out, "### Context\n%s\n", b.p);
	free(b.p);
	return out;
}
