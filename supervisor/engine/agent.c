/*
 * agent.c: the agent table and each agent's life: spawn, the messages
 * its worker sends, its reaping (told by the process's one child
 * registry, shared by every table on the event base), a remote agent's
 * heartbeat, the close ladder, a follow-up turn's restart (turn.c sets
 * the record up) and the single completion every spawn ends in, with the
 * outcome kind the supervisor saw (agent_fail, agent_end_kind).
 */
#include <config.h>

#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "clock.h"
#include "agent.h"
#include "chan.h"
#include "children.h"
#include "leak.h"
#include "log.h"
#include "state.h"
#include "xmalloc.h"

static void	agent_check_done(struct agent *);
static void	agent_next_turn(struct agent *);

/*
 * Keep the first reason an agent failed for, later ones are
 * consequences; and the first kind the supervisor gave (NONE: the
 * worker's to say).
 */
static void
agent_vreason(struct agent *a, enum outcome_kind k, const char *fmt,
    va_list ap)
{
	if (a->reason != NULL)
		return;
	if (a->kind == OUTCOME_NONE)
		a->kind = k;
	if (vasprintf(&a->reason, fmt, ap) < 0)
		a->reason = NULL;
	log_info("%s: %s%s%s", a->id, outcome_name(k), k != OUTCOME_NONE ?
	    ": " : "", a->reason != NULL ? a->reason : "?");
}

/*
 * A failure the supervisor classified itself (the worker could not: it
 * is gone, or broke the protocol); OUTCOME_NONE (agent_set_reason): a
 * reason only.
 */
void
agent_fail(struct agent *a, enum outcome_kind k, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	agent_vreason(a, k, fmt, ap);
	va_end(ap);
}

/*
 * How an agent ended on the supervisor's terms (a deadline, silence, a
 * close on request), which is no error of its own: the status stays what
 * the close makes it, but the report names the kind and says why.  The
 * first verdict stands.
 */
void
agent_end_kind(struct agent *a, enum outcome_kind k, const char *fmt, ...)
{
	va_list	ap;

	if (a->kind != OUTCOME_NONE)
		return;
	a->kind = k;
	free(a->kind_reason);
	va_start(ap, fmt);
	if (vasprintf(&a->kind_reason, fmt, ap) < 0)
		a->kind_reason = NULL;
	va_end(ap);
}

/*
 * Kill the tool's group and the worker's, without waiting; spawn.c sends
 * each signal only to what it proves is this agent's.
 */
void
agent_kill_now(struct agent *a)
{
	agent_thaw(a);
	spawn_signal_tool(a, SIGKILL);
	spawn_signal_worker_group(a, SIGKILL);
	spawn_signal_worker(a, SIGKILL);
	(void)agent_transition(a, AE_KILL);
}

/* Drop the channel; its end callback will not run again. */
static void
agent_drop_chan(struct agent *a)
{
	if (a->chan != NULL) {
		chan_free(a->chan);
		a->chan = NULL;
	}
	(void)agent_transition(a, AE_EOF);
}

/* Send ASSIGN once the worker said HELLO. */
static void
agent_assign(struct agent *a)
{
	struct msg	m;
	enum proto_err	e;

	msg_init(&m, MSG_ASSIGN);
	m.u.assign.loop_id = a->sup->loop_id;
	m.u.assign.agent_id = a->id;
	m.u.assign.role = a->role;
	m.u.assign.prompt = a->prompt;
	m.u.assign.tool = a->tool;
	m.u.assign.model = a->model;
	m.u.assign.command = a->command;
	m.u.assign.cwd = a->cwd;
	m.u.assign.log_path = a->log_path;
	m.u.assign.capsule = a->capsule;
	m.u.assign.timeout_ms = a->timeout_ms;
	m.u.assign.idle_ms = a->idle_ms;
	m.u.assign.options = a->options;
	e = chan_send(a->chan, &m);
	/* Borrowed pointers: do not msg_clear. */
	if (e != PROTO_OK) {
		agent_fail(a, OUTCOME_PROTOCOL, "cannot send ASSIGN: %s",
		    proto_strerror(e));
		agent_kill_now(a);
		return;
	}
	a->status = AS_RUNNING;
	/* Input given before the worker was up follows its assignment. */
	if (a->early != NULL) {
		chan_send_buffer(a->chan, a->early);
		evbuffer_free(a->early);
		a->early = NULL;
	}
}

