/*
 * cmd-agent.c: `ccw-supervisor agent`: one spawn, wait, nudge on timeout,
 * wait again, close, and the result printed as JSON.  The spawn and its
 * deadlines are the engine's plan (plan_spawn) of the role under the
 * command line's overrides.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "adapter.h"
#include "chan.h"
#include "cmdutil.h"
#include "log.h"
#include "loop.h"
#include "sigfd.h"
#include "sup.h"
#include "xmalloc.h"

struct agent_run {
	struct event_base	*base;
	struct sup		 sup;
	struct loop_guard	 guard;		/* the run lock, the log */
	struct verbs		*verbs;
	struct agent		*a;
	struct ladder		*ladder;
	uint64_t		 grace_ms;
	int			 finished, stopped;
};

/* The agent is gone (result, timeout or our close): stop the loop. */
static void
agent_run_done(struct agent *a, void *arg)
{
	struct agent_run	*run = arg;

	(void)a;
	run->finished = 1;
	event_base_loopbreak(run->base);
}

/* SIGINT/SIGTERM: close the agent now and report it as stopped. */
static void
agent_run_signal(evutil_socket_t sig, short ev, void *arg)
{
	struct agent_run	*run = arg;

	(void)ev;
	log_warnx("signal %d: closing %s", (int)sig, run->a->id);
	run->stopped = 1;
	ladder_close(run->ladder, run->grace_ms);
}

/* The --help text of the agent command. */
static void
agent_usage(FILE *fp)
{
	fprintf(fp,
"usage: ccw-supervisor agent ROLE [--tool T] [--command CMD] [--model M]\n"
"           [--timeout-ms N] [--nudge-ms N] [--grace-ms N] [--idle-ms N]\n"
"           [--log-max BYTES] [--config F] [-C ROOT] [--state-dir DIR]\n"
"           [--loop-id ID] [--json] [--raw]\n"
"           [--launcher WORDS [--remote-worker PATH]] MESSAGE\n"
"\n"
"Spawn one worker for ROLE (init, develop, debug, validate, complete),\n"
"wait for its result, nudge it once on timeout, close it, and print the\n"
"result as JSON.  MESSAGE is the tool's prompt, followed by the result\n"
"contract (the WORKER_RESULT block to end with) unless --raw is given or\n"
"the tool is bash.  --idle-ms: a worker silent that long counts as timed\n"
"out (nudged, then closed).  --log-max: the worker's log cap (K, M or G;\n"
"0: none; default 64M): past it the log keeps its head, a line counting\n"
"the bytes dropped, and the latest output.  --launcher: start the worker\n"
"on another host through ssh or srun (see LAUNCHERS in\n"
"ccw-supervisor(1)).\n"
"Exit: 0 completed, 1 failed or errored, 2 usage, 4 stopped, 5 timed out.\n");
}

/*
 * The command line into o (ROLE and MESSAGE too), --json and --raw:
 * EXIT_OK, or the exit code with the usage said; *done after --help.
 */
