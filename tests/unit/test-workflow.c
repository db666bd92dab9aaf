/*
 * test-workflow.c: the workflow table (flowdef.h): ccw-loop's roles,
 * order, parallel group, menu words and rules; and a second, two-role
 * workflow driving config loading, role look-up, its state file and its
 * side log through the same engine code, which must assume no role or
 * side file of its own.
 */
#include <config.h>

#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "ccw-loop.h"
#include "loop.h"
#include "progress.h"
#include "state.h"
#include "tap.h"
#include "toolconfig.h"
#include "workflows.h"
#include "flowdef.h"
#include "xmalloc.h"

/* --- a second workflow: plan, then do; no parallel step */

static const char *const tiny_do_words[] = { "x", NULL };
static const struct workflow_role tiny_roles[] = {
	{ "plan", NULL, 1234, "read-only", "plan", 0 },
	{ "do", tiny_do_words, 4321, "full", "do",
	  WORKFLOW_MENU | WORKFLOW_ITER },
};

/* plan, do, done. */
static int
tiny_next(int role, const json_t *res, const json_t *ss)
{
	(void)res;
	(void)ss;
	return role + 1;
}

/* Its state: one section, plan, with the steps; no Markdown files. */
static const char *const tiny_role_names[] = { "plan", "do", NULL };
static const struct state_vrule tiny_r_plan[] = {
	STATE_R("steps", V_STRS, V_REQ), STATE_R_END
};
static const struct state_vrule tiny_r_skill[] = {
	STATE_R_SUB("plan", V_OBJ, V_REQ, tiny_r_plan), STATE_R_END
};

/* plan: no steps yet. */
static json_t *
tiny_sections(void)
{
	return json_pack("{s:{s:[]}}", "plan", "steps");
}

/* A completed loop of tiny has a plan. */
static void
tiny_check(const json_t *st, struct state_vctx *v)
{
	const json_t	*steps = json_object_get(json_object_get(
			    json_object_get(st, "skill_state"), "plan"), "steps");

	if (strcmp(json_string_value(json_object_get(st, "status")),
	    "completed") == 0 && json_array_size(steps) == 0)
		state_verr(v, "skill_state.plan.steps", "empty although "
		    "status is completed");
}

/* The tasks file's titles are the plan's steps. */
static void
tiny_rebuilt(json_t *ss, const json_t *tasks, struct strv *unrec)
{
	json_t	*steps = json_object_get(json_object_get(ss, "plan"), "steps");
	size_t	 i;

	for (i = 0; i < json_array_size(tasks); i++)
		json_array_append(steps, json_object_get(json_array_get(tasks,
		    i), "title"));
	if (json_array_size(steps) == 0)
		progress_unrec(unrec, "skill_state.plan", "steps",
		    PROGRESS_UN_ADD);
}

/* Its one log: a line per step done. */
static const char *const tiny_logs[] = { "steps.log", NULL };

static const struct workflow_state tiny_state = {
	.roles = tiny_role_names,
	.logs = tiny_logs,
	.sections = tiny_sections,
	.rules = tiny_r_skill,
	.check_status = tiny_check,
	.rebuilt = tiny_rebuilt,
};

static const struct workflow tiny = {
	.name = "tiny",
	.roles = tiny_roles,
	.nroles = 2,
	.next = tiny_next,
	.state = &tiny_state,
};

/* A config file with this text; the caller unlinks and frees the path. */
static char *
put_config(const char *text)
{
	char	*path = xstrdup("/tmp/test-workflow-XXXXXX");
	int	 fd = mkstemp(path);
	FILE	*fp;

	if (fd == -1 || (fp = fdopen(fd, "w")) == NULL) {
		perror("mkstemp");
		exit(1);
	}
	fputs(text, fp);
	fclose(fp);
	return path;
}

/* Load a file (no HOME, no ROOT) for a workflow; the error, if any. */
static int
load(const struct workflow *wf, const char *text, struct config *cfg,
    char **err)
{
	char	*path = put_config(text);
	int	 rc;

	*err = NULL;
	rc = config_load(wf, path, NULL, "", cfg, err);
	unlink(path);
	free(path);
	return rc;
}

