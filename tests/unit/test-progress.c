/*
 * test-progress.c: the side files of a loop (progress.c, rebuild.c):
 * bytes written, records never glued, both task layouts, hostile ids and
 * planted links refused, the Markdown round trip through rebuild.  With
 * "append-log DIR ID N" it is one of the concurrent writers of
 * tests/regress/state-files.sh instead.
 */
#include <config.h>

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "state.h"
#include "tap.h"
#include "xmalloc.h"

#define ID	"loop-v2-20260122T100000-abcd1234"

static char	*top;		/* the test's private directory */
static char	*sdir;		/* top/state: the state directory */
static int	 sfd;

/* A file's whole content, or NULL if it cannot be read. */
static char *
slurp(const char *rel)
{
	char	*path, *buf;
	FILE	*f;
	long	 n;

	xasprintf(&path, "%s/%s", sdir, rel);
	f = fopen(path, "rb");
	free(path);
	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = xmalloc(n + 1);
	buf[fread(buf, 1, n, f)] = '\0';
	fclose(f);
	return buf;
}

/* Put exact bytes in a file under the state directory. */
static void
spew(const char *rel, const char *s)
{
	char	*path;
	FILE	*f;

	xasprintf(&path, "%s/%s", sdir, rel);
	if ((f = fopen(path, "wb")) != NULL) {
		fputs(s, f);
		fclose(f);
	}
	free(path);
}

/* A directory's entries, sorted, one string: to see what appeared. */
static char *
listing(const char *dir)
{
	struct dirent	**ents;
	char		 *s = xstrdup(""), *t;
	int		  n, i;

	if ((n = scandir(dir, &ents, NULL, alphasort)) == -1)
		return s;
	for (i = 0; i < n; i++) {
		xasprintf(&t, "%s%s ", s, ents[i]->d_name);
		free(s);
		s = t;
		free(ents[i]);
	}
	free(ents);
	return s;
}

/* Timestamps differ from run to run: "2026-01-22T10:00:00Z" becomes "TS". */
static void
no_ts(char *s)
{
	static const char	 pat[] = "dddd-dd-ddTdd:dd:ddZ";
	char			*p;
	size_t			 i;

	for (p = s; *p != '\0'; p++) {
		for (i = 0; pat[i] != '\0'; i++)
			if (pat[i] == 'd' ? (p[i] < '0' || p[i] > '9') :
			    p[i] != pat[i])
				break;
		if (pat[i] == '\0') {
			memcpy(p, "TS", 2);
			memmove(p + 2, p + 20, strlen(p + 20) + 1);
		}
	}
}

/* Every line ends in a newline and is one JSON object; the count of them. */
static int
ndjson_lines(const char *s)
{
	const char	*nl;
	json_t		*j;
	int		 n = 0;

	if (s == NULL)
		return -1;
	for (; *s != '\0'; s = nl + 1) {
		if ((nl = strchr(s, '\n')) == NULL)
			return -1;
		j = json_loadb(s, nl - s, 0, NULL);
		if (!json_is_object(j)) {
			json_decref(j);
			return -1;
		}
		json_decref(j);
		n++;
	}
	return n;
}

