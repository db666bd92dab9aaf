/*
 * loopint.h: the run engine's insides, shared by loop.c (the driving of
 * steps, a step's runs that end short, the state file's watch),
 * looprun.c (a worker's start through its tool's gate, its end, a
 * rate-limited run again, all closed at the loop's end), budget.c (the
 * loop's budget held against its usage), pick.c (the
 * best-of-N step), isolate.c (a step's worktrees and merge), hosted.c
 * and loopphase.c (the phase machine).  Not for callers.
 */
#ifndef CCW_LOOPINT_H
#define CCW_LOOPINT_H

#include <sys/queue.h>

#include <event2/event.h>
#include <event2/util.h>

#include "isolate.h"
#include "loop.h"
#include "state.h"
#include "sup.h"

struct filewatch;
struct permask;
struct gate_wait;

#define LOOP_MAX_CLARIFY	3	/* answered re-runs of one action */
#define LOOP_ASK_POLL_MS	200	/* the answers file, while asking */
#define LOOP_MAX_RUNS	(WORKFLOW_MAX_GROUP + CONFIG_MAX_ATTEMPTS - 1)

/*
 * One worker: queued at its tool's gate, spawned, waited for, nudged,
 * closed; its result kept.
 */
struct loop_run {
	TAILQ_ENTRY(loop_run)	 entry;
	struct loop		*l;
	int			 role;
	char			*tool;		/* its gate's provider */
	char			*extra;		/* appended to the prompt */
	char			*resume;	/* a session resumed, extra its
						   prompt (an answer); NULL */
	char			*prompt;	/* what it was told: the history's */
	uint64_t		 want_wait_ms, want_nudge_ms; /* 0: the role's */
	struct gate_wait	*wait;		/* queued at the gate */
	int			 gating;	/* not started yet */
	int			 slot;		/* holds a slot of the gate */
	int			 rate_limited;	/* ended so: run it again */
	struct agent		*a;		/* NULL until started */
	struct ladder		*ladder;	/* wait, nudge, wait, close */
	uint64_t		 nudge_ms, grace_ms;
	int			 cancelled;	/* closed by a pause or stop */
	int			 rounds;	/* answered questions before */
	int			 held_start;	/* admitted while held (hold.c) */
	json_t			*result;	/* once done */
};
TAILQ_HEAD(loop_runs, loop_run);

/*
 * Where a loop is (loopphase.c, HACKING.md "State machines"); every
 * change goes through loop_transition.  RUNNING starts workers; ASKING
 * waits for the person (the menu or a worker's questions); PAUSING lets
 * the step in flight finish, then ends; ENDING closes every worker and
 * waits for them; DONE has issued the last commit.
 */
enum loop_phase {
	LP_RUNNING,
	LP_ASKING,
	LP_PAUSING,
	LP_ENDING,
	LP_DONE,
};

enum loop_event {
	LE_ASK,		/* arg: the question's slot, -1 the menu */
	LE_CHOOSE,	/* the person chose from the menu */
	LE_ANSWER,	/* the person answered a worker's questions */
	LE_PAUSE,	/* the status was set to paused */
	LE_RESUME,	/* the status is running again */
	LE_END,		/* arg: the exit code; EXIT_STOPPED overrides */
	LE_FINISH,	/* no worker left: the last commit */
};

struct loop {
	struct event_base	*base;
	struct state_store	*store;
	struct loop_cfg		 cfg;
	const struct workflow	*wf;		/* roles, steps, rules */
	struct sup		 sup;
	int			 sup_ok;
	struct verbs		*verbs;
	struct state_watch	*watch;
	struct event		*kick;
	json_t			*ss;		/* skill_state as we have it */
	json_int_t		 iteration;
	int			 index;		/* action_index: next action */
	struct loop_runs	 runs;		/* every run, freed at end */
	/* the step's runs: a group's roles, one role's attempts more */
	struct loop_run		*cur[LOOP_MAX_RUNS];
	int			 ncur;
	int			 batch;		/* the step is the parallel group */
	int			 resolving;	/* the step is a resolve step */
	int			 attempting;	/* best-of-N: att_role's attempts */
	int			 att_role;	/* ... run more than once */
	struct isolate		*iso;		/* worktrees, the merge queue */
	uint64_t		 step_start;	/* clock_mono_ms at its start */
	unsigned		 failures;	/* all-failed steps in a row */
	struct event		*retry_ev;	/* armed: the retry's wait */
	enum loop_phase		 phase;		/* loop_transition only */
	int			 ask_slot;	/* ASKING: a slot, -1 the menu */
	int			 exit_code;	/* set by LE_END */
	int			 deleted;	/* the owner deleted the file */
	char			*end_to, *end_reason;
	struct loop_budget	*budget;	/* budget.c: its limits, usage */
	/* held (hold.c): workers frozen, none started */
	int			 held;
	uint64_t		 held_at;	/* clock_mono_ms */
	char			*held_why;
	off_t			 ans_off;	/* answers file read up to */
	struct event		*ask_ev;	/* ASKING a slot: the answers
						   file's poll, or deadline */
	struct filewatch	*ask_watch;	/* its inotify; NULL: polled */
	uint64_t		 ask_deadline;	/* mono ms; 0: none */
	/* loop.c's commit of the step, and what hears that it landed (the
	   terminal side): hooks, so that ask.c commits without calling
	   back into loop.c */
	void			(*save)(struct loop *, state_store_cb);
	state_store_cb		 saved;
	/* permask.c: the workers' permission requests waiting */
	TAILQ_HEAD(permask_list, permask) perms;
	struct event		*perm_ev;	/* their poll while any waits */
};