/* ccw-loop's table: the five roles in auto order and the parallel group. */
static void
test_ccw_table(void)
{
	const struct workflow	*wf = &ccw_loop_workflow;
	static const char *const names[] = { "init", "develop", "debug",
	    "validate", "complete" };
	size_t			 i;
	char			*s;

	tap_is_str(wf->name, "ccw-loop", "ccw-loop: name");
	tap_is_int((long long)wf->nroles, 5, "ccw-loop: five roles");
	for (i = 0; i < 5; i++) {
		tap_is_str(wf->roles[i].name, names[i], "role %zu is %s", i,
		    names[i]);
		tap_is_int(workflow_role_index(wf, names[i]), (long long)i,
		    "%s resolves to its place", names[i]);
		tap_is_int(loop_role_index(names[i]), (long long)i,
		    "%s: loop_role_index agrees", names[i]);
	}
	tap_is_int(LOOP_INIT, 0, "LOOP_INIT is init's place");
	tap_is_int(LOOP_COMPLETE, 4, "LOOP_COMPLETE is complete's place");
	tap_ok(wf->parallel != NULL && wf->parallel->nroles == 3 &&
	    wf->parallel->roles[0] == LOOP_DEVELOP &&
	    wf->parallel->roles[1] == LOOP_DEBUG &&
	    wf->parallel->roles[2] == LOOP_VALIDATE,
	    "parallel group: develop, debug, validate in that order");
	tap_is_str(wf->parallel->name, "parallel", "parallel group: name");
	tap_ok(!workflow_in_group(wf->parallel, LOOP_INIT) &&
	    !workflow_in_group(wf->parallel, LOOP_COMPLETE) &&
	    workflow_in_group(wf->parallel, LOOP_DEBUG),
	    "init and complete are outside the group");
	tap_ok(wf->roles[LOOP_INIT].timeout_ms == 300000 &&
	    wf->roles[LOOP_DEVELOP].timeout_ms == 600000 &&
	    strcmp(wf->roles[LOOP_COMPLETE].permission, "read-only") == 0 &&
	    strcmp(wf->roles[LOOP_VALIDATE].permission,
	    "workspace-write") == 0, "role defaults: deadlines, permission");
	tap_ok((wf->roles[LOOP_INIT].flags & WORKFLOW_MENU) == 0 &&
	    (wf->roles[LOOP_COMPLETE].flags & WORKFLOW_ITER) == 0 &&
	    (wf->roles[LOOP_DEBUG].flags & WORKFLOW_ITER) != 0,
	    "init is not on the menu; complete is not an iteration");
	tap_is_int(workflow_role_index(wf, "deploy"), -1, "unknown: -1");
	tap_is_int(workflow_role_index(wf, NULL), -1, "NULL: -1");
	tap_ok(workflow_role_name(wf, 5) == NULL &&
	    workflow_role_name(wf, -1) == NULL, "no name past the table");
	s = workflow_role_unknown(wf, "deploy");
	tap_is_str(s, "unknown role 'deploy' (init, develop, debug, "
	    "validate, complete)", "unknown role: text built from the table");
	free(s);
	s = workflow_role_list(wf, " or ");
	tap_is_str(s, "init, develop, debug, validate or complete",
	    "role list with 'or'");
	free(s);
}

/* The menu's words: names, letters, numbers, any case; init is not one. */
static void
test_ccw_menu(void)
{
	const struct workflow	*wf = &ccw_loop_workflow;
	static const struct {
		const char	*word;
		int		 role;
	} cases[] = {
		{ "develop", LOOP_DEVELOP }, { "d", LOOP_DEVELOP },
		{ "1", LOOP_DEVELOP }, { "DEV", LOOP_DEVELOP },
		{ "debug", LOOP_DEBUG }, { "b", LOOP_DEBUG },
		{ "2", LOOP_DEBUG }, { "deb", LOOP_DEBUG }, { "db", LOOP_DEBUG },
		{ "validate", LOOP_VALIDATE }, { "v", LOOP_VALIDATE },
		{ "3", LOOP_VALIDATE }, { "val", LOOP_VALIDATE },
		{ "complete", LOOP_COMPLETE }, { "c", LOOP_COMPLETE },
		{ "4", LOOP_COMPLETE }, { "comp", LOOP_COMPLETE },
		{ "init", -1 }, { "0", -1 }, { "5", -1 }, { "exit", -1 },
		{ "", -1 },
	};
	size_t	i;

	tap_is_int((long long)workflow_menu_size(wf), 4,
	    "the menu offers four roles (exit is 5)");
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		tap_is_int(workflow_menu_role(wf, cases[i].word), cases[i].role,
		    "menu word '%s'", cases[i].word);
}

