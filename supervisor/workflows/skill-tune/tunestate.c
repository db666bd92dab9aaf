/*
 * tunestate.c: the TuningState document of seed 002: the initial
 * template, every member's rule (the engine's rule checker, state_check),
 * the cross-field rules, and its durable write (checked first, then
 * progress_replace: temp, fsync, rename, fsync of the directory).
 */
#include <config.h>

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "progress.h"
#include "state.h"
#include "tuneint.h"
#include "xmalloc.h"

#define R		STATE_R
#define R_INT		STATE_R_INT
#define R_ENUM		STATE_R_ENUM
#define R_SUB		STATE_R_SUB
#define R_END		STATE_R_END
#define OPT		0
#define REQN		(V_REQ | V_NULL)

static const char *const st_status[] = { "pending", "running", "completed",
	"failed", NULL };
static const char *const st_mode[] = { "sequential", "autonomous", NULL };
static const char *const st_gate[] = { "pass", "review", "fail", NULL };
static const char *const st_dstatus[] = { "completed", "skipped", "failed",
	NULL };
static const char *const st_dsev[] = { "critical", "high", "medium", "low",
	"none", NULL };
static const char *const st_hml[] = { "high", "medium", "low", NULL };
static const char *const st_lmh[] = { "low", "medium", "high", NULL };
static const char *const st_red[] = { "state_schema", "strategy_mapping",
	"type_definition", "other", NULL };
static const char *const st_con[] = { "priority", "mapping", "definition",
	NULL };
static const char *const st_fchange[] = { "create", "modify", "delete",
	NULL };
static const char *const st_verify[] = { "pass", "fail", "pending", NULL };
static const char *const st_result[] = { "success", "failure", "skipped",
	NULL };
static const char *const st_rstatus[] = { "pending", "completed",
	"needs_clarification", NULL };
static const char *const st_cov[] = { "satisfied", "partial", "unsatisfied",
	NULL };
static const char *const st_amb[] = { "multi_category", "vague_description",
	"conflicting_keywords", NULL };

static const struct state_vrule r_target[] = {
	R("name", V_STR, REQN), R("path", V_STR, REQN),
	R_ENUM("execution_mode", REQN, st_mode),
	R("phases", V_STRS, V_REQ), R("specs", V_STRS, V_REQ), R_END
};
static const struct state_vrule r_evidence[] = {
	R("file", V_STR, V_REQ), R_INT("line", OPT, 0),
	R("pattern", V_STR, V_REQ), R("context", V_STR, V_REQ),
	R("severity", V_STR, V_REQ), R_END
};
static const struct state_vrule r_details[] = {
	R("patterns_checked", V_STRS, V_REQ),
	R("patterns_matched", V_STRS, V_REQ),
	R_SUB("evidence", V_LIST, V_REQ, r_evidence),
	R("recommendations", V_STRS, V_REQ), R_END
};
#define DIAG_RULES \
	R_ENUM("status", V_REQ, st_dstatus), R_INT("issues_found", V_REQ, 0), \
	R_ENUM("severity", V_REQ, st_dsev), \
	R_INT("execution_time_ms", V_REQ, 0), \
	R_SUB("details", V_OBJ, V_REQ, r_details)
