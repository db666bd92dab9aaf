/*
 * config.c: tool and role configuration.  Finds the config file, lays it
 * over the built-in defaults with strict validation, overlays CCW's
 * ~/.claude/cli-tools.json, and finds tool executables on PATH.
 */

/*
 * The file is searched for in this order, and the first found is read:
 * --config PATH (must exist), ROOT/.loop/config.json,
 * $HOME/.config/ccw-supervisor/config.json; with none, the built-in
 * defaults below are used alone.  A file sets only what it names; every
 * key is optional:
 *
 *	{
 *	  "default_tool": "codex",
 *	  "test_command": "make check",
 *	  "log_max_bytes": 67108864,
 *	  "keep_agents": 64,
 *	  "tools": {
 *	    "codex": { "path": "/opt/bin/codex", "enabled": true,
 *	               "model": "gpt-5",
 *	               "options": { "sandbox": "workspace-write" } },
 *	    "bash":  { }
 *	  },
 *	  "roles": {
 *	    "develop":  { "tool": "bash", "command": "make", "model": null,
 *	                  "prompt": ".loop/roles/develop.md",
 *	                  "permission": "workspace-write",
 *	                  "timeout_ms": 600000, "nudge_ms": 300000,
 *	                  "grace_ms": 5000, "idle_ms": 0 },
 *	    "validate": { "tool": "bash", "command": "make check" }
 *	  }
 *	}
 *
 * default_tool	one of the tools; default: CCW's (see below).
 * test_command	the command that runs the project's tests, told to
 *		debug and validate; default none (init's finding, if any).
 * containment	how a worker and all its tool starts are kept and ended:
 *		"cgroup" (a cgroup v2 each), "sweep" (process groups) or
 *		"auto", the default (a cgroup where one can be made); the
 *		command line's --containment wins (HACKING.md).
 * log_max_bytes  every role's worker log cap, stdout and stderr
 *		together (ccw-worker(8)); 0: none; default the worker's,
 *		67108864 (64 MiB).
 * keep_agents	finished agents a long-lived front end (serve's
 *		/api/agents, a control or mcp session) keeps in memory;
 *		older ones retire: their report is saved as
 *		{id}.result.json beside their log and
 *		`result` answers from it; default 64 (retire.h).
 * tools	keys are the tool table's names (worker/adapters.c; ccw-worker(8)).
 *   path	executable name or path; default the tool's name.
 *   enabled	boolean; default true.
 *   model	string or null; default null (the tool's own default).
 *   options	object handed to the worker (sandbox, permission_mode,
 *		approval_mode, extra_args, ...); default none.
 *   max_workers  workers of this tool alive at once in one host (run,
 *		serve, control, batch), over all its loops; more wait in
 *		FIFO order.  0 (the default): no cap.
 * roles	keys are the workflow's roles (its table, flowdef.h; for
 *		ccw-loop: init develop debug validate complete).
 *   tool	one of the tools, or null for default_tool.
 *   command	for the bash tool: the command run with bash -c.
 *   model	overrides the tool's model.
 *   prompt	path of a prompt template replacing the built-in one.
 *   permission	what the tool may do, sent as ASSIGN options.permission:
 *		"read-only", "workspace-write" (edit the project, run
 *		commands in it) or "full"; default the workflow's
 *		(ccw-loop: read-only for init and complete,
 *		workspace-write for develop, debug, validate: they run the
 *		project's tests).
 *   timeout_ms	hard deadline; default the workflow's (ccw-loop: 600000
 *		for develop, debug, validate, 300000 for init, complete).
 *   nudge_ms	time before a stalled agent is nudged; default 300000.
 *   grace_ms	time between SIGTERM and SIGKILL; default 5000.
 *   idle_ms	time without output that counts as stalled; 0 = never.
 *   log_max_bytes  the role's workers' log cap (above).
 *   attempts	best-of-N: the role's task run this many times at once,
 *		each in a git worktree of its own, the check run in each,
 *		one picked (tests passed, then the smallest diff, then
 *		the fastest) and merged; 1 to 8, default 1 (run
 *		--attempts N sets develop's).
 *   limits	the role's workers' cgroup limits, in containment
 *		cgroup where the controller is enabled (else said once):
 *		{"memory.max": N, "pids.max": N, "cpu.weight": N}, each a
 *		non-negative integer or "max".
 *   question_timeout_ms  how long a worker's question waits for an
 *		answer from a front end (the queue of questions) before
 *		on_question_timeout applies; 0 (the default): a headless
 *		loop takes the recommended option at once.  It stands
 *		still while the loop is held (ask.c's ask_thawed).
 *   ask_permissions  true: a CLI that can ask before a tool use (claude,
 *		through `ccw-worker --permission-relay`) asks, and the
 *		request becomes a question of kind "permission" (options
 *		allow and deny; recommended: allow unless the role is
 *		read-only) under question_timeout_ms and
 *		on_question_timeout; default false.
 *   on_question_timeout  "recommended" (the default: answered with
 *		the recommended option, via "policy"), "fail" (the step
 *		and the loop fail) or "pause" (the loop pauses, the
 *		questions stay open for an answer taken on resume).
 *   retry	how a step that failed is run again where the workflow
 *		runs it again (a parallel step whose every role failed):
 *		{"attempts": 3, "initial_interval_ms": 1000,
 *		 "backoff_coefficient": 2.0, "maximum_interval_ms": 30000}
 *		(the defaults).  attempts counts tries in a row, the first
 *		included (1: never retried, the loop fails); the wait
 *		before try n+1 is initial * coefficient^(n-1), at most
 *		the maximum.  A parallel step takes the smallest attempts
 *		and the largest intervals and coefficient of its roles.
 *		"non_retryable": error kinds (auth, model, network,
 *		tool_error; default ["auth"]) whose failures are not tried
 *		again; rate_limited is refused (it waits for the gate).
 *
 * isolation, worktree, merge  a parallel step's writers in git worktrees
 *		and the merge queue: configgit.c.
 * notify	notification rules: event kinds to sinks (command,
 *		webhook, desktop), debounce_ms, stuck_ms, held_ms:
 *		notifyconf.c.
 *
 * Strings are non-empty strings or null (null: the default); the *_ms
 * keys and log_max_bytes are non-negative integers.  Unknown top-level
 * keys are ignored; an unknown tool, role or key inside them, or a wrong
 * type, is an error naming the key path, e.g. "roles.develop.timeout_ms".
 *
 * Then CCW's files ($CCW_DATA_DIR/.claude/NAME when it exists, else
 * $HOME/.claude/NAME; ccwtools.c) as CCW reads them: cli-tools.json
 * {"tools": {"gemini": {"enabled": true, "primaryModel": "...",
 * "envFile": "~/.gemini/.env"}}} gives, for the table's tools, "enabled"
 * (only JSON true enables; in a file of version >= 3.3 an agent left
 * out is disabled, in an older one CCW migrates it is enabled) and
 * "primaryModel" unless our file set that tool's "enabled" or "model",
 * and options.env (envFile's KEY=VALUE
 * lines), options.settings_file and options.effort (the tools flagged
 * ADAPTER_CCW_SETTINGS) unless our
 * options set them.  A malformed CCW file is a warning (cfg->warnings):
 * CCW's defaults, every tool enabled.  Without default_tool in our file
 * the default is cli-settings.json's defaultTool, else the table's
 * ADAPTER_CCW_DEFAULT tool when cli-tools.json exists, else its
 * ADAPTER_DEFAULT one; a disabled one gives way to the first enabled
 * agent CLI in the table's (CCW's) order.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapter.h"
#include "cgroup.h"
#include "notify.h"
#include "outcome.h"
#include "question.h"
#include "retire.h"
#include "toolconfig.h"
#include "flowdef.h"
#include "xmalloc.h"

/* What one load is doing: the file in hand and what it set explicitly. */
struct cload {
	const char	*file;
	char		**err;
	struct ccw_set	*set;		/* one per row of the tool table */
	int		 default_set;
};

