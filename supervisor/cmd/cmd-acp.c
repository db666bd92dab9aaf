/*
 * cmd-acp.c: `ccw-supervisor acp`: the ACP agent (supervisor/api/acp.c)
 * on stdio: newline-delimited JSON-RPC in on stdin, out on stdout (the
 * protocol only; logs go to stderr); one host and one verb table per
 * project root a session names (roots.c); end of input or a signal
 * stops every loop and exits once every worker is gone.
 */
#include <config.h>

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "acp.h"
#include "api.h"
#include "chan.h"
#include "cmdutil.h"
#include "control.h"
#include "host.h"
#include "linein.h"
#include "log.h"
#include "roots.h"
#include "sup.h"
#include "xmalloc.h"

/* A root's verb table: its own agent table (spawn is not offered). */
struct acp_root {
	struct sup	 sup;
	struct api	*api;
};

struct acp_cmd {
	struct event_base	*base;
	struct roots		 roots;
	struct acp_root		 ar[ROOTS_MAX];	/* roots.r[i]'s */
	struct plan_overrides	 over;		/* --grace-ms */
	uint64_t		 grace_ms;
	struct acp		*acp;
	struct linein		*in;
	struct event		*sigs[CMD_NSIG];
	struct event		*check;		/* maybe_exit, on the next turn */
	size_t			 max_sessions;	/* --max-sessions */
	int			 eof;
	int			 code;
	char			 why[64];	/* a signal's, for the loops */
};

/* After EOF (or a signal): out once no loop runs and no verb is pending. */
static void
acp_cmd_check(evutil_socket_t fd, short ev, void *arg)
{
	struct acp_cmd	*c = arg;
	size_t		 i;

	(void)fd;
	(void)ev;
	if (!c->eof || acp_running(c->acp) > 0)
		return;
	for (i = 0; i < c->roots.n; i++)
		if (c->ar[i].api != NULL && !api_idle(c->ar[i].api))
			return;
	event_base_loopbreak(c->base);
}

/*
 * Something ended (a turn, a loop, a reply): checked on the next turn,
 * once the verb table has let go of the call that replied.
 */
static void
acp_cmd_maybe_exit(void *arg)
{
	struct acp_cmd	*c = arg;

	if (c->eof)
		event_active(c->check, EV_TIMEOUT, 0);
}

/* One message: a line on stdout, flushed (a client reads it live). */
static void
acp_cmd_write(void *arg, const json_t *body)
{
	(void)arg;
	cmd_print_json((json_t *)body, 1);
}

/*
 * The project of a session's cwd: its root's host (its configuration,
 * its loop directory as run -C picks it) and its verb table.
 */
static int
acp_cmd_project(void *arg, const char *cwd, struct acp_project *p,
    char **err)
{
	struct acp_cmd	*c = arg;
	struct acp_root	*ar;
	struct api_host	 ah;
	struct root	*r;

	if ((r = roots_get(&c->roots, cwd, NULL, err)) == NULL)
		return -1;
	ar = &c->ar[r - c->roots.r];
	if (ar->api == NULL) {
		if (sup_init(&ar->sup, c->base, host_children(r->host),
		    r->o.state_dir, NULL, err) != 0)
			return -1;
		memset(&ah, 0, sizeof ah);
		ah.sup = &ar->sup;
		ah.state_dir = r->o.state_dir;
		ah.grace_ms = c->grace_ms;
		ar->api = api_new(&ah);
	}
	p->host = r->host;
	p->api = ar->api;
	p->wf = r->o.cfg.wf;
	return 0;
}

/* One line of stdin. */
static void
acp_cmd_line(void *arg, unsigned long lineno, const char *line, size_t len)
{
	struct acp_cmd	*c = arg;

	(void)lineno;
	if (line == NULL) {
		log_warnx("acp: line %lu is over %u bytes: ignored", lineno,
		    LINEIN_MAX);
		return;
	}
	acp_line(c->acp, line, len);
}

/*
 * The input is over: every loop stopped (the kill ladder), a loop verb
 * waiting for another program's lock gives up; out once they are gone.
 * What is in flight is bounded: at most --max-sessions opens, each a
 * file's commit.
 */
static void
acp_cmd_eof(void *arg)
{
	struct acp_cmd	*c = arg;
	size_t		 i;

	c->eof = 1;
	linein_stop(c->in);
	acp_stop_all(c->acp, c->why[0] != '\0' ? c->why :
	    "the ACP client went away (end of acp's input)");
	for (i = 0; i < c->roots.n; i++)
		if (c->ar[i].api != NULL)
			api_close_all(c->ar[i].api, c->grace_ms);
	acp_cmd_maybe_exit(c);
}

