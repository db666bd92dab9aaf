/*
 * loop.h: the run engine (loop.c: the auto, parallel and interactive
 * modes over the four verbs), a role's result into its skill_state
 * section (merge.c), clarification questions (clarify.c), a worker's
 * prompt and side files (prompt.c) and its log: TAP, last line (tap.c).
 * merge.c, clarify.c and tap.c are pure: no event loop, no agents, no
 * state file.
 */
#ifndef CCW_LOOP_H
#define CCW_LOOP_H

#include <stdint.h>

#include <jansson.h>

#include "plan.h"
#include "proto.h"
#include "toolconfig.h"
#include "flowdef.h"

struct agent_req;
struct children;
struct event_base;
struct gate;
struct loop;
struct loop_guard;
struct state_store;

enum loop_mode { LOOP_AUTO, LOOP_PARALLEL, LOOP_INTERACTIVE };
extern const char *const loop_modes[];	/* merge.c: their words, NULL-ended */
const char	*loop_mode_name(enum loop_mode);	/* merge.c */
int		 loop_mode_parse(const char *, enum loop_mode *);	/* -1: none */

/* What the terminal side (cmd-run.c) does for the engine. */
struct loop_hooks {
	/* an NDJSON event: name and fields (borrowed) */
	void	(*event)(void *, const char *, const json_t *);
	/* interactive: ask for the next action; answer with loop_choose() */
	void	(*menu)(void *, const json_t *);
	/* interactive: a role's questions; answer with loop_answer() */
	void	(*ask)(void *, const char *, const json_t *);
	/*
	 * interactive (or ask_always): a CLI's permission request, its
	 * question record (kind permission) once the state file shows it;
	 * answer through its answers file (question_file_answer); its
	 * question_answered or question_expired event withdraws it
	 */
	void	(*permission)(void *, const json_t *);
	/*
	 * the loop ended (its last commit landed): its EXIT_* status.  The
	 * engine never dispatches or breaks the caller's event base; this
	 * is where a caller that hosts one loop breaks it.  Free the loop
	 * later, not from here.
	 */
	void	(*done)(void *, int);
	void	*arg;
};

/* A loop to drive; strings and config borrowed for the engine's life. */
struct loop_cfg {
	const char		*id;
	const char		*state_dir;
	int			 dirfd;		/* the state directory */
	enum loop_mode		 mode;
	int			 clarify_fail;	/* --on-clarify fail */
	int			 ask_always;	/* hooks.ask in every mode (a
						   host's observer answers) */
	int			 pause_interrupt; /* --pause-policy interrupt */
	int			 pause_freeze;	/* --pause-policy freeze (hold.c) */
	int			 resumed;	/* it has history */
	uint64_t		 batch_ms;	/* parallel batch wait */
	uint64_t		 batch_nudge_ms; /* then after the nudge */
	struct loop_guard	*guard;		/* fresh logs; NULL: none */
	struct retry_cfg	 retry;		/* a parallel step all failed */
	const struct config	*config;	/* roles, tools, test command */
	const char		*root;		/* the project: workers' cwd */
	struct plan_overrides	 over;		/* the host's, above config */
	struct children		*children;	/* the process's reaper; NULL: own */
	struct gate		*gate;		/* caps, rate-limit holds; NULL:
						   none (a rate limit fails) */
	int			 watch_poll;	/* 1: poll for front ends' writes (NFS) */
	const struct workflow	*workflow;	/* required: the host's, or the config's wf */
	struct loop_hooks	 hooks;
};

/* --- loop.c */
struct loop	*loop_new(struct event_base *, struct state_store *,
		    const struct loop_cfg *, char **);
void		 loop_start(struct loop *);	/* hooks.done at the end */
void		 loop_free(struct loop *);
void		 loop_stop(struct loop *, const char *);	/* exit 4 */
void		 loop_stop_as(struct loop *, const char *, const char *,
		    const char *);	/* why, status, reason: exit 4 */
void		 loop_choose(struct loop *, const char *);	/* the menu */
void		 loop_answer(struct loop *, const json_t *);	/* NULL: none */
void		 loop_answer_via(struct loop *, const json_t *, const char *,
		    const char *);	/* by, via: the history's */
json_t		*loop_live(struct loop *);	/* the running workers */

/* --- hold.c: a loop held, its workers frozen (a budget, a person) */
int		 loop_hold(struct loop *, const char *);	/* -1: not held */
void		 loop_unhold(struct loop *);
int		 loop_held(const struct loop *);

/* --- merge.c: a role's result into skill_state, in place */
/*
 * A result is the object report_agent() gives, plus "tap" (tap_parse_*)
 * for a validate run whose log held TAP.  Outcomes: success, partial,
 * failed, needs_input.
 */
const char	*merge_outcome(const char *, const json_t *);
int		 merge_role(json_t *, const char *, const json_t *,
		    const char *);
json_t		*merge_conflicts(const char *const *, const json_t *const *,
		    size_t);
void		 merge_parallel(json_t *, const char *const *,
		    const json_t *const *, size_t, const char *);
int		 merge_next(int, const json_t *, const json_t *);
char		*merge_fail_reason(const char *, const json_t *);
json_t		*merge_event(const char *, const json_t *);
json_t		*merge_state_event(const json_t *, const char *, int);
json_t		*merge_step_event(const char *, const char *, json_int_t,
		    uint64_t);
void		 merge_tasks(json_t *, const json_t *, const char *);

/* --- clarify.c: a worker's clarification questions */
json_t		*clarify_recommended(const json_t *, char **);
char		*clarify_answer_text(const json_t *, const json_t *);
void		 clarify_questions(json_t *, const char *, const json_t *,
		    const json_t *);
char		*clarify_reason(const char *, const json_t *, const char *);

/* --- tap.c: a worker's log */
json_t		*tap_parse_text(const char *, size_t);
json_t		*tap_parse_file(const char *, char **);
json_t		*tap_parse_answer(const char *, const char *);
void		 tap_last_line(const char *, char *, size_t);

/* --- context.c: what flows from one role to the next */
void		 context_plan(json_t *, const char *, const char *);
char		*context_render(const json_t *, const char *, const char *);

/* --- prompt.c: a worker's prompt and the side files of its action */
struct prompt_vars {
	const char	*loop_id, *role, *mode, *task;
	const char	*state_file, *progress_file, *output_file;
	const char	*state_summary, *capsule, *context;
	long long	 iteration, max_iterations;
};
/* What prompt_worker needs; all borrowed. */
struct prompt_req {
	const json_t	*state;		/* the loop as the worker sees it */
	const char	*state_dir, *root;
	const char	*template;	/* roles.ROLE.prompt, or NULL */
	const char	*loop_id, *role, *mode;
	const char	*extra;		/* appended: clarification answers */
	const char	*test_command;	/* the configuration's, or NULL */
	int		 force_capsule;	/* resumed: a capsule in any case */
};
char		*prompt_render(const char *, const struct prompt_vars *);
char		*prompt_worker(const struct prompt_req *, char **, char **);
int		 prompt_request(const struct loop_cfg *,
		    const struct prompt_req *, struct agent_req *,
		    struct plan_deadlines *, char **, char **, char **);
char		*prompt_state_summary(const json_t *);
char		*prompt_builtin(const char *);
char		*prompt_with_contract(const char *, const char *);
void		 prompt_record_action(struct state_store *, const char *,
		    json_t *, const char *, const json_t *, const char *,
		    const json_t *, json_int_t, const char *);	/* queued on the store's side thread */
void		 prompt_record(struct state_store *, json_t *);
void		 prompt_warn(int, char *);

#endif