/* The rules the table points at: next action, the gate, the group. */
static void
test_ccw_rules(void)
{
	const struct workflow	*wf = &ccw_loop_workflow;
	json_t			*ss = wf->skeleton();
	json_t			*ok = json_pack("{s:s, s:s}", "status",
				    "success", "agent_status", "completed");
	const char		*why = NULL;

	tap_is_int(wf->next(LOOP_INIT, ok, ss), LOOP_DEVELOP,
	    "next: init, then develop");
	tap_is_int(wf->next(LOOP_COMPLETE, ok, ss), (long long)wf->nroles,
	    "next: complete is the end (nroles)");
	tap_is_int(wf->group_next(ss), LOOP_DEVELOP,
	    "group: not passed, again");
	tap_is_int(wf->admit(LOOP_COMPLETE, ss, &why), LOOP_DEVELOP,
	    "admit: complete without a pass is develop");
	tap_is_str(why, "validation has not passed yet: run validate first",
	    "admit: says why");
	tap_is_int(wf->admit(LOOP_DEBUG, ss, NULL), LOOP_DEBUG,
	    "admit: debug goes");
	json_object_set_new(json_object_get(ss, "validate"), "passed",
	    json_true());
	tap_is_int(wf->group_next(ss), LOOP_COMPLETE, "group: passed, complete");
	tap_is_int(wf->admit(LOOP_COMPLETE, ss, NULL), LOOP_COMPLETE,
	    "admit: complete after a pass");
	tap_ok(wf->passed(ss), "passed");
	json_decref(ok);
	json_decref(ss);
}

/* The engine's config loading with ccw-loop: defaults from the table. */
static void
test_ccw_config(void)
{
	struct config	 cfg;
	char		*err = NULL;
	size_t		 i;

	tap_is_int(load(&ccw_loop_workflow, "{}", &cfg, &err), 0,
	    "ccw-loop: load");
	tap_ok(cfg.wf == &ccw_loop_workflow && cfg.nroles == 5,
	    "ccw-loop: a role entry per role");
	for (i = 0; i < cfg.nroles; i++)
		tap_ok(cfg.roles[i].timeout_ms ==
		    ccw_loop_workflow.roles[i].timeout_ms &&
		    strcmp(cfg.roles[i].permission,
		    ccw_loop_workflow.roles[i].permission) == 0,
		    "%s: defaults from the table", cfg.wf->roles[i].name);
	config_free(&cfg);
}

/* Two roles through the same engine code: no five assumed anywhere. */
static void
test_tiny(void)
{
	struct config	 cfg;
	char		*err = NULL, *s;

	tap_is_int(load(&tiny, "{\"roles\": {\"plan\": {\"tool\": \"bash\","
	    " \"command\": \"true\"}, \"do\": {\"timeout_ms\": 7}}}", &cfg,
	    &err), 0, "tiny: a config naming plan and do loads");
	tap_ok(err == NULL, "tiny: no error");
	tap_is_int((long long)cfg.nroles, 2, "tiny: two role entries");
	tap_is_int(config_role_index(&cfg, "plan"), 0, "tiny: plan is 0");
	tap_is_int(config_role_index(&cfg, "do"), 1, "tiny: do is 1");
	tap_is_int(config_role_index(&cfg, "develop"), -1,
	    "tiny: develop is no role of it");
	tap_is_str(cfg.roles[0].command, "true", "tiny: plan's command");
	tap_ok(cfg.roles[0].timeout_ms == 1234 &&
	    strcmp(cfg.roles[0].permission, "read-only") == 0,
	    "tiny: plan's defaults from its table");
	tap_ok(cfg.roles[1].timeout_ms == 7 &&
	    strcmp(cfg.roles[1].permission, "full") == 0,
	    "tiny: do's deadline from the file, permission from the table");
	config_free(&cfg);

	tap_is_int(load(&tiny, "{\"roles\": {\"develop\": {}}}", &cfg, &err),
	    -1, "tiny: a ccw-loop role is refused");
	tap_ok(err != NULL && strstr(err, "roles.develop: unknown role "
	    "(expected plan or do)") != NULL, "tiny: the error lists its roles");
	if (err != NULL)
		tap_diag("%s", err);
	free(err);
	s = workflow_role_unknown(&tiny, "init");
	tap_is_str(s, "unknown role 'init' (plan, do)",
	    "tiny: unknown role text");
	free(s);
	tap_is_int((long long)workflow_menu_size(&tiny), 1, "tiny: menu of 1");
	tap_is_int(workflow_menu_role(&tiny, "1"), 1, "tiny: 1 is do");
	tap_is_int(workflow_menu_role(&tiny, "X"), 1, "tiny: x is do");
	tap_is_int(workflow_menu_role(&tiny, "plan"), -1,
	    "tiny: plan is not on the menu");
	tap_ok(!workflow_in_group(tiny.parallel, 0), "tiny: no group");
}

