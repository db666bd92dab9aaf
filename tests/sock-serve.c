/*
 * sock-serve.c: the control socket (supervisor/api/sock.c) mounted on a
 * `control` session's host and api, for tests/regress/sock-*.sh before
 * serve exists.  Usage:
 *   sock-serve SOCKET [-C ROOT] [--state-dir DIR] [--config F]
 *       [-o OUT_MAX] [-n CONNS] [-m MODE]
 * Prints "ready PID" on stdout once listening; a refusal goes to stderr,
 * exit 1.  -m chmods the socket after listening (to reach the uid check
 * past the file's mode).  One verb of its own through sock_cfg.local:
 *   {"verb": "publish", "n": N, "bytes": B}  N events "tick" on the bus,
 *   each {"i": K, "pad": B bytes}; the reply has the last seq.
 * SIGTERM: every agent closed, every loop stopped, all freed, exit 0.
 */
#include <config.h>

#include <sys/stat.h>

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "api.h"
#include "bus.h"
#include "cmdutil.h"
#include "control.h"
#include "host.h"
#include "sock.h"
#include "xmalloc.h"

/* {"verb": "publish"}: events on the bus for the subscribers' tests. */
static int
ss_local(void *arg, const json_t *req, json_t **reply)
{
	struct control	*c = arg;
	const char	*verb = json_string_value(json_object_get(req, "verb"));
	json_int_t	 n, bytes, i;
	uint64_t	 seq = 0;
	char		*pad;

	if (verb == NULL || strcmp(verb, "publish") != 0)
		return 0;
	n = json_integer_value(json_object_get(req, "n"));
	bytes = json_integer_value(json_object_get(req, "bytes"));
	if (bytes < 0 || bytes > (1 << 20))
		bytes = 0;
	pad = xmalloc((size_t)bytes + 1);
	memset(pad, 'x', (size_t)bytes);
	pad[bytes] = '\0';
	for (i = 0; i < n; i++)
		seq = bus_publish(host_bus(c->host), "tick",
		    json_pack("{s:I, s:s}", "i", i, "pad", pad));
	free(pad);
	*reply = json_pack("{s:b, s:I}", "ok", 1, "last", (json_int_t)seq);
	return 1;
}

/* SIGTERM: what control does on one; the base breaks when all is over. */
static void
ss_term(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	control_stop(arg, "sock-serve got SIGTERM");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "state-dir", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 }
	};
	struct sock_cfg	 sc;
	struct cmd_opts	 o;
	struct control	 c;
	struct sock	*s;
	struct event	*term;
	char		*err = NULL;
	int		 ch, mode = -1;

	memset(&sc, 0, sizeof sc);
	cmd_opts_init(&o);
	while ((ch = getopt_long(argc, argv, "C:o:n:m:", longopts,
	    NULL)) != -1) {
		if (ch == 'o')
			sc.out_max = strtoul(optarg, NULL, 10);
		else if (ch == 'n')
			sc.conns_max = strtoul(optarg, NULL, 10);
		else if (ch == 'm')
			mode = (int)strtol(optarg, NULL, 8);
		else if (cmd_opts_set(&o, ch, optarg) != 0)
			return 2;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: sock-serve SOCKET [-C ROOT] "
		    "[--state-dir DIR] [--config F] [-o N] [-n N] [-m MODE]\n");
		return 2;
	}
	if (cmd_opts_load(&o, &err) != 0) {
		fprintf(stderr, "sock-serve: %s\n", err);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);	/* a client gone mid-write */
	if (control_open(&c, &o) != 0)
		return 1;
	sc.path = argv[optind];
	sc.api = c.api;
	sc.bus = host_bus(c.host);
	sc.local = ss_local;
	sc.local_arg = &c;
	if ((s = sock_listen(c.base, &sc, &err)) == NULL) {
		fprintf(stderr, "sock-serve: %s\n", err);
		free(err);
		control_close(&c);
		cmd_opts_free(&o);
		return 1;
	}
	if (mode >= 0)
		chmod(sc.path, (mode_t)mode);
	term = evsignal_new(c.base, SIGTERM, ss_term, &c);
	evsignal_add(term, NULL);
	printf("ready %ld\n", (long)getpid());
	fflush(stdout);
	event_base_dispatch(c.base);

	event_free(term);
	api_free(c.api);	/* before the sock: it drops our calls */
	c.api = NULL;
	sock_free(s);		/* before the host: it leaves the bus */
	control_close(&c);
	cmd_opts_free(&o);
	return 0;
}
