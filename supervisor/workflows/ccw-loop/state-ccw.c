/*
 * state-ccw.c: ccw-loop's part of the state file (flowdef.h
 * workflow_state): the develop, debug and validate sections of
 * skill_state, their rules as seed 000 gives them, the figures derived
 * from them, their progress Markdown formats, and how `state rebuild`
 * completes them from the side files.
 */
#include <config.h>

#include <string.h>

#include <jansson.h>

#include "ccw-loop.h"
#include "progress.h"
#include "state.h"

#define R	STATE_R
#define R_INT	STATE_R_INT
#define R_ENUM	STATE_R_ENUM
#define R_SUB	STATE_R_SUB
#define R_END	STATE_R_END

static const char *const ccw_state_roles[] = { "init", "develop", "debug",
    "validate", "complete", NULL };
/*
 * The sections {id}.progress/ROLE.md keeps, in skill_state's order, and
 * their Markdown formats: rebuild.c reads back exactly what these write.
 */
static const struct progress_field develop_bullets[] = {
	{ "Total", "total", NULL, PK_INT, NULL },
	{ "Completed", "completed", NULL, PK_INT, NULL },
	{ "Current Task", "current_task", NULL, PK_NSTR, NULL },
	{ "Last Progress At", "last_progress_at", NULL, PK_TS, NULL },
	{ NULL, NULL, NULL, 0, NULL }
};
static const struct progress_field develop_columns[] = {
	{ "ID", "id", NULL, PK_STR, NULL },
	{ "Description", "description", NULL, PK_STR, NULL },
	{ "Tool", "tool", NULL, PK_OSTR, NULL },
	{ "Mode", "mode", NULL, PK_OSTR, NULL },
	{ "Status", "status", NULL, PK_STR,
	    "pending|in_progress|completed|failed" },
	{ "Files Changed", "files_changed", NULL, PK_LIST, NULL },
	{ "Created At", "created_at", NULL, PK_OTS, NULL },
	{ "Completed At", "completed_at", NULL, PK_TS, NULL },
	{ NULL, NULL, NULL, 0, NULL }
};
static const struct progress_field debug_bullets[] = {
	{ "Active Bug", "active_bug", NULL, PK_NSTR, NULL },
	{ "Iteration", "iteration", NULL, PK_INT, NULL },
	{ "Hypotheses Count", "hypotheses_count", NULL, PK_INT, NULL },
	{ "Confirmed Hypothesis", "confirmed_hypothesis", NULL, PK_NSTR, NULL },
	{ "Last Analysis At", "last_analysis_at", NULL, PK_TS, NULL },
	{ NULL, NULL, NULL, 0, NULL }
};
static const struct progress_field debug_columns[] = {
	{ "ID", "id", NULL, PK_STR, NULL },
	{ "Description", "description", NULL, PK_STR, NULL },
	{ "Status", "status", NULL, PK_STR,
	    "pending|confirmed|rejected|inconclusive" },
	{ "Likelihood", "likelihood", NULL, PK_NUM, NULL },
	{ "Testable Condition", "testable_condition", NULL, PK_STR, NULL },
	{ "Logging Point", "logging_point", NULL, PK_STR, NULL },
	{ "Confirm If", "evidence_criteria", "confirm", PK_STR, NULL },
	{ "Reject If", "evidence_criteria", "reject", PK_STR, NULL },
	{ "Evidence", "evidence", NULL, PK_OBJ, NULL },
	{ "Verdict Reason", "verdict_reason", NULL, PK_NSTR, NULL },
	{ NULL, NULL, NULL, 0, NULL }
};
static const struct progress_field validate_bullets[] = {
	{ "Pass Rate", "pass_rate", NULL, PK_PCT, NULL },
	{ "Coverage", "coverage", NULL, PK_PCT, NULL },
	{ "Passed", "passed", NULL, PK_BOOL, NULL },
	{ "Last Run At", "last_run_at", NULL, PK_TS, NULL },
	{ NULL, NULL, NULL, 0, NULL }
};
static const struct progress_field validate_columns[] = {
	{ "Name", "test_name", NULL, PK_STR, NULL },
	{ "Suite", "suite", NULL, PK_STR, NULL },
	{ "Status", "status", NULL, PK_STR, "skipped|passed|failed" },
	{ "Duration (ms)", "duration_ms", NULL, PK_NUM, NULL },
	{ "Error", "error_message", NULL, PK_NSTR, NULL },
	{ "Stack Trace", "stack_trace", NULL, PK_NSTR, NULL },
	{ NULL, NULL, NULL, 0, NULL }
};
static const struct progress_format ccw_state_progress[] = {
	{ "develop", "Development Progress", "Progress Timeline",
	    develop_bullets, "Tasks", "tasks", develop_columns, NULL, NULL },
	{ "debug", "Understanding Document", "Exploration Timeline",
	    debug_bullets, "Hypotheses", "hypotheses", debug_columns,
	    NULL, NULL },
	{ "validate", "Validation Report", "Validation Runs",
	    validate_bullets, "Test Results", "test_results",
	    validate_columns, "Failed Tests", "failed_tests" },
	{ NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL },
};