/* Whether errs has a line starting with the text. */
static int
has_err(const struct strv *errs, const char *start)
{
	size_t	i;

	for (i = 0; i < errs->n; i++)
		if (strncmp(errs->v[i], start, strlen(start)) == 0)
			return 1;
	return 0;
}

/* tiny's state file: its skeleton and rules, none of ccw-loop's. */
static void
test_tiny_state(void)
{
	struct strv	 errs = { NULL, 0 };
	json_t		*st, *ss;
	char		*s;

	st = state_new(tiny.state, "T1", "t", "d", 3);
	ss = json_object_get(st, "skill_state");
	s = json_dumps(ss, JSON_COMPACT);
	tap_is_str(s, "{\"current_action\":null,\"last_action\":null,"
	    "\"completed_actions\":[],\"mode\":\"auto\",\"plan\":"
	    "{\"steps\":[]},\"errors\":[]}",
	    "tiny: skeleton is the engine's members around its section");
	free(s);
	tap_is_int(state_validate(tiny.state, st, &errs), 0,
	    "tiny: its new state is valid without a ccw-loop section");
	strv_clear(&errs);
	tap_ok(state_validate(&ccw_loop_state, st, &errs) > 0 &&
	    has_err(&errs, "skill_state.develop: missing"),
	    "tiny: ccw-loop's rules would want develop");
	strv_clear(&errs);
	json_object_set_new(ss, "current_action", json_string("develop"));
	json_object_set_new(json_object_get(ss, "plan"), "steps",
	    json_pack("[i]", 7));
	tap_is_int(state_validate(tiny.state, st, &errs), 2,
	    "tiny: develop is no action, a step must be a string");
	tap_ok(has_err(&errs, "skill_state.current_action: 'develop' is not "
	    "one of plan|do") && has_err(&errs, "skill_state.plan.steps[0]"),
	    "tiny: the errors name its roles and its section");
	strv_clear(&errs);
	json_object_set_new(ss, "current_action", json_string("do"));
	json_object_set_new(json_object_get(ss, "plan"), "steps", json_array());
	json_object_set_new(st, "status", json_string("completed"));
	json_object_set_new(st, "completed_at",
	    json_string("2026-01-01T00:00:00.000Z"));
	tap_is_int(state_validate(tiny.state, st, &errs), 1,
	    "tiny: its own check runs; no validation gate of ccw-loop");
	tap_ok(has_err(&errs, "skill_state.plan.steps: empty although "),
	    "tiny: the check's error");
	strv_clear(&errs);
	json_decref(st);
}

/* A file of text at dir/name; exits on failure. */
static void
put_file(int dfd, const char *name, const char *text)
{
	int	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd == -1 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror(name);
		exit(1);
	}
	close(fd);
}

