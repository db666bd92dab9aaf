/*
 * prompt.c: a worker's files.  What it is told: the built-in task
 * assignment of each role, the override in ROOT/.loop/roles/{role}.md (or
 * roles.{role}.prompt), {{placeholders}}, the state summary, the capsule.
 * What its action leaves next to the state file: progress, its output,
 * changes.log, debug.log, the history, its log's number.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "jsondiff.h"
#include "capsule.h"
#include "ccw-loop.h"
#include "log.h"
#include "loop.h"
#include "progress.h"
#include "state.h"
#include "xmalloc.h"

#define PROMPT_MAX_FILE	(1 << 20)	/* bytes of a template at most */
#define PROMPT_HISTORY_MAX (16 * 1024)	/* of a prompt kept in the history */
#define PROMPT_CHANGES_MAX 64		/* state changes kept per action */

/*
 * Placeholders, in a built-in or a project's template:
 *   {{loop_id}}        the loop id
 *   {{role}}           init, develop, debug, validate or complete
 *   {{mode}}           auto, parallel or interactive
 *   {{task}}           the task text given to `run`
 *   {{state_file}}     path of the loop's state file (read only for workers)
 *   {{progress_file}}  path of the role's progress file (.progress/ROLE.md)
 *   {{output_file}}    where the supervisor saves the role's result
 *   {{state_summary}}  a few lines on where the loop stands
 *   {{capsule}}        the resume capsule in a resumed loop, else ""
 *   {{context}}        what this role needs from the others (context.c)
 *   {{iteration}}      the iteration under way, from 1
 *   {{max_iterations}} max_iterations
 *   {{result_format}}  the WORKER_RESULT block the worker must end with
 * An unknown {{name}} is left as it is.
 */

#define PROMPT_HEAD \
"## TASK ASSIGNMENT\n" \
"\n" \
"You are the {{role}} worker of loop {{loop_id}} ({{mode}} mode, " \
"iteration {{iteration}} of {{max_iterations}}), run by ccw-supervisor.\n" \
"\n"

#define PROMPT_TAIL \
"### Files\n" \
"- State file (read it; only the supervisor writes it): {{state_file}}\n" \
"- Progress file of your role: {{progress_file}}\n" \
"- Your result is saved by the supervisor to: {{output_file}}\n" \
"\n" \
"### Current state\n" \
"{{state_summary}}\n" \
"{{context}}" \
"{{capsule}}\n" \
"### Task\n" \
"{{task}}\n" \
"\n" \
"{{result_format}}"

#define PROMPT_FORMAT \
"### Output format\n" \
"End your answer with exactly this block (files_changed is a JSON list):\n" \
"\n" \
"WORKER_RESULT:\n" \
"- action: %s\n" \
"- status: success | failed | needs_input | partial\n" \
"- summary: one line\n" \
"- files_changed: [\"src/a.c\", \"src/b.c\"]\n" \
"- next_suggestion: develop | debug | validate | complete\n" \
"- loop_back_to: null | develop | debug | validate\n" \
"DETAILED_OUTPUT:\n" \
"%s\n" \
"\n" \
"If you cannot go on without a decision, end instead with:\n" \
"\n" \
"CLARIFICATION_NEEDED:\n" \
"Q1: the question | Options: [A, B] | Recommended: [A]\n"