static int
agent_options(struct cmd_opts *o, int argc, char **argv, int *compact,
    int *raw, int *done)
{
	static const struct option longopts[] = {
		{ "tool", required_argument, NULL, 't' },
		{ "command", required_argument, NULL, 'c' },
		{ "model", required_argument, NULL, 'm' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "nudge-ms", required_argument, NULL, 'N' },
		{ "grace-ms", required_argument, NULL, 'G' },
		{ "idle-ms", required_argument, NULL, 'i' },
		CMD_LOG_MAX_LONGOPT,
		CMD_LAUNCH_LONGOPTS,
		{ "config", required_argument, NULL, 'f' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "loop-id", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "raw", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int	ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1) {
		if (ch == 'j')
			*compact = 1;
		else if (ch == 'r')
			*raw = 1;
		else if (ch == 'h') {
			agent_usage(stdout);
			*done = 1;
			return EXIT_OK;
		} else if (cmd_opts_set(o, ch, optarg) != 0) {
			agent_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "ccw-supervisor agent: need ROLE and MESSAGE\n");
		agent_usage(stderr);
		return EXIT_USAGE;
	}
	o->role = argv[optind];
	o->message = argv[optind + 1];
	return EXIT_OK;
}

/* How the agent ended, as the command's exit code. */
static int
agent_run_status(const struct agent_run *run)
{
	if (run->stopped)
		return EXIT_STOPPED;
	if (run->a->timed_out)
		return EXIT_TIMEOUT;
	if (run->a->status == AS_COMPLETED &&
	    strcmp(run->a->result.u.result.status, "failed") != 0)
		return EXIT_OK;
	return EXIT_FAILED;
}

/*
 * The planned agent run to its end in o's loop (the run lock held, its
 * log fresh), the deadlines' ladder climbed, a signal closing it; the
 * report printed.  The exit code.
 */
static int
agent_run_req(struct agent_run *run, const struct cmd_opts *o,
    const struct agent_req *req, const struct plan_deadlines *dl,
    int compact)
{
	struct event	*sigint, *sigterm;
	json_t		*out;
	char		*err = NULL;
	int		 rc;

	run->base = chan_base_new();
	if (run->base == NULL)
		fatalx("cannot create the event loop");
	if (sup_init(&run->sup, run->base, NULL, o->state_dir, o->loop_id,
	    &err) != 0)
		fatalx("%s", err);
	/* one driver per loop; a fresh agent-N.log above every earlier id */
	if ((rc = loopguard_open(&run->guard, run->sup.state_dir,
	    run->sup.loop_id, &err)) != 0 ||
	    loopguard_workers(&run->guard, NULL, &err) != 0 ||
	    loopguard_reserve(&run->guard, &run->sup, &err) != 0) {
		fprintf(stderr, "ccw-supervisor agent: %s\n", err);
		free(err);
		return err_code_exit(rc > 0 ? ERR_BUSY : ERR_INVALID);
	}
	run->verbs = verbs_new(&run->sup);
	run->grace_ms = dl->grace_ms;
	sigint = evsignal_new(run->base, SIGINT, agent_run_signal, run);
	sigterm = evsignal_new(run->base, SIGTERM, agent_run_signal, run);
	evsignal_add(sigint, NULL);
	evsignal_add(sigterm, NULL);
	/* main.c deferred these signals: one sent meanwhile stops us now. */
	sigfd_release();

	run->a = agent_spawn(&run->sup, req);
	run->ladder = ladder_start(run->verbs, run->a, dl->timeout_ms,
	    dl->nudge_ms, dl->grace_ms, agent_run_done, run);
	if (!run->finished)
		event_base_dispatch(run->base);

	out = report_agent(run->a);
	cmd_print_json(out, compact);
	json_decref(out);
	rc = agent_run_status(run);
	event_free(sigint);
	event_free(sigterm);
	verbs_free(run->verbs);
	ladder_free(run->ladder);
	return rc;
}

int
cmd_agent(int argc, char **argv)
{
	struct cmd_opts		 o;
	struct agent_run	 run;
	struct agent_req	 req;
	struct plan_overrides	 over;
	struct plan_deadlines	 dl;
	char			*err = NULL, *msg = NULL;
	int			 compact = 0, raw = 0, done = 0, rc;

	cmd_opts_init(&o);
	if ((rc = agent_options(&o, argc, argv, &compact, &raw, &done)) !=
	    EXIT_OK || done) {
		cmd_opts_free(&o);
		return rc;
	}
	cmd_opts_overrides(&o, &over);
	if (cmd_opts_load(&o, &err) != 0 || plan_spawn(&o.cfg, o.cwd, o.role,
	    &over, o.message, &req, &dl, &err) != 0) {
		fprintf(stderr, "ccw-supervisor agent: %s\n", err);
		free(err);
		cmd_opts_free(&o);
		return EXIT_USAGE;
	}
	/* a model answers in the block the worker reads only when asked to */
	if (!raw && adapter_is_agent(req.tool)) {
		msg = prompt_with_contract(o.role, o.message);
		req.prompt = msg;
	}
	memset(&run, 0, sizeof run);
	rc = agent_run_req(&run, &o, &req, &dl, compact);
	sup_free(&run.sup);
	loopguard_close(&run.guard);
	event_base_free(run.base);
	json_decref(req.options);
	free(msg);
	cmd_opts_free(&o);
	return rc;
}
