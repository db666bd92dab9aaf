/*
 * tunedrv.h: the skill-tune driver's own structure, shared by its step
 * machine (tune.c) and its workers (tunerun.c).
 */
#ifndef CCW_TUNEDRV_H
#define CCW_TUNEDRV_H

#include <stdint.h>

#include "agent.h"
#include "loopguard.h"
#include "tune.h"
#include "tuneint.h"

struct event;
struct ladder;
struct verbs;

/* Where a run is; every change goes through tune_enter (tunestep.c). */
enum tune_phase {
	TP_ANALYZE,	/* requirement analysis (no worker) */
	TP_DIAGNOSE,	/* the diagnosis roles at once */
	TP_PROPOSE,	/* the fix role */
	TP_APPLY,	/* the next pending fix, backed up first */
	TP_VERIFY,	/* its issues' roles again: kept or rolled back */
	TP_DONE,	/* completed or failed: the report written */
	TP_STOPPED,	/* a signal: workers closed, resumable */
	TP_ENDED,	/* it had ended before this process: told again */
};

/* One role's worker in the current step. */
struct tune_run {
	struct tune	*t;
	int		 role;
	struct agent	*a;		/* in t->sup's table */
	struct ladder	*ladder;
	json_t		*rep;		/* report_agent once it ended */
	char		*err;		/* it never started: why */
	uint64_t	 t0, grace_ms;
	int		 done;
};

struct tune {
	struct event_base	*base;
	struct tune_hooks	 hooks;
	const struct config	*cfg;
	const struct plan_overrides *over;
	char			*skill_dir, *root, *state_dir, *id, *work;
	int			 sfd, wfd;	/* skill folder, work dir */
	int			 interactive;
	json_t			*st;		/* the TuningState */
	enum tune_phase		 phase;
	char			*fix;		/* TP_APPLY/VERIFY: its id */
	char			*t0;		/* the action's start */
	struct loop_guard	 guard;
	struct sup		 sup;
	int			 sup_ok;
	struct verbs		*verbs;
	struct event		*step_ev;	/* a step's workers all ended */
	struct event		*next_ev;	/* the next phase, off a hook */
	struct tune_run		 runs[TUNE_NROLES];
	size_t			 nruns, nleft;
	int			 resumed;	/* opened from its state */
	int			 stopping, exit_status, ended;
};

/* tunestep.c: what every step does to the state and the output */
const char *tune_now(char *);	/* 40 bytes */
void	 tune_emit(struct tune *, const char *, json_t *);	/* takes it */
int	 tune_save(struct tune *);
void	 tune_begin(struct tune *, const char *);
void	 tune_end(struct tune *, const char *, const char *, const json_t *);
int	 tune_error(struct tune *, const char *, const char *);
void	 tune_enter(struct tune *, enum tune_phase);
json_t	*tune_fix(const struct tune *, const char *);
json_t	*tune_applied(const struct tune *, const char *);

/* tuneact.c */
void	 tune_analyze(struct tune *);
void	 tune_diagnose(struct tune *);
void	 tune_diagnosed(struct tune *);
void	 tune_propose(struct tune *);
void	 tune_proposed(struct tune *);
void	 tune_timed(json_t *, const struct tune_run *);	/* execution_time_ms */

/* tuneapply.c */
void	 tune_apply(struct tune *);
void	 tune_verify(struct tune *);
void	 tune_verified(struct tune *);
void	 tune_rollback(struct tune *, json_t *);

/* tunerun.c */
void	 tunerun_step(struct tune *, const int *, size_t, const char *,
	    const char *);
void	 tunerun_stop(struct tune *);
void	 tunerun_clear(struct tune *);
json_t	*tunerun_detail(const struct tune_run *, char **);

#endif