/* exported through tunestate_check_diag for the merge */
static const struct state_vrule r_diag[] = { DIAG_RULES, R_END };
static const struct state_vrule r_redundancy[] = {
	R("id", V_STR, V_REQ), R_ENUM("type", V_REQ, st_red),
	R("files", V_STRS, V_REQ), R("description", V_STR, V_REQ),
	R_ENUM("severity", V_REQ, st_hml),
	R("merge_suggestion", V_STR, V_REQ), R_END
};
static const struct state_vrule r_definition[] = {
	R("file", V_STR, V_REQ), R("value", V_STR, V_REQ),
	R("location", V_STR, OPT), R_END
};
static const struct state_vrule r_conflict[] = {
	R("id", V_STR, V_REQ), R_ENUM("type", V_REQ, st_con),
	R("files", V_STRS, V_REQ), R("key", V_STR, V_REQ),
	R_SUB("definitions", V_LIST, V_REQ, r_definition),
	R("resolution_suggestion", V_STR, V_REQ), R_END
};
static const struct state_vrule r_docs[] = {
	DIAG_RULES,
	R_SUB("redundancies", V_LIST, V_REQ, r_redundancy),
	R_SUB("conflicts", V_LIST, V_REQ, r_conflict), R_END
};
static const struct state_vrule r_diagnosis[] = {
	R_SUB("context", V_OBJ, REQN, r_diag),
	R_SUB("memory", V_OBJ, REQN, r_diag),
	R_SUB("dataflow", V_OBJ, REQN, r_diag),
	R_SUB("agent", V_OBJ, REQN, r_diag),
	R_SUB("docs", V_OBJ, REQN, r_docs),
	R_SUB("token_consumption", V_OBJ, REQN, r_diag), R_END
};
static const struct state_vrule r_location[] = {
	R("file", V_STR, V_REQ), R_INT("line_start", OPT, 0),
	R_INT("line_end", OPT, 0), R("phase", V_STR, OPT), R_END
};
static const struct state_vrule r_issue[] = {
	R("id", V_STR, V_REQ), R_ENUM("type", V_REQ, tune_issue_types),
	R_ENUM("severity", V_REQ, tune_severities),
	R_INT("priority", V_REQ, 1),
	R_SUB("location", V_OBJ, V_REQ, r_location),
	R("description", V_STR, V_REQ), R("evidence", V_STRS, V_REQ),
	R("root_cause", V_STR, V_REQ), R("impact", V_STR, V_REQ),
	R("suggested_fix", V_STR, V_REQ),
	R("related_issues", V_STRS, V_REQ), R_END
};
static const struct state_vrule r_by_sev[] = {
	R_INT("critical", V_REQ, 0), R_INT("high", V_REQ, 0),
	R_INT("medium", V_REQ, 0), R_INT("low", V_REQ, 0), R_END
};
static const struct state_vrule r_change[] = {
	R("file", V_STR, V_REQ), R_ENUM("action", V_REQ, st_fchange),
	R("old_content", V_STR, OPT), R("new_content", V_STR, OPT),
	R("diff", V_STR, OPT), R_END
};
static const struct state_vrule r_fix[] = {
	R("id", V_STR, V_REQ), R("issue_ids", V_STRS, V_REQ),
	R_ENUM("strategy", V_REQ, tune_strategies),
	R("description", V_STR, V_REQ), R("rationale", V_STR, V_REQ),
	R_SUB("changes", V_LIST, V_REQ, r_change),
	R_ENUM("risk", V_REQ, st_lmh), R("estimated_impact", V_STR, V_REQ),
	R("verification_steps", V_STRS, V_REQ), R_END
};
static const struct state_vrule r_applied[] = {
	R("fix_id", V_STR, V_REQ), R("applied_at", V_TS, V_REQ),
	R("success", V_BOOL, V_REQ), R("backup_path", V_STR, V_REQ),
	R_ENUM("verification_result", V_REQ, st_verify),
	R("rollback_available", V_BOOL, V_REQ), R_END
};
static const struct state_vrule r_history[] = {
	R("action", V_STR, V_REQ), R("started_at", V_TS, V_REQ),
	R("completed_at", V_TS, V_REQ), R_ENUM("result", V_REQ, st_result),
	R("output_files", V_STRS, V_REQ), R_END
};
static const struct state_vrule r_error[] = {
	R("action", V_STR, V_REQ), R("message", V_STR, V_REQ),
	R("timestamp", V_TS, V_REQ), R("recoverable", V_BOOL, V_REQ), R_END
};
static const struct state_vrule r_dimension[] = {
	R("id", V_STR, V_REQ), R("description", V_STR, V_REQ),
	R("keywords", V_STRS, V_REQ), R("inferred_category", V_STR, V_REQ),
	R("confidence", V_NUM, V_REQ), R_END
};
static const struct state_vrule r_taxonomy[] = {
	R("category", V_STR, V_REQ), R("pattern_ids", V_STRS, V_REQ),
	R("severity_hint", V_STR, V_REQ), R_END
};
static const struct state_vrule r_strategy[] = {
	R("strategies", V_STRS, V_REQ), R("risk_levels", V_STRS, V_REQ), R_END
};
static const struct state_vrule r_match[] = {
	R("dimension_id", V_STR, V_REQ),
	R_SUB("taxonomy_match", V_OBJ, REQN, r_taxonomy),
	R_SUB("strategy_match", V_OBJ, REQN, r_strategy),
	R("has_fix", V_BOOL, V_REQ), R_END
};
static const struct state_vrule r_coverage[] = {
	R_INT("total_dimensions", V_REQ, 0), R_INT("with_detection", V_REQ, 0),
	R_INT("with_fix_strategy", V_REQ, 0), R("coverage_rate", V_PCT, V_REQ),
	R_ENUM("status", V_REQ, st_cov), R_END
};
static const struct state_vrule r_ambiguity[] = {
	R("dimension_id", V_STR, V_REQ), R_ENUM("type", V_REQ, st_amb),
	R("description", V_STR, V_REQ),
	R("possible_interpretations", V_STRS, V_REQ),
	R("needs_clarification", V_BOOL, V_REQ), R_END
};
static const struct state_vrule r_req[] = {
	R_ENUM("status", V_REQ, st_rstatus), R("analyzed_at", V_TS, V_REQ),
	R_SUB("dimensions", V_LIST, V_REQ, r_dimension),
	R_SUB("spec_matches", V_LIST, V_REQ, r_match),
	R_SUB("coverage", V_OBJ, V_REQ, r_coverage),
	R_SUB("ambiguities", V_LIST, V_REQ, r_ambiguity), R_END
};
static const struct state_vrule r_state[] = {
	R_ENUM("status", V_REQ, st_status),
	R("started_at", V_TS, REQN), R("updated_at", V_TS, REQN),
	R_SUB("target_skill", V_OBJ, V_REQ, r_target),
	R("user_issue_description", V_STR, V_REQ),
	R("focus_areas", V_STRS, V_REQ),
	R_SUB("diagnosis", V_OBJ, V_REQ, r_diagnosis),
	R_SUB("issues", V_LIST, V_REQ, r_issue),
	R_SUB("issues_by_severity", V_OBJ, V_REQ, r_by_sev),
	R_SUB("proposed_fixes", V_LIST, V_REQ, r_fix),
	R_SUB("applied_fixes", V_LIST, V_REQ, r_applied),
	R("pending_fixes", V_STRS, V_REQ),
	R_INT("iteration_count", V_REQ, 0), R_INT("max_iterations", V_REQ, 1),
	R("quality_score", V_PCT, V_REQ), R_ENUM("quality_gate", V_REQ, st_gate),
	R("completed_actions", V_STRS, V_REQ),
	R("current_action", V_STR, REQN),
	R_SUB("action_history", V_LIST, V_REQ, r_history),
	R_SUB("errors", V_LIST, V_REQ, r_error),
	R_INT("error_count", V_REQ, 0), R_INT("max_errors", V_REQ, 1),
	R("work_dir", V_STR, REQN), R("backup_dir", V_STR, REQN),
	R("final_report", V_STR, REQN),
	R_SUB("requirement_analysis", V_OBJ, REQN, r_req), R_END
};

