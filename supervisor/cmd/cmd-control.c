/*
 * cmd-control.c: `ccw-supervisor control`: the api's verb table as JSON
 * lines on stdin and stdout.  Requests run concurrently; each reply
 * carries its request's id.  End of input closes every agent and waits
 * for the loops loop_open started to end (exit 0); a SIGTERM, SIGINT or
 * SIGHUP closes every agent, stops every loop and exits 4.  With
 * --connect PATH it is instead the client of a control socket
 * (control-connect.c).
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "api.h"
#include "chan.h"
#include "cmdutil.h"
#include "control.h"
#include "host.h"
#include "linein.h"
#include "log.h"
#include "retire.h"
#include "sup.h"
#include "xmalloc.h"

/*
 * After EOF (or a signal), stop once nothing is alive, running or
 * pending; a front end on the session (mcp) asks after each reply.
 */
void
control_maybe_exit(struct control *c)
{
	if (c->eof && c->sup.nlive == 0 && host_nloops(c->host) == 0 &&
	    api_idle(c->api))
		event_base_loopbreak(c->base);
}

/* A loop loop_open started ended: maybe that was the last thing after EOF. */
static void
control_loop_end(void *arg, const char *id, int code)
{
	struct control	*c = arg;

	log_info("loop %s ended: exit %d", id, code);
	control_maybe_exit(c);
}

/*
 * The api's own git run ended (a spawn group's clean-up at the end of
 * input): maybe that was the last thing.
 */
static void
control_settled(void *arg)
{
	control_maybe_exit(arg);
}

/* One reply line, then maybe the end. */
static void
control_replied(json_t *body, void *arg)
{
	struct control	*c = arg;

	cmd_print_json(body, 1);
	control_maybe_exit(c);
}

/* An error of our own (a line that is no request): printed, released. */
static void
control_error(struct control *c, json_t *body)
{
	control_replied(body, c);
	json_decref(body);
}

/* The api's spawn plan: the options' tool, an id in control's loop. */
static int
control_plan(void *arg, const struct api_spawn *sp, struct agent_req *ar,
    char **err)
{
	struct control	*c = arg;

	return cmd_plan_spawn(&c->plan, &c->guard, &c->sup, sp, ar, err);
}

/* One request line: parse errors are ours (with the line), the rest the api's. */
static void
control_line(void *arg, unsigned long lineno, const char *line, size_t len)
{
	struct control	*c = arg;
	json_t		*req, *err;

	if ((req = linein_request(lineno, line, len, &err)) == NULL) {
		if (err != NULL)
			control_error(c, err);
		return;
	}
	api_call(c->api, req, control_replied, c);
	json_decref(req);
}

/* Input is over (EOF or a signal): close every agent still open. */
static void
control_eof(void *arg)
{
	struct control	*c = arg;

	c->eof = 1;
	if (c->in != NULL)
		linein_stop(c->in);
	api_close_all(c->api, c->grace_ms);
	control_maybe_exit(c);
}

/*
 * No more requests, every agent closed, every loop stopped (left
 * running, why in its file: host_loop_interrupt), exit 4; the base
 * breaks once all is over (a signal's work, the harness's too).
 */
void
control_stop(struct control *c, const char *why)
{
	if (c->eof && c->exit_code == EXIT_STOPPED)
		return;
	c->exit_code = EXIT_STOPPED;
	host_stop_all(c->host, why);
	if (!c->eof)
		control_eof(c);
	else
		api_close_all(c->api, c->grace_ms);
}

/* SIGTERM, SIGINT, SIGHUP: control_stop. */
static void
control_signal(evutil_socket_t sig, short ev, void *arg)
{
	struct control	*c = arg;
	char		 why[64];

	(void)ev;
	if (!(c->eof && c->exit_code == EXIT_STOPPED))
		log_warnx("signal %d: closing every agent, stopping every loop",
		    (int)sig);
	cmd_signal_why(why, sizeof why, "control", (int)sig);
	control_stop(c, why);
}

/*
 * An agent finished: older finished ones may retire (config
 * keep_agents), and maybe that was the last one after EOF.
 */
static void
control_on_done(struct agent *a, void *arg)
{
	struct control	*c = arg;

	(void)a;
	retire_soon(c->retire);
	control_maybe_exit(c);
}

/* The --help text of the control command. */
static void
control_usage(FILE *fp)
{
	fprintf(fp,
"usage: ccw-supervisor control [--config F] [-C ROOT] [--state-dir DIR]\n"
"           [--loop-id ID] [--grace-ms N]\n"
"           [--launcher WORDS [--remote-worker PATH]]\n"
"       ccw-supervisor control --connect PATH\n"
"\n"
"Read one JSON request per line on stdin, answer one JSON line each on\n"
"stdout.  Verbs: %s.\n"
"loop_open with \"start\": true runs the loop here.  See\n"
"ccw-supervisor(1).  End of input closes every agent and waits for the\n"
"loops started here; SIGTERM closes every agent, stops every loop and\n"
"exits 4.\n"
"\n"
"--connect PATH: relay the lines to the control socket at PATH (a\n"
"server's) and its replies to stdout; also {\"verb\": \"subscribe\",\n"
"\"after\": SEQ} (its events as {\"event\": TYPE, \"seq\": N, \"data\": {..}}\n"
"lines until the server closes) and {\"verb\": \"sock_stats\"}.  End of\n"
"input waits for the replies; the agents stay the server's.\n",
	    api_verb_names);
}

