/*
 * host.h: a host of loops on the caller's event base (DESIGN.md section
 * 8): one child reaper, one event bus, the configuration and the state
 * directory shared by every loop it opens; host_loop_open creates or
 * resumes a loop (its file work on the host's committer thread), runs
 * it, and reports its start and its end by callback.
 *
 * The engine knows no workflow's run engine (ccw-loop's loop.c lives in
 * supervisor/workflows, which the engine must not include): a workflow
 * that can be hosted fills struct workflow's `driver` (flowdef.h) with
 * the four calls below, and the host reaches its run engine only
 * through them.  ccw-loop's are in supervisor/workflows/ccw-loop/hosted.c.
 */
#ifndef CCW_HOST_H
#define CCW_HOST_H

#include <stdint.h>

#include <jansson.h>

#include "loopopen.h"
#include "plan.h"

struct agent;
struct bus;
struct children;
struct sup;
struct event_base;
struct gate;
struct host;
struct host_loop;
struct meter;
struct workflow;

#define HOST_BUS_KEEP	1024	/* events the bus keeps for a late reader */
#define HOST_COMMIT_THREADS	8	/* the loops' state commits run on, shared */
#define HOST_LOG_LINES	100	/* LOOP_LOG_ENTRY lines a second, a loop */
#define HOST_LOG_BYTES	(32 * 1024)	/* and bytes */

/* What the host is given; everything borrowed for the host's life. */
struct host_cfg {
	const struct config	*config;	/* roles, tools; its wf */
	const char		*state_dir;	/* the loops' directory */
	const char		*root;		/* the project: workers' cwd */
	struct plan_overrides	 over;		/* above config, every loop */
	struct children		*children;	/* NULL: the host makes one */
	struct bus		*bus;		/* NULL: the host makes one */
	struct gate		*gate;		/* NULL: the host makes one (its
						   events on the bus) */
	size_t			 bus_keep;	/* 0: HOST_BUS_KEEP */
	uint64_t		 batch_ms;	/* parallel batch; 0: 60000 */
	uint64_t		 batch_nudge_ms; /* 0: 5000 */
	/* called as a loop opens, before it takes the configuration: the
	   caller may read it again and hand it over (host_set_config) */
	void			(*refresh)(void *, struct host *);
	void			*refresh_arg;
	/* LOOP_LOG_ENTRY: workers' log lines, so many a second and loop;
	   0: none (the log_bytes 0: HOST_LOG_BYTES) */
	unsigned		 log_lines;
	size_t			 log_bytes;
};

/*
 * One observer per loop.  opened: the open (run on the host's committer
 * thread) ended: err NULL (and code 0), the loop runs; else why (another
 * process drives it: its pid) and the EXIT_* code a command gives, which
 * is EXIT_OK, 0, for a loop already completed: test err, not the code;
 * the handle is freed after the call (done never follows).  event: each of the loop's
 * events, with its number on the host's bus (fields borrowed).  done:
 * the loop ended with an EXIT_* code; its run engine is freed and its
 * lock released before the call (so the observer may open the loop
 * again), the handle is freed after it returns.  ask: a worker's
 * clarification questions (its role, the questions as the result holds
 * them), in any mode; the observer answers with host_loop_answer (NULL:
 * none, the step fails).  Without it the loop answers them itself (each
 * question's Recommended option).  Any may be NULL.
 */
struct host_observer {
	void	(*opened)(void *, struct host_loop *, int, const char *);
	void	(*event)(void *, struct host_loop *, uint64_t, const char *,
		    const json_t *);
	void	(*done)(void *, struct host_loop *, int);
	void	(*ask)(void *, struct host_loop *, const char *,
		    const json_t *);
	void	*arg;
};

/* What a host hands a workflow's driver for one loop (borrowed). */
struct host_run {
	const char		*id;
	const char		*state_dir;
	int			 dirfd;
	const char		*mode;		/* a word of the workflow's */
	int			 resumed;	/* it has history */
	struct loop_guard	*guard;		/* fresh agent ids and logs */
	struct state_store	*store;		/* open and running */
	const struct config	*config;
	const struct workflow	*workflow;
	const char		*root;
	struct plan_overrides	 over;
	struct children		*children;
	struct gate		*gate;		/* the host's: caps, holds */
	uint64_t		 batch_ms, batch_nudge_ms;
	/* the run's events and its end (once, never from inside start) */
	void	(*event)(void *, const char *, const json_t *);
	void	(*done)(void *, int);
	/* a worker's questions; NULL: the run answers them itself */
	void	(*ask)(void *, const char *, const json_t *);
	void	*arg;
};