/* tiny's rebuild: its outputs and its hook; a develop output ignored. */
static void
test_tiny_rebuild(void)
{
	struct strv	 unrec = { NULL, 0 }, errs = { NULL, 0 };
	char		 dir[] = "/tmp/test-workflow-rb-XXXXXX", *err = NULL;
	json_t		*ss = NULL, *st, *steps;
	int		 dfd, rc;
	size_t		 i;

	if (mkdtemp(dir) == NULL || (dfd = open(dir, O_DIRECTORY)) == -1 ||
	    mkdirat(dfd, "R.workers", 0755) == -1) {
		perror(dir);
		exit(1);
	}
	put_file(dfd, "R.workers/plan.output.json",
	    "{\"status\": \"success\", \"summary\": \"planned\"}");
	put_file(dfd, "R.workers/develop.output.json",
	    "{\"status\": \"failed\", \"summary\": \"not tiny's\"}");
	put_file(dfd, "R.tasks.jsonl", "{\"id\": \"1\", \"title\": "
	    "\"first\"}\n{\"id\": \"2\", \"title\": \"second\"}\n");
	rc = progress_rebuild(tiny.state, dfd, "R", &ss, &unrec, &err);
	tap_is_int(rc, 0, "tiny: rebuild (%s)", err != NULL ? err : "ok");
	tap_ok(json_object_get(ss, "develop") == NULL &&
	    json_object_get(ss, "debug") == NULL &&
	    json_object_get(ss, "validate") == NULL,
	    "tiny: the rebuilt skill_state has no ccw-loop section");
	steps = json_object_get(json_object_get(ss, "plan"), "steps");
	tap_ok(json_array_size(steps) == 2 && strcmp(json_string_value(
	    json_array_get(steps, 1)), "second") == 0,
	    "tiny: its hook made the steps from the tasks");
	tap_is_str(json_string_value(json_object_get(ss, "current_action")),
	    "plan", "tiny: the action from its output, develop's ignored");
	tap_ok(json_array_size(json_object_get(ss, "errors")) == 0,
	    "tiny: develop's failure is not read");
	for (i = 0; i < unrec.n; i++)
		tap_ok(strstr(unrec.v[i], "develop") == NULL &&
		    strstr(unrec.v[i], "plan.steps") == NULL,
		    "tiny: unrecovered %s is none of ccw-loop's", unrec.v[i]);
	st = state_new(tiny.state, "R", "t", "d", 3);
	json_object_set(st, "skill_state", ss);
	tap_is_int(state_validate(tiny.state, st, &errs), 0,
	    "tiny: the rebuilt state is valid by its rules");
	json_decref(st);
	json_decref(ss);
	strv_clear(&errs);
	strv_clear(&unrec);
	free(err);
	unlinkat(dfd, "R.workers/plan.output.json", 0);
	unlinkat(dfd, "R.workers/develop.output.json", 0);
	unlinkat(dfd, "R.workers", AT_REMOVEDIR);
	unlinkat(dfd, "R.tasks.jsonl", 0);
	close(dfd);
	rmdir(dir);
}

