/*
 * servelog.c: a loop's workers as the loop page reads them: GET
 * /api/loops/v2/:id/logs/:agent?offset=N (a piece of {id}.workers/
 * agent-N.log, 64 KiB at most) and GET /api/loops/v2/:id/workers (the
 * logs there, each role's last output, the resume capsule), read on
 * serve's I/O thread.
 */
#include <config.h>

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capsule.h"
#include "committer.h"
#include "serveint.h"
#include "state.h"
#include "xmalloc.h"

#define SERVE_LOG_CHUNK	 (64 * 1024)	/* log bytes one answer carries */
#define SERVE_OUTPUT_MAX (256 * 1024)	/* a {role}.output.json read whole */
#define SERVE_AGENTS_MAX 1000		/* agents one workers answer lists */

/* One read: what was asked, then what the I/O thread found. */
struct serve_log_job {
	struct serve_call	*c;
	char			*dir;		/* the loop's state directory */
	char			*root;		/* its project (the capsule's) */
	char			 agent[24];	/* "agent-N"; "" for the list */
	uint64_t		 offset;
	int			 code;		/* 200, or the refusal's */
	const char		*why;		/* the refusal's words */
	json_t			*data;
};

/*
 * Only "agent-N" (N a number without a leading zero, 9 digits at most)
 * names a log: nothing else can reach a file, so no name escapes the
 * loop's {id}.workers directory.
 */
static int
serve_log_agent_valid(const char *a)
{
	size_t	 n;

	if (strncmp(a, "agent-", 6) != 0)
		return 0;
	a += 6;
	n = strspn(a, "0123456789");
	return n >= 1 && n <= 9 && a[n] == '\0' && a[0] != '0';
}

/*
 * ?offset=N: digits only, absent 0; -1 for anything else (a sign, a
 * number past 2^63): an offset past the log's end is not an error.
 */
static int
serve_log_offset(const char *q, uint64_t *off)
{
	char	 buf[24];
	int	 rc = http_query_get(q, "offset", buf, sizeof buf);
	size_t	 n;

	*off = 0;
	if (rc == 0)
		return 0;
	n = strspn(buf, "0123456789");
	if (rc != 1 || n == 0 || buf[n] != '\0' || n > 18)
		return -1;
	*off = strtoull(buf, NULL, 10);
	return 0;
}

/*
 * The length of the UTF-8 character at p (n bytes there): 1 to 4, 0
 * if it is not one (overlong, a surrogate, a stray byte), -1 if the
 * bytes end inside it (the rest may be written yet).
 */
static int
serve_log_char(const unsigned char *p, size_t n)
{
	unsigned	 c = p[0], need, min, v;
	size_t		 i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
		min = 0x80;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		min = 0x800;
		v = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		min = 0x10000;
		v = c & 0x07;
	} else
		return 0;
	for (i = 1; i <= need; i++) {
		if (i >= n)
			return -1;
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	return (int)need + 1;
}

/*
 * A log's bytes as a JSON string: what is not UTF-8 becomes U+FFFD; a
 * character cut by the end of the piece is left for the next read
 * (*used: the bytes taken).
 */
static json_t *
serve_log_text(const unsigned char *p, size_t n, size_t *used)
{
	char	*out = xmalloc(n * 3 + 1);
	size_t	 i = 0, o = 0;
	int	 k;
	json_t	*j;

	while (i < n) {
		if ((k = serve_log_char(p + i, n - i)) < 0)
			break;
		if (k == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, p + i, (size_t)k);
		o += (size_t)k;
		i += (size_t)k;
	}
	*used = i;
	j = json_stringn(out, o);
	free(out);
	return j;
}

/* {id}.workers in dir, never through a link: a fd, or -1. */
static int
serve_log_workers_open(const char *dir, const char *id)
{
	char	*name;
	int	 dfd, wfd;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	xasprintf(&name, "%s.workers", id);
	wfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	free(name);
	close(dfd);
	return wfd;
}

/*
 * A plain file in wfd, opened without following a link and without
 * blocking on a FIFO: a fd and its size, or -1.
 */
static int
serve_log_file_open(int wfd, const char *name, off_t *size)
{
	struct stat	 sb;
	int		 fd;

	fd = openat(wfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -1;
	}
	*size = sb.st_size;
	return fd;
}

