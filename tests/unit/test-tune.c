/*
 * test-tune.c: skill-tune's pure parts and its files: the TuningState
 * template and rules (seed 002), a round trip that keeps unknown members,
 * requirement analysis, the diagnosis merge, issues and gate, proposals,
 * the verdict, and a fix backed up, applied and rolled back on disk.
 */
#include <config.h>

#include <sys/stat.h>

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "tuneint.h"
#include "xmalloc.h"

static char	t_top[64];

/* Parse a literal fixture; a typo in one is a test bug, reported. */
static json_t *
t_json(const char *text)
{
	json_error_t	 e;
	json_t		*j = json_loads(text, 0, &e);

	if (j == NULL)
		tap_diag("fixture does not parse: %s: %.60s", e.text, text);
	return j;
}

/* A file under the temp root, its directories made. */
static void
t_write(const char *rel, const char *text)
{
	char	 path[512], *p;
	FILE	*fp;

	snprintf(path, sizeof path, "%s/%s", t_top, rel);
	for (p = path + strlen(t_top) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	if ((fp = fopen(path, "w")) != NULL) {
		fputs(text, fp);
		fclose(fp);
	}
}

/* A file's text under the temp root ("" if absent). */
static char *
t_read(const char *rel)
{
	char	 path[512], *buf = xcalloc(1, 65536);
	FILE	*fp;

	snprintf(path, sizeof path, "%s/%s", t_top, rel);
	if ((fp = fopen(path, "r")) != NULL) {
		if (fread(buf, 1, 65535, fp) == 0)
			buf[0] = '\0';
		fclose(fp);
	}
	return buf;
}

static int
t_rm(const char *p, const struct stat *sb, int fl, struct FTW *f)
{
	(void)sb;
	(void)fl;
	(void)f;
	return remove(p);
}

/* The state a run starts with, checked. */
static json_t *
t_state(void)
{
	static const char *const focus[] = { "context", "docs" };

	return tunestate_new("/skill", "prompts are huge", "/skill/.tune/x",
	    focus, 2, 5, 3, "2026-11-23T10:00:00.000Z");
}

/* seed 002's template: every member, the defaults, the rules. */
static void
test_template(void)
{
	static const char *const members[] = { "status", "started_at",
	    "updated_at", "target_skill", "user_issue_description",
	    "focus_areas", "diagnosis", "issues", "issues_by_severity",
	    "proposed_fixes", "applied_fixes", "pending_fixes",
	    "iteration_count", "max_iterations", "quality_score",
	    "quality_gate", "completed_actions", "current_action",
	    "action_history", "errors", "error_count", "max_errors",
	    "work_dir", "backup_dir", "final_report",
	    "requirement_analysis", NULL };
	json_t	*st = t_state();
	char	*err = NULL;
	size_t	 i, n = 0;

	for (i = 0; members[i] != NULL; i++)
		n += json_object_get(st, members[i]) != NULL;
	tap_is_int((long long)n, 26, "template: seed 002's 26 members");
	tap_is_int((long long)json_object_size(st), 26, "template: no other");
	tap_is_str(json_string_value(json_object_get(st, "status")), "pending",
	    "template: pending");
	tap_is_str(json_string_value(json_object_get(st, "quality_gate")),
	    "fail", "template: gate fail");
	tap_is_str(json_string_value(json_object_get(st, "backup_dir")),
	    "/skill/.tune/x/backups", "template: backup_dir in the work dir");
	tap_ok(json_is_null(json_object_get(json_object_get(st, "diagnosis"),
	    "token_consumption")), "template: diagnoses null");
	tap_is_int(tunestate_check(st, &err), 0, "template: valid (%s)",
	    err != NULL ? err : "");
	free(err);
	err = NULL;
	json_decref(st);
}

/* Broken states: every error named, in one message. */
static void
test_rules(void)
{
	json_t	*st = t_state();
	char	*err = NULL;

	json_object_set_new(st, "status", json_string("paused"));
	json_object_set_new(st, "quality_score", json_integer(140));
	json_object_del(st, "errors");
	tap_is_int(tunestate_check(st, &err), -1, "rules: refused");
	tap_ok(err != NULL && strstr(err, "status: 'paused' is not one of "
	    "pending|running|completed|failed") != NULL &&
	    strstr(err, "quality_score: 140 is not within 0-100") != NULL &&
	    strstr(err, "errors: missing") != NULL, "rules: all three named "
	    "(%s)", err != NULL ? err : "");
	free(err);
	err = NULL;
	json_decref(st);
	st = t_state();
	json_array_append_new(json_object_get(st, "pending_fixes"),
	    json_string("FIX-009"));
	tap_is_int(tunestate_check(st, &err), -1, "rules: a pending fix "
	    "nobody proposed");
	tap_ok(err != NULL && strstr(err, "FIX-009") != NULL,
	    "rules: named (%s)", err != NULL ? err : "");
	free(err);
	err = NULL;
	json_object_set_new(json_object_get(st, "issues_by_severity"),
	    "high", json_integer(2));
	json_array_clear(json_object_get(st, "pending_fixes"));
	tap_is_int(tunestate_check(st, &err), -1, "rules: counts that are "
	    "not the issues'");
	free(err);
	err = NULL;
	json_decref(st);
}

/* Written and read back: equal, unknown members (a front end's) kept. */
static void
test_round_trip(void)
{
	json_t	*st = t_state(), *back = NULL;
	char	*err = NULL;
	int	 wfd;

	json_object_set_new(st, "x_frontend_note", json_string("keep me"));
	json_object_set_new(json_object_get(st, "target_skill"), "x_owner",
	    json_string("ada"));
	wfd = open(t_top, O_RDONLY | O_DIRECTORY);
	tap_is_int(tunestate_save(wfd, st, &err), 0, "round trip: written");
	free(err);
	err = NULL;
	tap_is_int(tunestate_load(wfd, &back, &err), 0, "round trip: read");
	free(err);
	err = NULL;
	tap_ok(back != NULL && json_equal(st, back), "round trip: equal, "
	    "unknown members kept");
	json_decref(back);
	json_object_set_new(st, "iteration_count", json_integer(-1));
	tap_is_int(tunestate_save(wfd, st, &err), -1, "round trip: an invalid "
	    "state is not written");
	free(err);
	err = NULL;
	tap_is_int(tunestate_load(wfd, &back, &err), 0, "round trip: the last "
	    "good one stays");
	tap_is_int(json_integer_value(json_object_get(back, "iteration_count")),
	    0, "round trip: its iteration_count");
	json_decref(back);
	t_write("state.json.123.tmp", "{half");
	tap_is_int(tunestate_load(wfd, &back, &err), 0, "round trip: a temp "
	    "file a kill left");
	tap_ok(faccessat(wfd, "state.json.123.tmp", F_OK, 0) != 0,
	    "round trip: ... removed");
	json_decref(back);
	close(wfd);
	json_decref(st);
}

/* The description into dimensions, matches, coverage, ambiguities. */
static void
test_analysis(void)
{
	json_t		*ra, *a;
	const char	*role;

	ra = tunereq_analyze("The prompts are huge. The skill forgets the "
	    "user's constraints; the specs conflict", "2026-11-23T10:00:00Z");
	tap_is_int((long long)json_array_size(json_object_get(ra,
	    "dimensions")), 3, "analysis: three dimensions");
	tap_is_str(json_string_value(json_object_get(json_array_get(
	    json_object_get(ra, "dimensions"), 1), "inferred_category")),
	    "memory_loss", "analysis: forgets -> memory_loss");
	tap_is_str(json_string_value(json_object_get(json_array_get(
	    json_object_get(ra, "dimensions"), 2), "inferred_category")),
	    "documentation", "analysis: specs conflict -> documentation");
	tap_is_int(json_integer_value(json_object_get(json_object_get(ra,
	    "coverage"), "coverage_rate")), 100, "analysis: coverage 100");
	tap_is_str(json_string_value(json_object_get(ra, "status")),
	    "completed", "analysis: nothing to clarify");
	json_decref(ra);

	/* one word of context, one of memory: a tie */
	ra = tunereq_analyze("long memory", "2026-11-23T10:00:00Z");
	a = json_array_get(json_object_get(ra, "ambiguities"), 0);
	tap_is_str(json_string_value(json_object_get(a, "type")),
	    "multi_category", "analysis: a tie is ambiguous");
	tap_is_str(json_string_value(json_object_get(ra, "status")),
	    "needs_clarification", "analysis: needs clarification");
	tap_ok(tunereq_settle(ra, 0, 1) == NULL, "analysis: settled");
	tap_is_str(json_string_value(json_object_get(json_array_get(
	    json_object_get(ra, "dimensions"), 0), "inferred_category")),
	    "memory_loss", "analysis: the second reading taken");
	tap_is_str(json_string_value(json_object_get(ra, "status")),
	    "completed", "analysis: then completed");
	json_decref(ra);

	ra = tunereq_analyze("it is bad", "2026-11-23T10:00:00Z");
	a = json_array_get(json_object_get(ra, "ambiguities"), 0);
	tap_is_str(json_string_value(json_object_get(a, "type")),
	    "vague_description", "analysis: vague");
	tap_is_str(json_string_value(json_array_get(json_object_get(a,
	    "possible_interpretations"), 0)), "all", "analysis: recommended: "
	    "every area");
	role = tunereq_settle(ra, 0, 5);
	tap_is_str(role, "docs", "analysis: settled on one area: its role");
	json_decref(ra);
}

/* Diagnoses merged into issues, ids by severity, the gate. */
static void
test_merge(void)
{
	json_t	*st = t_state(), *d, *is;
	char	*err = NULL, *k;

	d = t_json("{\"status\":\"completed\",\"issues_found\":9,"
	    "\"severity\":\"low\",\"details\":{\"patterns_checked\":[\"C\"],"
	    "\"patterns_matched\":[\"C\"],\"evidence\":[],"
	    "\"recommendations\":[]},\"execution_time_ms\":3,\"issues\":["
	    "{\"type\":\"context_explosion\",\"severity\":\"medium\","
	    "\"location\":{\"file\":\"p/a.md\"},\"description\":\"a\"}]}");
	tap_is_int(tunemerge_diagnosis(st, "context", d, &err), 0,
	    "merge: context taken (%s)", err != NULL ? err : "");
	free(err);
	err = NULL;
	json_decref(d);
	d = t_json("{\"status\":\"completed\",\"issues_found\":0,"
	    "\"severity\":\"none\",\"execution_time_ms\":1,\"details\":{"
	    "\"patterns_checked\":[],\"patterns_matched\":[\"M\"],"
	    "\"evidence\":[{\"file\":\"p/b.md\",\"line\":4,\"pattern\":"
	    "\"MEM-001\",\"context\":\"remember it\",\"severity\":\"high\"}],"
	    "\"recommendations\":[]}}");
	tap_is_int(tunemerge_diagnosis(st, "memory", d, &err), 0,
	    "merge: memory from its evidence (%s)", err != NULL ? err : "");
	free(err);
	err = NULL;
	json_decref(d);
	d = json_object_get(json_object_get(st, "diagnosis"), "context");
	tap_is_int(json_integer_value(json_object_get(d, "issues_found")), 1,
	    "merge: issues_found made to agree");
	tap_is_str(json_string_value(json_object_get(d, "severity")), "medium",
	    "merge: severity the worst issue's");
	d = t_json("{\"status\":\"completed\"}");
	tap_is_int(tunemerge_diagnosis(st, "agent", d, &err), -1,
	    "merge: no details: refused");
	tap_ok(err != NULL && strstr(err, "details") != NULL,
	    "merge: says what is missing (%s)", err != NULL ? err : "");
	free(err);
	err = NULL;
	json_decref(d);
	tunemerge_issues(st);
	is = json_object_get(st, "issues");
	tap_is_int((long long)json_array_size(is), 2, "issues: two");
	tap_is_str(json_string_value(json_object_get(json_array_get(is, 0),
	    "severity")), "high", "issues: the high one first");
	tap_is_str(json_string_value(json_object_get(json_array_get(is, 0),
	    "id")), "ISS-001", "issues: ids in that order");
	tap_is_int(json_integer_value(json_object_get(json_array_get(is, 1),
	    "priority")), 2, "issues: priorities");
	tap_is_str(json_string_value(json_object_get(json_array_get(is, 0),
	    "description")), "MEM-001 in p/b.md", "issues: a stable "
	    "description from evidence");
	tap_is_int(json_integer_value(json_object_get(st, "quality_score")),
	    100 - 15 - 8, "gate: score 77");
	tap_is_str(json_string_value(json_object_get(st, "quality_gate")),
	    "review", "gate: 77 with a high issue and no critical: review");
	tap_is_int(tunestate_check(st, &err), 0, "merge: the state is valid "
	    "(%s)", err != NULL ? err : "");
	free(err);
	err = NULL;
	k = tunemerge_key(json_array_get(is, 1));
	tap_is_str(k, "context_explosion|p/a.md|a", "key: type|file|text");
	free(k);
	json_array_remove(is, 0);
	tunemerge_gate(st);
	tap_is_str(json_string_value(json_object_get(st, "quality_gate")),
	    "pass", "gate: one medium passes (92)");
	json_decref(st);
}

/* Proposals: checked, deduplicated, ids made unique, pending. */
static void
test_fixes(void)
{
	json_t	*st = t_state(), *d;
	char	*err = NULL;
	int	 rc;

	json_array_append_new(json_object_get(st, "issues"), t_json(
	    "{\"id\":\"ISS-001\",\"type\":\"memory_loss\",\"severity\":\"high\","
	    "\"priority\":1,\"location\":{\"file\":\"a.md\"},\"description\":"
	    "\"d\",\"evidence\":[],\"root_cause\":\"\",\"impact\":\"\","
	    "\"suggested_fix\":\"\",\"related_issues\":[]}"));
	tunemerge_gate(st);
	d = t_json("{\"fixes\":[{\"id\":\"FIX-001\",\"issue_ids\":[\"ISS-001\"],"
	    "\"strategy\":\"structured_state\",\"description\":\"d\","
	    "\"rationale\":\"r\",\"changes\":[{\"file\":\"a.md\",\"action\":"
	    "\"modify\",\"new_content\":\"x\"}],\"risk\":\"low\","
	    "\"estimated_impact\":\"e\",\"verification_steps\":[]},"
	    "{\"id\":\"FIX-002\",\"issue_ids\":[\"ISS-404\"],\"strategy\":"
	    "\"custom\",\"description\":\"d\",\"rationale\":\"r\",\"changes\":"
	    "[{\"file\":\"b.md\",\"action\":\"delete\"}],\"risk\":\"low\","
	    "\"estimated_impact\":\"e\",\"verification_steps\":[]},"
	    "{\"id\":\"FIX-003\",\"issue_ids\":[\"ISS-001\"],\"strategy\":"
	    "\"magic\"}]}");
	tap_is_int(tunemerge_fixes(st, d, "now", &err), 1, "fixes: one taken");
	tap_ok(err != NULL && strstr(err, "fixes[1] refused: issue_ids") !=
	    NULL && strstr(err, "fixes[2] refused") != NULL, "fixes: the "
	    "others refused, each named (%s)", err != NULL ? err : "");
	free(err);
	err = NULL;
	tap_is_int(tunemerge_fixes(st, d, "now", &err), 0, "fixes: the same "
	    "changes again: not taken twice");
	free(err);
	err = NULL;
	json_object_set_new(json_array_get(json_object_get(json_array_get(
	    json_object_get(d, "fixes"), 0), "changes"), 0), "new_content",
	    json_string("other"));
	tap_is_int(tunemerge_fixes(st, d, "now", &err), 1, "fixes: different "
	    "changes: taken");
	free(err);
	err = NULL;
	tap_is_str(json_string_value(json_array_get(json_object_get(st,
	    "pending_fixes"), 1)), "FIX-002", "fixes: a used id replaced");
	rc = tunestate_check(st, &err);
	tap_is_int(rc, 0, "fixes: the state is valid (%s)", err != NULL ?
	    err : "");
	free(err);
	err = NULL;
	json_decref(d);
	d = t_json("{\"nofixes\":1}");
	tap_is_int(tunemerge_fixes(st, d, "now", &err), -1, "fixes: no list");
	free(err);
	err = NULL;
	json_decref(d);
	json_decref(st);
}

/* The verdict on a fix from the keys before and after. */
static void
test_verdict(void)
{
	json_t	*addr = t_json("[\"a\"]"), *before = t_json("[\"a\",\"b\"]");
	json_t	*gone = t_json("[\"b\"]"), *still = t_json("[\"a\",\"b\"]");
	json_t	*worse = t_json("[\"b\",\"c\"]");
	char	*why;

	tap_is_int(tunemerge_verdict(addr, before, gone, &why), 1,
	    "verdict: gone, nothing new: pass");
	free(why);
	tap_is_int(tunemerge_verdict(addr, before, still, &why), 0,
	    "verdict: still found: fail");
	tap_is_str(why, "still found: a", "verdict: says which");
	free(why);
	tap_is_int(tunemerge_verdict(addr, before, worse, &why), 0,
	    "verdict: a new issue: fail");
	tap_is_str(why, "a new issue: c", "verdict: names it");
	free(why);
	json_decref(addr);
	json_decref(before);
	json_decref(gone);
	json_decref(still);
	json_decref(worse);
}

/* A fix on disk: backed up, applied, rolled back; paths refused. */
static void
test_fix_files(void)
{
	json_t	*fix;
	char	 bdir[128], path[256], *err = NULL, *s;
	int	 sfd;

	t_write("skill/phases/a.md", "one\npaste $(cat src/*)\nthree\n");
	t_write("skill/specs/gone.md", "old spec\n");
	snprintf(bdir, sizeof bdir, "%s/backups", t_top);
	snprintf(path, sizeof path, "%s/skill", t_top);
	sfd = open(path, O_RDONLY | O_DIRECTORY);
	fix = t_json("{\"id\":\"FIX-001\",\"changes\":["
	    "{\"file\":\"phases/a.md\",\"action\":\"modify\",\"old_content\":"
	    "\"paste $(cat src/*)\",\"new_content\":\"pass paths\"},"
	    "{\"file\":\"specs/new.md\",\"action\":\"create\",\"new_content\":"
	    "\"new spec\\n\"},"
	    "{\"file\":\"specs/gone.md\",\"action\":\"delete\"}]}");
	tap_is_int(tunefix_backup(sfd, bdir, fix, &err), 0, "files: backed up "
	    "(%s)", err != NULL ? err : "");
	free(err);
	err = NULL;
	s = t_read("backups/FIX-001/files/phases/a.md");
	tap_is_str(s, "one\npaste $(cat src/*)\nthree\n", "files: the copy");
	free(s);
	tap_is_int(tunefix_apply(sfd, fix, &err), 0, "files: applied (%s)",
	    err != NULL ? err : "");
	free(err);
	err = NULL;
	s = t_read("skill/phases/a.md");
	tap_is_str(s, "one\npass paths\nthree\n", "files: old_content "
	    "replaced in place");
	free(s);
	s = t_read("skill/specs/new.md");
	tap_is_str(s, "new spec\n", "files: created");
	free(s);
	tap_ok(faccessat(sfd, "specs/gone.md", F_OK, 0) != 0,
	    "files: deleted");
	tap_is_int(tunefix_rollback(sfd, bdir, "FIX-001", &err), 0,
	    "files: rolled back (%s)", err != NULL ? err : "");
	free(err);
	err = NULL;
	s = t_read("skill/phases/a.md");
	tap_is_str(s, "one\npaste $(cat src/*)\nthree\n", "files: restored");
	free(s);
	s = t_read("skill/specs/gone.md");
	tap_is_str(s, "old spec\n", "files: the deleted one is back");
	free(s);
	tap_ok(faccessat(sfd, "specs/new.md", F_OK, 0) != 0,
	    "files: the created one is gone");
	tap_is_int(tunefix_apply(sfd, fix, &err), 0, "files: applies again");
	free(err);
	err = NULL;
	tap_is_int(tunefix_apply(sfd, fix, &err), -1, "files: old_content no "
	    "longer there: refused");
	tap_ok(err != NULL && strstr(err, "changes[0]") != NULL,
	    "files: names the change (%s)", err != NULL ? err : "");
	free(err);
	err = NULL;
	json_decref(fix);

	fix = t_json("{\"id\":\"FIX-002\",\"changes\":[{\"file\":"
	    "\"../outside.md\",\"action\":\"create\",\"new_content\":\"x\"}]}");
	tap_is_int(tunefix_backup(sfd, bdir, fix, &err), -1, "files: .. "
	    "refused");
	free(err);
	err = NULL;
	json_decref(fix);
	fix = t_json("{\"id\":\"FIX-003\",\"changes\":[{\"file\":"
	    "\"/etc/passwd\",\"action\":\"modify\",\"new_content\":\"x\"}]}");
	tap_is_int(tunefix_backup(sfd, bdir, fix, &err), -1, "files: an "
	    "absolute path refused");
	free(err);
	err = NULL;
	json_decref(fix);
	snprintf(path, sizeof path, "%s/skill/link", t_top);
	tap_is_int(symlink("/tmp", path), 0, "files: a link in the skill");
	fix = t_json("{\"id\":\"FIX-004\",\"changes\":[{\"file\":"
	    "\"link/x.md\",\"action\":\"create\",\"new_content\":\"x\"}]}");
	tap_is_int(tunefix_apply(sfd, fix, &err), -1, "files: no link "
	    "followed");
	free(err);
	err = NULL;
	json_decref(fix);
	close(sfd);
}

/* The report names the gate, each fix's fate, the issues left. */
static void
test_report(void)
{
	json_t	*st = t_state();
	char	*md;

	json_object_set_new(json_object_get(st, "target_skill"), "name",
	    json_string("demo"));
	json_array_append_new(json_object_get(st, "proposed_fixes"), t_json(
	    "{\"id\":\"FIX-001\",\"strategy\":\"custom\",\"description\":"
	    "\"a | b\",\"changes\":[{\"file\":\"x.md\"}]}"));
	json_array_append_new(json_object_get(st, "applied_fixes"), t_json(
	    "{\"fix_id\":\"FIX-001\",\"success\":true,\"verification_result\":"
	    "\"fail\"}"));
	md = tunereport_render(st);
	tap_ok(strstr(md, "# Skill tuning report: demo") != NULL,
	    "report: titled");
	tap_ok(strstr(md, "| FIX-001 | custom | x.md | verification failed, "
	    "rolled back | a \\| b |") != NULL, "report: the fix's fate, "
	    "the cell escaped");
	tap_ok(strstr(md, "gate fail") != NULL, "report: the gate");
	free(md);
	json_decref(st);
}

int
main(void)
{
	strcpy(t_top, "/tmp/test-tune.XXXXXX");
	if (mkdtemp(t_top) == NULL)
		return 1;
	test_template();
	test_rules();
	test_round_trip();
	test_analysis();
	test_merge();
	test_fixes();
	test_verdict();
	test_fix_files();
	test_report();
	nftw(t_top, t_rm, 16, FTW_DEPTH | FTW_PHYS);
	return tap_done();
}
