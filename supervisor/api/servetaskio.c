/*
 * servetaskio.c: the task routes' jobs on serve's I/O thread (one at a
 * time: every read-modify-write of a tasks file is serialised there) and
 * their replies and TASK_* events back on the event loop; the files are
 * progress.c's (CCW's {id}/tasks.jsonl, lines always newline-terminated).
 */
#include <config.h>

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus.h"
#include "clock.h"
#include "committer.h"
#include "progress.h"
#include "serveint.h"
#include "servetask.h"
#include "state.h"
#include "xmalloc.h"

/* CCW answers these routes' errors {"error"}, the others {success:false}. */
int
serve_task_body_route(enum serve_task_op op)
{
	return op == STO_ADD || op == STO_UPDATE || op == STO_REORDER;
}

/* A task's key as the reader keys it: CCW's task_id, else id. */
static const char *
serve_task_key(const json_t *t)
{
	const char	*k = json_string_value(json_object_get(t, "task_id"));

	return k != NULL ? k : json_string_value(json_object_get(t, "id"));
}

/* Where tid is in the list, or -1. */
static ssize_t
serve_task_index(const json_t *tasks, const char *tid)
{
	const json_t	*t;
	const char	*k;
	size_t		 i;

	json_array_foreach(tasks, i, t)
		if ((k = serve_task_key(t)) != NULL && strcmp(k, tid) == 0)
			return (ssize_t)i;
	return -1;
}

/* The job fails with an HTTP status and CCW's words. */
static void
serve_task_fail(struct serve_task_job *j, int code, const char *msg)
{
	free(j->err);
	j->err = xstrdup(msg);
	j->code = code;
}

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

/*
 * An edit of the list read (update, delete, reorder): 0 and the list to
 * write, or the job failed (404 no such task, 400 an unknown id).
 */
static int
serve_task_edit(struct serve_task_job *j, const char *now)
{
	json_t		*t, *out, *index, *v;
	const char	*tid;
	char		 msg[STATE_ID_MAX + 32];
	ssize_t		 at = -1;
	size_t		 i;

	if (j->op != STO_REORDER &&
	    (at = serve_task_index(j->tasks, j->task_id)) < 0) {
		serve_task_fail(j, 404, "Task not found");
		return -1;
	}
	if (j->op == STO_UPDATE) {
		t = json_array_get(j->tasks, (size_t)at);
		json_object_update(t, j->arg);
		json_object_set_new(t, "updated_at", json_string(now));
		j->task = json_incref(t);
		return 0;
	}
	if (j->op == STO_DELETE) {
		json_array_remove(j->tasks, (size_t)at);
		json_array_foreach(j->tasks, i, t)
			json_object_set_new(t, "order", json_integer(
			    (json_int_t)i));
		return 0;
	}
	/* reorder: the ids given first, then any left out, as CCW does */
	index = json_object();
	json_array_foreach(j->tasks, i, t)
		if ((tid = serve_task_key(t)) != NULL)
			json_object_set_new(index, tid, json_integer(
			    (json_int_t)i));
	out = json_array();
	json_array_foreach(j->arg, i, t) {
		tid = json_string_value(t);
		if ((v = json_object_get(index, tid)) == NULL) {
			snprintf(msg, sizeof msg, "Task not found: %s", tid);
			serve_task_fail(j, 400, msg);
			json_decref(out);
			json_decref(index);
			return -1;
		}
		json_array_append(out, json_array_get(j->tasks,
		    (size_t)json_integer_value(v)));
		json_object_del(index, tid);
	}
	json_array_foreach(j->tasks, i, t)
		if ((tid = serve_task_key(t)) == NULL ||
		    json_object_get(index, tid) != NULL)
			json_array_append(out, t);
	json_decref(index);
	json_array_foreach(out, i, t) {
		json_object_set_new(t, "order", json_integer((json_int_t)i));
		json_object_set_new(t, "updated_at", json_string(now));
	}
	json_decref(j->tasks);
	j->tasks = out;
	return 0;
}

/*
 * One root's loops for the task id alone: every loop with a tasks file
 * ({id}.tasks.jsonl or an {id}/ directory) and a state file is read.
 */
