/*
 * tunereport.c: final_report, the Markdown summary of a tuning run that
 * also goes to SKILL_DIR/.tune/{id}/report.md: the target, the gate, the
 * analysis, each diagnosis, the issues left, each fix's fate, the
 * errors.  Pure: built from the state alone.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "tuneint.h"

/* A string member, "-" when absent; '|' and new lines kept out of tables. */
static void
tunereport_cell(struct sbuf *b, const json_t *o, const char *k)
{
	const char	*s = json_string_value(json_object_get(o, k));

	if (s == NULL || *s == '\0')
		s = "-";
	for (; *s != '\0'; s++)
		sbuf_add(b, *s == '|' ? "\\|" : *s == '\n' ? " " : s,
		    *s == '|' ? 2 : 1);
}

/* What became of a proposed fix, from applied_fixes and pending_fixes. */
static const char *
tunereport_fate(const json_t *st, const json_t *fix)
{
	const json_t	*a, *e, *last = NULL;
	const char	*v;
	size_t		 i;

	json_array_foreach(json_object_get(st, "applied_fixes"), i, a)
		if (json_equal(json_object_get(a, "fix_id"),
		    json_object_get(fix, "id")))
			last = a;
	if (last != NULL) {
		v = json_string_value(json_object_get(last,
		    "verification_result"));
		if (v != NULL && strcmp(v, "pass") == 0)
			return "applied, verified";
		if (v != NULL && strcmp(v, "fail") == 0)
			return json_is_true(json_object_get(last, "success")) ?
			    "verification failed, rolled back" :
			    "could not be applied, rolled back";
		return "applied, not verified";
	}
	json_array_foreach(json_object_get(st, "pending_fixes"), i, e)
		if (json_equal(e, json_object_get(fix, "id")))
			return "pending";
	return "not applied";
}

/*
 * The diagnosis roles that failed, under the quality line: the gate is
 * fail because of them, not because of issues found (their reasons are
 * under Errors).
 */
static void
tunereport_unchecked(struct sbuf *b, const json_t *st)
{
	const json_t	*dg = json_object_get(st, "diagnosis");
	const char	*s;
	int		 r, n = 0;

	for (r = 0; r < TUNE_NDIAG; r++) {
		s = json_string_value(json_object_get(json_object_get(dg,
		    tune_categories[r].role), "status"));
		if (s != NULL && strcmp(s, "failed") == 0)
			sbuf_printf(b, "%s%s", n++ == 0 ?
			    "- Not checked (the role failed): " : ", ",
			    tune_categories[r].role);
	}
	if (n > 0)
		sbuf_puts(b, "\n");
}

/* The heading: the skill, the problem, status, quality, the counts. */
static void
tunereport_head(struct sbuf *b, const json_t *st)
{
	const json_t	*t = json_object_get(st, "target_skill");

	sbuf_printf(b, "# Skill tuning report: %s\n\n",
	    json_string_value(json_object_get(t, "name")) != NULL ?
	    json_string_value(json_object_get(t, "name")) : "?");
	sbuf_printf(b, "- Skill: `%s` (%s; %zu phases, %zu specs)\n",
	    json_string_value(json_object_get(t, "path")),
	    json_string_value(json_object_get(t, "execution_mode")) != NULL ?
	    json_string_value(json_object_get(t, "execution_mode")) : "?",
	    json_array_size(json_object_get(t, "phases")),
	    json_array_size(json_object_get(t, "specs")));
	sbuf_puts(b, "- Problem described: ");
	tunereport_cell(b, st, "user_issue_description");
	sbuf_printf(b, "\n- Status: %s, from %s to %s\n",
	    json_string_value(json_object_get(st, "status")),
	    json_string_value(json_object_get(st, "started_at")),
	    json_string_value(json_object_get(st, "updated_at")));
	sbuf_printf(b, "- Quality: **%lld/100, gate %s**\n",
	    (long long)json_number_value(json_object_get(st,
	    "quality_score")), json_string_value(json_object_get(st,
	    "quality_gate")));
	tunereport_unchecked(b, st);
	sbuf_printf(b, "- Iterations: %lld of %lld; errors: %lld of %lld\n",
	    (long long)json_integer_value(json_object_get(st,
	    "iteration_count")), (long long)json_integer_value(
	    json_object_get(st, "max_iterations")), (long long)
	    json_integer_value(json_object_get(st, "error_count")),
	    (long long)json_integer_value(json_object_get(st, "max_errors")));
}

