/*
 * tune.h: the skill-tune workflow's driver (seed 002) as a command drives
 * it: one tuning run of one skill folder on the caller's event base, its
 * TuningState in STATE_DIR/{id}/state.json, its workers through the
 * engine's agent table and kill ladder, its end told by hook.
 */
#ifndef CCW_TUNE_H
#define CCW_TUNE_H

#include <stddef.h>

#include <jansson.h>

struct children;
struct config;
struct event_base;
struct plan_overrides;
struct tune;

#define TUNE_STATE_DIR	".tune"	/* under the skill folder by default */

/* What a run is asked to do; all borrowed for the run's life. */
struct tune_spec {
	const char		*skill_dir;	/* absolute */
	const char		*description;	/* a new run's */
	const char		*state_dir;	/* absolute; NULL: SKILL/.tune */
	const char		*resume_id;	/* NULL: a new run */
	const char *const	*focus;		/* diagnosis roles; none: all */
	size_t			 nfocus;
	int			 interactive;	/* ambiguities are asked */
	long long		 max_iterations, max_errors;
	const struct config	*cfg;		/* skill-tune's roles */
	const char		*root;		/* where role commands run */
	const struct plan_overrides *over;
};

struct tune_hooks {
	/* a step of the run: name and its facts (borrowed) */
	void	(*event)(void *, const char *, const json_t *);
	/* interactive: question and options; the index chosen, -1: none */
	int	(*ask)(void *, const char *, const json_t *);
	/* once, after the last write: the exit status (sup.h EXIT_*) */
	void	(*done)(void *, int);
	void	*arg;
};

/* NULL and *err (*busy set when another process runs it). */
struct tune	*tune_new(struct event_base *, struct children *,
		    const struct tune_spec *, const struct tune_hooks *,
		    int *, char **);
void		 tune_start(struct tune *);
void		 tune_stop(struct tune *);	/* workers closed; resumable */
const char	*tune_id(const struct tune *);
const char	*tune_work_dir(const struct tune *);
const json_t	*tune_state(const struct tune *);
void		 tune_free(struct tune *);

#endif
