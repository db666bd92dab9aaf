/*
 * test-plan.c: plan_spawn, spawn planning as a pure function: a role's
 * configuration, the default tool, overrides above both, the errors
 * (unknown role or tool, disabled tool, bash without a command), and
 * neither the configuration nor the overrides changed by a plan.
 */
#include <config.h>

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ccw-loop.h"
#include "plan.h"
#include "tap.h"
#include "xmalloc.h"

static char	tmp[] = "/tmp/ccw-test-plan-XXXXXX";

/* The configuration of these tests, loaded from a file in tmp. */
static void
load(struct config *cfg)
{
	static const char text[] =
	    "{\"default_tool\": \"claude\","
	    " \"tools\": {\"codex\": {\"path\": \"/opt/codex\", \"model\":"
	    "   \"gpt-x\", \"options\": {\"sandbox\": \"on\"}},"
	    "   \"gemini\": {\"enabled\": false}},"
	    " \"roles\": {"
	    "   \"develop\": {\"tool\": \"codex\", \"model\": \"dev-model\","
	    "     \"permission\": \"full\", \"timeout_ms\": 1234,"
	    "     \"nudge_ms\": 55, \"grace_ms\": 66, \"idle_ms\": 77},"
	    "   \"debug\": {\"tool\": \"codex\"},"
	    "   \"validate\": {\"tool\": \"bash\"},"
	    "   \"complete\": {\"tool\": \"gemini\"}}}";
	char	*path, *err = NULL;
	FILE	*fp;

	xasprintf(&path, "%s/config.json", tmp);
	if ((fp = fopen(path, "w")) == NULL)
		exit(99);
	fputs(text, fp);
	fclose(fp);
	if (config_load(&ccw_loop_workflow, path, tmp, tmp, cfg, &err) != 0) {
		printf("Bail out! config: %s\n", err);
		exit(99);
	}
	unlink(path);
	free(path);
}

/*
 * CCW's files only: codex disabled, so the default is CCW's (gemini);
 * envFile, settingsFile and effort reach the spawn request's options.
 */
static void
test_ccw(void)
{
	struct plan_overrides	 over;
	struct agent_req	 req;
	struct plan_deadlines	 dl;
	struct config		 cfg;
	char			*d, *f, *e, *err = NULL;
	FILE			*fp;

	xasprintf(&d, "%s/.claude", tmp);
	xasprintf(&f, "%s/cli-tools.json", d);
	xasprintf(&e, "%s/g.env", d);
	mkdir(d, 0755);
	if ((fp = fopen(e, "w")) == NULL)
		exit(99);
	fputs("KEY=v1\n", fp);
	fclose(fp);
	if ((fp = fopen(f, "w")) == NULL)
		exit(99);
	fputs("{\"tools\": {\"codex\": {\"enabled\": false}, \"gemini\": "
	    "{\"enabled\": true, \"envFile\": \"g.env\"}, \"claude\": "
	    "{\"enabled\": true, \"settingsFile\": \"/s.json\", "
	    "\"effort\": \"low\"}}}", fp);
	fclose(fp);
	tap_ok(config_load(&ccw_loop_workflow, NULL, tmp, tmp, &cfg, &err) ==
	    0, "ccw: loaded (%s)", err != NULL ? err : "ok");
	tap_ok(plan_spawn(&cfg, "/root", "develop", NULL, "x", &req, &dl,
	    &err) == 0 && strcmp(req.tool, "gemini") == 0,
	    "ccw: codex disabled: the default is gemini");
	tap_is_str(json_string_value(json_object_get(json_object_get(
	    req.options, "env"), "KEY")), "v1", "ccw: envFile in options.env");
	json_decref(req.options);
	memset(&over, 0, sizeof over);
	over.tool = "claude";
	tap_ok(plan_spawn(&cfg, "/root", "develop", &over, "x", &req, &dl,
	    &err) == 0 && strcmp(json_string_value(json_object_get(
	    req.options, "settings_file")), "/s.json") == 0 &&
	    strcmp(json_string_value(json_object_get(req.options, "effort")),
	    "low") == 0, "ccw: claude's settingsFile and effort in its options");
	json_decref(req.options);
	config_free(&cfg);
	unlink(e);
	unlink(f);
	rmdir(d);
	free(e);
	free(f);
	free(d);
}

