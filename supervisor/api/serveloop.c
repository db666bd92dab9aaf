/*
 * serveloop.c: CCW's /api/loops/v2 routes (ccw-api.md section 1) on the
 * verb table: every write is a loop verb (the engine's locked merge by
 * ownership on the api's committer thread); start and resume launch the
 * loop on its root's host, stop also stops the workers of a loop hosted
 * here; the list and delete run on serve's own I/O thread.
 */
#include <config.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "bus.h"
#include "clock.h"
#include "committer.h"
#include "gitrun.h"
#include "host.h"
#include "log.h"
#include "loopdriver.h"
#include "serveint.h"
#include "state.h"
#include "sup.h"
#include "wtclean.h"
#include "xmalloc.h"

#define SERVE_LIST_MAX	100000	/* loop files one list reads at most */

/* The root whose state directory holds {id}.json, or NULL. */
struct serve_root *
serve_root_of(struct serve *s, const char *id)
{
	char	*path;
	size_t	 i;
	int	 hit;

	for (i = 0; i < s->cfg.nroots; i++) {
		xasprintf(&path, "%s/%s.json", s->cfg.roots[i].state_dir, id);
		hit = faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
		free(path);
		if (hit)
			return &s->cfg.roots[i];
	}
	return NULL;
}

/* CCW refuses these ids with its own words (400). */
static int
serve_id_check(struct http_req *r, const char *id, int body_route)
{
	if (state_id_valid(id))
		return 0;
	serve_ccw_error(r, 400, body_route, "Invalid loop ID format");
	return -1;
}

/* The loop's root, or the reply sent (400 bad id, 404 no such loop). */
static struct serve_root *
serve_loop_root(struct serve *s, struct http_req *r, const char *id,
    int body_route)
{
	struct serve_root	*root;

	if (serve_id_check(r, id, body_route) != 0)
		return NULL;
	if ((root = serve_root_of(s, id)) == NULL)
		serve_ccw_error(r, 404, body_route, "Loop not found");
	return root;
}

/* A loop verb's request: {"verb": V, "loop_id": ID}. */
static json_t *
serve_verb(const char *verb, const char *id)
{
	return json_pack("{s:s,s:s}", "verb", verb, "loop_id", id);
}

/*
 * A loop verb's refusal in CCW's shape: the status the kind's
 * (errcode.c); a missing loop in CCW's words, else the message (for a
 * bad member, the table's "detail" without the verb's name).
 */
static void
serve_verb_error(struct serve_call *c, json_t *reply, int body_route)
{
	enum err_code	 code = api_reply_code(reply);
	const char	*e = json_string_value(json_object_get(reply, "detail"));

	if (e == NULL)
		e = json_string_value(json_object_get(reply, "error"));
	serve_ccw_error(c->r, err_code_http(code), body_route,
	    code == ERR_NOT_FOUND ? "Loop not found" : e != NULL ? e :
	    "failed");
	serve_call_end(c);
}

/* What a loop action's reply says it did (CCW's words). */
static const char *
serve_loop_said(enum serve_op op)
{
	switch (op) {
	case SOP_START:		return "Loop started";
	case SOP_PAUSE:		return "Loop paused";
	case SOP_RESUME:	return "Loop resumed";
	case SOP_STOP:		return "Loop stopped";
	default:		break;
	}
	return NULL;
}

/* A front end's write landed: dashboards hear the loop's new state. */
static void
serve_publish_state(struct serve *s, const json_t *loop)
{
	char	 now[40];

	clock_iso(NULL, 1, now, sizeof now);
	bus_publish(s->cfg.bus, "LOOP_STATE_UPDATE", json_pack(
	    "{s:O?,s:O?,s:O?,s:O?,s:s}", "loop_id", json_object_get(loop,
	    "loop_id"), "status", json_object_get(loop, "status"),
	    "current_iteration", json_object_get(loop, "current_iteration"),
	    "updated_at", json_object_get(loop, "updated_at"), "timestamp",
	    now));
}