static int	tunestate_rules(const json_t *, const struct state_vrule *,
		    char **);
static int	tunestate_join(struct strv *, char **);

/* seed 002's "Initial State Template", member for member, in its order */
static const char tune_template[] =
	"{\"status\":\"pending\",\"started_at\":null,\"updated_at\":null,"
	"\"target_skill\":{\"name\":null,\"path\":null,"
	"\"execution_mode\":null,\"phases\":[],\"specs\":[]},"
	"\"user_issue_description\":\"\",\"focus_areas\":[],"
	"\"diagnosis\":{\"context\":null,\"memory\":null,\"dataflow\":null,"
	"\"agent\":null,\"docs\":null,\"token_consumption\":null},"
	"\"issues\":[],\"issues_by_severity\":{\"critical\":0,\"high\":0,"
	"\"medium\":0,\"low\":0},\"proposed_fixes\":[],\"applied_fixes\":[],"
	"\"pending_fixes\":[],\"iteration_count\":0,\"max_iterations\":5,"
	"\"quality_score\":0,\"quality_gate\":\"fail\","
	"\"completed_actions\":[],\"current_action\":null,"
	"\"action_history\":[],\"errors\":[],\"error_count\":0,"
	"\"max_errors\":3,\"work_dir\":null,\"backup_dir\":null,"
	"\"final_report\":null,\"requirement_analysis\":null}";