/* On the I/O thread: at most SERVE_LOG_CHUNK bytes from the offset. */
static void
serve_log_read(void *arg)
{
	struct serve_log_job	*j = arg;
	unsigned char		*buf;
	char			*name;
	off_t			 size;
	uint64_t		 off;
	size_t			 n, got = 0, used;
	ssize_t			 k;
	int			 wfd, fd;

	if ((wfd = serve_log_workers_open(j->dir, j->c->id)) < 0) {
		j->code = 404;
		j->why = "Log not found";
		return;
	}
	xasprintf(&name, "%s.log", j->agent);
	fd = serve_log_file_open(wfd, name, &size);
	free(name);
	close(wfd);
	if (fd < 0) {
		j->code = 404;
		j->why = "Log not found";
		return;
	}
	off = j->offset < (uint64_t)size ? j->offset : (uint64_t)size;
	n = (uint64_t)size - off < SERVE_LOG_CHUNK ?
	    (size_t)((uint64_t)size - off) : SERVE_LOG_CHUNK;
	buf = xmalloc(n + 1);
	while (got < n && (k = pread(fd, buf + got, n - got,
	    (off_t)(off + got))) > 0)
		got += (size_t)k;
	close(fd);
	j->data = json_pack("{s:s,s:I,s:o,s:I}", "agent", j->agent, "offset",
	    (json_int_t)off, "text", serve_log_text(buf, got, &used), "size",
	    (json_int_t)size);
	json_object_set_new(j->data, "next", json_integer((json_int_t)(off +
	    used)));
	json_object_set_new(j->data, "truncated", json_boolean(off + used <
	    (uint64_t)size));
	free(buf);
	j->code = 200;
}

