/*
 * tunemerge.c: what the roles' answers become in the TuningState: a
 * diagnosis role's DiagnosisResult into diagnosis.ROLE (its issues kept
 * there), every role's issues merged into issues[] with ids, priorities
 * and the severity counts, the quality gate (never a pass while a role
 * failed), the fix role's proposals, and a fix's verification verdict.
 * Pure: no I/O.
 */
#include <config.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "tuneint.h"
#include "xmalloc.h"

/*
 * The one JSON object of a worker's detailed output.  An agent CLI may
 * wrap it in a fence or a sentence: the text from the first '{' to the
 * last '}' is what is parsed.
 */
json_t *
tunemerge_detail(const char *text, char **err)
{
	json_error_t	 je;
	const char	*a, *b;
	json_t		*j;

	*err = NULL;
	if (text == NULL || (a = strchr(text, '{')) == NULL ||
	    (b = strrchr(text, '}')) == NULL || b < a) {
		*err = xstrdup("its detailed output holds no JSON object");
		return NULL;
	}
	j = json_loadb(a, (size_t)(b - a + 1), JSON_REJECT_DUPLICATES, &je);
	if (j == NULL || !json_is_object(j)) {
		xasprintf(err, "its detailed output is not one JSON object: %s",
		    j == NULL ? je.text : "not an object");
		json_decref(j);
		return NULL;
	}
	return j;
}

/* A string member, or dflt. */
static const char *
tunemerge_str(const json_t *o, const char *k, const char *dflt)
{
	const char	*s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : dflt;
}

/* A member that must be an array of strings: made one if absent. */
static void
tunemerge_strs(json_t *o, const char *k)
{
	json_t	*a = json_object_get(o, k);

	if (!json_is_array(a))
		json_object_set_new(o, k, json_array());
}

/*
 * One issue as a role gave it, with the members the seed requires and
 * the role may leave out filled in.  -1 when it lacks what cannot be
 * made up (a known type, a severity, a file, a description).
 */
static int
tunemerge_issue_norm(json_t *is, char **err)
{
	static const char *const text[] = { "root_cause", "impact",
	    "suggested_fix" };
	const char	*ty = tunemerge_str(is, "type", NULL);
	json_t		*loc = json_object_get(is, "location");
	size_t		 i;
	int		 ok = 0;

	for (i = 0; ty != NULL && tune_issue_types[i] != NULL; i++)
		ok |= strcmp(ty, tune_issue_types[i]) == 0;
	if (!ok || tune_severity_rank(tunemerge_str(is, "severity", NULL)) <
	    0 || tune_severity_rank(tunemerge_str(is, "severity", NULL)) > 3 ||
	    !json_is_string(json_object_get(loc, "file")) ||
	    !json_is_string(json_object_get(is, "description"))) {
		xasprintf(err, "an issue needs a known type, a severity "
		    "(critical|high|medium|low), location.file and a "
		    "description");
		return -1;
	}
	for (i = 0; i < 3; i++)
		if (!json_is_string(json_object_get(is, text[i])))
			json_object_set_new(is, text[i], json_string(""));
	tunemerge_strs(is, "evidence");
	tunemerge_strs(is, "related_issues");
	return 0;
}

/* Issues from evidence, for a role that gave evidence and no issues. */
static json_t *
tunemerge_from_evidence(int role, const json_t *d)
{
	json_t		*out = json_array(), *ev;
	const char	*sev, *dsev = tunemerge_str(d, "severity", "medium");
	char		*desc, *line;
	size_t		 i;

	json_array_foreach(json_object_get(json_object_get(d, "details"),
	    "evidence"), i, ev) {
		sev = tunemerge_str(ev, "severity", dsev);
		if (tune_severity_rank(sev) < 0 || tune_severity_rank(sev) > 3)
			sev = tune_severity_rank(dsev) >= 0 &&
			    tune_severity_rank(dsev) <= 3 ? dsev : "medium";
		/* stable across runs: pattern and file, not the line text */
		xasprintf(&desc, "%s in %s", tunemerge_str(ev, "pattern", "?"),
		    tunemerge_str(ev, "file", "?"));
		xasprintf(&line, "%s:%lld: %s", tunemerge_str(ev, "file", "?"),
		    (long long)json_integer_value(json_object_get(ev, "line")),
		    tunemerge_str(ev, "context", ""));
		json_array_append_new(out, json_pack("{s:s, s:s, s:{s:s}, "
		    "s:s, s:[s], s:s, s:s, s:s, s:[]}", "type",
		    tune_categories[role].issue_type, "severity", sev, "location", "file",
		    tunemerge_str(ev, "file", "?"), "description", desc,
		    "evidence", line, "root_cause", "", "impact", "",
		    "suggested_fix", "", "related_issues"));
		free(desc);
		free(line);
	}
	return out;
}

