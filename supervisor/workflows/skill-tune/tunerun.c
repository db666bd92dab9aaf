/*
 * tunerun.c: the workers of one skill-tune step: each role planned from
 * skill-tune's configuration (plan_spawn), given the run's facts in its
 * environment and a prompt with the answer's contract, spawned under the
 * run lock's agent ids, climbed by the kill ladder; the step's end is
 * told once, off the agents' callbacks, when the last one ended.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "cause.h"
#include "clock.h"
#include "log.h"
#include "plan.h"
#include "sup.h"
#include "tunedrv.h"
#include "xmalloc.h"

/* What every role is told; the diagnosis and fix parts follow. */
static const char tunerun_contract[] =
    "\n\nEnd your answer with this block, DETAILED_OUTPUT being ONE JSON "
    "object and nothing else:\n"
    "WORKER_RESULT:\n- action: %s\n- status: success\n"
    "- summary: <one line>\n- files_changed: []\n"
    "- next_suggestion: null\n- loop_back_to: null\nDETAILED_OUTPUT:\n"
    "<the JSON object>\n";
static const char tunerun_diag[] =
    "You diagnose the Claude Code skill in %s (SKILL.md, phases/, "
    "specs/) for %s problems only. Do not change any file. The user "
    "says: %s\nThe JSON object is a DiagnosisResult: {\"status\": "
    "\"completed\", \"issues_found\": N, \"severity\": \"critical|high|"
    "medium|low|none\", \"execution_time_ms\": 0, \"details\": "
    "{\"patterns_checked\": [], \"patterns_matched\": [], \"evidence\": "
    "[{\"file\", \"line\", \"pattern\", \"context\", \"severity\"}], "
    "\"recommendations\": []}, \"issues\": [{\"type\": \"%s\", "
    "\"severity\", \"location\": {\"file\": <relative to the skill>, "
    "\"line_start\"}, \"description\": <the same words for the same "
    "problem on every run>, \"evidence\": [], \"root_cause\", \"impact\", "
    "\"suggested_fix\"}]}%s";
static const char tunerun_docs[] =
    ", plus \"redundancies\": [{\"id\", \"type\", \"files\", "
    "\"description\", \"severity\", \"merge_suggestion\"}] and "
    "\"conflicts\": [{\"id\", \"type\", \"files\", \"key\", "
    "\"definitions\": [{\"file\", \"value\"}], "
    "\"resolution_suggestion\"}]; a conflict is an issue of type "
    "dataflow_break, a redundancy one of type token_consumption";
static const char tunerun_fix[] =
    "You propose fixes for the Claude Code skill in %s. Do not change "
    "any file: the supervisor applies your fixes, backs the files up and "
    "rolls a fix back if the issue is still found. The open issues (JSON, "
    "also in the file $CCW_TUNE_ISSUES):\n%s\n"
    "The JSON object is {\"fixes\": [{\"id\": \"FIX-001\", \"issue_ids\": "
    "[\"ISS-...\"], \"strategy\": one of context_summarization, "
    "sliding_window, structured_state, constraint_injection, "
    "checkpoint_restore, schema_enforcement, orchestrator_refactor, "
    "state_centralization, prompt_compression, lazy_loading, "
    "output_minimization, state_field_reduction, custom, "
    "\"description\", \"rationale\", \"changes\": [{\"file\": <relative "
    "to the skill>, \"action\": \"modify\", \"old_content\": <exact text "
    "now in the file>, \"new_content\"}], \"risk\": \"low|medium|high\", "
    "\"estimated_impact\", \"verification_steps\": []}]}";

/* The prompt of a role; the caller frees it. */
static char *
tunerun_prompt(struct tune *t, int role, const char *issues)
{
	const char	*name = skill_tune_workflow.roles[role].name;
	char		*body, *all, *contract;

	if (role == TUNE_FIX)
		xasprintf(&body, tunerun_fix, t->skill_dir, issues);
	else
		xasprintf(&body, tunerun_diag, t->skill_dir,
		    tune_categories[role].category, json_string_value(
		    json_object_get(t->st, "user_issue_description")),
		    role == TUNE_DOCS ? "dataflow_break|token_consumption" :
		    tune_categories[role].issue_type,
		    role == TUNE_DOCS ? tunerun_docs : "");
	xasprintf(&all, tunerun_contract, name);
	xasprintf(&contract, "%s%s", body, all);
	free(body);
	free(all);
	return contract;
}

/* A run's ladder ended: its report kept; the step goes on off the hook. */
static void
tunerun_ended(struct agent *a, void *arg)
{
	struct tune_run	*r = arg;
	struct tune	*t = r->t;

	r->rep = report_agent(a);
	r->done = 1;
	if (t->hooks.event != NULL)
		t->hooks.event(t->hooks.arg, "worker_ended", r->rep);
	if (--t->nleft == 0)
		event_active(t->step_ev, EV_TIMEOUT, 0);
}

