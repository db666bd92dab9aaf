/*
 * progress.c: writing the side files of a loop: NDJSON logs, the tasks
 * file, worker outputs (atomic replace); the Markdown files are
 * progressmd.c's.
 * Every file is opened relative to the state directory, never through a
 * symbolic link, and every record goes out in one write(2).
 */
#include <config.h>

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "flowdef.h"
#include "progress.h"
#include "rotate.h"
#include "xmalloc.h"

#define PROGRESS_READ_MAX	(64 * 1024 * 1024)
#define PROGRESS_NAME_MAX	128


/* Ids and role names become file names: nothing that leaves the directory. */
int
progress_name_valid(const char *s)
{
	size_t	i;
	char	c;

	if (s == NULL)
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		if (i >= PROGRESS_NAME_MAX)
			return 0;
		c = s[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9'))
			continue;
		if (i == 0 || (c != '.' && c != '_' && c != '-'))
			return 0;
	}
	return i > 0 && strstr(s, "..") == NULL;
}

/* A hostile name is shown, but short and printable, in the error. */
static void
progress_quote(const char *s, char *buf, size_t size)
{
	size_t	i, o = 0;

	for (i = 0; s != NULL && s[i] != '\0' && o + 4 < size; i++) {
		if (i == 40) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		buf[o++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	}
	buf[o] = '\0';
}

/* Every entry point refuses a bad id before touching the directory. */
int
progress_check_id(const char *id, char **err)
{
	char	q[64];

	if (progress_name_valid(id))
		return 0;
	progress_quote(id, q, sizeof q);
	xasprintf(err, "invalid loop id \"%s\": must match "
	    "[A-Za-z0-9][A-Za-z0-9._-]{0,127} without \"..\"", q);
	return -1;
}

/* A link or a non-directory where a directory belongs is named in the error. */
static void
progress_why_not(int dfd, const char *label, const char *name, int saved,
    const char *what, char **err)
{
	struct stat	sb;

	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(sb.st_mode))
		xasprintf(err, "%s: is a symbolic link, refusing to follow it",
		    label);
	else if (saved == ENOTDIR || saved == ELOOP)
		xasprintf(err, "%s: not a %s", label, what);
	else
		xasprintf(err, "%s: %s", label, strerror(saved));
}

/* {id}.progress, {id}.workers, {id}: never through a link; made if asked. */
int
progress_open_dir(int dfd, const char *name, int create, int *out, char **err)
{
	int	fd, tries, saved;

	*out = -1;
	for (tries = 0;; tries++) {
		fd = openat(dfd, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd != -1) {
			*out = fd;
			return 0;
		}
		saved = errno;
		if (saved == ENOENT && !create)
			return 1;
		if (saved == ENOENT && tries == 0) {
			if (mkdirat(dfd, name, 0755) == -1 && errno != EEXIST) {
				xasprintf(err, "%s: mkdir: %s", name,
				    strerror(errno));
				return -1;
			}
			continue;
		}
		progress_why_not(dfd, name, name, saved, "directory", err);
		return -1;
	}
}

/* A regular file, never through a link, no FIFO hang (O_NONBLOCK); 1 absent. */
int
progress_open_file(int dfd, const char *name, const char *label, int flags,
    int *out, char **err)
{
	struct stat	sb;
	int		fd, saved;

	*out = -1;
	fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
	    0644);
	if (fd == -1) {
		saved = errno;
		if (saved == ENOENT && (flags & O_CREAT) == 0)
			return 1;
		progress_why_not(dfd, label, name, saved, "regular file", err);
		return -1;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		xasprintf(err, "%s: not a regular file", label);
		close(fd);
		return -1;
	}
	*out = fd;
	return 0;
}

/* Read an open file whole, bounded, NUL-terminated. */
int
progress_read_fd(int fd, const char *label, char **buf, size_t *len,
    char **err)
{
	struct sbuf	sb = { NULL, 0, 0 };
	ssize_t		n;

	do {
		sbuf_grow(&sb, 65536);
		n = pread(fd, sb.p + sb.len, 65536, sb.len);
		if (n > 0)
			sb.len += (size_t)n;
	} while ((n > 0 && sb.len <= PROGRESS_READ_MAX) ||
	    (n == -1 && errno == EINTR));
	sb.p[sb.len] = '\0';
	*buf = sb.p;
	*len = sb.len;
	if (n == 0)
		return 0;
	if (n == -1)
		xasprintf(err, "%s: read: %s", label, strerror(errno));
	else
		xasprintf(err, "%s: larger than %d bytes", label,
		    PROGRESS_READ_MAX);
	free(sb.p);
	*buf = NULL;
	return -1;
}