/* The reply's loop says which of serve's roots holds it (the page
   filters by root). */
static void
serve_loop_rooted(struct serve_call *c, json_t *reply)
{
	json_t	*loop = json_object_get(reply, "loop");

	if (json_is_object(loop))
		json_object_set_new(loop, "root", json_string(c->root->root));
}

/* The last step of a route: the loop as it is now, with a message. */
static void
serve_loop_final(struct serve_call *c, json_t *reply)
{
	json_t	*extra;

	if (!json_is_true(json_object_get(reply, "ok"))) {
		serve_verb_error(c, reply, c->body);
		return;
	}
	serve_loop_rooted(c, reply);
	extra = json_pack("{s:O}", "data", json_object_get(reply, "loop"));
	if (c->op != SOP_NONE) {
		if (!c->body)	/* PATCH answers {success, data} */
			json_object_set_new(extra, "message",
			    json_string(serve_loop_said(c->op)));
		c->s->writes++;
		serve_publish_state(c->s, json_object_get(reply, "loop"));
	}
	serve_ok(c->r, extra);
	serve_call_end(c);
}

/* A write landed (or a launch ran): read the loop for the reply. */
static void
serve_loop_reread(struct serve_call *c, json_t *reply)
{
	if (!json_is_true(json_object_get(reply, "ok"))) {
		serve_verb_error(c, reply, c->body);
		return;
	}
	serve_call_api(c, serve_verb("loop_status", c->id), serve_loop_final);
}

/* A launch's outcome: running here, or driven elsewhere (a warning). */
static void
serve_loop_launched(struct serve_call *c, json_t *reply)
{
	if (!json_is_true(json_object_get(reply, "ok")))
		log_warnx("loop %s: not launched here: %s", c->id,
		    json_string_value(json_object_get(reply, "error")));
	serve_call_api(c, serve_verb("loop_status", c->id), serve_loop_final);
}

/* Launch the loop on its root's host unless this host runs it already. */
static void
serve_loop_launch(struct serve_call *c, json_t *reply)
{
	json_t	*req;

	if (reply != NULL && !json_is_true(json_object_get(reply, "ok"))) {
		serve_verb_error(c, reply, c->body);
		return;
	}
	if (host_loop_find(c->root->host, c->id) != NULL) {
		/* a draining pause: its driver sees the status and goes on */
		serve_loop_reread(c, reply);
		return;
	}
	req = serve_verb("loop_open", c->id);
	json_object_set_new(req, "start", json_true());
	serve_call_api(c, req, serve_loop_launched);
}

/*
 * loop_resume for a resume route: its body's "budget" (a raised one, in
 * the same commit as running: a loop its budget paused goes on).
 */
static json_t *
serve_resume_verb(struct serve_call *c)
{
	json_t		*req = serve_verb("loop_resume", c->id), *b;
	const char	*body;
	size_t		 len;

	body = c->r != NULL ? http_req_body(c->r, &len) : NULL;
	if (body == NULL || len == 0 || (b = json_loadb(body, len, 0,
	    NULL)) == NULL)
		return req;
	if (json_object_get(b, "budget") != NULL)
		json_object_set(req, "budget", json_object_get(b, "budget"));
	json_decref(b);
	return req;
}

/*
 * start and resume, once the status is known: created -> launched (the
 * open makes it running); paused -> running committed, then launched.
 */
static void
serve_loop_started(struct serve_call *c, json_t *reply)
{
	const char	*st;
	char		 msg[96];
	int		 resume = c->op == SOP_RESUME;

	if (!json_is_true(json_object_get(reply, "ok"))) {
		serve_verb_error(c, reply, c->body);
		return;
	}
	st = json_string_value(json_object_get(reply, "status"));
	if (st == NULL)
		st = "none";
	if (strcmp(st, "paused") == 0)
		serve_call_api(c, serve_resume_verb(c), serve_loop_launch);
	else if (!resume && strcmp(st, "created") == 0)
		serve_loop_launch(c, NULL);
	else {
		snprintf(msg, sizeof msg, "Cannot %s loop with status: %s",
		    resume ? "resume" : "start", st);
		serve_ccw_error(c->r, 400, c->body, msg);
		serve_call_end(c);
	}
}

