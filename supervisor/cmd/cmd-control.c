/*
 * cmd-control.c: `ccw-supervisor control`: the four verbs as JSON lines on
 * stdin and stdout, for front ends and tests.  Requests run concurrently;
 * each response carries its request's id.  EOF closes every agent.
 */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "chan.h"
#include "cmdutil.h"
#include "log.h"
#include "sup.h"
#include "xmalloc.h"

#define CONTROL_MAX_LINE	(16u * 1024 * 1024)
#define CONTROL_WAIT_MS		600000
#define CONTROL_GRACE_MS	5000

struct control {
	struct event_base	*base;
	struct sup		 sup;
	struct loop_guard	 guard;		/* the run lock, fresh logs */
	struct verbs		*verbs;
	struct cmd_opts		*opts;
	struct evbuffer		*in;
	struct event		*in_ev;
	unsigned long		 lineno;
	int			 eof;
	int			 discarding;
};

/* A pending request's context: where to answer. */
struct pending {
	struct control	*c;
	json_t		*id;
};

/* Write one response line. */
static void
control_reply(json_t *id, json_t *body)
{
	json_object_set(body, "id", id != NULL ? id : json_null());
	cmd_print_json(body, 1);
	json_decref(body);
}

/* An error response. */
static void
control_error(json_t *id, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void
control_error(json_t *id, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	control_reply(id, json_pack("{s:b, s:s}", "ok", 0, "error",
	    msg != NULL ? msg : "error"));
	free(msg);
}

/* After EOF, stop once nothing is alive and nothing is pending. */
static void
control_maybe_exit(struct control *c)
{
	if (c->eof && c->sup.nlive == 0 && verbs_idle(c->verbs))
		event_base_loopbreak(c->base);
}

/* A pending request for id. */
static struct pending *
pending_new(struct control *c, json_t *id)
{
	struct pending	*p = xcalloc(1, sizeof *p);

	p->c = c;
	p->id = json_incref(id);
	return p;
}

/* Release a pending request and see whether we are finished. */
static void
pending_done(struct pending *p)
{
	struct control	*c = p->c;

	json_decref(p->id);
	free(p);
	control_maybe_exit(c);
}

/* A string member or NULL. */
static const char *
req_str(json_t *req, const char *key)
{
	return json_string_value(json_object_get(req, key));
}

/* A non-negative integer member, or def when absent; -1 when invalid. */
static int
req_ms(json_t *req, const char *key, uint64_t def, uint64_t *out)
{
	json_t	*v = json_object_get(req, key);

	if (v == NULL || json_is_null(v)) {
		*out = def;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

/* spawn: resolve the role's tool like `agent` does, then start it. */
static void
control_spawn(struct control *c, json_t *id, json_t *req)
{
	struct cmd_opts		*o = c->opts;
	struct cmd_opts		 saved = *o;
	struct agent_req	 ar;
	struct agent		*a;
	char			*err = NULL;
	int			 rc;

	if (req_str(req, "role") == NULL) {
		control_error(id, "spawn needs a \"role\" string");
		return;
	}
	o->role = req_str(req, "role");
	o->message = req_str(req, "message") ? req_str(req, "message") : "";
	if (req_str(req, "tool") != NULL)
		o->tool = req_str(req, "tool");
	if (req_str(req, "command") != NULL)
		o->command = req_str(req, "command");
	if (req_str(req, "model") != NULL)
		o->model = req_str(req, "model");
	o->have_timeout = o->have_nudge = o->have_grace = 1;
	rc = cmd_opts_resolve(o, &ar, &err);
	o->role = saved.role;
	o->message = saved.message;
	o->tool = saved.tool;
	o->command = saved.command;
	o->model = saved.model;
	if (rc != 0 || loopguard_reserve(&c->guard, &c->sup, &err) != 0) {
		control_error(id, "%s", err);
		free(err);
		if (rc == 0)
			json_decref(ar.options);
		return;
	}
	a = agent_spawn(&c->sup, &ar);
	json_decref(ar.options);
	control_reply(id, json_pack("{s:b, s:s}", "ok", 1, "agent_id", a->id));
}

/* wait answered. */
static void
control_waited(json_t *status, int timed_out, void *arg)
{
	struct pending	*p = arg;

	control_reply(p->id, json_pack("{s:b, s:O, s:b}", "ok", 1, "status",
	    status, "timed_out", timed_out));
	pending_done(p);
}

/* wait: targets, timeout_ms, mode any|all. */
static void
control_wait(struct control *c, json_t *id, json_t *req)
{
	json_t		*t = json_object_get(req, "targets");
	const char	*mode = req_str(req, "mode");
	struct pending	*p;
	struct strv	 ids = { NULL, 0 };
	uint64_t	 ms;
	char		*err = NULL;
	size_t		 i;

	if (!json_is_array(t) || json_array_size(t) == 0) {
		control_error(id, "wait needs a non-empty \"targets\" array");
		return;
	}
	for (i = 0; i < json_array_size(t); i++) {
		if (!json_is_string(json_array_get(t, i))) {
			control_error(id, "wait: targets must be strings");
			strv_clear(&ids);
			return;
		}
		strv_push(&ids, json_string_value(json_array_get(t, i)));
	}
	if (req_ms(req, "timeout_ms", CONTROL_WAIT_MS, &ms) != 0 ||
	    (mode != NULL && strcmp(mode, "any") != 0 &&
	    strcmp(mode, "all") != 0)) {
		control_error(id, "wait: timeout_ms must be a non-negative "
		    "integer and mode \"any\" or \"all\"");
		strv_clear(&ids);
		return;
	}
	p = pending_new(c, id);
	if (verbs_wait(c->verbs, ids.v, ids.n, ms, mode != NULL &&
	    strcmp(mode, "all") == 0, control_waited, p, &err) != 0) {
		control_error(id, "%s", err);
		free(err);
		pending_done(p);
	}
	strv_clear(&ids);
}

/* send_input acknowledged (or failed). */
static void
control_input_done(uint64_t sub, const char *how, const char *err, void *arg)
{
	struct pending	*p = arg;

	if (err != NULL)
		control_error(p->id, "%s", err);
	else
		control_reply(p->id, json_pack("{s:b, s:I, s:s?}", "ok", 1,
		    "submission_id", (json_int_t)sub, "delivery", how));
	pending_done(p);
}

/* send_input: target, message, interrupt. */
static void
control_send_input(struct control *c, json_t *id, json_t *req)
{
	const char	*target = req_str(req, "target");
	const char	*text = req_str(req, "message");
	struct pending	*p;
	char		*err = NULL;

	if (target == NULL || text == NULL) {
		control_error(id, "send_input needs \"target\" and "
		    "\"message\" strings");
		return;
	}
	p = pending_new(c, id);
	if (verbs_send_input(c->verbs, target, text,
	    json_is_true(json_object_get(req, "interrupt")),
	    control_input_done, p, &err) != 0) {
		control_error(id, "%s", err);
		free(err);
		pending_done(p);
	}
}

/* close finished. */
static void
control_closed(const char *prev, void *arg)
{
	struct pending	*p = arg;

	control_reply(p->id, json_pack("{s:b, s:s}", "ok", 1,
	    "previous_status", prev));
	pending_done(p);
}

/* close: target, grace_ms. */
static void
control_close(struct control *c, json_t *id, json_t *req)
{
	const char	*target = req_str(req, "target");
	struct pending	*p;
	uint64_t	 grace;
	char		*err = NULL;

	if (target == NULL ||
	    req_ms(req, "grace_ms", c->opts->have_grace ? c->opts->grace_ms :
	    CONTROL_GRACE_MS, &grace) != 0) {
		control_error(id, "close needs a \"target\" string and an "
		    "integer grace_ms");
		return;
	}
	p = pending_new(c, id);
	if (verbs_close(c->verbs, target, grace, control_closed, p,
	    &err) != 0) {
		control_error(id, "%s", err);
		free(err);
		pending_done(p);
	}
}

/* result and list: answered at once from the table. */
static void
control_query(struct control *c, json_t *id, json_t *req, int list)
{
	const char	*target = req_str(req, "target");
	struct agent	*a;
	json_t		*map;

	if (list) {
		map = json_object();
		TAILQ_FOREACH(a, &c->sup.agents, entry)
			json_object_set_new(map, a->id,
			    json_string(agent_status_name(a->status)));
		control_reply(id, json_pack("{s:b, s:o}", "ok", 1, "agents",
		    map));
		return;
	}
	if (target == NULL || (a = agent_find(&c->sup, target)) == NULL) {
		control_error(id, "unknown agent '%s'", target ? target : "");
		return;
	}
	control_reply(id, json_pack("{s:b, s:o}", "ok", 1, "result",
	    report_agent(a)));
}

/* One request line. */
static void
control_line(struct control *c, const char *line, size_t len)
{
	json_error_t	 jerr;
	json_t		*req, *id;
	const char	*verb;

	c->lineno++;
	if (len == 0)
		return;
	req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (req == NULL || !json_is_object(req)) {
		control_error(NULL, "line %lu: %s", c->lineno, req == NULL ?
		    jerr.text : "a request must be a JSON object");
		json_decref(req);
		return;
	}
	id = json_object_get(req, "id");
	verb = req_str(req, "verb");
	if (verb == NULL)
		control_error(id, "line %lu: no \"verb\"", c->lineno);
	else if (strcmp(verb, "spawn") == 0)
		control_spawn(c, id, req);
	else if (strcmp(verb, "wait") == 0)
		control_wait(c, id, req);
	else if (strcmp(verb, "send_input") == 0)
		control_send_input(c, id, req);
	else if (strcmp(verb, "close") == 0)
		control_close(c, id, req);
	else if (strcmp(verb, "result") == 0)
		control_query(c, id, req, 0);
	else if (strcmp(verb, "list") == 0)
		control_query(c, id, req, 1);
	else
		control_error(id, "line %lu: unknown verb '%s' (spawn, wait, "
		    "send_input, close, result, list)", c->lineno, verb);
	json_decref(req);
}

/* stdin ended: close every agent that is still open. */
static void
control_eof(struct control *c)
{
	struct agent	*a;
	char		*err = NULL;

	c->eof = 1;
	event_del(c->in_ev);
	TAILQ_FOREACH(a, &c->sup.agents, entry)
		if (!a->closed && !a->done &&
		    agent_close(a, c->opts->have_grace ? c->opts->grace_ms :
		    CONTROL_GRACE_MS, &err) != 0) {
			free(err);
			err = NULL;
		}
	control_maybe_exit(c);
}

/* Read what stdin has and handle every complete line. */
static void
control_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct control	*c = arg;
	char		*line;
	size_t		 len;
	int		 n;

	(void)ev;
	n = evbuffer_read(c->in, fd, 65536);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	while ((line = evbuffer_readln(c->in, &len, EVBUFFER_EOL_LF)) != NULL) {
		if (c->discarding)
			c->discarding = 0;
		else
			control_line(c, line, len);
		free(line);
	}
	if (evbuffer_get_length(c->in) > CONTROL_MAX_LINE) {
		control_error(NULL, "line %lu: longer than %u bytes, ignored",
		    ++c->lineno, CONTROL_MAX_LINE);
		evbuffer_drain(c->in, evbuffer_get_length(c->in));
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
"stdout.  Verbs: spawn, wait, send_input, close, result, list.  See\n"
"ccw-supervisor(1).  End of input closes every agent.\n");
}

int
cmd_control(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "loop-id", required_argument, NULL, 'l' },
		{ "grace-ms", required_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct cmd_opts	 o;
	struct control	 c;
	char		*err = NULL;
	int		 ch;

	cmd_opts_init(&o);
	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1) {
		if (ch == 'h') {
			control_usage(stdout);
			return EXIT_OK;
		}
		if (cmd_opts_set(&o, ch, optarg) != 0) {
			control_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		control_usage(stderr);
		return EXIT_USAGE;
	}
	if (cmd_opts_load(&o, &err) != 0) {
		fprintf(stderr, "ccw-supervisor control: %s\n", err);
		free(err);
		cmd_opts_free(&o);
		return EXIT_USAGE;
	}
	memset(&c, 0, sizeof c);
	c.opts = &o;
	if ((c.base = chan_base_new()) == NULL)
		fatalx("cannot create the event loop");
	if (sup_init(&c.sup, c.base, NULL, o.state_dir, o.loop_id,
	    &err) != 0)
		fatalx("%s", err);
	/* one driver per loop, held until we exit */
	if ((ch = loopguard_open(&c.guard, c.sup.state_dir, c.sup.loop_id,
	    &err)) != 0 || loopguard_workers(&c.guard, NULL, &err) != 0) {
		fprintf(stderr, "ccw-supervisor control: %s\n", err);
		free(err);
		loopguard_close(&c.guard);
		sup_free(&c.sup);
		event_base_free(c.base);
		cmd_opts_free(&o);
		return ch > 0 ? EXIT_FAILED : EXIT_USAGE;
	}
	c.verbs = verbs_new(&c.sup);
	c.in = evbuffer_new();
	evutil_make_socket_nonblocking(0);
	c.in_ev = event_new(c.base, 0, EV_READ | EV_PERSIST, control_read_cb,
	    &c);
	if (event_add(c.in_ev, NULL) != 0)
		fatalx("control: stdin must be a pipe, socket or terminal");
	c.sup.done_extra = control_on_done;
	c.sup.done_extra_arg = &c;
	event_base_dispatch(c.base);

	event_free(c.in_ev);
	evbuffer_free(c.in);
	verbs_free(c.verbs);
	sup_free(&c.sup);
	loopguard_close(&c.guard);
	event_base_free(c.base);
	cmd_opts_free(&o);
	return EXIT_OK;
}
