/*
 * cmd-serve.c: `ccw-supervisor serve`: options, one host and verb table
 * per project root (every host on one bus), the token, the HTTP server
 * (supervisor/api/serve.c), the control socket (supervisor/api/sock.c)
 * on the first root's verb table, the loops a killed serve left running
 * resumed, signals (SIGHUP: every root's configuration read again;
 * SIGTERM, SIGINT: every loop and agent stopped, exit 4), systemd told.
 */
#include <config.h>

#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "api.h"
#include "bus.h"
#include "chan.h"
#include "cmdutil.h"
#include "host.h"
#include "log.h"
#include "mcp.h"
#include "meter.h"
#include "retire.h"
#include "sdnotify.h"
#include "serve-config.h"
#include "serve.h"
#include "sock.h"
#include "stopbound.h"
#include "sup.h"
#include "xmalloc.h"

#define SERVE_ROOTS_MAX	64
#define SERVE_TOKEN_MAX	4096
#define SERVE_HOSTS_MAX	64

/* One project root: its options, agent table, host and verb table. */
struct serve_side {
	struct cmd_opts		 o;
	struct plan_base	 plan;		/* /api/agents' spawns */
	struct sup		 sup;
	struct retire		*retire;	/* sup's finished agents */
	struct host		*host;
	struct api		*api;
	struct loop_guard	 guard;		/* root 0: /api/agents' ids */
	struct serve_config	 live;		/* the configuration in force */
	size_t			 index;		/* in sc->sides, sc->roots */
	struct serve_cmd	*sc;
};

struct serve_cmd {
	struct event_base	*base;
	struct serve_side	*sides;
	struct serve_root	*roots;
	size_t			 n;
	struct bus		*bus;
	struct serve		*srv;
	struct sock		*sock;		/* NULL: --no-socket */
	struct event		*sigs[CMD_NSIG];
	char			*token;
	char			*notify;	/* $NOTIFY_SOCKET, or NULL */
	int			 stopping;
	uint64_t		 grace_ms;
};

/* The --help text. */
static void
serve_usage(FILE *fp)
{
	fprintf(fp,
"usage: ccw-supervisor serve [-C ROOT]... [--http ADDR:PORT]\n"
"           [--socket PATH | --no-socket] [--token-file F] [--jobs N]\n"
"           [--config F] [--grace-ms N] [--allowed-host NAME]...\n"
"           [--containment cgroup|sweep|auto]\n"
"\n"
"Host every loop of the project roots (default: the current directory)\n"
"in one process and serve them over HTTP/JSON (default 127.0.0.1:3456):\n"
"CCW's /api/loops/v2 routes, /api/agents (the verbs), /api/events\n"
"(Server-Sent Events), /mcp (an MCP server over Streamable HTTP: the\n"
"agent and loop tools), /metrics, /health.  Every /api/ route and /mcp\n"
"need \"Authorization: Bearer TOKEN\" (or the ccw_token cookie);\n"
"GET /api/auth/token gives both to loopback clients.  The token is\n"
"random per start, or the content of --token-file (mode 0600), which an\n"
"address beyond loopback requires.  Every route but /health first\n"
"checks Host and Origin (DNS rebinding, other sites): they must name\n"
"localhost, 127.0.0.1, [::1] or the --http host (an Origin with serve's\n"
"port), or an --allowed-host NAME[:PORT] (repeatable; a reverse\n"
"proxy's name): else 421 or 403.\n"
"Loops left running by a serve that died are resumed.  --jobs N: at\n"
"most N loops run at once (a start beyond is 503).  The control\n"
"socket (`control --connect PATH` is its client) listens at --socket\n"
"PATH, default $XDG_RUNTIME_DIR/ccw-supervisor/serve.sock, without\n"
"XDG_RUNTIME_DIR the first root's state directory's serve.sock; a\n"
"live one is never taken over (exit 1), a stale one is replaced.\n"
"A root's configuration (.loop/config.json, CCW's cli-tools.json) is\n"
"read again as each loop starts and on SIGHUP; one that does not load\n"
"leaves the one in force (a CONFIG_WARNING event says why).  Under a\n"
"systemd Type=notify unit ($NOTIFY_SOCKET) serve sends READY=1 once it\n"
"listens, RELOADING=1 on SIGHUP and STOPPING=1 on SIGTERM.\n"
"SIGTERM or SIGINT stops every loop and agent and exits 4 (the\n"
"shipped unit, ccw-supervisor.service, has SuccessExitStatus=4), within\n"
"the greater of --grace-ms and 1 s, plus 2 s, whatever the disk does.\n"
"See ccw-supervisor(1).\n");
}