/*
 * A new run: the template with the caller's description, focus, limits
 * and paths; started (status running) by the driver's first action.
 */
json_t *
tunestate_new(const char *skill, const char *desc, const char *work,
    const char *const *focus, size_t nfocus, long long max_iter,
    long long max_err, const char *now)
{
	json_t	*st = json_loads(tune_template, 0, NULL);
	json_t	*fa = json_object_get(st, "focus_areas");
	char	*backup;
	size_t	 i;

	json_object_set_new(json_object_get(st, "target_skill"), "path",
	    json_string(skill));
	json_object_set_new(st, "user_issue_description", json_string(desc));
	for (i = 0; i < nfocus; i++)
		json_array_append_new(fa, json_string(focus[i]));
	json_object_set_new(st, "max_iterations", json_integer(max_iter));
	json_object_set_new(st, "max_errors", json_integer(max_err));
	json_object_set_new(st, "work_dir", json_string(work));
	xasprintf(&backup, "%s/backups", work);
	json_object_set_new(st, "backup_dir", json_string(backup));
	free(backup);
	json_object_set_new(st, "started_at", json_string(now));
	json_object_set_new(st, "updated_at", json_string(now));
	return st;
}

/* Whether every string of list a is one of the ids in objects b[key]. */
static const char *
tunestate_ids_in(const json_t *a, const json_t *b, const char *key)
{
	const json_t	*x, *y;
	size_t		 i, j;

	json_array_foreach(a, i, x) {
		json_array_foreach(b, j, y)
			if (json_equal(x, json_object_get(y, key)))
				break;
		if (j == json_array_size(b))
			return json_string_value(x);
	}
	return NULL;
}

/*
 * The rules across members: the severity counts are the issues', the
 * fixes named pending or applied were proposed, an ended run says why.
 */
static void
tunestate_cross(const json_t *st, struct strv *errs, int *n)
{
	static const char *const sev[] = { "critical", "high", "medium",
	    "low" };
	const json_t	*is = json_object_get(st, "issues"), *e;
	const char	*bad;
	long long	 cnt[4] = { 0, 0, 0, 0 }, v;
	char		*msg;
	size_t		 i;
	int		 r;

	json_array_foreach(is, i, e)
		if ((r = tune_severity_rank(json_string_value(
		    json_object_get(e, "severity")))) >= 0 && r < 4)
			cnt[r]++;
	for (i = 0; i < 4; i++) {
		if (!state_json_int(json_object_get(json_object_get(st,
		    "issues_by_severity"), sev[i]), &v) || v == cnt[i])
			continue;
		xasprintf(&msg, "issues_by_severity.%s: %lld, but %lld issues "
		    "have it", sev[i], v, cnt[i]);
		strv_push(errs, msg);
		free(msg);
		(*n)++;
	}
	if ((bad = tunestate_ids_in(json_object_get(st, "pending_fixes"),
	    json_object_get(st, "proposed_fixes"), "id")) != NULL) {
		xasprintf(&msg, "pending_fixes: '%.40s' is no proposed fix",
		    bad);
		strv_push(errs, msg);
		free(msg);
		(*n)++;
	}
	json_array_foreach(json_object_get(st, "applied_fixes"), i, e) {
		json_t	*one = json_pack("[O]", json_object_get(e, "fix_id"));

		bad = tunestate_ids_in(one, json_object_get(st,
		    "proposed_fixes"), "id");
		if (bad != NULL) {
			xasprintf(&msg, "applied_fixes[%zu].fix_id: '%.40s' is "
			    "no proposed fix", i, bad);
			strv_push(errs, msg);
			free(msg);
			(*n)++;
		}
		json_decref(one);
	}
}

/*
 * Every error at once, "path: message" joined by "; ", so a broken
 * write names all that is wrong.  Unknown members are kept and fine.
 */
int
tunestate_check(const json_t *st, char **err)
{
	struct strv	 errs = { NULL, 0 };
	int		 n = 0;

	if (tunestate_rules(st, r_state, err) != 0)
		return -1;
	tunestate_cross(st, &errs, &n);
	return tunestate_join(&errs, err);
}

