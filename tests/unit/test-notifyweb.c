/*
 * test-notifyweb.c: the webhook sink.  Alone, TAP checks that need no
 * receiver (config refusals, refused connects, a free mid-flight); with
 * arguments, notify-webhook.sh's driver of one sink on an event base.
 */
#include <config.h>

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <netinet/in.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "notify.h"
#include "tap.h"

extern const struct notify_sink_type notify_webhook;	/* notifyweb.c */

/* What the run waits for: the deliveries still to end. */
struct run {
	struct event_base	*base;
	int			 left;
	int			 failed;
};

/* One delivery's end, one line the shell test greps. */
static void
done_cb(void *arg, int ok, const char *error, unsigned attempts)
{
	struct run	*r = arg;

	printf("done ok=%d attempts=%u error=%s\n", ok, attempts,
	    error != NULL ? error : "-");
	fflush(stdout);
	r->failed += !ok;
	if (--r->left == 0)
		event_base_loopbreak(r->base);
}

/* -c: the sink freed while its deliveries are in flight. */
static void
cancel_cb(evutil_socket_t fd, short what, void *arg)
{
	void	**sink = arg;

	(void)fd, (void)what;
	notify_webhook.free(*sink);
	*sink = NULL;
	printf("freed\n");
	fflush(stdout);
}

/* -F: the descriptors taken to exhaust the table, until MS passed. */
struct fill {
	int	fds[256];
	int	n;
};

/*
 * Exhaust the descriptor table (its soft limit lowered to 64 first, so
 * a few opens do it): the deliveries' first attempt finds no socket.
 */
static void
fill_take(struct fill *f)
{
	struct rlimit	rl;
	int		fd;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 64) {
		rl.rlim_cur = 64;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (f->n = 0; f->n < 256 && (fd = open("/dev/null", O_RDONLY |
	    O_CLOEXEC)) >= 0; f->n++)
		f->fds[f->n] = fd;
	printf("filled %s\n", f->n < 256 ? "to EMFILE" : "short of it");
	fflush(stdout);
}

/* The descriptors given back: the next attempt may connect. */
static void
fill_release_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fill	*f = arg;

	(void)fd, (void)what;
	if (f->n == 0)
		return;		/* given back already */
	while (f->n > 0)
		close(f->fds[--f->n]);
	printf("released\n");
	fflush(stdout);
}

/* parse of a sink object given as JSON text: 0 or -1 with *err. */
static int
try_parse(const char *text, char **err)
{
	json_t	*conf = json_loads(text, 0, NULL);
	void	*sink = NULL;
	int	 rc;

	free(*err);
	*err = NULL;
	rc = notify_webhook.parse(conf, "h", &sink, err);
	notify_webhook.free(sink);
	json_decref(conf);
	return rc;
}

/* A refusal whose message names key and says why. */
static void
check_refused(const char *text, const char *want, const char *desc)
{
	char	*err = NULL;
	int	 rc = try_parse(text, &err);

	tap_ok(rc == -1 && err != NULL && strstr(err, want) != NULL,
	    "%s: %s", desc, err != NULL ? err : "(accepted)");
	free(err);
}