/* Close to the hard limit of open files: every client is a descriptor. */
static void
serve_raise_nofile(void)
{
	struct rlimit	rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			log_warn("setrlimit RLIMIT_NOFILE");
	}
}

/* A random token: 32 hex digits from the kernel. */
static char *
serve_token_random(void)
{
	unsigned char	 b[16];
	char		*t = xmalloc(sizeof b * 2 + 1);
	size_t		 i;
	int		 fd, ok = 0;

	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) >= 0) {
		ok = read(fd, b, sizeof b) == (ssize_t)sizeof b;
		close(fd);
	}
	if (!ok)
		fatalx("serve: no random bytes for the token");
	for (i = 0; i < sizeof b; i++)
		snprintf(t + 2 * i, 3, "%02x", b[i]);
	return t;
}

/*
 * The token file's content (one line, blanks trimmed): refused unless
 * it is a regular file only its owner can read (0600 or stricter).
 */
static char *
serve_token_file(const char *path, char **err)
{
	struct stat	 sb;
	char		 buf[SERVE_TOKEN_MAX + 1];
	ssize_t		 n;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		xasprintf(err, "--token-file %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    (sb.st_mode & 077) != 0) {
		xasprintf(err, "--token-file %s: must be a regular file of "
		    "mode 0600 (group and others may not read it)", path);
		close(fd);
		return NULL;
	}
	n = read(fd, buf, SERVE_TOKEN_MAX);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (buf[0] == '\0' || strpbrk(buf, " \t") != NULL) {
		xasprintf(err, "--token-file %s: the first line must be the "
		    "token (no blanks)", path);
		return NULL;
	}
	return xstrdup(buf);
}

/* After a signal: exit once no loop runs and no agent lives. */
static void
serve_maybe_exit(struct serve_cmd *sc)
{
	size_t	i;

	if (!sc->stopping)
		return;
	for (i = 0; i < sc->n; i++)
		if (host_nloops(sc->sides[i].host) != 0 ||
		    sc->sides[i].sup.nlive != 0)
			return;
	event_base_loopbreak(sc->base);
}

/* A hosted loop ended: maybe relaunched (a resumed pause), maybe the end. */
static void
serve_cmd_loop_end(void *arg, const char *id, int code)
{
	struct serve_side	*sd = arg;

	if (!sd->sc->stopping)
		serve_loop_done(sd->sc->srv, id, code);
	serve_maybe_exit(sd->sc);
}

/*
 * An agent of /api/agents finished: its outcome, duration and usage go
 * into its root's meter as a loop's worker_result does (no loop counts
 * it otherwise), older finished ones may retire, then serve may exit.
 * One closed while serve frees its sides (their hosts gone) counts
 * nowhere and ends nothing.
 */
static void
serve_cmd_agent_done(struct agent *a, void *arg)
{
	struct serve_side	*sd = arg;
	json_t			*res;

	if (sd->host == NULL)
		return;
	res = report_agent(a);
	meter_event(host_meter(sd->host), "worker_result", res, 0);
	json_decref(res);
	retire_soon(sd->retire);
	serve_maybe_exit(sd->sc);
}

/* /api/agents spawns in root 0 only (its guard names their ids). */
static int
serve_cmd_plan(void *arg, const struct api_spawn *sp, struct agent_req *ar,
    char **err)
{
	struct serve_side	*sd = arg;

	if (sd != &sd->sc->sides[0]) {
		*err = xstrdup("agents are spawned in the first root");
		return -1;
	}
	return cmd_plan_spawn(&sd->plan, &sd->guard, &sd->sup, sp, ar, err);
}

