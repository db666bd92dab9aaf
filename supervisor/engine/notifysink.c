/*
 * notifysink.c: THE table of notification sink types (notify.h) and two
 * of its rows: command (argv, the body on stdin, a deadline, then SIGKILL
 * of its group) and desktop (notify-send, when a session bus exists);
 * webhook is notifyweb.c's.  A child is forked here and reaped through
 * the process's one registry; nothing here ever waits.
 */
#include <config.h>

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "children.h"
#include "notify.h"
#include "sigfd.h"
#include "xmalloc.h"

extern const struct notify_sink_type notify_webhook;	/* notifyweb.c */
static const struct notify_sink_type notify_command, notify_desktop;

/* The sink types: a new one is a row here (HACKING.md). */
static const struct notify_sink_type *const notify_sinks[] = {
	&notify_command, &notify_webhook, &notify_desktop,
};

#define NOTIFY_NSINKS	(sizeof notify_sinks / sizeof notify_sinks[0])

/* A type's row by its config word, or NULL. */
const struct notify_sink_type *
notify_sink_find(const char *type)
{
	size_t	i;

	for (i = 0; type != NULL && i < NOTIFY_NSINKS; i++)
		if (strcmp(type, notify_sinks[i]->type) == 0)
			return notify_sinks[i];
	return NULL;
}

/* The i-th sink type's word. */
static const char *
notify_sink_word(size_t i)
{
	return notify_sinks[i]->type;
}

/* "command, webhook, desktop": for a config error's "one of". */
char *
notify_sink_list(void)
{
	return notify_join(notify_sink_word, NOTIFY_NSINKS);
}

/*
 * A key of obj not in known: an error naming it (PATH.KEY: a typo would
 * lose a setting); 0 when all are known.  For notify's and a sink's keys.
 */
int
notify_keys(const json_t *obj, const char *path, const char *const *known,
    char **err)
{
	const char	*key;
	json_t		*v;
	size_t		 i;

	json_object_foreach((json_t *)obj, key, v) {
		for (i = 0; known[i] != NULL; i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (known[i] == NULL) {
			xasprintf(err, "%s.%s: unknown key", path, key);
			return -1;
		}
	}
	return 0;
}

/*
 * One sink's object (notify.sinks.NAME): its type's row found and its
 * parse run; -1 and *err naming the key path.
 */
int
notify_sink_parse(const json_t *conf, const char *name,
    const struct notify_sink_type **type, void **sink, char **err)
{
	const char	*t = json_string_value(json_object_get(conf, "type"));
	char		*l;

	*sink = NULL;
	if (!json_is_object(conf)) {
		xasprintf(err, "notify.sinks.%s: expected an object", name);
		return -1;
	}
	if ((*type = notify_sink_find(t)) == NULL) {
		l = notify_sink_list();
		xasprintf(err, "notify.sinks.%s.type: expected one of: %s",
		    name, l);
		free(l);
		return -1;
	}
	return (*type)->parse(conf, name, sink, err);
}

/* One delivery of a command: its child, stdin, deadline. */
struct ncmd_run {
	TAILQ_ENTRY(ncmd_run)	 entry;
	struct ncmd		*s;
	pid_t			 pid;
	int			 in;		/* ours; -1 closed */
	struct event		*in_ev, *deadline, *fail_ev;
	char			*body;
	size_t			 len, off;
	int			 timed_out;
	char			*err;		/* fail_ev's */
	notify_done_fn		 done;
	void			*arg;
};
TAILQ_HEAD(ncmd_runs, ncmd_run);

/* A command (or desktop) sink: argv, deadline, its deliveries. */
struct ncmd {
	char			**argv;		/* NULL-ended; desktop: none */
	size_t			 nargv;
	uint64_t		 timeout_ms;
	int			 desktop;
	struct children		*children;
	struct ncmd_runs	 runs;
};

/* A key a sink does not know: notify.sinks.NAME.KEY named. */
static int
ncmd_keys(const json_t *conf, const char *name, const char *const *known,
    char **err)
{
	char	*path;
	int	 rc;

	xasprintf(&path, "notify.sinks.%s", name);
	rc = notify_keys(conf, path, known, err);
	free(path);
	return rc;
}

/* The sink's deadline: a positive integer, default NOTIFY_TIMEOUT_MS. */
static int
ncmd_timeout(const json_t *conf, const char *name, uint64_t *ms, char **err)
{
	const json_t	*v = json_object_get(conf, "timeout_ms");

	*ms = NOTIFY_TIMEOUT_MS;
	if (v == NULL)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) <= 0) {
		xasprintf(err, "notify.sinks.%s.timeout_ms: expected a "
		    "positive integer", name);
		return -1;
	}
	*ms = (uint64_t)json_integer_value(v);
	return 0;
}

