/*
 * agent.h: the supervisor's agent table.  An agent is one ccw-worker
 * process and its channel; it is DONE when the channel reached EOF and the
 * pid was reaped, and only then does its status become final.
 */
#ifndef CCW_AGENT_H
#define CCW_AGENT_H

#include <sys/queue.h>
#include <sys/types.h>
#include <stdint.h>

#include <jansson.h>

#include "cgroup.h"
#include "launch.h"
#include "outcome.h"
#include "proto.h"

struct event;
struct event_base;
struct freeze_tree;
struct chan;
struct children;
struct sup;

/*
 * What an agent reports (DESIGN.md section 3): pending_init until ASSIGN
 * went out, running or interrupted while its turn runs, then one final
 * value chosen once, when the phase below becomes DONE or CLOSED.
 */
enum agent_status {
	AS_PENDING_INIT,
	AS_RUNNING,
	AS_INTERRUPTED,
	AS_COMPLETED,
	AS_ERRORED,
	AS_SHUTDOWN,
};

/*
 * Where an agent is in its life (agentphase.c, HACKING.md "State
 * machines"); every change goes through agent_transition.  The status
 * above is what is reported and follows from it: SPAWNING is
 * pending_init, RUNNING and CLOSING keep running/interrupted, DONE and
 * CLOSED carry the final status.  The end is two independent facts, the
 * channel at EOF and the pid reaped: only with both may FINISH end it.
 */
enum agent_phase {
	AP_SPAWNING,	/* worker started, no HELLO yet */
	AP_RUNNING,	/* HELLO seen, ASSIGN sent: the turn runs */
	AP_CLOSING,	/* close asked while live: ending on our terms */
	AP_DONE,	/* EOF and reaped: final; a follow-up turn may restart */
	AP_CLOSED,	/* final for good: closed, no turn follows */
};

enum agent_event {
	AE_HELLO,	/* the worker said HELLO */
	AE_CLOSE,	/* a close was asked */
	AE_KILL,	/* we sent SIGKILL to what is the agent's */
	AE_EOF,		/* the channel ended */
	AE_REAPED,	/* the registry reaped the worker */
	AE_FINISH,	/* both facts hold: the single completion */
	AE_TURN,	/* a follow-up turn starts a new worker */
};

/* What a spawn asks for; all borrowed, copied by agent_spawn. */
/* One git command's deadline in the worker (worker/gitwt.h GITX_DEADLINE_MS). */
#define AGENT_WORKTREE_GIT_MS	(10u * 60 * 1000)

struct agent_req {
	const char	*role;
	const char	*tool;
	const char	*model;
	const char	*command;
	const char	*prompt;
	const char	*cwd;
	const char	*capsule;
	json_t		*options;
	uint64_t	 timeout_ms;
	uint64_t	 idle_ms;
	const struct launch_cfg *launch;	/* NULL or no argv: local */
	json_t		*limits;	/* the role's cgroup limits, or NULL */
};

struct agent {
	TAILQ_ENTRY(agent)	 entry;
	struct sup		*sup;
	char			 id[24];
	unsigned		 index;
	char			*role, *tool, *model, *command, *prompt;
	char			*cwd, *capsule, *log_path;
	json_t			*options;
	uint64_t		 timeout_ms, idle_ms;

	pid_t			 pid;		/* worker, -pid once reaped, -1 never */
	int			 pidfd;		/* the worker's, -1 none or reaped */
	pid_t			 tool_pid;	/* from STARTED, 0 unknown/unproven */
	unsigned long long	 tool_start;	/* its /proc start time */
	unsigned long long	 start;		/* the worker's (spawn_sweep) */
	struct chan		*chan;
	enum agent_phase	 phase;		/* agent_transition only */
	int			 eof, reaped;	/* facts: agent_transition only */
	int			 hello, killed;	/* facts: agent_transition only */
	int			 wstatus;
	enum agent_status	 status;
	char			*reason;	/* why errored, owned */
	enum outcome_kind	 kind;		/* the supervisor's verdict,
						   OUTCOME_NONE: the worker's */
	char			*kind_reason;	/* why, when reason does not say
						   it (deadline, idle, close) */
	int			 timed_out;
	int			 nudged;	/* the nudge was acknowledged */
	const char		*nudge;		/* NULL, sent, delivered, failed */
	int			 result_early;	/* RESULT came before any close */
	struct msg		 started;	/* MSG_NONE until STARTED */
	struct msg		 result;	/* MSG_NONE until RESULT */
	uint64_t		 t_start, t_end;
	uint64_t		 t_activity;	/* last message from the worker */
	struct event		*kill_ev;	/* close's own deadline */
	struct evbuffer		*early;		/* INPUT frames sent before HELLO */
	char			*last_progress;	/* text of the last PROGRESS */
	uint64_t		 live_in, live_out; /* the last PROGRESS's tokens */
	double			 live_cost;	/* ... and cost: a budget's live use */
	char			*last_retry;	/* ... of kind "retry": the CLI's
						   words if the deadline comes
						   while it is still retrying */
	uint64_t		 grace_ms;
	/* follow-up turns (turn.c) */
	unsigned		 turns;		/* 1 for the first turn */
	json_t			*past;		/* earlier turns, accumulated */
	char			*session_id;	/* the last one a turn reported */
	char			*next_turn;	/* queued while a turn ends */
	/* behind a launcher (launch.c): pid is the launcher, ours; the
	   worker and its tool are on the other side and never signalled */
	struct launch_cfg	 launch;	/* argv.n 0: local */
	int			 launch_err_fd;	/* the launcher's stderr, -1 */
	struct event		*hb_ev;		/* the heartbeat */
	uint64_t		 ping_seq;
	/* containment (cgroup.h): the turn's cgroup while it lives */
	char			*cg_path;	/* NULL: none (the sweep) */
	json_t			*limits;	/* its role's, or NULL */
	unsigned		 cg_left;	/* processes that outlived the
						   worker in it, every turn */
	struct cgroup_usage	 cg_usage;	/* the last turn's */
	/* frozen (freeze.c): its deadlines stand still meanwhile */
	int			 frozen;
	uint64_t		 t_frozen;	/* since when, clock_mono_ms */
	uint64_t		 frozen_ms;	/* past freezes' length, summed */
	char			*frozen_why;
	struct event		*freeze_ev;	/* cgroup.events, till frozen */
	struct freeze_tree	*frozen_tree;	/* what SIGSTOP stopped, or NULL */
	int			 freeze_guard;	/* its guard's pipe, -1 none */
};