/* One message from a worker. */
static void
agent_on_msg(struct chan *c, struct msg *m, void *arg)
{
	struct agent	*a = arg;

	(void)c;
	a->t_activity = clock_mono_ms();
	if (m->type != MSG_HELLO && !a->hello) {
		agent_fail(a, OUTCOME_PROTOCOL, "protocol violation: %s "
		    "before HELLO", msg_name(m->type));
		agent_kill_now(a);
		agent_drop_chan(a);
		return;
	}
	switch (m->type) {
	case MSG_HELLO:
		if (agent_transition(a, AE_HELLO) != 0) {
			agent_fail(a, OUTCOME_PROTOCOL,
			    "protocol violation: second HELLO");
			agent_kill_now(a);
			agent_drop_chan(a);
			return;
		}
		agent_assign(a);
		break;
	case MSG_STARTED:
		msg_clear(&a->started);
		a->started = *m;
		msg_init(m, MSG_NONE);
		spawn_tool_adopt(a, a->started.u.started.tool_pid > INT32_MAX ?
		    0 : (pid_t)a->started.u.started.tool_pid);
		break;
	case MSG_PROGRESS:
		log_debug("%s: %s: %s", a->id, m->u.progress.kind,
		    m->u.progress.text);
		if (m->u.progress.kind != NULL &&
		    strcmp(m->u.progress.kind, "retry") == 0 &&
		    m->u.progress.text != NULL) {
			free(a->last_retry);
			a->last_retry = xstrdup(m->u.progress.text);
		}
		a->live_in = m->u.progress.tokens_in;
		a->live_out = m->u.progress.tokens_out;
		a->live_cost = m->u.progress.cost;
		free(a->last_progress);
		a->last_progress = m->u.progress.text;
		m->u.progress.text = NULL;
		if (a->sup->progress != NULL)
			a->sup->progress(a, a->sup->progress_arg);
		break;
	case MSG_INPUT_ACK:
		if (a->sup->hooks.input_ack != NULL)
			a->sup->hooks.input_ack(a, m->u.input_ack.submission_id,
			    m->u.input_ack.delivery, m->u.input_ack.error,
			    a->sup->hooks_arg);
		break;
	case MSG_RESULT:
		msg_clear(&a->result);
		a->result_early = a->phase != AP_CLOSING;
		a->result = *m;
		msg_init(m, MSG_NONE);
		break;
	case MSG_PERM_ASK:
		agent_perm_ask(a, &m->u.perm_ask);
		break;
	case MSG_BYE:
	case MSG_PONG:		/* the heartbeat: t_activity is the point */
		break;
	case MSG_ERROR:
		agent_fail(a, OUTCOME_PROTOCOL, "worker error %s: %s",
		    m->u.error.code, m->u.error.message);
		break;
	default:
		break;
	}
}

/* The channel ended: clean EOF, or a protocol violation that kills it. */
static void
agent_on_end(struct chan *c, enum proto_err e, const char *why, void *arg)
{
	struct agent	*a = arg;

	(void)c;
	/* text where the first frame belongs: a login banner, an rc file */
	if (e == PROTO_E_MAGIC && !a->hello && a->launch.argv.n > 0)
		agent_fail(a, OUTCOME_PROTOCOL, "protocol violation: %s: the "
		    "launcher's stdout carried text before the worker's "
		    "HELLO (a shell startup file that prints?)", why);
	if (e != PROTO_OK) {
		agent_fail(a, OUTCOME_PROTOCOL, "protocol violation: %s",
		    why);
		agent_kill_now(a);
	}
	agent_drop_chan(a);
	agent_check_done(a);
}

