/*
 * flowdef.h: a workflow as a table (DESIGN.md section 7): its roles and
 * their defaults, its steps (the roles in auto order) and parallel group,
 * the next-action rule, the merge of results into skill_state, its state
 * skeleton and check, its side files.  The engine knows no role names:
 * it asks this table (workflow.c has the look-ups).  ccw-loop is the
 * first entry (supervisor/workflows/ccw-loop/ccw-loop.c).
 */
#ifndef CCW_FLOWDEF_H
#define CCW_FLOWDEF_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct workflow_driver;
struct progress_format;
struct state_vctx;
struct state_vrule;
struct strv;

#define WORKFLOW_MAX_GROUP	8	/* roles of one parallel group */

/* What a role is to the engine (flags). */
#define WORKFLOW_MENU	0x1	/* offered by the interactive menu */
#define WORKFLOW_ITER	0x2	/* a run is an iteration (max_iterations) */

/* One role: its name, menu words and the defaults of its configuration. */
struct workflow_role {
	const char	*name;
	const char	*const *aliases;	/* more menu words, NULL-ended */
	uint64_t	 timeout_ms;		/* roles.NAME.timeout_ms default */
	const char	*permission;		/* roles.NAME.permission default */
	const char	*prompt;		/* built-in prompt template's name */
	unsigned	 flags;			/* WORKFLOW_* */
};

/* Roles run at once as one step, merged in the order listed. */
struct workflow_group {
	const char	*name;			/* events and records: "step" */
	const int	*roles;			/* indices into roles[] */
	size_t		 nroles;
};

/*
 * The workflow's part of the state file (state.c, statevalid.c,
 * rebuild.c): the engine owns the top-level fields and skill_state's
 * current_action, last_action, completed_actions, mode and errors; the
 * workflow adds its sections (between mode and errors) and the rules
 * on them.  A NULL table: skill_state has the engine's members only.
 */
struct workflow_state {
	/* the roles in order: current_action's values, {role}.output.json */
	const char *const		*roles;		/* NULL-ended */
	/* the workflow's sections of a new skill_state, in file order */
	json_t				*(*sections)(void);
	/* the members of skill_state the sections add: their types */
	const struct state_vrule	*rules;
	/* the rules across fields (whole state, errors into the context),
	   after the members' types; check_status after the status rules,
	   when the status is a known one */
	void		(*check)(const json_t *, struct state_vctx *);
	void		(*check_status)(const json_t *, struct state_vctx *);
	/* figures computed from a state, not stored (state show) */
	json_t		*(*derived)(const json_t *);
	/* the sections {id}.progress/ROLE.md keeps and their Markdown
	   formats (progress.h), in skill_state's order; a NULL role ends
	   it.  progressmd.c writes and parses them, rebuild.c reads them
	   back: the engine's code, the workflow's data */
	const struct progress_format	*progress;
	/* the NDJSON logs it appends to in {id}.progress/ (progress_log
	   writes no other name); NULL-ended, NULL: none */
	const char *const		*logs;
	/* after rebuild read the side files: ss, the tasks file, unrec */
	void		(*rebuilt)(json_t *, const json_t *, struct strv *);
};

/*
 * A workflow.  Actions are role indices; nroles is the end (done).  The
 * hooks get skill_state (ss) and a result as report_agent() gives it.
 */
struct workflow {
	const char			*name;
	const struct workflow_role	*roles;		/* in auto order */
	size_t				 nroles;
	const struct workflow_group	*parallel;	/* NULL: no such mode */

	/* next action after a role's result: -1 the loop fails */
	int		(*next)(int, const json_t *, const json_t *);
	/* next action after the parallel group's results */
	int		(*group_next)(const json_t *);
	/* the action to run instead of one (a gate), *why set if moved */
	int		(*admit)(int, const json_t *, const char **);
	/* is the loop's goal met (the menu shows it) */
	int		(*passed)(const json_t *);
	/* a result's outcome: success, partial, failed, needs_input */
	const char	*(*outcome)(const char *, const json_t *);
	/* a role's result into ss: role, result, now */
	int		(*merge)(json_t *, const char *, const json_t *,
			    const char *);
	/* the group's results into ss: role names, results, count, now */
	void		(*merge_group)(json_t *, const char *const *,
			    const json_t *const *, size_t, const char *);
	/* a result completed from the worker's answer or log (not stopped):
	   role, result, tool, log path, the log's tail when the log is on
	   another host (NULL: read the path), agent id */
	void		(*collect)(int, json_t *, const char *, const char *,
			    const char *, const char *);
	/* after a merge that goes on: role, ss, result, state dirfd, id, now */
	void		(*merged)(int, json_t *, const json_t *, int,
			    const char *, const char *);
	/* before a role's worker starts: what a front end writes beside the
	 * state (a tasks file) read into ss: role, ss, state dirfd, id, now */
	void		(*refresh)(int, json_t *, int, const char *,
			    const char *);
	/* skill_state before the first action */
	json_t		*(*skeleton)(void);
	/* its state file's sections and rules */
	const struct workflow_state	*state;
	/* side files of the loop, as printf formats of the loop id */
	const char	*const *side_files;
	/* its run engine as a host drives it (host.h); NULL: not hosted */
	const struct workflow_driver	*driver;
	/* its configuration file under ROOT and under ~/.config/
	   ccw-supervisor (a workflow's roles are not another's: one file
	   each); NULL: .loop/config.json and config.json */
	const char	*config_file;
	const char	*config_home_file;
};

int		 workflow_role_index(const struct workflow *, const char *);
const char	*workflow_role_name(const struct workflow *, int);
int		 workflow_in_group(const struct workflow_group *, int);
char		*workflow_role_list(const struct workflow *, const char *);
char		*workflow_role_unknown(const struct workflow *, const char *);
int		 workflow_menu_role(const struct workflow *, const char *);
size_t		 workflow_menu_size(const struct workflow *);

#endif