static int	config_error(struct cload *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

/* Messages are built in one place so each names its file first. */
static int
config_error(struct cload *ld, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	msg = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	(void)vsnprintf(msg, (size_t)n + 1, fmt, ap);
	va_end(ap);
	free(*ld->err);
	xasprintf(ld->err, "%s: %s", ld->file, msg);
	free(msg);
	return -1;
}

/* Tool names index the tool table; anything else is not an adapter. */
static int
config_tool_index(const char *name)
{
	size_t	i;

	for (i = 0; name != NULL && i < adapter_count(); i++) {
		if (strcmp(name, adapter_at(i)->name) == 0)
			return (int)i;
	}
	return -1;
}

/*
 * Callers hold role names from the command line or the state file; the
 * index is the workflow's (cfg->roles parallels its table).
 */
int
config_role_index(const struct config *cfg, const char *name)
{
	return workflow_role_index(cfg->wf, name);
}

/* Looked up by name because roles and the command line speak in names. */
const struct tool_cfg *
config_tool(const struct config *cfg, const char *name)
{
	size_t	i;

	for (i = 0; name != NULL && i < cfg->ntools; i++) {
		if (strcmp(cfg->tools[i].name, name) == 0)
			return &cfg->tools[i];
	}
	return NULL;
}

/* Every pointer is owned, so one function frees a config at any stage. */
void
config_free(struct config *cfg)
{
	size_t	i;

	free(cfg->source);
	free(cfg->default_tool);
	free(cfg->default_reason);
	for (i = 0; i < cfg->nwarnings; i++)
		free(cfg->warnings[i]);
	free(cfg->warnings);
	for (i = 0; i < cfg->ntools; i++) {
		free(cfg->tools[i].name);
		free(cfg->tools[i].path);
		free(cfg->tools[i].model);
		json_decref(cfg->tools[i].options);
	}
	free(cfg->tools);
	for (i = 0; i < cfg->nroles; i++) {
		free(cfg->roles[i].tool);
		free(cfg->roles[i].model);
		free(cfg->roles[i].command);
		free(cfg->roles[i].prompt_file);
		free(cfg->roles[i].permission);
		json_decref(cfg->roles[i].limits);
		launch_clear(&cfg->roles[i].launch);
	}
	free(cfg->roles);
	free(cfg->test_command);
	free(cfg->containment);
	config_git_free(&cfg->git);
	json_decref(cfg->notify);
	launch_clear(&cfg->launch);
	memset(cfg, 0, sizeof *cfg);
}

/*
 * A file only overrides, so everything starts from these values: the
 * workflow's deadline and permission per role, the rest the same.
 */
static void
config_defaults(struct config *cfg, const struct workflow *wf)
{
	size_t	i;

	memset(cfg, 0, sizeof *cfg);
	cfg->wf = wf;
	cfg->nroles = wf->nroles;
	cfg->roles = xcalloc(wf->nroles, sizeof *cfg->roles);
	cfg->source = xstrdup("built-in");
	cfg->default_tool = xstrdup(adapter_flagged(ADAPTER_DEFAULT)->name);
	cfg->default_reason = xstrdup("built-in default");
	cfg->keep_agents = RETIRE_KEEP_DEFAULT;
	config_git_defaults(&cfg->git);
	cfg->ntools = adapter_count();
	cfg->tools = xcalloc(cfg->ntools, sizeof *cfg->tools);
	for (i = 0; i < cfg->ntools; i++) {
		cfg->tools[i].name = xstrdup(adapter_at(i)->name);
		cfg->tools[i].path = xstrdup(adapter_at(i)->name);
		cfg->tools[i].enabled = 1;
	}
	for (i = 0; i < cfg->nroles; i++) {
		cfg->roles[i].timeout_ms = wf->roles[i].timeout_ms;
		cfg->roles[i].nudge_ms = 300000;
		cfg->roles[i].grace_ms = 5000;
		cfg->roles[i].idle_ms = 0;
		cfg->roles[i].retry.attempts = 3;
		cfg->roles[i].retry.initial_ms = 1000;
		cfg->roles[i].retry.coefficient = 2.0;
		cfg->roles[i].retry.maximum_ms = 30000;
		cfg->roles[i].retry.non_retryable = CONFIG_EK(OUTCOME_AUTH);
		cfg->roles[i].permission = xstrdup(wf->roles[i].permission);
	}
}

/*
 * Read one JSON object from a file.  *missing is set instead of an error
 * when the file does not exist, so optional locations can be skipped.
 */
static int
config_read(struct cload *ld, json_t **root, int *missing)
{
	struct stat	 sb;
	json_error_t	 jerr;
	FILE		*fp;

	*root = NULL;
	if (missing != NULL)
		*missing = 0;
	if (stat(ld->file, &sb) == -1) {
		if (errno == ENOENT && missing != NULL) {
			*missing = 1;
			return 0;
		}
		return config_error(ld, "%s", strerror(errno));
	}
	if (!S_ISREG(sb.st_mode))
		return config_error(ld, "not a regular file");
	if ((fp = fopen(ld->file, "r")) == NULL)
		return config_error(ld, "%s", strerror(errno));
	*root = json_loadf(fp, JSON_REJECT_DUPLICATES, &jerr);
	fclose(fp);
	if (*root == NULL)
		return config_error(ld, "line %d, column %d: %s", jerr.line,
		    jerr.column, jerr.text);
	if (!json_is_object(*root)) {
		json_decref(*root);
		*root = NULL;
		return config_error(ld, "expected a JSON object at the top");
	}
	return 0;
}

/*
 * A string setting: a non-empty string replaces *dst, null clears it
 * (back to "use the default"), a missing key leaves it alone.  Returns
 * 1 if a string was stored, 0 if not, -1 on a type error.
 */
static int
config_str(struct cload *ld, json_t *obj, const char *key, const char *where,
    char **dst)
{
	json_t	*v;

	if ((v = json_object_get(obj, key)) == NULL)
		return 0;
	if (json_is_null(v)) {
		free(*dst);
		*dst = NULL;
		return 0;
	}
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return config_error(ld, "%s%s%s: expected a non-empty string "
		    "or null", where, *where != '\0' ? "." : "", key);
	free(*dst);
	*dst = xstrdup(json_string_value(v));
	return 1;
}

/* Deadlines are milliseconds; a string or a negative one is a mistake. */
static int
config_ms(struct cload *ld, json_t *obj, const char *key, const char *where,
    uint64_t *dst)
{
	json_t	*v;

	if ((v = json_object_get(obj, key)) == NULL)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return config_error(ld, "%s%s%s: expected a non-negative "
		    "integer", where, *where != '\0' ? "." : "", key);
	*dst = (uint64_t)json_integer_value(v);
	return 0;
}

/* A byte count (log_max_bytes), remembered as set: unset is the worker's. */
static int
config_bytes(struct cload *ld, json_t *obj, const char *key, const char *where,
    struct log_max *dst)
{
	dst->set |= json_object_get(obj, key) != NULL;
	return config_ms(ld, obj, key, where, &dst->bytes);
}

/* A typo in a key would silently lose a setting, so keys are checked. */
static int
config_keys(struct cload *ld, json_t *obj, const char *where,
    const char *const *known)
{
	const char	*key;
	json_t		*v;
	size_t		 i;

	json_object_foreach(obj, key, v) {
		for (i = 0; known[i] != NULL; i++) {
			if (strcmp(key, known[i]) == 0)
				break;
		}
		if (known[i] == NULL)
			return config_error(ld, "%s.%s: unknown key", where,
			    key);
	}
	return 0;
}

/* One entry of "tools"; it may only name a row of the tool table. */
static int
config_tool_entry(struct cload *ld, struct config *cfg, const char *name,
    json_t *obj)
{
	static const char *const known[] = {
		"path", "enabled", "model", "options", "max_workers", NULL
	};
	struct tool_cfg	*t;
	char		*where, *names;
	json_t		*v;
	uint64_t	 cap;
	int		 idx, rc = -1, set = 0;

	xasprintf(&where, "tools.%s", name);
	if ((idx = config_tool_index(name)) == -1) {
		names = adapter_list(0, " or ");
		config_error(ld, "%s: unknown tool (expected %s)", where,
		    names);
		free(names);
		goto out;
	}
	t = &cfg->tools[idx];
	if (!json_is_object(obj)) {
		config_error(ld, "%s: expected an object", where);
		goto out;
	}
	if (config_keys(ld, obj, where, known) == -1 ||
	    config_str(ld, obj, "path", where, &t->path) == -1 ||
	    (set = config_str(ld, obj, "model", where, &t->model)) == -1)
		goto out;
	if (set || json_is_null(json_object_get(obj, "model")))
		ld->set[idx].model = 1;
	if ((v = json_object_get(obj, "enabled")) != NULL) {
		if (!json_is_boolean(v)) {
			config_error(ld, "%s.enabled: expected true or false",
			    where);
			goto out;
		}
		t->enabled = json_is_true(v);
		ld->set[idx].enabled = 1;
	}
	if ((v = json_object_get(obj, "options")) != NULL) {
		if (!json_is_object(v) && !json_is_null(v)) {
			config_error(ld, "%s.options: expected an object "
			    "or null", where);
			goto out;
		}
		json_decref(t->options);
		t->options = json_is_null(v) ? NULL : json_incref(v);
	}
	cap = t->max_workers;
	if (config_ms(ld, obj, "max_workers", where, &cap) == -1)
		goto out;
	if (cap > 100000) {
		config_error(ld, "%s.max_workers: expected 0 (no cap) to "
		    "100000", where);
		goto out;
	}
	t->max_workers = (unsigned)cap;
	if (t->path == NULL)
		t->path = xstrdup(t->name);
	rc = 0;
out:
	free(where);
	return rc;
}

/*
 * The CONFIG_EK() bit of an error kind; 0 for one a policy cannot name:
 * success, an unknown word, or a gated kind (it waits, it never fails).
 */
unsigned
config_error_kind(const char *kind)
{
	enum outcome_kind	 k = outcome_find(kind);

	if (k == OUTCOME_NONE || (outcome_at(k)->flags & OUTCOME_GATED))
		return 0;
	return CONFIG_EK(k);
}

/*
 * retry.non_retryable: an array of error kinds.  rate_limited is refused:
 * a rate limit waits for its provider's gate, it is never a failure.
 */
static int
config_non_retryable(struct cload *ld, json_t *v, const char *where,
    unsigned *out)
{
	json_t		*e;
	size_t		 i;
	unsigned	 bits = 0, bit;
	enum outcome_kind k;

	if (v == NULL)
		return 0;
	if (!json_is_array(v))
		return config_error(ld, "%s.non_retryable: expected an array "
		    "of error kinds", where);
	json_array_foreach(v, i, e) {
		k = outcome_find(json_string_value(e));
		if (k != OUTCOME_NONE && (outcome_at(k)->flags & OUTCOME_GATED))
			return config_error(ld, "%s.non_retryable[%zu]: "
			    "%s cannot be non-retryable (it waits for its "
			    "provider's gate and is tried again)", where, i,
			    outcome_name(k));
		if ((bit = config_error_kind(json_string_value(e))) == 0)
			return config_error(ld, "%s.non_retryable[%zu]: "
			    "expected an outcome kind (ccw-supervisor(1), "
			    "OUTCOME KINDS)", where, i);
		bits |= bit;
	}
	*out = bits;
	return 0;
}

/* roles.ROLE.retry: what it names replaces the default, checked. */
static int
config_retry(struct cload *ld, json_t *obj, const char *role,
    struct retry_cfg *rt)
{
	static const char *const known[] = {
		"attempts", "initial_interval_ms", "backoff_coefficient",
		"maximum_interval_ms", "non_retryable", NULL
	};
	json_t		*v = json_object_get(obj, "retry");
	uint64_t	 n;
	char		*where;
	int		 rc = -1;

	if (v == NULL)
		return 0;
	xasprintf(&where, "%s.retry", role);
	if (!json_is_object(v)) {
		config_error(ld, "%s: expected an object", where);
		goto out;
	}
	n = rt->attempts;
	if (config_keys(ld, v, where, known) == -1 ||
	    config_ms(ld, v, "attempts", where, &n) == -1 ||
	    config_ms(ld, v, "initial_interval_ms", where,
	    &rt->initial_ms) == -1 ||
	    config_ms(ld, v, "maximum_interval_ms", where,
	    &rt->maximum_ms) == -1)
		goto out;
	if (n < 1 || n > 1000000) {
		config_error(ld, "%s.attempts: expected 1 to 1000000", where);
		goto out;
	}
	rt->attempts = (unsigned)n;
	obj = json_object_get(v, "backoff_coefficient");
	if (obj != NULL && (!json_is_number(obj) ||
	    json_number_value(obj) < 1.0 || json_number_value(obj) > 100.0)) {
		config_error(ld, "%s.backoff_coefficient: expected a number "
		    "from 1 to 100", where);
		goto out;
	}
	if (obj != NULL)
		rt->coefficient = json_number_value(obj);
	if (config_non_retryable(ld, json_object_get(v, "non_retryable"),
	    where, &rt->non_retryable) == -1)
		goto out;
	rc = 0;
out:
	free(where);
	return rc;
}

/* The wait before try n+1 of a step that failed n times in a row. */
uint64_t
config_retry_delay(const struct retry_cfg *rt, unsigned failures)
{
	double		 d = (double)rt->initial_ms;
	unsigned	 i;

	for (i = 1; i < failures && d < (double)rt->maximum_ms; i++)
		d *= rt->coefficient;
	return d < (double)rt->maximum_ms ? (uint64_t)d : rt->maximum_ms;
}

/* "launcher" in obj, when there: launch.c reads it. */
static int
config_launcher(struct cload *ld, json_t *obj, const char *where,
    struct launch_cfg *dst)
{
	json_t	*v = json_object_get(obj, "launcher");
	char	*w, *err = NULL;
	int	 rc = 0;

	if (v == NULL)
		return 0;
	xasprintf(&w, "%s%slauncher", where, *where != '\0' ? "." : "");
	if (launch_parse_json(v, w, dst, &err) != 0) {
		rc = config_error(ld, "%s", err);
		free(err);
	}
	free(w);
	return rc;
}

/*
 * A role's cgroup "limits": {"memory.max": N | "max", "pids.max": ...,
 * "cpu.weight": ...}, the files cgroup.c's table knows, each a
 * non-negative integer or "max"; applied where containment is cgroup
 * and the controller is enabled (HACKING.md, Containment).
 */
static int
config_limits(struct cload *ld, json_t *obj, const char *where,
    json_t **dst)
{
	json_t		*v = json_object_get(obj, "limits"), *x;
	const char	*key;

	if (v == NULL)
		return 0;
	if (!json_is_object(v))
		return config_error(ld, "%s.limits: expected an object", where);
	json_object_foreach(v, key, x) {
		if (!cgroup_limit_known(key))
			return config_error(ld, "%s.limits.%s: unknown limit "
			    "(expected memory.max, pids.max or cpu.weight)",
			    where, key);
		if (!(json_is_integer(x) && json_integer_value(x) >= 0) &&
		    !(json_is_string(x) && strcmp(json_string_value(x),
		    "max") == 0))
			return config_error(ld, "%s.limits.%s: expected a "
			    "non-negative integer or \"max\"", where, key);
	}
	json_decref(*dst);
	*dst = json_incref(v);
	return 0;
}

/*
 * A role's best-of-N "attempts": 1 to CONFIG_MAX_ATTEMPTS runs of one
 * step at once, each in its own worktree (ccw-loop's attempts.c).
 */
static int
config_attempts(struct cload *ld, json_t *obj, const char *where,
    unsigned *dst)
{
	json_t	*v;

	if ((v = json_object_get(obj, "attempts")) == NULL)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > CONFIG_MAX_ATTEMPTS)
		return config_error(ld, "%s.attempts: expected an integer "
		    "from 1 to %d", where, CONFIG_MAX_ATTEMPTS);
	*dst = (unsigned)json_integer_value(v);
	return 0;
}

