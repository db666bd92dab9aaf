/*
 * tune.c: the skill-tune run as a state machine (enum tune_phase, one
 * tune_enter): requirement analysis, the diagnoses at once, the fix
 * role's proposals, each fix backed up, applied and verified (kept or
 * rolled back), another round while the gate is below pass and
 * iterations remain, the error budget, the report.  Every change of the
 * TuningState is written before the next step starts.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "progress.h"
#include "state.h"
#include "sup.h"
#include "tunedrv.h"
#include "xmalloc.h"

/*
 * The end: status, report (in the state and beside it), the exit.  The
 * run failed when its error budget is spent or no diagnosis role ever
 * completed (every one that ran failed: nothing was checked).
 */
static void
tune_done(struct tune *t)
{
	const char	*gate;
	char		*md, *err = NULL, now[40];
	int		 failed = tunestate_over_budget(t->st), nf, nc;

	tunemerge_checked(t->st, &nf, &nc);
	failed |= nf > 0 && nc == 0;

	tune_begin(t, "action-complete");
	json_object_set_new(t->st, "status", json_string(failed ? "failed" :
	    "completed"));
	tune_end(t, "action-complete", "success", NULL);
	tunestate_touch(t->st, tune_now(now));
	md = tunereport_render(t->st);
	json_object_set_new(t->st, "final_report", json_string(md));
	if (progress_replace(t->wfd, "report.md", "report.md", md, strlen(md),
	    &err) != 0) {
		log_warnx("tune %s: %s", t->id, err);
		free(err);
	}
	free(md);
	gate = json_string_value(json_object_get(t->st, "quality_gate"));
	t->exit_status = failed || strcmp(gate, "fail") == 0 ? EXIT_FAILED :
	    EXIT_OK;
	if (tune_save(t) != 0)
		return;
	tune_emit(t, "tune_completed", json_pack("{s:s, s:O, s:O, s:O, s:O}",
	    "tune_id", t->id, "status", json_object_get(t->st, "status"),
	    "quality_score", json_object_get(t->st, "quality_score"),
	    "quality_gate", json_object_get(t->st, "quality_gate"),
	    "iteration_count", json_object_get(t->st, "iteration_count")));
	t->ended = 1;
	if (t->hooks.done != NULL)
		t->hooks.done(t->hooks.arg, t->exit_status);
}

/* A phase's work, on its own turn. */
static void
tune_next(evutil_socket_t fd, short ev, void *arg)
{
	struct tune	*t = arg;

	(void)fd;
	(void)ev;
	if (t->ended)
		return;
	if (t->stopping && t->phase != TP_STOPPED)
		t->phase = TP_STOPPED;
	switch (t->phase) {
	case TP_ANALYZE:	tune_analyze(t); break;
	case TP_DIAGNOSE:	tune_diagnose(t); break;
	case TP_PROPOSE:	tune_propose(t); break;
	case TP_APPLY:		tune_apply(t); break;
	case TP_VERIFY:		tune_verify(t); break;
	case TP_DONE:		tune_done(t); break;
	case TP_ENDED:
		t->ended = 1;
		if (t->hooks.done != NULL)
			t->hooks.done(t->hooks.arg, t->exit_status);
		break;
	case TP_STOPPED:
		t->ended = 1;
		if (t->exit_status == 0)
			t->exit_status = EXIT_STOPPED;
		if (t->hooks.done != NULL)
			t->hooks.done(t->hooks.arg, t->exit_status);
		break;
	}
}

/* A step's workers all ended: its phase reads them. */
static void
tune_stepped(evutil_socket_t fd, short ev, void *arg)
{
	struct tune	*t = arg;

	(void)fd;
	(void)ev;
	if (t->stopping) {
		tune_enter(t, TP_STOPPED);
		return;
	}
	switch (t->phase) {
	case TP_DIAGNOSE:	tune_diagnosed(t); break;
	case TP_PROPOSE:	tune_proposed(t); break;
	case TP_VERIFY:		tune_verified(t); break;
	default:		break;
	}
}