/* stop's commit landed: a loop hosted here has its workers closed now. */
static void
serve_loop_stopped(struct serve_call *c, json_t *reply)
{
	struct host_loop	*hl;

	/* its last save says what our commit did: failed, CCW's words */
	if (json_is_true(json_object_get(reply, "ok")) &&
	    (hl = host_loop_find(c->root->host, c->id)) != NULL)
		host_loop_stop_as(hl, "Manually stopped by user",
		    json_string_value(json_object_get(reply, "status")),
		    json_string_value(json_object_get(reply,
		    "failure_reason")));
	serve_loop_reread(c, reply);
}

/*
 * A loop route's action (its row's op) on a call made for it; also
 * CCW's v1 create (serveccw.c), which starts the loop it made.
 */
void
serve_loop_dispatch(struct serve_call *c, enum serve_op op)
{
	struct serve	*s = c->s;

	c->op = op;
	if ((op == SOP_START || op == SOP_RESUME) &&
	    s->cfg.jobs != 0 && serve_hosted(s) >= s->cfg.jobs &&
	    host_loop_find(c->root->host, c->id) == NULL) {
		s->jobs_refused++;
		serve_ccw_error(c->r, 503, c->body, "too many loops running "
		    "(--jobs)");
		serve_call_end(c);
	} else if (op == SOP_PAUSE)
		serve_call_api(c, serve_verb("loop_pause", c->id),
		    serve_loop_reread);
	else if (op == SOP_STOP)
		serve_call_api(c, serve_verb("loop_stop", c->id),
		    serve_loop_stopped);
	else
		serve_call_api(c, serve_verb("loop_status", c->id),
		    serve_loop_started);
}

/* POST /api/loops/v2/:id/{start,pause,resume,stop} */
void
serve_loops_action(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	struct serve_root	*root;

	if ((root = serve_loop_root(s, r, m->cap[0], 0)) != NULL)
		serve_loop_dispatch(serve_call_new(s, r, root, m->cap[0]),
		    m->op);
}

/*
 * The moves PATCH .../status allows (CCW checks none): to running from
 * created or paused (start, resume), to paused from running, to failed
 * from created, running or paused (stop); created and completed are
 * never set by a front end, and a loop that ended stays ended.
 */
static const struct serve_move {
	const char	*to;
	const char	*from[4];
	enum serve_op	 op;
} serve_moves[] = {
	{ "running", { "created", "paused", NULL }, SOP_START },
	{ "paused", { "running", NULL }, SOP_PAUSE },
	{ "failed", { "created", "running", "paused", NULL }, SOP_STOP },
	{ "created", { NULL }, SOP_NONE },
	{ "completed", { NULL }, SOP_NONE },
};
#define SERVE_NMOVES	(sizeof serve_moves / sizeof serve_moves[0])

/* PATCH's status read: the move made if serve_moves allows it, else 400. */
static void
serve_loop_patched(struct serve_call *c, json_t *reply)
{
	const struct serve_move	*mv = &serve_moves[c->step];
	const char		*st;
	char			 msg[96];
	size_t			 i;

	if (!json_is_true(json_object_get(reply, "ok"))) {
		serve_verb_error(c, reply, 1);
		return;
	}
	if ((st = json_string_value(json_object_get(reply, "status"))) == NULL)
		st = "none";
	for (i = 0; mv->from[i] != NULL; i++)
		if (strcmp(st, mv->from[i]) == 0) {
			serve_loop_dispatch(c, mv->op);
			return;
		}
	snprintf(msg, sizeof msg, "Cannot change loop status from %s to %s",
	    st, mv->to);
	serve_ccw_error(c->r, 400, 1, msg);
	serve_call_end(c);
}

/*
 * PATCH /api/loops/v2/:id/status {status}: the route of that move
 * (running: start or resume; paused: pause; failed: stop), answered
 * {success, data} and, as CCW's body routes, {"error"}.
 */