/* Errors "; "-joined into *err (-1), or 0 when there are none. */
static int
tunestate_join(struct strv *errs, char **err)
{
	struct sbuf	 b = { NULL, 0, 0 };
	size_t		 i;

	*err = NULL;
	if (errs->n == 0)
		return 0;
	for (i = 0; i < errs->n; i++)
		sbuf_printf(&b, "%s%s", i > 0 ? "; " : "", errs->v[i]);
	*err = b.p;
	strv_clear(errs);
	return -1;
}

/* Every error of a rule check, joined, into *err. */
static int
tunestate_rules(const json_t *o, const struct state_vrule *rules, char **err)
{
	struct strv	 errs = { NULL, 0 };

	(void)state_check_rules(o, rules, &errs);
	return tunestate_join(&errs, err);
}

/* A role's DiagnosisResult (docs: with its lists) checked alone. */
int
tunestate_check_diag(const json_t *d, int docs, char **err)
{
	return tunestate_rules(d, docs ? r_docs : r_diag, err);
}

/* One proposed Fix checked alone. */
int
tunestate_check_fix(const json_t *f, char **err)
{
	return tunestate_rules(f, r_fix, err);
}

/*
 * Seed 002's rule: validate, then write the whole state.  Never a
 * partial file: a reader sees the last state or this one.
 */
int
tunestate_save(int wfd, const json_t *st, char **err)
{
	char	*text, *why;
	int	 rc;

	if (tunestate_check(st, &why) != 0) {
		xasprintf(err, "state.json: not written, the new state is "
		    "invalid: %s", why);
		free(why);
		return -1;
	}
	text = json_dumps(st, JSON_INDENT(2));
	rc = progress_replace(wfd, "state.json", "state.json", text,
	    strlen(text), err);
	free(text);
	return rc;
}

/*
 * The state of a run to resume.  The temp files a kill left beside it
 * (state.json's, issues.json's, report.md's: NAME.PID.tmp) are removed:
 * the work directory is the run's own.
 */