/* Whether a strv holds a string. */
static int
has(const struct strv *sv, const char *s)
{
	size_t	i;

	for (i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return 1;
	return 0;
}

/* string or null */
static int
sn(const json_t *v)
{
	return v != NULL && (json_is_string(v) || json_is_null(v));
}

/* The seed's skill_state shape: every section, every field, right types. */
static int
shape_ok(const json_t *ss)
{
	const json_t	*d, *g, *v, *e;
	size_t		 i;

	d = json_object_get(ss, "develop");
	g = json_object_get(ss, "debug");
	v = json_object_get(ss, "validate");
	if (!sn(json_object_get(ss, "current_action")) ||
	    !sn(json_object_get(ss, "last_action")) ||
	    !json_is_array(json_object_get(ss, "completed_actions")) ||
	    !json_is_string(json_object_get(ss, "mode")) ||
	    !json_is_array(json_object_get(ss, "errors")))
		return 0;
	if (!json_is_integer(json_object_get(d, "total")) ||
	    !json_is_integer(json_object_get(d, "completed")) ||
	    !sn(json_object_get(d, "current_task")) ||
	    !json_is_array(json_object_get(d, "tasks")) ||
	    !sn(json_object_get(d, "last_progress_at")))
		return 0;
	json_array_foreach(json_object_get(d, "tasks"), i, e)
		if (!json_is_string(json_object_get(e, "id")) ||
		    !json_is_string(json_object_get(e, "description")) ||
		    !json_is_string(json_object_get(e, "status")) ||
		    !json_is_array(json_object_get(e, "files_changed")))
			return 0;
	if (!sn(json_object_get(g, "active_bug")) ||
	    !json_is_integer(json_object_get(g, "hypotheses_count")) ||
	    !json_is_array(json_object_get(g, "hypotheses")) ||
	    !sn(json_object_get(g, "confirmed_hypothesis")) ||
	    !json_is_integer(json_object_get(g, "iteration")) ||
	    !sn(json_object_get(g, "last_analysis_at")))
		return 0;
	if (!json_is_number(json_object_get(v, "pass_rate")) ||
	    !json_is_number(json_object_get(v, "coverage")) ||
	    !json_is_array(json_object_get(v, "test_results")) ||
	    !json_is_boolean(json_object_get(v, "passed")) ||
	    !json_is_array(json_object_get(v, "failed_tests")) ||
	    !sn(json_object_get(v, "last_run_at")))
		return 0;
	json_array_foreach(json_object_get(ss, "errors"), i, e)
		if (!json_is_string(json_object_get(e, "action")) ||
		    !json_is_string(json_object_get(e, "message")) ||
		    !json_is_string(json_object_get(e, "timestamp")))
			return 0;
	return 1;
}

/* The real validator (state.c) on a fresh state carrying this skill_state. */
static int
validates(const json_t *ss)
{
	struct strv	 errs = { NULL, 0 };
	json_t		*st;
	size_t		 i;
	int		 n;

	if ((st = state_new("v-1", "t", "d", 10)) == NULL || ss == NULL)
		return 0;
	json_object_set_new(st, "skill_state", json_deep_copy(ss));
	n = state_validate(st, &errs);
	for (i = 0; i < errs.n; i++)
		tap_diag("state_validate: %s", errs.v[i]);
	strv_clear(&errs);
	json_decref(st);
	return n == 0;
}

/* The NDJSON logs and the history: exact bytes, repair of a torn last line. */
static void
test_logs(void)
{
	json_t	*o;
	char	*err, *s;
	int	 rc;

	o = json_pack("{s:i, s:s, s:[s]}", "a", 1, "b", "x\ny|z", "f", "p.c");
	rc = progress_log(sfd, ID, "changes.log", o, NULL, &err);
	tap_ok(rc == 0 && err == NULL, "changes.log appended");
	s = slurp(ID ".progress/changes.log");
	tap_is_str(s, "{\"a\":1,\"b\":\"x\\ny|z\",\"f\":[\"p.c\"]}\n",
	    "one compact line, newline-terminated");
	free(s);
	progress_log(sfd, ID, "changes.log", o, NULL, &err);
	s = slurp(ID ".progress/changes.log");
	tap_is_int(ndjson_lines(s), 2, "two appends, two lines");
	free(s);

	spew(ID ".progress/debug.log", "{\"hid\":\"H1\",\"torn\":true}");
	rc = progress_log(sfd, ID, "debug.log", o, NULL, &err);
	s = slurp(ID ".progress/debug.log");
	tap_ok(rc == 0 && ndjson_lines(s) == 2,
	    "a last line without newline, then an append: both lines parse");
	tap_ok(s != NULL && strncmp(s, "{\"hid\":\"H1\",\"torn\":true}\n{\"a\"",
	    27) == 0, "the newline was written before the record");
	free(s);

	rc = progress_log(sfd, ID, "other.log", o, NULL, &err);
	tap_ok(rc == -1 && err != NULL && strstr(err, "other.log") != NULL,
	    "only changes.log and debug.log: %s", err ? err : "");
	free(err);
	rc = progress_log(sfd, ID, "../changes.log", o, NULL, &err);
	tap_ok(rc == -1, "a log name with a path is refused");
	free(err);
	json_decref(o);
	o = json_pack("[i]", 1);
	rc = progress_log(sfd, ID, "changes.log", o, NULL, &err);
	tap_ok(rc == -1 && err != NULL, "a record that is not an object is "
	    "refused");
	free(err);
	json_decref(o);

	o = json_pack("{s:s}", "event", "start");
	spew(ID ".history.jsonl", "{\"event\":\"cr");
	rc = progress_history_append(sfd, ID, o, NULL, &err);
	s = slurp(ID ".history.jsonl");
	tap_is_str(s, "{\"event\":\"cr\n{\"event\":\"start\"}\n",
	    "history: torn line closed, record appended whole");
	free(s);
	json_decref(o);
}

/* Tasks: both layouts, torn last lines, malformed lines, updates by id. */
static void
test_tasks(void)
{
	json_t	*t, *a = NULL;
	char	*err, *s;
	int	 rc;

	spew(ID ".tasks.jsonl", "{\"id\":\"t1\",\"description\":\"first\"}");
	t = json_pack("{s:s, s:s}", "id", "t2", "description", "second");
	rc = progress_tasks_append(sfd, ID, t, &err);
	json_decref(t);
	s = slurp(ID ".tasks.jsonl");
	tap_is_str(s, "{\"id\":\"t1\",\"description\":\"first\"}\n"
	    "{\"id\":\"t2\",\"description\":\"second\"}\n",
	    "tasks.jsonl without a trailing newline, then an append: not glued");
	free(s);
	rc = progress_tasks_read(sfd, ID, &a, &err);
	tap_ok(rc == 0 && err == NULL && json_array_size(a) == 2 &&
	    strcmp(json_string_value(json_object_get(json_array_get(a, 1),
	    "id")), "t2") == 0, "both tasks readable");
	json_decref(a);

	mkdirat(sfd, ID, 0755);
	spew(ID "/tasks.jsonl", "{\"id\":\"t0\",\"description\":\"zero\"}\n"
	    "{\"id\":\"t1\",\"description\":\"old\"}\n");
	rc = progress_tasks_read(sfd, ID, &a, &err);
	tap_ok(rc == 0 && json_array_size(a) == 3, "both locations read "
	    "(%zu tasks)", json_array_size(a));
	tap_is_str(a ? json_string_value(json_object_get(json_array_get(a, 1),
	    "description")) : NULL, "first",
	    "{id}.tasks.jsonl has the last word on a task in both");
	json_decref(a);

	spew(ID ".tasks.jsonl", "not json\n\n   \n[1,2]\n"
	    "{\"id\":\"t5\",\"description\":\"five\"}\n{\"id\":\"t6\"");
	rc = progress_tasks_read(sfd, ID, &a, &err);
	tap_ok(rc == 0 && json_array_size(a) == 3, "malformed lines skipped, "
	    "blank lines ignored, the valid ones kept");
	tap_is_str(err, "3 malformed lines skipped in " ID ".tasks.jsonl",
	    "malformed lines counted in the warning");
	free(err);
	json_decref(a);

	spew(ID ".tasks.jsonl", "{\"id\":\"t7\"}");
	rc = progress_tasks_read(sfd, ID, &a, &err);
	tap_ok(rc == 0 && json_array_size(a) == 3,
	    "a last line without newline is read");
	json_decref(a);

	unlinkat(sfd, ID ".tasks.jsonl", 0);
	spew(ID "/tasks.jsonl", "{\"id\":\"t0\"}");
	t = json_pack("{s:s}", "id", "t9");
	rc = progress_tasks_append(sfd, ID, t, &err);
	json_decref(t);
	s = slurp(ID "/tasks.jsonl");
	tap_ok(rc == 0 && s != NULL &&
	    strcmp(s, "{\"id\":\"t0\"}\n{\"id\":\"t9\"}\n") == 0 &&
	    faccessat(sfd, ID ".tasks.jsonl", F_OK, 0) == -1,
	    "only {id}/tasks.jsonl exists: the append goes there");
	free(s);
}

/* Ids that could leave the directory are refused by every function. */
static void
test_hostile(void)
{
	static const char *const ids[] = { "..", "a/b", "../x", NULL, "-x",
	    "", "a..b", "x\ny" };
	char		 longid[301], *before, *sbefore, *after, *sa, *err;
	json_t		*o = json_pack("{s:s}", "k", "v"), *a;
	struct strv	 un = { NULL, 0 };
	size_t		 i;
	int		 refused;

	memset(longid, 'a', 300);
	longid[300] = '\0';
	before = listing(top);
	sbefore = listing(sdir);
	for (i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		const char *id = ids[i] != NULL ? ids[i] : longid;

		refused = 0;
		refused += progress_log(sfd, id, "changes.log", o, NULL, &err) == -1 &&
		    err != NULL && strstr(err, "invalid loop id") != NULL;
		free(err);
		refused += progress_history_append(sfd, id, o, NULL, &err) == -1;
		free(err);
		refused += progress_tasks_append(sfd, id, o, &err) == -1;
		free(err);
		refused += progress_tasks_read(sfd, id, &a, &err) == -1;
		free(err);
		refused += progress_output_save(sfd, id, "develop", o, &err) == -1;
		free(err);
		refused += progress_append_md(sfd, id, "develop", o, NULL, &err) == -1;
		free(err);
		refused += progress_rebuild(sfd, id, &a, &un, &err) == -1;
		free(err);
		tap_is_int(refused, 7, "hostile id #%zu (%zu bytes) refused by "
		    "all 7 functions", i, strlen(id));
	}
	tap_ok(progress_output_save(sfd, ID, "../x", o, &err) == -1,
	    "a role with a path is refused");
	free(err);
	after = listing(top);
	sa = listing(sdir);
	tap_is_str(after, before, "nothing created next to the state directory");
	tap_is_str(sa, sbefore, "nothing created in the state directory");
	free(before);
	free(after);
	free(sbefore);
	free(sa);
	strv_clear(&un);
	json_decref(o);
}

/* A link where a directory or file belongs: refused, its target untouched. */
static void
test_links(void)
{
	json_t		*o = json_pack("{s:s}", "k", "v"), *a;
	struct strv	 un = { NULL, 0 };
	char		*err, *path, *s, *l;
	int		 rc;

	xasprintf(&path, "%s/elsewhere", top);
	mkdir(path, 0755);
	symlinkat(path, sfd, "L1.progress");
	rc = progress_log(sfd, "L1", "changes.log", o, NULL, &err);
	tap_ok(rc == -1 && err != NULL && strstr(err, "L1.progress") &&
	    strstr(err, "symbolic link"), "link at {id}.progress refused: %s",
	    err ? err : "");
	free(err);
	rc = progress_append_md(sfd, "L1", "debug", o, NULL, &err);
	free(err);
	l = listing(path);
	tap_ok(rc == -1 && strcmp(l, ". .. ") == 0,
	    "md append refused too; the link's target is still empty");
	free(l);
	rc = progress_rebuild(sfd, "L1", &a, &un, &err);
	tap_ok(rc == -1 && err != NULL, "rebuild refuses the link too");
	free(err);
	strv_clear(&un);
	free(path);

	xasprintf(&path, "%s/target", top);
	spew("../target", "orig");
	mkdirat(sfd, "L2.progress", 0755);
	symlinkat(path, sfd, "L2.progress/changes.log");
	rc = progress_log(sfd, "L2", "changes.log", o, NULL, &err);
	s = slurp("../target");
	tap_ok(rc == -1 && err != NULL && strstr(err, "L2.progress/changes.log")
	    && s != NULL && strcmp(s, "orig") == 0,
	    "link at a log file refused, target untouched: %s", err ? err : "");
	free(s);
	free(err);
	symlinkat(path, sfd, "L2.history.jsonl");
	symlinkat(path, sfd, "L2.tasks.jsonl");
	rc = progress_history_append(sfd, "L2", o, NULL, &err) == -1;
	free(err);
	rc += progress_tasks_append(sfd, "L2", o, &err) == -1;
	free(err);
	rc += progress_tasks_read(sfd, "L2", &a, &err) == -1;
	free(err);
	s = slurp("../target");
	tap_ok(rc == 3 && s != NULL && strcmp(s, "orig") == 0,
	    "links at history and tasks files refused");
	free(s);
	mkfifoat(sfd, "L2.progress/debug.log", 0644);
	rc = progress_log(sfd, "L2", "debug.log", o, NULL, &err);
	tap_ok(rc == -1 && err != NULL && strstr(err, "not a regular file"),
	    "a FIFO at a log name is refused without hanging");
	free(err);
	mkdirat(sfd, "L2.workers", 0755);
	symlinkat(path, sfd, "L2.workers/develop.output.json");
	rc = progress_output_save(sfd, "L2", "develop", o, &err);
	s = slurp("../target");
	tap_ok(rc == 0 && s != NULL && strcmp(s, "orig") == 0,
	    "output.json: a planted link is replaced, not written through");
	free(s);
	free(err);
	free(path);
	json_decref(o);
}

/* Worker outputs are replaced atomically: pretty JSON, no temp left. */
static void
test_output(void)
{
	json_t	*o;
	char	*err, *s, *l;
	int	 rc;

	o = json_pack("{s:s, s:s, s:[s]}", "status", "success", "summary",
	    "did it", "files_changed", "a.c");
	rc = progress_output_save(sfd, ID, "develop", o, &err);
	s = slurp(ID ".workers/develop.output.json");
	tap_is_str(s, "{\n  \"status\": \"success\",\n  \"summary\": \"did it\","
	    "\n  \"files_changed\": [\n    \"a.c\"\n  ]\n}\n",
	    "output.json pretty-printed");
	free(s);
	json_object_set_new(o, "summary", json_string("again"));
	rc += progress_output_save(sfd, ID, "develop", o, &err);
	l = listing(sdir);
	tap_ok(rc == 0 && strstr(l, ".tmp") == NULL, "replaced; no temp file "
	    "left");
	free(l);
	xasprintf(&s, "%s/%s.workers", sdir, ID);
	l = listing(s);
	free(s);
	tap_is_str(l, ". .. develop.output.json ", "the workers directory "
	    "holds only the output");
	free(l);
	json_decref(o);
}

/*
 * A fixture from tests/state/progress-md/: $srcdir when make check runs
 * us, else found from this file's path as the compiler saw it (a build
 * directory's make, or the source directory).
 */
static char *
fixture(const char *name)
{
	const char	*src = getenv("srcdir"), *slash;
	char		*path, *buf = NULL;
	FILE		*f;
	long		 n;

	if (src != NULL)
		xasprintf(&path, "%s/tests/state/progress-md/%s", src, name);
	else {
		slash = strrchr(__FILE__, '/');
		xasprintf(&path, "%.*s../state/progress-md/%s",
		    slash != NULL ? (int)(slash - __FILE__ + 1) : 0, __FILE__,
		    name);
	}
	if ((f = fopen(path, "rb")) != NULL) {
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		fseek(f, 0, SEEK_SET);
		buf = xmalloc(n + 1);
		buf[fread(buf, 1, n, f)] = '\0';
		fclose(f);
	} else
		tap_diag("cannot read fixture %s", path);
	free(path);
	return buf;
}

/* A JSON fixture, or an empty object so that the checks fail, not crash. */
static json_t *
fixture_json(const char *name)
{
	char	*s = fixture(name);
	json_t	*j = s != NULL ? json_loads(s, 0, NULL) : NULL;

	free(s);
	return j != NULL ? j : json_object();
}

/* Markdown: the bytes of develop.md, numbering, and the round trip. */
static void
test_md(void)
{
	json_t		*dev, *dbg, *val, *ss = NULL, *t, *hyp;
	struct strv	 un = { NULL, 0 };
	char		*err, *s, *want;
	int		 rc;

	dev = fixture_json("develop.json");
	dbg = fixture_json("debug.json");
	val = fixture_json("validate.json");
	want = fixture("develop.md");
	rc = progress_append_md(sfd, ID, "develop", dev, NULL, &err);
	s = slurp(ID ".progress/develop.md");
	if (s != NULL)
		no_ts(s);
	tap_ok(rc == 0, "develop.md appended");
	tap_is_str(s, want, "develop.md: header once, then the section");
	free(s);
	free(want);
	rc = progress_append_md(sfd, ID, "debug", dbg, NULL, &err);
	rc += progress_append_md(sfd, ID, "debug", dbg, NULL, &err);
	s = slurp(ID ".progress/debug.md");
	tap_ok(rc == 0 && s != NULL && strstr(s, "### Iteration 2 - ") &&
	    strstr(s, "# Understanding Document") == s &&
	    strstr(s + 1, "# Understanding Document") == NULL,
	    "debug.md: sections numbered, header written once");
	free(s);
	spew(ID ".progress/validate.md", "# Validation Report\n\nhalf a li");
	rc = progress_append_md(sfd, ID, "validate", val, NULL, &err);
	s = slurp(ID ".progress/validate.md");
	tap_ok(rc == 0 && s != NULL && strstr(s, "half a li\n### Iteration 1 - "),
	    "a torn last line is closed before the section");
	free(s);
	rc = progress_append_md(sfd, ID, "init", dev, NULL, &err);
	tap_ok(rc == -1 && err != NULL, "no progress file for role init");
	free(err);

	unlinkat(sfd, ID "/tasks.jsonl", 0);
	rc = progress_rebuild(sfd, ID, &ss, &un, &err);
	tap_ok(rc == 0 && err == NULL && shape_ok(ss),
	    "rebuild: skill_state has the seed's shape");
	tap_ok(json_equal(json_object_get(json_object_get(ss, "develop"),
	    "tasks"), json_object_get(dev, "tasks")),
	    "round trip: develop tasks survive (pipes, commas, newlines, "
	    "empty and absent fields)");
	tap_ok(validates(ss), "the rebuilt skill_state passes state_validate");
	json_object_del(dev, "tasks");
	hyp = json_deep_copy(json_object_get(dbg, "hypotheses"));
	json_object_del(dbg, "hypotheses");
	t = json_object_get(ss, "develop");
	tap_ok(json_is_integer(json_object_get(t, "total")) &&
	    json_integer_value(json_object_get(t, "total")) == 3 &&
	    json_integer_value(json_object_get(t, "completed")) == 1 &&
	    json_equal(json_object_get(t, "current_task"),
	    json_object_get(dev, "current_task")),
	    "round trip: develop counts and current task");
	t = json_object_get(ss, "debug");
	s = json_dumps(t, JSON_COMPACT);
	tap_ok(json_equal(json_object_get(t, "hypotheses"), hyp) ||
	    (tap_diag("%s", s), 0), "round trip: hypotheses survive (evidence, "
	    "criteria, likelihood)");
	free(s);
	json_decref(hyp);
	json_object_del(t, "hypotheses");
	tap_ok(json_equal(t, dbg), "round trip: debug's other fields");
	t = json_object_get(ss, "validate");
	tap_ok(json_equal(t, val), "round trip: test results, pass rate, "
	    "failed tests");
	tap_ok(has(&un, "title") && has(&un, "status") &&
	    has(&un, "skill_state.mode") && has(&un, "skill_state.errors") &&
	    !has(&un, "skill_state.develop.tasks") &&
	    !has(&un, "skill_state.validate.test_results"),
	    "unrecovered: API fields, mode, errors; not what the files held");
	strv_clear(&un);
	json_decref(ss);
	json_decref(dev);
	json_decref(dbg);
	json_decref(val);
}

/* Nothing there: the empty skeleton, and everything named as unrecovered. */
static void
test_rebuild_empty(void)
{
	json_t		*ss = NULL;
	struct strv	 un = { NULL, 0 };
	char		*err;
	int		 rc;

	rc = progress_rebuild(sfd, "nothing-here", &ss, &un, &err);
	tap_ok(rc == 0 && err == NULL && shape_ok(ss) && validates(ss),
	    "rebuild of nothing: the empty skeleton, in shape, valid");
	tap_ok(ss != NULL && json_array_size(json_object_get(json_object_get(ss,
	    "develop"), "tasks")) == 0 && json_is_null(json_object_get(ss,
	    "current_action")), "no tasks, no current action");
	tap_ok(has(&un, "title") && has(&un, "description") &&
	    has(&un, "max_iterations") && has(&un, "created_at") &&
	    has(&un, "status"), "API fields listed as unrecovered");
	tap_ok(has(&un, "skill_state.develop.tasks") &&
	    has(&un, "skill_state.debug.hypotheses") &&
	    has(&un, "skill_state.validate.test_results") &&
	    has(&un, "skill_state.validate.failed_tests") &&
	    has(&un, "skill_state.current_action") &&
	    has(&un, "skill_state.completed_actions") &&
	    has(&un, "skill_state.develop.total"),
	    "every skill_state field listed as unrecovered (%zu names)", un.n);
	tap_is_int(un.n, 9 + 2 + 5 + 6 + 6 + 3, "the whole list, once each");
	strv_clear(&un);
	json_decref(ss);
	tap_ok(faccessat(sfd, "nothing-here.progress", F_OK, 0) == -1,
	    "rebuild creates nothing");
}

/* Worker outputs give the actions; the tasks file gives tasks the md lacks. */
static void
test_rebuild_outputs(void)
{
	struct timespec	 ts[2];
	json_t		*o, *ss = NULL, *t;
	struct strv	 un = { NULL, 0 };
	char		*err, *s;
	int		 rc, wfd;

	o = json_pack("{s:s, s:s}", "status", "success", "summary", "built");
	progress_output_save(sfd, "W", "develop", o, &err);
	json_decref(o);
	o = json_pack("{s:s, s:s}", "status", "failed", "summary", "boom");
	progress_output_save(sfd, "W", "debug", o, &err);
	json_decref(o);
	o = json_pack("{s:s}", "status", "success");
	progress_output_save(sfd, "W", "init", o, &err);
	json_decref(o);
	wfd = openat(sfd, "W.workers", O_RDONLY | O_DIRECTORY);
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	ts[0].tv_sec = ts[1].tv_sec = 1700000000;
	utimensat(wfd, "init.output.json", ts, 0);
	ts[0].tv_sec = ts[1].tv_sec = 1700000100;
	utimensat(wfd, "develop.output.json", ts, 0);
	ts[0].tv_sec = ts[1].tv_sec = 1700000200;
	utimensat(wfd, "debug.output.json", ts, 0);
	spew("W.workers/validate.output.json", "{broken");
	close(wfd);
	spew("W.tasks.jsonl", "{\"id\":\"t1\",\"title\":\"from the API\","
	    "\"status\":\"completed\"}\n{\"id\":\"t2\",\"description\":\"b\"}\n");

	rc = progress_rebuild(sfd, "W", &ss, &un, &err);
	tap_ok(rc == 0 && shape_ok(ss) && validates(ss), "rebuild from outputs "
	    "and tasks: in shape, valid");
	tap_ok(err != NULL && strstr(err, "validate.output.json"),
	    "an unreadable output is a warning: %s", err ? err : "");
	free(err);
	tap_is_str(json_string_value(json_object_get(ss, "current_action")),
	    "debug", "current_action: the newest output");
	s = json_dumps(json_object_get(ss, "completed_actions"), JSON_COMPACT);
	tap_is_str(s, "[\"init\",\"develop\"]", "completed_actions: the "
	    "successful roles, oldest first");
	free(s);
	t = json_array_get(json_object_get(ss, "errors"), 0);
	tap_ok(t != NULL && strcmp(json_string_value(json_object_get(t,
	    "action")), "debug") == 0 && strcmp(json_string_value(
	    json_object_get(t, "message")), "boom") == 0,
	    "a failed output is an error entry");
	tap_is_str(json_string_value(json_object_get(json_object_get(
	    json_object_get(ss, "worker_results"), "develop"), "summary")),
	    "built", "worker_results keeps each role's last summary");
	t = json_object_get(ss, "develop");
	tap_ok(json_integer_value(json_object_get(t, "total")) == 2 &&
	    json_integer_value(json_object_get(t, "completed")) == 1 &&
	    strcmp(json_string_value(json_object_get(json_array_get(
	    json_object_get(t, "tasks"), 0), "description")),
	    "from the API") == 0, "tasks, total and completed from the "
	    "tasks file");
	tap_ok(!has(&un, "skill_state.develop.tasks") &&
	    !has(&un, "skill_state.current_action") &&
	    has(&un, "skill_state.develop.current_task"),
	    "unrecovered names only what is missing");
	strv_clear(&un);
	json_decref(ss);
}

/* Hostile content: wrong types in the tasks file, garbage in a progress file. */
static void
test_rebuild_hostile(void)
{
	json_t		*ss = NULL;
	struct strv	 un = { NULL, 0 };
	char		*err;
	int		 rc;

	spew("H.tasks.jsonl", "{\"id\":5,\"status\":\"weird\",\"files_changed\":"
	    "[1],\"created_at\":\"yesterday\",\"completed_at\":7}\n");
	mkdirat(sfd, "H.progress", 0755);
	spew("H.progress/debug.md", "### Iteration 1 - x\n- **Iteration**: -4\n"
	    "- **Last Analysis At**: soon\n#### Hypotheses\n| ID | Status | "
	    "Evidence | Likelihood |\n| --- |\n| H1 | maybe | [1] | high |\n"
	    "| \xff\xfe | \\| |\n");
	spew("H.progress/validate.md", "| Metric | Value |\n|---|---|\n"
	    "| **Pass Rate** | **150%** |\n| Coverage | 85.5% |\n");
	rc = progress_rebuild(sfd, "H", &ss, &un, &err);
	tap_ok(rc == 0 && shape_ok(ss) && validates(ss),
	    "hostile tasks and progress files: still a valid skill_state");
	tap_ok(has(&un, "skill_state.develop.tasks[].status") &&
	    has(&un, "skill_state.develop.tasks[].id") &&
	    has(&un, "skill_state.debug.hypotheses[].status") &&
	    has(&un, "skill_state.debug.iteration") &&
	    has(&un, "skill_state.validate.pass_rate") &&
	    !has(&un, "skill_state.validate.coverage") &&
	    json_real_value(json_object_get(json_object_get(ss, "validate"),
	    "coverage")) == 85.5,
	    "what was unusable is named; CCW's Metric table is read");
	free(err);
	strv_clear(&un);
	json_decref(ss);
}

/* The hidden mode: append N lines to changes.log, as one of many writers. */
static int
append_log(const char *dir, const char *id, const char *count)
{
	json_t	*o;
	char	*err, pad[301];
	int	 dfd, i, n = atoi(count), bad = 0;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY)) == -1)
		return 1;
	memset(pad, 'x', 300);
	pad[300] = '\0';
	for (i = 0; i < n; i++) {
		o = json_pack("{s:i, s:i, s:s}", "pid", (int)getpid(), "seq", i,
		    "pad", pad);
		if (progress_log(dfd, id, "changes.log", o, NULL, &err) == -1) {
			fprintf(stderr, "append-log: %s\n", err);
			free(err);
			bad = 1;
		}
		json_decref(o);
	}
	close(dfd);
	return bad;
}

/* Every group of checks in a private directory, removed at the end. */
int
main(int argc, char **argv)
{
	char	tmpl[] = "/tmp/ccw-progress.XXXXXX";
	char	cmd[64];

	if (argc == 5 && strcmp(argv[1], "append-log") == 0)
		return append_log(argv[2], argv[3], argv[4]);
	if ((top = mkdtemp(tmpl)) == NULL)
		return 1;
	xasprintf(&sdir, "%s/state", top);
	mkdir(sdir, 0755);
	sfd = open(sdir, O_RDONLY | O_DIRECTORY);

	test_logs();
	test_tasks();
	test_hostile();
	test_links();
	test_output();
	test_md();
	test_rebuild_empty();
	test_rebuild_outputs();
	test_rebuild_hostile();

	close(sfd);
	snprintf(cmd, sizeof cmd, "rm -rf %s", top);
	if (system(cmd) != 0)
		tap_diag("cannot remove %s", top);
	free(sdir);
	return tap_done();
}
