/*
 * main.c: ccw-worker.  Owns the protocol side of a worker: HELLO, the
 * ASSIGN that starts the tool, INPUT and CLOSE from the supervisor, and
 * the RESULT and BYE it sends before exiting.  It exits when its channel
 * closes, and never leaves a descendant of its tool behind.
 */
#include <config.h>

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "chan.h"
#include "gitwt.h"
#include "clock.h"
#include "log.h"
#include "permrelay.h"
#include "result.h"
#include "worker.h"
#include "xmalloc.h"

static struct worker	W;

static void	worker_finish(struct worker *, int);

/* Everything we said has reached the socket: leave the loop. */
static void
worker_drained(struct chan *c, void *arg)
{
	struct worker	*w = arg;

	(void)c;
	if (w->finished)
		event_base_loopbreak(w->base);
}

/* A supervisor that does not read for 5 s is not waited for longer. */
static void
worker_flush_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct worker	*w = arg;

	(void)fd;
	(void)ev;
	event_base_loopbreak(w->base);
}

/*
 * The run is over: nothing of the tool may survive, then RESULT and BYE,
 * then exit once they are written.  A closed run still reports how its
 * tool ended; the supervisor knows it asked for the close.
 */
static void
worker_finish(struct worker *w, int send_result)
{
	struct msg	m;

	if (w->finished)
		return;
	w->finished = 1;
	tool_sweep(w);
	permsock_close(w);
	follow_drain(w, 1);
	errtail_drain(w);
	if (send_result) {
		msg_init(&m, MSG_RESULT);
		outcome_fill(w, &m);
		worker_send(w, &m);
		msg_clear(&m);
	}
	msg_init(&m, MSG_BYE);
	m.u.bye.reason = w->closing ? "closed" : "finished";
	worker_send(w, &m);
	if (w->chan == NULL || chan_queued(w->chan) == 0) {
		event_base_loopbreak(w->base);
		return;
	}
	chan_on_drained(w->chan, worker_drained);
	w->flush_ev = worker_timer(w, 5000, worker_flush_cb);
}

/*
 * Start a turn of the tool and follow its stderr: tool.c forks, errtail.c
 * reads, and only main.c knows both.
 */
static int
worker_turn_start(struct worker *w, const char *text, char **err)
{
	int	errfd;

	if (tool_start(w, text, &errfd, err) != 0)
		return -1;
	errtail_open(w, errfd);
	return 0;
}

/* The tool exited: a queued follow-up turn resumes it, else we finish. */
static void
worker_tool_exited(struct worker *w)
{
	char	*err = NULL, *input;

	follow_drain(w, 1);
	errtail_drain(w);
	if (w->grace_ev != NULL) {
		event_free(w->grace_ev);
		w->grace_ev = NULL;
	}
	tool_stdin_close(w);
	outcome_fold(w);
	if (w->resume_input != NULL && !w->closing &&
	    w->prev_session == NULL) {
		outcome_reason(w, "follow-up input not delivered: %s ended its "
		    "turn without a session id to resume", w->ad->name);
		worker_progress(w, "input", w->reason);
	} else if (w->resume_input != NULL && !w->closing) {
		input = w->resume_input;
		w->resume_input = NULL;
		outcome_next_turn(w);
		strv_clear(&w->argv);
		w->ad->build_argv(&w->spec, w->prev_session, input, &w->argv);
		free(w->argv.v[0]);
		w->argv.v[0] = xstrdup(w->path);
		if (worker_turn_start(w, input, &err) == 0) {
			free(input);
			return;
		}
		outcome_reason(w, "%s", err);
		free(err);
		free(input);
	}
	worker_finish(w, 1);
}

/* Reap: the tool, or orphans of its that we adopted. */
static void
worker_sigchld(evutil_socket_t sig, short ev, void *arg)
{
	struct worker	*w = arg;
	pid_t		 pid;
	int		 st;

	(void)sig;
	(void)ev;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (pid != w->tool_pid)
			continue;
		w->tool_status = st;
		w->tool_waited = 1;
		worker_tool_exited(w);
	}
}