/* The readers in rebuild.c and the tasks reader share this. */
int
progress_read_file(int dfd, const char *name, const char *label, char **buf,
    size_t *len, struct timespec *mtime, char **err)
{
	struct stat	sb;
	int		fd, rc;

	*buf = NULL;
	*len = 0;
	if ((rc = progress_open_file(dfd, name, label, O_RDONLY, &fd,
	    err)) != 0)
		return rc;
	if (mtime != NULL) {
		if (fstat(fd, &sb) == 0)
			*mtime = sb.st_mtim;
		else
			memset(mtime, 0, sizeof *mtime);
	}
	rc = progress_read_fd(fd, label, buf, len, err);
	close(fd);
	return rc;
}

/*
 * Whether the file ends mid-line.  A write in flight (the size grows page
 * by page) looks the same for an instant, so only a last byte that stays
 * a non-newline while the size stays put for 2 ms counts: a writer that
 * died.  Our own writers hold the flock and are never seen in flight.
 */
static int
progress_torn(int fd)
{
	struct timespec	 ts = { 0, 2000000 };
	struct stat	 sb;
	off_t		 size = -1;
	char		 last;
	int		 i;

	for (i = 0; i < 5; i++) {
		if (fstat(fd, &sb) == -1 || sb.st_size == 0 ||
		    pread(fd, &last, 1, sb.st_size - 1) != 1 || last == '\n')
			return 0;
		if (sb.st_size == size)
			return 1;
		size = sb.st_size;
		nanosleep(&ts, NULL);
	}
	return 1;
}

/*
 * The appenders' flock.  With a stopping flag (a side job on the store's
 * thread) it is polled, backing off to 10 ms, and given up once the flag
 * is set: a front end holding it must not keep a stopping process.
 */
static int
progress_lock(int fd, const char *label, const atomic_int *stopping,
    char **err)
{
	struct timespec	ts;
	long		ms = 1;
	int		op = stopping != NULL ? LOCK_EX | LOCK_NB : LOCK_EX;

	while (flock(fd, op) == -1) {
		if (errno == EINTR)
			continue;
		if (stopping == NULL || errno != EWOULDBLOCK) {
			xasprintf(err, "%s: flock: %s", label, strerror(errno));
			return -1;
		}
		if (atomic_load(stopping)) {
			xasprintf(err, "%s: locked by another program; record "
			    "dropped (stopping)", label);
			return -1;
		}
		ts.tv_sec = 0;
		ts.tv_nsec = ms * 1000000L;
		nanosleep(&ts, NULL);
		ms = ms < 10 ? ms * 2 : 10;
	}
	return 0;
}

/*
 * Append data in one write(2) to an O_APPEND descriptor, under an flock
 * against our other appenders (see progress_lock for stopping).  If the
 * file ends mid-line (a writer died), a newline goes first in the same
 * write: records are never glued.
 */
int
progress_append_fd(int fd, const char *label, const char *data, size_t len,
    const atomic_int *stopping, char **err)
{
	char		*buf = NULL;
	const char	*p = data;
	size_t		 total = len;
	ssize_t		 n;

	if (progress_lock(fd, label, stopping, err) == -1)
		return -1;
	if (progress_torn(fd)) {
		buf = xmalloc(len + 1);
		buf[0] = '\n';
		memcpy(buf + 1, data, len);
		p = buf;
		total = len + 1;
	}
	do
		n = write(fd, p, total);
	while (n == -1 && errno == EINTR);
	flock(fd, LOCK_UN);
	free(buf);
	if (n == -1) {
		xasprintf(err, "%s: write: %s", label, strerror(errno));
		return -1;
	}
	if ((size_t)n != total) {
		xasprintf(err, "%s: short write (%zd of %zu bytes)", label, n,
		    total);
		return -1;
	}
	return 0;
}

/* One compact JSON object and its newline, appended as one record. */
static int
progress_append_ndjson(int dfd, const char *name, const char *label,
    const json_t *obj, const atomic_int *stopping, char **err)
{
	char	*s, *line;
	int	 fd, rc;

	if (!json_is_object(obj)) {
		xasprintf(err, "%s: a record must be a JSON object", label);
		return -1;
	}
	if ((s = json_dumps(obj, JSON_COMPACT)) == NULL) {
		xasprintf(err, "%s: cannot encode the record", label);
		return -1;
	}
	xasprintf(&line, "%s\n", s);
	free(s);
	rc = progress_open_file(dfd, name, label, O_RDWR | O_APPEND | O_CREAT,
	    &fd, err);
	if (rc == 0) {
		rc = progress_append_fd(fd, label, line, strlen(line),
		    stopping, err);
		/* past its size: NAME.1 (rotate.c); racing is harmless */
		if (rc == 0)
			(void)rotate_maybe(dfd, name, fd);
		close(fd);
	}
	free(line);
	return rc;
}