/*
 * Describe how a worker process ended.  Behind a launcher the process is
 * the launcher: its status and the last line it wrote say what went wrong
 * (a refused connection, a worker not installed there).
 */
static void
agent_exit_reason(struct agent *a)
{
	int	 st = a->wstatus;
	char	*how, *said;

	if (a->launch.argv.n > 0) {
		/* after HELLO the worker was there: its host is lost to us */
		how = launch_describe(&a->launch);
		said = spawn_launcher_said(a);
		if (WIFSIGNALED(st))
			agent_fail(a, OUTCOME_LOST, "%slauncher '%s' killed "
			    "by signal %d (SIG%s)%s%s", a->hello ?
			    "worker lost: " : "", how, WTERMSIG(st),
			    sigabbrev_np(WTERMSIG(st)) ?
			    sigabbrev_np(WTERMSIG(st)) : "?",
			    said != NULL ? ": " : "", said != NULL ? said : "");
		else
			agent_fail(a, OUTCOME_LOST, "%slauncher '%s' "
			    "exited with status %d %s%s%s", a->hello ?
			    "worker lost: " : "", how, WEXITSTATUS(st),
			    a->hello ? "without a result" :
			    "before the worker said HELLO",
			    said != NULL ? ": " : "", said != NULL ? said : "");
		free(said);
		free(how);
		return;
	}
	if (WIFSIGNALED(st))
		agent_fail(a, OUTCOME_CRASHED, "worker killed by signal %d "
		    "(SIG%s)", WTERMSIG(st), sigabbrev_np(WTERMSIG(st)) ?
		    sigabbrev_np(WTERMSIG(st)) : "?");
	else if (!a->hello)
		agent_fail(a, OUTCOME_CRASHED,
		    "worker exited with status %d before HELLO",
		    WEXITSTATUS(st));
	else
		agent_fail(a, OUTCOME_CRASHED, "worker exited with status %d "
		    "without a result", WEXITSTATUS(st));
}

/*
 * Every ping_ms: a channel silent past the deadline (lost_ms once the
 * worker said HELLO; start_ms before, while ssh connects or srun waits
 * for its step) is a lost host: the agent errors and its launcher, our
 * own child, is killed.  Otherwise a PING asks for a PONG.
 */
static void
agent_heartbeat_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct agent	*a = arg;
	uint64_t	 now = clock_mono_ms(), quiet, limit;
	struct msg	 m;
	char		*how;

	(void)fd;
	(void)ev;
	if (agent_final(a) || a->chan == NULL)
		return;
	spawn_launcher_trim(a);
	quiet = now - a->t_activity;
	limit = a->hello ? launch_lost_ms(&a->launch) +
	    agent_setting_up(a) :
	    (a->launch.start_ms != 0 ? a->launch.start_ms : LAUNCH_START_MS);
	if (quiet >= limit) {
		how = launch_describe(&a->launch);
		if (a->hello)
			agent_fail(a, OUTCOME_LOST, "worker lost: no frame for "
			    "%llu ms through '%s'", (unsigned long long)quiet,
			    how);
		else
			agent_fail(a, OUTCOME_LOST, "launcher '%s': no worker "
			    "said HELLO within %llu ms", how,
			    (unsigned long long)quiet);
		free(how);
		event_del(a->hb_ev);	/* once: the end follows the kill */
		agent_kill_now(a);
		return;
	}
	if (a->hello) {
		msg_init(&m, MSG_PING);
		m.u.ping.seq = ++a->ping_seq;
		(void)chan_send(a->chan, &m);
	}
}

/* Start the heartbeat of a remote agent (a local one has none). */
static void
agent_heartbeat_start(struct agent *a)
{
	uint64_t	ms = a->launch.ping_ms != 0 ? a->launch.ping_ms :
			    LAUNCH_PING_MS;

	if (a->launch.argv.n == 0 || a->hb_ev != NULL)
		return;
	/* a start deadline shorter than a PING is judged on time too */
	if (a->launch.start_ms != 0 && a->launch.start_ms < ms)
		ms = a->launch.start_ms;
	a->hb_ev = event_new(a->sup->base, -1, EV_PERSIST, agent_heartbeat_cb,
	    a);
	chan_arm_ms(a->hb_ev, ms);
}