void
serve_loops_status(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	struct serve_root	*root;
	struct serve_call	*c;
	json_t			*b;
	const char		*st;
	char			 msg[80];
	size_t			 i;

	if (serve_id_check(r, m->cap[0], 0) != 0 ||
	    (b = serve_body(r, 0)) == NULL)
		return;
	st = json_string_value(json_object_get(b, "status"));
	for (i = 0; st != NULL && i < SERVE_NMOVES; i++)
		if (strcmp(st, serve_moves[i].to) == 0)
			break;
	if (st == NULL || *st == '\0')
		serve_ccw_error(r, 400, 1, "status is required");
	else if (i == SERVE_NMOVES) {
		snprintf(msg, sizeof msg, "Invalid status: %.40s", st);
		serve_ccw_error(r, 400, 1, msg);
	} else if ((root = serve_root_of(s, m->cap[0])) == NULL)
		serve_ccw_error(r, 404, 1, "Loop not found");
	else {
		c = serve_call_new(s, r, root, m->cap[0]);
		c->body = 1;
		c->step = (int)i;
		serve_call_api(c, serve_verb("loop_status", c->id),
		    serve_loop_patched);
	}
	json_decref(b);
}

/* The loop's status read for a route, then its next step. */
static void
serve_loop_read(struct serve *s, struct http_req *r, const char *id,
    serve_next_fn next)
{
	struct serve_root	*root;

	if ((root = serve_loop_root(s, r, id, 0)) == NULL)
		return;
	serve_call_api(serve_call_new(s, r, root, id),
	    serve_verb("loop_status", id), next);
}

/* GET /api/loops/v2/:id */
void
serve_loops_get(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	serve_loop_read(s, r, m->cap[0], serve_loop_final);
}

/* A front end's write landed: {success, data: loop}, and its event. */
static void
serve_loop_written(struct serve_call *c, json_t *reply)
{
	c->s->writes++;
	serve_loop_rooted(c, reply);
	serve_publish_state(c->s, json_object_get(reply, "loop"));
	serve_ok(c->r, json_pack("{s:O}", "data", json_object_get(reply,
	    "loop")));
	serve_call_end(c);
}

/* create's reply: {success, data: loop}, or CCW's body-route error. */
static void
serve_loop_created(struct serve_call *c, json_t *reply)
{
	if (!json_is_true(json_object_get(reply, "ok"))) {
		serve_verb_error(c, reply, 1);
		return;
	}
	serve_loop_written(c, reply);
}

/* The root a create names ("root": one of serve's -C), or NULL. */
static struct serve_root *
serve_root_named(struct serve *s, const json_t *name)
{
	size_t	i;

	if (name == NULL)
		return &s->cfg.roots[0];
	for (i = 0; json_is_string(name) && i < s->cfg.nroots; i++)
		if (strcmp(s->cfg.roots[i].root, json_string_value(name)) == 0)
			return &s->cfg.roots[i];
	return NULL;
}

/*
 * POST /api/loops/v2 {title, description?, max_iterations?, mode?,
 * budget?, root?}: mode is kept for the loop's start (the verb table's
 * words), budget is the state's (engine/budget.c checks it).
 */
void
serve_loops_create(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	struct serve_root	*root;
	json_t			*b, *req, *mi, *d;
	const char		*t;

	(void)m;
	if ((b = serve_body(r, 0)) == NULL)
		return;
	t = json_string_value(json_object_get(b, "title"));
	mi = json_object_get(b, "max_iterations");
	d = json_object_get(b, "description");
	if (t == NULL || t[strspn(t, " \t\r\n")] == '\0')
		serve_ccw_error(r, 400, 1, "title is required and must be "
		    "non-empty");
	else if (mi != NULL && (!json_is_integer(mi) ||
	    json_integer_value(mi) < 1))
		serve_ccw_error(r, 400, 1, "max_iterations must be >= 1");
	else if (d != NULL && !json_is_string(d))
		serve_ccw_error(r, 400, 1, "description must be a string");
	else if ((root = serve_root_named(s, json_object_get(b,
	    "root"))) == NULL)
		serve_ccw_error(r, 400, 1, "root must be one of serve's roots");
	else {
		req = json_pack("{s:s,s:s,s:O?,s:O?,s:O*,s:O*}", "verb",
		    "loop_open", "title", t, "description", d,
		    "max_iterations", mi, "mode", json_object_get(b, "mode"),
		    "budget", json_object_get(b, "budget"));
		serve_call_api(serve_call_new(s, r, root, NULL), req,
		    serve_loop_created);
	}
	json_decref(b);
}

