/*
 * cmd-control.c: `ccw-supervisor control`: the api's verb table as JSON
 * lines on stdin and stdout.  Requests run concurrently; each reply
 * carries its request's id.  End of input closes every agent and waits
 * for the loops loop_open started to end (exit 0); a SIGTERM, SIGINT or
 * SIGHUP closes every agent, stops every loop and exits 4.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "api.h"
#include "chan.h"
#include "cmdutil.h"
#include "host.h"
#include "log.h"
#include "sigfd.h"
#include "sup.h"
#include "xmalloc.h"

#define CONTROL_MAX_LINE	(16u * 1024 * 1024)
#define CONTROL_NSIG		3

struct control {
	struct event_base	*base;
	struct sup		 sup;
	struct host		*host;		/* the loops loop_open starts */
	struct loop_guard	 guard;		/* the run lock, fresh logs */
	struct api		*api;
	struct cmd_opts		*opts;
	struct evbuffer		*in;
	struct event		*in_ev;
	struct event		*sigs[CONTROL_NSIG];
	unsigned long		 lineno;
	int			 eof;
	int			 discarding;
	size_t			 scanned;	/* bytes of `in` known to hold no LF */
	int			 exit_code;
	uint64_t		 grace_ms;	/* close's default */
};

/* After EOF (or a signal), stop once nothing is alive, running or pending. */
static void
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

	return cmd_plan_spawn(c->opts, &c->guard, &c->sup, sp, ar, err);
}

/* One request line: parse errors are ours (with the line), the rest the api's. */
static void
control_line(struct control *c, const char *line, size_t len)
{
	json_error_t	 jerr;
	json_t		*req;

	c->lineno++;
	if (len == 0)
		return;
	req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (req == NULL || !json_is_object(req)) {
		control_error(c, api_error_new(NULL, "line %lu: %s",
		    c->lineno, req == NULL ? jerr.text :
		    "a request must be a JSON object"));
		json_decref(req);
		return;
	}
	api_call(c->api, req, control_replied, c);
	json_decref(req);
}

/* Input is over (EOF or a signal): close every agent still open. */
static void
control_eof(struct control *c)
{
	c->eof = 1;
	event_del(c->in_ev);
	api_close_all(c->api, c->grace_ms);
	control_maybe_exit(c);
}

/* Read what stdin has and handle every complete line. */
static void
control_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct control		*c = arg;
	struct evbuffer_ptr	 pos;
	char			*line;
	size_t			 len;
	int			 n;

	(void)ev;
	n = evbuffer_read(c->in, fd, 65536);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* only the new bytes are searched: a long line costs linear time */
	if (evbuffer_ptr_set(c->in, &pos, c->scanned, EVBUFFER_PTR_SET) == 0)
		pos = evbuffer_search_eol(c->in, &pos, NULL, EVBUFFER_EOL_LF);
	else
		pos.pos = -1;
	while (pos.pos >= 0 &&
	    (line = evbuffer_readln(c->in, &len, EVBUFFER_EOL_LF)) != NULL) {
		if (c->discarding)
			c->discarding = 0;
		else
			control_line(c, line, len);
		free(line);
	}
	c->scanned = evbuffer_get_length(c->in);
	if (evbuffer_get_length(c->in) > CONTROL_MAX_LINE) {
		control_error(c, api_error_new(NULL, "line %lu: longer than %u "
		    "bytes, ignored", ++c->lineno, CONTROL_MAX_LINE));
		evbuffer_drain(c->in, evbuffer_get_length(c->in));
		c->scanned = 0;
		c->discarding = 1;
	}
	if (n <= 0) {
		if (evbuffer_get_length(c->in) > 0 && !c->discarding) {
			line = (char *)evbuffer_pullup(c->in, -1);
			control_line(c, line, evbuffer_get_length(c->in));
		}
		control_eof(c);
	}
}

/* SIGTERM, SIGINT, SIGHUP: no more requests, every agent closed, exit 4. */
static void
control_signal(evutil_socket_t sig, short ev, void *arg)
{
	struct control	*c = arg;

	(void)ev;
	if (c->eof && c->exit_code == EXIT_STOPPED)
		return;
	log_warnx("signal %d: closing every agent, stopping every loop",
	    (int)sig);
	c->exit_code = EXIT_STOPPED;
	host_stop_all(c->host, "control got a signal");
	if (!c->eof)
		control_eof(c);
	else
		api_close_all(c->api, c->grace_ms);
}

/* An agent finished: maybe that was the last one after EOF. */
static void
control_on_done(struct agent *a, void *arg)
{
	struct control	*c = arg;

	(void)a;
	control_maybe_exit(c);
}