/*
 * A diagnosis role's answer into diagnosis.ROLE: checked against the
 * seed's DiagnosisResult (DocsDiagnosisResult for docs), its issues
 * normalised and kept beside it (`issues`: what the merge and a fix's
 * verification read), issues_found and severity made to agree with them.
 */
int
tunemerge_diagnosis(json_t *st, const char *role, const json_t *detail,
    char **err)
{
	json_t		*d = json_deep_copy(detail), *is, *e;
	const char	*worst = "none";
	size_t		 i;
	int		 r;

	*err = NULL;
	for (r = 0; r < TUNE_NDIAG; r++)
		if (strcmp(role, tune_categories[r].role) == 0)
			break;
	if (r == TUNE_NDIAG) {
		xasprintf(err, "%s: not a diagnosis role", role);
		json_decref(d);
		return -1;
	}
	if (r == TUNE_DOCS) {
		if (!json_is_array(json_object_get(d, "redundancies")))
			json_object_set_new(d, "redundancies", json_array());
		if (!json_is_array(json_object_get(d, "conflicts")))
			json_object_set_new(d, "conflicts", json_array());
	}
	is = json_object_get(d, "issues");
	if (is == NULL)
		json_object_set_new(d, "issues", (is =
		    tunemerge_from_evidence(r, d)));
	if (!json_is_array(is)) {
		*err = xstrdup("issues: must be an array");
		json_decref(d);
		return -1;
	}
	json_array_foreach(is, i, e) {
		if (!json_is_object(e) || tunemerge_issue_norm(e, err) != 0) {
			if (*err == NULL)
				*err = xstrdup("an issue must be an object");
			json_decref(d);
			return -1;
		}
		if (tune_severity_rank(tunemerge_str(e, "severity", NULL)) <
		    tune_severity_rank(worst))
			worst = tunemerge_str(e, "severity", NULL);
	}
	json_object_set_new(d, "issues_found", json_integer((json_int_t)
	    json_array_size(is)));
	json_object_set_new(d, "severity", json_string(worst));
	if (tunestate_check_diag(d, r == TUNE_DOCS, err) != 0) {
		json_decref(d);
		return -1;
	}
	json_object_set_new(json_object_get(st, "diagnosis"), role, d);
	return 0;
}

/* An issue's identity across runs: type, file, description. */
char *
tunemerge_key(const json_t *is)
{
	char	*k;

	xasprintf(&k, "%s|%s|%s", tunemerge_str(is, "type", ""),
	    tunemerge_str(json_object_get(is, "location"), "file", ""),
	    tunemerge_str(is, "description", ""));
	return k;
}

/* Most severe first, then in the roles' order (a stable sort: few). */
static void
tunemerge_sort(json_t *all)
{
	json_t	*a, *b;
	size_t	 i, j;

	for (i = 1; i < json_array_size(all); i++)
		for (j = i; j > 0; j--) {
			a = json_array_get(all, j - 1);
			b = json_array_get(all, j);
			if (tune_severity_rank(tunemerge_str(a, "severity",
			    "")) <= tune_severity_rank(tunemerge_str(b,
			    "severity", "")))
				break;
			json_incref(a);
			json_array_set(all, j - 1, b);
			json_array_set_new(all, j, a);
		}
}

/*
 * issues[] made again from every role's issues: one per key (the first
 * role's), most severe first, ids ISS-001.. and priority 1.. in that
 * order, related_issues the others in the same file; then the gate.
 */
