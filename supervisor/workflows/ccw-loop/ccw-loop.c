/*
 * ccw-loop.c: the ccw-loop workflow as a table (DESIGN.md section 7):
 * init, develop, debug, validate, complete; the parallel step develop,
 * debug, validate; the rules that are not merge.c's own (complete needs
 * a passed validation, init's plan into tasks, validate's TAP).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "ccw-loop.h"
#include "log.h"
#include "loop.h"
#include "progress.h"
#include "state.h"

static const int ccw_loop_group_roles[] = {
	LOOP_DEVELOP, LOOP_DEBUG, LOOP_VALIDATE
};
static const struct workflow_group ccw_loop_parallel = {
	"parallel", ccw_loop_group_roles, 3
};

static const char *const ccw_loop_side_files[] = {
	"%s.progress/develop.md", "%s.progress/debug.md",
	"%s.progress/validate.md", "%s.progress/changes.log",
	"%s.progress/debug.log", "%s.tasks.jsonl", "%s.history.jsonl",
	"%s.workers/", NULL
};

/* Whether validation has passed (complete requires it). */
static int
ccw_loop_passed(const json_t *ss)
{
	return json_is_true(json_object_get(json_object_get(ss, "validate"),
	    "passed"));
}

/* After the parallel step: complete if validation passed, else again. */
static int
ccw_loop_group_next(const json_t *ss)
{
	return ccw_loop_passed(ss) ? LOOP_COMPLETE : LOOP_DEVELOP;
}

/* complete (or the end) without a passed validation: develop instead. */
static int
ccw_loop_admit(int action, const json_t *ss, const char **why)
{
	if (action < LOOP_COMPLETE || ccw_loop_passed(ss))
		return action;
	if (why != NULL)
		*why = "validation has not passed yet: run validate first";
	return LOOP_DEVELOP;
}

/*
 * TAP of a validate run: from the worker's answer (agents whose final
 * message holds it), else from a bash run's log: the tail that came on
 * the channel from a worker on another host, or the file here.  A
 * command tool (bash: no agent flag in the tool table) writes TAP there.
 */
static void
ccw_loop_collect(int role, json_t *res, const char *tool,
    const char *log_path, const char *log_tail, const char *agent_id)
{
	json_t	*tap;
	char	*err = NULL;

	if (role != LOOP_VALIDATE)
		return;
	if ((tap = tap_parse_answer(json_string_value(json_object_get(res,
	    "detailed_output")), json_string_value(json_object_get(res,
	    "summary")))) != NULL)
		json_object_set_new(res, "tap", tap);
	else if (tool != NULL && !adapter_is_agent(tool) && log_tail != NULL) {
		if ((tap = tap_parse_text(log_tail, strlen(log_tail))) != NULL)
			json_object_set_new(res, "tap", tap);
	} else if (tool != NULL && !adapter_is_agent(tool)) {
		if ((tap = tap_parse_file(log_path, &err)) != NULL)
			json_object_set_new(res, "tap", tap);
		else if (err != NULL)
			log_warnx("%s: TAP: %s", agent_id, err);
		free(err);
	}
}

/*
 * A tasks file's complaint into skill_state.errors (action "tasks"), once:
 * the file is read after every action and says the same until fixed.
 */
static void
ccw_loop_task_error(json_t *ss, const char *msg, const char *now)
{
	json_t		*errs = json_object_get(ss, "errors"), *e;
	const char	*m;
	size_t		 i;

	if (!json_is_array(errs))
		return;
	json_array_foreach(errs, i, e) {
		m = json_string_value(json_object_get(e, "message"));
		if (m != NULL && strcmp(m, msg) == 0)
			return;
	}
	state_error_push(ss, json_pack("{s:s, s:s, s:s}", "action",
	    "tasks", "message", msg, "timestamp", now));
}

/*
 * The tasks file into develop's tasks.  A line the reader could not use
 * goes to the log and the state's errors: never dropped in silence.
 */
static void
ccw_loop_tasks(json_t *ss, int dirfd, const char *id, const char *now)
{
	json_t	*tasks = NULL;
	char	*err = NULL;
	int	 rc;

	rc = progress_tasks_read(dirfd, id, &tasks, &err);
	if (err != NULL)
		ccw_loop_task_error(ss, err, now);
	prompt_warn(rc, err);
	if (tasks != NULL)
		merge_tasks(ss, tasks, now);
	json_decref(tasks);
}

/*
 * Before every action's worker: the tasks file read again, so a task a
 * front end added while the loop ran (or was paused) reaches the prompt.
 */
static void
ccw_loop_refresh(int role, json_t *ss, int dirfd, const char *id,
    const char *now)
{
	(void)role;
	ccw_loop_tasks(ss, dirfd, id, now);
}

/* init's plan into develop's tasks: the tasks file, else its answer. */
static void
ccw_loop_merged(int role, json_t *ss, const json_t *res, int dirfd,
    const char *id, const char *now)
{
	if (role != LOOP_INIT)
		return;
	ccw_loop_tasks(ss, dirfd, id, now);
	context_plan(ss, json_string_value(json_object_get(res,
	    "detailed_output")), now);
}

const struct workflow ccw_loop_workflow = {
	.name = "ccw-loop",
	.roles = ccw_loop_roles,
	.nroles = LOOP_NROLES,
	.parallel = &ccw_loop_parallel,
	.next = merge_next,
	.group_next = ccw_loop_group_next,
	.admit = ccw_loop_admit,
	.passed = ccw_loop_passed,
	.outcome = merge_outcome,
	.merge = merge_role,
	.merge_group = merge_parallel,
	.collect = ccw_loop_collect,
	.merged = ccw_loop_merged,
	.refresh = ccw_loop_refresh,
	.skeleton = ccw_loop_skeleton,
	.state = &ccw_loop_state,
	.side_files = ccw_loop_side_files,
	.driver = &ccw_loop_driver,
};