/* loopphase.c */
int		 loop_transition(struct loop *, enum loop_event, int);
const char	*loop_phase_name(enum loop_phase);

/* looprun.c: the loop's workers */
int		 loop_run_done(const struct loop_run *);
struct loop_run	*loop_spawn(struct loop *, int, const char *, uint64_t,
		    uint64_t, int);
struct loop_run	*loop_spawn_resume(struct loop *, int, const char *,
		    uint64_t, uint64_t, int, const char *);
void		 loop_run_release(struct loop_run *);
void		 loop_unqueue(struct loop *);
int		 loop_requeue(struct loop *, int);
void		 loop_batch_left(const struct loop *, uint64_t *, uint64_t *);
void		 loop_end(struct loop *, int, const char *, const char *);
void		 loop_admit_held(struct loop *);

/* ask.c: a step whose worker asked */
int		 ask_clarify(struct loop *, int);
int		 ask_resume(struct loop *, int);
void		 ask_tick(evutil_socket_t, short, void *);
void		 ask_thawed(struct loop *, uint64_t);

/* questions.c: a worker's questions as the queue's records */
void		 questions_ask(struct loop *, int, uint64_t);
void		 questions_tell(struct loop *);
int		 questions_take(struct loop *);
json_t		*questions_answers(struct loop *);
void		 questions_set(struct loop *, const json_t *, const char *,
		    const char *);
void		 questions_expire(struct loop *, const char *);
json_t		*questions_worker(struct loop *);
void		 questions_rearm(struct loop *, uint64_t);
void		 questions_drop(struct loop *);
void		 questions_add(struct loop *, json_t *);
void		 questions_answer(struct loop *, json_t *, const char *,
		    const char *, const char *);
/* permask.c: a CLI's permission request as a question */
int		 permask_on_ask(struct agent *, const struct msg_perm_ask *,
		    void *);
void		 permask_drop(struct loop *);
void		 permask_end(struct loop *);
/* budget.c: the loop's budget, checked as it is used */
struct loop_budget *loop_budget_new(struct loop *);
void		 loop_budget_free(struct loop_budget *);
void		 loop_budget_check(struct loop *);
int		 loop_budget_resumed(struct loop *, const json_t *);
void		 loop_budget_note(struct loop *);

/* pick.c: the best-of-N step */
unsigned	 pick_attempts(struct loop *, int);
enum isolate_st	 pick_winner(struct loop *, char **);

/* isolate.c: the step's hand-offs to its worktrees and merge queue */
void		 isolate_run(const struct loop *, const struct loop_run *,
		    const char *, struct agent_req *);
enum isolate_st	 isolate_merge_step(const struct loop *, char **);

/* An action's name, as the workflow's table spells it. */
static inline const char *
loop_role(const struct loop *l, int role)
{
	return workflow_role_name(l->wf, role);
}

/* Hand an event to the terminal side (NDJSON, status line). */
static inline void
loop_event(struct loop *l, const char *name, json_t *o)
{
	json_object_set_new(o, "loop_id", json_string(l->cfg.id));
	if (l->cfg.hooks.event != NULL)
		l->cfg.hooks.event(l->cfg.hooks.arg, name, o);
	json_decref(o);
}

/* Decide on the next turn of the event loop, never from a callback. */
static inline void
loop_kick(struct loop *l)
{
	event_active(l->kick, EV_TIMEOUT, 0);
}

#endif