/* Its NDJSON logs in {id}.progress/: every changed file; debug's runs. */
static const char *const ccw_state_logs[] = { "changes.log", "debug.log",
    NULL };

static const char *const ccw_state_task_st[] = { "pending", "in_progress",
    "completed", "failed", NULL };
static const char *const ccw_state_hyp_st[] = { "pending", "confirmed",
    "rejected", "inconclusive", NULL };
static const char *const ccw_state_test_st[] = { "passed", "failed",
    "skipped", NULL };

/* DevelopTask: the seed's own example gives only id, description, status. */
static const struct state_vrule ccw_state_r_task[] = {
	R("id", V_STR, V_REQ), R("description", V_STR, 0),
	R("tool", V_STR, 0), R("mode", V_STR, 0),
	R_ENUM("status", V_REQ, ccw_state_task_st),
	R("files_changed", V_STRS, 0), R("files_claimed", V_STRS, 0),
	R("created_at", V_TS, 0), R("completed_at", V_TS, V_NULL),
	R("prompt_template", V_STR, 0), R("command", V_STR, 0),
	R("on_error", V_STR, 0), R_END
};
static const struct state_vrule ccw_state_r_criteria[] = {
	R("confirm", V_STR, 0), R("reject", V_STR, 0), R_END
};
static const struct state_vrule ccw_state_r_hyp[] = {
	R("id", V_STR, V_REQ), R("description", V_STR, 0),
	R("testable_condition", V_STR, 0), R("logging_point", V_STR, 0),
	R_SUB("evidence_criteria", V_OBJ, 0, ccw_state_r_criteria),
	R("likelihood", V_NUM, 0), R_ENUM("status", V_REQ, ccw_state_hyp_st),
	R("evidence", V_OBJ, V_NULL), R("verdict_reason", V_STR, V_NULL), R_END
};
static const struct state_vrule ccw_state_r_test[] = {
	R("test_name", V_STR, V_REQ), R("suite", V_STR, 0),
	R_ENUM("status", V_REQ, ccw_state_test_st), R("duration_ms", V_NUM, 0),
	R("error_message", V_STR, V_NULL), R("stack_trace", V_STR, V_NULL),
	R_END
};
static const struct state_vrule ccw_state_r_develop[] = {
	R_INT("total", V_REQ, 0), R_INT("completed", V_REQ, 0),
	R("current_task", V_STR, V_NULL),
	R_SUB("tasks", V_LIST, V_REQ, ccw_state_r_task),
	R("last_progress_at", V_TS, V_REQ | V_NULL), R_END
};
static const struct state_vrule ccw_state_r_debug[] = {
	R("active_bug", V_STR, V_NULL), R_INT("hypotheses_count", V_REQ, 0),
	R_SUB("hypotheses", V_LIST, V_REQ, ccw_state_r_hyp),
	R("confirmed_hypothesis", V_STR, V_REQ | V_NULL),
	R_INT("iteration", V_REQ, 0),
	R("last_analysis_at", V_TS, V_REQ | V_NULL), R_END
};
static const struct state_vrule ccw_state_r_validate[] = {
	R("pass_rate", V_PCT, V_REQ), R("coverage", V_PCT, V_REQ),
	R_SUB("test_results", V_LIST, V_REQ, ccw_state_r_test),
	R("passed", V_BOOL, V_REQ), R("failed_tests", V_STRS, V_REQ),
	R("last_run_at", V_TS, V_REQ | V_NULL), R_END
};
/* skill_state's members that are ccw-loop's, in their order. */
static const struct state_vrule ccw_state_r_skill[] = {
	R_SUB("develop", V_OBJ, V_REQ, ccw_state_r_develop),
	R_SUB("debug", V_OBJ, V_REQ, ccw_state_r_debug),
	R_SUB("validate", V_OBJ, V_REQ, ccw_state_r_validate), R_END
};