/* The heartbeat ends with the agent (or its turn). */
static void
agent_heartbeat_stop(struct agent *a)
{
	if (a->hb_ev != NULL) {
		event_free(a->hb_ev);
		a->hb_ev = NULL;
	}
}

/*
 * DONE = channel at EOF and pid reaped.  Here, exactly once, the status
 * becomes final and the completion hook runs.
 */
static void
agent_check_done(struct agent *a)
{
	int	closing = a->phase == AP_CLOSING;

	if (agent_final(a) || !a->eof || !a->reaped)
		return;
	/* a follow-up sent while the turn was ending starts the next one */
	if (a->next_turn != NULL && !closing && a->reason == NULL &&
	    a->result.type == MSG_RESULT) {
		if (a->kill_ev != NULL) {
			event_free(a->kill_ev);
			a->kill_ev = NULL;
		}
		a->sup->nlive--;
		agent_next_turn(a);
		return;
	}
	(void)agent_transition(a, AE_FINISH);
	a->t_end = clock_mono_ms();
	agent_heartbeat_stop(a);
	if (a->kill_ev != NULL) {
		event_free(a->kill_ev);
		a->kill_ev = NULL;
	}
	/* closed before any result, not by a timer: on request */
	if (closing && !a->result_early && a->reason == NULL)
		agent_end_kind(a, OUTCOME_CANCELLED, "closed on request");
	/* A result that only answered our close does not make it completed. */
	if (a->result.type == MSG_RESULT && a->reason == NULL &&
	    a->result.u.result.reason != NULL) {
		a->status = AS_ERRORED;
		a->reason = xstrdup(a->result.u.result.reason);
	} else if (a->result.type == MSG_RESULT && a->reason == NULL &&
	    a->result_early)
		a->status = AS_COMPLETED;
	else if (closing && a->reason == NULL)
		a->status = AS_SHUTDOWN;
	else {
		if (a->reason == NULL)
			agent_exit_reason(a);
		a->status = AS_ERRORED;
	}
	a->sup->nlive--;
	log_debug("%s: done, %s", a->id, agent_status_name(a->status));
	if (a->sup->hooks.done != NULL)
		a->sup->hooks.done(a, a->sup->hooks_arg);
	if (a->sup->done_extra != NULL)
		a->sup->done_extra(a, a->sup->done_extra_arg);
}

/*
 * The worker has ended (or the table goes): whatever is still in its
 * cgroup outlived it and is killed with the cgroup, which goes too.
 * Returns that count (a->cg_left keeps the sum); a->cg_usage is what
 * the cgroup used.  Only the caller knows whether it is a leak: at a
 * worker's death it is, at the table's teardown the tree was ours to
 * kill.
 */
static unsigned
agent_cgroup_end(struct agent *a)
{
	unsigned	n;

	if (a->cg_path == NULL)
		return 0;
	n = cgroup_end(a->cg_path, a->sup->contain.has_kill,
	    a->pid > 0 && !a->reaped ? a->pid : 0, &a->cg_usage);
	a->cg_left += n;
	free(a->cg_path);
	a->cg_path = NULL;
	return n;
}

/*
 * The registry reaped our worker.  Its channel may not be at EOF: a
 * descendant can hold the worker's end.  What the worker wrote before it
 * died is read now, and its death ends the channel.  Whatever of its
 * tool's tree outlived it is ended first (spawn_sweep).
 */