/* Everything of a sink, deliveries included (ncmd_free's and parse's). */
static void
ncmd_clear(struct ncmd *s)
{
	size_t	i;

	for (i = 0; i < s->nargv; i++)
		free(s->argv[i]);
	free(s->argv);
	free(s);
}

/* {"type": "command", "argv": [...], "timeout_ms": N}. */
static int
ncmd_parse(const json_t *conf, const char *name, void **sink, char **err)
{
	static const char *const	 known[] = { "type", "argv",
					    "timeout_ms", NULL };
	const json_t			*av = json_object_get(conf, "argv"), *v;
	struct ncmd			*s;
	size_t				 i;

	if (ncmd_keys(conf, name, known, err) != 0)
		return -1;
	if (!json_is_array(av) || json_array_size(av) == 0) {
		xasprintf(err, "notify.sinks.%s.argv: expected a non-empty "
		    "array of strings", name);
		return -1;
	}
	s = xcalloc(1, sizeof *s);
	TAILQ_INIT(&s->runs);
	s->argv = xcalloc(json_array_size(av) + 1, sizeof *s->argv);
	json_array_foreach(av, i, v) {
		if (!json_is_string(v) || json_string_length(v) == 0 ||
		    strlen(json_string_value(v)) != json_string_length(v)) {
			xasprintf(err, "notify.sinks.%s.argv[%zu]: expected a "
			    "non-empty string", name, i);
			ncmd_clear(s);
			return -1;
		}
		s->argv[s->nargv++] = xstrdup(json_string_value(v));
	}
	if (ncmd_timeout(conf, name, &s->timeout_ms, err) != 0) {
		ncmd_clear(s);
		return -1;
	}
	*sink = s;
	return 0;
}

/* {"type": "desktop", "timeout_ms": N}: notify-send's deadline. */
static int
ndesk_parse(const json_t *conf, const char *name, void **sink, char **err)
{
	static const char *const	 known[] = { "type", "timeout_ms",
					    NULL };
	struct ncmd			*s;

	if (ncmd_keys(conf, name, known, err) != 0)
		return -1;
	s = xcalloc(1, sizeof *s);
	TAILQ_INIT(&s->runs);
	s->desktop = 1;
	if (ncmd_timeout(conf, name, &s->timeout_ms, err) != 0) {
		ncmd_clear(s);
		return -1;
	}
	*sink = s;
	return 0;
}

/* The reaper its children are watched by. */
static void
ncmd_attach(void *sink, struct children *ch)
{
	((struct ncmd *)sink)->children = ch;
}

/* A delivery's events and memory (its child reaped or forgotten). */
static void
ncmd_run_free(struct ncmd_run *r)
{
	TAILQ_REMOVE(&r->s->runs, r, entry);
	if (r->in_ev != NULL)
		event_free(r->in_ev);
	if (r->in >= 0)
		close(r->in);
	if (r->deadline != NULL)
		event_free(r->deadline);
	if (r->fail_ev != NULL)
		event_free(r->fail_ev);
	free(r->body);
	free(r->err);
	free(r);
}

