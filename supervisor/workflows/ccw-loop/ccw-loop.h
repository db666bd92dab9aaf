/*
 * ccw-loop.h: the ccw-loop workflow's table (ccw-loop.c) and its roles'
 * indices, which only this folder uses: the engine asks the table.
 */
#ifndef CCW_CCW_LOOP_H
#define CCW_CCW_LOOP_H

#include "flowdef.h"

/* The five roles in their auto order; action_index counts in these. */
#define LOOP_INIT	0
#define LOOP_DEVELOP	1
#define LOOP_DEBUG	2
#define LOOP_VALIDATE	3
#define LOOP_COMPLETE	4
#define LOOP_NROLES	5

extern const struct workflow ccw_loop_workflow;
extern const struct workflow_driver ccw_loop_driver;	/* hosted.c */
/* Its state file's sections and rules (state-ccw.c). */
extern const struct workflow_state ccw_loop_state;
json_t		*ccw_loop_skeleton(void);

/* The roles in that order (roles-ccw.c), and the look-ups on them. */
extern const struct workflow_role ccw_loop_roles[LOOP_NROLES];
int		 loop_role_index(const char *);
const char	*loop_role_name(int);

#endif