void
tunemerge_issues(json_t *st)
{
	json_t		*all = json_array(), *d, *e, *f, *rel;
	struct strv	 keys = { NULL, 0 };
	char		*k, id[32];
	size_t		 i, j, r;
	int		 dup;

	for (r = 0; r < TUNE_NDIAG; r++) {
		d = json_object_get(json_object_get(st, "diagnosis"),
		    tune_categories[r].role);
		json_array_foreach(json_object_get(d, "issues"), i, e) {
			k = tunemerge_key(e);
			for (j = 0, dup = 0; j < keys.n && !dup; j++)
				dup = strcmp(keys.v[j], k) == 0;
			if (!dup) {
				strv_push(&keys, k);
				json_array_append_new(all, json_deep_copy(e));
			}
			free(k);
		}
	}
	strv_clear(&keys);
	tunemerge_sort(all);
	json_array_foreach(all, i, e) {
		snprintf(id, sizeof id, "ISS-%03zu", i + 1);
		json_object_set_new(e, "id", json_string(id));
		json_object_set_new(e, "priority", json_integer((json_int_t)i +
		    1));
	}
	json_array_foreach(all, i, e) {
		rel = json_array();
		json_array_foreach(all, j, f)
			if (i != j && json_equal(json_object_get(json_object_get(
			    e, "location"), "file"), json_object_get(
			    json_object_get(f, "location"), "file")))
				json_array_append(rel, json_object_get(f, "id"));
		json_object_set_new(e, "related_issues", rel);
	}
	json_object_set_new(st, "issues", all);
	tunemerge_gate(st);
}

/*
 * How many diagnosis roles failed (their worker failed or gave no usable
 * answer) and how many completed, as diagnosis.ROLE says: an area that
 * was not checked is not a clean one.
 */
void
tunemerge_checked(const json_t *st, int *failed, int *completed)
{
	const char	*s;
	int		 r;

	*failed = *completed = 0;
	for (r = 0; r < TUNE_NDIAG; r++) {
		s = tunemerge_str(json_object_get(json_object_get(st,
		    "diagnosis"), tune_categories[r].role), "status", "");
		*failed += strcmp(s, "failed") == 0;
		*completed += strcmp(s, "completed") == 0;
	}
}

/*
 * The gate from the issues left: a score of 100 less 25 per critical,
 * 15 per high, 8 per medium and 3 per low (not below 0); pass at 80 or
 * more with no critical or high issue, review at 60 or more with no
 * critical one, else fail.  A failed diagnosis role fails the gate (what
 * it would have found is unknown), and with none completed the score is
 * 0: no issue found by no one is never a pass.
 */
void
tunemerge_gate(json_t *st)
{
	long long	 c[4] = { 0, 0, 0, 0 }, score;
	const json_t	*e;
	size_t		 i;
	int		 r, failed, completed;

	json_array_foreach(json_object_get(st, "issues"), i, e)
		if ((r = tune_severity_rank(tunemerge_str(e, "severity",
		    ""))) >= 0 && r < 4)
			c[r]++;
	json_object_set_new(st, "issues_by_severity", json_pack("{s:I, s:I, "
	    "s:I, s:I}", "critical", (json_int_t)c[0], "high",
	    (json_int_t)c[1], "medium", (json_int_t)c[2], "low",
	    (json_int_t)c[3]));
	score = 100 - 25 * c[0] - 15 * c[1] - 8 * c[2] - 3 * c[3];
	tunemerge_checked(st, &failed, &completed);
	if (score < 0 || (failed > 0 && completed == 0))
		score = 0;
	json_object_set_new(st, "quality_score", json_integer(score));
	json_object_set_new(st, "quality_gate", json_string(failed > 0 ?
	    "fail" : score >= 80 && c[0] == 0 && c[1] == 0 ? "pass" :
	    score >= 60 && c[0] == 0 ? "review" : "fail"));
}