/* SIGTERM, SIGINT, SIGHUP: as the end of input, then exit 4. */
static void
acp_cmd_signal(evutil_socket_t sig, short ev, void *arg)
{
	struct acp_cmd	*c = arg;

	(void)ev;
	log_warnx("signal %d: stopping every loop", (int)sig);
	c->code = EXIT_STOPPED;
	cmd_signal_why(c->why, sizeof c->why, "acp", (int)sig);
	acp_cmd_eof(c);
}

/* The --help text. */
static void
acp_usage(FILE *fp)
{
	fprintf(fp,
"usage: ccw-supervisor acp [--config F] [--grace-ms N] [--max-sessions N]\n"
"\n"
"An Agent Client Protocol agent (protocol version 1) on stdin/stdout,\n"
"for editors such as Zed: a session is a loop in the session's cwd\n"
"(created by session/new, reopened by session/load or session/resume),\n"
"a prompt runs it with the prompt as the task; plan, one tool call per\n"
"worker and usage come as session/update; session/cancel stops it; a\n"
"worker's questions become session/request_permission.  Logs go to\n"
"stderr.  End of input stops every loop and exits 0 once every worker\n"
"is gone; a signal does the same and exits 4.\n"
"\n"
"  --config F        the configuration of every project (default: each\n"
"                    project's .loop/config.json, then the user's)\n"
"  --grace-ms N      the grace of every worker's close (TERM, then KILL)\n"
"  --max-sessions N  sessions open at once (default %d); beyond, a\n"
"                    session/new, load or resume gets error %d\n"
"\n"
"See ccw-supervisor(1).\n", ACP_SESSIONS_MAX, ACP_ERROR_SESSIONS);
}

/* The options: 0, or an exit code (*done: --help printed). */
static int
acp_options(struct acp_cmd *c, int argc, char **argv, int *done)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "grace-ms", required_argument, NULL, 'G' },
		{ "max-sessions", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct cmd_opts	 o;
	char		*end;
	int		 ch;

	optind = 1;
	cmd_opts_init(&o);
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (ch == 'h') {
			acp_usage(stdout);
			*done = 1;
			return EXIT_OK;
		}
		if (ch == 'm') {
			c->max_sessions = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end != '\0' ||
			    c->max_sessions == 0 || c->max_sessions > 1000000) {
				fprintf(stderr, "ccw-supervisor acp: "
				    "--max-sessions wants a number from 1 to "
				    "1000000\n");
				cmd_opts_free(&o);
				return EXIT_USAGE;
			}
			continue;
		}
		/* cmd_opts checks the number as every command does */
		if ((ch != 'f' && ch != 'G') || cmd_opts_set(&o, ch,
		    optarg) != 0) {
			acp_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		acp_usage(stderr);
		return EXIT_USAGE;
	}
	c->roots.config_path = o.config_path;
	c->grace_ms = o.have_grace ? o.grace_ms : API_GRACE_MS;
	cmd_opts_overrides(&o, &c->over);
	c->roots.over = &c->over;
	cmd_opts_free(&o);
	return EXIT_OK;
}

/* Everything made, in reverse: the verb tables before their hosts. */
static void
acp_cmd_free(struct acp_cmd *c)
{
	size_t	i;

	for (i = 0; i < CMD_NSIG; i++)
		if (c->sigs[i] != NULL)
			event_free(c->sigs[i]);
	linein_free(c->in);
	if (c->check != NULL)
		event_free(c->check);
	acp_free(c->acp);
	for (i = 0; i < c->roots.n; i++)
		if (c->ar[i].api != NULL) {
			api_free(c->ar[i].api);
			sup_free(&c->ar[i].sup);
		}
	roots_free(&c->roots);
	event_base_free(c->base);
}

int
cmd_acp(int argc, char **argv)
{
	struct acp_cmd	 c;
	struct acp_cfg	 cfg;
	int		 rc, done = 0;

	memset(&c, 0, sizeof c);
	if ((rc = acp_options(&c, argc, argv, &done)) != EXIT_OK || done)
		return rc;
	signal(SIGPIPE, SIG_IGN);
	if ((c.base = chan_base_new()) == NULL)
		fatalx("cannot create the event loop");
	c.roots.base = c.base;
	memset(&cfg, 0, sizeof cfg);
	cfg.base = c.base;
	cfg.project = acp_cmd_project;
	cfg.write = acp_cmd_write;
	cfg.idle = acp_cmd_maybe_exit;
	cfg.arg = &c;
	cfg.max_sessions = c.max_sessions;
	c.acp = acp_new(&cfg);
	if ((c.check = event_new(c.base, -1, 0, acp_cmd_check, &c)) == NULL)
		fatalx("acp: cannot create an event");
	cmd_signals(c.base, c.sigs, acp_cmd_signal, &c);
	if ((c.in = linein_new(c.base, 0, acp_cmd_line, acp_cmd_eof,
	    &c)) == NULL)
		fatalx("acp: cannot read stdin");
	event_base_dispatch(c.base);
	acp_cmd_free(&c);
	return c.code;
}