/* The config: what is taken, what is refused, each naming its key. */
static void
check_config(const char *dir)
{
	char	 path[512], conf[1024], *err = NULL;
	FILE	*f;
	int	 i;

	tap_ok(try_parse("{\"type\":\"webhook\",\"url\":\"http://h/x\"}",
	    &err) == 0, "a URL alone is a sink (the defaults)");
	free(err);
	check_refused("{\"url\":\"https://h/x\"}",
	    "notify.sinks.h.url: https is not supported", "https");
	check_refused("{\"url\":\"ftp://h/x\"}", "notify.sinks.h.url: ", "ftp");
	check_refused("{}", "notify.sinks.h.url: ", "no url");
	check_refused("{\"url\":\"http://u:p@h/x\"}", "no user info",
	    "user info");
	check_refused("{\"url\":\"http://h/\",\"retry\":1}",
	    "notify.sinks.h.retry: unknown key", "an unknown key");
	check_refused("{\"url\":\"http://h/\",\"retries\":-1}",
	    "notify.sinks.h.retries: ", "negative retries");
	check_refused("{\"url\":\"http://h/\",\"timeout_ms\":0}",
	    "notify.sinks.h.timeout_ms: ", "a zero timeout");
	check_refused("{\"url\":\"http://h/\",\"backoff_ms\":\"1\"}",
	    "notify.sinks.h.backoff_ms: ", "a string backoff");
	snprintf(path, sizeof path, "%s/secret", dir);
	f = fopen(path, "w");
	fputs("s3cret\n", f);
	fclose(f);
	snprintf(conf, sizeof conf, "{\"url\":\"http://h/\","
	    "\"secret_file\":\"%s\"}", path);
	chmod(path, 0644);
	check_refused(conf, "notify.sinks.h.secret_file: ", "a secret of mode 0644");
	chmod(path, 0600);
	tap_ok(try_parse(conf, &err) == 0, "a secret of mode 0600");
	free(err);
	snprintf(path, sizeof path, "%s/fifo", dir);
	mkfifo(path, 0600);
	snprintf(conf, sizeof conf, "{\"url\":\"http://h/\","
	    "\"secret_file\":\"%s\"}", path);
	check_refused(conf, "regular file", "a FIFO (and the open not blocked)");
	snprintf(path, sizeof path, "%s/empty", dir);
	close(open(path, O_WRONLY | O_CREAT, 0600));
	snprintf(conf, sizeof conf, "{\"url\":\"http://h/\","
	    "\"secret_file\":\"%s\"}", path);
	check_refused(conf, "empty", "an empty secret");
	snprintf(path, sizeof path, "%s/long", dir);
	f = fopen(path, "w");
	for (i = 0; i < 5000; i++)
		fputc(i == 4096 ? '\n' : 'k', f);
	fclose(f);
	chmod(path, 0600);
	snprintf(conf, sizeof conf, "{\"url\":\"http://h/\","
	    "\"secret_file\":\"%s\"}", path);
	check_refused(conf, "longer than 4096 bytes", "a secret too long");
	unlink(path);
}

/* A port nobody listens on: bound, then closed. */
static int
closed_port(void)
{
	struct sockaddr_in	sa = { .sin_family = AF_INET };
	socklen_t		len = sizeof sa;
	int			fd = socket(AF_INET, SOCK_STREAM, 0), port;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&sa, sizeof sa);
	getsockname(fd, (struct sockaddr *)&sa, &len);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* A delivery's end, for the TAP checks. */
static void
tap_done_cb(void *arg, int ok, const char *error, unsigned attempts)
{
	int	*got = arg;

	got[0]++;
	got[1] = ok;
	got[2] = (int)attempts;
	tap_diag("done: ok=%d attempts=%u %s", ok, attempts,
	    error != NULL ? error : "");
}

/* Sends on a loop: a refused connection retried, a free mid-flight. */
static void
check_send(void)
{
	struct event_base	*base = event_base_new();
	char			 conf[256], *err = NULL;
	void			*sink = NULL;
	json_t			*j;
	int			 got[3] = { 0, -1, 0 };

	snprintf(conf, sizeof conf, "{\"url\":\"http://127.0.0.1:%d/x\","
	    "\"retries\":2,\"backoff_ms\":1}", closed_port());
	j = json_loads(conf, 0, NULL);
	notify_webhook.parse(j, "h", &sink, &err);
	json_decref(j);
	notify_webhook.send(sink, base, "{}", 2, tap_done_cb, got);
	tap_ok(got[0] == 0, "done is not called before send returns");
	event_base_dispatch(base);
	tap_ok(got[0] == 1 && got[1] == 0 && got[2] == 3,
	    "connection refused: tried 3 times, then failed (%d %d %d)",
	    got[0], got[1], got[2]);
	notify_webhook.free(sink);
	snprintf(conf, sizeof conf, "{\"url\":\"http://localhost:%d/x\","
	    "\"retries\":0}", closed_port());
	j = json_loads(conf, 0, NULL);
	notify_webhook.parse(j, "h", &sink, &err);
	json_decref(j);
	got[0] = 0;
	notify_webhook.send(sink, base, "{}", 2, tap_done_cb, got);
	tap_ok(event_base_dispatch(base) == 1 && got[0] == 1 && got[1] == 0,
	    "a name (resolved by evdns) refused: failed, the resolver idle");
	got[0] = 0;
	notify_webhook.send(sink, base, "{}", 2, tap_done_cb, got);
	notify_webhook.send(sink, base, "{}", 2, tap_done_cb, got);
	notify_webhook.free(sink);
	tap_ok(event_base_dispatch(base) == 1 && got[0] == 0,
	    "freed with two in flight: no done, nothing left on the loop");
	event_base_free(base);
	free(err);
}

