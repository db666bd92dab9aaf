/*
 * test-progress.c: the side files of a loop (progress.c): bytes written,
 * records never glued, both task layouts, hostile ids and planted links
 * refused, worker outputs replaced atomically (the Markdown and rebuild
 * are test-progress-rebuild.c's).  With "append-log DIR ID N" it is one
 * of the concurrent writers of tests/regress/state-files.sh instead.
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

#include "progfix.h"
#include "ccw-loop.h"
#include "progress.h"
#include "state.h"
#include "tap.h"
#include "xmalloc.h"

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

/* One record of one of ccw-loop's logs (the table's), no stop flag. */
static int
pf_log(int dfd, const char *id, const char *name, const json_t *o,
    char **err)
{
	return progress_log(&ccw_loop_state, dfd, id, name, o, NULL, err);
}

/* The NDJSON logs and the history: exact bytes, repair of a torn last line. */
static void
test_logs(void)
{
	json_t	*o;
	char	*err, *s;
	int	 rc;

	o = json_pack("{s:i, s:s, s:[s]}", "a", 1, "b", "x\ny|z", "f", "p.c");
	rc = pf_log(pf_sfd, ID, "changes.log", o, &err);
	tap_ok(rc == 0 && err == NULL, "changes.log appended");
	s = pf_slurp(ID ".progress/changes.log");
	tap_is_str(s, "{\"a\":1,\"b\":\"x\\ny|z\",\"f\":[\"p.c\"]}\n",
	    "one compact line, newline-terminated");
	free(s);
	pf_log(pf_sfd, ID, "changes.log", o, &err);
	s = pf_slurp(ID ".progress/changes.log");
	tap_is_int(ndjson_lines(s), 2, "two appends, two lines");
	free(s);

	pf_spew(ID ".progress/debug.log", "{\"hid\":\"H1\",\"torn\":true}");
	rc = pf_log(pf_sfd, ID, "debug.log", o, &err);
	s = pf_slurp(ID ".progress/debug.log");
	tap_ok(rc == 0 && ndjson_lines(s) == 2,
	    "a last line without newline, then an append: both lines parse");
	tap_ok(s != NULL && strncmp(s, "{\"hid\":\"H1\",\"torn\":true}\n{\"a\"",
	    27) == 0, "the newline was written before the record");
	free(s);

	rc = pf_log(pf_sfd, ID, "other.log", o, &err);
	tap_ok(rc == -1 && err != NULL && strstr(err, "other.log") != NULL,
	    "only changes.log and debug.log: %s", err ? err : "");
	free(err);
	rc = pf_log(pf_sfd, ID, "../changes.log", o, &err);
	tap_ok(rc == -1, "a log name with a path is refused");
	free(err);
	json_decref(o);
	o = json_pack("[i]", 1);
	rc = pf_log(pf_sfd, ID, "changes.log", o, &err);
	tap_ok(rc == -1 && err != NULL, "a record that is not an object is "
	    "refused");
	free(err);
	json_decref(o);

	o = json_pack("{s:s}", "event", "start");
	pf_spew(ID ".history.jsonl", "{\"event\":\"cr");
	rc = progress_history_append(pf_sfd, ID, o, NULL, &err);
	s = pf_slurp(ID ".history.jsonl");
	tap_is_str(s, "{\"event\":\"cr\n{\"event\":\"start\"}\n",
	    "history: torn line closed, record appended whole");
	free(s);
	json_decref(o);
}

/* A task line exactly as CCW's loop-task-manager writes it. */
#define CCW_TASK(id, desc, order) "{\"task_id\":\"" id "\",\"description\":" \
	"\"" desc "\",\"tool\":\"gemini\",\"mode\":\"write\",\"prompt_template\":" \
	"\"PURPOSE: " desc "\",\"order\":" #order ",\"created_at\":" \
	"\"2026-01-22T10:00:00.000Z\",\"updated_at\":\"2026-01-22T10:00:00.000Z\"," \
	"\"command\":\"npm test\",\"on_error\":\"continue\"}"