/* update's reply: {success, data}, or CCW's body-route error. */
static void
serve_loop_updated(struct serve_call *c, json_t *reply)
{
	/* the table's words for a bad member are CCW's 400 too */
	if (!json_is_true(json_object_get(reply, "ok"))) {
		serve_verb_error(c, reply, 1);
		return;
	}
	serve_loop_written(c, reply);
}

/*
 * PUT /api/loops/v2/:id {title?, description?, max_iterations?, tags?,
 * priority?, notes?}: the loop_update verb (its table checks the types).
 */
void
serve_loops_update(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	struct serve_root	*root;
	json_t			*b, *req;
	const char		*k;
	json_t			*v;

	if ((root = serve_loop_root(s, r, m->cap[0], 1)) == NULL ||
	    (b = serve_body(r, 0)) == NULL)
		return;
	req = json_pack("{s:s,s:s}", "verb", "loop_update", "loop_id",
	    m->cap[0]);
	json_object_foreach(b, k, v)
		if (strcmp(k, "verb") != 0 && strcmp(k, "loop_id") != 0)
			json_object_set(req, k, v);
	json_decref(b);
	serve_call_api(serve_call_new(s, r, root, m->cap[0]), req,
	    serve_loop_updated);
}

/* A list or delete on serve's I/O thread. */
struct serve_job {
	struct serve_call	*c;
	char			 status[16];	/* list: the filter, "" all */
	char			*dir;		/* delete: the loop's directory */
	json_t			*loops;		/* list: every loop read */
	json_t			*clean;		/* delete: its worktrees' cleanup */
	int			 cleaned;	/* delete: that cleanup ran */
	size_t			 limit, offset;	/* list: the page */
	int			 rc;
	char			*err;
};

/* One loop file to the list (out), unless bad or half-written. */
static int
serve_scan_one(void *arg, int fd, const char *id)
{
	json_t	*out = arg, *st;
	char	*err = NULL;

	if (state_load_at(fd, id, ".json", STATE_LOAD_NOQUARANTINE, &st,
	    NULL, &err) == STATE_OK && json_is_object(st) &&
	    json_is_string(json_object_get(st, "status"))) {
		loopdriver_view(fd, id, st);	/* driven or not */
		json_array_append_new(out, st);
	} else
		json_decref(st);
	free(err);
	return json_array_size(out) >= SERVE_LIST_MAX;
}

/*
 * Every loop file of one directory (a bad or half-written one skipped),
 * each with who drives it (loopdriver_view).
 */
void
serve_scan_dir(const char *path, json_t *out)
{
	char	*err = NULL;
	int	 fd;

	if ((fd = state_dir_open(path, 0, &err)) < 0) {
		free(err);
		return;
	}
	if (json_array_size(out) < SERVE_LIST_MAX)
		state_dir_each(fd, serve_scan_one, out);
	close(fd);
}

/* On the I/O thread: every root's loops. */
static void
serve_list_run(void *arg)
{
	struct serve_job	*j = arg;
	size_t			 i, k, n = 0;

	for (i = 0; i < j->c->s->cfg.nroots; i++) {
		serve_scan_dir(j->c->s->cfg.roots[i].state_dir, j->loops);
		/* which root holds each (the page filters by root) */
		for (k = n; k < json_array_size(j->loops); k++)
			json_object_set_new(json_array_get(j->loops, k), "root",
			    json_string(j->c->s->cfg.roots[i].root));
		n = json_array_size(j->loops);
	}
}