/* The TAP run: in a temp directory of its own. */
static int
check_all(void)
{
	const char	*t = getenv("TMPDIR");
	char		 dir[256], path[300];

	snprintf(dir, sizeof dir, "%s/notifyweb.XXXXXX", t != NULL ? t : "/tmp");
	if (mkdtemp(dir) == NULL) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	check_config(dir);
	check_send();
	snprintf(path, sizeof path, "%s/secret", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/fifo", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/empty", dir);
	unlink(path);
	rmdir(dir);
	return tap_done();
}

/*
 * test-notifyweb [-c MS] [-F MS] [-n N] SINK-JSON BODY: exit 0 when
 * every delivery ended ok, 1 when one failed, 2 on a parse error or bad
 * usage, 3 when the loop ran dry with deliveries unended (after -c:
 * expected).  -F: the descriptor table exhausted before the send and
 * given back after MS (-1: never).
 */
int
main(int argc, char **argv)
{
	struct run	 r = { NULL, 1, 0 };
	struct event	*cancel = NULL, *release = NULL;
	struct fill	 fill = { .n = 0 };
	struct timeval	 tv;
	json_error_t	 jerr;
	json_t		*conf;
	void		*sink = NULL;
	char		*err = NULL;
	long		 cancel_ms = -1, fill_ms = -2;
	int		 c, i, n = 1;

	if (argc == 1)
		return check_all();
	while ((c = getopt(argc, argv, "c:F:n:")) != -1) {
		if (c == 'c')
			cancel_ms = atol(optarg);
		else if (c == 'F')
			fill_ms = atol(optarg);
		else if (c == 'n')
			n = atoi(optarg);
		else
			return 2;
	}
	if (argc - optind != 2 || n < 1)
		return 2;
	if ((conf = json_loads(argv[optind], 0, &jerr)) == NULL) {
		fprintf(stderr, "bad JSON: %s\n", jerr.text);
		return 2;
	}
	if (notify_webhook.parse(conf, "hook", &sink, &err) == -1) {
		printf("parse error: %s\n", err);
		free(err);
		json_decref(conf);
		return 2;
	}
	json_decref(conf);
	r.base = event_base_new();
	r.left = n;
	if (fill_ms >= -1)
		fill_take(&fill);
	if (fill_ms >= 0) {
		tv.tv_sec = fill_ms / 1000;
		tv.tv_usec = (fill_ms % 1000) * 1000;
		release = evtimer_new(r.base, fill_release_cb, &fill);
		evtimer_add(release, &tv);
	}
	for (i = 0; i < n; i++)
		notify_webhook.send(sink, r.base, argv[optind + 1],
		    strlen(argv[optind + 1]), done_cb, &r);
	printf("sent %d\n", n);
	fflush(stdout);
	if (cancel_ms >= 0) {
		tv.tv_sec = cancel_ms / 1000;
		tv.tv_usec = (cancel_ms % 1000) * 1000;
		cancel = evtimer_new(r.base, cancel_cb, &sink);
		evtimer_add(cancel, &tv);
	}
	event_base_dispatch(r.base);
	if (cancel != NULL)
		event_free(cancel);
	if (release != NULL)
		event_free(release);
	if (fill_ms >= -1)
		fill_release_cb(-1, 0, &fill);	/* -F -1: given back at the end */
	notify_webhook.free(sink);
	event_base_free(r.base);
	return r.left > 0 ? 3 : r.failed > 0 ? 1 : 0;
}