/*
 * A resumed run picks up where the kill left it: a fix recorded but not
 * fully applied is rolled back and applied again, an applied one not yet
 * verified is verified, pending fixes are applied, else the analysis or
 * the round's diagnosis runs again (both are safe to repeat).
 */
static enum tune_phase
tune_recover(struct tune *t)
{
	json_t		*ap, *pend = json_object_get(t->st, "pending_fixes");
	const char	*id;
	size_t		 i;

	json_array_foreach(json_object_get(t->st, "applied_fixes"), i, ap) {
		if (strcmp(json_string_value(json_object_get(ap,
		    "verification_result")), "pending") != 0)
			continue;
		id = json_string_value(json_object_get(ap, "fix_id"));
		t->fix = xstrdup(id);
		if (json_is_true(json_object_get(ap, "success")))
			return TP_VERIFY;
		tune_rollback(t, ap);
		json_array_insert_new(pend, 0, json_string(id));
		free(t->fix);
		t->fix = NULL;
	}
	if (json_array_size(pend) > 0)
		return TP_APPLY;
	if (json_is_null(json_object_get(t->st, "requirement_analysis")))
		return TP_ANALYZE;
	return TP_DIAGNOSE;
}

/* A new run's state: the template, the folder's facts, running. */
static int
tune_create(struct tune *t, const struct tune_spec *sp, char **err)
{
	char	now[40];

	t->st = tunestate_new(t->skill_dir, sp->description, t->work,
	    sp->focus, sp->nfocus, sp->max_iterations, sp->max_errors,
	    tune_now(now));
	if (tunestate_target(t->st, t->skill_dir, err) != 0)
		return -1;
	tune_begin(t, "action-init");
	json_object_set_new(t->st, "status", json_string("running"));
	tune_end(t, "action-init", "success", NULL);
	return tunestate_save(t->wfd, t->st, err);
}

