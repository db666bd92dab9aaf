/*
 * roles-ccw.c: ccw-loop's five roles (init, develop, debug, validate,
 * complete) with their menu words and defaults, in the auto order the
 * LOOP_* indices count in, and the look-ups by name and index the
 * folder's files use (merge.c, capsule.c), below the workflow's table.
 */
#include <config.h>

#include <stddef.h>

#include "ccw-loop.h"

static const char *const ccw_loop_develop_words[] = { "d", "dev", NULL };
static const char *const ccw_loop_debug_words[] = { "b", "deb", "db", NULL };
static const char *const ccw_loop_validate_words[] = { "v", "val", NULL };
static const char *const ccw_loop_complete_words[] = { "c", "comp", NULL };

/* init and complete only read; the others run the tests and iterate. */
const struct workflow_role ccw_loop_roles[LOOP_NROLES] = {
	{ "init", NULL, 300000, "read-only", "init", 0 },
	{ "develop", ccw_loop_develop_words, 600000, "workspace-write",
	  "develop", WORKFLOW_MENU | WORKFLOW_ITER },
	{ "debug", ccw_loop_debug_words, 600000, "workspace-write", "debug",
	  WORKFLOW_MENU | WORKFLOW_ITER },
	{ "validate", ccw_loop_validate_words, 600000, "workspace-write",
	  "validate", WORKFLOW_MENU | WORKFLOW_ITER },
	{ "complete", ccw_loop_complete_words, 300000, "read-only",
	  "complete", WORKFLOW_MENU },
};

/* A role's place in the auto sequence, -1 if it is none of the five. */
int
loop_role_index(const char *role)
{
	const struct workflow	wf = { .roles = ccw_loop_roles,
	    .nroles = LOOP_NROLES };

	return workflow_role_index(&wf, role);
}

/* A role's name, NULL past the five. */
const char *
loop_role_name(int role)
{
	const struct workflow	wf = { .roles = ccw_loop_roles,
	    .nroles = LOOP_NROLES };

	return workflow_role_name(&wf, role);
}