/*
 * The root's configuration in force, now sd->live.now, for all that
 * reads it: the host (servecfg_reload told it), /api/agents' plans, the
 * task routes' tool check.
 */
static void
serve_side_use(struct serve_side *sd)
{
	sd->plan.config = sd->live.now;
	sd->sc->roots[sd->index].config = sd->live.now;
}

/* A loop of the root starts: its configuration read again, as run does. */
static void
serve_cmd_refresh(void *arg, struct host *h)
{
	struct serve_side	*sd = arg;

	(void)h;
	if (servecfg_reload(&sd->live, "a loop starts") == 1)
		serve_side_use(sd);
}

/*
 * SIGHUP: every root's configuration read again (one that does not load
 * keeps the one in force); serve goes on.  systemd hears RELOADING=1,
 * then READY=1.
 */
static void
serve_cmd_reload(struct serve_cmd *sc)
{
	size_t	i;

	log_info("SIGHUP: reading every root's configuration again");
	sdnotify_reloading(sc->notify);
	for (i = 0; i < sc->n; i++)
		if (servecfg_reload(&sc->sides[i].live, "SIGHUP") == 1)
			serve_side_use(&sc->sides[i]);
	sdnotify_send(sc->notify, "READY=1");
}

/*
 * SIGTERM, SIGINT: every loop stopped, every agent closed, exit 4 (the
 * shipped unit's SuccessExitStatus), within the tools' grace and
 * STOPBOUND_MS whatever the disk does.  SIGHUP: the configuration again.
 */
static void
serve_cmd_signal(evutil_socket_t sig, short ev, void *arg)
{
	struct serve_cmd	*sc = arg;
	size_t			 i;
	char			 why[64];

	(void)ev;
	if (sc->stopping)
		return;
	if (sig == SIGHUP) {
		serve_cmd_reload(sc);
		return;
	}
	log_warnx("signal %d: stopping every loop and agent", (int)sig);
	sdnotify_send(sc->notify, "STOPPING=1");
	sc->stopping = 1;
	cmd_signal_why(why, sizeof why, "serve", (int)sig);
	for (i = 0; i < sc->n; i++) {
		host_stop_all(sc->sides[i].host, why);
		api_close_all(sc->sides[i].api, sc->grace_ms);
	}
	(void)stopbound_arm((unsigned)(sc->grace_ms > SUP_STOP_GRACE_MS ?
	    sc->grace_ms : SUP_STOP_GRACE_MS) + STOPBOUND_MS, EXIT_STOPPED,
	    "serve");
	serve_maybe_exit(sc);
}