static const struct prompt_role {
	const char	*role;
	const char	*body;		/* goal and scope */
	const char	*detail;	/* what DETAILED_OUTPUT holds */
} prompt_roles[] = {
	{ "init",
	  "### Goal\n"
	  "Understand the task and the project, and plan the work.\n"
	  "\n"
	  "### Scope\n"
	  "Read the code and the task; change no source file.  Break the "
	  "task into development tasks.  Find how the project's tests "
	  "run.\n\n",
	  "the plan: one development task a line, most important first; "
	  "then a line \"test_command: CMD\" with the command that runs the "
	  "project's tests" },
	{ "develop",
	  "### Goal\n"
	  "Implement the next part of the task.\n"
	  "\n"
	  "### Scope\n"
	  "Change the code the task needs and nothing else; keep the build "
	  "working.  List every file you changed in files_changed.\n\n",
	  "what you changed and why, and what is left to do" },
	{ "debug",
	  "### Goal\n"
	  "Find why the code does not yet do what the task asks "
	  "(failing tests, errors, wrong behaviour).\n"
	  "\n"
	  "### Scope\n"
	  "Investigate; fix only what you have confirmed.  Set loop_back_to "
	  "to develop when the fix needs more development.\n\n",
	  "your hypotheses as a JSON list: [{\"description\": \"...\", "
	  "\"testable_condition\": \"...\", \"logging_point\": \"...\", "
	  "\"evidence_criteria\": {\"confirm\": \"...\", \"reject\": \"...\"}, "
	  "\"likelihood\": 1, \"status\": \"pending|confirmed|rejected\"}]" },
	{ "validate",
	  "### Goal\n"
	  "Check that the task is done: build, run the tests, check the "
	  "behaviour the task asks for.\n"
	  "\n"
	  "### Scope\n"
	  "Change no source file.  Run the tests (see Context).  All pass "
	  "and the task is done: status: success, loop_back_to: null.  A "
	  "test fails or the task is not done: status: failed, "
	  "loop_back_to: develop (debug when the cause is unclear).\n\n",
	  "every test as a TAP line (ok N - name / not ok N - name), each "
	  "failure's message on a \"# \" line after it" },
	{ "complete",
	  "### Goal\n"
	  "Wrap the loop up: summarize what was done.\n"
	  "\n"
	  "### Scope\n"
	  "Change no source file.  Summarize the changes, the tests and "
	  "anything left open.\n\n",
	  "the summary of the loop's work" },
};

/* A role's entry in the table, NULL if it has none. */
static const struct prompt_role *
prompt_role(const char *role)
{
	size_t	i;

	for (i = 0; role != NULL && i < sizeof prompt_roles /
	    sizeof prompt_roles[0]; i++)
		if (strcmp(prompt_roles[i].role, role) == 0)
			return &prompt_roles[i];
	return NULL;
}

/* The built-in template of a role (owned by the caller); NULL if none. */
char *
prompt_builtin(const char *role)
{
	const struct prompt_role	*pr = prompt_role(role);
	char				*s;

	if (pr == NULL)
		return NULL;
	xasprintf(&s, "%s%s%s", PROMPT_HEAD, pr->body, PROMPT_TAIL);
	return s;
}

/* The value of one placeholder; NULL if the name is not one. */
static char *
prompt_value(const char *name, size_t n, const struct prompt_vars *v)
{
	static const struct {
		const char	*name;
		size_t		 off;	/* of a const char * in prompt_vars */
	} text[] = {
		{ "loop_id", offsetof(struct prompt_vars, loop_id) },
		{ "role", offsetof(struct prompt_vars, role) },
		{ "mode", offsetof(struct prompt_vars, mode) },
		{ "task", offsetof(struct prompt_vars, task) },
		{ "state_file", offsetof(struct prompt_vars, state_file) },
		{ "progress_file", offsetof(struct prompt_vars, progress_file) },
		{ "output_file", offsetof(struct prompt_vars, output_file) },
		{ "state_summary", offsetof(struct prompt_vars, state_summary) },
		{ "capsule", offsetof(struct prompt_vars, capsule) },
		{ "context", offsetof(struct prompt_vars, context) },
	};
	const struct prompt_role	*pr;
	const char			*s;
	char				*out, key[32];
	size_t				 i;

	if (n >= sizeof key)
		return NULL;
	memcpy(key, name, n);
	key[n] = '\0';
	for (i = 0; i < sizeof text / sizeof text[0]; i++)
		if (strcmp(key, text[i].name) == 0) {
			s = *(const char *const *)(const void *)
			    ((const char *)v + text[i].off);
			return xstrdup(s != NULL ? s : "");
		}
	if (strcmp(key, "iteration") == 0 ||
	    strcmp(key, "max_iterations") == 0) {
		xasprintf(&out, "%lld", key[0] == 'i' ? v->iteration :
		    v->max_iterations);
		return out;
	}
	if (strcmp(key, "result_format") != 0)
		return NULL;
	pr = prompt_role(v->role);
	xasprintf(&out, PROMPT_FORMAT, v->role != NULL ? v->role : "",
	    pr != NULL ? pr->detail : "what you did");
	return out;
}