static void
agent_reaped(pid_t pid, int st, void *arg)
{
	struct agent	*a = arg;

	char		 how[512];
	unsigned	 n;

	(void)agent_transition(a, AE_REAPED);
	agent_thaw(a);	/* died frozen (killed from outside): its deadlines go on */
	/* what its tool left, in its cgroup or come to us: ended, a leak */
	if ((n = agent_cgroup_end(a)) > 0)
		leak_agent(a, n, "left in its cgroup");
	a->wstatus = st;
	a->pid = -pid;
	if ((n = spawn_sweep(a, pid, how, sizeof how)) > 0)
		leak_agent(a, n, how);
	if (a->pidfd >= 0) {
		close(a->pidfd);
		a->pidfd = -1;
	}
	if (a->chan != NULL) {
		chan_drain_end(a->chan);	/* ends in agent_on_end */
		return;
	}
	agent_check_done(a);
}

/*
 * Set up the table on base, its workers reaped by ch (the process's one
 * registry; NULL: the table makes one, for a process with one table),
 * with the worker path and the directory for worker logs.
 */
int
sup_init(struct sup *s, struct event_base *base, struct children *ch,
    const char *state_dir, const char *loop_id, char **err)
{
	memset(s, 0, sizeof *s);
	TAILQ_INIT(&s->agents);
	s->base = base;
	s->next_index = 1;
	s->next_submission = 1;
	s->state_dir = xstrdup(state_dir);
	s->loop_id = loop_id != NULL ? xstrdup(loop_id) : state_id_generate();
	s->worker_path = spawn_worker_path(NULL);
	(void)contain_choose(&s->contain, NULL, 1);
	signal(SIGPIPE, SIG_IGN);
	if (ch == NULL) {
		if ((ch = children_new(base, err)) == NULL)
			return -1;
		s->own_children = 1;
	}
	s->children = ch;
	return 0;
}

/* One agent's record and what it holds, once it is off the table. */
static void
agent_free(struct sup *s, struct agent *a)
{
	agent_thaw(a);
	if (!agent_final(a))
		agent_kill_now(a);
	(void)agent_cgroup_end(a);
	/* still running: reaped as an orphan once it is dead */
	if (a->pid > 0 && !a->reaped && s->children != NULL)
		children_forget(s->children, a->pid);
	if (a->pidfd >= 0)
		close(a->pidfd);
	if (a->chan != NULL)
		chan_free(a->chan);
	if (a->kill_ev != NULL)
		event_free(a->kill_ev);
	if (a->freeze_ev != NULL)
		event_free(a->freeze_ev);
	free(a->frozen_why);
	agent_heartbeat_stop(a);
	if (a->launch_err_fd >= 0)
		close(a->launch_err_fd);
	launch_clear(&a->launch);
	if (a->early != NULL)
		evbuffer_free(a->early);
	free(a->role); free(a->tool); free(a->model); free(a->command);
	free(a->prompt); free(a->cwd); free(a->capsule);
	free(a->log_path); free(a->reason); free(a->last_progress);
	free(a->last_retry);
	free(a->kind_reason);
	free(a->next_turn); free(a->session_id);
	json_decref(a->options);
	json_decref(a->limits);
	json_decref(a->past);
	msg_clear(&a->started);
	msg_clear(&a->result);
	free(a);
}

/* Kill whatever is left and free the table. */
void
sup_free(struct sup *s)
{
	struct agent	*a;

	while ((a = TAILQ_FIRST(&s->agents)) != NULL) {
		TAILQ_REMOVE(&s->agents, a, entry);
		agent_free(s, a);
	}
	/* the registry's owner kills and reaps whatever is left */
	if (s->own_children)
		children_free(s->children);
	cgroup_release(&s->contain, s->loop_id);
	contain_clear(&s->contain);
	free(s->state_dir);
	free(s->loop_id);
	free(s->worker_path);
}

/*
 * A finished agent leaves memory (retire.c decides which, after saving
 * its report): a host that runs for weeks must not keep every agent it
 * ever had.  Only a final agent with no follow-up queued goes; 0 if so.
 */
int
agent_retire(struct agent *a)
{
	struct sup	*s = a->sup;

	if (!agent_final(a) || a->next_turn != NULL || a->chan != NULL ||
	    a->kill_ev != NULL)
		return -1;
	TAILQ_REMOVE(&s->agents, a, entry);
	agent_free(s, a);
	s->retired++;
	return 0;
}