/* One root's side: options loaded, agent table, host on the bus, api. */
static int
serve_side_open(struct serve_cmd *sc, size_t i, const char *root,
    const char *config, const char *grace, const char *containment)
{
	struct serve_side	*sd = &sc->sides[i];
	struct host_cfg		 hc;
	struct api_host		 ah;
	char			*err = NULL;

	cmd_opts_init(&sd->o);
	sd->sc = sc;
	sd->index = i;
	sd->o.root = root;
	sd->o.config_path = config;
	if ((grace != NULL && cmd_opts_set(&sd->o, 'G', grace) != 0) ||
	    (containment != NULL && cmd_opts_set(&sd->o, CMD_OPT_CONTAINMENT,
	    containment) != 0) ||
	    cmd_opts_load(&sd->o, &err) != 0) {
		if (err != NULL)
			fprintf(stderr, "ccw-supervisor serve: %s\n", err);
		free(err);
		return -1;
	}
	if (sup_init(&sd->sup, sc->base, i > 0 ? sc->sides[0].sup.children :
	    NULL, sd->o.state_dir, NULL, &err) != 0)
		fatalx("serve: %s", err);
	/* root 0's guard opens at /api/agents' first spawn (cmd_plan_spawn) */
	sd->guard.lock_fd = sd->guard.workers_fd = sd->guard.dirfd = -1;
	memset(&hc, 0, sizeof hc);
	hc.config = &sd->o.cfg;
	hc.state_dir = sd->o.state_dir;
	hc.root = sd->o.cwd;
	hc.children = sd->sup.children;
	hc.bus = sc->bus;
	hc.refresh = serve_cmd_refresh;
	hc.refresh_arg = sd;
	hc.log_lines = HOST_LOG_LINES;	/* LOOP_LOG_ENTRY on /api/events */
	cmd_opts_overrides(&sd->o, &hc.over);
	if ((sd->host = host_new(sc->base, &hc, &err)) == NULL)
		fatalx("serve: %s", err);
	servecfg_init(&sd->live, &sd->o.cfg);
	sd->live.file = config;
	sd->live.root = sd->o.cwd;
	sd->live.host = sd->host;
	sd->live.bus = sc->bus;
	cmd_plan_base(&sd->o, &sd->plan);
	memset(&ah, 0, sizeof ah);
	ah.sup = &sd->sup;
	ah.state_dir = sd->o.state_dir;
	ah.root = sd->o.cwd;
	ah.grace_ms = sc->grace_ms;
	ah.plan = serve_cmd_plan;
	ah.plan_arg = sd;
	ah.loops = sd->host;
	ah.loop_end = serve_cmd_loop_end;
	ah.loop_end_arg = sd;
	sd->api = api_new(&ah);
	sd->retire = cmd_retire_new(&sd->o, &sd->sup);
	sd->sup.done_extra = serve_cmd_agent_done;
	sd->sup.done_extra_arg = sd;
	/* /mcp's waits report the progress of root 0's agents from the bus */
	sd->sup.progress = mcp_agent_progress;
	sd->sup.progress_arg = sc->bus;
	sc->roots[i].root = sd->o.cwd;
	sc->roots[i].state_dir = sd->o.state_dir;
	sc->roots[i].host = sd->host;
	sc->roots[i].api = sd->api;
	sc->roots[i].sup = &sd->sup;
	sc->roots[i].config = &sd->o.cfg;
	sc->n = i + 1;
	return 0;
}

/*
 * Everything, in reverse: HTTP (it reads the socket's counters), every
 * api (it drops the socket's calls), the socket (it leaves the bus the
 * hosts publish on), then each host and agent table (root 0's reaper
 * last).
 */
static void
serve_cmd_free(struct serve_cmd *sc)
{
	size_t	i;

	serve_free(sc->srv);
	for (i = 0; i < CMD_NSIG; i++)
		if (sc->sigs[i] != NULL)
			event_free(sc->sigs[i]);
	for (i = sc->n; i-- > 0; ) {
		api_free(sc->sides[i].api);
		sc->sides[i].api = NULL;
	}
	sock_free(sc->sock);
	for (i = sc->n; i-- > 0; ) {
		host_free(sc->sides[i].host);
		sc->sides[i].host = NULL;	/* its agents meter no more */
		servecfg_free(&sc->sides[i].live);
		retire_free(sc->sides[i].retire);
		sup_free(&sc->sides[i].sup);
		loopguard_close(&sc->sides[i].guard);
		cmd_opts_free(&sc->sides[i].o);
	}
	bus_free(sc->bus);
	free(sc->sides);
	free(sc->roots);
	free(sc->token);
	free(sc->notify);
	event_base_free(sc->base);
}

/*
 * The control socket on root 0's verb table and the one bus: at path, or
 * by default in the user's runtime directory (its ccw-supervisor/ made
 * 0700), else in the first root's state directory.  0, or -1 said.
 */
static int
serve_cmd_socket(struct serve_cmd *sc, const char *path)
{
	const char	*run = getenv("XDG_RUNTIME_DIR");
	struct sock_cfg	 cfg;
	char		*def = NULL, *dir, *err = NULL;

	if (path == NULL) {
		def = sock_default_path(run, sc->sides[0].o.state_dir);
		if (run != NULL && run[0] == '/') {
			xasprintf(&dir, "%s/ccw-supervisor", run);
			if (mkdir(dir, 0700) != 0 && errno != EEXIST)
				log_warn("mkdir %s", dir);
			free(dir);
		}
		path = def;
	}
	memset(&cfg, 0, sizeof cfg);
	cfg.path = path;
	cfg.api = sc->sides[0].api;
	cfg.bus = sc->bus;
	if ((sc->sock = sock_listen(sc->base, &cfg, &err)) == NULL) {
		fprintf(stderr, "ccw-supervisor serve: --socket: %s\n", err);
		free(err);
		free(def);
		return -1;
	}
	printf("ccw-supervisor serve: control socket %s\n", path);
	free(def);
	return 0;
}