/*
 * A message with the result contract of its role appended: what `agent`
 * sends a model so that its answer ends in a WORKER_RESULT block the
 * worker can read (owned by the caller).
 */
char *
prompt_with_contract(const char *role, const char *message)
{
	struct prompt_vars	 v;
	char			*fmt, *out;

	memset(&v, 0, sizeof v);
	v.role = role;
	fmt = prompt_value("result_format", 13, &v);
	xasprintf(&out, "%s\n\n%s", message, fmt);
	free(fmt);
	return out;
}

/* A template with its {{placeholders}} filled in (spaces inside allowed). */
char *
prompt_render(const char *tmpl, const struct prompt_vars *v)
{
	struct sbuf	 b = { NULL, 0, 0 };
	const char	*p = tmpl, *open, *close, *name;
	char		*val;
	size_t		 n;

	sbuf_add(&b, "", 0);
	while ((open = strstr(p, "{{")) != NULL) {
		sbuf_add(&b, p, (size_t)(open - p));
		if ((close = strstr(open + 2, "}}")) == NULL) {
			p = open;
			break;
		}
		name = open + 2;
		while (*name == ' ')
			name++;
		n = (size_t)(close - name);
		while (n > 0 && name[n - 1] == ' ')
			n--;
		if ((val = prompt_value(name, n, v)) != NULL) {
			sbuf_add(&b, val, strlen(val));
			free(val);
		} else
			sbuf_add(&b, open, (size_t)(close + 2 - open));
		p = close + 2;
	}
	sbuf_add(&b, p, strlen(p));
	return b.p;
}