/* Everything a configuration holds, as text, to see that none changed. */
static char *
dump(const struct config *c)
{
	json_t		*o = json_object(), *ts = json_array(), *rs = json_array();
	const struct role_cfg *r;
	char		*s;
	size_t		 i;

	for (i = 0; i < c->ntools; i++)
		json_array_append_new(ts, json_pack("{s:s?, s:s?, s:b, s:s?,"
		    " s:O?, s:I}", "name", c->tools[i].name, "path",
		    c->tools[i].path, "enabled", c->tools[i].enabled, "model",
		    c->tools[i].model, "options", c->tools[i].options, "refs",
		    (json_int_t)(c->tools[i].options != NULL ?
		    c->tools[i].options->refcount : 0)));
	for (i = 0; i < c->nroles; i++) {
		r = &c->roles[i];
		json_array_append_new(rs, json_pack("{s:s?, s:s?, s:s?, s:s?,"
		    " s:s?, s:I, s:I, s:I, s:I}", "tool", r->tool, "model",
		    r->model, "command", r->command, "prompt", r->prompt_file,
		    "permission", r->permission, "t", (json_int_t)r->timeout_ms,
		    "n", (json_int_t)r->nudge_ms, "g", (json_int_t)r->grace_ms,
		    "i", (json_int_t)r->idle_ms));
	}
	json_object_set_new(o, "tools", ts);
	json_object_set_new(o, "roles", rs);
	json_object_set_new(o, "default", json_string(c->default_tool));
	s = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(o);
	return s;
}

/* A failing plan: its message, and *req and *dl left as they were. */
static void
refused(const struct config *cfg, const char *role,
    const struct plan_overrides *over, const char *want, const char *what)
{
	struct agent_req	req, req0;
	struct plan_deadlines	dl, dl0;
	char			*err = NULL;
	int			 rc;

	memset(&req, 0xa5, sizeof req);
	memset(&dl, 0x5a, sizeof dl);
	req0 = req;
	dl0 = dl;
	rc = plan_spawn(cfg, "/r", role, over, "p", &req, &dl, &err);
	tap_ok(rc == -1 && err != NULL && strstr(err, want) != NULL,
	    "%s: refused (%s)", what, err != NULL ? err : "no message");
	tap_ok(memcmp(&req, &req0, sizeof req) == 0 &&
	    memcmp(&dl, &dl0, sizeof dl) == 0, "%s: outputs untouched", what);
	free(err);
}

