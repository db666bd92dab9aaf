/*
 * workflows.h: the one table of workflows (workflows.c) and the look-ups
 * front ends reach a workflow through: by name, and by the name a state
 * file carries.  cmd/ and api/ name no workflow's symbols; adding a
 * workflow is its folder plus one row of the table.
 */
#ifndef CCW_WORKFLOWS_H
#define CCW_WORKFLOWS_H

#include <jansson.h>

struct workflow;
struct workflow_state;

/* The state file's member naming its workflow (man/ccw-state.5); CCW
   writes none: a file without it is the default's, the table's first. */
#define WORKFLOW_FIELD	"workflow"

extern const struct workflow *const workflow_table[];	/* NULL-ended */

const struct workflow		*workflow_find(const char *);	/* NULL: none */
const struct workflow		*workflow_default(void);
const struct workflow		*workflow_of(const json_t *, char **);
const struct workflow_state	*workflow_state_of(const json_t *, char **);

#endif
