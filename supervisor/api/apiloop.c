/*
 * apiloop.c: the loop verbs of the table.  Each is one job on the api's
 * committer thread (a read, or the state store's locked commit with one
 * transition), so a lock another program holds never blocks the event
 * loop; a driver running the loop sees the change through its watch.
 * loop_open with "start" hands the loop to the api's engine host.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apiint.h"
#include "committer.h"
#include "flowdef.h"
#include "host.h"
#include "log.h"
#include "loopdriver.h"
#include "state.h"
#include "workflows.h"
#include "xmalloc.h"

#define API_STOP_REASON	"Manually stopped by user"	/* CCW's words */

enum api_loop_op { LOP_OPEN, LOP_STATUS, LOP_TRANSITION, LOP_UPDATE };

/* One loop verb: the thread fills in rc, err, state, prev. */
struct api_loop_job {
	struct api_pending	*p;
	enum api_loop_op	 op;
	char			*id;
	char			*id_json;	/* {id}.json */
	const char		*to;		/* a transition (static) */
	json_t			*create;	/* loop_open: the new state; */
						/* loop_update: the fields; */
						/* loop_resume: {budget} */
	int			 created;
	int			 rc;
	enum err_code		 code;		/* rc != 0: its kind */
	char			*err;
	json_t			*state;		/* the file after the verb */
	char			*prev;		/* the status before it */
};

/* The state directory, opened once; its absence is every loop verb's error. */
int
api_loop_init(struct api *api)
{
	char	*err = NULL;

	if (api->host.state_dir == NULL) {
		api->dir_error = xstrdup("this front end has no state directory");
		return -1;
	}
	if ((api->dirfd = state_dir_open(api->host.state_dir, 0, &err)) < 0) {
		api->dir_error = err;
		return -1;
	}
	return 0;
}

/*
 * The state directory, opened late if it was absent at api_loop_init:
 * made only by a loop_open that creates a loop (a front end that opens
 * none leaves the project bare), opened once something else made it.
 * 0; 1 when it does not exist (no loop can); -1 with dir_error said.
 */
int
api_loop_dir(struct api *api, int create)
{
	struct stat	 sb;
	char		*err = NULL;

	if (api->dirfd >= 0)
		return 0;
	if (api->host.state_dir == NULL)
		return -1;
	if (!create && stat(api->host.state_dir, &sb) == -1 &&
	    errno == ENOENT)
		return 1;
	if ((api->dirfd = state_dir_open(api->host.state_dir, create,
	    &err)) < 0) {
		free(api->dir_error);
		api->dir_error = err;
		return -1;
	}
	return 0;
}

/* Wait for the jobs in flight (their replies are dropped), close the dir. */
void
api_loop_free(struct api *api)
{
	committer_free(api->committer);
	api->committer = NULL;
	if (api->dirfd >= 0)
		close(api->dirfd);
	free(api->dir_error);
}

/* The kind of a failed read: a writer mid-write is busy (try again). */
static enum err_code
api_loop_load_code(enum state_load_rc rc)
{
	switch (rc) {
	case STATE_OK:		return ERR_NONE;
	case STATE_ENOENT:	return ERR_NOT_FOUND;
	case STATE_EINVAL:	return ERR_INVALID;
	case STATE_EAGAIN:	return ERR_BUSY;
	case STATE_CORRUPT:
	case STATE_EIO:		break;
	}
	return ERR_INTERNAL;
}

/* The file now, without moving a bad one aside (that is the driver's call). */
static int
api_loop_read(struct api_loop_job *j, int dirfd)
{
	enum state_load_rc	rc;

	rc = state_load_at(dirfd, j->id, ".json", STATE_LOAD_NOQUARANTINE,
	    &j->state, NULL, &j->err);
	j->code = api_loop_load_code(rc);
	if (rc == STATE_ENOENT) {
		free(j->err);
		xasprintf(&j->err, "Loop not found: %s", j->id);
	}
	return rc == STATE_OK ? 0 : -1;
}

/* On the committer thread: one locked commit; the file after it in state. */
static void
api_loop_commit(struct api_loop_job *j, struct api *api,
    struct state_commit_req *req)
{
	json_t		*merged = NULL;
	unsigned	 nfsync = 0;

	/* the sections and rules of the workflow the file names */
	req->ws = workflow_state_of(j->state, &j->err);
	if ((j->rc = j->err != NULL ? -1 : 0) != 0)
		return;
	req->nowait = &api->stopping;
	/* refused by the workflow's rules, the state changed meanwhile */
	if ((j->rc = state_commit_run(api->dirfd, j->id, req, &merged,
	    &nfsync, &j->err)) != 0) {
		j->code = ERR_CONFLICT;
		return;
	}
	json_decref(j->state);
	j->state = merged;
}