/* Newest update first (ISO 8601 strings sort as times). */
static int
serve_by_updated(const void *a, const void *b)
{
	const char	*x = json_string_value(json_object_get(
			    *(json_t *const *)a, "updated_at"));
	const char	*y = json_string_value(json_object_get(
			    *(json_t *const *)b, "updated_at"));

	return strcmp(y != NULL ? y : "", x != NULL ? x : "");
}

/* Back on the loop: filter, sort, page, reply. */
static void
serve_list_done(void *arg)
{
	struct serve_job	*j = arg;
	struct serve_call	*c = j->c;
	json_t			**v, *l, *data;
	const char		*st;
	size_t			 n = 0, i, total, limit, offset;
	char			 now[40];

	if (c->r != NULL) {
		v = xreallocarray(NULL, json_array_size(j->loops) + 1,
		    sizeof *v);
		json_array_foreach(j->loops, i, l) {
			st = json_string_value(json_object_get(l, "status"));
			if (j->status[0] == '\0' || strcmp(st, j->status) == 0)
				v[n++] = l;
		}
		qsort(v, n, sizeof *v, serve_by_updated);
		total = n;
		limit = j->limit;
		offset = j->offset;
		data = json_array();
		for (i = offset; i < total && i < offset + limit; i++)
			json_array_append(data, v[i]);
		clock_iso(NULL, 1, now, sizeof now);
		serve_ok(c->r, json_pack("{s:o,s:I,s:I,s:I,s:b,s:s}", "data",
		    data, "total", (json_int_t)total, "limit",
		    (json_int_t)limit, "offset", (json_int_t)offset, "hasMore",
		    offset + limit < total, "timestamp", now));
		free(v);
	}
	serve_call_end(c);
	json_decref(j->loops);
	free(j);
}

/* A query number: absent gives def; -1 if not a number. */
static long
serve_query_num(const char *q, const char *key, long def)
{
	char	 buf[24], *end;
	long	 v;

	if (http_query_get(q, key, buf, sizeof buf) != 1)
		return def;
	v = strtol(buf, &end, 10);
	return *buf != '\0' && *end == '\0' && v >= 0 ? v : -1;
}

/* GET /api/loops/v2?status=S|all&limit=50&offset=0 */
void
serve_loops_list(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	const char		*q = http_req_head(r)->query;
	struct serve_job	*j;
	long			 limit, offset;
	char			 st[16] = "";

	(void)m;
	limit = serve_query_num(q, "limit", 50);
	offset = serve_query_num(q, "offset", 0);
	if (http_query_get(q, "status", st, sizeof st) < 0 || limit < 0 ||
	    offset < 0 || limit > SERVE_LIST_MAX || offset > SERVE_LIST_MAX) {
		serve_ccw_error(r, 400, 0, "bad status, limit or offset");
		return;
	}
	j = xcalloc(1, sizeof *j);
	if (strcmp(st, "all") != 0)
		memcpy(j->status, st, sizeof j->status);
	j->c = serve_call_new(s, r, &s->cfg.roots[0], NULL);
	j->limit = (size_t)limit;
	j->offset = (size_t)offset;
	j->loops = json_array();
	if (committer_submit(s->io, serve_list_run, serve_list_done, j) != 0) {
		serve_list_run(j);
		serve_list_done(j);
	}
}

/*
 * On the I/O thread: the state file, then every other file of the loop.
 * What its isolation left (skill_state.worktree) is read first: then
 * the other files wait for the cleanup of its worktrees, which live in
 * the loop's side directory (serve_delete_cleaned).
 */