/* Is name one of the workflow's logs? */
static int
progress_log_known(const struct workflow_state *ws, const char *name)
{
	const char *const	*l;

	for (l = ws != NULL ? ws->logs : NULL; name != NULL && l != NULL &&
	    *l != NULL; l++)
		if (strcmp(*l, name) == 0)
			return 1;
	return 0;
}

/*
 * One record of one of the workflow's logs in {id}.progress/: the table
 * names them (flowdef.h), so no agent's output can pick another file.
 */
int
progress_log(const struct workflow_state *ws, int dfd, const char *id,
    const char *name, const json_t *obj, const atomic_int *stopping,
    char **err)
{
	struct sbuf		 sb = { NULL, 0, 0 };
	const char *const	*l;
	char			*dir, *label, q[64];
	int			 pfd, rc;

	*err = NULL;
	if (progress_check_id(id, err) == -1)
		return -1;
	if (!progress_log_known(ws, name)) {
		progress_quote(name, q, sizeof q);
		for (l = ws != NULL ? ws->logs : NULL; l != NULL && *l != NULL;
		    l++)
			sbuf_printf(&sb, "%s%s", sb.len > 0 ? ", " : "",
			    *l);
		xasprintf(err, "unknown log \"%s\": the workflow keeps %s", q,
		    sb.len > 0 ? sb.p : "none");
		free(sb.p);
		return -1;
	}
	xasprintf(&dir, "%s.progress", id);
	xasprintf(&label, "%s/%s", dir, name);
	rc = progress_open_dir(dfd, dir, 1, &pfd, err);
	if (rc == 0) {
		rc = progress_append_ndjson(pfd, name, label, obj, stopping,
		    err);
		close(pfd);
	}
	free(label);
	free(dir);
	return rc;
}

/* The loop's history: one event a line in {id}.history.jsonl. */
int
progress_history_append(int dfd, const char *id, const json_t *event,
    const atomic_int *stopping, char **err)
{
	char	*name;
	int	 rc;

	*err = NULL;
	if (progress_check_id(id, err) == -1)
		return -1;
	xasprintf(&name, "%s.history.jsonl", id);
	rc = progress_append_ndjson(dfd, name, name, event, stopping, err);
	free(name);
	return rc;
}

/* To {id}.tasks.jsonl, or {id}/tasks.jsonl if only it exists: one list. */
int
progress_tasks_append(int dfd, const char *id, const json_t *task,
    char **err)
{
	struct stat	 sb;
	char		*name, *label;
	int		 lfd = -1, rc;

	*err = NULL;
	if (progress_check_id(id, err) == -1)
		return -1;
	xasprintf(&name, "%s.tasks.jsonl", id);
	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == -1 &&
	    errno == ENOENT && progress_open_dir(dfd, id, 0, &lfd, err) == 0 &&
	    fstatat(lfd, "tasks.jsonl", &sb, AT_SYMLINK_NOFOLLOW) == -1) {
		close(lfd);
		lfd = -1;
	}
	if (*err != NULL)
		rc = -1;
	else if (lfd != -1) {
		xasprintf(&label, "%s/tasks.jsonl", id);
		rc = progress_append_ndjson(lfd, "tasks.jsonl", label, task,
		    NULL, err);
		free(label);
		close(lfd);
	} else
		rc = progress_append_ndjson(dfd, name, name, task, NULL, err);
	free(name);
	return rc;
}

/*
 * Lines of one tasks file into the list: blank lines are skipped (the
 * last line may lack its newline: CCW writes it so), lines that are not
 * a JSON object or have no string id are reported, never dropped
 * silently (the second kind stays in the list for `state rebuild` to
 * name); a task is keyed on CCW's "task_id", else "id", and a task whose
 * key was seen before replaces it in place (a later line is an update).
 */
