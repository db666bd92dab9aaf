/*
 * loopopen.c: before a driver runs a loop: the run lock taken (one
 * driver per loop), the state file created or loaded, the workers
 * directory opened without following a link, the transition to running
 * committed.  Every outcome is a status and a message for the caller.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "loopdriver.h"
#include "budget.h"
#include "loopopen.h"
#include "state.h"
#include "sup.h"
#include "flowdef.h"
#include "xmalloc.h"

#define OPEN_TITLE_MAX	100	/* bytes of the task that make the title */
#define OPEN_TRIES	50	/* loads of a file being replaced */
#define OPEN_TRY_US	20000	/* between them */

/* A JSON string field, copied; NULL if absent. */
static char *
open_str(const json_t *o, const char *k)
{
	const char	*s = json_string_value(json_object_get(o, k));

	return s != NULL ? xstrdup(s) : NULL;
}

/*
 * A loop's title from its task: the first line, cut at a character
 * boundary (a new loop's here; acp's when a prompt gives the task).
 */
char *
loopopen_title(const char *task)
{
	size_t	n = strcspn(task, "\r\n");

	if (n > OPEN_TITLE_MAX) {
		n = OPEN_TITLE_MAX;
		while (n > 0 && ((unsigned char)task[n] & 0xc0) == 0x80)
			n--;
	}
	return xstrndup(task, n);
}

/* A new loop's file: the seed's initial state, its mode, status created. */
static int
open_create(int dirfd, const struct loop_spec *spec, char **err)
{
	json_t	*st, *ss;
	char	*title = loopopen_title(spec->task);
	int	 rc;

	st = state_new(spec->state, spec->id, title, spec->task,
	    spec->max_iterations > 0 ? spec->max_iterations : 10);
	free(title);
	if (st == NULL) {
		xasprintf(err, "cannot make a state for loop %s", spec->id);
		return -1;
	}
	if (spec->budget != NULL)
		json_object_set_new(st, "budget", json_deep_copy(spec->budget));
	ss = json_object_get(st, "skill_state");
	if (spec->mode != NULL)
		json_object_set_new(ss, "mode", json_string(spec->mode));
	json_object_set_new(ss, "action_index", json_integer(0));
	rc = state_create(spec->state, dirfd, spec->id, st, NULL, err);
	json_decref(st);
	return rc;
}

/*
 * Load the loop, or create it when absent and a task is given; what was
 * found goes into *o.  A file being replaced is loaded again a little
 * later (this blocks: a host opens loops before it dispatches).
 */
static enum loopopen_status
open_load(struct loop_opened *o, int dirfd, const struct loop_spec *spec,
    char **err)
{
	enum state_load_rc	 rc = STATE_EAGAIN;
	json_t			*st = NULL;
	char			*e = NULL;
	int			 tries;

	for (tries = 0; tries < OPEN_TRIES; tries++) {
		if ((rc = state_load(dirfd, spec->id, &st, &e)) !=
		    STATE_EAGAIN)
			break;
		free(e);
		e = NULL;
		usleep(OPEN_TRY_US);
	}
	if (rc == STATE_ENOENT && spec->task != NULL) {
		free(e);
		if (open_create(dirfd, spec, err) != 0)
			return LOOPOPEN_ERROR;
		o->created = 1;
		o->mode = spec->mode != NULL ? xstrdup(spec->mode) : NULL;
		o->was = xstrdup("created");
		return LOOPOPEN_RUN;
	}
	if (rc != STATE_OK) {
		xasprintf(err, "loop %s: %s", spec->id, rc == STATE_ENOENT ?
		    "no such loop" : e != NULL ? e : "cannot be read");
		free(e);
		return rc == STATE_ENOENT ? LOOPOPEN_NOENT : LOOPOPEN_REFUSED;
	}
	free(e);
	o->found = 1;
	o->was = open_str(st, "status");
	o->mode = open_str(json_object_get(st, "skill_state"), "mode");
	o->failure_reason = open_str(st, "failure_reason");
	/* a loop a front end created has no history to resume */
	o->resumed = o->was == NULL || strcmp(o->was, "created") != 0;
	json_decref(st);
	if (o->was != NULL && strcmp(o->was, "completed") == 0) {
		xasprintf(err, "loop %s is already completed", spec->id);
		return LOOPOPEN_COMPLETED;
	}
	return LOOPOPEN_RUN;
}