/* SIGTERM (also our parent-death signal): kill everything and leave. */
static void
worker_sigterm(evutil_socket_t sig, short ev, void *arg)
{
	struct worker	*w = arg;

	(void)sig;
	(void)ev;
	w->closing = 1;
	tool_sweep(w);
	event_base_loopbreak(w->base);
}

/* Send STARTED: the evidence that the tool really ran. */
static void
worker_started(struct worker *w)
{
	struct msg	m;
	char		cwd[4096];
	size_t		i;

	msg_init(&m, MSG_STARTED);
	m.u.started.tool_pid = (uint64_t)w->tool_pid;
	for (i = 0; i < w->argv.n; i++)
		strv_push(&m.u.started.argv, w->argv.v[i]);
	if (w->assign.u.assign.cwd != NULL)
		m.u.started.cwd = xstrdup(w->assign.u.assign.cwd);
	else
		m.u.started.cwd = xstrdup(getcwd(cwd, sizeof cwd) ? cwd : "?");
	m.u.started.log_path = xstrdup(w->assign.u.assign.log_path);
	for (i = 0; i < m.u.started.argv.n; i++)
		utf8_sanitize(m.u.started.argv.v[i], strlen(m.u.started.argv.v[i]));
	worker_send(w, &m);
	msg_clear(&m);
}

/*
 * options.env (CCW's envFile, read by the supervisor) goes into our own
 * environment: this process exists for one tool, which inherits it.
 */
static void
worker_env(const json_t *options)
{
	const char	*key;
	json_t		*v;

	json_object_foreach(json_object_get(options, "env"), key, v) {
		if (json_is_string(v) && *key != '\0' &&
		    strchr(key, '=') == NULL)
			setenv(key, json_string_value(v), 1);
	}
}

/*
 * options.resume_session: the first run is already a resumed turn of that
 * session, with the ASSIGN prompt as the follow-up message.
 */
static int
worker_resume_option(struct worker *w, char **err)
{
	const char	*id = adapter_opt(&w->spec, "resume_session");

	if (id == NULL)
		return 0;
	if (w->ad->line == NULL) {
		xasprintf(err, "%s has no sessions to resume", w->ad->name);
		return -1;
	}
	if (!adapter_session_ok(id)) {
		xasprintf(err, "resume_session: not a session id");
		return -1;
	}
	w->prev_session = xstrdup(id);
	return 0;
}

/* ASSIGN: find the tool, open the log, start it. */
static void
worker_assign(struct worker *w)
{
	struct msg_assign	*a = &w->assign.u.assign;
	const char		*bin;
	char			*err = NULL, *names;

	w->t_start = clock_mono_ms();
	if ((w->ad = adapter_find(a->tool)) == NULL) {
		names = adapter_list(0, ", ");
		outcome_reason(w, "unknown tool '%s' (known: %s)", a->tool,
		    names);
		free(names);
		worker_finish(w, 1);
		return;
	}
	w->spec.tool = a->tool;
	w->spec.model = a->model;
	w->spec.command = a->command;
	w->spec.prompt = a->prompt;
	w->spec.options = a->options;
	w->spec.binary = json_string_value(json_object_get(a->options, "path"));
	worker_env(a->options);
	if (w->remote)
		remote_log_path(w);
	bin = w->spec.binary != NULL ? w->spec.binary : w->ad->binary;
	if (a->log_path == NULL) {
		outcome_reason(w, "ASSIGN without a log path");
		worker_finish(w, 1);
		return;
	}
	if (logcap_open(&w->log, a->log_path, logcap_max(a->options),
	    &err) != 0 || follow_open(w, a->log_path, &err) != 0) {
		outcome_reason(w, "cannot open the log %s: %s", a->log_path,
		    err);
		free(err);
		worker_finish(w, 1);
		return;
	}
	if ((w->path = tool_resolve(bin)) == NULL) {
		outcome_reason(w, "tool '%s' not found: no executable '%s' %s",
		    a->tool, bin, strchr(bin, '/') ? "at that path" :
		    "on PATH");
		worker_finish(w, 1);
		return;
	}
	if (worker_resume_option(w, &err) != 0) {
		outcome_reason(w, "%s", err);
		free(err);
		worker_finish(w, 1);
		return;
	}
	if (permsock_open(w, &err) != 0 || wtassign_start(w, &err) != 0) {
		outcome_reason(w, "%s", err);
		free(err);
		worker_finish(w, 1);
		return;
	}
	/* files_changed is what we observe, not what the answer claims. */
	if (w->wt.path == NULL)
		scanfiles_observe(a->cwd != NULL ? a->cwd : ".",
		    &w->git_before);
	w->ad->build_argv(&w->spec, w->prev_session, a->prompt, &w->argv);
	free(w->argv.v[0]);
	w->argv.v[0] = xstrdup(w->path);
	if (worker_turn_start(w, a->prompt, &err) != 0) {
		outcome_reason(w, "%s", err);
		free(err);
		worker_finish(w, 1);
		return;
	}
	worker_started(w);
}

