/*
 * workflows.c: the one table of workflows, each row a folder's
 * `struct workflow` (flowdef.h), and the look-ups by name and by the name
 * a state file carries (WORKFLOW_FIELD, absent in CCW's files).
 */
#include <config.h>

#include <string.h>

#include "ccw-loop.h"
#include "flowdef.h"
#include "tuneint.h"
#include "workflows.h"
#include "xmalloc.h"

/*
 * Every workflow with a role table; the first is what a state file
 * naming none runs.  issue-queue (batch) drives loops of a row (its
 * batch_cfg.wf) and has no roles of its own: it is no row.
 */
const struct workflow *const workflow_table[] = {
	&ccw_loop_workflow,
	&skill_tune_workflow,
	NULL
};

/* A workflow by its name (a state file's, a command's), NULL if none. */
const struct workflow *
workflow_find(const char *name)
{
	size_t	i;

	for (i = 0; name != NULL && workflow_table[i] != NULL; i++)
		if (strcmp(workflow_table[i]->name, name) == 0)
			return workflow_table[i];
	return NULL;
}

/* CCW's loops: what a state file without WORKFLOW_FIELD (or none yet) is. */
const struct workflow *
workflow_default(void)
{
	return workflow_table[0];
}

/*
 * The workflow a state file names; the default when it names none (CCW
 * writes no such member) or there is no file yet (st NULL).  NULL and
 * *err set (else NULL) when it names one this build does not have.
 */
const struct workflow *
workflow_of(const json_t *st, char **err)
{
	const json_t		*v = json_object_get(st, WORKFLOW_FIELD);
	const struct workflow	*wf;

	*err = NULL;
	if (v == NULL || json_is_null(v))
		return workflow_default();
	if ((wf = workflow_find(json_string_value(v))) == NULL)
		xasprintf(err, "unknown workflow '%s' in the state file",
		    json_is_string(v) ? json_string_value(v) : "(not a string)");
	return wf;
}

/*
 * The state table (sections, rules, rebuild) of the workflow a state
 * file names, as the engine's state functions take it; NULL and *err set
 * for an unknown workflow (a known one's may be NULL: engine's members).
 */
const struct workflow_state *
workflow_state_of(const json_t *st, char **err)
{
	const struct workflow	*wf;

	if ((wf = workflow_of(st, err)) == NULL)
		return NULL;
	return wf->state;
}