static int
progress_tasks_file(int dfd, const char *name, const char *label,
    json_t *arr, json_t *index, struct sbuf *warn, char **err)
{
	json_error_t	 jerr;
	json_t		*t, *at;
	const char	*tid;
	char		*buf, *p, *end, *nl;
	size_t		 len, bad = 0, line = 0, first = 0;
	int		 rc;

	if ((rc = progress_read_file(dfd, name, label, &buf, &len, NULL,
	    err)) != 0)
		return rc == 1 ? 0 : -1;
	for (p = buf, end = buf + len; p < end; p = nl + 1) {
		line++;
		if ((nl = memchr(p, '\n', end - p)) == NULL)
			nl = end;
		if (strspn(p, " \t\r") >= (size_t)(nl - p))
			continue;
		t = json_loadb(p, nl - p, 0, &jerr);
		if ((tid = json_string_value(json_object_get(t,
		    "task_id"))) == NULL)
			tid = json_string_value(json_object_get(t, "id"));
		if (!json_is_object(t) || tid == NULL || *tid == '\0') {
			if (bad++ == 0)
				first = line;
			if (json_is_object(t))
				json_array_append_new(arr, t);
			else
				json_decref(t);
			continue;
		}
		if ((at = json_object_get(index, tid)) != NULL)
			json_array_set_new(arr, json_integer_value(at), t);
		else {
			json_object_set_new(index, tid,
			    json_integer(json_array_size(arr)));
			json_array_append_new(arr, t);
		}
	}
	free(buf);
	if (bad > 0)
		sbuf_printf(warn, "%s%zu malformed line%s in %s (not a "
		    "JSON object with a task_id or id; first: line %zu)",
		    warn->len > 0 ? "; " : "", bad, bad == 1 ? "" : "s",
		    label, first);
	return 0;
}

/* A task's place in CCW's list: its "order", else after every ordered one. */
static double
progress_task_order(const json_t *t)
{
	const json_t	*o = json_object_get(t, "order");

	return json_is_number(o) ? json_number_value(o) : 1e300;
}

/*
 * CCW's file lists tasks by "order", not by line (a reorder rewrites the
 * numbers): a stable insertion sort, then the key index made again.
 */
static void
progress_tasks_sort(json_t *arr, json_t *index)
{
	json_t		*t;
	const char	*tid;
	size_t		 i, j, n = json_array_size(arr);

	for (i = 1; i < n; i++) {
		t = json_incref(json_array_get(arr, i));
		for (j = i; j > 0 && progress_task_order(json_array_get(arr,
		    j - 1)) > progress_task_order(t); j--)
			json_array_set(arr, j, json_array_get(arr, j - 1));
		json_array_set_new(arr, j, t);
	}
	json_object_clear(index);
	json_array_foreach(arr, i, t) {
		if ((tid = json_string_value(json_object_get(t, "task_id"))) ==
		    NULL)
			tid = json_string_value(json_object_get(t, "id"));
		if (tid != NULL && *tid != '\0')
			json_object_set_new(index, tid, json_integer(i));
	}
}

/*
 * Tasks from both of CCW's layouts, {id}/tasks.jsonl first (by "order")
 * and then
 * {id}.tasks.jsonl, so that the file we append to has the last word.
 * Malformed lines do not fail the read: 0 with a warning in *err.
 */
int
progress_tasks_read(int dfd, const char *id, json_t **out, char **err)
{
	struct sbuf	 warn = { NULL, 0, 0 };
	json_t		*arr, *index;
	char		*name, *label;
	int		 lfd, rc;

	*err = NULL;
	*out = NULL;
	if (progress_check_id(id, err) == -1)
		return -1;
	arr = json_array();
	index = json_object();
	if ((rc = progress_open_dir(dfd, id, 0, &lfd, err)) == 0) {
		xasprintf(&label, "%s/tasks.jsonl", id);
		rc = progress_tasks_file(lfd, "tasks.jsonl", label, arr, index,
		    &warn, err);
		free(label);
		close(lfd);
		progress_tasks_sort(arr, index);
	} else if (rc == 1)
		rc = 0;
	if (rc == 0) {
		xasprintf(&name, "%s.tasks.jsonl", id);
		rc = progress_tasks_file(dfd, name, name, arr, index, &warn,
		    err);
		free(name);
	}
	json_decref(index);
	if (rc == -1) {
		json_decref(arr);
		free(warn.p);
		return -1;
	}
	*out = arr;
	*err = warn.p;
	return 0;
}

/* Write all of it, or say why not. */
static int
progress_write_all(int fd, const char *label, const char *p, size_t len,
    char **err)
{
	if (fd_write_all(fd, p, len) == 0)
		return 0;
	xasprintf(err, "%s: write: %s", label, strerror(errno));
	return -1;
}

/*
 * name in wfd replaced by data: temp (pid in its name), fsync, rename,
 * fsync the directory: a reader sees the old or the new, never half.
 */