/* Tasks: both layouts, torn last lines, malformed lines, updates by id. */
static void
test_tasks(void)
{
	json_t	*t, *a = NULL;
	char	*err, *s;
	int	 rc;

	pf_spew(ID ".tasks.jsonl", "{\"id\":\"t1\",\"description\":\"first\"}");
	t = json_pack("{s:s, s:s}", "id", "t2", "description", "second");
	rc = progress_tasks_append(pf_sfd, ID, t, &err);
	json_decref(t);
	s = pf_slurp(ID ".tasks.jsonl");
	tap_is_str(s, "{\"id\":\"t1\",\"description\":\"first\"}\n"
	    "{\"id\":\"t2\",\"description\":\"second\"}\n",
	    "tasks.jsonl without a trailing newline, then an append: not glued");
	free(s);
	rc = progress_tasks_read(pf_sfd, ID, &a, &err);
	tap_ok(rc == 0 && err == NULL && json_array_size(a) == 2 &&
	    strcmp(json_string_value(json_object_get(json_array_get(a, 1),
	    "id")), "t2") == 0, "both tasks readable");
	json_decref(a);

	mkdirat(pf_sfd, ID, 0755);
	pf_spew(ID "/tasks.jsonl", "{\"id\":\"t0\",\"description\":\"zero\"}\n"
	    "{\"id\":\"t1\",\"description\":\"old\"}\n");
	rc = progress_tasks_read(pf_sfd, ID, &a, &err);
	tap_ok(rc == 0 && json_array_size(a) == 3, "both locations read "
	    "(%zu tasks)", json_array_size(a));
	tap_is_str(a ? json_string_value(json_object_get(json_array_get(a, 1),
	    "description")) : NULL, "first",
	    "{id}.tasks.jsonl has the last word on a task in both");
	json_decref(a);

	pf_spew(ID ".tasks.jsonl", "not json\n\n   \n[1,2]\n"
	    "{\"id\":\"t5\",\"description\":\"five\"}\n{\"id\":\"t6\"");
	rc = progress_tasks_read(pf_sfd, ID, &a, &err);
	tap_ok(rc == 0 && json_array_size(a) == 3, "malformed lines skipped, "
	    "blank lines ignored, the valid ones kept");
	tap_is_str(err, "3 malformed lines in " ID ".tasks.jsonl "
	    "(not a JSON object with a task_id or id; first: line 1)",
	    "malformed lines counted in the warning, the first named");
	free(err);
	json_decref(a);

	/* CCW's file: task_id, listed by order, no last newline */
	unlinkat(pf_sfd, ID ".tasks.jsonl", 0);
	pf_spew(ID "/tasks.jsonl", CCW_TASK("task-2", "second", 1) "\n"
	    CCW_TASK("task-1", "first", 0) "\n{\"description\":\"no id\"}\n"
	    CCW_TASK("task-1", "first, edited", 0));
	rc = progress_tasks_read(pf_sfd, ID, &a, &err);
	tap_ok(rc == 0 && json_array_size(a) == 3 && strcmp(json_string_value(
	    json_object_get(json_array_get(a, 0), "task_id")), "task-1") == 0 &&
	    strcmp(json_string_value(json_object_get(json_array_get(a, 0),
	    "description")), "first, edited") == 0 && strcmp(
	    json_string_value(json_object_get(json_array_get(a, 0),
	    "prompt_template")), "PURPOSE: first, edited") == 0,
	    "CCW's tasks.jsonl: keyed on task_id, by order, updated in place, "
	    "the last line without newline read");
	tap_is_str(err, "1 malformed line in " ID "/tasks.jsonl (not a "
	    "JSON object with a task_id or id; first: line 3)",
	    "a line without task_id is reported with its line number");
	free(err);
	json_decref(a);
	pf_spew(ID "/tasks.jsonl", "{\"id\":\"t0\",\"description\":\"zero\"}\n"
	    "{\"id\":\"t1\",\"description\":\"old\"}\n");

	pf_spew(ID ".tasks.jsonl", "{\"id\":\"t7\"}");
	rc = progress_tasks_read(pf_sfd, ID, &a, &err);
	tap_ok(rc == 0 && json_array_size(a) == 3,
	    "a last line without newline is read");
	json_decref(a);

	unlinkat(pf_sfd, ID ".tasks.jsonl", 0);
	pf_spew(ID "/tasks.jsonl", "{\"id\":\"t0\"}");
	t = json_pack("{s:s}", "id", "t9");
	rc = progress_tasks_append(pf_sfd, ID, t, &err);
	json_decref(t);
	s = pf_slurp(ID "/tasks.jsonl");
	tap_ok(rc == 0 && s != NULL &&
	    strcmp(s, "{\"id\":\"t0\"}\n{\"id\":\"t9\"}\n") == 0 &&
	    faccessat(pf_sfd, ID ".tasks.jsonl", F_OK, 0) == -1,
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
	before = listing(pf_top);
	sbefore = listing(pf_sdir);
	for (i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		const char *id = ids[i] != NULL ? ids[i] : longid;

		refused = 0;
		refused += pf_log(pf_sfd, id, "changes.log", o, &err) == -1 &&
		    err != NULL && strstr(err, "invalid loop id") != NULL;
		free(err);
		refused += progress_history_append(pf_sfd, id, o, NULL, &err) == -1;
		free(err);
		refused += progress_tasks_append(pf_sfd, id, o, &err) == -1;
		free(err);
		refused += progress_tasks_read(pf_sfd, id, &a, &err) == -1;
		free(err);
		refused += progress_output_save(pf_sfd, id, "develop", o, &err) == -1;
		free(err);
		refused += progress_append_md(&ccw_loop_state, pf_sfd, id, "develop", o, NULL, &err) == -1;
		free(err);
		refused += progress_rebuild(&ccw_loop_state, pf_sfd, id,
		    &a, &un, &err) == -1;
		free(err);
		tap_is_int(refused, 7, "hostile id #%zu (%zu bytes) refused by "
		    "all 7 functions", i, strlen(id));
	}
	tap_ok(progress_output_save(pf_sfd, ID, "../x", o, &err) == -1,
	    "a role with a path is refused");
	free(err);
	after = listing(pf_top);
	sa = listing(pf_sdir);
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

	xasprintf(&path, "%s/elsewhere", pf_top);
	mkdir(path, 0755);
	symlinkat(path, pf_sfd, "L1.progress");
	rc = pf_log(pf_sfd, "L1", "changes.log", o, &err);
	tap_ok(rc == -1 && err != NULL && strstr(err, "L1.progress") &&
	    strstr(err, "symbolic link"), "link at {id}.progress refused: %s",
	    err ? err : "");
	free(err);
	rc = progress_append_md(&ccw_loop_state, pf_sfd, "L1", "debug", o, NULL, &err);
	free(err);
	l = listing(path);
	tap_ok(rc == -1 && strcmp(l, ". .. ") == 0,
	    "md append refused too; the link's target is still empty");
	free(l);
	rc = progress_rebuild(&ccw_loop_state, pf_sfd, "L1",
	    &a, &un, &err);
	tap_ok(rc == -1 && err != NULL, "rebuild refuses the link too");
	free(err);
	strv_clear(&un);
	free(path);

	xasprintf(&path, "%s/target", pf_top);
	pf_spew("../target", "orig");
	mkdirat(pf_sfd, "L2.progress", 0755);
	symlinkat(path, pf_sfd, "L2.progress/changes.log");
	rc = pf_log(pf_sfd, "L2", "changes.log", o, &err);
	s = pf_slurp("../target");
	tap_ok(rc == -1 && err != NULL && strstr(err, "L2.progress/changes.log")
	    && s != NULL && strcmp(s, "orig") == 0,
	    "link at a log file refused, target untouched: %s", err ? err : "");
	free(s);
	free(err);
	symlinkat(path, pf_sfd, "L2.history.jsonl");
	symlinkat(path, pf_sfd, "L2.tasks.jsonl");
	rc = progress_history_append(pf_sfd, "L2", o, NULL, &err) == -1;
	free(err);
	rc += progress_tasks_append(pf_sfd, "L2", o, &err) == -1;
	free(err);
	rc += progress_tasks_read(pf_sfd, "L2", &a, &err) == -1;
	free(err);
	s = pf_slurp("../target");
	tap_ok(rc == 3 && s != NULL && strcmp(s, "orig") == 0,
	    "links at history and tasks files refused");
	free(s);
	mkfifoat(pf_sfd, "L2.progress/debug.log", 0644);
	rc = pf_log(pf_sfd, "L2", "debug.log", o, &err);
	tap_ok(rc == -1 && err != NULL && strstr(err, "not a regular file"),
	    "a FIFO at a log name is refused without hanging");
	free(err);
	mkdirat(pf_sfd, "L2.workers", 0755);
	symlinkat(path, pf_sfd, "L2.workers/develop.output.json");
	rc = progress_output_save(pf_sfd, "L2", "develop", o, &err);
	s = pf_slurp("../target");
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
	rc = progress_output_save(pf_sfd, ID, "develop", o, &err);
	s = pf_slurp(ID ".workers/develop.output.json");
	tap_is_str(s, "{\n  \"status\": \"success\",\n  \"summary\": \"did it\","
	    "\n  \"files_changed\": [\n    \"a.c\"\n  ]\n}\n",
	    "output.json pretty-printed");
	free(s);
	json_object_set_new(o, "summary", json_string("again"));
	rc += progress_output_save(pf_sfd, ID, "develop", o, &err);
	l = listing(pf_sdir);
	tap_ok(rc == 0 && strstr(l, ".tmp") == NULL, "replaced; no temp file "
	    "left");
	free(l);
	xasprintf(&s, "%s/%s.workers", pf_sdir, ID);
	l = listing(s);
	free(s);
	tap_is_str(l, ". .. develop.output.json ", "the workers directory "
	    "holds only the output");
	free(l);
	json_decref(o);
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
		if (pf_log(dfd, id, "changes.log", o, &err) == -1) {
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
	if (argc == 5 && strcmp(argv[1], "append-log") == 0)
		return append_log(argv[2], argv[3], argv[4]);
	if (pf_setup() != 0)
		return 1;
	test_logs();
	test_tasks();
	test_hostile();
	test_links();
	test_output();
	pf_teardown();
	return tap_done();
}