/*
 * created -> running (a new loop, or one a front end made); a paused or
 * stopped loop is resumed (the store's "resume" transition); a running
 * one was left by a crash.
 */
static enum loopopen_status
open_start(struct state_store *store, const char *id, char **err)
{
	const char	*status;
	char		*e = NULL;

	loopdriver_clear(store);	/* driven again: no interruption */
	status = json_string_value(json_object_get(state_store_get(store),
	    "status"));
	if (status != NULL && strcmp(status, "created") == 0)
		state_store_transition(store, "running", NULL);
	else if (status != NULL && strcmp(status, "running") != 0 &&
	    state_store_transition(store, "resume", NULL) != 0)
		log_info("state %s: this build cannot resume a %s loop", id,
		    status);
	if (state_store_flush(store, &e) != 0) {
		xasprintf(err, "loop %s: %s", id, e);
		free(e);
		return LOOPOPEN_ERROR;
	}
	status = json_string_value(json_object_get(state_store_get(store),
	    "status"));
	if (status != NULL && strcmp(status, "running") == 0)
		return LOOPOPEN_RUN;
	xasprintf(err, "loop %s is %s and the state store refuses %s -> "
	    "running: set it running from the front end, then run --loop-id "
	    "again", id, status != NULL ? status : "without a status",
	    status != NULL ? status : "?");
	return status != NULL && strcmp(status, "paused") == 0 ?
	    LOOPOPEN_PAUSED : LOOPOPEN_REFUSED;
}

/*
 * A found loop's budget raised or set as a front end would (the kinds
 * given replace the saved ones; the others stay), before it is resumed;
 * with resume, paused -> running in the same commit (a loop another
 * process drives, held by its budget, goes on there).
 */
int
loopopen_budget(int dirfd, const struct loop_spec *spec, int resume,
    char **err)
{
	struct state_commit_req	 req;
	json_t			*st = NULL, *front;
	int			 rc;

	if (state_load(dirfd, spec->id, &st, err) != STATE_OK)
		return -1;
	front = json_pack("{s:o}", "budget", budget_merge(json_object_get(st,
	    "budget"), spec->budget));
	memset(&req, 0, sizeof req);
	req.front = front;
	req.ws = spec->state;
	if (resume) {
		req.to[0] = "unpause";
		req.nto = 1;
	}
	rc = state_commit_run(dirfd, spec->id, &req, NULL, NULL, err);
	json_decref(front);
	json_decref(st);
	return rc;
}

/*
 * Is there no state file for ID?  A loop given by id alone that does not
 * exist leaves nothing behind: no run lock, no commit lock.
 */
static int
open_absent(int dirfd, const char *id)
{
	struct stat	 sb;
	char		*name;
	int		 absent;

	xasprintf(&name, "%s.json", id);
	absent = fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 &&
	    errno == ENOENT;
	free(name);
	return absent;
}

/*
 * Open SPEC's loop in the state directory (dirfd, path) for a driver on
 * BASE: lock, create or load, workers directory, store, running.  On
 * LOOPOPEN_RUN *o holds the loop; on any other status *err says why and
 * loopopen_close(o) releases what was taken (always call it).
 */
