/*
 * tuneact.c: skill-tune's analysis, diagnosis and proposal steps: the
 * requirement analysis (a person asked in interactive mode), the
 * diagnosis roles at once and their merge into issues and the gate, the
 * fix role and its proposals.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "progress.h"
#include "state.h"
#include "tunedrv.h"
#include "xmalloc.h"

/* Whether a diagnosis role is among the run's focus (none: all). */
static int
tune_in_focus(const struct tune *t, int role)
{
	const json_t	*fa = json_object_get(t->st, "focus_areas"), *e;
	size_t		 i;

	if (json_array_size(fa) == 0)
		return 1;
	json_array_foreach(fa, i, e)
		if (strcmp(json_string_value(e), tune_categories[role].role) ==
		    0)
			return 1;
	return 0;
}

/*
 * Requirement analysis: each ambiguity is asked in interactive mode and
 * takes its recommended reading (the first) headless; a vague
 * description settled on one area becomes the focus.
 */
void
tune_analyze(struct tune *t)
{
	json_t		*ra, *a, *fa;
	const char	*role;
	char		 now[40];
	size_t		 i;
	int		 k;

	tune_begin(t, "action-analyze-requirements");
	ra = tunereq_analyze(json_string_value(json_object_get(t->st,
	    "user_issue_description")), tune_now(now));
	json_array_foreach(json_object_get(ra, "ambiguities"), i, a) {
		if (!json_is_true(json_object_get(a, "needs_clarification")))
			continue;
		k = -1;
		if (t->interactive && t->hooks.ask != NULL)
			k = t->hooks.ask(t->hooks.arg, json_string_value(
			    json_object_get(a, "description")),
			    json_object_get(a, "possible_interpretations"));
		if (k < 0 || (size_t)k >= json_array_size(json_object_get(a,
		    "possible_interpretations")))
			k = 0;
		role = tunereq_settle(ra, i, (size_t)k);
		fa = json_object_get(t->st, "focus_areas");
		if (role != NULL && json_array_size(fa) == 0)
			json_array_append_new(fa, json_string(role));
	}
	json_object_set_new(t->st, "requirement_analysis", ra);
	tune_end(t, "action-analyze-requirements", "success", NULL);
	if (tune_save(t) == 0)
		tune_enter(t, TP_DIAGNOSE);
}

/* A role left out by the focus: skipped, nothing found. */
static json_t *
tune_skipped(void)
{
	return json_pack("{s:s, s:i, s:s, s:i, s:{s:[], s:[], s:[], s:[]}, "
	    "s:[]}", "status", "skipped", "issues_found", 0, "severity",
	    "none", "execution_time_ms", 0, "details", "patterns_checked",
	    "patterns_matched", "evidence", "recommendations", "issues");
}

/* Every diagnosis role in focus at once. */
void
tune_diagnose(struct tune *t)
{
	json_t	*dg = json_object_get(t->st, "diagnosis"), *s;
	int	 roles[TUNE_NDIAG];
	size_t	 n = 0;
	int	 r;

	tune_begin(t, "action-diagnose");
	for (r = 0; r < TUNE_NDIAG; r++) {
		if (tune_in_focus(t, r)) {
			roles[n++] = r;
			continue;
		}
		s = tune_skipped();
		if (r == TUNE_DOCS) {
			json_object_set_new(s, "redundancies", json_array());
			json_object_set_new(s, "conflicts", json_array());
		}
		json_object_set_new(dg, tune_categories[r].role, s);
	}
	tunerun_step(t, roles, n, NULL, NULL);
}

/*
 * A role that gave no usable answer: failed, its earlier issues kept
 * (not found again is not fixed), an error counted.
 */
static int
tune_diag_failed(struct tune *t, int role, const char *why)
{
	json_t	*dg = json_object_get(t->st, "diagnosis");
	json_t	*old = json_object_get(dg, tune_categories[role].role);
	json_t	*f = tune_skipped();

	json_object_set_new(f, "status", json_string("failed"));
	if (json_is_array(json_object_get(old, "issues"))) {
		json_object_set(f, "issues", json_object_get(old, "issues"));
		json_object_set(f, "issues_found", json_object_get(old,
		    "issues_found"));
		json_object_set(f, "severity", json_object_get(old,
		    "severity"));
	}
	if (role == TUNE_DOCS) {
		json_object_set_new(f, "redundancies", json_array());
		json_object_set_new(f, "conflicts", json_array());
	}
	json_object_set_new(dg, tune_categories[role].role, f);
	return tune_error(t, "action-diagnose", why);
}

