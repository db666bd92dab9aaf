/*
 * ctlbench.c: the bench's C front end to `ccw-supervisor control`, for
 * the figures whose baselines are C programs (forkexec.c, pingpong.c):
 * the same kind of client on both sides, so that the ratio charges the
 * supervisor and the worker, not Python.  Owns the lifecycles (J in
 * flight) and the sequential send_input round trips; prints the same JSON
 * object as control.py.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

struct ctl {
	pid_t	 pid;
	int	 win;		/* the supervisor's stdin */
	int	 rout;		/* its stdout */
	char	*buf;		/* read, not yet returned */
	size_t	 len, cap;
	long	 next_id;
};

/* A failure here invalidates the figure: say so and stop. */
static void __attribute__((noreturn))
die(const char *what)
{
	fprintf(stderr, "ctlbench: %s: %s\n", what,
	    errno ? strerror(errno) : "failed");
	exit(1);
}

/* Monotonic seconds. */
static double
now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* `SUP control -C ROOT`, spoken to over two pipes. */
static void
ctl_open(struct ctl *c, const char *sup, const char *root)
{
	int	in[2], out[2];

	memset(c, 0, sizeof *c);
	if (pipe(in) == -1 || pipe(out) == -1)
		die("pipe");
	if ((c->pid = fork()) == -1)
		die("fork");
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execl(sup, sup, "control", "-C", root, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->win = in[1];
	c->rout = out[0];
}

/* A prepared line out; loop on short writes. */
static void
ctl_write(struct ctl *c, const char *line, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		if ((n = write(c->win, line, len)) == -1) {
			if (errno == EINTR)
				continue;
			die("write");
		}
		line += n;
		len -= (size_t)n;
	}
}

/* One request, its id ours; returns the id. */
static long
ctl_send(struct ctl *c, const char *verb, const char *fmt, ...)
{
	char	 line[4096], rest[4000];
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	vsnprintf(rest, sizeof rest, fmt, ap);
	va_end(ap);
	c->next_id++;
	n = snprintf(line, sizeof line, "{\"id\":%ld,\"verb\":\"%s\"%s%s}\n",
	    c->next_id, verb, *rest ? "," : "", rest);
	if (n < 0 || (size_t)n >= sizeof line)
		die("request too long");
	ctl_write(c, line, (size_t)n);
	return c->next_id;
}

/*
 * One raw response line (NUL-terminated, valid until the next call),
 * without parsing it: the round trips must not charge a decoder.
 */
static char *
ctl_line(struct ctl *c)
{
	static char	*out;
	static size_t	 outcap;
	char		*nl;
	size_t		 k;
	ssize_t		 n;

	for (;;) {
		if ((nl = memchr(c->buf, '\n', c->len)) != NULL) {
			k = (size_t)(nl - c->buf);
			if (k + 1 > outcap && (out = realloc(out,
			    outcap = k + 1)) == NULL)
				die("realloc");
			memcpy(out, c->buf, k);
			out[k] = '\0';
			memmove(c->buf, nl + 1, c->len - k - 1);
			c->len -= k + 1;
			return out;
		}
		if (c->cap - c->len < 65536 && (c->buf = realloc(c->buf,
		    c->cap = c->cap * 2 + 65536)) == NULL)
			die("realloc");
		n = read(c->rout, c->buf + c->len, c->cap - c->len);
		if (n > 0)
			c->len += (size_t)n;
		else if (n == 0 || errno != EINTR)
			die(n == 0 ? "supervisor closed stdout" : "read");
	}
}

/* One parsed response; a failed request stops the figure. */
static json_t *
ctl_reply(struct ctl *c)
{
	json_t	*r;
	char	*ln = ctl_line(c);

	if ((r = json_loads(ln, 0, NULL)) == NULL ||
	    !json_is_true(json_object_get(r, "ok"))) {
		fprintf(stderr, "ctlbench: %s\n", ln);
		errno = 0;
		die("request");
	}
	return r;
}