/* The requirement analysis' dimensions, when it ran. */
static void
tunereport_ra(struct sbuf *b, const json_t *st)
{
	const json_t	*ra = json_object_get(st, "requirement_analysis"), *e;
	size_t		 i;

	if (json_is_object(ra)) {
		sbuf_printf(b, "\n## Requirement analysis (%s, coverage "
		    "%lld%%)\n\n| Dimension | Category | Confidence | Text |\n"
		    "|---|---|---|---|\n", json_string_value(json_object_get(ra,
		    "status")), (long long)json_number_value(json_object_get(
		    json_object_get(ra, "coverage"), "coverage_rate")));
		json_array_foreach(json_object_get(ra, "dimensions"), i, e) {
			sbuf_printf(b, "| %s | %s | %.2f | ",
			    json_string_value(json_object_get(e, "id")),
			    json_string_value(json_object_get(e,
			    "inferred_category")), json_number_value(
			    json_object_get(e, "confidence")));
			tunereport_cell(b, e, "description");
			sbuf_puts(b, " |\n");
		}
	}
}

/* Each diagnosis area, then the issues left. */
static void
tunereport_diag(struct sbuf *b, const json_t *st)
{
	const json_t	*e, *d;
	const char	*k;
	size_t		 i;

	sbuf_puts(b, "\n## Diagnosis\n\n| Area | Status | Issues | "
	    "Severity |\n|---|---|---|---|\n");
	json_object_foreach((json_t *)json_object_get(st, "diagnosis"), k, d)
		if (json_is_object(d))
			sbuf_printf(b, "| %s | %s | %lld | %s |\n", k,
			    json_string_value(json_object_get(d, "status")),
			    (long long)json_integer_value(json_object_get(d,
			    "issues_found")), json_string_value(
			    json_object_get(d, "severity")));
		else
			sbuf_printf(b, "| %s | not run | - | - |\n", k);
	sbuf_printf(b, "\n## Issues left (%zu)\n\n",
	    json_array_size(json_object_get(st, "issues")));
	if (json_array_size(json_object_get(st, "issues")) > 0)
		sbuf_puts(b, "| Id | Severity | Type | File | Description |\n"
		    "|---|---|---|---|---|\n");
	json_array_foreach(json_object_get(st, "issues"), i, e) {
		sbuf_printf(b, "| %s | %s | %s | ",
		    json_string_value(json_object_get(e, "id")),
		    json_string_value(json_object_get(e, "severity")),
		    json_string_value(json_object_get(e, "type")));
		tunereport_cell(b, json_object_get(e, "location"), "file");
		sbuf_puts(b, " | ");
		tunereport_cell(b, e, "description");
		sbuf_puts(b, " |\n");
	}
}

/* The fixes proposed and what became of each, then the errors. */
static void
tunereport_fixes(struct sbuf *b, const json_t *st)
{
	const json_t	*e, *d;
	size_t		 i, j;

	sbuf_printf(b, "\n## Fixes (%zu proposed)\n\n",
	    json_array_size(json_object_get(st, "proposed_fixes")));
	if (json_array_size(json_object_get(st, "proposed_fixes")) > 0)
		sbuf_puts(b, "| Id | Strategy | Files | Outcome | "
		    "Description |\n|---|---|---|---|---|\n");
	json_array_foreach(json_object_get(st, "proposed_fixes"), i, e) {
		sbuf_printf(b, "| %s | %s | ",
		    json_string_value(json_object_get(e, "id")),
		    json_string_value(json_object_get(e, "strategy")));
		json_array_foreach(json_object_get(e, "changes"), j, d) {
			sbuf_puts(b, j > 0 ? ", " : "");
			tunereport_cell(b, d, "file");
		}
		sbuf_printf(b, " | %s | ", tunereport_fate(st, e));
		tunereport_cell(b, e, "description");
		sbuf_puts(b, " |\n");
	}
	if (json_array_size(json_object_get(st, "errors")) > 0)
		sbuf_puts(b, "\n## Errors\n\n");
	json_array_foreach(json_object_get(st, "errors"), i, e) {
		sbuf_puts(b, "- ");
		tunereport_cell(b, e, "action");
		sbuf_puts(b, ": ");
		tunereport_cell(b, e, "message");
		sbuf_puts(b, "\n");
	}
}

/* The report; the caller frees it. */
char *
tunereport_render(const json_t *st)
{
	struct sbuf	 b = { NULL, 0, 0 };

	tunereport_head(&b, st);
	tunereport_ra(&b, st);
	tunereport_diag(&b, st);
	tunereport_fixes(&b, st);
	return b.p;
}