int
tunestate_load(int wfd, json_t **out, char **err)
{
	json_error_t	 je;
	struct stat	 sb;
	struct dirent	*de;
	DIR		*d;
	int		 fd, dfd;

	*out = NULL;
	/* its own descriptor: a dup would share (and move) wfd's offset */
	if ((dfd = openat(wfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) !=
	    -1 && (d = fdopendir(dfd)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (strlen(de->d_name) > 4 && strcmp(de->d_name +
			    strlen(de->d_name) - 4, ".tmp") == 0)
				unlinkat(wfd, de->d_name, 0);
		closedir(d);
	} else if (dfd != -1)
		close(dfd);
	if ((fd = openat(wfd, "state.json", O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		xasprintf(err, "state.json: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_size > STATE_MAX_SIZE) {
		xasprintf(err, "state.json: not a regular file of at most "
		    "%d MiB", STATE_MAX_SIZE >> 20);
		close(fd);
		return -1;
	}
	*out = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
	close(fd);
	if (*out == NULL) {
		xasprintf(err, "state.json:%d: %s", je.line, je.text);
		return -1;
	}
	if (tunestate_check(*out, err) != 0) {
		json_decref(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* Seed 002: updated_at on every change. */
void
tunestate_touch(json_t *st, const char *now)
{
	json_object_set_new(st, "updated_at", json_string(now));
}

/* An action starts: current_action (its history entry comes at its end). */
void
tunestate_action_begin(json_t *st, const char *action, const char *now)
{
	json_object_set_new(st, "current_action", json_string(action));
	tunestate_touch(st, now);
}

/*
 * An action ended: its action_history entry, completed_actions on
 * success, current_action cleared.
 */
void
tunestate_action_end(json_t *st, const char *action, const char *result,
    const char *t0, const char *now, const json_t *files)
{
	json_array_append_new(json_object_get(st, "action_history"),
	    json_pack("{s:s, s:s, s:s, s:s, s:o}", "action", action,
	    "started_at", t0 != NULL ? t0 : now, "completed_at", now,
	    "result", result, "output_files", files != NULL ?
	    json_deep_copy(files) : json_array()));
	if (strcmp(result, "success") == 0)
		json_array_append_new(json_object_get(st,
		    "completed_actions"), json_string(action));
	json_object_set_new(st, "current_action", json_null());
	tunestate_touch(st, now);
}

/* An errors entry and the count the budget reads. */
void
tunestate_error(json_t *st, const char *action, const char *msg,
    int recoverable, const char *now)
{
	long long	n = 0;

	json_array_append_new(json_object_get(st, "errors"), json_pack(
	    "{s:s, s:s, s:s, s:b}", "action", action, "message", msg,
	    "timestamp", now, "recoverable", recoverable));
	(void)state_json_int(json_object_get(st, "error_count"), &n);
	json_object_set_new(st, "error_count", json_integer(n + 1));
	tunestate_touch(st, now);
}

/* Seed 002: error_count >= max_errors ends the run failed. */
int
tunestate_over_budget(const json_t *st)
{
	long long	n = 0, max = 3;

	(void)state_json_int(json_object_get(st, "error_count"), &n);
	(void)state_json_int(json_object_get(st, "max_errors"), &max);
	return n >= max;
}

/* Names of the *.md files in dir (sorted), as "dir/name". */
static void
tunestate_list_md(int sfd, const char *dir, json_t *out)
{
	struct dirent	*de;
	struct strv	 names = { NULL, 0 };
	DIR		*d;
	size_t		 i, j, len;
	char		*p;
	int		 fd;

	if ((fd = openat(sfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len > 3 && de->d_name[0] != '.' &&
		    strcmp(de->d_name + len - 3, ".md") == 0)
			strv_push(&names, de->d_name);
	}
	closedir(d);
	for (i = 1; i < names.n; i++)		/* few: insertion sort */
		for (j = i; j > 0 && strcmp(names.v[j - 1], names.v[j]) > 0;
		    j--) {
			p = names.v[j];
			names.v[j] = names.v[j - 1];
			names.v[j - 1] = p;
		}
	for (i = 0; i < names.n; i++) {
		xasprintf(&p, "%s/%s", dir, names.v[i]);
		json_array_append_new(out, json_string(p));
		free(p);
	}
	strv_clear(&names);
}

/*
 * target_skill from the folder: its name from SKILL.md's front matter
 * (else the folder's), its phase and spec files, and its execution mode
 * (autonomous when SKILL.md says so or it has phases/actions/).
 */
int
tunestate_target(json_t *st, const char *skill, char **err)
{
	json_t		*t = json_object_get(st, "target_skill");
	struct stat	 sb;
	const char	*base, *p, *e;
	char		 text[16384];
	ssize_t		 n;
	char		*name = NULL;
	int		 sfd, fd, autonomous = 0;

	*err = NULL;
	if ((sfd = open(skill, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		xasprintf(err, "%s: %s", skill, strerror(errno));
		return -1;
	}
	if ((fd = openat(sfd, "SKILL.md", O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		xasprintf(err, "%s: no SKILL.md (%s): not a skill folder",
		    skill, strerror(errno));
		close(sfd);
		return -1;
	}
	n = read(fd, text, sizeof text - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	if (strncmp(text, "---", 3) == 0 && (p = strstr(text, "\nname:")) !=
	    NULL && (e = strstr(text + 3, "\n---")) != NULL && p < e) {
		p += 7;
		p += strspn(p, " \t\"'");
		name = xstrndup(p, strcspn(p, "\"'\r\n"));
	}
	autonomous = strcasestr(text, "autonomous") != NULL ||
	    (fstatat(sfd, "phases/actions", &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(sb.st_mode));
	base = strrchr(skill, '/');
	base = base != NULL && base[1] != '\0' ? base + 1 : skill;
	json_object_set_new(t, "name", json_string(name != NULL && *name !=
	    '\0' ? name : base));
	json_object_set_new(t, "execution_mode", json_string(autonomous ?
	    "autonomous" : "sequential"));
	json_array_clear(json_object_get(t, "phases"));
	json_array_clear(json_object_get(t, "specs"));
	tunestate_list_md(sfd, "phases", json_object_get(t, "phases"));
	tunestate_list_md(sfd, "specs", json_object_get(t, "specs"));
	free(name);
	close(sfd);
	return 0;
}