int
progress_replace(int wfd, const char *name, const char *label,
    const char *data, size_t len, char **err)
{
	char	*tmp;
	int	 fd, rc = -1;

	xasprintf(&tmp, "%s.%ld.tmp", name, (long)getpid());
	unlinkat(wfd, tmp, 0);		/* ours (pid in the name): a crash */
	if ((fd = openat(wfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) == -1)
		xasprintf(err, "%s.tmp: %s", label, strerror(errno));
	else if (progress_write_all(fd, label, data, len, err) == 0) {
		if (fsync(fd) == -1)
			xasprintf(err, "%s: fsync: %s", label, strerror(errno));
		else
			rc = 0;
	}
	if (fd != -1)
		close(fd);
	if (rc == 0 && renameat(wfd, tmp, wfd, name) == -1) {
		xasprintf(err, "%s: rename: %s", label, strerror(errno));
		rc = -1;
	}
	if (rc == 0)
		fsync(wfd);
	else
		unlinkat(wfd, tmp, 0);
	free(tmp);
	return rc;
}

/* A worker's output in {id}.workers/{role}.output.json, replaced whole. */
int
progress_output_save(int dfd, const char *id, const char *role,
    const json_t *output, char **err)
{
	char	*dir, *name, *label, *s;
	int	 wfd = -1, rc = -1;

	*err = NULL;
	if (progress_check_id(id, err) == -1)
		return -1;
	if (!progress_name_valid(role)) {
		xasprintf(err, "invalid role name");
		return -1;
	}
	if (!json_is_object(output)) {
		xasprintf(err, "%s output: must be a JSON object", role);
		return -1;
	}
	if ((s = json_dumps(output, JSON_INDENT(2))) == NULL) {
		xasprintf(err, "%s output: cannot encode it", role);
		return -1;
	}
	xasprintf(&dir, "%s.workers", id);
	xasprintf(&name, "%s.output.json", role);
	xasprintf(&label, "%s/%s", dir, name);
	if (progress_open_dir(dfd, dir, 1, &wfd, err) == 0) {
		s = xreallocarray(s, 1, strlen(s) + 2);
		strcat(s, "\n");
		rc = progress_replace(wfd, name, label, s, strlen(s), err);
		close(wfd);
	}
	free(s);
	free(label);
	free(name);
	free(dir);
	return rc;
}

/*
 * The whole list, one compact object a line, every line newline-
 * terminated, replacing CCW's {id}/tasks.jsonl (the engine's
 * {id}.tasks.jsonl when only it exists); the other layout, whose lines
 * would override these on the next read, is removed after the rename.
 * The caller serialises its rewrites (serve's I/O thread).
 */
int
progress_tasks_write(int dfd, const char *id, const json_t *tasks,
    char **err)
{
	struct sbuf	 sb = { NULL, 0, 0 };
	struct stat	 st;
	const json_t	*t;
	char		*legacy, *label, *line;
	size_t		 i;
	int		 lfd = -1, own, rc = -1;

	*err = NULL;
	if (progress_check_id(id, err) == -1)
		return -1;
	json_array_foreach(tasks, i, t) {
		if (!json_is_object(t) || (line = json_dumps(t,
		    JSON_COMPACT)) == NULL) {
			xasprintf(err, "%s tasks: task %zu is not an object",
			    id, i);
			free(sb.p);
			return -1;
		}
		sbuf_printf(&sb, "%s\n", line);
		free(line);
	}
	sbuf_grow(&sb, 0);
	xasprintf(&legacy, "%s.tasks.jsonl", id);
	xasprintf(&label, "%s/tasks.jsonl", id);
	own = fstatat(dfd, legacy, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (own && (rc = progress_open_dir(dfd, id, 0, &lfd, err)) != -1 &&
	    (lfd == -1 || fstatat(lfd, "tasks.jsonl", &st,
	    AT_SYMLINK_NOFOLLOW) == -1))
		rc = progress_replace(dfd, legacy, legacy, sb.p, sb.len, err);
	else if (*err == NULL && (lfd != -1 || progress_open_dir(dfd, id, 1,
	    &lfd, err) == 0) && (rc = progress_replace(lfd, "tasks.jsonl",
	    label, sb.p, sb.len, err)) == 0 && own &&
	    unlinkat(dfd, legacy, 0) == -1 && errno != ENOENT) {
		xasprintf(err, "%s: unlink: %s", legacy, strerror(errno));
		rc = -1;
	}
	if (lfd != -1)
		close(lfd);
	free(label);
	free(legacy);
	free(sb.p);
	return rc;
}