/* serve's command line. */
struct serve_args {
	const char	*roots[SERVE_ROOTS_MAX], *addr;
	const char	*token_file, *config, *grace, *sock_path;
	const char	*containment;
	const char	*hosts[SERVE_HOSTS_MAX];
	size_t		 nroots, nhosts;
	unsigned long	 jobs;
	int		 no_sock;
};

/* One option into sa: 0, or -1 with the reason said. */
static int
serve_option(struct serve_args *sa, int ch, const char *arg)
{
	char	*err = NULL, *end;

	switch (ch) {
	case 'C':
		if (sa->nroots == SERVE_ROOTS_MAX) {
			fprintf(stderr, "ccw-supervisor serve: at most %d "
			    "roots\n", SERVE_ROOTS_MAX);
			return -1;
		}
		sa->roots[sa->nroots++] = arg;
		return 0;
	case 'H': sa->addr = arg; return 0;
	case 'k': sa->token_file = arg; return 0;
	case 'f': sa->config = arg; return 0;
	case 'G': sa->grace = arg; return 0;
	case CMD_OPT_CONTAINMENT: sa->containment = arg; return 0;
	case 'S': sa->sock_path = arg; return 0;
	case 'N': sa->no_sock = 1; return 0;
	case 'A':
		if (sa->nhosts == SERVE_HOSTS_MAX) {
			fprintf(stderr, "ccw-supervisor serve: at most %d "
			    "--allowed-host\n", SERVE_HOSTS_MAX);
			return -1;
		}
		if (servehost_valid(arg, &err) != 0) {
			fprintf(stderr, "ccw-supervisor serve: %s\n", err);
			free(err);
			return -1;
		}
		sa->hosts[sa->nhosts++] = arg;
		return 0;
	case 'j':
		sa->jobs = strtoul(arg, &end, 10);
		if (*arg < '0' || *arg > '9' || *end != '\0' || sa->jobs == 0) {
			fprintf(stderr, "ccw-supervisor serve: --jobs wants a "
			    "positive number\n");
			return -1;
		}
		return 0;
	}
	serve_usage(stderr);
	return -1;
}

/*
 * The command line into sa (default root ".", address 127.0.0.1:3456):
 * EXIT_OK, or the exit code; *done after --help.
 */