/*
 * On the committer thread, the file read: the front end's own fields
 * committed (refused while the loop runs, as CCW refuses it).
 */
static void
api_loop_update_run(struct api_loop_job *j, struct api *api)
{
	struct state_commit_req	 req;
	const char		*st;

	st = json_string_value(json_object_get(j->state, "status"));
	if (st != NULL && strcmp(st, "running") == 0) {
		xasprintf(&j->err, "Cannot update loop with status: %s", st);
		j->rc = -1;
		j->code = ERR_CONFLICT;
		return;
	}
	memset(&req, 0, sizeof req);
	req.front = j->create;
	api_loop_commit(j, api, &req);
}

/*
 * A resume's budget (j->create) over the saved one (the kinds given
 * replace theirs), as the commit's front-end fields; NULL: none given.
 */
static json_t *
api_loop_budget(const struct api_loop_job *j)
{
	const json_t	*b;
	json_t		*m;

	if (j->create == NULL)
		return NULL;
	b = json_object_get(j->state, "budget");
	m = json_is_object(b) ? json_deep_copy(b) : json_object();
	json_object_update(m, json_object_get(j->create, "budget"));
	return json_pack("{s:o}", "budget", m);
}

/*
 * On the committer thread: read; create (loop_open with a title, the file
 * absent); or check the status is the transition's source and commit it
 * with nothing of ours but the status (skill_state comes from disk).
 */
static void
api_loop_run(void *arg)
{
	struct api_loop_job	*j = arg;
	struct api		*api = j->p->api;
	struct state_commit_req	 req;
	const char		*st;
	unsigned		 nfsync = 0;

	if (j->op == LOP_OPEN && j->create != NULL) {
		if (state_create(workflow_default()->state, api->dirfd,
		    j->id, j->create, &nfsync, &j->err) == 0)
			j->created = 1;
		else if (faccessat(api->dirfd, j->id_json, F_OK,
		    AT_SYMLINK_NOFOLLOW) == 0) {
			/* it exists: open reports it (the read below judges it) */
			free(j->err);
			j->err = NULL;
		} else {
			j->rc = -1;
			j->code = ERR_INTERNAL;
			return;
		}
	}
	if ((j->rc = api_loop_read(j, api->dirfd)) != 0)
		return;
	if (j->op == LOP_UPDATE) {
		api_loop_update_run(j, api);
		return;
	}
	if (j->op == LOP_STATUS)	/* who drives it, as a reader sees it */
		loopdriver_view(api->dirfd, j->id, j->state);
	if (j->op != LOP_TRANSITION)
		return;
	st = json_string_value(json_object_get(j->state, "status"));
	j->prev = xstrdup(st != NULL ? st : "none");
	if (!state_transition_allowed(j->to, st)) {
		xasprintf(&j->err, "cannot %s loop %s: its status is %s", j->to,
		    j->id, j->prev);
		j->rc = -1;
		j->code = ERR_CONFLICT;
		return;
	}
	memset(&req, 0, sizeof req);
	req.to[0] = j->to;
	req.reason[0] = strcmp(j->to, "stop") == 0 ? API_STOP_REASON : NULL;
	req.nto = 1;
	req.front = api_loop_budget(j);	/* a resume's raised budget */
	api_loop_commit(j, api, &req);
	json_decref((json_t *)req.front);
	if (j->rc != 0)
		return;
	st = json_string_value(json_object_get(j->state, "status"));
	if (st == NULL || strcmp(st, state_transition_target(j->to)) != 0) {
		xasprintf(&j->err, "cannot %s loop %s: its status became %s "
		    "meanwhile", j->to, j->id, st != NULL ? st : "none");
		j->rc = -1;
		j->code = ERR_CONFLICT;
	}
}

/* Back on the loop: the reply. */
static void
api_loop_done(void *arg)
{
	struct api_loop_job	*j = arg;
	const char		*st;
	json_t			*body;

	st = json_string_value(json_object_get(j->state, "status"));
	if (j->rc != 0)
		api_fail(j->p, j->code != ERR_NONE ? j->code : ERR_INTERNAL,
		    "%s", j->err != NULL ? j->err : "failed");
	else {
		body = json_pack("{s:b, s:s, s:s?}", "ok", 1, "loop_id", j->id,
		    "status", st);
		if (j->op == LOP_TRANSITION) {
			json_object_set_new(body, "previous_status",
			    json_string(j->prev));
			/* a stop's words, for the loop's own last save */
			if (json_is_string(json_object_get(j->state,
			    "failure_reason")))
				json_object_set(body, "failure_reason",
				    json_object_get(j->state,
				    "failure_reason"));
		} else
			json_object_set(body, "loop", j->state);
		if (j->op == LOP_OPEN)
			json_object_set_new(body, "created",
			    json_boolean(j->created));
		api_reply(j->p, body);
	}
	json_decref(j->create);
	json_decref(j->state);
	free(j->prev);
	free(j->err);
	free(j->id);
	free(j->id_json);
	free(j);
}