/* roles.ROLE.on_question_timeout: a word of question_policies. */
static int
config_question_policy(struct cload *ld, json_t *obj, const char *where,
    struct role_cfg *r)
{
	char	*w = NULL;
	int	 i;

	if (config_str(ld, obj, "on_question_timeout", where, &w) == -1)
		return -1;
	if (w == NULL)
		return 0;
	for (i = 0; question_policies[i] != NULL; i++)
		if (strcmp(w, question_policies[i]) == 0)
			break;
	free(w);
	if (question_policies[i] == NULL) {
		config_error(ld, "%s.on_question_timeout: expected "
		    "\"recommended\", \"fail\" or \"pause\"", where);
		return -1;
	}
	r->on_question_timeout = i;
	return 0;
}

/* roles.ROLE.ask_permissions: a boolean (issue 29; default false). */
static int
config_ask_permissions(struct cload *ld, json_t *obj, const char *where,
    struct role_cfg *r)
{
	json_t	*v = json_object_get(obj, "ask_permissions");

	if (v == NULL)
		return 0;
	if (!json_is_boolean(v))
		return config_error(ld, "%s.ask_permissions: expected true "
		    "or false", where);
	r->ask_permissions = json_is_true(v);
	return 0;
}

/* One entry of "roles"; its tool must be an adapter we have. */
static int
config_role_entry(struct cload *ld, struct config *cfg, const char *name,
    json_t *obj)
{
	static const char *const known[] = {
		"tool", "command", "model", "prompt", "permission",
		"timeout_ms", "nudge_ms", "grace_ms", "idle_ms", "retry",
		"launcher", "log_max_bytes", "limits", "attempts",
		"question_timeout_ms", "on_question_timeout",
		"ask_permissions", NULL
	};
	struct role_cfg	*r;
	char		*where, *perm = NULL, *list;
	int		 idx, rc = -1;

	xasprintf(&where, "roles.%s", name);
	if ((idx = config_role_index(cfg, name)) == -1) {
		list = workflow_role_list(cfg->wf, " or ");
		config_error(ld, "%s: unknown role (expected %s)", where, list);
		free(list);
		goto out;
	}
	r = &cfg->roles[idx];
	if (!json_is_object(obj)) {
		config_error(ld, "%s: expected an object", where);
		goto out;
	}
	if (config_keys(ld, obj, where, known) == -1 ||
	    config_str(ld, obj, "tool", where, &r->tool) == -1 ||
	    config_str(ld, obj, "command", where, &r->command) == -1 ||
	    config_str(ld, obj, "model", where, &r->model) == -1 ||
	    config_str(ld, obj, "prompt", where, &r->prompt_file) == -1 ||
	    config_ms(ld, obj, "timeout_ms", where, &r->timeout_ms) == -1 ||
	    config_ms(ld, obj, "nudge_ms", where, &r->nudge_ms) == -1 ||
	    config_ms(ld, obj, "grace_ms", where, &r->grace_ms) == -1 ||
	    config_ms(ld, obj, "idle_ms", where, &r->idle_ms) == -1 ||
	    config_bytes(ld, obj, "log_max_bytes", where, &r->log_max) == -1 ||
	    config_retry(ld, obj, where, &r->retry) == -1 ||
	    config_ms(ld, obj, "question_timeout_ms", where,
	    &r->question_timeout_ms) == -1 ||
	    config_question_policy(ld, obj, where, r) == -1)
		goto out;
	if (r->tool != NULL && config_tool_index(r->tool) == -1) {
		config_error(ld, "%s.tool: unknown tool '%s'", where, r->tool);
		goto out;
	}
	if (config_launcher(ld, obj, where, &r->launch) == -1 ||
	    config_limits(ld, obj, where, &r->limits) == -1 ||
	    config_attempts(ld, obj, where, &r->attempts) == -1 ||
	    config_ask_permissions(ld, obj, where, r) == -1 ||
	    config_str(ld, obj, "permission", where, &perm) == -1)
		goto out;
	if (perm != NULL && strcmp(perm, "read-only") != 0 &&
	    strcmp(perm, "workspace-write") != 0 &&
	    strcmp(perm, "full") != 0) {
		config_error(ld, "%s.permission: expected \"read-only\", "
		    "\"workspace-write\" or \"full\"", where);
		goto out;
	}
	if (perm != NULL) {
		free(r->permission);
		r->permission = perm;
		perm = NULL;
	}
	rc = 0;
out:
	free(perm);
	free(where);
	return rc;
}