/* The work directory STATE_DIR/ID, made for a new run. */
static int
tune_open_work(struct tune *t, int create, char **err)
{
	if (create && mkdir(t->work, 0755) == -1) {
		xasprintf(err, "%s: %s", t->work, strerror(errno));
		return -1;
	}
	if ((t->wfd = open(t->work, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		xasprintf(err, "%s: %s", t->work, errno == ENOENT ?
		    "no such tuning run" : strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Open a run: a new one (an id made, its state written) or the one to
 * resume, under the run lock ({id}.run.lock in the state directory: one
 * driver per run).  It starts with tune_start.
 */
struct tune *
tune_new(struct event_base *base, struct children *children,
    const struct tune_spec *sp, const struct tune_hooks *hooks, int *busy,
    char **err)
{
	struct tune	*t = xcalloc(1, sizeof *t);
	int		 rc;

	*err = NULL;
	*busy = 0;
	t->base = base;
	t->hooks = *hooks;
	t->cfg = sp->cfg;
	t->over = sp->over;
	t->interactive = sp->interactive;
	t->sfd = t->wfd = -1;
	t->guard.dirfd = t->guard.lock_fd = t->guard.workers_fd = -1;
	t->skill_dir = xstrdup(sp->skill_dir);
	t->root = xstrdup(sp->root);
	if (sp->state_dir != NULL)
		t->state_dir = xstrdup(sp->state_dir);
	else
		xasprintf(&t->state_dir, "%s/%s", sp->skill_dir,
		    TUNE_STATE_DIR);
	t->id = sp->resume_id != NULL ? xstrdup(sp->resume_id) :
	    state_id_make("tune");
	if (!state_id_valid(t->id)) {
		xasprintf(err, "invalid tuning id '%.80s'", t->id);
		goto fail;
	}
	xasprintf(&t->work, "%s/%s", t->state_dir, t->id);
	if ((t->sfd = open(t->skill_dir, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1) {
		xasprintf(err, "%s: %s", t->skill_dir, strerror(errno));
		goto fail;
	}
	if ((rc = loopguard_open(&t->guard, t->state_dir, t->id, err)) != 0) {
		*busy = rc == 1;
		goto fail;
	}
	if (tune_open_work(t, sp->resume_id == NULL, err) != 0)
		goto fail;
	tune_emit(t, "tune_started", json_pack("{s:s, s:s, s:s, s:b}",
	    "tune_id", t->id, "state", t->work, "skill", t->skill_dir,
	    "resumed", sp->resume_id != NULL));
	if (sp->resume_id == NULL) {
		if (tune_create(t, sp, err) != 0)
			goto fail;
		t->phase = TP_ANALYZE;
	} else {
		if (tunestate_load(t->wfd, &t->st, err) != 0)
			goto fail;
		t->resumed = 1;
		free(t->skill_dir);	/* the run's own, not the argument's */
		t->skill_dir = xstrdup(json_string_value(json_object_get(
		    json_object_get(t->st, "target_skill"), "path")));
	}
	if (loopguard_workers(&t->guard, NULL, err) != 0 ||
	    sup_init(&t->sup, base, children, t->state_dir, t->id, err) != 0)
		goto fail;
	t->sup_ok = 1;
	t->verbs = verbs_new(&t->sup);
	t->step_ev = event_new(base, -1, 0, tune_stepped, t);
	t->next_ev = event_new(base, -1, 0, tune_next, t);
	return t;
fail:
	tune_free(t);
	return NULL;
}

/* The first phase (a resumed run's from its state) on the next turn. */
void
tune_start(struct tune *t)
{
	const char	*st = json_string_value(json_object_get(t->st,
	    "status"));
	char		 now[40];

	if (strcmp(st, "completed") == 0 || strcmp(st, "failed") == 0) {
		/* ended before: told again, nothing rewritten */
		t->exit_status = strcmp(st, "failed") == 0 || strcmp(
		    json_string_value(json_object_get(t->st, "quality_gate")),
		    "fail") == 0 ? EXIT_FAILED : EXIT_OK;
		tune_enter(t, TP_ENDED);	/* done on the loop, as always */
		return;
	}
	if (strcmp(st, "pending") == 0) {
		json_object_set_new(t->st, "status", json_string("running"));
		tunestate_touch(t->st, tune_now(now));
	}
	if (t->resumed)
		t->phase = tune_recover(t);
	if (tune_save(t) == 0)
		tune_enter(t, t->phase);
}

/* A signal: the workers closed by the ladder; the state stays running. */
void
tune_stop(struct tune *t)
{
	if (t->stopping || t->ended)
		return;
	t->stopping = 1;
	if (t->nleft > 0)
		tunerun_stop(t);
	else
		tune_enter(t, TP_STOPPED);
}

const char *
tune_id(const struct tune *t)
{
	return t->id;
}

const char *
tune_work_dir(const struct tune *t)
{
	return t->work;
}

const json_t *
tune_state(const struct tune *t)
{
	return t->st;
}

/* After done (or a failed open); workers still alive are killed. */
void
tune_free(struct tune *t)
{
	if (t == NULL)
		return;
	if (t->step_ev != NULL)
		event_free(t->step_ev);
	if (t->next_ev != NULL)
		event_free(t->next_ev);
	tunerun_clear(t);
	if (t->verbs != NULL)
		verbs_free(t->verbs);
	if (t->sup_ok)
		sup_free(&t->sup);
	loopguard_close(&t->guard);
	if (t->sfd != -1)
		close(t->sfd);
	if (t->wfd != -1)
		close(t->wfd);
	json_decref(t->st);
	free(t->skill_dir);
	free(t->root);
	free(t->state_dir);
	free(t->id);
	free(t->work);
	free(t->fix);
	free(t->t0);
	free(t);
}
