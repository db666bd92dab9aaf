/*
 * test-config.c: config search order and precedence, strict validation
 * messages, CCW's cli-tools.json overlay, and PATH lookup, all inside a
 * private temporary directory used as HOME and ROOT.
 */
#include <config.h>

#include <sys/stat.h>

#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapter.h"
#include "ccw-loop.h"
#include "outcome.h"
#include "toolconfig.h"
#include "tap.h"
#include "xmalloc.h"

static char	tmp[] = "/tmp/ccw-test-config-XXXXXX";
static char	*home, *root;

/* Tests write files deep in fresh trees; create the parents as needed. */
static void
mkparents(const char *path)
{
	char	*p, *s;

	p = xstrdup(path);
	for (s = p + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		(void)mkdir(p, 0755);
		*s = '/';
	}
	free(p);
}

/* Write a whole file (printf-style path), replacing what was there. */
static char *
put(const char *text, mode_t mode, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Write a whole file (printf-style path), replacing what was there. */
static char *
put(const char *text, mode_t mode, const char *fmt, ...)
{
	va_list	 ap;
	char	 path[1024];
	FILE	*fp;

	va_start(ap, fmt);
	vsnprintf(path, sizeof path, fmt, ap);
	va_end(ap);
	mkparents(path);
	if ((fp = fopen(path, "w")) == NULL) {
		tap_diag("cannot write %s", path);
		return xstrdup(path);
	}
	fputs(text, fp);
	fclose(fp);
	chmod(path, mode);
	return xstrdup(path);
}

/* nftw callback: the temp tree goes away depth first. */
static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Load with the temp HOME and ROOT; the error text, if any, is returned. */
static int
load(const char *file, struct config *cfg, char **err)
{
	return config_load(&ccw_loop_workflow, file, root, home, cfg, err);
}

/* An error must name the key path (and the file) it is about. */
static void
expect_error(const char *json, const char *want, const char *what)
{
	struct config	 cfg;
	char		*err = NULL, *f;
	int		 rc;

	f = put(json, 0644, "%s/bad.json", tmp);
	rc = load(f, &cfg, &err);
	tap_ok(rc == -1 && err != NULL && strstr(err, want) != NULL &&
	    strstr(err, "bad.json") != NULL && cfg.source == NULL,
	    "%s: error names '%s'", what, want);
	if (err != NULL)
		tap_diag("%s", err);
	if (rc == 0)
		config_free(&cfg);
	free(err);
	free(f);
}

/* With no file anywhere, the built-in values. */
static void
test_defaults(void)
{
	struct config		 cfg;
	const struct tool_cfg	*t;
	char			*err = NULL;

	tap_is_int(load(NULL, &cfg, &err), 0, "defaults: load");
	tap_is_str(cfg.source, "built-in", "defaults: source");
	tap_is_str(cfg.default_tool, "codex", "defaults: default tool");
	tap_is_int((long long)cfg.ntools, (long long)adapter_count(),
	    "defaults: one tool per row of the tool table");
	t = config_tool(&cfg, "opencode");
	tap_ok(t != NULL && t->enabled && strcmp(t->path, "opencode") == 0 &&
	    t->model == NULL && t->options == NULL, "defaults: opencode entry");
	tap_ok(config_tool(&cfg, "cursor") == NULL, "config_tool: unknown");
	tap_ok(cfg.roles[1].timeout_ms == 600000 &&
	    cfg.roles[2].timeout_ms == 600000 &&
	    cfg.roles[3].timeout_ms == 600000 &&
	    cfg.roles[0].timeout_ms == 300000 &&
	    cfg.roles[4].timeout_ms == 300000, "defaults: timeouts");
	tap_ok(cfg.roles[1].nudge_ms == 300000 && cfg.roles[1].grace_ms == 5000
	    && cfg.roles[1].idle_ms == 0 && cfg.roles[1].tool == NULL,
	    "defaults: nudge, grace, idle, tool");
	tap_ok(strcmp(cfg.roles[0].permission, "read-only") == 0 &&
	    strcmp(cfg.roles[1].permission, "workspace-write") == 0 &&
	    strcmp(cfg.roles[2].permission, "workspace-write") == 0 &&
	    strcmp(cfg.roles[3].permission, "workspace-write") == 0 &&
	    strcmp(cfg.roles[4].permission, "read-only") == 0,
	    "defaults: init and complete read-only, the others "
	    "workspace-write");
	tap_ok(cfg.test_command == NULL, "defaults: no test command");
	tap_is_int(config_role_index(&cfg, "develop"), 1,
	    "role index develop");
	tap_is_int(config_role_index(&cfg, "deploy"), -1, "role index unknown");
	tap_is_str(cfg.wf->roles[4].name, "complete", "role names");
	tap_is_int((long long)cfg.nroles, 5, "a role entry per role");
	config_free(&cfg);
}

/* ROOT beats HOME, --config beats both; a file sets only what it names. */
static void
test_search(void)
{
	struct config	 cfg;
	char		*err = NULL, *h, *r, *x;

	h = put("{\"default_tool\": \"claude\", \"roles\": {\"develop\": "
	    "{\"command\": \"from-home\"}}}", 0644,
	    "%s/.config/ccw-supervisor/config.json", home);
	tap_is_int(load(NULL, &cfg, &err), 0, "home file: load");
	tap_is_str(cfg.source, h, "home file: source");
	tap_is_str(cfg.default_tool, "claude", "home file: default tool");
	config_free(&cfg);

	setenv("HOME", home, 1);
	config_load(&ccw_loop_workflow, NULL, root, NULL, &cfg, &err);
	tap_is_str(cfg.source, h, "home NULL means $HOME");
	config_free(&cfg);

	r = put("{\"default_tool\": \"gemini\", \"whatever\": [1, 2]}", 0644,
	    "%s/.loop/config.json", root);
	tap_is_int(load(NULL, &cfg, &err), 0, "root file: load");
	tap_is_str(cfg.source, r, "root file beats home file");
	tap_ok(strcmp(cfg.default_tool, "gemini") == 0 &&
	    cfg.roles[1].command == NULL,
	    "root file: home file not merged, unknown top-level key ignored");
	config_free(&cfg);

	x = put("{\"tools\": {\"codex\": {\"path\": \"/opt/bin/codex\", "
	    "\"model\": \"gpt-5\", \"options\": {\"sandbox\": "
	    "\"workspace-write\"}}, \"bash\": {}},\n\"roles\": {\"develop\": "
	    "{\"tool\": \"bash\", \"command\": \"make\", \"model\": null, "
	    "\"prompt\": \".loop/roles/develop.md\", \"timeout_ms\": 1234, "
	    "\"idle_ms\": 0}}}", 0644, "%s/explicit.json", tmp);
	tap_is_int(load(x, &cfg, &err), 0, "explicit file: load");
	tap_is_str(cfg.source, x, "explicit file beats root and home");
	tap_ok(strcmp(cfg.roles[1].tool, "bash") == 0 &&
	    strcmp(cfg.roles[1].command, "make") == 0 &&
	    strcmp(cfg.roles[1].prompt_file, ".loop/roles/develop.md") == 0 &&
	    cfg.roles[1].model == NULL, "explicit file: role strings");
	tap_ok(cfg.roles[1].timeout_ms == 1234 &&
	    cfg.roles[1].nudge_ms == 300000 &&
	    cfg.roles[2].timeout_ms == 600000,
	    "explicit file: overrides only what it sets");
	tap_ok(strcmp(config_tool(&cfg, "codex")->path,
	    "/opt/bin/codex") == 0 &&
	    strcmp(config_tool(&cfg, "codex")->model, "gpt-5") == 0 &&
	    strcmp(json_string_value(json_object_get(config_tool(&cfg,
	    "codex")->options, "sandbox")), "workspace-write") == 0,
	    "explicit file: tool path, model, options");
	tap_is_str(config_tool(&cfg, "bash")->path, "bash",
	    "empty tool entry keeps defaults");
	config_free(&cfg);
	free(x);

	xasprintf(&x, "%s/nope.json", tmp);
	tap_ok(load(x, &cfg, &err) == -1 && err != NULL &&
	    strstr(err, x) != NULL && strstr(err, "No such file") != NULL,
	    "explicit missing file is an error naming it");
	free(err);
	err = NULL;
	free(x);
	unlink(r);
	unlink(h);
	free(r);
	free(h);
}

/* Strict validation: every mistake is reported with its key path. */
static void
test_errors(void)
{
	expect_error("{\n  \"tools\": {\n    \"codex\": ,\n  }\n}", "line 3",
	    "syntax error");
	expect_error("[1]", "object", "array at the top");
	expect_error("{\"roles\": {\"develop\": {\"timeout_ms\": \"10\"}}}",
	    "roles.develop.timeout_ms: expected a non-negative integer",
	    "string deadline");
	expect_error("{\"roles\": {\"debug\": {\"nudge_ms\": -1}}}",
	    "roles.debug.nudge_ms", "negative deadline");
	expect_error("{\"roles\": {\"init\": {\"grace_ms\": 1.5}}}",
	    "roles.init.grace_ms", "fractional deadline");
	expect_error("{\"roles\": {\"deploy\": {}}}", "roles.deploy: "
	    "unknown role (expected init, develop, debug, validate or "
	    "complete)", "unknown role: the roles from the table");
	expect_error("{\"tools\": {\"cursor\": {}}}", "tools.cursor",
	    "unknown tool");
	expect_error("{\"roles\": {\"develop\": {\"tool\": \"cursor\"}}}",
	    "roles.develop.tool", "role naming an unknown tool");
	expect_error("{\"tools\": {\"codex\": {\"enabled\": \"yes\"}}}",
	    "tools.codex.enabled", "string boolean");
	expect_error("{\"tools\": {\"codex\": {\"options\": \"x\"}}}",
	    "tools.codex.options", "options not an object");
	expect_error("{\"tools\": {\"codex\": {\"model\": 5}}}",
	    "tools.codex.model", "number model");
	expect_error("{\"default_tool\": \"vim\"}", "default_tool",
	    "unknown default tool");
	expect_error("{\"roles\": {\"develop\": {\"timout_ms\": 5}}}",
	    "roles.develop.timout_ms: unknown key", "misspelt key");
	expect_error("{\"roles\": []}", "roles: expected an object",
	    "roles not an object");
	expect_error("{\"roles\": {\"init\": {\"permission\": \"root\"}}}",
	    "roles.init.permission: expected \"read-only\"",
	    "unknown permission");
	expect_error("{\"test_command\": 3}",
	    "test_command: expected a non-empty string", "number test_command");
}

/* Per-role permission and model, and the project's test command. */
static void
test_role_options(void)
{
	struct config	 cfg;
	char		*err = NULL, *f;

	f = put("{\"test_command\": \"sh tests/run.sh\", \"roles\": {"
	    "\"complete\": {\"permission\": \"full\", \"model\": \"m1\"},"
	    " \"validate\": {\"permission\": null}}}", 0644, "%s/opts.json",
	    root);
	tap_is_int(load(f, &cfg, &err), 0, "role options: load");
	tap_is_str(cfg.test_command, "sh tests/run.sh", "test_command read");
	tap_is_str(cfg.roles[4].permission, "full", "complete: permission set");
	tap_is_str(cfg.roles[4].model, "m1", "complete: model set");
	tap_is_str(cfg.roles[3].permission, "workspace-write",
	    "validate: null permission keeps the default");
	tap_is_str(cfg.roles[0].permission, "read-only",
	    "init: default kept");
	config_free(&cfg);
	unlink(f);
	free(f);
}

/* CCW's file gives enabled and primaryModel unless ours set them. */
static void
test_cli_tools(void)
{
	struct config	 cfg;
	char		*err = NULL, *c, *r;

	c = put("{\"tools\": {\"gemini\": {\"enabled\": false, "
	    "\"primaryModel\": \"gemini-2.5-pro\", \"secondaryModel\": \"x\"}, "
	    "\"codex\": {\"primaryModel\": \"o3\"}, \"qwen\": {\"enabled\": "
	    "false}, \"litellm\": {\"enabled\": true}}, \"version\": 3}", 0644,
	    "%s/.claude/cli-tools.json", home);
	r = put("{\"tools\": {\"codex\": {\"model\": \"gpt-5\"}, \"qwen\": "
	    "{\"enabled\": true}}}", 0644, "%s/.loop/config.json", root);
	tap_is_int(load(NULL, &cfg, &err), 0, "cli-tools.json: load");
	tap_ok(!config_tool(&cfg, "gemini")->enabled,
	    "cli-tools.json: enabled false");
	tap_is_str(config_tool(&cfg, "gemini")->model, "gemini-2.5-pro",
	    "cli-tools.json: primaryModel");
	tap_is_str(config_tool(&cfg, "codex")->model, "gpt-5",
	    "cli-tools.json: our model wins");
	tap_ok(config_tool(&cfg, "qwen")->enabled,
	    "cli-tools.json: our explicit enabled wins");
	tap_is_str(cfg.source, r, "cli-tools.json: source is our file");
	config_free(&cfg);

	free(put("{\"tools\": {\"gemini\": {\"enabled\": tru}}}", 0644,
	    "%s/.claude/cli-tools.json", home));
	tap_ok(load(NULL, &cfg, &err) == 0 && err == NULL &&
	    cfg.nwarnings == 1 && strstr(cfg.warnings[0], "cli-tools.json")
	    != NULL && strstr(cfg.warnings[0], "line 1") != NULL &&
	    config_tool(&cfg, "gemini")->enabled,
	    "malformed cli-tools.json: a warning naming it, CCW's defaults");
	if (cfg.nwarnings > 0)
		tap_diag("%s", cfg.warnings[0]);
	config_free(&cfg);
	free(put("{\"tools\": 7}", 0644, "%s/.claude/cli-tools.json", home));
	tap_ok(load(NULL, &cfg, &err) == 0 && cfg.nwarnings == 1 &&
	    strstr(cfg.warnings[0], "cli-tools.json: tools") != NULL,
	    "cli-tools.json with tools not an object: a warning");
	config_free(&cfg);
	unlink(c);
	unlink(r);
	free(c);
	free(r);
}

/* PATH lookup skips directories and non-executables, like execvp. */
static void
test_resolve(void)
{
	char	*pathenv, *want, *got;

	xasprintf(&want, "%s/bin1/faketool/x", tmp);
	mkparents(want);
	free(want);
	free(put("#!/bin/sh\n", 0644, "%s/bin2/faketool", tmp));
	want = put("#!/bin/sh\n", 0755, "%s/bin3/faketool", tmp);

	xasprintf(&pathenv, "%s/bin1:%s/bin2", tmp, tmp);
	tap_ok(config_resolve_path("faketool", pathenv) == NULL,
	    "resolve: directory and non-executable are skipped");
	free(pathenv);
	xasprintf(&pathenv, "%s/none::%s/bin1:%s/bin2:%s/bin3", tmp, tmp, tmp,
	    tmp);
	got = config_resolve_path("faketool", pathenv);
	tap_is_str(got, want, "resolve: first executable on PATH");
	free(got);
	got = config_resolve_path(want, "/nonexistent");
	tap_is_str(got, want, "resolve: a name with '/' is taken as is");
	free(got);
	free(pathenv);
	xasprintf(&pathenv, "%s/bin2/faketool", tmp);
	tap_ok(config_resolve_path(pathenv, NULL) == NULL,
	    "resolve: a path to a non-executable file");
	free(pathenv);
	xasprintf(&pathenv, "%s/bin1/faketool", tmp);
	tap_ok(config_resolve_path(pathenv, NULL) == NULL,
	    "resolve: a path to a directory");
	free(pathenv);
	tap_ok(config_resolve_path("no-such-tool-ccw", tmp) == NULL &&
	    config_resolve_path("", NULL) == NULL, "resolve: not found");
	got = config_resolve_path("sh", NULL);
	tap_ok(got != NULL && got[0] == '/', "resolve: sh on the real PATH");
	free(got);
	free(want);
}

/* roles.ROLE.retry: defaults, a file's values, the waits, bad values. */
static void
test_retry(void)
{
	struct config	 cfg;
	struct retry_cfg r = { 5, 200, 3.0, 1000, 0 };
	char		*err = NULL, *f;

	if (load(NULL, &cfg, &err) == 0) {
		tap_ok(cfg.roles[1].retry.attempts == 3 &&
		    cfg.roles[1].retry.initial_ms == 1000 &&
		    cfg.roles[1].retry.coefficient == 2.0 &&
		    cfg.roles[1].retry.maximum_ms == 30000,
		    "retry: defaults 3 attempts, 1000 ms, 2.0, 30000 ms");
		config_free(&cfg);
	} else
		tap_ok(0, "retry: defaults load");
	free(err);
	err = NULL;
	f = put("{\"roles\": {\"debug\": {\"retry\": {\"attempts\": 1, "
	    "\"backoff_coefficient\": 1.5}}}}", 0644, "%s/retry.json", tmp);
	if (load(f, &cfg, &err) == 0) {
		tap_ok(cfg.roles[2].retry.attempts == 1 &&
		    cfg.roles[2].retry.coefficient == 1.5 &&
		    cfg.roles[2].retry.initial_ms == 1000,
		    "retry: a file sets what it names, the rest default");
		config_free(&cfg);
	} else
		tap_ok(0, "retry: file loads: %s", err);
	free(err);
	free(f);
	tap_ok(config_retry_delay(&r, 1) == 200 &&
	    config_retry_delay(&r, 2) == 600 &&
	    config_retry_delay(&r, 3) == 1000 &&
	    config_retry_delay(&r, 40) == 1000,
	    "retry: initial, times the coefficient, capped at the maximum");
	expect_error("{\"roles\": {\"develop\": {\"retry\": "
	    "{\"attempts\": 0}}}}", "roles.develop.retry.attempts",
	    "retry: zero attempts");
	expect_error("{\"roles\": {\"develop\": {\"retry\": "
	    "{\"backoff_coefficient\": 0.5}}}}",
	    "roles.develop.retry.backoff_coefficient", "retry: coefficient < 1");
	expect_error("{\"roles\": {\"develop\": {\"retry\": "
	    "{\"tries\": 2}}}}", "roles.develop.retry.tries",
	    "retry: unknown key");
	expect_error("{\"roles\": {\"develop\": {\"retry\": 3}}}",
	    "roles.develop.retry", "retry: not an object");
	f = put("{\"roles\": {\"debug\": {\"retry\": {\"non_retryable\": "
	    "[\"model\", \"network\"]}}}, \"tools\": {\"claude\": "
	    "{\"max_workers\": 2}}}", 0644, "%s/nr.json", tmp);
	if (load(f, &cfg, &err) == 0) {
		tap_ok(cfg.roles[1].retry.non_retryable == CONFIG_EK(OUTCOME_AUTH) &&
		    cfg.roles[2].retry.non_retryable == (CONFIG_EK(OUTCOME_MODEL) |
		    CONFIG_EK(OUTCOME_NETWORK)), "retry: non_retryable default auth, "
		    "a file's list replaces it");
		tap_ok(config_tool(&cfg, "claude")->max_workers == 2 &&
		    config_tool(&cfg, "codex")->max_workers == 0,
		    "tools.claude.max_workers 2, the others no cap");
		config_free(&cfg);
	} else
		tap_ok(0, "retry: non_retryable loads: %s", err);
	free(err);
	free(f);
	expect_error("{\"roles\": {\"develop\": {\"retry\": "
	    "{\"non_retryable\": [\"rate_limited\"]}}}}",
	    "rate_limited cannot be non-retryable",
	    "retry: rate_limited is never non-retryable");
	expect_error("{\"roles\": {\"develop\": {\"retry\": "
	    "{\"non_retryable\": [\"oops\"]}}}}",
	    "roles.develop.retry.non_retryable[0]",
	    "retry: an unknown error kind");
	expect_error("{\"tools\": {\"claude\": {\"max_workers\": -1}}}",
	    "tools.claude.max_workers", "max_workers: negative");
}

/* CCW's enabled is "=== true"; the default tool follows CCW's rules. */
static void
test_ccw_default(void)
{
	struct config	 cfg;
	char		*err = NULL, *c, *st;

	c = put("{\"tools\": {\"codex\": {\"enabled\": false}, "
	    "\"gemini\": {\"enabled\": \"false\"}, \"claude\": "
	    "{\"enabled\": \"true\"}}}", 0644, "%s/.claude/cli-tools.json",
	    home);
	tap_is_int(load(NULL, &cfg, &err), 0, "ccw default: load");
	tap_ok(!config_tool(&cfg, "gemini")->enabled &&
	    !config_tool(&cfg, "claude")->enabled,
	    "enabled \"false\" and \"true\" (strings) both disable");
	tap_is_str(cfg.default_tool, "qwen",
	    "gemini (CCW's default) disabled: the first enabled tool");
	config_free(&cfg);
	free(put("{\"tools\": {\"codex\": {\"enabled\": false}}}", 0644,
	    "%s/.claude/cli-tools.json", home));
	tap_is_int(load(NULL, &cfg, &err), 0, "ccw default: codex disabled");
	tap_is_str(cfg.default_tool, "gemini", "codex disabled, no "
	    "cli-settings.json: gemini, CCW's default");
	config_free(&cfg);
	st = put("{\"defaultTool\": \"claude\"}", 0644,
	    "%s/.claude/cli-settings.json", home);
	tap_is_int(load(NULL, &cfg, &err), 0, "ccw default: settings");
	tap_is_str(cfg.default_tool, "claude", "cli-settings.json defaultTool");
	tap_ok(strstr(cfg.default_reason, "cli-settings.json") != NULL,
	    "and the reason names the file");
	config_free(&cfg);
	unlink(st);
	unlink(c);
	free(st);
	free(c);
	tap_is_int(load(NULL, &cfg, &err), 0, "no CCW file: load");
	tap_is_str(cfg.default_tool, "codex", "no CCW file: codex");
	config_free(&cfg);
}

/*
 * A file CCW wrote itself (version 3.3 or later): an agent it leaves
 * out, or lists without enabled, is disabled; bash stays; our explicit
 * enabled still wins.  An older file (or one with "models") CCW
 * migrates, adding its defaults enabled (claude-cli-tools.ts).
 */
static void
test_ccw_listed(void)
{
	struct config	 cfg;
	char		*err = NULL, *c, *r;

	c = put("{\"version\": \"3.4.0\", \"tools\": {\"gemini\": "
	    "{\"enabled\": true}, \"codex\": {\"primaryModel\": \"o3\"}, "
	    "\"qwen\": {\"enabled\": null}}}", 0644,
	    "%s/.claude/cli-tools.json", home);
	tap_is_int(load(NULL, &cfg, &err), 0, "ccw listed: load");
	tap_ok(config_tool(&cfg, "gemini")->enabled &&
	    !config_tool(&cfg, "claude")->enabled &&
	    !config_tool(&cfg, "opencode")->enabled,
	    "version 3.4.0: a tool absent from cli-tools.json is disabled");
	tap_ok(!config_tool(&cfg, "codex")->enabled &&
	    !config_tool(&cfg, "qwen")->enabled,
	    "version 3.4.0: listed without enabled (or null): disabled");
	tap_ok(config_tool(&cfg, "bash")->enabled, "bash stays enabled");
	tap_is_str(cfg.default_tool, "gemini", "the default: CCW's gemini");
	config_free(&cfg);
	r = put("{\"tools\": {\"claude\": {\"enabled\": true}}}", 0644,
	    "%s/.loop/config.json", root);
	tap_ok(load(NULL, &cfg, &err) == 0 &&
	    config_tool(&cfg, "claude")->enabled &&
	    !config_tool(&cfg, "opencode")->enabled,
	    "our explicit enabled wins over CCW's absence");
	config_free(&cfg);
	unlink(r);
	free(r);
	free(put("{\"version\": 3.3, \"tools\": 7}", 0644,
	    "%s/.claude/cli-tools.json", home));
	tap_ok(load(NULL, &cfg, &err) == 0 && cfg.nwarnings == 1 &&
	    !config_tool(&cfg, "gemini")->enabled &&
	    !config_tool(&cfg, "codex")->enabled,
	    "version 3.3, tools not an object: a warning, no agent enabled");
	config_free(&cfg);
	free(put("{\"version\": \"3.2.0\", \"tools\": {\"gemini\": "
	    "{\"enabled\": false}, \"codex\": {}}}", 0644,
	    "%s/.claude/cli-tools.json", home));
	tap_ok(load(NULL, &cfg, &err) == 0 &&
	    !config_tool(&cfg, "gemini")->enabled &&
	    config_tool(&cfg, "codex")->enabled &&
	    config_tool(&cfg, "claude")->enabled,
	    "version 3.2.0 (migrated): absent and enabled-less tools enabled");
	config_free(&cfg);
	free(put("{\"version\": \"3.4.0\", \"models\": {}, \"tools\": "
	    "{}}", 0644, "%s/.claude/cli-tools.json", home));
	tap_ok(load(NULL, &cfg, &err) == 0 &&
	    config_tool(&cfg, "claude")->enabled,
	    "a \"models\" member: migrated, absent tools enabled");
	config_free(&cfg);
	unlink(c);
	free(c);
}

/* envFile, settingsFile and effort reach the tool's options; DATA_DIR. */
static void
test_ccw_options(void)
{
	struct config	 cfg;
	char		*err = NULL, *c, *e, *d, *want;
	json_t		*env;

	e = put("# keys\nexport A=1\nB = \"two words\" \nC='x # y'\n"
	    "D=bare # comment\n\nE=\"q\\\"n\\n\"\n", 0600,
	    "%s/.gemini/.env", home);
	c = put("{\"tools\": {\"gemini\": {\"enabled\": true, "
	    "\"envFile\": \"~/.gemini/.env\"}, \"claude\": {\"enabled\": "
	    "true, \"settingsFile\": \"~/s.json\", \"effort\": \"high\"}}}",
	    0644, "%s/.claude/cli-tools.json", home);
	tap_is_int(load(NULL, &cfg, &err), 0, "ccw options: load");
	env = json_object_get(config_tool(&cfg, "gemini")->options, "env");
	tap_is_str(json_string_value(json_object_get(env, "A")), "1",
	    "envFile: export KEY=VALUE");
	tap_is_str(json_string_value(json_object_get(env, "B")), "two words",
	    "envFile: double quotes (spaces around = tolerated)");
	tap_is_str(json_string_value(json_object_get(env, "C")), "x # y",
	    "envFile: single quotes keep #");
	tap_is_str(json_string_value(json_object_get(env, "D")), "bare",
	    "envFile: a comment after a bare value");
	tap_is_str(json_string_value(json_object_get(env, "E")), "q\"n\n",
	    "envFile: escapes inside double quotes");
	xasprintf(&want, "%s/s.json", home);
	tap_is_str(json_string_value(json_object_get(config_tool(&cfg,
	    "claude")->options, "settings_file")), want,
	    "settingsFile: ~ expanded into options.settings_file");
	tap_is_str(json_string_value(json_object_get(config_tool(&cfg,
	    "claude")->options, "effort")), "high", "effort: options.effort");
	config_free(&cfg);
	free(want);
	free(put("A=1\nnot a line\n", 0600, "%s/.gemini/.env", home));
	tap_ok(load(NULL, &cfg, &err) == 0 && cfg.nwarnings == 1 &&
	    strstr(cfg.warnings[0], "line 2") != NULL,
	    "envFile: a bad line is a warning naming it");
	config_free(&cfg);
	/* $CCW_DATA_DIR/.claude/cli-tools.json comes before ~/.claude */
	xasprintf(&d, "%s/data", tmp);
	free(put("{\"tools\": {\"opencode\": {\"enabled\": false}}}",
	    0644, "%s/.claude/cli-tools.json", d));
	setenv("CCW_DATA_DIR", d, 1);
	tap_ok(load(NULL, &cfg, &err) == 0 &&
	    !config_tool(&cfg, "opencode")->enabled &&
	    config_tool(&cfg, "claude")->options == NULL,
	    "$CCW_DATA_DIR/.claude/cli-tools.json is read first");
	config_free(&cfg);
	unsetenv("CCW_DATA_DIR");
	unlink(c);
	unlink(e);
	free(c);
	free(e);
	free(d);
}

/* Each group is independent; the plan is printed last. */
int
main(void)
{
	if (mkdtemp(tmp) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	xasprintf(&home, "%s/home", tmp);
	xasprintf(&root, "%s/root", tmp);
	mkdir(home, 0755);
	mkdir(root, 0755);
	test_defaults();
	test_search();
	test_errors();
	test_cli_tools();
	test_ccw_default();
	test_ccw_listed();
	test_ccw_options();
	test_role_options();
	test_resolve();
	test_retry();
	nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	tap_ok(access(tmp, F_OK) == -1, "temp dir removed");
	free(home);
	free(root);
	return tap_done();
}
