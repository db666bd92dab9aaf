/*
 * servetask.c: CCW's task routes of a loop (GET and POST
 * /api/loops/v2/:id/tasks) on the engine's tasks file readers and
 * writers (progress.c: CCW's {id}/tasks.jsonl, every line newline-
 * terminated, a torn last line mended), run on serve's I/O thread.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bus.h"
#include "clock.h"
#include "committer.h"
#include "progress.h"
#include "serveint.h"
#include "state.h"
#include "xmalloc.h"

/* One task job: the loop's directory, the task to add (or NULL: read). */
struct serve_task_job {
	struct serve_call	*c;
	char			*dir;
	json_t			*task;		/* POST: the new task */
	json_t			*tasks;		/* the list read */
	int			 rc;
	char			*err;
};

/*
 * CCW's layout for a new tasks file: {id}/tasks.jsonl (created empty
 * unless the loop has a tasks file already), so CCW sees what we add.
 */
static int
serve_tasks_file(int dfd, const char *id, char **err)
{
	struct stat	 sb;
	char		*name;
	int		 lfd = -1, fd, rc = 0;

	xasprintf(&name, "%s.tasks.jsonl", id);
	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
		free(name);
		return 0;
	}
	free(name);
	if (progress_open_dir(dfd, id, 1, &lfd, err) != 0)
		return -1;
	fd = openat(lfd, "tasks.jsonl", O_WRONLY | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0644);
	if (fd < 0) {
		xasprintf(err, "%s/tasks.jsonl: %s", id, strerror(errno));
		rc = -1;
	} else
		close(fd);
	close(lfd);
	return rc;
}

/* On the I/O thread: read the tasks; for a POST, append the new one. */
static void
serve_tasks_run(void *arg)
{
	struct serve_task_job	*j = arg;
	const char		*id = j->c->id;
	int			 dfd;

	if ((dfd = state_dir_open(j->dir, 0, &j->err)) < 0) {
		j->rc = -1;
		return;
	}
	if (progress_tasks_read(dfd, id, &j->tasks, &j->err) < 0)
		j->rc = -1;
	else if (j->task != NULL) {
		free(j->err);
		j->err = NULL;
		json_object_set_new(j->task, "order", json_integer(
		    (json_int_t)json_array_size(j->tasks)));
		if (serve_tasks_file(dfd, id, &j->err) != 0 ||
		    progress_tasks_append(dfd, id, j->task, &j->err) != 0)
			j->rc = -1;
	}
	close(dfd);
}

/* Back on the loop: the reply (and TASK_ADDED for a POST). */
static void
serve_tasks_done(void *arg)
{
	struct serve_task_job	*j = arg;
	struct serve_call	*c = j->c;
	char			 now[40];

	if (j->rc == 0 && j->task != NULL)
		bus_publish(c->s->cfg.bus, "TASK_ADDED", json_pack("{s:s,s:O,"
		    "s:O}", "loop_id", c->id, "task_id", json_object_get(
		    j->task, "task_id"), "task", j->task));
	if (c->r != NULL && j->rc != 0)
		serve_ccw_error(c->r, 500, j->task != NULL, j->err != NULL ?
		    j->err : "tasks file failed");
	else if (c->r != NULL && j->task != NULL)
		serve_ok(c->r, json_pack("{s:O}", "data", j->task));
	else if (c->r != NULL) {
		clock_iso(NULL, 1, now, sizeof now);
		serve_ok(c->r, json_pack("{s:O,s:I,s:s,s:s}", "data",
		    j->tasks, "total", (json_int_t)json_array_size(j->tasks),
		    "loop_id", c->id, "timestamp", now));
	}
	serve_call_end(c);
	json_decref(j->task);
	json_decref(j->tasks);
	free(j->err);
	free(j->dir);
	free(j);
}

/* Queue a task job for the loop's root. */
static void
serve_tasks_submit(struct serve *s, struct http_req *r,
    struct serve_root *root, const char *id, json_t *task)
{
	struct serve_task_job	*j = xcalloc(1, sizeof *j);