/* The config file proper, laid over the defaults already in cfg. */
static int
config_apply(struct cload *ld, struct config *cfg, json_t *root)
{
	const char	*key;
	json_t		*v, *sec;

	if ((v = json_object_get(root, "default_tool")) != NULL) {
		if (!json_is_string(v))
			return config_error(ld, "default_tool: expected a "
			    "string");
		if (config_tool_index(json_string_value(v)) == -1)
			return config_error(ld, "default_tool: unknown tool "
			    "'%s'", json_string_value(v));
		free(cfg->default_tool);
		cfg->default_tool = xstrdup(json_string_value(v));
		free(cfg->default_reason);
		xasprintf(&cfg->default_reason, "default_tool in %s",
		    ld->file);
		ld->default_set = 1;
	}
	if (config_launcher(ld, root, "", &cfg->launch) == -1 ||
	    config_bytes(ld, root, "log_max_bytes", "", &cfg->log_max) == -1 ||
	    config_ms(ld, root, "keep_agents", "", &cfg->keep_agents) == -1)
		return -1;
	if (json_object_get(root, "test_command") != NULL &&
	    config_str(ld, root, "test_command", "", &cfg->test_command)
	    == -1)
		return -1;
	if (config_str(ld, root, "containment", "", &cfg->containment) == -1)
		return -1;
	if (cfg->containment != NULL && !contain_mode_valid(cfg->containment))
		return config_error(ld, "containment: expected \"cgroup\", "
		    "\"sweep\" or \"auto\"");
	if (config_git_apply(ld->file, root, &cfg->git, ld->err) != 0)
		return -1;
	if (notify_conf_apply(ld->file, root, &cfg->notify, ld->err) != 0)
		return -1;
	if ((sec = json_object_get(root, "tools")) != NULL) {
		if (!json_is_object(sec))
			return config_error(ld, "tools: expected an object");
		json_object_foreach(sec, key, v) {
			if (config_tool_entry(ld, cfg, key, v) == -1)
				return -1;
		}
	}
	if ((sec = json_object_get(root, "roles")) != NULL) {
		if (!json_is_object(sec))
			return config_error(ld, "roles: expected an object");
		json_object_foreach(sec, key, v) {
			if (config_role_entry(ld, cfg, key, v) == -1)
				return -1;
		}
	}
	return 0;
}