/* End of input closes every agent; the supervisor exits when they are gone. */
static void
ctl_finish(struct ctl *c)
{
	char	buf[4096];
	int	st;

	close(c->win);
	while (read(c->rout, buf, sizeof buf) > 0)
		;
	if (waitpid(c->pid, &st, 0) == -1 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		errno = 0;
		die("supervisor exit status");
	}
	close(c->rout);
	free(c->buf);
}

/* What each request in flight was, by id. */
enum what { W_NONE, W_SPAWN, W_WAIT, W_CLOSE };

struct slot {
	enum what	 what;
	char		*agent;
};

/* The spawn request of the figure: bash running cmd. */
static long
spawn(struct ctl *c, const char *cmd)
{
	return ctl_send(c, "spawn", "\"role\":\"develop\",\"tool\":\"bash\","
	    "\"command\":\"%s\",\"message\":\"bench\"", cmd);
}

/* The slot of an id; ids are dense from 1, so a growing array. */
static struct slot *
slot_at(struct slot **v, size_t *cap, long id)
{
	size_t	old = *cap;

	if ((size_t)id >= *cap) {
		*cap = (size_t)id * 2 + 64;
		if ((*v = realloc(*v, *cap * sizeof **v)) == NULL)
			die("realloc");
		memset(*v + old, 0, (*cap - old) * sizeof **v);
	}
	return &(*v)[id];
}

/*
 * One answer of the lifecycle conversation handled; 1 when an agent
 * closed.  Slots are found by index each time: sending grows the array.
 */
static int
life_step(struct ctl *c, struct slot **v, size_t *cap, const char *cmd,
    long n, long *spawned)
{
	json_t		*r = ctl_reply(c), *st;
	long		 k = (long)json_integer_value(json_object_get(r, "id"));
	enum what	 what = slot_at(v, cap, k)->what;
	char		*agent = (*v)[k].agent;
	const char	*id;
	int		 closed = 0;

	(*v)[k].what = W_NONE;
	(*v)[k].agent = NULL;
	switch (what) {
	case W_SPAWN:
		if ((id = json_string_value(json_object_get(r,
		    "agent_id"))) == NULL)
			die("spawn without agent_id");
		k = ctl_send(c, "wait", "\"targets\":[\"%s\"],"
		    "\"timeout_ms\":60000", id);
		slot_at(v, cap, k)->what = W_WAIT;
		(*v)[k].agent = strdup(id);
		break;
	case W_WAIT:
		st = json_object_get(json_object_get(r, "status"), agent);
		if (json_is_true(json_object_get(r, "timed_out")) ||
		    strcmp(json_string_value(st) ? json_string_value(st) : "",
		    "completed") != 0) {
			errno = 0;
			die("an agent did not complete");
		}
		k = ctl_send(c, "close", "\"target\":\"%s\"", agent);
		slot_at(v, cap, k)->what = W_CLOSE;
		if (*spawned < n) {
			slot_at(v, cap, spawn(c, cmd))->what = W_SPAWN;
			(*spawned)++;
		}
		break;
	case W_CLOSE:
		closed = 1;
		break;
	default:
		errno = 0;
		die("an answer to nothing asked");
	}
	free(agent);
	json_decref(r);
	return closed;
}

/* Figure 1: N spawn -> wait -> close lifecycles with J in flight. */
static void
lifecycles(const char *sup, const char *root, long n, long j, const char *cmd)
{
	struct ctl	 c;
	struct slot	*v = NULL;
	size_t		 cap = 0;
	long		 spawned = 0, closed = 0;
	double		 t0 = now();

	ctl_open(&c, sup, root);
	while (spawned < n && spawned < j) {
		slot_at(&v, &cap, spawn(&c, cmd))->what = W_SPAWN;
		spawned++;
	}
	while (closed < n)
		closed += life_step(&c, &v, &cap, cmd, n, &spawned);
	ctl_finish(&c);
	printf("{\"seconds\": %.6f}\n", now() - t0);
	free(v);
}