/* A {role}.output.json: the object, or NULL (too big, not JSON). */
static json_t *
serve_log_output(int wfd, const char *name)
{
	off_t	 size;
	char	*buf;
	size_t	 got = 0;
	ssize_t	 k;
	int	 fd;
	json_t	*o;

	if ((fd = serve_log_file_open(wfd, name, &size)) < 0)
		return NULL;
	if (size > SERVE_OUTPUT_MAX) {
		close(fd);
		return NULL;
	}
	buf = xmalloc((size_t)size + 1);
	while (got < (size_t)size && (k = read(fd, buf + got,
	    (size_t)size - got)) > 0)
		got += (size_t)k;
	close(fd);
	o = json_loadb(buf, got, 0, NULL);
	free(buf);
	if (!json_is_object(o)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* One directory entry: an agent's log (listed) or a role's output. */
static void
serve_log_entry(int wfd, const char *name, json_t *agents, json_t *outs)
{
	char	 agent[24];
	size_t	 n = strlen(name);
	off_t	 size;
	int	 fd;
	json_t	*o;

	if (n > 12 && strcmp(name + n - 12, ".output.json") == 0) {
		if ((o = serve_log_output(wfd, name)) != NULL)
			json_object_set_new(outs, json_string_value(
			    json_object_get(o, "agent_id")) != NULL ?
			    json_string_value(json_object_get(o, "agent_id")) :
			    "", o);
		return;
	}
	if (n < 5 || n - 4 >= sizeof agent || strcmp(name + n - 4, ".log") ||
	    json_array_size(agents) >= SERVE_AGENTS_MAX)
		return;
	memcpy(agent, name, n - 4);
	agent[n - 4] = '\0';
	if (!serve_log_agent_valid(agent) ||
	    (fd = serve_log_file_open(wfd, name, &size)) < 0)
		return;
	close(fd);
	json_array_append_new(agents, json_pack("{s:s,s:I}", "agent", agent,
	    "size", (json_int_t)size));
}

/* Agents by their number. */
static int
serve_log_by_agent(const void *a, const void *b)
{
	long	x = atol(json_string_value(json_object_get(*(json_t *const *)a,
		    "agent")) + 6);
	long	y = atol(json_string_value(json_object_get(*(json_t *const *)b,
		    "agent")) + 6);

	return (x > y) - (x < y);
}

/*
 * The loop's resume capsule (capsule.c), as JSON and as the text a
 * re-spawned worker's prompt gets; null members if the state is not read.
 */
static void
serve_log_capsule(struct serve_log_job *j, json_t *out)
{
	json_t	*st = NULL, *cap = NULL;
	char	*err = NULL, *text = NULL;
	int	 fd;

	if ((fd = state_dir_open(j->dir, 0, &err)) >= 0) {
		if (state_load(fd, j->c->id, &st, &err) == STATE_OK &&
		    json_is_object(st)) {
			cap = capsule_build_root(st, j->dir, j->root);
			text = capsule_render(cap);
		}
		close(fd);
	}
	json_object_set_new(out, "capsule", cap != NULL ? cap : json_null());
	json_object_set_new(out, "capsule_text", text != NULL ?
	    json_string(text) : json_null());
	free(text);
	free(err);
	json_decref(st);
}

/* On the I/O thread: each log with its agent's last output, if kept. */
static void
serve_log_list(void *arg)
{
	struct serve_log_job	*j = arg;
	struct dirent		*e;
	json_t			*agents = json_array(), *outs = json_object();
	json_t			**v, *a, *o;
	DIR			*d;
	size_t			 i, n;
	int			 wfd;

	j->code = 200;
	j->data = json_pack("{s:[]}", "workers");
	serve_log_capsule(j, j->data);
	if ((wfd = serve_log_workers_open(j->dir, j->c->id)) >= 0 &&
	    (d = fdopendir(wfd)) != NULL) {
		while ((e = readdir(d)) != NULL)
			serve_log_entry(dirfd(d), e->d_name, agents, outs);
		closedir(d);
	} else if (wfd >= 0)
		close(wfd);
	n = json_array_size(agents);
	v = xreallocarray(NULL, n + 1, sizeof *v);
	json_array_foreach(agents, i, a)
		v[i] = a;
	qsort(v, n, sizeof *v, serve_log_by_agent);
	for (i = 0; i < n; i++) {
		o = json_object_get(outs, json_string_value(json_object_get(
		    v[i], "agent")));
		json_object_set(v[i], "output", o != NULL ? o : json_null());
		json_array_append(json_object_get(j->data, "workers"), v[i]);
	}
	free(v);
	json_decref(agents);
	json_decref(outs);
}

/* Back on the loop: the answer, unless the client left. */
static void
serve_log_done(void *arg)
{
	struct serve_log_job	*j = arg;

	if (j->c->r != NULL) {
		if (j->code == 200)
			serve_ok(j->c->r, json_pack("{s:O}", "data", j->data));
		else
			serve_ccw_error(j->c->r, j->code, 0, j->why);
	}
	serve_call_end(j->c);
	json_decref(j->data);
	free(j->dir);
	free(j->root);
	free(j);
}

/*
 * The loop's job (400 a bad id, 404 no such loop), then run on the I/O
 * thread (in line if it is gone: serve's shutdown).
 */
static void
serve_log_submit(struct serve *s, struct http_req *r, const char *id,
    struct serve_log_job *j, committer_run_fn run)
{
	struct serve_root	*root;

	if (!state_id_valid(id)) {
		serve_ccw_error(r, 400, 0, "Invalid loop ID format");
		free(j);
		return;
	}
	if ((root = serve_root_of(s, id)) == NULL) {
		serve_ccw_error(r, 404, 0, "Loop not found");
		free(j);
		return;
	}
	j->c = serve_call_new(s, r, root, id);
	j->dir = xstrdup(root->state_dir);
	j->root = root->root != NULL ? xstrdup(root->root) : NULL;
	if (committer_submit(s->io, run, serve_log_done, j) != 0) {
		run(j);
		serve_log_done(j);
	}
}

/* GET /api/loops/v2/:id/logs/:agent?offset=N */
void
serve_loop_log(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	struct serve_log_job	*j = xcalloc(1, sizeof *j);

	if (serve_log_offset(http_req_head(r)->query, &j->offset) != 0) {
		serve_ccw_error(r, 400, 0, "bad offset");
		free(j);
		return;
	}
	if (!serve_log_agent_valid(m->cap[1])) {
		serve_ccw_error(r, 404, 0, "Log not found");
		free(j);
		return;
	}
	snprintf(j->agent, sizeof j->agent, "%s", m->cap[1]);
	serve_log_submit(s, r, m->cap[0], j, serve_log_read);
}

/* GET /api/loops/v2/:id/workers */
void
serve_loop_workers(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	serve_log_submit(s, r, m->cap[0], xcalloc(1,
	    sizeof(struct serve_log_job)), serve_log_list);
}