/* The delivery ends: done told once, then it is gone. */
static void
ncmd_run_end(struct ncmd_run *r, int ok, const char *why)
{
	notify_done_fn	 done = r->done;
	void		*arg = r->arg;
	char		*w = why != NULL ? xstrdup(why) : NULL;

	ncmd_run_free(r);
	done(arg, ok, w, 1);
	free(w);
}

/* The child's end, from the registry: its status judged. */
static void
ncmd_exited(pid_t pid, int st, void *arg)
{
	struct ncmd_run	*r = arg;
	char		*why = NULL;

	(void)pid;
	r->pid = -1;
	if (r->timed_out)
		xasprintf(&why, "%s: no end within %llu ms: killed",
		    r->s->desktop ? "notify-send" : r->s->argv[0],
		    (unsigned long long)r->s->timeout_ms);
	else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
		xasprintf(&why, "%s: exit status %d%s", r->s->desktop ?
		    "notify-send" : r->s->argv[0], WEXITSTATUS(st),
		    WEXITSTATUS(st) == 127 ? " (cannot execute?)" : "");
	else if (WIFSIGNALED(st))
		xasprintf(&why, "%s: killed by signal %d", r->s->desktop ?
		    "notify-send" : r->s->argv[0], WTERMSIG(st));
	ncmd_run_end(r, why == NULL, why);
	free(why);
}

/* The deadline: the child's whole group killed; its exit ends it. */
static void
ncmd_deadline_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct ncmd_run	*r = arg;

	(void)fd;
	(void)ev;
	r->timed_out = 1;
	if (r->pid > 0)
		(void)kill(-r->pid, SIGKILL);
}

/* The body onto the child's stdin as it takes it; EOF after. */
static void
ncmd_write_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct ncmd_run	*r = arg;
	ssize_t		 n;

	(void)ev;
	while (r->off < r->len) {
		n = send(fd, r->body + r->off, r->len - r->off,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0)
			break;		/* it closed its stdin: its business */
		r->off += (size_t)n;
	}
	event_free(r->in_ev);
	r->in_ev = NULL;
	close(r->in);
	r->in = -1;
}

/* A delivery that cannot start: told on the next turn, never inside. */
static void
ncmd_fail_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct ncmd_run	*r = arg;

	(void)fd;
	(void)ev;
	ncmd_run_end(r, 0, r->err);
}

/* In the child: stdin the socket, the rest /dev/null, a group, exec. */
static void
ncmd_child(int in, char *const *argv)
{
	int	null;

	sigfd_child_reset();
	(void)setpgid(0, 0);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (dup2(in, 0) < 0 || null < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0)
		_exit(127);
	sigfd_close_from(3, -1);
	execvp(argv[0], argv);
	_exit(127);
}

/* fork and exec argv with the socket's end as stdin; -1 and *err. */
static int
ncmd_spawn(struct ncmd_run *r, char *const *argv)
{
	int	sv[2];
	pid_t	pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		xasprintf(&r->err, "%s: socketpair: %s", argv[0],
		    strerror(errno));
		return -1;
	}
	if ((pid = fork()) == 0)
		ncmd_child(sv[0], argv);
	close(sv[0]);
	if (pid < 0) {
		xasprintf(&r->err, "%s: fork: %s", argv[0], strerror(errno));
		close(sv[1]);
		return -1;
	}
	(void)setpgid(pid, pid);	/* before any kill of the group */
	(void)fcntl(sv[1], F_SETFL, O_NONBLOCK);
	r->pid = pid;
	r->in = sv[1];
	children_watch(r->s->children, pid, ncmd_exited, r);
	return 0;
}