/* INPUT: live on stdin, or queued for a resumed turn, or refused. */
static void
worker_input(struct worker *w, struct msg *m)
{
	struct msg	ack;
	const char	*how = NULL;
	char		*err = NULL;

	msg_init(&ack, MSG_INPUT_ACK);
	ack.u.input_ack.submission_id = m->u.input.submission_id;
	if (w->tool_pid <= 0 || w->tool_waited || w->finished)
		err = xstrdup("the tool is not running");
	else if (w->ad->live_input && w->stdin_fd >= 0) {
		if (m->u.input.interrupt)
			tool_signal(w, SIGINT);
		tool_stdin_write(w, m->u.input.message,
		    strlen(m->u.input.message));
		tool_stdin_write(w, "\n", 1);
		how = "stdin";
	} else if (w->ad->line != NULL) {
		/*
		 * Queued for a resumed turn once this one ends; before the
		 * session id is known too (the turn end tells).  Several
		 * inputs make one follow-up message.
		 */
		adapter_append(&w->resume_input, "\n\n", m->u.input.message);
		if (m->u.input.interrupt && (w->ts.session_id != NULL ||
		    w->prev_session != NULL)) {
			w->we_killed = 1;
			tool_signal(w, SIGINT);
		}
		how = "resume";
	} else
		xasprintf(&err, "%s takes no input while running",
		    w->ad->name);
	ack.u.input_ack.delivery = xstrdup(how != NULL ? how : "none");
	ack.u.input_ack.error = err;
	worker_send(w, &ack);
	msg_clear(&ack);
}

/* CLOSE's grace is over. */
static void
worker_kill_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct worker	*w = arg;

	(void)fd;
	(void)ev;
	tool_sweep(w);
	worker_finish(w, w->tool_pid > 0);
}

/* CLOSE: SIGTERM the group, SIGKILL after the grace. */
static void
worker_close(struct worker *w, uint64_t grace_ms)
{
	if (w->closing)
		return;
	w->closing = 1;
	if (w->tool_pid <= 0 || w->tool_waited) {
		worker_finish(w, 0);
		return;
	}
	w->we_killed = 1;
	tool_signal(w, SIGTERM);
	tool_signal(w, SIGCONT);
	w->kill_ev = worker_timer(w, grace_ms, worker_kill_cb);
}

/* One message from the supervisor. */
static void
worker_on_msg(struct chan *c, struct msg *m, void *arg)
{
	struct worker	*w = arg;

	(void)c;
	w->t_heard = clock_mono_ms();
	switch (m->type) {
	case MSG_PING:
		remote_pong(w, m);
		break;
	case MSG_ASSIGN:
		if (w->assign.type == MSG_ASSIGN)
			break;
		w->assign = *m;
		msg_init(m, MSG_NONE);
		worker_assign(w);
		break;
	case MSG_INPUT:
		worker_input(w, m);
		break;
	case MSG_PERM_REPLY:
		permsock_reply(w, &m->u.perm_reply);
		break;
	case MSG_CLOSE:
		worker_close(w, m->u.close.grace_ms);
		break;
	default:
		break;
	}
}