/* Copy a string that may be NULL. */
static char *
agent_dup(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

/* A spawn that failed before a worker ran completes on the next turn. */
static void
agent_fail_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct agent	*a = arg;

	(void)fd;
	(void)ev;
	agent_check_done(a);
}

/*
 * In cgroup mode each turn's worker gets a cgroup of its own; one that
 * cannot be made leaves the worker uncontained (said), never failed.
 */
static void
agent_cgroup_make(struct agent *a)
{
	char	*err = NULL;

	if (a->sup->contain.mode != CONTAIN_CGROUP || a->cg_path != NULL)
		return;
	a->cg_path = cgroup_make(&a->sup->contain, a->sup->loop_id, a->id,
	    &err);
	if (a->cg_path == NULL) {
		log_warnx("%s: no cgroup (%s); its worker runs without one",
		    a->id, err);
		free(err);
		return;
	}
	if (a->limits != NULL && (err = cgroup_limits_apply(&a->sup->contain,
	    a->cg_path, a->limits)) != NULL) {
		if (!a->sup->limits_said)
			log_warnx("%s: role %s: %s (said once)", a->id, a->role,
			    err);
		a->sup->limits_said = 1;
		free(err);
	}
}

/*
 * Start the worker of an agent whose record is set up (a first turn or a
 * follow-up one).  A start that fails half-way ends the agent errored,
 * through the same single completion.
 */
void
agent_start(struct agent *a)
{
	struct sup	*s = a->sup;
	char		*err = NULL;
	int		 fd;

	a->pid = -1;
	a->pidfd = -1;
	if (a->launch_err_fd >= 0)
		close(a->launch_err_fd);	/* an earlier turn's */
	a->launch_err_fd = -1;
	a->status = AS_PENDING_INIT;
	a->t_start = a->t_activity = clock_mono_ms();
	s->nlive++;
	agent_cgroup_make(a);
	if (spawn_worker(s, a, &fd, &err) != 0)
		goto failed;
	(void)children_watch(s->children, a->pid, agent_reaped, a);
	a->chan = chan_new(s->base, fd, MSG_DIR_TO_SUPERVISOR, PROTO_MAX_BODY,
	    agent_on_msg, agent_on_end, a);
	if (a->chan == NULL) {
		close(fd);
		err = xstrdup("cannot create the channel");
		agent_kill_now(a);
		goto failed;
	}
	agent_heartbeat_start(a);
	log_debug("%s: worker %ld started", a->id, (long)a->pid);
	return;
failed:
	agent_fail(a, a->launch.argv.n > 0 ? OUTCOME_LOST :
	    OUTCOME_CRASHED, "spawn failed: %s", err);
	free(err);
	(void)agent_transition(a, AE_EOF);
	if (a->pid <= 0) {
		(void)agent_transition(a, AE_REAPED);
		(void)agent_cgroup_end(a);
	}
	event_base_once(s->base, -1, EV_TIMEOUT, agent_fail_cb, a, NULL);
}

/* A follow-up turn (turn.c set its record up), then its worker. */
static void
agent_next_turn(struct agent *a)
{
	if (turn_next(a) == 0)
		agent_start(a);
}

/* Start one agent: its record, then its worker (agent_start). */
struct agent *
agent_spawn(struct sup *s, const struct agent_req *r)
{
	struct agent	*a;

	a = xcalloc(1, sizeof *a);
	a->sup = s;
	a->index = s->next_index++;
	snprintf(a->id, sizeof a->id, "agent-%u", a->index);
	a->role = xstrdup(r->role);
	a->tool = xstrdup(r->tool);
	a->model = agent_dup(r->model);
	a->command = agent_dup(r->command);
	a->prompt = xstrdup(r->prompt != NULL ? r->prompt : "");
	a->cwd = agent_dup(r->cwd);
	a->capsule = agent_dup(r->capsule);
	a->options = r->options != NULL ? json_deep_copy(r->options) : NULL;
	a->timeout_ms = r->timeout_ms;
	a->idle_ms = r->idle_ms;
	launch_copy(&a->launch, r->launch);
	a->limits = r->limits != NULL ? json_deep_copy(r->limits) : NULL;
	a->launch_err_fd = -1;
	a->freeze_guard = -1;
	xasprintf(&a->log_path, "%s/%s.workers/%s.log", s->state_dir,
	    s->loop_id, a->id);
	a->turns = 1;
	msg_init(&a->started, MSG_NONE);
	msg_init(&a->result, MSG_NONE);
	TAILQ_INSERT_TAIL(&s->agents, a, entry);
	agent_start(a);
	return a;
}

