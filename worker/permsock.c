/*
 * permsock.c: the worker's end of the permission relay (issue 29).  A
 * unix socket in a private directory of the worker's; each connection
 * is one request of `ccw-worker --permission-relay` (permrelay.c), sent
 * up as PERM_ASK, and its PERM_REPLY written back as the relay's answer.
 */
#include <config.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "permrelay.h"
#include "worker.h"
#include "xmalloc.h"

/* One relay's request, from its line to our answer. */
struct permconn {
	struct permconn	*next;
	struct permsock	*ps;
	int		 fd;
	struct event	*ev;
	struct evbuffer	*in;
	uint64_t	 id;		/* 0: its line is not whole yet */
	json_t		*input;		/* the tool's input, as allowed */
	int		 answered;	/* in: the answer, going out */
};

struct permsock {
	struct worker	*w;
	char		*dir, *path;
	int		 lfd;
	struct event	*lev;
	struct permconn	*conns;
	uint64_t	 next_id;
	char		*config;	/* claude's --mcp-config */
};

/* Closing a connection unasked is the relay's cue to deny. */
static void
permconn_free(struct permconn *c)
{
	struct permconn	**pp;

	for (pp = &c->ps->conns; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->ev != NULL)
		event_free(c->ev);
	evbuffer_free(c->in);
	json_decref(c->input);
	close(c->fd);
	free(c);
}

/* A whole line: one request, asked up as PERM_ASK. */
static int
permconn_ask(struct permconn *c, const char *line, size_t len)
{
	struct msg	 m;
	json_t		*req;
	const char	*tool;

	if ((req = json_loadb(line, len, 0, NULL)) == NULL)
		return -1;
	if ((tool = json_string_value(json_object_get(req, "tool_name")))
	    == NULL) {
		json_decref(req);
		return -1;
	}
	c->id = ++c->ps->next_id;
	c->input = json_incref(json_object_get(req, "input"));
	msg_init(&m, MSG_PERM_ASK);
	m.u.perm_ask.id = c->id;
	m.u.perm_ask.tool_name = xstrdup(tool);
	m.u.perm_ask.input = json_incref(c->input);
	if (json_is_string(json_object_get(req, "tool_use_id")))
		m.u.perm_ask.tool_use_id = xstrdup(json_string_value(
		    json_object_get(req, "tool_use_id")));
	worker_progress(c->ps->w, "permission", tool);
	worker_send(c->ps->w, &m);
	msg_clear(&m);
	json_decref(req);
	return 0;
}

/* The relay's bytes: one line, capped; garbage or EOF ends it (deny). */
static void
permconn_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct permconn	*c = arg;
	struct evbuffer_ptr p;
	char		*line;
	int		 n, rc;

	(void)ev;
	n = evbuffer_read(c->in, fd, 4096);
	if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR))) {
		permconn_free(c);
		return;
	}
	if (c->id != 0)
		return;		/* asked: no more bytes are ours */
	p = evbuffer_search(c->in, "\n", 1, NULL);
	if (p.pos < 0) {
		if (evbuffer_get_length(c->in) > PERMRELAY_LINE_MAX)
			permconn_free(c);
		return;
	}
	line = xmalloc((size_t)p.pos + 1);
	evbuffer_remove(c->in, line, (size_t)p.pos + 1);
	rc = permconn_ask(c, line, (size_t)p.pos);
	free(line);
	if (rc != 0)
		permconn_free(c);
}

/* A relay connected: its request follows. */
static void
permsock_accept_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct permsock	*ps = arg;
	struct permconn	*c;
	int		 cfd;

	(void)ev;
	if ((cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) < 0)
		return;
	c = xcalloc(1, sizeof *c);
	c->ps = ps;
	c->fd = cfd;
	c->in = evbuffer_new();
	c->ev = event_new(ps->w->base, cfd, EV_READ | EV_PERSIST,
	    permconn_read_cb, c);
	event_add(c->ev, NULL);
	c->next = ps->conns;
	ps->conns = c;
}

/*
 * The relay claude starts, as claude's --mcp-config: this very program
 * with --permission-relay and our socket.  argv0 (a path: how the
 * supervisor started us) before /proc/self/exe, which is valgrind's
 * under valgrind.
 */
static char *
permsock_config(const char *argv0, const char *sock)
{
	char	 exe[PATH_MAX];
	ssize_t	 n;
	json_t	*cfg;
	char	*s;

	if (argv0 == NULL || strchr(argv0, '/') == NULL ||
	    realpath(argv0, exe) == NULL) {
		if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) <= 0)
			return NULL;
		exe[n] = '\0';
	}
	cfg = json_pack("{s:{s:{s:s, s:[s, s]}}}", "mcpServers",
	    PERMRELAY_SERVER, "command", exe, "args", "--permission-relay",
	    sock);
	s = json_dumps(cfg, JSON_COMPACT);
	json_decref(cfg);
	return s;
}