/* The channel ended: the supervisor went away or spoke garbage. */
static void
worker_on_end(struct chan *c, enum proto_err e, const char *why, void *arg)
{
	struct worker	*w = arg;

	(void)c;
	if (e != PROTO_OK)
		log_warnx("channel: %s", why);
	worker_lost(w);
}

/* The --help text. */
static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: ccw-worker [--stdio [-H LOST_MS]] -R ROLE -I INDEX\n"
	    "       ccw-worker --git VERB < request.json\n"
	    "       ccw-worker --permission-relay SOCKET\n"
	    "       ccw-worker --version | --help\n"
	    "\n"
	    "Drives one agent tool for ccw-supervisor, which starts it with\n"
	    "the protocol channel on descriptor 3, or behind a launcher (ssh,\n"
	    "srun) on stdin and stdout with --stdio; -H: exit when the\n"
	    "supervisor is silent that long.  With --git, the supervisor's\n"
	    "git helper: one JSON request on stdin, one JSON reply on stdout\n"
	    "(worktrees, the merge queue, clean-up, landing; `--git` alone\n"
	    "lists the verbs).  With --permission-relay, the MCP server on\n"
	    "stdin and stdout that claude asks before a tool use (a role's\n"
	    "ask_permissions): each request goes to its worker over SOCKET\n"
	    "and comes back allowed or denied.  See ccw-worker(8).\n");
}

/* Release everything (valgrind wants a clean exit). */
static void
worker_free(struct worker *w)
{
	if (w->chan != NULL)
		chan_free(w->chan);
	if (w->stdin_ev != NULL)
		event_free(w->stdin_ev);
	if (w->stdin_fd >= 0)
		close(w->stdin_fd);
	if (w->stdin_buf != NULL)
		evbuffer_free(w->stdin_buf);
	permsock_close(w);
	follow_close(&w->fol);
	logcap_close(&w->log);
	if (w->sigchld_ev != NULL)
		event_free(w->sigchld_ev);
	if (w->sigterm_ev != NULL)
		event_free(w->sigterm_ev);
	if (w->grace_ev != NULL)
		event_free(w->grace_ev);
	if (w->kill_ev != NULL)
		event_free(w->kill_ev);
	if (w->flush_ev != NULL)
		event_free(w->flush_ev);
	if (w->lost_ev != NULL)
		event_free(w->lost_ev);
	tool_stream_clear(&w->ts);
	strv_clear(&w->argv);
	msg_clear(&w->assign);
	free(w->path);
	free(w->reason);
	free(w->resume_input);
	free(w->prev_session);
	strv_clear(&w->files_acc);
	gitfiles_clear(&w->git_before);
	wtassign_free(w);
	errtail_close(w);
	free(w->role);
	event_base_free(w->base);
}

/* What the command line asked for. */
struct worker_args {
	const char	*role;
	long		 idx;
	long long	 lost;
	int		 remote;
};

/*
 * Parse the command line into wa.  *done: nothing to run, the return is
 * the exit status (--version and --help print and give 0; a usage
 * error 2).
 */
