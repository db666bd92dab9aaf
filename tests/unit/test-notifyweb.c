/*
 * test-notifyweb.c: notify-webhook.sh's driver of the webhook sink: it
 * parses a sink object, sends a body (or several at once) on an event
 * base, and prints each delivery's end; or frees the sink mid-flight.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "notify.h"

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

/*
 * test-notifyweb [-c MS] [-n N] SINK-JSON BODY: exit 0 when every
 * delivery ended ok, 1 when one failed, 2 on a parse error or bad usage,
 * 3 when the loop ran dry with deliveries unended (after -c: expected).
 */
int
main(int argc, char **argv)
{
	struct run	 r = { NULL, 1, 0 };
	struct event	*cancel = NULL;
	struct timeval	 tv;
	json_error_t	 jerr;
	json_t		*conf;
	void		*sink = NULL;
	char		*err = NULL;
	long		 cancel_ms = -1;
	int		 c, i, n = 1;

	while ((c = getopt(argc, argv, "c:n:")) != -1) {
		if (c == 'c')
			cancel_ms = atol(optarg);
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
	notify_webhook.free(sink);
	event_base_free(r.base);
	return r.left > 0 ? 3 : r.failed > 0 ? 1 : 0;
}