/*
 * options.ask_permissions on a tool whose row takes a permission tool:
 * the socket, and spec's perm_config for its argv.  0 and nothing made
 * when not asked for.
 */
int
permsock_open(struct worker *w, char **err)
{
	struct permsock		*ps;
	struct sockaddr_un	 sun;
	const char		*tmp = getenv("TMPDIR");

	if (!(w->ad->flags & ADAPTER_PERM_TOOL) ||
	    !adapter_opt_bool(&w->spec, "ask_permissions", 0))
		return 0;
	ps = xcalloc(1, sizeof *ps);
	ps->w = w;
	ps->lfd = -1;
	w->perm = ps;
	xasprintf(&ps->dir, "%s/ccw-perm-XXXXXX", tmp != NULL && *tmp ==
	    '/' ? tmp : "/tmp");
	if (mkdtemp(ps->dir) == NULL) {
		xasprintf(err, "permission relay: %s: %s", ps->dir,
		    strerror(errno));
		free(ps->dir);
		ps->dir = NULL;
		return -1;
	}
	xasprintf(&ps->path, "%s/sock", ps->dir);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(ps->path) >= sizeof sun.sun_path) {
		xasprintf(err, "permission relay: %s: path too long", ps->path);
		return -1;
	}
	strcpy(sun.sun_path, ps->path);
	if ((ps->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) < 0 || bind(ps->lfd, (struct sockaddr *)&sun,
	    sizeof sun) != 0 || listen(ps->lfd, 8) != 0 ||
	    (ps->config = permsock_config(w->argv0, ps->path)) == NULL) {
		xasprintf(err, "permission relay: %s: %s", ps->path,
		    strerror(errno));
		return -1;
	}
	ps->lev = event_new(w->base, ps->lfd, EV_READ | EV_PERSIST,
	    permsock_accept_cb, ps);
	event_add(ps->lev, NULL);
	w->spec.perm_config = ps->config;
	return 0;
}

/*
 * The answer goes out as fast as the relay reads it (an allowed input
 * may be large; a client that does not read never blocks us); all out,
 * the connection ends.
 */
static void
permconn_write_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct permconn	*c = arg;

	(void)ev;
	if (evbuffer_write(c->in, fd) < 0 && errno != EAGAIN &&
	    errno != EINTR) {
		permconn_free(c);
		return;
	}
	if (evbuffer_get_length(c->in) == 0)
		permconn_free(c);
}

/* PERM_REPLY: the answer, in the permission tool's words, to its relay. */
void
permsock_reply(struct worker *w, const struct msg_perm_reply *r)
{
	struct permconn	*c;
	json_t		*ans;
	char		*s;

	if (w->perm == NULL || r->id == 0)
		return;
	for (c = w->perm->conns; c != NULL && (c->id != r->id ||
	    c->answered); c = c->next)
		;
	if (c == NULL)
		return;		/* its relay went: nobody to tell */
	if (c->input == NULL)
		c->input = json_object();
	if (r->allow)
		ans = json_pack("{s:s, s:O}", "behavior", "allow",
		    "updatedInput", c->input);
	else
		ans = json_pack("{s:s, s:s}", "behavior", "deny", "message",
		    r->message != NULL ? r->message : "denied");
	s = json_dumps(ans, JSON_COMPACT);
	json_decref(ans);
	c->answered = 1;
	evbuffer_drain(c->in, evbuffer_get_length(c->in));
	evbuffer_add(c->in, s, strlen(s));
	evbuffer_add(c->in, "\n", 1);
	free(s);
	event_free(c->ev);
	c->ev = event_new(w->base, c->fd, EV_WRITE | EV_PERSIST,
	    permconn_write_cb, c);
	event_add(c->ev, NULL);
}

/* The run is over: every relay still waiting is denied, the socket goes. */
void
permsock_close(struct worker *w)
{
	struct permsock	*ps = w->perm;

	if (ps == NULL)
		return;
	while (ps->conns != NULL)
		permconn_free(ps->conns);
	if (ps->lev != NULL)
		event_free(ps->lev);
	if (ps->lfd >= 0)
		close(ps->lfd);
	if (ps->path != NULL)
		unlink(ps->path);
	if (ps->dir != NULL)
		rmdir(ps->dir);
	free(ps->path);
	free(ps->dir);
	free(ps->config);
	free(ps);
	w->perm = NULL;
	w->spec.perm_config = NULL;
}
