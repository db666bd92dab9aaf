/*
 * control-connect.c: `control --connect PATH`: the control socket's
 * client.  JSON request lines from stdin go out as REQUEST frames;
 * REPLY frames come back as JSON lines, EVENT frames as {"event", "seq",
 * "data"} lines.  End of input waits for every reply (and, once a
 * subscribe was granted, for the server to close).
 */
#include <config.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
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
#include "linein.h"
#include "log.h"
#include "sock.h"

struct connect {
	struct event_base	*base;
	struct chan		*chan;
	struct linein		*in;
	struct event		*sigs[CMD_NSIG];
	const char		*path;
	json_t			*sub_ids;	/* ids of the subscribes sent */
	unsigned long		 sent, replied;
	int			 eof, subscribed, ended;
	int			 exit_code;
};

/* Done when the input is over, every reply came and no stream is open. */
static void
connect_maybe_exit(struct connect *k)
{
	if (k->ended || (k->eof && k->replied >= k->sent && !k->subscribed))
		event_base_loopbreak(k->base);
}

/* Was the reply a granted subscribe?  Then events follow until the end. */
static void
connect_note_sub(struct connect *k, const json_t *body)
{
	const json_t	*id = json_object_get(body, "id");
	size_t		 i;
	json_t		*v;

	if (!json_is_true(json_object_get(body, "ok")))
		return;
	json_array_foreach(k->sub_ids, i, v)
		if (json_equal(v, id != NULL ? id : json_null())) {
			k->subscribed = 1;
			return;
		}
}

/* A frame from the server: a reply or an event, one line each. */
static void
connect_msg(struct chan *ch, struct msg *m, void *arg)
{
	struct connect	*k = arg;
	json_t		*line;

	(void)ch;
	if (m->type == MSG_REPLY) {
		k->replied++;
		connect_note_sub(k, m->u.call.body);
		cmd_print_json(m->u.call.body, 1);
	} else {
		line = json_pack("{s:s, s:I, s:O}", "event", m->u.event.type,
		    "seq", (json_int_t)m->u.event.seq, "data", m->u.event.data);
		cmd_print_json(line, 1);
		json_decref(line);
	}
	connect_maybe_exit(k);
}

/* The server closed: fine after a stream, an error with replies due. */
static void
connect_end(struct chan *ch, enum proto_err e, const char *why, void *arg)
{
	struct connect	*k = arg;

	(void)ch;
	k->ended = 1;
	if (e != PROTO_OK || k->replied < k->sent || !k->eof) {
		fprintf(stderr, "ccw-supervisor control: %s: the server closed "
		    "the connection (%s; %lu of %lu replies)\n", k->path, why,
		    k->replied, k->sent);
		k->exit_code = EXIT_FAILED;
	}
	connect_maybe_exit(k);
}

/* One request line: relayed, or answered here when it is no request. */
static void
connect_line(void *arg, unsigned long lineno, const char *line, size_t len)
{
	struct connect	*k = arg;
	struct msg	 m;
	json_t		*req, *err, *id;
	const char	*verb;

	if ((req = linein_request(lineno, line, len, &err)) == NULL) {
		if (err != NULL)
			cmd_print_json(err, 1);
		json_decref(err);
		return;
	}
	msg_init(&m, MSG_REQUEST);
	m.u.call.body = req;
	id = json_object_get(req, "id");
	if (chan_send(k->chan, &m) != PROTO_OK) {
		err = api_error_new(id, ERR_INVALID, "line %lu: over the "
		    "socket's frame limit (%u bytes), not sent", lineno,
		    SOCK_FRAME_MAX);
		cmd_print_json(err, 1);
		json_decref(err);
	} else {
		k->sent++;
		verb = json_string_value(json_object_get(req, "verb"));
		if (verb != NULL && strcmp(verb, "subscribe") == 0)
			json_array_append(k->sub_ids, id != NULL ? id :
			    json_null());
	}
	json_decref(req);
}

/* End of input: leave once the replies are in. */
static void
connect_eof(void *arg)
{
	struct connect	*k = arg;

	k->eof = 1;
	connect_maybe_exit(k);
}

/* SIGTERM, SIGINT, SIGHUP: leave now, exit 4 (the server goes on). */
static void
connect_signal(evutil_socket_t sig, short ev, void *arg)
{
	struct connect	*k = arg;

	(void)sig;
	(void)ev;
	k->exit_code = EXIT_STOPPED;
	event_base_loopbreak(k->base);
}

/* The connected socket, or -1 with the reason printed. */
static int
connect_socket(const char *path)
{
	struct sockaddr_un	sun;
	int			fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		fprintf(stderr, "ccw-supervisor control: %s: the path is too "
		    "long for a unix socket\n", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		fprintf(stderr, "ccw-supervisor control: cannot connect to %s: "
		    "%s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	evutil_make_socket_nonblocking(fd);
	return fd;
}

/* `control --connect PATH`: the exit status. */
int
control_connect(const char *path)
{
	struct connect	k;
	int		fd, i;

	/* a server gone mid-write is an end of stream, not a signal */
	signal(SIGPIPE, SIG_IGN);
	if ((fd = connect_socket(path)) < 0)
		return EXIT_FAILED;
	memset(&k, 0, sizeof k);
	k.path = path;
	k.sub_ids = json_array();
	if ((k.base = chan_base_new()) == NULL)
		fatalx("cannot create the event loop");
	k.chan = chan_new(k.base, fd, MSG_DIR_TO_CLIENT, SOCK_FRAME_MAX,
	    connect_msg, connect_end, &k);
	if (k.chan == NULL)
		fatalx("control: cannot make a channel");
	cmd_signals(k.base, k.sigs, connect_signal, &k);
	if ((k.in = linein_new(k.base, 0, connect_line, connect_eof,
	    &k)) == NULL)
		fatalx("control: cannot read stdin");
	event_base_dispatch(k.base);

	for (i = 0; i < CMD_NSIG; i++)
		event_free(k.sigs[i]);
	linein_free(k.in);
	chan_free(k.chan);
	json_decref(k.sub_ids);
	event_base_free(k.base);
	return k.exit_code;
}