/*
 * Parse the command line and load the configuration: 0, or an exit
 * code.  --connect (*connect) takes no other option: the server has
 * the configuration.
 */
static int
control_options(struct cmd_opts *o, int argc, char **argv, int *done,
    const char **connect)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "loop-id", required_argument, NULL, 'l' },
		{ "grace-ms", required_argument, NULL, 'G' },
		CMD_LAUNCH_LONGOPTS,
		{ "connect", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char	*err = NULL;
	int	 ch, nopts = 0;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1) {
		if (ch == 'h') {
			control_usage(stdout);
			*done = 1;
			return EXIT_OK;
		}
		if (ch == 'S') {
			*connect = optarg;
			continue;
		}
		nopts++;
		if (cmd_opts_set(o, ch, optarg) != 0) {
			control_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc || (*connect != NULL && nopts > 0)) {
		if (*connect != NULL && nopts > 0)
			fprintf(stderr, "ccw-supervisor control: --connect "
			    "takes no other option\n");
		control_usage(stderr);
		return EXIT_USAGE;
	}
	if (*connect == NULL && cmd_opts_load(o, &err) != 0) {
		fprintf(stderr, "ccw-supervisor control: %s\n", err);
		free(err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/*
 * A session without its input: the base, the agent table, the run lock,
 * the host of loops and the api on them (tests/sock-serve.c mounts a
 * control socket on one).  EXIT_OK, or an exit code with the reason
 * printed.
 */
int
control_open(struct control *c, struct cmd_opts *o)
{
	struct api_host	 host;
	struct host_cfg	 hc;
	char		*err = NULL;
	int		 rc;

	memset(c, 0, sizeof *c);
	cmd_plan_base(o, &c->plan);
	c->grace_ms = o->have_grace ? o->grace_ms : API_GRACE_MS;
	if ((c->base = chan_base_new()) == NULL)
		fatalx("cannot create the event loop");
	if (sup_init(&c->sup, c->base, NULL, o->state_dir, o->loop_id,
	    &err) != 0)
		fatalx("%s", err);
	/*
	 * one driver per loop, held until we exit: a named loop's at once,
	 * our own loop's at the first spawn (nothing made for no loop)
	 */
	if (o->loop_id != NULL &&
	    (rc = cmd_guard_open(&c->guard, &c->sup, &err)) != 0) {
		fprintf(stderr, "ccw-supervisor control: %s\n", err);
		free(err);
		loopguard_close(&c->guard);
		sup_free(&c->sup);
		event_base_free(c->base);
		return err_code_exit(rc > 0 ? ERR_BUSY : ERR_INVALID);
	}
	memset(&hc, 0, sizeof hc);
	hc.config = &o->cfg;
	hc.state_dir = c->sup.state_dir;
	hc.root = o->cwd;
	hc.children = c->sup.children;	/* the process's one reaper */
	cmd_opts_overrides(o, &hc.over);
	if ((c->host = host_new(c->base, &hc, &err)) == NULL)
		fatalx("control: %s", err);
	memset(&host, 0, sizeof host);
	host.loops = c->host;
	host.loop_end = control_loop_end;
	host.loop_end_arg = c;
	host.settled = control_settled;
	host.settled_arg = c;
	host.sup = &c->sup;
	host.state_dir = c->sup.state_dir;
	host.root = o->cwd;
	host.grace_ms = c->grace_ms;
	host.plan = control_plan;
	host.plan_arg = c;
	c->api = api_new(&host);
	c->retire = cmd_retire_new(o, &c->sup);
	c->sup.done_extra = control_on_done;
	c->sup.done_extra_arg = c;
	return EXIT_OK;
}

/* Everything control_open made; the api may have been freed already. */
void
control_close(struct control *c)
{
	api_free(c->api);
	host_free(c->host);	/* before the reaper it borrows (sup's) */
	retire_free(c->retire);
	sup_free(&c->sup);
	loopguard_close(&c->guard);
	event_base_free(c->base);
}

int
cmd_control(int argc, char **argv)
{
	struct cmd_opts	 o;
	struct control	 c;
	const char	*connect = NULL;
	int		 rc, done = 0, i;

	cmd_opts_init(&o);
	if ((rc = control_options(&o, argc, argv, &done, &connect)) !=
	    EXIT_OK || done) {
		cmd_opts_free(&o);
		return rc;
	}
	if (connect != NULL) {
		cmd_opts_free(&o);
		return control_connect(connect);
	}
	if ((rc = control_open(&c, &o)) != EXIT_OK) {
		cmd_opts_free(&o);
		return rc;
	}
	cmd_signals(c.base, c.sigs, control_signal, &c);
	if ((c.in = linein_new(c.base, 0, control_line, control_eof,
	    &c)) == NULL)
		fatalx("control: cannot read stdin");
	event_base_dispatch(c.base);

	for (i = 0; i < CMD_NSIG; i++)
		event_free(c.sigs[i]);
	linein_free(c.in);
	control_close(&c);
	cmd_opts_free(&o);
	return c.exit_code;
}