static void
serve_delete_run(void *arg)
{
	struct serve_job	*j = arg;
	json_t			*st = NULL;
	char			*name, *err = NULL;
	int			 fd;

	if ((fd = state_dir_open(j->dir, 0, &j->err)) < 0) {
		j->rc = -1;
		return;
	}
	if (state_load(fd, j->c->id, &st, &err) == STATE_OK)
		j->clean = wtclean_request(st);
	json_decref(st);
	free(err);
	xasprintf(&name, "%s.json", j->c->id);
	if (unlinkat(fd, name, 0) != 0) {
		xasprintf(&j->err, "cannot remove %s", name);
		j->rc = -1;
	} else if (j->clean == NULL)
		j->rc = state_remove_files(fd, j->c->id, &j->err);
	free(name);
	close(fd);
}

/*
 * On the I/O thread, after the cleanup: every other file of the loop
 * (a worktree a failed cleanup left keeps its directory).
 */
static void
serve_delete_files(void *arg)
{
	struct serve_job	*j = arg;
	int			 fd;

	j->cleaned = 1;
	if ((fd = state_dir_open(j->dir, 0, &j->err)) < 0) {
		j->rc = -1;
		return;
	}
	j->rc = state_remove_files(fd, j->c->id, &j->err);
	close(fd);
}

static void	serve_delete_done(void *);

/* A delete's next job on the I/O thread (here, when it cannot queue). */
static void
serve_delete_submit(struct serve_call *c, void (*run)(void *))
{
	struct serve_job	*j = xcalloc(1, sizeof *j);

	j->c = c;
	j->dir = xstrdup(c->root->state_dir);
	if (committer_submit(c->s->io, run, serve_delete_done, j) != 0) {
		run(j);
		serve_delete_done(j);
	}
}

/*
 * The deleted loop's worktrees and branches are gone (or could not be:
 * said in the log, never a failed delete): its other files next.
 */
static void
serve_delete_cleaned(int rc, const json_t *reply, const char *err,
    void *arg)
{
	struct serve_call	*c = arg;

	c->git = NULL;		/* gitrun frees itself after this */
	wtclean_said(c->id, rc, reply, err);
	serve_delete_submit(c, serve_delete_files);
}

/*
 * The cleanup of a deleted loop's worktrees on the event base (gitrun:
 * the loop never blocks; serve's shutdown kills it in serve_call_end).
 * 0 started; -1 it could not, said.
 */
static int
serve_delete_clean(struct serve_call *c, const json_t *req)
{
	char	*tag, *err = NULL;

	xasprintf(&tag, "loop %s: git cleanup", c->id);
	c->git = gitrun_start(c->s->base, host_children(c->root->host),
	    "cleanup", req, WTCLEAN_MS, tag, serve_delete_cleaned, c, &err);
	free(tag);
	if (c->git != NULL)
		return 0;
	wtclean_said(c->id, -1, NULL, err);
	free(err);
	return -1;
}

/*
 * Back on the loop.  The state file gone and worktrees left: their
 * cleanup (the reply waits: a DELETE answered means they are gone).
 * Else LOOP_DELETED on the bus and the reply.
 */
static void
serve_delete_done(void *arg)
{
	struct serve_job	*j = arg;
	struct serve_call	*c = j->c;

	if (j->rc == 0 && j->clean != NULL && c->s->freeing) {
		log_warnx("loop %s deleted; serve stops: its worktrees and "
		    "side files are left", c->id);
		serve_call_end(c);
	} else if (j->rc == 0 && j->clean != NULL) {
		if (serve_delete_clean(c, j->clean) != 0)
			serve_delete_submit(c, serve_delete_files);
	} else {
		if (j->rc != 0 && j->cleaned) {	/* the state file is gone */
			log_warnx("loop %s deleted, some files kept: %s",
			    c->id, j->err);
			j->rc = 0;
		}
		if (j->rc == 0) {
			c->s->writes++;
			bus_publish(c->s->cfg.bus, "LOOP_DELETED", json_pack(
			    "{s:s}", "loop_id", c->id));
		}
		if (c->r != NULL && j->rc == 0)
			serve_ok(c->r, json_pack("{s:s}", "message",
			    "Loop deleted"));
		else if (c->r != NULL)
			serve_ccw_error(c->r, 500, 0, j->err);
		serve_call_end(c);
	}
	json_decref(j->clean);
	free(j->err);
	free(j->dir);
	free(j);
}