/* Poll `list` until the one agent has left pending_init. */
static void
wait_running(struct ctl *c, const char *agent)
{
	json_t		*r;
	const char	*st;
	int		 i;

	for (i = 0; i < 6000; i++) {
		ctl_send(c, "list", "");
		r = ctl_reply(c);
		st = json_string_value(json_object_get(json_object_get(r,
		    "agents"), agent));
		if (st != NULL && strcmp(st, "pending_init") != 0) {
			if (strcmp(st, "running") != 0) {
				errno = 0;
				die("agent not running");
			}
			json_decref(r);
			return;
		}
		json_decref(r);
		usleep(5000);
	}
	errno = 0;
	die("agent did not start");
}

/* N prepared lines sent one at a time, each answer awaited; microseconds. */
static double
timed_rounds(struct ctl *c, char **lines, long n)
{
	double	t0 = now();
	long	i;

	for (i = 0; i < n; i++) {
		ctl_write(c, lines[i], strlen(lines[i]));
		if (strstr(ctl_line(c), "\"ok\":true") == NULL) {
			errno = 0;
			die("a round trip failed");
		}
	}
	return (now() - t0) * 1e6 / (double)n;
}

/* Figure 2: N sequential send_input round trips, then N `list` ones. */
static void
roundtrip(const char *sup, const char *root, long n, long size,
    const char *cmd)
{
	struct ctl	 c;
	json_t		*r;
	char		*agent, *text, **in, **ls;
	double		 us_in, us_list;
	long		 i;

	if ((text = calloc(1, (size_t)size + 1)) == NULL ||
	    (in = calloc((size_t)n, sizeof *in)) == NULL ||
	    (ls = calloc((size_t)n, sizeof *ls)) == NULL)
		die("calloc");
	memset(text, 'x', (size_t)size);
	ctl_open(&c, sup, root);
	spawn(&c, cmd);
	r = ctl_reply(&c);
	agent = strdup(json_string_value(json_object_get(r, "agent_id")));
	json_decref(r);
	wait_running(&c, agent);
	for (i = 0; i < 50; i++) {	/* both paths warm before timing */
		ctl_send(&c, "send_input", "\"target\":\"%s\",\"message\":"
		    "\"%s\"", agent, text);
		json_decref(ctl_reply(&c));
		ctl_send(&c, "list", "");
		json_decref(ctl_reply(&c));
	}
	for (i = 0; i < n; i++) {
		if (asprintf(&in[i], "{\"id\":%ld,\"verb\":\"send_input\","
		    "\"target\":\"%s\",\"message\":\"%s\"}\n", ++c.next_id,
		    agent, text) < 0 ||
		    asprintf(&ls[i], "{\"id\":0,\"verb\":\"list\"}\n") < 0)
			die("asprintf");
	}
	us_in = timed_rounds(&c, in, n);
	us_list = timed_rounds(&c, ls, n);
	ctl_send(&c, "close", "\"target\":\"%s\",\"grace_ms\":200", agent);
	json_decref(ctl_reply(&c));
	ctl_finish(&c);
	printf("{\"send_input_us\": %.3f, \"list_us\": %.3f}\n", us_in,
	    us_list);
	for (i = 0; i < n; i++) {
		free(in[i]);
		free(ls[i]);
	}
	free(in);
	free(ls);
	free(text);
	free(agent);
}

/* Dispatch on the figure's name; usage errors exit 2. */
int
main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 7 && strcmp(argv[1], "lifecycles") == 0)
		lifecycles(argv[2], argv[3], strtol(argv[4], NULL, 10),
		    strtol(argv[5], NULL, 10), argv[6]);
	else if (argc == 7 && strcmp(argv[1], "roundtrip") == 0)
		roundtrip(argv[2], argv[3], strtol(argv[4], NULL, 10),
		    strtol(argv[5], NULL, 10), argv[6]);
	else {
		fprintf(stderr, "usage: ctlbench lifecycles SUP ROOT N J CMD\n"
		    "       ctlbench roundtrip SUP ROOT N SIZE CMD\n");
		return 2;
	}
	return 0;
}