/*
 * The api's thread for blocking file work, made on first use (the
 * question verbs share it): 0, or -1 with p answered.
 */
int
api_loop_committer(struct api_pending *p)
{
	struct api	*api = p->api;
	char		*err = NULL;

	if (api->committer != NULL)
		return 0;
	if ((api->committer = committer_new(api->host.sup->base,
	    &err)) != NULL)
		return 0;
	api_fail(p, ERR_INTERNAL, "%s", err);
	free(err);
	return -1;
}

/* Queue one loop verb on the committer (made on first use). */
static void
api_loop_submit(struct api_pending *p, enum api_loop_op op, const char *id,
    const char *to, json_t *create)
{
	struct api		*api = p->api;
	struct api_loop_job	*j;
	int			 rc;

	if (!state_id_valid(id)) {
		api_fail(p, ERR_INVALID, "Invalid loop ID format: '%.*s'",
		    STATE_ID_MAX, id);
		json_decref(create);
		return;
	}
	if ((rc = api_loop_dir(api, create != NULL)) != 0) {
		if (rc == 1)
			api_fail(p, ERR_NOT_FOUND, "Loop not found: %s", id);
		else
			api_fail(p, ERR_UNAVAILABLE, "%s", api->dir_error);
		json_decref(create);
		return;
	}
	if (api_loop_committer(p) != 0) {
		json_decref(create);
		return;
	}
	j = xcalloc(1, sizeof *j);
	j->p = p;
	j->op = op;
	j->id = xstrdup(id);
	xasprintf(&j->id_json, "%s.json", id);
	j->to = to;
	j->create = create;
	if (committer_submit(api->committer, api_loop_run, api_loop_done,
	    j) != 0) {
		api_loop_run(j);
		api_loop_done(j);
	}
}

/*
 * A loop loop_open starts: the call waiting for the open's outcome (the
 * open's lock, create and fsync run off the event loop), then the api to
 * tell of its end.  Freed when the open fails or the loop has ended.
 */
struct api_started {
	struct api		*api;
	struct api_pending	*p;		/* until the open's outcome */
};

/* The open's outcome: the reply says the loop runs, or why not. */
static void
api_loop_opened(void *arg, struct host_loop *hl, int code, const char *err)
{
	struct api_started	*as = arg;
	struct api_pending	*p = as->p;

	(void)code;
	as->p = NULL;
	if (err != NULL) {	/* refused; a completed loop's code is 0 */
		api_fail(p, host_loop_open_code(hl), "%s", err);
		free(as);	/* done never follows a failed open */
		return;
	}
	api_reply(p, json_pack("{s:b, s:s, s:s, s:b, s:s}", "ok", 1,
	    "loop_id", host_loop_id(hl), "status", "running", "started", 1,
	    "mode", host_loop_mode(hl)));
}

/* A started loop ended: the front end is told (control's end waits). */
static void
api_loop_ended(void *arg, struct host_loop *hl, int code)
{
	struct api_started	*as = arg;
	struct api		*api = as->api;

	free(as);
	if (api->host.loop_end != NULL)
		api->host.loop_end(api->host.loop_end_arg, host_loop_id(hl),
		    code);
}

/*
 * loop_open with "start": the host opens the loop (created with "task",
 * else resumed: its run lock, created -> running) and starts it; the
 * reply, once the open is done, says it runs, or why not (a driver holds
 * it: its pid).
 */
static void
api_loop_start(struct api_pending *p, const json_t *req, const char *id)
{
	struct api		*api = p->api;
	struct host_observer	 obs;
	struct api_started	*as;
	struct loop_spec	 spec;
	const json_t		*mi = json_object_get(req, "max_iterations");
	char			*err = NULL;

	if (api->host.loops == NULL) {
		api_fail(p, ERR_UNAVAILABLE,
		    "loop_open: this front end cannot start loops");
		return;
	}
	memset(&spec, 0, sizeof spec);
	spec.id = id;
	/* a new loop's task: "task", else its "title" */
	if ((spec.task = json_string_value(json_object_get(req,
	    "task"))) == NULL)
		spec.task = json_string_value(json_object_get(req, "title"));
	spec.mode = json_string_value(json_object_get(req, "mode"));
	spec.max_iterations = json_is_integer(mi) ? json_integer_value(mi) : 0;
	spec.budget = json_object_get(req, "budget");
	as = xcalloc(1, sizeof *as);
	as->api = api;
	as->p = p;
	memset(&obs, 0, sizeof obs);
	obs.opened = api_loop_opened;
	obs.done = api_loop_ended;
	obs.arg = as;
	if (host_loop_open(api->host.loops, &spec, NULL, &obs, &err) == NULL) {
		/* refused at once (a bad id, running here): no callback */
		free(as);
		api_fail(p, host_loop_find(api->host.loops, id) != NULL ?
		    ERR_BUSY : ERR_INVALID, "%s", err);
		free(err);
	}
}