/*
 * A workflow's run engine as the host drives it.  open: NULL and *err
 * if it cannot run this loop (a mode it does not host); free is never
 * called from inside done.
 */
struct workflow_driver {
	void	*(*open)(struct event_base *, const struct host_run *,
		    char **);
	void	 (*start)(void *);
	void	 (*stop)(void *, const char *);	/* ends with done(4) */
	void	 (*free)(void *);	/* workers still alive are killed */
	/* the answers to the run's ask (NULL: none), who gave them and
	   through what (either NULL); NULL: it never asks */
	void	 (*answer)(void *, const json_t *, const char *, const char *);
	/* its agent table, for counts (/metrics); NULL: it shows none */
	const struct sup *(*agents)(void *);
	/* stop, its last save setting the status and reason a front end
	   asked for (a stop: failed, CCW's words); NULL: stop */
	void	 (*stop_as)(void *, const char *, const char *, const char *);
	/* held where it is (workers frozen, status paused with the
	   reason): 0, -1 when it cannot be; NULL: it cannot be held */
	int	 (*hold)(void *, const char *);
	/* a hold ended (a raised budget): workers thawed, status running;
	   NULL: it cannot be held */
	void	 (*unhold)(void *);
};

/* One agent of a hosted loop, as host_agents walks them (borrowed). */
typedef void	(*host_agent_fn)(const struct agent *, void *);

struct host	*host_new(struct event_base *, const struct host_cfg *,
		    char **);
void		 host_free(struct host *);
struct bus	*host_bus(struct host *);
struct gate	*host_gate(struct host *);
struct children	*host_children(struct host *);
size_t		 host_nloops(const struct host *);
void		 host_set_config(struct host *, const struct config *);
int		 host_config_used(const struct host *, const struct config *);
uint64_t	 host_commits(const struct host *);
void		 host_agents(const struct host *, host_agent_fn, void *);
struct meter	*host_meter(struct host *);
void		 host_leak(struct host *, const char *, const char *, unsigned,
		    const char *);
int		 host_notify_wait(struct host *, void (*)(void *), void *);

struct host_loop *host_loop_open(struct host *, const struct loop_spec *,
		    const struct workflow *, const struct host_observer *,
		    char **);
struct host_loop *host_loop_find(struct host *, const char *);
void		 host_loop_stop(struct host_loop *, const char *);
int		 host_loop_hold(struct host_loop *, const char *);	/* -1: not held */
void		 host_loop_unhold(struct host_loop *);	/* thawed, running */
void		 host_loop_interrupt(struct host_loop *, const char *);	/* left running, why recorded */
void		 host_loop_stop_as(struct host_loop *, const char *,
		    const char *, const char *);	/* why, status, reason */
int		 host_loop_answer(struct host_loop *, const json_t *);
int		 host_loop_answer_via(struct host_loop *, const json_t *,
		    const char *, const char *);	/* by, via: the history's */

/*
 * The queue of questions (issue 29; records: engine/question.c).
 * host_questions: every open question of the host's live loops, a new
 * JSON array of records.  host_question_answer: answer an open question
 * of a live loop (by may be NULL; via: "http", "socket", "mcp", "page",
 * ...): 0, else -(enum err_code) and *err: -ERR_NOT_FOUND (-1) no live
 * loop has that question, -ERR_CONFLICT no longer open, -ERR_INVALID a
 * bad argument.  The loop takes the answer from its answers file.
 * question_file_list / question_file_answer: the same for a stored loop
 * not driven here (its state file, {id}.answers.jsonl beside it); list
 * returns NULL and *err when the loop cannot be read.
 */
json_t		*host_questions(struct host *);
int		 host_question_answer(struct host *, const char *qid,
		    const char *answer, const char *by, const char *via,
		    char **err);
json_t		*question_file_list(int state_dirfd, const char *loop_id,
		    char **err);
int		 question_file_answer(int state_dirfd, const char *loop_id,
		    const char *qid, const char *answer, const char *by,
		    const char *via, char **err);
void		 host_stop_all(struct host *, const char *);
const char	*host_loop_id(const struct host_loop *);
const char	*host_loop_mode(const struct host_loop *);
enum err_code	 host_loop_open_code(const struct host_loop *);	/* why opened refused */

#endif