/* delete, once the status is known: refused while running. */
static void
serve_delete_checked(struct serve_call *c, json_t *reply)
{
	struct host_loop	*hl;
	const char		*st;

	if (!json_is_true(json_object_get(reply, "ok"))) {
		serve_verb_error(c, reply, 0);
		return;
	}
	st = json_string_value(json_object_get(reply, "status"));
	if (st != NULL && strcmp(st, "running") == 0) {
		serve_ccw_error(c->r, 400, 0, "Cannot delete running loop. "
		    "Stop it first.");
		serve_call_end(c);
		return;
	}
	/* a paused loop still finishing its step here: stopped first */
	if ((hl = host_loop_find(c->root->host, c->id)) != NULL)
		host_loop_stop(hl, "deleted");
	serve_delete_submit(c, serve_delete_run);
}

/* DELETE /api/loops/v2/:id */
void
serve_loops_delete(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	serve_loop_read(s, r, m->cap[0], serve_delete_checked);
}

/* A start-up relaunch's outcome, said on stderr. */
static void
serve_resumed(json_t *reply, void *arg)
{
	(void)arg;
	if (json_is_true(json_object_get(reply, "ok")))
		log_info("loop %s resumed", json_string_value(
		    json_object_get(reply, "loop_id")));
	else
		log_warnx("not resumed: %s", json_string_value(
		    json_object_get(reply, "error")));
}

/*
 * At start-up: every loop of every root whose status is running (a serve
 * killed while it ran them) goes on from its saved action; one another
 * process drives is left to it (its run lock: a warning).  The number
 * of loops asked to resume.
 */
int
serve_resume(struct serve *s)
{
	json_t		*loops, *l, *req;
	const char	*st;
	size_t		 i, k;
	int		 n = 0;

	for (i = 0; i < s->cfg.nroots; i++) {
		loops = json_array();
		serve_scan_dir(s->cfg.roots[i].state_dir, loops);
		json_array_foreach(loops, k, l) {
			st = json_string_value(json_object_get(l, "status"));
			if (strcmp(st, "running") != 0)
				continue;
			if (s->cfg.jobs != 0 && (size_t)n >= s->cfg.jobs) {
				s->jobs_refused++;
				log_warnx("loop %s not resumed: --jobs %zu",
				    json_string_value(json_object_get(l,
				    "loop_id")), s->cfg.jobs);
				continue;
			}
			req = json_pack("{s:s,s:O,s:b}", "verb", "loop_open",
			    "loop_id", json_object_get(l, "loop_id"), "start",
			    1);
			api_call(s->cfg.roots[i].api, req, serve_resumed, s);
			json_decref(req);
			n++;
		}
		json_decref(loops);
	}
	return n;
}

/* A paused loop's reread after its driver ended: running again? */
static void
serve_relaunch(json_t *reply, void *arg)
{
	struct serve_root	*root = arg;
	const char		*st;
	json_t			*req;

	st = json_string_value(json_object_get(reply, "status"));
	if (st == NULL || strcmp(st, "running") != 0 ||
	    host_loop_find(root->host, json_string_value(json_object_get(
	    reply, "loop_id"))) != NULL)
		return;
	req = json_pack("{s:s,s:O,s:b}", "verb", "loop_open", "loop_id",
	    json_object_get(reply, "loop_id"), "start", 1);
	api_call(root->api, req, serve_resumed, NULL);
	json_decref(req);
}

/*
 * A hosted loop ended.  One that paused may have been resumed while its
 * driver drained the step: launched again if its file says running.
 */
void
serve_loop_done(struct serve *s, const char *id, int code)
{
	struct serve_root	*root;
	json_t			*req;

	log_info("loop %s ended: exit %d", id, code);
	if (code != EXIT_PAUSED || (root = serve_root_of(s, id)) == NULL)
		return;
	req = serve_verb("loop_status", id);
	api_call(root->api, req, serve_relaunch, root);
	json_decref(req);
}