/* The three sections as action-init writes them (mode auto). */
static json_t *
ccw_state_sections(void)
{
	return json_pack("{s:{s:i, s:i, s:n, s:[], s:n},"
	    " s:{s:n, s:i, s:[], s:n, s:i, s:n},"
	    " s:{s:i, s:i, s:[], s:b, s:[], s:n}}",
	    "develop", "total", 0, "completed", 0, "current_task", "tasks",
	    "last_progress_at",
	    "debug", "active_bug", "hypotheses_count", 0, "hypotheses",
	    "confirmed_hypothesis", "iteration", 0, "last_analysis_at",
	    "validate", "pass_rate", 0, "coverage", 0, "test_results",
	    "passed", 0, "failed_tests", "last_run_at");
}

/* develop.total and develop.completed against the tasks themselves. */
static void
ccw_state_check(const json_t *st, struct state_vctx *v)
{
	const json_t	*ss = json_object_get(st, "skill_state");
	const json_t	*dev = json_object_get(ss, "develop");
	const json_t	*tasks = json_object_get(dev, "tasks"), *t;
	long long	 total, done;
	size_t		 i, ndone = 0;

	json_array_foreach(tasks, i, t) {
		if (json_is_string(json_object_get(t, "status")) &&
		    strcmp(json_string_value(json_object_get(t, "status")),
		    "completed") == 0)
			ndone++;
	}
	if (json_is_array(tasks) && state_json_int(json_object_get(dev,
	    "total"), &total) && total >= 0 &&
	    (size_t)total != json_array_size(tasks))
		state_verr(v, "skill_state.develop.total", "%lld but there "
		    "are %zu tasks", total, json_array_size(tasks));
	if (json_is_array(tasks) && state_json_int(json_object_get(dev,
	    "completed"), &done) && done >= 0 && (size_t)done != ndone)
		state_verr(v, "skill_state.develop.completed", "%lld but %zu "
		    "tasks have status completed", done, ndone);
}

/* A completed loop has passed validation (complete's gate). */
static void
ccw_state_check_status(const json_t *st, struct state_vctx *v)
{
	const json_t	*ss = json_object_get(st, "skill_state");

	if (strcmp(json_string_value(json_object_get(st, "status")),
	    "completed") == 0 && !json_is_true(json_object_get(
	    json_object_get(ss, "validate"), "passed")))
		state_verr(v, "skill_state.validate.passed", "status is "
		    "completed but validation has not passed");
}

/* The figures the seed computes instead of storing (dashboard, status). */
static json_t *
ccw_state_derived(const json_t *st)
{
	const json_t	*ss = json_object_get(st, "skill_state");
	const json_t	*dev = json_object_get(ss, "develop");
	const json_t	*val = json_object_get(ss, "validate");
	const json_t	*t, *tr;
	long long	 total = 0, done = 0;
	double		 dp = 0, overall;
	int		 pending = 0, dbg, vpass;
	size_t		 i;

	state_json_int(json_object_get(dev, "total"), &total);
	state_json_int(json_object_get(dev, "completed"), &done);
	if (total > 0)
		dp = (double)done * 100.0 / (double)total;
	if (dp < 0)
		dp = 0;
	if (dp > 100)
		dp = 100;
	json_array_foreach(json_object_get(dev, "tasks"), i, t) {
		if (json_is_string(json_object_get(t, "status")) &&
		    strcmp(json_string_value(json_object_get(t, "status")),
		    "pending") == 0)
			pending = 1;
	}
	dbg = json_is_string(json_object_get(json_object_get(ss, "debug"),
	    "confirmed_hypothesis"));
	tr = json_object_get(val, "test_results");
	vpass = json_is_true(json_object_get(val, "passed")) &&
	    json_is_array(tr) && json_array_size(tr) > 0;
	overall = dp * 0.5 + (dbg ? 25 : 0) + (vpass ? 25 : 0);
	return json_pack("{s:f, s:b, s:b, s:b, s:f}", "develop_progress", dp,
	    "has_pending_develop", pending, "debug_completed", dbg,
	    "validation_passed", vpass, "overall_progress", overall);
}