	j->c = serve_call_new(s, r, root, id);
	j->dir = xstrdup(root->state_dir);
	j->task = task;
	if (committer_submit(s->io, serve_tasks_run, serve_tasks_done,
	    j) != 0) {
		serve_tasks_run(j);
		serve_tasks_done(j);
	}
}

/* The root of an existing loop, or the reply sent (400, 404). */
static struct serve_root *
serve_tasks_root(struct serve *s, struct http_req *r, const char *id,
    int body_route)
{
	struct serve_root	*root;

	if (!state_id_valid(id)) {
		serve_ccw_error(r, 400, body_route, "Invalid loop ID format");
		return NULL;
	}
	if ((root = serve_root_of(s, id)) == NULL)
		serve_ccw_error(r, 404, body_route, "Loop not found");
	return root;
}

/* GET /api/loops/v2/:id/tasks: {success, data (by order), total, ...} */
void
serve_tasks_list(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	struct serve_root	*root;

	if ((root = serve_tasks_root(s, r, m->cap[0], 0)) != NULL)
		serve_tasks_submit(s, r, root, m->cap[0], NULL);
}

/* Is v a string member that, when present, is one of words? */
static int
serve_task_word(const json_t *b, const char *key, const char *const *words,
    int required)
{
	const json_t	*v = json_object_get(b, key);
	size_t		 i;

	if (v == NULL)
		return !required;
	if (!json_is_string(v) || json_string_length(v) == 0)
		return 0;
	for (i = 0; words != NULL && words[i] != NULL; i++)
		if (strcmp(json_string_value(v), words[i]) == 0)
			return 1;
	return words == NULL;
}

/*
 * POST /api/loops/v2/:id/tasks {description, tool, mode, prompt_template,
 * command?, on_error?}: a task line with CCW's id and order.
 */
void
serve_tasks_add(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	static const char *const modes[] = { "analysis", "write", "review",
	    NULL };
	static const char *const on_error[] = { "continue", "pause",
	    "fail_fast", NULL };
	static const char *const tools[] = { "bash", "codex", "claude",
	    "gemini", "qwen", "opencode", NULL };
	struct serve_root	*root;
	struct timespec		 ts;
	json_t			*b, *t;
	char			*gen, tid[64], now[40];
	const char		*bad = NULL;

	if ((root = serve_tasks_root(s, r, m->cap[0], 1)) == NULL ||
	    (b = serve_body(r, 0)) == NULL)
		return;
	if (!serve_task_word(b, "description", NULL, 1))
		bad = "description is required";
	else if (!serve_task_word(b, "tool", tools, 1))
		bad = "tool is required (bash, codex, claude, gemini, qwen, "
		    "opencode)";
	else if (!serve_task_word(b, "mode", modes, 1))
		bad = "mode is required (analysis, write, review)";
	else if (!serve_task_word(b, "prompt_template", NULL, 1))
		bad = "prompt_template is required";
	else if (!serve_task_word(b, "on_error", on_error, 0))
		bad = "on_error must be continue, pause or fail_fast";
	else if (json_object_get(b, "command") != NULL &&
	    !json_is_string(json_object_get(b, "command")))
		bad = "command must be a string";
	if (bad != NULL) {
		serve_ccw_error(r, 400, 1, bad);
		json_decref(b);
		return;
	}
	/* CCW's id: task-<ms since the epoch>-<8 hex> */
	clock_gettime(CLOCK_REALTIME, &ts);
	gen = state_id_generate();
	snprintf(tid, sizeof tid, "task-%lld-%s", (long long)ts.tv_sec * 1000 +
	    ts.tv_nsec / 1000000, gen + strlen(gen) - 8);
	free(gen);
	clock_iso(NULL, 1, now, sizeof now);
	t = json_pack("{s:s,s:O,s:O,s:O,s:O,s:s,s:s,s:O?,s:O?}", "task_id",
	    tid, "description", json_object_get(b, "description"), "tool",
	    json_object_get(b, "tool"), "mode", json_object_get(b, "mode"),
	    "prompt_template", json_object_get(b, "prompt_template"),
	    "created_at", now, "updated_at", now, "command",
	    json_object_get(b, "command"), "on_error", json_object_get(b,
	    "on_error"));
	json_decref(b);
	serve_tasks_submit(s, r, root, m->cap[0], t);
}
