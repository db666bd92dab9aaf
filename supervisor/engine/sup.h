/*
 * sup.h: the four verbs (spawn / wait / send_input / close) on top of the
 * agent table, with their own timers, and the subcommand entry points.
 */
#ifndef CCW_SUP_H
#define CCW_SUP_H

#include "agent.h"
#include "errcode.h"

#define EXIT_OK		0
#define EXIT_FAILED	1
#define EXIT_USAGE	2
#define EXIT_PAUSED	3
#define EXIT_STOPPED	4
#define EXIT_TIMEOUT	5
#define EXIT_INTERNAL	70

/* a stop (a signal) closes a loop's tools within this */
#define SUP_STOP_GRACE_MS	1000

struct verbs;

/* status: {agent_id: status name}, borrowed; timed_out 0/1. */
typedef void	(*verbs_wait_cb)(json_t *, int, void *);
/*
 * The input's fate: delivery says how ("stdin": live; "resume": queued for
 * a resumed turn once the tool's turn ends; "turn": a new turn started
 * now), or err names the failure (delivery NULL).
 */
typedef void	(*verbs_input_cb)(uint64_t, const char *, const char *, void *);
/* previous: the status the agent had when close was asked. */
typedef void	(*verbs_close_cb)(const char *, void *);

struct verbs	*verbs_new(struct sup *);
void		 verbs_free(struct verbs *);
/* The verbs: ERR_NONE, or the kind of failure with *err (errcode.h). */
enum err_code	 verbs_wait(struct verbs *, char *const *, size_t, uint64_t,
		    int, verbs_wait_cb, void *, char **);
enum err_code	 verbs_send_input(struct verbs *, const char *, const char *,
		    int, verbs_input_cb, void *, char **);
enum err_code	 verbs_send_input_within(struct verbs *, const char *,
		    const char *, int, uint64_t, verbs_input_cb, void *,
		    char **);
void		 verbs_cancel_inputs(struct verbs *, void *);
enum err_code	 verbs_close(struct verbs *, const char *, uint64_t,
		    verbs_close_cb, void *, char **);
int		 verbs_idle(struct verbs *);

/* supervisor/engine/ladder.c: wait, nudge, wait, close */
#define LADDER_NUDGE_TEXT	"## TIMEOUT\nPlease converge and output " \
				"WORKER_RESULT with current progress."
enum ladder_phase { LADDER_WAIT, LADDER_NUDGE, LADDER_CLOSING, LADDER_DONE };
struct ladder;
typedef void	(*ladder_done_cb)(struct agent *, void *);
struct ladder	*ladder_start(struct verbs *, struct agent *, uint64_t,
		    uint64_t, uint64_t, ladder_done_cb, void *);
void		 ladder_close(struct ladder *, uint64_t);
enum ladder_phase ladder_phase(const struct ladder *);
void		 ladder_free(struct ladder *);

int		 cmd_acp(int, char **);
int		 cmd_agent(int, char **);
int		 cmd_batch(int, char **);
int		 cmd_control(int, char **);
int		 cmd_mcp(int, char **);
int		 cmd_state(int, char **);
int		 cmd_answer(int, char **);
int		 cmd_capsule(int, char **);
int		 cmd_run(int, char **);
int		 cmd_serve(int, char **);
int		 cmd_tune(int, char **);

#endif