/* The lines of dir/name, or -1 if it cannot be read. */
static int
count_lines(int dfd, const char *name)
{
	char	 buf[4096];
	ssize_t	 n, i;
	int	 fd = openat(dfd, name, O_RDONLY), lines = 0;

	if (fd == -1)
		return -1;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		for (i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return lines;
}

/*
 * The NDJSON logs are the table's: tiny's steps.log goes through the
 * engine's progress_log; ccw-loop's names are not tiny's, nor tiny's
 * ccw-loop's, and a workflow without logs has none.
 */
static void
test_tiny_logs(void)
{
	static const struct workflow_state bare = { .roles = tiny_role_names };
	char	 dir[] = "/tmp/test-workflow-log-XXXXXX", *err = NULL;
	json_t	*o = json_pack("{s:s}", "step", "first");
	int	 dfd, rc;

	if (mkdtemp(dir) == NULL || (dfd = open(dir, O_DIRECTORY)) == -1) {
		perror(dir);
		exit(1);
	}
	rc = progress_log(tiny.state, dfd, "R", "steps.log", o, NULL, &err);
	tap_ok(rc == 0 && err == NULL, "tiny: steps.log appended (%s)",
	    err != NULL ? err : "ok");
	free(err);
	progress_log(tiny.state, dfd, "R", "steps.log", o, NULL, &err);
	free(err);
	tap_is_int(count_lines(dfd, "R.progress/steps.log"), 2,
	    "tiny: two records, two lines in R.progress/steps.log");
	rc = progress_log(tiny.state, dfd, "R", "changes.log", o, NULL, &err);
	tap_ok(rc == -1 && err != NULL && strstr(err, "the workflow keeps "
	    "steps.log") != NULL, "tiny: ccw-loop's changes.log is refused: %s",
	    err != NULL ? err : "");
	free(err);
	tap_is_int(count_lines(dfd, "R.progress/changes.log"), -1,
	    "tiny: no changes.log was made");
	rc = progress_log(&ccw_loop_state, dfd, "R", "steps.log", o, NULL,
	    &err);
	tap_ok(rc == -1 && err != NULL && strstr(err, "changes.log, "
	    "debug.log") != NULL, "ccw-loop: tiny's steps.log is refused: %s",
	    err != NULL ? err : "");
	free(err);
	rc = progress_log(&ccw_loop_state, dfd, "R", "debug.log", o, NULL,
	    &err);
	tap_ok(rc == 0 && count_lines(dfd, "R.progress/debug.log") == 1,
	    "ccw-loop: its debug.log through the same code");
	free(err);
	rc = progress_log(&bare, dfd, "R", "steps.log", o, NULL, &err);
	tap_ok(rc == -1 && err != NULL && strstr(err, "keeps none") != NULL,
	    "a workflow without logs keeps none: %s", err != NULL ? err : "");
	free(err);
	rc = progress_log(tiny.state, dfd, "R", "../steps.log", o, NULL, &err);
	tap_ok(rc == -1, "tiny: a path is no log name");
	free(err);
	json_decref(o);
	unlinkat(dfd, "R.progress/steps.log", 0);
	unlinkat(dfd, "R.progress/debug.log", 0);
	unlinkat(dfd, "R.progress", AT_REMOVEDIR);
	close(dfd);
	rmdir(dir);
}

/*
 * The same word meaning something else in one file: MCP's log levels
 * are RFC 5424's severities, whose lowest is "debug".
 */
static int
source_exempt(const char *rel, const char *word)
{
	return strcmp(rel, "supervisor/api/mcp.c") == 0 &&
	    strcmp(word, "\"debug\"") == 0;
}

/*
 * Does a source file, comments aside, hold one of the words as a string
 * literal ("develop") or as an identifier (LOOP_DEVELOP)?  The first hit,
 * or NULL.
 */
static char *
source_uses(const char *rel, const char *const *words)
{
	char		 path[4096], line[4096], *hit = NULL;
	const char	*p, *q;
	FILE		*fp;
	char		 e;
	size_t		 i;
	int		 n = 0;

	snprintf(path, sizeof path, "%s/%s", TOP_SRCDIR, rel);
	if ((fp = fopen(path, "r")) == NULL) {
		xasprintf(&hit, "%s: cannot open", rel);
		return hit;
	}
	while (hit == NULL && fgets(line, sizeof line, fp) != NULL) {
		n++;
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		if (p[0] == '*' || (p[0] == '/' && (p[1] == '*' ||
		    p[1] == '/')))
			continue;
		for (i = 0; hit == NULL && words[i] != NULL; i++)
			for (q = line; hit == NULL &&
			    (q = strstr(q, words[i])) != NULL; q++) {
				e = q[strlen(words[i])];
				/* a whole word: LOOP_COMPLETED is an event */
				if (!isalnum((unsigned char)e) && e != '_' &&
				    !source_exempt(rel, words[i]))
					xasprintf(&hit, "%s:%d: %s", rel, n,
					    words[i]);
			}
	}
	fclose(fp);
	return hit;
}

/* One file's check. */
static void
no_role_in(const char *rel, const char *const *literals)
{
	char	*hit = source_uses(rel, literals);

	tap_ok(hit == NULL, "%s names no role", rel);
	if (hit != NULL)
		tap_diag("%s", hit);
	free(hit);
}

/* Every C file of one directory of the tree; how many. */
static size_t
no_role_in_dir(const char *reldir, const char *const *literals)
{
	char		 path[4096], *rel;
	struct dirent	*de;
	DIR		*d;
	size_t		 len, n = 0;

	snprintf(path, sizeof path, "%s/%s", TOP_SRCDIR, reldir);
	if ((d = opendir(path)) == NULL) {
		tap_ok(0, "%s: cannot open", path);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 3 || de->d_name[len - 2] != '.' ||
		    (de->d_name[len - 1] != 'c' && de->d_name[len - 1] != 'h'))
			continue;
		xasprintf(&rel, "%s/%s", reldir, de->d_name);
		no_role_in(rel, literals);
		free(rel);
		n++;
	}
	closedir(d);
	return n;
}