static int
serve_task_search(struct serve_task_job *j, const char *dir)
{
	struct dirent	*de;
	DIR		*d;
	json_t		*tasks;
	char		 id[STATE_ID_MAX + 16], *json, *err = NULL;
	ssize_t		 at;
	size_t		 n;
	int		 fd, hit = 0, ok;

	if ((fd = state_dir_open(dir, 0, &err)) < 0 ||
	    (d = fdopendir(fcntl(fd, F_DUPFD_CLOEXEC, 0))) == NULL) {
		free(err);
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (!hit && (de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (n > 12 && strcmp(de->d_name + n - 12, ".tasks.jsonl") == 0)
			n -= 12;
		else if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (n >= sizeof id)
			continue;
		memcpy(id, de->d_name, n);
		id[n] = '\0';
		if (!state_id_valid(id))
			continue;
		xasprintf(&json, "%s.json", id);
		ok = faccessat(fd, json, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
		free(json);
		if (!ok || progress_tasks_read(fd, id, &tasks, &err) != 0) {
			free(err);
			continue;
		}
		free(err);
		if ((at = serve_task_index(tasks, j->task_id)) >= 0) {
			j->task = json_deep_copy(json_array_get(tasks,
			    (size_t)at));
			json_object_set_new(j->task, "loop_id",
			    json_string(id));
			hit = 1;
		}
		json_decref(tasks);
	}
	closedir(d);
	close(fd);
	return hit;
}

/* On the I/O thread: read the tasks, then the op's change written. */
static void
serve_task_run(void *arg)
{
	struct serve_task_job	*j = arg;
	const char		*id = j->c->id;
	struct serve		*s = j->c->s;
	char			 now[40];
	size_t			 i;
	int			 dfd;

	if (j->op == STO_FIND) {
		for (i = 0; i < s->cfg.nroots; i++)
			if (serve_task_search(j, s->cfg.roots[i].state_dir))
				return;
		serve_task_fail(j, 404, "Task not found");
		return;
	}
	if ((dfd = state_dir_open(j->dir, 0, &j->err)) < 0) {
		j->code = 500;
		return;
	}
	if (progress_tasks_read(dfd, id, &j->tasks, &j->err) < 0)
		j->code = 500;
	else {
		free(j->err);		/* a warning: the driver reports it */
		j->err = NULL;
		clock_iso(NULL, 1, now, sizeof now);
		if (j->op == STO_ADD) {
			json_object_set_new(j->arg, "order", json_integer(
			    (json_int_t)json_array_size(j->tasks)));
			if (serve_tasks_file(dfd, id, &j->err) != 0 ||
			    progress_tasks_append(dfd, id, j->arg, &j->err) != 0)
				j->code = 500;
			else
				j->task = json_incref(j->arg);
		} else if (j->op != STO_LIST && serve_task_edit(j, now) == 0 &&
		    progress_tasks_write(dfd, id, j->tasks, &j->err) != 0)
			j->code = 500;
	}
	close(dfd);
}

/* The job's TASK_* event, once its write landed. */
static void
serve_task_publish(struct serve_task_job *j)
{
	struct bus	*bus = j->c->s->cfg.bus;
	const char	*id = j->c->id;

	switch (j->op) {
	case STO_ADD:
	case STO_UPDATE:
		bus_publish(bus, j->op == STO_ADD ? "TASK_ADDED" :
		    "TASK_UPDATED", json_pack("{s:s,s:O,s:O}", "loop_id", id,
		    "task_id", json_object_get(j->task, "task_id"), "task",
		    j->task));
		break;
	case STO_DELETE:
		bus_publish(bus, "TASK_DELETED", json_pack("{s:s,s:s}",
		    "loop_id", id, "task_id", j->task_id));
		break;
	case STO_REORDER:
		bus_publish(bus, "TASK_REORDERED", json_pack("{s:s,s:O,s:O}",
		    "loop_id", id, "ordered_task_ids", j->arg, "tasks",
		    j->tasks));
		break;
	default:
		break;
	}
}

/* Back on the loop: the event, then the reply in CCW's shape. */
static void
serve_task_done(void *arg)
{
	struct serve_task_job	*j = arg;
	struct serve_call	*c = j->c;
	struct http_req		*r = c->r;
	char			 now[40];

	clock_iso(NULL, 1, now, sizeof now);
	if (j->code == 0)
		serve_task_publish(j);
	if (r == NULL)
		;	/* the client left: the write stands, no reply */
	else if (j->code != 0)
		serve_ccw_error(r, j->code, serve_task_body_route(j->op),
		    j->err != NULL ? j->err : "tasks file failed");
	else if (j->op == STO_LIST)
		serve_ok(r, json_pack("{s:O,s:I,s:s,s:s}", "data", j->tasks,
		    "total", (json_int_t)json_array_size(j->tasks), "loop_id",
		    c->id, "timestamp", now));
	else if (j->op == STO_FIND)
		serve_ok(r, json_pack("{s:O,s:s}", "data", j->task,
		    "timestamp", now));
	else if (j->op == STO_DELETE)
		serve_ok(r, json_pack("{s:s}", "message", "Task deleted"));
	else
		serve_ok(r, json_pack("{s:O}", "data", j->op == STO_REORDER ?
		    j->tasks : j->task));
	serve_call_end(c);
	json_decref(j->arg);
	json_decref(j->task);
	json_decref(j->tasks);
	free(j->task_id);
	free(j->err);
	free(j->dir);
	free(j);
}

/*
 * Queue a job (taken) for the loop id of root (NULL for a search of
 * every root); it ends with the reply.
 */
void
serve_task_submit(struct serve *s, struct http_req *r,
    struct serve_root *root, const char *id, struct serve_task_job *j)
{
	j->c = serve_call_new(s, r, root, id);
	j->dir = root != NULL ? xstrdup(root->state_dir) : NULL;
	if (committer_submit(s->io, serve_task_run, serve_task_done,
	    j) != 0) {
		serve_task_run(j);
		serve_task_done(j);
	}
}