/* The --help text of the control command. */
static void
control_usage(FILE *fp)
{
	fprintf(fp,
"usage: ccw-supervisor control [--config F] [-C ROOT] [--state-dir DIR]\n"
"           [--loop-id ID] [--grace-ms N]\n"
"\n"
"Read one JSON request per line on stdin, answer one JSON line each on\n"
"stdout.  Verbs: %s.\n"
"loop_open with \"start\": true runs the loop here.  See\n"
"ccw-supervisor(1).  End of input closes every agent and waits for the\n"
"loops started here; SIGTERM closes every agent, stops every loop and\n"
"exits 4.\n", api_verb_names);
}

/* Parse the command line and load the configuration: 0, or an exit code. */
static int
control_options(struct cmd_opts *o, int argc, char **argv, int *done)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "loop-id", required_argument, NULL, 'l' },
		{ "grace-ms", required_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char	*err = NULL;
	int	 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1) {
		if (ch == 'h') {
			control_usage(stdout);
			*done = 1;
			return EXIT_OK;
		}
		if (cmd_opts_set(o, ch, optarg) != 0) {
			control_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		control_usage(stderr);
		return EXIT_USAGE;
	}
	if (cmd_opts_load(o, &err) != 0) {
		fprintf(stderr, "ccw-supervisor control: %s\n", err);
		free(err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* The signals' events; then the deferred ones may come in. */
static void
control_signals(struct control *c)
{
	static const int	signos[CONTROL_NSIG] = { SIGTERM, SIGINT, SIGHUP };
	int			i;

	for (i = 0; i < CONTROL_NSIG; i++) {
		c->sigs[i] = evsignal_new(c->base, signos[i], control_signal, c);
		if (c->sigs[i] == NULL || evsignal_add(c->sigs[i], NULL) != 0)
			fatalx("control: cannot handle signal %d", signos[i]);
	}
	sigfd_release();
}

int
cmd_control(int argc, char **argv)
{
	struct api_host	 host;
	struct host_cfg	 hc;
	struct cmd_opts	 o;
	struct control	 c;
	char		*err = NULL;
	int		 rc, done = 0, i;

	cmd_opts_init(&o);
	if ((rc = control_options(&o, argc, argv, &done)) != EXIT_OK ||
	    done) {
		cmd_opts_free(&o);
		return rc;
	}
	memset(&c, 0, sizeof c);
	c.opts = &o;
	c.grace_ms = o.have_grace ? o.grace_ms : API_GRACE_MS;
	if ((c.base = chan_base_new()) == NULL)
		fatalx("cannot create the event loop");
	if (sup_init(&c.sup, c.base, NULL, o.state_dir, o.loop_id,
	    &err) != 0)
		fatalx("%s", err);
	/* one driver per loop, held until we exit */
	if ((rc = loopguard_open(&c.guard, c.sup.state_dir, c.sup.loop_id,
	    &err)) != 0 || loopguard_workers(&c.guard, NULL, &err) != 0) {
		fprintf(stderr, "ccw-supervisor control: %s\n", err);
		free(err);
		loopguard_close(&c.guard);
		sup_free(&c.sup);
		event_base_free(c.base);
		cmd_opts_free(&o);
		return rc > 0 ? EXIT_FAILED : EXIT_USAGE;
	}
	memset(&hc, 0, sizeof hc);
	hc.config = &o.cfg;
	hc.state_dir = c.sup.state_dir;
	hc.root = o.cwd;
	hc.children = c.sup.children;	/* the process's one reaper */
	cmd_opts_overrides(&o, &hc.over);
	if ((c.host = host_new(c.base, &hc, &err)) == NULL)
		fatalx("control: %s", err);
	memset(&host, 0, sizeof host);
	host.loops = c.host;
	host.loop_end = control_loop_end;
	host.loop_end_arg = &c;
	host.sup = &c.sup;
	host.state_dir = c.sup.state_dir;
	host.grace_ms = c.grace_ms;
	host.plan = control_plan;
	host.plan_arg = &c;
	c.api = api_new(&host);
	control_signals(&c);
	c.in = evbuffer_new();
	evutil_make_socket_nonblocking(0);
	c.in_ev = event_new(c.base, 0, EV_READ | EV_PERSIST, control_read_cb,
	    &c);
	if (event_add(c.in_ev, NULL) != 0)
		fatalx("control: stdin must be a pipe, socket or terminal");
	c.sup.done_extra = control_on_done;
	c.sup.done_extra_arg = &c;
	event_base_dispatch(c.base);

	for (i = 0; i < CONTROL_NSIG; i++)
		event_free(c.sigs[i]);
	event_free(c.in_ev);
	evbuffer_free(c.in);
	api_free(c.api);
	host_free(c.host);	/* before the reaper it borrows (sup's) */
	sup_free(&c.sup);
	loopguard_close(&c.guard);
	event_base_free(c.base);
	cmd_opts_free(&o);
	return c.exit_code;
}