/*
 * Every file of the engine, the verb table and the generic drivers names
 * no ccw-loop role, nor one of its skill_state sections or side logs.
 */
static void
test_no_role_names(void)
{
	static const char *const literals[] = { "\"init\"", "\"develop\"",
	    "\"debug\"", "\"validate\"", "\"complete\"", "LOOP_INIT",
	    "LOOP_DEVELOP", "LOOP_DEBUG", "LOOP_VALIDATE", "LOOP_COMPLETE",
	    "LOOP_NROLES", "loop_roles", "CONFIG_ROLES", "skill_state.develop",
	    "skill_state.debug", "skill_state.validate", "ccw_loop_",
	    "changes.log", "debug.log", NULL };
	static const char *const files[] = {
		"supervisor/workflows/ccw-loop/loop.c",
		"supervisor/workflows/ccw-loop/loopint.h",
		"supervisor/workflows/ccw-loop/loop.h",
		"supervisor/cmd/cmd-run.c", "supervisor/cmd/cmd-doctor.c",
		"supervisor/cmd/run-open.c", NULL };
	static const char *const cmd_literals[] = { "\"init\"",
	    "\"develop\"", "\"debug\"", "\"validate\"", "\"complete\"",
	    "LOOP_INIT", "LOOP_DEVELOP", "LOOP_DEBUG", "LOOP_VALIDATE",
	    "LOOP_COMPLETE", "LOOP_NROLES", "loop_roles", "CONFIG_ROLES",
	    NULL };
	size_t		 i, n;

	n = no_role_in_dir("supervisor/engine", literals);
	tap_ok(n >= 25, "every file of the engine was checked (%zu)", n);
	n = no_role_in_dir("supervisor/api", literals);
	tap_ok(n >= 4, "every file of the verb table was checked (%zu)", n);
	for (i = 0; files[i] != NULL; i++)
		no_role_in(files[i], cmd_literals);
}

/*
 * The one table of workflows: each row found by its name, the default
 * (first) row is ccw-loop, and a state file's "workflow" member picks
 * the table its sections are read with; absent (CCW's files) is the
 * default, an unknown name an error.
 */
static void
test_registry(void)
{
	json_t		*st;
	char		*err = NULL;
	size_t		 i, j, n;
	int		 uniq = 1, found = 1;

	for (n = 0; workflow_table[n] != NULL; n++)
		;
	tap_ok(n >= 2, "the table has every workflow (%zu)", n);
	for (i = 0; i < n; i++) {
		found &= workflow_find(workflow_table[i]->name) ==
		    workflow_table[i];
		for (j = i + 1; j < n; j++)
			uniq &= strcmp(workflow_table[i]->name,
			    workflow_table[j]->name) != 0;
	}
	tap_ok(found && uniq, "each row found by its own, unique, name");
	tap_ok(workflow_find("ccw-loop") == &ccw_loop_workflow &&
	    workflow_default() == &ccw_loop_workflow,
	    "ccw-loop is found and is the default");
	tap_ok(workflow_find("nope") == NULL && workflow_find(NULL) == NULL,
	    "an unknown name and NULL find nothing");
	tap_ok(workflow_state_of(NULL, &err) == &ccw_loop_state && err == NULL,
	    "no state file yet: the default's state table");
	st = state_new(&ccw_loop_state, "r-1", "t", "", 10);
	tap_ok(json_object_get(st, WORKFLOW_FIELD) == NULL,
	    "a new state file is CCW's: it names no workflow");
	tap_ok(workflow_of(st, &err) == &ccw_loop_workflow &&
	    workflow_state_of(st, &err) == &ccw_loop_state && err == NULL,
	    "a file naming none is ccw-loop's");
	json_object_set_new(st, WORKFLOW_FIELD, json_string(
	    workflow_table[n - 1]->name));
	tap_ok(workflow_of(st, &err) == workflow_table[n - 1] &&
	    workflow_state_of(st, &err) == workflow_table[n - 1]->state &&
	    err == NULL, "a file naming %s gets its table",
	    workflow_table[n - 1]->name);
	json_object_set_new(st, WORKFLOW_FIELD, json_string("no-such-flow"));
	tap_ok(workflow_state_of(st, &err) == NULL && err != NULL &&
	    strstr(err, "unknown workflow 'no-such-flow'") != NULL,
	    "an unknown one is an error (%s)", err != NULL ? err : "none");
	free(err);
	err = NULL;
	json_object_set_new(st, WORKFLOW_FIELD, json_integer(3));
	tap_ok(workflow_of(st, &err) == NULL && err != NULL,
	    "a name that is no string is an error");
	free(err);
	json_decref(st);
}