/* Whether some object of list has member k equal to v. */
static int
tunemerge_has(const json_t *list, const char *k, const json_t *v)
{
	const json_t	*e;
	size_t		 i;

	json_array_foreach(list, i, e)
		if (json_equal(json_object_get(e, k), v))
			return 1;
	return 0;
}

/*
 * The fix role's proposals: each checked as a seed Fix naming known
 * issues; one whose changes equal an earlier proposal's is not taken
 * again (it was applied, or failed and was rolled back); an id already
 * used is replaced by the next free FIX-NNN.  New ones go to
 * proposed_fixes and pending_fixes.  Returns how many were taken, or
 * -1 with *err; rejected proposals are named in *err with 0 or more.
 */
int
tunemerge_fixes(json_t *st, const json_t *detail, const char *now,
    char **err)
{
	json_t		*prop = json_object_get(st, "proposed_fixes");
	json_t		*fixes = json_object_get(detail, "fixes"), *f, *e, *c;
	char		 id[32], *why = NULL, *msg;
	size_t		 i, j, n = 0, next;
	int		 known;

	(void)now;
	*err = NULL;
	if (!json_is_array(fixes)) {
		*err = xstrdup("its detailed output has no \"fixes\" array");
		return -1;
	}
	json_array_foreach(fixes, i, f) {
		c = json_deep_copy(f);
		if (!json_is_string(json_object_get(c, "id")))
			json_object_set_new(c, "id", json_string("FIX-?"));
		if (tunestate_check_fix(c, &why) != 0)
			goto reject;
		known = json_array_size(json_object_get(c, "issue_ids")) > 0;
		json_array_foreach(json_object_get(c, "issue_ids"), j, e)
			known &= tunemerge_has(json_object_get(st, "issues"),
			    "id", e);
		if (!known) {
			why = xstrdup("issue_ids: names no open issue");
			goto reject;
		}
		if (json_array_size(json_object_get(c, "changes")) == 0) {
			why = xstrdup("changes: empty");
			goto reject;
		}
		if (tunemerge_has(prop, "changes", json_object_get(c,
		    "changes"))) {
			json_decref(c);
			continue;	/* proposed before: its fate is known */
		}
		if (tunemerge_has(prop, "id", json_object_get(c, "id")) ||
		    strcmp(json_string_value(json_object_get(c, "id")),
		    "FIX-?") == 0) {
			for (next = json_array_size(prop) + 1;; next++) {
				snprintf(id, sizeof id, "FIX-%03zu", next);
				json_t	*s = json_string(id);
				int	 used = tunemerge_has(prop, "id", s);

				json_decref(s);
				if (!used)
					break;
			}
			json_object_set_new(c, "id", json_string(id));
		}
		json_array_append_new(json_object_get(st, "pending_fixes"),
		    json_copy(json_object_get(c, "id")));
		json_array_append_new(prop, c);
		n++;
		continue;
reject:
		xasprintf(&msg, "%s%sfixes[%zu] refused: %s", *err != NULL ?
		    *err : "", *err != NULL ? "; " : "", i, why);
		free(*err);
		*err = msg;
		free(why);
		why = NULL;
		json_decref(c);
	}
	return (int)n;
}

/* Whether key k is among keys. */
static int
tunemerge_in(const json_t *keys, const char *k)
{
	const json_t	*e;
	size_t		 i;

	json_array_foreach(keys, i, e)
		if (strcmp(json_string_value(e), k) == 0)
			return 1;
	return 0;
}

/*
 * A fix's verification: 1 when none of the issues it addresses is found
 * again by the re-run roles and they found nothing new, else 0 and why.
 */
int
tunemerge_verdict(const json_t *addressed, const json_t *before,
    const json_t *after, char **why)
{
	const json_t	*e;
	size_t		 i;

	*why = NULL;
	json_array_foreach(addressed, i, e)
		if (tunemerge_in(after, json_string_value(e))) {
			xasprintf(why, "still found: %s", json_string_value(e));
			return 0;
		}
	json_array_foreach(after, i, e)
		if (!tunemerge_in(before, json_string_value(e))) {
			xasprintf(why, "a new issue: %s", json_string_value(e));
			return 0;
		}
	return 1;
}
