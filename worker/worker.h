/*
 * worker.h: the worker's state: its channel, the assignment, the tool
 * process, the spool its stdout goes to and the capped log the worker
 * writes.  One worker drives one tool run (plus resumed turns of the
 * same session).
 */
#ifndef CCW_WORKER_H
#define CCW_WORKER_H

#include <sys/types.h>
#include <stdint.h>

#include "adapter.h"
#include "gitfiles.h"
#include "proto.h"

struct event;
struct event_base;
struct evbuffer;
struct chan;

#define FOLLOW_TAIL	(256u * 1024)	/* bytes kept for the final answer */
#define STDERR_TAIL	2048
#define STDERR_KEEP	8192	/* stderr bytes kept for reasons */

#define LOGCAP_DEFAULT	(64ull * 1024 * 1024)	/* log_max_bytes unset */
#define LOGCAP_HEAD	(1024u * 1024)	/* first bytes kept (cap / 4 if less) */
#define LOGCAP_MIN	(64u * 1024)	/* a smaller cap counts as this */

struct errtail {
	int		 fd;		/* read side of the stderr pipe, -1 none */
	struct event	*ev;
	char		 buf[STDERR_KEEP];
	size_t		 len;
};

/* The log: the worker its only writer, never past cap bytes. */
struct logcap {
	int		 fd;		/* the log, read-write, -1 none */
	uint64_t	 cap;		/* 0: no cap */
	uint64_t	 size;		/* the file's size: the next byte's offset */
	uint64_t	 written;	/* output bytes put in it, ever */
	uint64_t	 head;		/* bytes kept at its start */
	size_t		 mark_len;	/* the marker line after them; 0 none yet */
	int		 mark_nl;	/* the marker opens with a newline */
	int		 failed;	/* a write failed: said once */
};

struct follow {
	int		 fd;		/* the spool: the tool's stdout */
	struct event	*poll_ev;	/* the adaptive poll */
	unsigned	 interval;	/* its current period, ms */
	struct evbuffer	*partial;	/* bytes after the last newline */
	char		*tail;		/* ring of the last FOLLOW_TAIL bytes */
	size_t		 tail_len;	/* valid bytes in tail (<= FOLLOW_TAIL) */
	size_t		 tail_pos;	/* next write position */
	uint64_t	 total;		/* bytes read so far (pread offset) */
	uint64_t	 freed;		/* spool bytes given back to the disk */
	int		 no_free;	/* its filesystem cannot punch holes */
	int		 stopped;	/* we SIGSTOPped the tool: backlog */
};

/* options.worktree: the worker's own worktree (wtassign.c). */
struct wtassign {
	char		*repo, *path, *branch, *base;	/* path NULL: none */
	char		*msg;		/* its commit message */
	int		 keep;		/* false: the directory goes at the end */
	int		 made;		/* it exists (made or adopted) */
	int		 failed;	/* making or setting it up failed */
};

struct worker {
	struct event_base	*base;
	struct chan		*chan;
	char			*role;
	unsigned		 index;
	struct msg		 assign;	/* MSG_NONE until ASSIGN */
	const struct adapter	*ad;
	struct tool_spec	 spec;
	struct tool_stream	 ts;
	struct strv		 argv;		/* as reported in STARTED */
	char			*path;		/* resolved executable */
	struct logcap		 log;		/* the log file */
	struct follow		 fol;		/* the tool's stdout */
	struct errtail		 err;		/* the tool's stderr */

	pid_t			 tool_pid;	/* 0: none running */
	int			 tool_status;
	int			 tool_waited;
	int			 stdin_fd;	/* -1 closed */
	struct evbuffer		*stdin_buf;
	struct event		*stdin_ev;
	int			 stdin_close_when_empty;

	char			*resume_input;	/* queued follow-up turn */
	char			*prev_session;	/* the session of earlier turns */
	unsigned		 turns;		/* tool runs so far */
	struct strv		 files_acc;	/* union of the turns' claims */
	uint64_t		 acc_in, acc_out;	/* tokens of all turns */
	double			 acc_cost;
	int			 acc_cost_seen;
	struct gitsnap		 git_before;	/* work dir before the first turn */
	struct wtassign		 wt;		/* options.worktree */
	char			 err_line[512];	/* stderr line being cut */
	size_t			 err_line_len;
	int			 closing;	/* CLOSE received */
	int			 we_killed;	/* our signal ended the tool */
	int			 finished;	/* RESULT/BYE sent */
	char			*reason;	/* why the run errored */
	uint64_t		 t_start;
	uint64_t		 last_progress;

	struct event		*sigchld_ev, *sigterm_ev;
	struct event		*grace_ev;	/* after the final event */
	struct event		*kill_ev;	/* CLOSE's SIGKILL */
	struct event		*flush_ev;	/* deadline for output to drain */

	/* --stdio behind a launcher (remote.c) */
	int			 remote;
	uint64_t		 lost_ms;	/* supervisor silent: 0 never */
	uint64_t		 t_heard;	/* its last frame */
	struct event		*lost_ev;

	struct permsock		*perm;		/* the permission relay's
						   socket, or NULL */
	const char		*argv0;		/* how we were started */
};

/* worker/tool.c */
int	tool_start(struct worker *, const char *, int *, char **);
void	tool_signal(struct worker *, int);
void	tool_stdin_write(struct worker *, const char *, size_t);
void	tool_stdin_close(struct worker *);
void	tool_sweep(struct worker *);
char	*tool_resolve(const char *);

/* worker/errtail.c */
void	errtail_open(struct worker *, int);
void	errtail_drain(struct worker *);
void	errtail_close(struct worker *);
char	*errtail_text(const struct errtail *, size_t);

/* worker/follow.c */
int	follow_open(struct worker *, const char *, char **);
size_t	follow_drain(struct worker *, int);
void	follow_close(struct follow *);
char	*follow_tail(const struct follow *, size_t);

/* worker/logcap.c */
int	logcap_open(struct logcap *, const char *, uint64_t, char **);
void	logcap_write(struct logcap *, const char *, size_t);
void	logcap_close(struct logcap *);
uint64_t logcap_max(const json_t *);

/* worker/spool.c */
int	spool_open(const char *, int *, char **);
int	spool_free(int, uint64_t *, uint64_t);

/* worker/outcome.c */
void	outcome_fold(struct worker *);
void	outcome_next_turn(struct worker *);
void	outcome_fill(struct worker *, struct msg *);
void	outcome_reason(struct worker *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

/* worker/wtassign.c */
int	wtassign_start(struct worker *, char **);
char	*wtassign_finish(struct worker *, struct msg_result *);
void	wtassign_free(struct worker *);

/* worker/remote.c */
int	remote_stdio(int *, int *, char **);
void	remote_pong(struct worker *, const struct msg *);
void	remote_watch(struct worker *);
void	remote_log_path(struct worker *);

/* worker/report.c: the parts below main.c report through these */
struct event *worker_timer(struct worker *, uint64_t,
	    void (*)(int, short, void *));
void	worker_send(struct worker *, struct msg *);
void	worker_line(struct worker *, const char *, size_t);
void	worker_progress(struct worker *, const char *, const char *);
void	worker_retry_progress(struct worker *);
void	worker_final_event(struct worker *);
void	worker_lost(struct worker *);
void	utf8_sanitize(char *, size_t);

#endif