/* Look an agent up by its id. */
struct agent *
agent_find(struct sup *s, const char *id)
{
	struct agent	*a;

	TAILQ_FOREACH(a, &s->agents, entry)
		if (strcmp(a->id, id) == 0)
			return a;
	return NULL;
}

/* Queue follow-up input; the INPUT_ACK hook reports delivery. */
int
agent_send_input(struct agent *a, const char *text, int interrupt,
    uint64_t *sub, char **err)
{
	struct msg	m;
	enum proto_err	e;

	int		 rc, live = a->phase == AP_SPAWNING ||
			    a->phase == AP_RUNNING;

	/* a turn that has ended (or is ending) is followed by a new one */
	if (a->phase == AP_DONE || (live && a->result.type == MSG_RESULT)) {
		if ((rc = turn_follow_up(a, text, sub, err)) == 1 &&
		    a->phase == AP_DONE)
			agent_next_turn(a);	/* counted live again */
		return rc;
	}
	if (!live || a->chan == NULL || a->result.type == MSG_RESULT) {
		xasprintf(err, "%s is %s; send_input needs a running agent",
		    a->id, a->phase == AP_CLOSING ? "closing" :
		    a->result.type == MSG_RESULT && !agent_final(a) ?
		    "completed" : agent_status_name(a->status));
		return -1;
	}
	msg_init(&m, MSG_INPUT);
	m.u.input.submission_id = a->sup->next_submission++;
	m.u.input.message = (char *)text;
	m.u.input.interrupt = interrupt;
	if (a->phase == AP_SPAWNING) {
		if (a->early == NULL)
			a->early = evbuffer_new();
		e = frame_write(a->early, &m, PROTO_MAX_BODY);
	} else
		e = chan_send(a->chan, &m);
	if (e != PROTO_OK) {
		xasprintf(err, "cannot send input to %s: %s", a->id,
		    proto_strerror(e));
		return -1;
	}
	if (interrupt)
		a->status = AS_INTERRUPTED;
	*sub = m.u.input.submission_id;
	return 0;
}

/* The close deadline passed: the worker did not finish; kill it all. */
static void
agent_kill_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct agent	*a = arg;

	(void)fd;
	(void)ev;
	log_info("%s: still alive %llu ms after close, killing", a->id,
	    (unsigned long long)a->grace_ms);
	agent_kill_now(a);
}

/*
 * Ask the worker to stop its tool (SIGTERM, grace, SIGKILL) and exit.  We
 * do not trust it to: our own timer kills everything after grace + 1 s.
 */
int
agent_close(struct agent *a, uint64_t grace_ms, char **err)
{
	struct msg	m;

	if (agent_transition(a, AE_CLOSE) != 0) {
		xasprintf(err, "%s already closed", a->id);
		return -1;
	}
	if (a->phase == AP_CLOSED)
		return 0;	/* it had ended: nothing left to stop */
	agent_thaw(a);	/* a stopped tool keeps a SIGTERM pending */
	a->grace_ms = grace_ms;
	if (a->chan != NULL && a->hello) {
		msg_init(&m, MSG_CLOSE);
		m.u.close.grace_ms = grace_ms;
		(void)chan_send(a->chan, &m);
	} else
		agent_kill_now(a);
	a->kill_ev = evtimer_new(a->sup->base, agent_kill_cb, a);
	chan_arm_ms(a->kill_ev, grace_ms + 1000);
	return 0;
}