/* The detail's execution_time_ms from the worker when it gave none. */
void
tune_timed(json_t *d, const struct tune_run *r)
{
	if (!json_is_integer(json_object_get(d, "execution_time_ms")))
		json_object_set_new(d, "execution_time_ms", json_integer(
		    json_integer_value(json_object_get(r->rep,
		    "duration_ms"))));
}

/*
 * The diagnoses merged; then the gate decides the next phase.  A step
 * whose every role failed ends the run: there is nothing to fix from,
 * and the gate says fail (tunemerge_gate).
 */
void
tune_diagnosed(struct tune *t)
{
	struct tune_run	*r;
	json_t		*d;
	char		*why, *e;
	size_t		 i;
	int		 over = 0, failed = 0;

	for (i = 0; i < t->nruns; i++) {
		r = &t->runs[i];
		if ((d = tunerun_detail(r, &why)) != NULL) {
			tune_timed(d, r);
			if (tunemerge_diagnosis(t->st, tune_categories[r->role]
			    .role, d, &e) != 0) {
				xasprintf(&why, "%s %s: %s", r->a->role,
				    r->a->id, e);
				free(e);
			}
			json_decref(d);
		}
		if (why != NULL) {
			over |= tune_diag_failed(t, r->role, why);
			failed++;
			free(why);
		}
	}
	tunemerge_issues(t->st);
	tune_end(t, "action-diagnose", failed > 0 ? "failure" : "success",
	    NULL);
	tune_emit(t, "diagnosed", json_pack("{s:O, s:O, s:O}", "issues",
	    json_object_get(t->st, "issues_by_severity"), "quality_score",
	    json_object_get(t->st, "quality_score"), "quality_gate",
	    json_object_get(t->st, "quality_gate")));
	if (tune_save(t) != 0)
		return;
	if (over || (failed > 0 && (size_t)failed == t->nruns))
		tune_enter(t, TP_DONE);	/* nothing diagnosed to fix */
	else if (strcmp(json_string_value(json_object_get(t->st,
	    "quality_gate")), "pass") == 0 || json_integer_value(
	    json_object_get(t->st, "iteration_count")) >= json_integer_value(
	    json_object_get(t->st, "max_iterations")))
		tune_enter(t, TP_DONE);
	else
		tune_enter(t, TP_PROPOSE);
}

/* The fix role, with the open issues in a file beside the state. */
void
tune_propose(struct tune *t)
{
	const int	 fix = TUNE_FIX;
	char		*text, *path, *err = NULL;

	tune_begin(t, "action-propose-fixes");
	text = json_dumps(json_object_get(t->st, "issues"), JSON_INDENT(2));
	xasprintf(&path, "%s/issues.json", t->work);
	if (progress_replace(t->wfd, "issues.json", "issues.json", text,
	    strlen(text), &err) != 0) {
		log_warnx("tune %s: %s", t->id, err);
		free(err);
	}
	tunerun_step(t, &fix, 1, path, text);
	free(path);
	free(text);
}

/* The proposals taken; fixes to apply, or the end when there are none. */
void
tune_proposed(struct tune *t)
{
	struct tune_run	*r = &t->runs[0];
	json_t		*d;
	char		*why, *e = NULL, now[40];
	int		 n = -1, over = 0;

	if ((d = tunerun_detail(r, &why)) != NULL) {
		n = tunemerge_fixes(t->st, d, tune_now(now), &e);
		json_decref(d);
		if (e != NULL) {
			xasprintf(&why, "%s %s: %s", r->a->role, r->a->id, e);
			free(e);
		}
	}
	if (why != NULL) {
		over = tune_error(t, "action-propose-fixes", why);
		free(why);
	}
	tune_end(t, "action-propose-fixes", n >= 0 ? "success" : "failure",
	    NULL);
	tune_emit(t, "fixes_proposed", json_pack("{s:i, s:O}", "new",
	    n > 0 ? n : 0, "pending", json_object_get(t->st,
	    "pending_fixes")));
	if (tune_save(t) != 0)
		return;
	if (over)
		tune_enter(t, TP_DONE);
	else if (json_array_size(json_object_get(t->st, "pending_fixes")) == 0)
		tune_enter(t, TP_DONE);	/* nothing left that could help */
	else
		tune_enter(t, TP_APPLY);
}