int
main(void)
{
	struct config		 cfg, shallow;
	struct plan_overrides	 over, over0;
	struct agent_req	 req;
	struct plan_deadlines	 dl;
	char			*before, *after, *err = NULL;
	int			 rc;

	if (mkdtemp(tmp) == NULL)
		return 99;
	setenv("PATH", "/nonexistent", 1);
	load(&cfg);
	shallow = cfg;
	before = dump(&cfg);

	/* the role's configuration */
	rc = plan_spawn(&cfg, "/root", "develop", NULL, "hello", &req, &dl,
	    &err);
	tap_ok(rc == 0, "develop planned (%s)", err != NULL ? err : "ok");
	tap_is_str(req.role, "develop", "role");
	tap_is_str(req.tool, "codex", "the role's tool");
	tap_is_str(req.model, "dev-model", "the role's model");
	tap_is_str(req.prompt, "hello", "the prompt");
	tap_is_str(req.cwd, "/root", "the root is the cwd");
	tap_ok(req.command == NULL, "no command");
	tap_is_str(json_string_value(json_object_get(req.options, "path")),
	    "/opt/codex", "options.path: the tool's path");
	tap_is_str(json_string_value(json_object_get(req.options,
	    "permission")), "full", "options.permission: the role's");
	tap_is_str(json_string_value(json_object_get(req.options, "sandbox")),
	    "on", "the tool's options");
	tap_ok(dl.timeout_ms == 1234 && dl.nudge_ms == 55 &&
	    dl.grace_ms == 66 && dl.idle_ms == 77 && req.timeout_ms == 1234 &&
	    req.idle_ms == 77, "the role's deadlines");
	/* the options are the caller's copy */
	json_object_set_new(req.options, "sandbox", json_string("changed"));
	json_decref(req.options);

	/* a role without a model: the tool's; without a tool: the default */
	rc = plan_spawn(&cfg, "/root", "debug", NULL, "x", &req, &dl, &err);
	tap_ok(rc == 0 && strcmp(req.model, "gpt-x") == 0,
	    "debug: the tool's model");
	json_decref(req.options);
	rc = plan_spawn(&cfg, "/root", "init", NULL, "x", &req, &dl, &err);
	tap_ok(rc == 0 && strcmp(req.tool, "claude") == 0,
	    "init: the default tool");
	tap_ok(rc == 0 && dl.timeout_ms == cfg.roles[0].timeout_ms &&
	    dl.nudge_ms == cfg.roles[0].nudge_ms &&
	    dl.grace_ms == cfg.roles[0].grace_ms, "init: built-in deadlines");
	json_decref(req.options);

	/* overrides win; an unset have-flag leaves the role's deadline */
	memset(&over, 0, sizeof over);
	over.tool = "bash";
	over.command = "echo hi";
	over.model = "m-over";
	over.timeout_ms = 10;
	over.have_timeout = 1;
	over.grace_ms = 0;
	over.have_grace = 1;
	over.idle_ms = 999;		/* have_idle unset: ignored */
	over0 = over;
	rc = plan_spawn(&cfg, "/root", "develop", &over, "x", &req, &dl, &err);
	tap_ok(rc == 0, "develop with overrides (%s)", err != NULL ? err :
	    "ok");
	tap_is_str(req.tool, "bash", "tool: the override");
	tap_is_str(req.command, "echo hi", "command: the override");
	tap_is_str(req.model, "m-over", "model: the override");
	tap_ok(dl.timeout_ms == 10 && dl.grace_ms == 0 && dl.nudge_ms == 55 &&
	    dl.idle_ms == 77, "deadlines: the given overrides, else the role's");
	json_decref(req.options);
	tap_ok(memcmp(&over, &over0, sizeof over) == 0,
	    "the overrides are untouched");

	/* errors */
	refused(&cfg, "nope", NULL, "unknown role 'nope' (init, develop, "
	    "debug, validate, complete)", "unknown role");
	refused(&cfg, NULL, NULL, "unknown role", "no role");
	memset(&over, 0, sizeof over);
	over.tool = "cursor";
	refused(&cfg, "develop", &over, "unknown tool 'cursor'",
	    "unknown tool");
	refused(&cfg, "complete", NULL, "tool 'gemini' is disabled",
	    "disabled tool");
	refused(&cfg, "validate", NULL, "the bash tool needs --command (or "
	    "roles.validate.command", "bash without a command");
	over.tool = NULL;
	over.command = "true";
	rc = plan_spawn(&cfg, "/root", "validate", &over, "x", &req, &dl,
	    &err);
	tap_ok(rc == 0 && strcmp(req.command, "true") == 0,
	    "bash with the command overridden");
	json_decref(req.options);

	/* nothing of the configuration changed, deep or shallow */
	after = dump(&cfg);
	tap_is_str(after, before, "the configuration is untouched");
	tap_ok(memcmp(&shallow, &cfg, sizeof cfg) == 0,
	    "the configuration's pointers are untouched");
	free(before);
	free(after);
	config_free(&cfg);
	test_ccw();
	rmdir(tmp);
	return tap_done();
}
