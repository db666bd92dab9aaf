/*
 * test-workflow.c: the workflow table (flowdef.h): ccw-loop's roles,
 * order, parallel group, menu words and rules; and a second, two-role
 * workflow driving config loading and role look-up through the same
 * engine code, which must assume no role of its own.
 */
#include <config.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "ccw-loop.h"
#include "loop.h"
#include "tap.h"
#include "toolconfig.h"
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

static const struct workflow tiny = {
	.name = "tiny",
	.roles = tiny_roles,
	.nroles = 2,
	.next = tiny_next,
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
				if (!isalnum((unsigned char)e) && e != '_')
					xasprintf(&hit, "%s:%d: %s", rel, n,
					    words[i]);
			}
	}
	fclose(fp);
	return hit;
}

/* The engine and the generic drivers name no ccw-loop role. */
static void
test_no_role_names(void)
{
	static const char *const literals[] = { "\"init\"", "\"develop\"",
	    "\"debug\"", "\"validate\"", "\"complete\"", "LOOP_INIT",
	    "LOOP_DEVELOP", "LOOP_DEBUG", "LOOP_VALIDATE", "LOOP_COMPLETE",
	    "LOOP_NROLES", "loop_roles", "CONFIG_ROLES", NULL };
	static const char *const files[] = {
		"supervisor/engine/config.c", "supervisor/engine/toolconfig.h",
		"supervisor/engine/workflow.c", "supervisor/engine/flowdef.h",
		"supervisor/workflows/ccw-loop/loop.c",
		"supervisor/workflows/ccw-loop/loopstep.c",
		"supervisor/workflows/ccw-loop/loopint.h",
		"supervisor/workflows/ccw-loop/loop.h",
		"supervisor/cmd/cmd-run.c", "supervisor/cmd/cmd-doctor.c",
		"supervisor/cmd/run-open.c", NULL };
	size_t	i;
	char	*hit;

	for (i = 0; files[i] != NULL; i++) {
		hit = source_uses(files[i], literals);
		tap_ok(hit == NULL, "%s names no role", files[i]);
		if (hit != NULL)
			tap_diag("%s", hit);
		free(hit);
	}
}

int
main(void)
{
	test_ccw_table();
	test_ccw_menu();
	test_ccw_rules();
	test_ccw_config();
	test_tiny();
	test_no_role_names();
	return tap_done();
}
