/*
 * run-open.c: before `run` drives a loop: the run lock taken (one driver
 * per loop), the state file created or loaded, the transition to running
 * committed, the workers directory opened without following a link.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "run.h"
#include "state.h"
#include "sup.h"
#include "workflow.h"
#include "xmalloc.h"

#define RUN_TITLE_MAX	100	/* bytes of the task that make the title */

/*
 * The run lock, before anything of the loop is created or changed; an
 * exit status (1: another process drives it), or -1 to go on.
 */
int
run_guard(struct loop_guard *g, const char *state_dir, const char *id)
{
	char	*err = NULL;
	int	 rc;

	if ((rc = loopguard_open(g, state_dir, id, &err)) == 0)
		return -1;
	fprintf(stderr, "ccw-supervisor run: %s\n", err);
	free(err);
	return rc > 0 ? EXIT_FAILED : EXIT_INTERNAL;
}

/*
 * The parallel step's retry policy from its roles': the fewest attempts,
 * the longest waits, the steepest backoff of the workflow's group.
 */
void
run_retry_policy(const struct config *c, struct retry_cfg *out)
{
	const struct workflow_group	*g = c->wf->parallel;
	const struct retry_cfg		*r;
	size_t				 i;

	*out = c->roles[g->roles[0]].retry;
	for (i = 1; i < g->nroles; i++) {
		r = &c->roles[g->roles[i]].retry;
		if (r->attempts < out->attempts)
			out->attempts = r->attempts;
		if (r->initial_ms > out->initial_ms)
			out->initial_ms = r->initial_ms;
		if (r->coefficient > out->coefficient)
			out->coefficient = r->coefficient;
		if (r->maximum_ms > out->maximum_ms)
			out->maximum_ms = r->maximum_ms;
	}
}

/* The loop's workers directory and its first free agent id; as above. */
int
run_workers(struct loop_guard *g, const char *id)
{
	char	*err = NULL;

	if (loopguard_workers(g, NULL, &err) == 0)
		return -1;
	fprintf(stderr, "ccw-supervisor run: loop %s: %s\n", id, err);
	free(err);
	return EXIT_FAILED;
}

/* The title: the task's first line, cut at a character boundary. */
static char *
run_title(const char *task)
{
	size_t	n = strcspn(task, "\r\n");

	if (n > RUN_TITLE_MAX) {
		n = RUN_TITLE_MAX;
		while (n > 0 && ((unsigned char)task[n] & 0xc0) == 0x80)
			n--;
	}
	return xstrndup(task, n);
}

/* A new loop's file: the seed's initial state, our mode, status created. */
static int
run_create(struct run_args *ra, int dirfd, const char *id, char **err)
{
	json_t	*st;
	char	*title = run_title(ra->task);
	int	 rc;

	st = state_new(id, title, ra->task, ra->have_max ? ra->max_iter : 10);
	free(title);
	if (st == NULL) {
		xasprintf(err, "cannot make a state for loop %s", id);
		return -1;
	}
	json_object_set_new(json_object_get(st, "skill_state"), "mode",
	    json_string(loop_mode_name(ra->mode)));
	json_object_set_new(json_object_get(st, "skill_state"),
	    "action_index", json_integer(0));
	rc = state_create(dirfd, id, st, NULL, err);
	json_decref(st);
	return rc;
}

/*
 * Load the loop (created now, or resumed), tell what cannot be resumed
 * (exit status), else -1 and the mode to run in.
 */
int
run_open(struct run_args *ra, int dirfd, const char *id, int *resumed)
{
	enum state_load_rc	 rc;
	json_t			*st = NULL;
	const char		*status, *m;
	char			*err = NULL;
	int			 tries, code = -1;

	*resumed = 0;
	for (tries = 0; tries < 50; tries++) {
		if ((rc = state_load(dirfd, id, &st, &err)) != STATE_EAGAIN)
			break;
		free(err);
		err = NULL;
		usleep(20000);
	}
	if (rc == STATE_ENOENT && ra->task != NULL) {
		free(err);
		err = NULL;
		if (run_create(ra, dirfd, id, &err) == 0)
			return -1;
		fprintf(stderr, "ccw-supervisor run: %s\n", err);
		free(err);
		return EXIT_INTERNAL;
	}
	if (rc != STATE_OK) {
		fprintf(stderr, "ccw-supervisor run: loop %s: %s\n", id,
		    rc == STATE_ENOENT ? "no such loop" : err);
		free(err);
		return rc == STATE_ENOENT ? EXIT_USAGE : EXIT_FAILED;
	}
	status = json_string_value(json_object_get(st, "status"));
	/* a loop a front end created has no history to resume */
	*resumed = status == NULL || strcmp(status, "created") != 0;
	if (ra->task != NULL)
		fprintf(stderr, "ccw-supervisor run: loop %s exists: running "
		    "it; TASK ignored\n", id);
	if (ra->have_max)
		fprintf(stderr, "ccw-supervisor run: -n ignored: the loop "
		    "keeps its max_iterations\n");
	m = json_string_value(json_object_get(json_object_get(st,
	    "skill_state"), "mode"));
	if (ra->mode_arg == NULL && m != NULL)
		ra->mode = strcmp(m, "parallel") == 0 ? LOOP_PARALLEL :
		    strcmp(m, "interactive") == 0 ? LOOP_INTERACTIVE :
		    LOOP_AUTO;
	if (status != NULL && strcmp(status, "completed") == 0) {
		fprintf(stderr, "ccw-supervisor run: loop %s is already "
		    "completed\n", id);
		code = EXIT_OK;
	} else if (status != NULL && strcmp(status, "failed") == 0)
		fprintf(stderr, "ccw-supervisor run: loop %s had stopped (%s): "
		    "resuming it\n", id, json_string_value(json_object_get(st,
		    "failure_reason")));
	json_decref(st);
	return code;
}

/*
 * created -> running (a new loop, or one a front end made); a paused or
 * stopped loop is resumed (the store's "resume" transition); a running
 * one was left by a crash.  Returns an exit status, or -1 to run.
 */
int
run_start(struct state_store *store, const char *id)
{
	const char	*status;
	char		*err = NULL;

	status = json_string_value(json_object_get(state_store_get(store),
	    "status"));
	if (status != NULL && strcmp(status, "created") == 0)
		state_store_transition(store, "running", NULL);
	else if (status != NULL && strcmp(status, "running") != 0 &&
	    state_store_transition(store, "resume", NULL) != 0)
		log_info("state %s: this build cannot resume a %s loop", id,
		    status);
	if (state_store_flush(store, &err) != 0) {
		fprintf(stderr, "ccw-supervisor run: loop %s: %s\n", id, err);
		free(err);
		return EXIT_INTERNAL;
	}
	status = json_string_value(json_object_get(state_store_get(store),
	    "status"));
	if (status != NULL && strcmp(status, "running") == 0)
		return -1;
	fprintf(stderr, "ccw-supervisor run: loop %s is %s and the state "
	    "store refuses %s -> running: set it running from the front end, "
	    "then run --loop-id again\n", id, status != NULL ? status :
	    "without a status", status != NULL ? status : "?");
	return status != NULL && strcmp(status, "paused") == 0 ? EXIT_PAUSED :
	    EXIT_FAILED;
}