/* A delivery's record on the sink, its events made. */
static struct ncmd_run *
ncmd_run_new(struct ncmd *s, struct event_base *base, const char *body,
    size_t len, notify_done_fn done, void *arg)
{
	struct ncmd_run	*r = xcalloc(1, sizeof *r);

	r->s = s;
	r->pid = -1;
	r->in = -1;
	r->body = xmalloc(len + 1);
	memcpy(r->body, body, len);
	r->body[len] = '\0';
	r->len = len;
	r->done = done;
	r->arg = arg;
	r->deadline = evtimer_new(base, ncmd_deadline_cb, r);
	r->fail_ev = event_new(base, -1, 0, ncmd_fail_cb, r);
	TAILQ_INSERT_TAIL(&s->runs, r, entry);
	return r;
}

/* argv started, its stdin fed and its deadline set; else fail_ev. */
static void
ncmd_start(struct ncmd_run *r, struct event_base *base, char *const *argv)
{
	struct timeval	tv = { (time_t)(r->s->timeout_ms / 1000),
			    (suseconds_t)(r->s->timeout_ms % 1000) * 1000 };

	if (r->err == NULL && r->s->children == NULL)
		r->err = xstrdup("no child reaper (notify_sink attach)");
	if (r->err != NULL || ncmd_spawn(r, argv) != 0) {
		event_active(r->fail_ev, EV_TIMEOUT, 0);
		return;
	}
	r->in_ev = event_new(base, r->in, EV_WRITE | EV_PERSIST,
	    ncmd_write_cb, r);
	event_add(r->in_ev, NULL);
	evtimer_add(r->deadline, &tv);
}

/* command: argv with the body on stdin. */
static void
ncmd_send(void *sink, struct event_base *base, const char *body, size_t len,
    notify_done_fn done, void *arg)
{
	struct ncmd	*s = sink;

	ncmd_start(ncmd_run_new(s, base, body, len, done, arg), base,
	    s->argv);
}

/*
 * desktop: notify-send SUMMARY TEXT (the body's kind and text), when
 * DBUS_SESSION_BUS_ADDRESS names a session bus; else failed at once.
 */
static void
ndesk_send(void *sink, struct event_base *base, const char *body,
    size_t len, notify_done_fn done, void *arg)
{
	struct ncmd_run	*r = ncmd_run_new(sink, base, body, len, done, arg);
	const char	*bus = getenv("DBUS_SESSION_BUS_ADDRESS");
	json_t		*j = json_loadb(body, len, 0, NULL);
	char		*sum = NULL, *argv[5];

	xasprintf(&sum, "ccw-supervisor: %s", json_string_value(
	    json_object_get(j, "kind")) != NULL ? json_string_value(
	    json_object_get(j, "kind")) : "event");
	argv[0] = (char *)"notify-send";
	argv[1] = (char *)"--app-name=ccw-supervisor";
	argv[2] = sum;
	argv[3] = (char *)(json_string_value(json_object_get(j, "text")) !=
	    NULL ? json_string_value(json_object_get(j, "text")) : "");
	argv[4] = NULL;
	if (bus == NULL || *bus == '\0')
		r->err = xstrdup("no session bus (DBUS_SESSION_BUS_ADDRESS "
		    "unset)");
	ncmd_start(r, base, argv);
	free(sum);
	json_decref(j);
}

/* Deliveries in flight killed (no done after), then the sink. */
static void
ncmd_free(void *sink)
{
	struct ncmd	*s = sink;
	struct ncmd_run	*r;

	if (s == NULL)
		return;
	while ((r = TAILQ_FIRST(&s->runs)) != NULL) {
		if (r->pid > 0) {
			(void)kill(-r->pid, SIGKILL);
			children_forget(s->children, r->pid);
		}
		ncmd_run_free(r);
	}
	ncmd_clear(s);
}

static const struct notify_sink_type notify_command = {
	"command", ncmd_parse, ncmd_send, ncmd_free, ncmd_attach,
};

static const struct notify_sink_type notify_desktop = {
	"desktop", ndesk_parse, ndesk_send, ncmd_free, ncmd_attach,
};
