/*
 * cmd-mcp.c: `ccw-supervisor mcp`: an MCP server on stdio (one JSON-RPC
 * message a line; stdout carries nothing else) over a control session
 * (control_open).  End of input closes every agent and stops every loop
 * (exit 0); SIGTERM, SIGINT or SIGHUP does the same and exits 4.
 */
#include <config.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "api.h"
#include "cmdutil.h"
#include "control.h"
#include "host.h"
#include "jsonrpc.h"
#include "linein.h"
#include "log.h"
#include "mcp.h"

/* The session and what it runs on. */
struct mcp_stdio {
	struct control	 c;
	struct mcp	*mcp;
};

/* Everything the session sends is one line on stdout. */
static void
mcp_stdio_send(void *arg, const json_t *body, const json_t *about)
{
	(void)arg;
	(void)about;
	cmd_print_json((json_t *)body, 1);
}

/* A tool's verb replied: after end of input that may be the last thing. */
static void
mcp_stdio_settled(void *arg)
{
	struct mcp_stdio	*ms = arg;

	control_maybe_exit(&ms->c);
}

/* One line: a message for the session, or an error reply of our own. */
static void
mcp_stdio_line(void *arg, unsigned long lineno, const char *line, size_t len)
{
	struct mcp_stdio	*ms = arg;
	json_t			*v, *err;

	if (line == NULL) {
		err = jsonrpc_error_new(NULL, JSONRPC_INVALID_REQUEST, "line "
		    "%lu: longer than %u bytes, ignored", lineno, LINEIN_MAX);
		cmd_print_json(err, 1);
		json_decref(err);
		return;
	}
	if ((v = jsonrpc_parse(line, len, &err)) == NULL) {
		if (err != NULL)
			cmd_print_json(err, 1);
		json_decref(err);
		return;
	}
	mcp_message(ms->mcp, v);
	json_decref(v);
}

/*
 * The client went away: nobody follows what it started, so every agent
 * is closed and every loop stopped, as on a signal, but the exit is 0.
 */
static void
mcp_stdio_eof(void *arg)
{
	struct mcp_stdio	*ms = arg;

	log_info("mcp: end of input: closing every agent, stopping every "
	    "loop");
	control_stop(&ms->c, "the MCP client went away (end of mcp's input)");
	ms->c.exit_code = EXIT_OK;
}

/* SIGTERM, SIGINT, SIGHUP: the same, exit 4. */
static void
mcp_stdio_signal(evutil_socket_t sig, short ev, void *arg)
{
	struct mcp_stdio	*ms = arg;
	char			 why[64];

	(void)ev;
	log_warnx("signal %d: closing every agent, stopping every loop",
	    (int)sig);
	cmd_signal_why(why, sizeof why, "mcp", (int)sig);
	control_stop(&ms->c, why);	/* after end of input too: exit 4 */
}

/* The --help text of the mcp command. */
static void
mcp_usage(FILE *fp)
{
	fprintf(fp,
"usage: ccw-supervisor mcp [--config F] [-C ROOT] [--state-dir DIR]\n"
"           [--grace-ms N] [--launcher WORDS [--remote-worker PATH]]\n"
"\n"
"An MCP server on stdin and stdout (newline-delimited JSON-RPC 2.0) for\n"
"the project at ROOT.  Tools: spawn_agent, wait_agent, send_input,\n"
"close_agent, agent_result, list_agents, loop_start, loop_status,\n"
"loop_control.  See ccw-supervisor(1).  End of input closes every agent\n"
"and stops every loop (exit 0); SIGTERM does the same and exits 4.\n");
}

/* Parse the command line and load the configuration: 0, or an exit code. */
static int
mcp_options(struct cmd_opts *o, int argc, char **argv, int *done)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "grace-ms", required_argument, NULL, 'G' },
		CMD_LAUNCH_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char	*err = NULL;
	int	 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1) {
		if (ch == 'h') {
			mcp_usage(stdout);
			*done = 1;
			return EXIT_OK;
		}
		if (cmd_opts_set(o, ch, optarg) != 0) {
			mcp_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		mcp_usage(stderr);
		return EXIT_USAGE;
	}
	if (cmd_opts_load(o, &err) != 0) {
		fprintf(stderr, "ccw-supervisor mcp: %s\n", err);
		free(err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int
cmd_mcp(int argc, char **argv)
{
	struct cmd_opts		 o;
	struct mcp_stdio	 ms;
	struct mcp_cfg		 cfg;
	int			 rc, done = 0, i;

	cmd_opts_init(&o);
	if ((rc = mcp_options(&o, argc, argv, &done)) != EXIT_OK || done) {
		cmd_opts_free(&o);
		return rc;
	}
	if ((rc = control_open(&ms.c, &o)) != EXIT_OK) {
		cmd_opts_free(&o);
		return rc;
	}
	/* the agents' PROGRESS on the bus: a wait's progress notifications */
	ms.c.sup.progress = mcp_agent_progress;
	ms.c.sup.progress_arg = host_bus(ms.c.host);
	memset(&cfg, 0, sizeof cfg);
	cfg.api = ms.c.api;
	cfg.bus = host_bus(ms.c.host);
	cfg.send = mcp_stdio_send;
	cfg.arg = &ms;
	cfg.settled = mcp_stdio_settled;
	ms.mcp = mcp_new(&cfg);
	cmd_signals(ms.c.base, ms.c.sigs, mcp_stdio_signal, &ms);
	if ((ms.c.in = linein_new(ms.c.base, 0, mcp_stdio_line, mcp_stdio_eof,
	    &ms)) == NULL)
		fatalx("mcp: cannot read stdin");
	event_base_dispatch(ms.c.base);

	for (i = 0; i < CMD_NSIG; i++)
		event_free(ms.c.sigs[i]);
	linein_free(ms.c.in);
	mcp_free(ms.mcp);
	control_close(&ms.c);
	cmd_opts_free(&o);
	return ms.c.exit_code;
}