static int
serve_options(struct serve_args *sa, int argc, char **argv, int *done)
{
	static const struct option longopts[] = {
		{ "http", required_argument, NULL, 'H' },
		{ "token-file", required_argument, NULL, 'k' },
		{ "config", required_argument, NULL, 'f' },
		{ "grace-ms", required_argument, NULL, 'G' },
		{ "containment", required_argument, NULL, CMD_OPT_CONTAINMENT },
		{ "jobs", required_argument, NULL, 'j' },
		{ "socket", required_argument, NULL, 'S' },
		{ "no-socket", no_argument, NULL, 'N' },
		{ "allowed-host", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int	ch;

	memset(sa, 0, sizeof *sa);
	sa->addr = "127.0.0.1:3456";
	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1) {
		if (ch == 'h') {
			serve_usage(stdout);
			*done = 1;
			return EXIT_OK;
		}
		if (serve_option(sa, ch, optarg) != 0)
			return EXIT_USAGE;
	}
	if (optind != argc || (sa->no_sock && sa->sock_path != NULL)) {
		serve_usage(stderr);
		return EXIT_USAGE;
	}
	if (sa->nroots == 0)
		sa->roots[sa->nroots++] = ".";
	return EXIT_OK;
}

/*
 * The HTTP server on every root, listening at sa->addr (an address
 * beyond loopback only with a --token-file): 0, or -1 said.
 */
static int
serve_cmd_http(struct serve_cmd *sc, const struct serve_args *sa)
{
	struct serve_cfg	 cfg;
	char			*err = NULL;

	memset(&cfg, 0, sizeof cfg);
	cfg.roots = sc->roots;
	cfg.nroots = sc->n;
	cfg.bus = sc->bus;
	cfg.token = sc->token;
	cfg.jobs = sa->jobs;
	cfg.sock = sc->sock;
	cfg.limits = (struct http_limits)HTTP_LIMITS_DEFAULT;
	cfg.allowed_hosts = sa->hosts;
	cfg.nallowed = sa->nhosts;
	if ((sc->srv = serve_new(sc->base, &cfg, &err)) == NULL ||
	    serve_listen(sc->srv, sa->addr, &err) != 0) {
		fprintf(stderr, "ccw-supervisor serve: --http %s: %s\n",
		    sa->addr, err);
		free(err);
		return -1;
	}
	if (!serve_loopback(sc->srv) && sa->token_file == NULL) {
		fprintf(stderr, "ccw-supervisor serve: --http %s is beyond "
		    "loopback: give --token-file (mode 0600)\n", sa->addr);
		return -1;
	}
	return 0;
}

/*
 * Everything serve runs on before HTTP: the token, the base, the bus,
 * every root's side and the control socket.  EXIT_OK, or the exit code.
 */
static int
serve_cmd_open(struct serve_cmd *sc, const struct serve_args *sa)
{
	char	*err = NULL;
	size_t	 i;

	if (sa->token_file != NULL &&
	    (sc->token = serve_token_file(sa->token_file, &err)) == NULL) {
		fprintf(stderr, "ccw-supervisor serve: %s\n", err);
		free(err);
		return EXIT_USAGE;
	}
	if (sc->token == NULL)
		sc->token = serve_token_random();
	serve_raise_nofile();
	signal(SIGPIPE, SIG_IGN);	/* a client gone mid-write: EPIPE */
	if ((sc->base = chan_base_new()) == NULL)
		fatalx("cannot create the event loop");
	sc->bus = bus_new(HOST_BUS_KEEP);
	sc->sides = xcalloc(sa->nroots, sizeof *sc->sides);
	sc->roots = xcalloc(sa->nroots, sizeof *sc->roots);
	sc->grace_ms = API_GRACE_MS;
	for (i = 0; i < sa->nroots; i++)
		if (serve_side_open(sc, i, sa->roots[i], sa->config,
		    sa->grace, sa->containment) != 0)
			return EXIT_USAGE;
	if (sc->sides[0].o.have_grace)
		sc->grace_ms = sc->sides[0].o.grace_ms;
	/* before HTTP: a second serve on a live socket stops here (exit 1) */
	if (!sa->no_sock && serve_cmd_socket(sc, sa->sock_path) != 0)
		return EXIT_FAILED;
	return EXIT_OK;
}

int
cmd_serve(int argc, char **argv)
{
	struct serve_args	 sa;
	struct serve_cmd	 sc;
	const char		*colon;
	size_t			 n;
	int			 rc, done = 0;

	if ((rc = serve_options(&sa, argc, argv, &done)) != EXIT_OK || done)
		return rc;
	memset(&sc, 0, sizeof sc);
	sc.notify = sdnotify_take();
	if ((rc = serve_cmd_open(&sc, &sa)) != EXIT_OK)
		goto out;
	rc = EXIT_USAGE;
	if (serve_cmd_http(&sc, &sa) != 0)
		goto out;
	cmd_signals(sc.base, sc.sigs, serve_cmd_signal, &sc);
	/* the address without its port: the line tests and scripts read */
	colon = strrchr(sa.addr, ':');
	printf("ccw-supervisor serve: listening on http://%.*s:%d\n",
	    (int)(colon != NULL ? colon - sa.addr : (ptrdiff_t)strlen(sa.addr)),
	    sa.addr, serve_port(sc.srv));
	fflush(stdout);
	sdnotify_send(sc.notify, "READY=1");
	n = (size_t)serve_resume(sc.srv);
	if (n > 0)
		log_info("resuming %zu loop(s) left running", n);
	event_base_dispatch(sc.base);
	rc = sc.stopping ? EXIT_STOPPED : EXIT_OK;
out:
	if (sc.base != NULL)	/* a token file refused: nothing made yet */
		serve_cmd_free(&sc);
	else
		free(sc.notify);
	return rc;
}