static int
worker_args(int argc, char **argv, struct worker_args *wa, int *done)
{
	char	*end;
	int	 ch;
	static const struct option longopts[] = {
		{ "stdio", no_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 }
	};

	*done = 1;
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("ccw-worker %s (protocol %d)\n", PACKAGE_VERSION,
		    PROTO_VERSION);
		return 0;
	}
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	memset(wa, 0, sizeof *wa);
	wa->idx = -1;
	while ((ch = getopt_long(argc, argv, "R:I:H:", longopts, NULL)) != -1) {
		if (ch == 'R')
			wa->role = optarg;
		else if (ch == 'I') {
			wa->idx = strtol(optarg, &end, 10);
			if (*end != '\0' || wa->idx < 0)
				wa->idx = -1;
		} else if (ch == 'S')
			wa->remote = 1;
		else if (ch == 'H') {
			wa->lost = strtoll(optarg, &end, 10);
			if (*end != '\0' || wa->lost < 0)
				wa->lost = -1;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (wa->role == NULL || wa->idx < 0 || wa->lost < 0 ||
	    optind != argc || (wa->lost > 0 && !wa->remote)) {
		usage(stderr);
		return 2;
	}
	*done = 0;
	return 0;
}

/*
 * The worker's state, its signals and its channel on rfd/wfd: everything
 * before HELLO.
 */
static void
worker_init(struct worker *w, const struct worker_args *wa, int rfd,
    int wfd)
{
	memset(w, 0, sizeof *w);
	w->stdin_fd = -1;
	w->log.fd = w->fol.fd = -1;
	w->err.fd = -1;
	w->role = xstrdup(wa->role);
	w->index = (unsigned)wa->idx;
	w->remote = wa->remote;
	w->lost_ms = (uint64_t)wa->lost;
	msg_init(&w->assign, MSG_NONE);
	if ((w->base = chan_base_new()) == NULL)
		fatalx("cannot create the event loop");
	w->sigchld_ev = evsignal_new(w->base, SIGCHLD, worker_sigchld, w);
	w->sigterm_ev = evsignal_new(w->base, SIGTERM, worker_sigterm, w);
	evsignal_add(w->sigchld_ev, NULL);
	evsignal_add(w->sigterm_ev, NULL);
	evutil_make_socket_nonblocking(rfd);
	w->chan = chan_new_pair(w->base, rfd, wfd, MSG_DIR_TO_WORKER,
	    PROTO_MAX_BODY, worker_on_msg, worker_on_end, w);
	if (w->chan == NULL)
		fatalx("cannot set up the channel");
	remote_watch(w);
}

int
main(int argc, char **argv)
{
	struct worker		*w = &W;
	struct worker_args	 wa;
	struct stat		 sb;
	struct msg		 m;
	int			 rc, done, rfd = 3, wfd = 3;
	char			*err = NULL;

	log_init(argv[0], 0);
	if (argc >= 2 && strcmp(argv[1], "--git") == 0)
		return gitcmd_main(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "--permission-relay") == 0)
		return permrelay_main(argc, argv);
	if ((rc = worker_args(argc, argv, &wa, &done)) != 0 || done)
		return rc;
	if (wa.remote) {
		/* behind a launcher: the channel is our stdin and stdout */
		if (remote_stdio(&rfd, &wfd, &err) != 0) {
			fprintf(stderr, "ccw-worker: %s\n", err);
			free(err);
			return 2;
		}
	} else if (fstat(3, &sb) != 0 || !S_ISSOCK(sb.st_mode)) {
		fprintf(stderr, "ccw-worker: descriptor 3 is not the "
		    "supervisor's channel; run by ccw-supervisor only\n");
		return 2;
	}

	/* Die politely (killing the tool) when the supervisor dies. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1)
		return 1;
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGPIPE, SIG_IGN);
	/* Over `ulimit -f` a write fails with EFBIG instead of killing us. */
	signal(SIGXFSZ, SIG_IGN);
	/* Belt and braces with tool.c's close: no exec inherits the channel. */
	fcntl(rfd, F_SETFD, FD_CLOEXEC);
	fcntl(wfd, F_SETFD, FD_CLOEXEC);
	unsetenv("CLAUDECODE");
	worker_init(w, &wa, rfd, wfd);
	w->argv0 = argv[0];

	msg_init(&m, MSG_HELLO);
	m.u.hello.pid = (uint64_t)getpid();
	m.u.hello.index = (uint64_t)wa.idx;
	m.u.hello.role = w->role;
	m.u.hello.version = (char *)PACKAGE_VERSION;
	worker_send(w, &m);

	event_base_dispatch(w->base);
	tool_sweep(w);
	worker_free(w);
	return 0;
}
