/*
 * notifyweb.c: the webhook sink type (notify.h), a row of notifysink.c's
 * table.  A stub until the webhook branch lands: its config is checked
 * ({url}), and every delivery fails "not built" (dead-lettered).
 */
#include <config.h>

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "notify.h"
#include "xmalloc.h"

/* One stub delivery: its failure told on the next turn. */
struct nweb_run {
	TAILQ_ENTRY(nweb_run)	 entry;
	struct nweb		*w;
	notify_done_fn		 done;
	void			*arg;
	struct event		*ev;
};

/* The sink: its url and the deliveries not yet told. */
struct nweb {
	char			*url;
	TAILQ_HEAD(, nweb_run)	 runs;
};

/* {"type": "webhook", "url": "..."}: only the url checked here. */
static int
nweb_parse(const json_t *conf, const char *name, void **sink, char **err)
{
	const char	*url = json_string_value(json_object_get(conf, "url"));
	struct nweb	*w;

	if (url == NULL || *url == '\0') {
		xasprintf(err, "notify.sinks.%s.url: expected a non-empty "
		    "string", name);
		return -1;
	}
	w = xcalloc(1, sizeof *w);
	w->url = xstrdup(url);
	TAILQ_INIT(&w->runs);
	*sink = w;
	return 0;
}

/* The failure, outside send. */
static void
nweb_fail_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct nweb_run	*r = arg;

	(void)fd;
	(void)ev;
	TAILQ_REMOVE(&r->w->runs, r, entry);
	r->done(r->arg, 0, "webhook: not built", 0);
	event_free(r->ev);
	free(r);
}

/* Every delivery fails, later, on base. */
static void
nweb_send(void *sink, struct event_base *base, const char *body, size_t len,
    notify_done_fn done, void *arg)
{
	struct nweb_run	*r = xcalloc(1, sizeof *r);

	(void)body;
	(void)len;
	r->w = sink;
	TAILQ_INSERT_TAIL(&r->w->runs, r, entry);
	r->done = done;
	r->arg = arg;
	r->ev = event_new(base, -1, 0, nweb_fail_cb, r);
	event_active(r->ev, EV_TIMEOUT, 0);
}

/* The deliveries not yet told (never told now), the url. */
static void
nweb_free(void *sink)
{
	struct nweb	*w = sink;
	struct nweb_run	*r;

	while ((r = TAILQ_FIRST(&w->runs)) != NULL) {
		TAILQ_REMOVE(&w->runs, r, entry);
		event_free(r->ev);
		free(r);
	}
	free(w->url);
	free(w);
}

const struct notify_sink_type notify_webhook = {
	"webhook", nweb_parse, nweb_send, nweb_free, NULL,
};