TAILQ_HEAD(agent_list, agent);

/* Called when an agent becomes DONE, and for INPUT_ACKs. */
struct sup_hooks {
	void	(*done)(struct agent *, void *);
	void	(*input_ack)(struct agent *, uint64_t, const char *,
		    const char *, void *);
	/* frozen (1) or thawed (0): deadlines stop and go on (freeze.c) */
	void	(*frozen)(struct agent *, int, void *);
};

struct sup {
	struct event_base	*base;
	char			*worker_path;
	char			*state_dir;
	char			*loop_id;
	struct agent_list	 agents;
	unsigned		 next_index;
	unsigned		 nlive;
	uint64_t		 next_submission;
	struct children		*children;	/* the process's one reaper */
	int			 own_children;	/* sup_init created it */
	struct sup_hooks	 hooks;
	void			*hooks_arg;
	/* a second done hook, for the command driving the verbs */
	void			(*done_extra)(struct agent *, void *);
	void			*done_extra_arg;
	/* each PROGRESS, for a loop's worker_progress event */
	void			(*progress)(struct agent *, void *);
	void			*progress_arg;
	/* a worker's permission request (agentperm.c); -1 or NULL: the
	   owner takes none and it is denied at once */
	int			(*perm)(struct agent *,
				    const struct msg_perm_ask *, void *);
	void			*perm_arg;
	struct containment	 contain;	/* how workers are contained */
	int			 limits_said;	/* limits that cannot apply:
						   said once a table */
	uint64_t		 retired;	/* agents agent_retire freed */
};

/* supervisor/engine/agent.c (agent_final, agent_status_name: agentphase.c) */
int		 sup_init(struct sup *, struct event_base *, struct children *,
		    const char *, const char *, char **);
void		 sup_free(struct sup *);
struct agent	*agent_spawn(struct sup *, const struct agent_req *);
void		 agent_start(struct agent *);
struct agent	*agent_find(struct sup *, const char *);
int		 agent_final(const struct agent *);
int		 agent_retire(struct agent *);
const char	*agent_status_name(enum agent_status);
int		 agent_send_input(struct agent *, const char *, int,
		    uint64_t *, char **);
int		 agent_close(struct agent *, uint64_t, char **);
void		 agent_kill_now(struct agent *);
void		 agent_fail(struct agent *, enum outcome_kind, const char *,
		    ...) __attribute__((format(printf, 3, 4)));
#define		 agent_set_reason(a, ...) \
		    agent_fail((a), OUTCOME_NONE, __VA_ARGS__)
void		 agent_end_kind(struct agent *, enum outcome_kind,
		    const char *, ...) __attribute__((format(printf, 3, 4)));

/* supervisor/engine/agentphase.c */
int		 agent_transition(struct agent *, enum agent_event);
uint64_t	 agent_setting_up(const struct agent *);
const char	*agent_phase_name(enum agent_phase);
const char	*agent_event_name(enum agent_event);

/* supervisor/engine/spawn.c */
int		 spawn_worker(struct sup *, struct agent *, int *, char **);
char		*spawn_worker_path(const char *);
char		*spawn_launcher_said(const struct agent *);
void		 spawn_launcher_trim(const struct agent *);
void		 spawn_signal_worker(struct agent *, int);
void		 spawn_signal_worker_group(struct agent *, int);
void		 spawn_tool_adopt(struct agent *, pid_t);
unsigned	 spawn_sweep(struct agent *, pid_t, char *, size_t);
void		 spawn_signal_tool(struct agent *, int);

/* supervisor/engine/freeze.c: a worker stopped where it is, then on */
int		 agent_freeze(struct agent *, const char *);
void		 agent_thaw(struct agent *);
uint64_t	 agent_frozen_ms(const struct agent *);

/* supervisor/engine/agentperm.c: a worker's permission requests */
void		 agent_perm_ask(struct agent *, const struct msg_perm_ask *);
int		 agent_perm_reply(struct agent *, uint64_t, int, const char *);

/* supervisor/engine/turn.c: follow-up turns */
int		 turn_follow_up(struct agent *, const char *, uint64_t *,
		    char **);
int		 turn_next(struct agent *);

/* supervisor/engine/report.c */
json_t		*report_agent(const struct agent *);
enum outcome_kind report_kind(const struct agent *);
json_t		*report_usage(const json_t *);
void		 report_usage_add(json_t *, const json_t *, const char *);

#endif
