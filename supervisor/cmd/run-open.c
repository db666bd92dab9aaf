/*
 * run-open.c: what `run` says around the engine's loop open (loopopen.c):
 * the loop's roles checked, notes on a loop that exists, the reason it
 * cannot be driven, and the loop_cfg the run drives it with.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flowdef.h"
#include "workflows.h"
#include "run.h"
#include "sup.h"

/* Every role the loop may run must have a usable tool before it starts. */
int
run_check_roles(struct run_args *ra, char **err)
{
	struct plan_overrides	over;
	struct plan_deadlines	dl;
	struct agent_req	req;
	int			i;

	cmd_opts_overrides(&ra->o, &over);
	for (i = 0; i < (int)ra->o.cfg.nroles; i++) {
		if (plan_spawn(&ra->o.cfg, ra->o.cwd, ra->o.cfg.wf->roles[i].name,
		    &over, "", &req, &dl, err) != 0)
			return -1;
		json_decref(req.options);
	}
	return 0;
}

/* Notes on a loop that existed: what of the command line it ignores. */
static void
run_open_notes(const struct run_args *ra, const struct loop_opened *o,
    const char *id)
{
	if (ra->task != NULL)
		fprintf(stderr, "ccw-supervisor run: loop %s exists: running "
		    "it; TASK ignored\n", id);
	if (ra->have_max)
		fprintf(stderr, "ccw-supervisor run: -n ignored: the loop "
		    "keeps its max_iterations\n");
	if (o->was != NULL && strcmp(o->was, "failed") == 0)
		fprintf(stderr, "ccw-supervisor run: loop %s had stopped (%s): "
		    "resuming it\n", id, o->failure_reason != NULL ?
		    o->failure_reason : "(null)");
}

/*
 * The loop id's state opened (created with TASK, or resumed) and set
 * running on base; its mode settled.  An exit status, or -1 to run.
 */
int
run_open(struct run_args *ra, struct event_base *base, int dirfd,
    const char *id, struct loop_opened *o)
{
	struct loop_spec	 spec;
	enum loopopen_status	 s;
	json_t			*budget = NULL;
	char			*err = NULL;

	memset(&spec, 0, sizeof spec);
	spec.id = id;
	spec.task = ra->task;
	spec.mode = loop_mode_name(ra->mode);
	spec.max_iterations = ra->have_max ? ra->max_iter : 0;
	spec.state = ra->o.cfg.wf->state;
	if (budget_any(ra->budget))
		spec.budget = budget = budget_json(ra->budget);
	s = loopopen_open(o, base, dirfd, ra->o.state_dir, &spec, &err);
	if (o->found) {
		run_open_notes(ra, o, id);
		/* a loop keeps its mode unless -m says otherwise */
		if (ra->mode_arg == NULL && o->mode != NULL &&
		    loop_mode_parse(o->mode, &ra->mode) != 0)
			ra->mode = LOOP_AUTO;
	}
	if (s == LOOPOPEN_BUSY && spec.budget != NULL && ra->task == NULL) {
		/* its driver holds it: the budget (and a resume) go there */
		free(err);
		err = NULL;
		if (loopopen_budget(dirfd, &spec, 1, &err) == 0) {
			cmd_budget_relayed("run", "loop", id, "driver");
			json_decref(budget);
			return EXIT_OK;
		}
	}
	if (s == LOOPOPEN_NOENT && ra->o.state_dir_opt == NULL)
		fprintf(stderr, "ccw-supervisor run: %s (looked in "
		    "%s/.workflow/.loop and %s/.loop)\n", err, ra->o.cwd,
		    ra->o.cwd);
	else if (s != LOOPOPEN_RUN)
		fprintf(stderr, "ccw-supervisor run: %s\n", err);
	free(err);
	json_decref(budget);
	return loopopen_exit(s);
}

/* The engine's view of the run: the loop, its host's options. */
void
run_loop_cfg(struct run_args *ra, struct loop_opened *o, int dirfd,
    struct loop_cfg *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->id = o->guard.id;
	cfg->state_dir = ra->o.state_dir;
	cfg->dirfd = dirfd;
	cfg->mode = ra->mode;
	cfg->clarify_fail = ra->clarify_fail;
	cfg->pause_interrupt = ra->interrupt;
	cfg->pause_freeze = ra->freeze;
	cfg->resumed = o->resumed;
	cfg->batch_ms = ra->batch_ms;
	cfg->batch_nudge_ms = ra->batch_nudge_ms;
	cfg->guard = &o->guard;
	/* the parallel step's policy: the strictest of its roles' */
	loopopen_retry(&ra->o.cfg, &cfg->retry);
	cfg->workflow = ra->o.cfg.wf;
	cfg->config = &ra->o.cfg;
	cfg->root = ra->o.cwd;
	cmd_opts_overrides(&ra->o, &cfg->over);
	cfg->over.isolation = ra->isolation;
	cfg->over.from_worktree = ra->from_worktree;
	cfg->over.land = ra->land;
	cfg->over.attempts = ra->attempts;
}