/* A template file, whole; 1 if it does not exist. */
static int
prompt_read(const char *path, char **out, char **err)
{
	struct stat	 sb;
	ssize_t		 n;
	size_t		 len = 0;
	char		*buf;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0) {
		if (errno == ENOENT)
			return 1;
		xasprintf(err, "prompt template %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_size > PROMPT_MAX_FILE) {
		xasprintf(err, "prompt template %s: not a regular file of at "
		    "most %d bytes", path, PROMPT_MAX_FILE);
		close(fd);
		return -1;
	}
	buf = xmalloc((size_t)sb.st_size + 1);
	while (len < (size_t)sb.st_size) {
		n = read(fd, buf + len, (size_t)sb.st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	if (strlen(buf) != len) {
		xasprintf(err, "prompt template %s: contains a NUL byte", path);
		free(buf);
		return -1;
	}
	*out = buf;
	return 0;
}

/*
 * The prompt of a role: the configured template (roles.ROLE.prompt,
 * relative to ROOT; it must exist), else ROOT/.loop/roles/ROLE.md if
 * there is one, else the built-in one.
 */
static char *
prompt_build(const char *root, const char *configured,
    const struct prompt_vars *v, char **err)
{
	char	*path, *tmpl = NULL, *out;
	int	 rc;

	*err = NULL;
	if (configured != NULL) {
		if (configured[0] == '/')
			path = xstrdup(configured);
		else
			xasprintf(&path, "%s/%s", root, configured);
		rc = prompt_read(path, &tmpl, err);
		if (rc == 1)
			xasprintf(err, "prompt template %s: no such file",
			    path);
		free(path);
		if (rc != 0)
			return NULL;
	} else {
		xasprintf(&path, "%s/.loop/roles/%s.md", root, v->role);
		rc = prompt_read(path, &tmpl, err);
		free(path);
		if (rc < 0)
			return NULL;
	}
	if (tmpl == NULL && (tmpl = prompt_builtin(v->role)) == NULL) {
		xasprintf(err, "no prompt for role '%s'", v->role);
		return NULL;
	}
	out = prompt_render(tmpl, v);
	free(tmpl);
	return out;
}

/* A number member as text (integer or real). */
static void
prompt_num(char *buf, size_t len, const json_t *j)
{
	if (json_is_integer(j))
		snprintf(buf, len, "%lld", (long long)json_integer_value(j));
	else if (json_is_real(j))
		snprintf(buf, len, "%.1f", json_real_value(j));
	else
		snprintf(buf, len, "0");
}

/* Where the loop stands, in a few lines for a worker's prompt. */
char *
prompt_state_summary(const json_t *st)
{
	const json_t	*ss = json_object_get(st, "skill_state");
	const json_t	*dev = json_object_get(ss, "develop");
	const json_t	*dbg = json_object_get(ss, "debug");
	const json_t	*val = json_object_get(ss, "validate");
	const json_t	*errs = json_object_get(ss, "errors"), *e;
	struct sbuf	 b = { NULL, 0, 0 };
	char		 a[32], c[32], *line;
	size_t		 i;

	prompt_num(a, sizeof a, json_object_get(st, "current_iteration"));
	prompt_num(c, sizeof c, json_object_get(st, "max_iterations"));
	xasprintf(&line, "- status %s, %s of %s iterations done; last action "
	    "%s\n",
	    json_string_value(json_object_get(st, "status")) ?
	    json_string_value(json_object_get(st, "status")) : "?", a, c,
	    json_string_value(json_object_get(ss, "last_action")) ?
	    json_string_value(json_object_get(ss, "last_action")) : "none");
	sbuf_add(&b, line, strlen(line));
	free(line);
	sbuf_add(&b, "- completed actions:", 20);
	json_array_foreach(json_object_get(ss, "completed_actions"), i, e)
		if (json_is_string(e) && i < 20) {
			sbuf_add(&b, i > 0 ? ", " : " ", i > 0 ? 2 : 1);
			sbuf_add(&b, json_string_value(e), json_string_length(e));
		}
	sbuf_add(&b, "\n", 1);
	prompt_num(a, sizeof a, json_object_get(dev, "completed"));
	prompt_num(c, sizeof c, json_object_get(dev, "total"));
	xasprintf(&line, "- develop: %s of %s tasks completed\n", a, c);
	sbuf_add(&b, line, strlen(line));
	free(line);
	prompt_num(a, sizeof a, json_object_get(dbg, "hypotheses_count"));
	xasprintf(&line, "- debug: %s hypotheses, confirmed: %s\n", a,
	    json_string_value(json_object_get(dbg, "confirmed_hypothesis")) ?
	    json_string_value(json_object_get(dbg, "confirmed_hypothesis")) :
	    "none");
	sbuf_add(&b, line, strlen(line));
	free(line);
	prompt_num(a, sizeof a, json_object_get(val, "pass_rate"));
	if (json_object_get(val, "last_run_at") == NULL ||
	    json_is_null(json_object_get(val, "last_run_at")))
		line = xstrdup("- validate: not run yet\n");
	else
		xasprintf(&line, "- validate: %s, pass rate %s%%, %zu failing "
		    "test(s)\n", json_is_true(json_object_get(val, "passed")) ?
		    "passed" : "not passed", a,
		    json_array_size(json_object_get(val, "failed_tests")));
	sbuf_add(&b, line, strlen(line));
	free(line);
	if ((i = json_array_size(errs)) > 0) {
		e = json_array_get(errs, i - 1);
		xasprintf(&line, "- last error (%s): %.300s\n",
		    json_string_value(json_object_get(e, "action")) ?
		    json_string_value(json_object_get(e, "action")) : "?",
		    json_string_value(json_object_get(e, "message")) ?
		    json_string_value(json_object_get(e, "message")) : "?");
		sbuf_add(&b, line, strlen(line));
		free(line);
	}
	return b.p;
}

/*
 * The whole prompt of one worker: its template filled in from the state
 * it should see, with what its role needs from the others (context.c),
 * and the resume capsule only in a resumed loop: a fresh loop's workers
 * have nothing to resume.  The capsule text is also handed back (owned;
 * NULL when there is none or the prompt failed).
 */
char *
prompt_worker(const struct prompt_req *pr, char **capsule, char **err)
{
	struct prompt_vars	 v;
	json_t			*c;
	char			*sf, *pf, *of, *sum, *ctx, *p;

	*capsule = NULL;
	if (pr->force_capsule) {
		if ((c = capsule_build_root(pr->state, pr->state_dir,
		    pr->root)) != NULL) {
			*capsule = capsule_render(c);
			json_decref(c);
		}
	}
	xasprintf(&sf, "%s/%s.json", pr->state_dir, pr->loop_id);
	xasprintf(&pf, "%s/%s.progress/%s.md", pr->state_dir, pr->loop_id,
	    pr->role);
	xasprintf(&of, "%s/%s.workers/%s.output.json", pr->state_dir,
	    pr->loop_id, pr->role);
	sum = prompt_state_summary(pr->state);
	memset(&v, 0, sizeof v);
	v.loop_id = pr->loop_id;
	v.role = pr->role;
	v.mode = pr->mode;
	v.task = json_string_value(json_object_get(pr->state, "description"));
	if (v.task == NULL || *v.task == '\0')	/* a front end's bare loop */
		v.task = json_string_value(json_object_get(pr->state, "title"));
	v.state_file = sf;
	v.progress_file = pf;
	v.output_file = of;
	v.state_summary = sum;
	v.capsule = *capsule != NULL ? *capsule : "";
	ctx = context_render(json_object_get(pr->state, "skill_state"),
	    pr->role, pr->test_command);
	v.context = ctx;
	/* the iteration under way, counted from 1 as people count */
	v.max_iterations = json_integer_value(json_object_get(pr->state,
	    "max_iterations"));
	v.iteration = json_integer_value(json_object_get(pr->state,
	    "current_iteration")) + 1;
	if (v.max_iterations > 0 && v.iteration > v.max_iterations)
		v.iteration = v.max_iterations;
	p = prompt_build(pr->root, pr->template, &v, err);
	if (p == NULL) {
		free(*capsule);
		*capsule = NULL;
	} else if (pr->extra != NULL) {
		free(sf);
		xasprintf(&sf, "%s%s", p, pr->extra);
		free(p);
		p = sf;
		sf = NULL;
	}
	free(sf);
	free(pf);
	free(of);
	free(sum);
	free(ctx);
	return p;
}

/*
 * A role's spawn request: the prompt and the capsule (both owned by the
 * caller, who frees them after agent_spawn), the tool, command, model
 * and deadlines planned from the loop's configuration and overrides.
 */
int
prompt_request(const struct loop_cfg *c, const struct prompt_req *in,
    struct agent_req *req, struct plan_deadlines *dl, char **prompt,
    char **capsule, char **err)
{
	struct prompt_req	pr = *in;
	int			ri = config_role_index(c->config, in->role);

	pr.root = c->root;
	pr.template = ri >= 0 ? c->config->roles[ri].prompt_file : NULL;
	pr.test_command = c->config->test_command;
	if ((*prompt = prompt_worker(&pr, capsule, err)) == NULL)
		return -1;
	if (plan_spawn(c->config, c->root, in->role, &c->over, *prompt, req,
	    dl, err) != 0) {
		free(*prompt);
		free(*capsule);
		return -1;
	}
	req->capsule = *capsule;
	return 0;
}

/* --- what a worker's action leaves: the side files */

/*
 * One action's side files, written by the store's side thread: the job
 * owns copies of everything it writes, so the loop goes on (and may free
 * what it had) while a front end holds a file's lock or a disk is slow.
 */
struct prompt_side {
	int			 dirfd;		/* the store's: it outlives its jobs */
	char			*id;
	const atomic_int	*stopping;	/* the store's: give up a lock wait */
	char			*role;		/* NULL: the history only */
	int			 md;		/* the role has a progress file */
	json_t			*section;	/* skill_state[role] for it */
	json_t			*output;	/* ROLE.output.json, or NULL */
	json_t			*changes;	/* changes.log records */
	json_t			*debug;		/* a debug.log record, or NULL */
	json_t			*history;	/* the history's event, or NULL */
	struct strv		 errs;		/* why a file was not written */
};

/* A side file failed: say so; the state file is what counts. */
void
prompt_warn(int rc, char *err)
{
	if (err != NULL)
		log_warnx("%s%s", rc != 0 ? "" : "warning: ", err);
	free(err);
}

/* A job for the store's side thread, with the store's borrowed parts. */
static struct prompt_side *
prompt_side_new(struct state_store *s)
{
	struct prompt_side	*ps = xcalloc(1, sizeof *ps);

	ps->dirfd = state_store_dirfd(s);
	ps->id = xstrdup(state_store_id(s));
	ps->stopping = state_store_stopping(s);
	ps->changes = json_array();
	return ps;
}

/* Keep one writer's failure for the loop (on the side thread). */
static void
prompt_side_note(struct prompt_side *ps, int rc, char *err)
{
	char	*m;

	if (err == NULL)
		return;
	xasprintf(&m, "%s%s", rc != 0 ? "" : "warning: ", err);
	strv_push(&ps->errs, m);
	free(m);
	free(err);
}

/* The blocking part, off the loop: each file in the order the loop gave. */
static void
prompt_side_run(void *arg)
{
	struct prompt_side	*ps = arg;
	const json_t		*o;
	char			*err = NULL;
	size_t			 i;
	int			 rc;

	if (ps->md) {
		rc = progress_append_md(&ccw_loop_state, ps->dirfd, ps->id,
		    ps->role, ps->section, ps->stopping, &err);
		prompt_side_note(ps, rc, err);
	}
	if (ps->output != NULL) {
		rc = progress_output_save(ps->dirfd, ps->id, ps->role,
		    ps->output, &err);
		prompt_side_note(ps, rc, err);
	}
	json_array_foreach(ps->changes, i, o) {
		rc = progress_log(&ccw_loop_state, ps->dirfd, ps->id,
		    "changes.log", o, ps->stopping, &err);
		prompt_side_note(ps, rc, err);
	}
	if (ps->debug != NULL) {
		rc = progress_log(&ccw_loop_state, ps->dirfd, ps->id,
		    "debug.log", ps->debug, ps->stopping, &err);
		prompt_side_note(ps, rc, err);
	}
	if (ps->history != NULL) {
		rc = progress_history_append(ps->dirfd, ps->id, ps->history,
		    ps->stopping, &err);
		prompt_side_note(ps, rc, err);
	}
}

/* Back on the loop: its failures become warnings; the job is freed. */
static void
prompt_side_done(void *arg)
{
	struct prompt_side	*ps = arg;
	size_t			 i;

	for (i = 0; i < ps->errs.n; i++)
		log_warnx("loop %s: %s", ps->id, ps->errs.v[i]);
	strv_clear(&ps->errs);
	json_decref(ps->section);
	json_decref(ps->output);
	json_decref(ps->changes);
	json_decref(ps->debug);
	json_decref(ps->history);
	free(ps->role);
	free(ps->id);
	free(ps);
}

/* The history's event, stamped now (taken). */
static json_t *
prompt_event(json_t *o)
{
	char	now[40];

	clock_iso(NULL, 1, now, sizeof now);
	json_object_set_new(o, "timestamp", json_string(now));
	return o;
}

/*
 * The prompt as the history keeps it: at most PROMPT_HISTORY_MAX bytes,
 * cut on a character's first byte (the history is read as JSON, UTF-8).
 */
static json_t *
prompt_history_text(const char *prompt)
{
	size_t	n;

	if (prompt == NULL)
		return NULL;
	if ((n = strlen(prompt)) <= PROMPT_HISTORY_MAX)
		return json_string(prompt);
	n = PROMPT_HISTORY_MAX;
	while (n > 0 && (prompt[n] & 0xc0) == 0x80)
		n--;
	return json_sprintf("%.*s\n[... %zu bytes more]", (int)n, prompt,
	    strlen(prompt) - n);
}

/*
 * The history's event of one action: what replay shows of it (state
 * export --html, GET /loops/:id/replay): the prompt the worker got, its
 * result, its time and usage, and what its merge changed in skill_state
 * (a parallel step's: the whole step's merge).
 */
static json_t *
prompt_action_event(const char *role, const json_t *res, const char *prompt,
    const char *outcome, const json_t *before, const json_t *ss,
    json_int_t iteration)
{
	static const char *const keep[] = { "agent_id", "tool", "summary",
	    "error_kind", "reason", "duration_ms", "usage", "files_changed",
	    "exit_code", NULL };
	json_t	*o = json_pack("{s:s, s:s, s:s, s:I}", "event", "action",
		    "action", role, "status", outcome, "iteration", iteration);
	const json_t *v;
	size_t	 i;

	for (i = 0; keep[i] != NULL; i++)
		if ((v = json_object_get(res, keep[i])) != NULL &&
		    !json_is_null(v))
			json_object_set(o, keep[i], (json_t *)v);
	if (before != NULL)
		json_object_set_new(o, "changes", json_diff(before, ss,
		    PROMPT_CHANGES_MAX));
	if ((v = prompt_history_text(prompt)) != NULL)
		json_object_set_new(o, "prompt", (json_t *)v);
	return prompt_event(o);
}

/*
 * One action's side files: progress, output, changes, debug log,
 * history; queued on the store's side thread after the earlier ones.
 */
void
prompt_record_action(struct state_store *s, const char *role, json_t *res,
    const char *prompt, const json_t *before, const char *outcome,
    const json_t *ss, json_int_t iteration, const char *now)
{
	struct prompt_side	*ps = prompt_side_new(s);
	const json_t		*f, *sec;
	size_t			 i;

	ps->role = xstrdup(role);
	if (progress_format(&ccw_loop_state, role) != NULL) {
		ps->md = 1;
		if ((sec = json_object_get(ss, role)) != NULL)
			ps->section = json_deep_copy(sec);
	}
	json_object_set_new(res, "outcome", json_string(outcome));
	ps->output = json_deep_copy(res);
	json_array_foreach(json_object_get(res, "files_changed"), i, f)
		json_array_append_new(ps->changes, json_pack("{s:O, s:s, s:s,"
		    " s:O?}", "file", f, "action", role, "timestamp", now,
		    "agent_id", json_object_get(res, "agent_id")));
	if (strcmp(role, "debug") == 0)
		ps->debug = json_pack("{s:s, s:s, s:O?, s:O?, s:s}", "action",
		    role, "status", outcome, "summary", json_object_get(res,
		    "summary"), "hypotheses_count", json_object_get(
		    json_object_get(ss, "debug"), "hypotheses_count"),
		    "timestamp", now);
	ps->history = prompt_action_event(role, res, prompt, outcome, before,
	    ss, iteration);
	state_store_side(s, prompt_side_run, prompt_side_done, ps);
}

/* One event of the loop's history (taken), queued like an action's. */
void
prompt_record(struct state_store *s, json_t *o)
{
	struct prompt_side	*ps = prompt_side_new(s);

	ps->history = prompt_event(o);
	state_store_side(s, prompt_side_run, prompt_side_done, ps);
}