/*
 * Start one role's worker.  -1 and *err when it cannot start (planning,
 * the workers directory): the caller counts that as the role's failure.
 */
static int
tunerun_start(struct tune *t, struct tune_run *r, const char *issues_path,
    const char *issues, char **err)
{
	const char		*name = skill_tune_workflow.roles[r->role].name;
	struct agent_req	 req;
	struct plan_deadlines	 dl;
	json_t			*env;
	char			*prompt, it[32];

	prompt = tunerun_prompt(t, r->role, issues);
	if (plan_spawn(t->cfg, t->root, name, t->over, prompt, &req, &dl,
	    err) != 0) {
		free(prompt);
		return -1;
	}
	env = json_object_get(req.options, "env");
	if (!json_is_object(env))
		json_object_set_new(req.options, "env", (env = json_object()));
	snprintf(it, sizeof it, "%lld", (long long)json_integer_value(
	    json_object_get(t->st, "iteration_count")));
	json_object_set_new(env, "CCW_TUNE_SKILL_DIR",
	    json_string(t->skill_dir));
	json_object_set_new(env, "CCW_TUNE_WORK_DIR", json_string(t->work));
	json_object_set_new(env, "CCW_TUNE_ROLE", json_string(name));
	json_object_set_new(env, "CCW_TUNE_ITERATION", json_string(it));
	if (issues_path != NULL)
		json_object_set_new(env, "CCW_TUNE_ISSUES",
		    json_string(issues_path));
	if (loopguard_reserve(&t->guard, &t->sup, err) != 0) {
		json_decref(req.options);
		free(prompt);
		return -1;
	}
	r->a = agent_spawn(&t->sup, &req);
	json_decref(req.options);
	free(prompt);
	r->t0 = clock_mono_ms();
	r->grace_ms = dl.grace_ms;
	r->ladder = ladder_start(t->verbs, r->a, dl.timeout_ms, dl.nudge_ms,
	    dl.grace_ms, tunerun_ended, r);
	if (t->hooks.event != NULL) {
		json_t	*ev = json_pack("{s:s, s:s}", "role", name,
		    "agent_id", r->a->id);

		t->hooks.event(t->hooks.arg, "worker_started", ev);
		json_decref(ev);
	}
	return 0;
}

/* The runs of the last step released (their agents stay in the table). */
void
tunerun_clear(struct tune *t)
{
	size_t	i;

	for (i = 0; i < t->nruns; i++) {
		ladder_free(t->runs[i].ladder);
		json_decref(t->runs[i].rep);
		free(t->runs[i].err);
	}
	memset(t->runs, 0, sizeof t->runs);
	t->nruns = 0;
	t->nleft = 0;
}

/*
 * A step of roles at once (one for the fix role).  A role that cannot
 * start is done at once with its reason; the step's end comes through
 * step_ev either way, never from inside this call.
 */
void
tunerun_step(struct tune *t, const int *roles, size_t n,
    const char *issues_path, const char *issues)
{
	struct tune_run	*r;
	size_t		 i;

	tunerun_clear(t);
	t->nleft = 1;		/* held until every start was tried */
	for (i = 0; i < n && i < TUNE_NROLES; i++) {
		r = &t->runs[t->nruns++];
		r->t = t;
		r->role = roles[i];
		t->nleft++;
		if (t->stopping || tunerun_start(t, r, issues_path, issues,
		    &r->err) != 0) {
			if (r->err == NULL)
				r->err = xstrdup("stopped before it started");
			r->done = 1;
			t->nleft--;
		}
	}
	if (--t->nleft == 0)
		event_active(t->step_ev, EV_TIMEOUT, 0);
}

/* A stop: every live run climbs the ladder from its close step. */
void
tunerun_stop(struct tune *t)
{
	size_t	i;

	for (i = 0; i < t->nruns; i++)
		if (!t->runs[i].done && t->runs[i].ladder != NULL)
			ladder_close(t->runs[i].ladder, t->runs[i].grace_ms);
}

/*
 * A run's answer: its detailed output's JSON object, or NULL and why it
 * has none (it did not start, failed, timed out, answered no JSON); a
 * failed worker's why names its outcome kind and the CLI's words.
 */
json_t *
tunerun_detail(const struct tune_run *r, char **why)
{
	const char	*st;
	json_t		*d;
	char		*e;

	*why = NULL;
	if (r->err != NULL) {
		*why = xstrdup(r->err);
		return NULL;
	}
	st = json_string_value(json_object_get(r->rep, "status"));
	if (st == NULL || cause_failed(r->rep)) {
		xasprintf(&e, "%s %s", r->a->role, r->a->id);
		*why = cause_line(e, r->rep);
		free(e);
		return NULL;
	}
	d = tunemerge_detail(json_string_value(json_object_get(r->rep,
	    "detailed_output")), &e);
	if (d == NULL) {
		xasprintf(why, "%s %s: %s", r->a->role, r->a->id, e);
		free(e);
	}
	return d;
}
