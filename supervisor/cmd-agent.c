/*
 * cmd-agent.c: `ccw-supervisor agent`: one spawn, wait, nudge on timeout,
 * wait again, close, and the result printed as JSON.  Also owns what the
 * agent and control commands share: resolving a role and tool from the
 * configuration into a spawn request, and the state directory.
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

#include "chan.h"
#include "cmdutil.h"
#include "log.h"
#include "sup.h"
#include "xmalloc.h"

#define NUDGE_TEXT	"## TIMEOUT\nPlease converge and output WORKER_RESULT " \
			"with current progress."

struct agent_run {
	struct event_base	*base;
	struct sup		 sup;
	struct verbs		*verbs;
	struct agent		*a;
	uint64_t		 timeout_ms, nudge_ms, grace_ms;
	int			 finished, stopped;
};

static void	agent_run_waited(json_t *, int, void *);

/* The agent is gone: stop the loop. */
static void
agent_run_closed(const char *prev, void *arg)
{
	struct agent_run	*run = arg;

	(void)prev;
	run->finished = 1;
	event_base_loopbreak(run->base);
}

/* Close with the grace period; the close callback ends the run. */
static void
agent_run_close(struct agent_run *run)
{
	char	*err = NULL;

	if (verbs_close(run->verbs, run->a->id, run->grace_ms,
	    agent_run_closed, run, &err) != 0) {
		log_warnx("%s", err);
		free(err);
		agent_run_closed(NULL, run);
	}
}

/* The nudge was delivered (or not): wait nudge_ms either way. */
static void
agent_run_nudged(uint64_t sub, const char *err, void *arg)
{
	struct agent_run	*run = arg;
	char			*werr = NULL;
	char			*ids[1] = { run->a->id };

	(void)sub;
	if (err != NULL)
		log_info("%s: nudge not delivered: %s", run->a->id, err);
	if (agent_final(run->a)) {
		agent_run_closed(NULL, run);
		return;
	}
	if (verbs_wait(run->verbs, ids, 1, run->nudge_ms, 0, agent_run_waited,
	    run, &werr) != 0) {
		log_warnx("%s", werr);
		free(werr);
		agent_run_close(run);
	}
}

/*
 * A wait ended.  Done: finish.  First timeout: nudge.  Second timeout:
 * synthesize the failure and close.
 */
static void
agent_run_waited(json_t *status, int timed_out, void *arg)
{
	struct agent_run	*run = arg;
	char			*err = NULL;

	(void)status;
	if (!timed_out || agent_final(run->a)) {
		agent_run_closed(NULL, run);
		return;
	}
	if (run->a->nudged || run->stopped) {
		run->a->timed_out = !run->stopped;
		agent_run_close(run);
		return;
	}
	run->a->nudged = 1;
	log_info("%s: no result after %llu ms, nudging", run->a->id,
	    (unsigned long long)run->timeout_ms);
	if (verbs_send_input(run->verbs, run->a->id, NUDGE_TEXT, 0,
	    agent_run_nudged, run, &err) != 0) {
		log_info("%s", err);
		free(err);
		agent_run_nudged(0, NULL, run);
	}
}

/* SIGINT/SIGTERM: close the agent now and report it as stopped. */
static void
agent_run_signal(evutil_socket_t sig, short ev, void *arg)
{
	struct agent_run	*run = arg;

	(void)ev;
	log_warnx("signal %d: closing %s", (int)sig, run->a->id);
	run->stopped = 1;
	if (!run->a->closed)
		agent_run_close(run);
}

/* The --help text of the agent command. */
static void
agent_usage(FILE *fp)
{
	fprintf(fp,
"usage: ccw-supervisor agent ROLE [--tool T] [--command CMD] [--model M]\n"
"           [--timeout-ms N] [--nudge-ms N] [--grace-ms N] [--config F]\n"
"           [-C ROOT] [--state-dir DIR] [--loop-id ID] [--json] MESSAGE\n"
"\n"
"Spawn one worker for ROLE (init, develop, debug, validate, complete),\n"
"wait for its result, nudge it once on timeout, close it, and print the\n"
"result as JSON.  MESSAGE goes to the tool's stdin.\n"
"Exit: 0 completed, 1 failed or errored, 2 usage, 4 stopped, 5 timed out.\n");
}

int
cmd_agent(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "tool", required_argument, NULL, 't' },
		{ "command", required_argument, NULL, 'c' },
		{ "model", required_argument, NULL, 'm' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "nudge-ms", required_argument, NULL, 'N' },
		{ "grace-ms", required_argument, NULL, 'G' },
		{ "config", required_argument, NULL, 'f' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "loop-id", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct cmd_opts		 o;
	struct agent_run	 run;
	struct agent_req	 req;
	struct event		*sigint, *sigterm;
	char			*err = NULL, *ids[1];
	json_t			*out;
	int			 ch, compact = 0, rc;

	cmd_opts_init(&o);
	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1) {
		if (ch == 'j')
			compact = 1;
		else if (ch == 'h') {
			agent_usage(stdout);
			return EXIT_OK;
		} else if (cmd_opts_set(&o, ch, optarg) != 0) {
			agent_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "ccw-supervisor agent: need ROLE and MESSAGE\n");
		agent_usage(stderr);
		return EXIT_USAGE;
	}
	o.role = argv[optind];
	o.message = argv[optind + 1];
	if (cmd_opts_resolve(&o, &req, &err) != 0) {
		fprintf(stderr, "ccw-supervisor agent: %s\n", err);
		free(err);
		cmd_opts_free(&o);
		return EXIT_USAGE;
	}

	memset(&run, 0, sizeof run);
	run.base = chan_base_new();
	if (run.base == NULL)
		fatalx("cannot create the event loop");
	if (sup_init(&run.sup, run.base, o.state_dir, o.loop_id, &err) != 0)
		fatalx("%s", err);
	if (cmd_mkdirs(run.sup.state_dir, run.sup.loop_id, &err) != 0) {
		fprintf(stderr, "ccw-supervisor agent: %s\n", err);
		free(err);
		return EXIT_USAGE;
	}
	run.verbs = verbs_new(&run.sup);
	run.timeout_ms = o.timeout_ms;
	run.nudge_ms = o.nudge_ms;
	run.grace_ms = o.grace_ms;
	sigint = evsignal_new(run.base, SIGINT, agent_run_signal, &run);
	sigterm = evsignal_new(run.base, SIGTERM, agent_run_signal, &run);
	evsignal_add(sigint, NULL);
	evsignal_add(sigterm, NULL);

	run.a = agent_spawn(&run.sup, &req);
	ids[0] = run.a->id;
	if (verbs_wait(run.verbs, ids, 1, run.timeout_ms, 0, agent_run_waited,
	    &run, &err) != 0)
		fatalx("%s", err);
	if (!run.finished)
		event_base_dispatch(run.base);

	out = report_agent(run.a);
	cmd_print_json(out, compact);
	json_decref(out);
	if (run.stopped)
		rc = EXIT_STOPPED;
	else if (run.a->timed_out)
		rc = EXIT_TIMEOUT;
	else if (run.a->status == AS_COMPLETED &&
	    strcmp(run.a->result.u.result.status, "failed") != 0)
		rc = EXIT_OK;
	else
		rc = EXIT_FAILED;

	event_free(sigint);
	event_free(sigterm);
	verbs_free(run.verbs);
	sup_free(&run.sup);
	event_base_free(run.base);
	json_decref(req.options);
	cmd_opts_free(&o);
	return rc;
}