/*
 * HACKING.md's "Adding a role", followed for every role of ccw-loop: each
 * place the recipe names knows the role, so a row added to roles-ccw.c
 * alone (a step skipped) fails here.  roles-ccw.c's row and LOOP_* (the
 * look-ups agree), state-ccw.c's roles (current_action's values, in the
 * table's order), prompt.c's built-in template, merge.c's merge (a state
 * where every role has run is valid), the progress formats' roles.
 */
static void
test_role_recipe(void)
{
	const struct workflow		*wf = workflow_find("ccw-loop");
	const struct workflow_state	*ws = wf->state;
	const struct progress_format	*fm;
	struct strv			 errs = { NULL, 0 };
	json_t				*st, *ss, *res;
	char				*tmpl;
	size_t				 i, n;
	int				 ok;

	tap_ok(wf->nroles == LOOP_NROLES, "recipe 1-2: the rows are the "
	    "LOOP_* indices (%zu)", wf->nroles);
	for (i = 0, ok = 1; i < wf->nroles; i++)
		ok &= loop_role_index(wf->roles[i].name) == (int)i &&
		    strcmp(loop_role_name((int)i), wf->roles[i].name) == 0;
	tap_ok(ok, "recipe 1-2: look-ups by name and index agree");
	for (n = 0, ok = 1; ws->roles[n] != NULL; n++)
		ok &= n < wf->nroles && strcmp(ws->roles[n],
		    wf->roles[n].name) == 0;
	tap_ok(ok && n == wf->nroles, "recipe 5: the state table's roles are "
	    "the table's, in order");
	for (i = 0, ok = 1; i < wf->nroles; i++) {
		tmpl = prompt_builtin(wf->roles[i].prompt);
		if (tmpl == NULL)
			tap_diag("no built-in prompt for %s", wf->roles[i].name);
		ok &= tmpl != NULL;
		free(tmpl);
	}
	tap_ok(ok, "recipe 3: every role has its built-in prompt");
	st = state_new(ws, "recipe-1", "t", "", 10);
	ss = json_object_get(st, "skill_state");
	for (i = 0, ok = 1; i < wf->nroles; i++) {
		res = json_pack("{s:s, s:s, s:[]}", "status", "success",
		    "summary", "done", "files_changed");
		ok &= wf->merge(ss, wf->roles[i].name, res,
		    "2026-01-01T00:00:00.000Z") == 0;
		json_decref(res);
	}
	tap_ok(ok, "recipe 4: merge takes every role's result");
	n = state_validate(ws, st, &errs);
	tap_ok(n == 0, "recipe 4-5: after every role ran, the state is valid");
	for (i = 0; i < errs.n; i++)
		tap_diag("%s", errs.v[i]);
	strv_clear(&errs);
	json_decref(st);
	for (fm = ws->progress, ok = 1; fm != NULL && fm->role != NULL; fm++)
		ok &= workflow_role_index(wf, fm->role) >= 0;
	tap_ok(ok, "recipe 5: every progress file is a role's");
}

int
main(void)
{
	test_ccw_table();
	test_ccw_menu();
	test_ccw_rules();
	test_ccw_config();
	test_tiny();
	test_tiny_state();
	test_tiny_rebuild();
	test_tiny_logs();
	test_no_role_names();
	test_registry();
	test_role_recipe();
	return tap_done();
}