enum loopopen_status
loopopen_open(struct loop_opened *o, struct event_base *base, int dirfd,
    const char *state_dir, const struct loop_spec *spec, char **err)
{
	enum loopopen_status	s;
	int			rc;

	memset(o, 0, sizeof *o);
	o->guard.lock_fd = o->guard.workers_fd = o->guard.dirfd = -1;
	/* no task, no file: refused before a lock file is made */
	if (spec->task == NULL && open_absent(dirfd, spec->id)) {
		xasprintf(err, "loop %s: no such loop", spec->id);
		return LOOPOPEN_NOENT;
	}
	if ((rc = loopguard_open(&o->guard, state_dir, spec->id, err)) != 0)
		return rc > 0 ? LOOPOPEN_BUSY : LOOPOPEN_ERROR;
	state_clean_temps(dirfd, spec->id);
	if ((s = open_load(o, dirfd, spec, err)) != LOOPOPEN_RUN)
		return s;
	if (o->found && spec->budget != NULL &&
	    loopopen_budget(dirfd, spec, 0, err) != 0)
		return LOOPOPEN_ERROR;
	if (loopguard_workers(&o->guard, NULL, err) != 0) {
		char	*e = *err;

		xasprintf(err, "loop %s: %s", spec->id, e);
		free(e);
		return LOOPOPEN_REFUSED;
	}
	if ((o->store = state_store_new(base, spec->state, dirfd,
	    spec->id)) == NULL) {
		xasprintf(err, "cannot open the state of loop %s", spec->id);
		return LOOPOPEN_ERROR;
	}
	return open_start(o->store, spec->id, err);
}

/* Release an open loop: its store (flushed first), its lock. */
void
loopopen_close(struct loop_opened *o)
{
	state_store_free(o->store);
	o->store = NULL;
	loopguard_close(&o->guard);
	free(o->mode);
	free(o->was);
	free(o->failure_reason);
	o->mode = o->was = o->failure_reason = NULL;
}

/* The exit status a one-loop command gives for a status (-1: run it). */
int
loopopen_exit(enum loopopen_status s)
{
	switch (s) {
	case LOOPOPEN_RUN:	return -1;
	case LOOPOPEN_COMPLETED: return EXIT_OK;
	case LOOPOPEN_NOENT:	return EXIT_USAGE;
	case LOOPOPEN_PAUSED:	return EXIT_PAUSED;
	case LOOPOPEN_BUSY:
	case LOOPOPEN_REFUSED:	return EXIT_FAILED;
	case LOOPOPEN_ERROR:	break;
	}
	return EXIT_INTERNAL;
}

/* The kind of a refused open, for the api's reply (errcode.h). */
enum err_code
loopopen_code(enum loopopen_status s)
{
	switch (s) {
	case LOOPOPEN_RUN:	return ERR_NONE;
	case LOOPOPEN_NOENT:	return ERR_NOT_FOUND;
	case LOOPOPEN_BUSY:	return ERR_BUSY;
	case LOOPOPEN_COMPLETED:
	case LOOPOPEN_PAUSED:
	case LOOPOPEN_REFUSED:	return ERR_CONFLICT;
	case LOOPOPEN_ERROR:	break;
	}
	return ERR_INTERNAL;
}

/*
 * The parallel step's retry policy from its roles' (the workflow's
 * group): the fewest attempts, the longest waits, the steepest backoff.
 */
void
loopopen_retry(const struct config *c, struct retry_cfg *out)
{
	const struct workflow_group	*g = c->wf->parallel;
	const struct retry_cfg		*r;
	size_t				 k;
	int				 first = 1;

	memset(out, 0, sizeof *out);
	for (k = 0; g != NULL && k < g->nroles; k++) {
		r = &c->roles[g->roles[k]].retry;
		if (first) {
			*out = *r;
			first = 0;
			continue;
		}
		if (r->attempts < out->attempts)
			out->attempts = r->attempts;
		if (r->initial_ms > out->initial_ms)
			out->initial_ms = r->initial_ms;
		if (r->coefficient > out->coefficient)
			out->coefficient = r->coefficient;
		if (r->maximum_ms > out->maximum_ms)
			out->maximum_ms = r->maximum_ms;
		out->non_retryable |= r->non_retryable;
	}
}