/*
 * loop_open: the loop's status; with a title, a missing loop is created
 * (status created, a new id when none is given).  With "start": true the
 * api's host runs it (api_loop_start).
 */
void
api_loop_open(struct api_pending *p, const json_t *req)
{
	const char	*id = json_string_value(json_object_get(req, "loop_id"));
	const char	*title = json_string_value(json_object_get(req, "title"));
	const json_t	*mi = json_object_get(req, "max_iterations");
	json_t		*st = NULL;
	char		*gen = NULL;

	if (json_is_true(json_object_get(req, "start"))) {
		if (id == NULL && json_object_get(req, "task") == NULL &&
		    title == NULL) {
			api_fail(p, ERR_INVALID,
			    "loop_open needs \"loop_id\" or \"task\"");
			return;
		}
		if (id == NULL)
			id = gen = state_id_generate();
		api_loop_start(p, req, id);
		free(gen);
		return;
	}
	/* a created loop keeps its mode (skill_state.mode) for its start */
	if (json_object_get(req, "task") != NULL ||
	    (json_object_get(req, "mode") != NULL && title == NULL)) {
		api_fail(p, ERR_INVALID, "loop_open: \"task\" and \"mode\" go "
		    "with \"start\": true (\"mode\" also with a new loop's "
		    "\"title\")");
		return;
	}
	if (title != NULL && *title == '\0') {
		api_fail(p, ERR_INVALID,
		    "title is required and must be non-empty");
		return;
	}
	if (id == NULL && title == NULL) {
		api_fail(p, ERR_INVALID,
		    "loop_open needs \"loop_id\" or \"title\"");
		return;
	}
	if (id == NULL)
		id = gen = state_id_generate();
	if (title != NULL)
		st = state_new(workflow_default()->state, id, title,
		    json_string_value(json_object_get(req, "description")),
		    json_is_integer(mi) ? json_integer_value(mi) : 10);
	if (st != NULL && json_object_get(req, "mode") != NULL)
		json_object_set(json_object_get(st, "skill_state"), "mode",
		    json_object_get(req, "mode"));
	if (st != NULL && json_object_get(req, "budget") != NULL)
		json_object_set(st, "budget", json_object_get(req, "budget"));
	if (title != NULL && st == NULL)
		api_fail(p, ERR_INVALID, "Invalid loop ID format: '%.*s'",
		    STATE_ID_MAX, id);
	else
		api_loop_submit(p, LOP_OPEN, id, NULL, st);
	free(gen);
}

/* loop_status: the state file as it is, and who drives it. */
void
api_loop_status(struct api_pending *p, const json_t *req)
{
	api_loop_submit(p, LOP_STATUS, json_string_value(json_object_get(req,
	    "loop_id")), NULL, NULL);
}

/* loop_pause: running -> paused; a driver finishes its step and exits 3. */
void
api_loop_pause(struct api_pending *p, const json_t *req)
{
	api_loop_submit(p, LOP_TRANSITION, json_string_value(json_object_get(
	    req, "loop_id")), "pause", NULL);
}

/*
 * loop_resume: paused -> running; a driver still pausing goes on.  One
 * that already exited is not relaunched here (run --loop-id does that).
 */
void
api_loop_resume(struct api_pending *p, const json_t *req)
{
	const json_t	*b = json_object_get(req, "budget");

	api_loop_submit(p, LOP_TRANSITION, json_string_value(json_object_get(
	    req, "loop_id")), "unpause", b != NULL ? json_pack("{s:O}",
	    "budget", b) : NULL);
}

/* loop_stop: created|running|paused -> failed; a driver closes all, exit 4. */
void
api_loop_stop(struct api_pending *p, const json_t *req)
{
	api_loop_submit(p, LOP_TRANSITION, json_string_value(json_object_get(
	    req, "loop_id")), "stop", NULL);
}

/*
 * loop_update: the front end's fields (title, description,
 * max_iterations, tags, priority, notes) in one locked commit; refused
 * while the loop runs.
 */
void
api_loop_update(struct api_pending *p, const json_t *req)
{
	static const char *const keys[] = { "title", "description",
	    "max_iterations", "tags", "priority", "notes", NULL };
	json_t	*front = json_object(), *v;
	size_t	 i;

	for (i = 0; keys[i] != NULL; i++)
		if ((v = json_object_get(req, keys[i])) != NULL &&
		    !json_is_null(v))
			json_object_set(front, keys[i], v);
	api_loop_submit(p, LOP_UPDATE, json_string_value(json_object_get(req,
	    "loop_id")), NULL, front);
}