/* Read the first file found, if any, over the defaults. */
static int
config_main_file(struct cload *ld, struct config *cfg, const char *file_arg,
    const char *root, const char *home)
{
	char	*cand[2] = { NULL, NULL };
	json_t	*j = NULL;
	size_t	 i;
	int	 rc = 0, missing = 1;

	if (file_arg != NULL) {
		ld->file = file_arg;
		if (config_read(ld, &j, NULL) == -1)
			return -1;
		missing = 0;
	} else {
		if (root != NULL)
			xasprintf(&cand[0], "%s/%s", root,
			    cfg->wf->config_file != NULL ?
			    cfg->wf->config_file : ".loop/config.json");
		if (home != NULL)
			xasprintf(&cand[1], "%s/.config/ccw-supervisor/%s",
			    home, cfg->wf->config_home_file != NULL ?
			    cfg->wf->config_home_file : "config.json");
		for (i = 0; i < 2 && missing; i++) {
			if (cand[i] == NULL)
				continue;
			ld->file = cand[i];
			if ((rc = config_read(ld, &j, &missing)) == -1)
				break;
		}
	}
	if (rc == 0 && !missing) {
		free(cfg->source);
		cfg->source = xstrdup(ld->file);
		rc = config_apply(ld, cfg, j);
	}
	json_decref(j);
	free(cand[0]);
	free(cand[1]);
	return rc;
}