/* Empty cells (null, "") do not erase what the tasks file knows. */
static void
ccw_state_overlay(json_t *t, json_t *m)
{
	const char	*k;
	json_t		*v;

	json_object_foreach(m, k, v)
		if ((!json_is_null(v) && (!json_is_string(v) ||
		    *json_string_value(v) != '\0')) ||
		    json_object_get(t, k) == NULL)
			json_object_set(t, k, v);
}

/*
 * The tasks from the progress file and from the tasks file(s), by id:
 * the file's fields under the progress file's (the skill's view of
 * status and files), tasks only in one of them kept.
 */
static void
ccw_state_tasks(json_t *dev, const json_t *ftasks, struct strv *unrec)
{
	const struct progress_format	*fm = progress_format(&ccw_loop_state,
	    "develop");
	const char			*p = "skill_state.develop", *tid;
	json_t				*md, *out, *index, *t, *at;
	size_t				 i, done = 0;
	int				 lost;

	lost = json_array_size(ftasks) == 0 &&
	    progress_unrec(unrec, p, "tasks", PROGRESS_UN_HAS);
	md = json_object_get(dev, "tasks");
	out = json_array();
	index = json_object();
	for (i = 0; i < json_array_size(md); i++) {
		t = json_array_get(md, i);
		if ((tid = json_string_value(json_object_get(t, "id"))) != NULL)
			json_object_set_new(index, tid,
			    json_integer(json_array_size(out)));
		json_array_append(out, t);
	}
	for (i = 0; i < json_array_size(ftasks); i++) {
		t = json_deep_copy(json_array_get(ftasks, i));
		if (!json_is_string(json_object_get(t, "description")) &&
		    json_is_string(json_object_get(t, "title")))
			json_object_set(t, "description",
			    json_object_get(t, "title"));
		tid = json_string_value(json_object_get(t, "id"));
		if (tid != NULL && (at = json_object_get(index, tid)) != NULL) {
			ccw_state_overlay(t, json_array_get(out,
			    json_integer_value(at)));
			json_array_set_new(out, json_integer_value(at), t);
		} else
			json_array_append_new(out, t);
		progress_fix_row(t, fm, p, unrec);
	}
	json_array_foreach(out, i, t) {
		if (!json_is_string(json_object_get(t, "description")))
			json_object_set_new(t, "description", json_string(""));
		if (!json_is_array(json_object_get(t, "files_changed")))
			json_object_set_new(t, "files_changed", json_array());
		if (strcmp(json_string_value(json_object_get(t, "status")),
		    "completed") == 0)
			done++;
	}
	json_object_set_new(dev, "total", json_integer(json_array_size(out)));
	json_object_set_new(dev, "completed", json_integer(done));
	json_object_set_new(dev, "tasks", out);
	json_decref(index);
	if (lost) {
		progress_unrec(unrec, p, "total", PROGRESS_UN_ADD);
		progress_unrec(unrec, p, "completed", PROGRESS_UN_ADD);
	} else {
		progress_unrec(unrec, p, "tasks", PROGRESS_UN_DEL);
		progress_unrec(unrec, p, "total", PROGRESS_UN_DEL);
		progress_unrec(unrec, p, "completed", PROGRESS_UN_DEL);
	}
}

/*
 * After the side files were read: the tasks merged into develop, and the
 * counts the writer keeps implied by the rows when the bullets are lost.
 */
static void
ccw_state_rebuilt(json_t *ss, const json_t *tasks, struct strv *unrec)
{
	json_t	*dbg = json_object_get(ss, "debug");

	ccw_state_tasks(json_object_get(ss, "develop"), tasks, unrec);
	if (!progress_unrec(unrec, "skill_state.debug", "hypotheses",
	    PROGRESS_UN_HAS) && progress_unrec(unrec, "skill_state.debug",
	    "hypotheses_count", PROGRESS_UN_DEL))
		json_object_set_new(dbg, "hypotheses_count", json_integer(
		    json_array_size(json_object_get(dbg, "hypotheses"))));
}

const struct workflow_state ccw_loop_state = {
	.roles = ccw_state_roles,
	.sections = ccw_state_sections,
	.rules = ccw_state_r_skill,
	.check = ccw_state_check,
	.check_status = ccw_state_check_status,
	.derived = ccw_state_derived,
	.progress = ccw_state_progress,
	.logs = ccw_state_logs,
	.rebuilt = ccw_state_rebuilt,
};

/* skill_state before the first action (the table's skeleton hook). */
json_t *
ccw_loop_skeleton(void)
{
	return state_skeleton(&ccw_loop_state);
}