/*
 * One call gives the whole configuration of the workflow's roles or a
 * one-line reason; on error cfg is left empty, so the caller frees
 * nothing.
 */
int
config_load(const struct workflow *wf, const char *file_arg,
    const char *root, const char *home, struct config *cfg, char **err)
{
	struct cload	 ld;
	int		 rc;

	*err = NULL;
	memset(&ld, 0, sizeof ld);
	ld.err = err;
	ld.set = xcalloc(adapter_count(), sizeof *ld.set);
	if (home == NULL)
		home = getenv("HOME");
	if (home != NULL && *home == '\0')
		home = NULL;
	config_defaults(cfg, wf);
	rc = config_main_file(&ld, cfg, file_arg, root, home);
	if (rc == 0)
		config_ccw_apply(cfg, home, ld.set, ld.default_set);
	if (rc == -1)
		config_free(cfg);
	free(ld.set);
	return rc;
}

/* exec*() would run a directory or an unreadable file no better than us. */
static int
config_executable(const char *path)
{
	struct stat	sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    access(path, X_OK) == 0;
}

/*
 * Tools are found before forking so a missing one is reported by name
 * with the PATH searched, instead of as a worker's exec failure.
 */
char *
config_resolve_path(const char *name, const char *path_env)
{
	const char	*p, *colon;
	char		*cand;
	size_t		 n;

	if (name == NULL || *name == '\0')
		return NULL;
	if (strchr(name, '/') != NULL)
		return config_executable(name) ? xstrdup(name) : NULL;
	if (path_env == NULL)
		path_env = getenv("PATH");
	if (path_env == NULL)
		path_env = "/bin:/usr/bin";
	for (p = path_env;; p = colon + 1) {
		colon = strchr(p, ':');
		n = colon != NULL ? (size_t)(colon - p) : strlen(p);
		if (n == 0)
			xasprintf(&cand, "./%s", name);
		else
			xasprintf(&cand, "%.*s/%s", (int)n, p, name);
		if (config_executable(cand))
			return cand;
		free(cand);
		if (colon == NULL)
			break;
	}
	return NULL;
}
