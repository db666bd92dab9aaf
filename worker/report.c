/*
 * report.c: what the worker tells the supervisor while its tool runs:
 * sending a message, PROGRESS from the tool's lines (throttled) and its
 * retries (never), the grace after an in-stream final event, and giving
 * the supervisor up when it is gone.  The parts below main.c (follow,
 * errtail, remote) report through here, never through main.c.
 */
#include <config.h>

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "chan.h"
#include "clock.h"
#include "log.h"
#include "worker.h"
#include "xmalloc.h"

#define FINAL_GRACE_MS		2000
#define PROGRESS_EVERY_MS	250

/* Replace every byte that is not part of valid UTF-8 (or is NUL) by '?'. */
void
utf8_sanitize(char *s, size_t n)
{
	size_t	i = 0, k;

	while (i < n) {
		size_t	need = 0;

		for (k = 1; k <= 4 && i + k <= n; k++)
			if (walk_utf8_valid((const uint8_t *)s + i, k)) {
				need = k;
				break;
			}
		if (need == 0) {
			s[i++] = '?';
			continue;
		}
		i += need;
	}
}

/* A timer that fires once after ms. */
struct event *
worker_timer(struct worker *w, uint64_t ms, event_callback_fn fn)
{
	struct event	*ev;

	ev = evtimer_new(w->base, fn, w);
	chan_arm_ms(ev, ms);
	return ev;
}

/* Send, logging a failure: the supervisor may already be gone. */
void
worker_send(struct worker *w, struct msg *m)
{
	enum proto_err	e;

	if (w->chan == NULL)
		return;
	if ((e = chan_send(w->chan, m)) != PROTO_OK)
		log_warnx("cannot send %s: %s", msg_name(m->type),
		    proto_strerror(e));
}

/* One output line: the adapter reads it; a throttled PROGRESS reports it. */
void
worker_line(struct worker *w, const char *line, size_t len)
{
	uint64_t	 now;
	char		*text;
	int		 was_final = w->ts.final_seen;

	if (w->ad != NULL && w->ad->line != NULL)
		w->ad->line(&w->ts, line, len);
	worker_retry_progress(w);
	if (!was_final && w->ts.final_seen)
		worker_final_event(w);
	now = clock_mono_ms();
	if (now - w->last_progress < PROGRESS_EVERY_MS)
		return;
	w->last_progress = now;
	if (w->ts.last_text != NULL)
		text = xstrdup(w->ts.last_text);
	else
		text = xstrndup(line, len > 200 ? 200 : len);
	worker_progress(w, w->ad != NULL && w->ad->line ? "event" : "output",
	    text);
	free(text);
}

/* A progress line of its own kind, sent now, never throttled away. */
void
worker_progress(struct worker *w, const char *kind, const char *text)
{
	struct msg	m;

	msg_init(&m, MSG_PROGRESS);
	m.u.progress.kind = xstrdup(kind);
	m.u.progress.text = xstrdup(text);
	utf8_sanitize(m.u.progress.text, strlen(m.u.progress.text));
	m.u.progress.tokens_in = w->acc_in + w->ts.tokens_in;
	m.u.progress.tokens_out = w->acc_out + w->ts.tokens_out;
	m.u.progress.cost = w->acc_cost + w->ts.cost;
	worker_send(w, &m);
	msg_clear(&m);
}

/*
 * The CLI is retrying an API error (429, 5xx, network): the user sees it
 * now, as PROGRESS kind "retry", instead of silence until the deadline.
 * A fatal API error (auth, model) ends the turn like a final event.
 */
void
worker_retry_progress(struct worker *w)
{
	if (w->ts.retry != NULL) {
		worker_progress(w, "retry", w->ts.retry);
		adapter_set(&w->ts.retry, NULL);
	}
	if (w->ts.final_seen)
		worker_final_event(w);
}

/* The in-stream final event: some CLIs never exit, so allow 2 s. */
static void
worker_grace_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct worker	*w = arg;

	(void)fd;
	(void)ev;
	if (w->tool_pid > 0 && !w->tool_waited) {
		w->we_killed = 1;
		tool_signal(w, SIGTERM);
		tool_signal(w, SIGCONT);
	}
}

/* Start the 2 s grace after the final event. */
void
worker_final_event(struct worker *w)
{
	if (w->grace_ev == NULL)
		w->grace_ev = worker_timer(w, FINAL_GRACE_MS, worker_grace_cb);
}

/*
 * The supervisor is gone (EOF, garbage, or silent past lost_ms behind a
 * launcher): sweep the tool tree and exit.
 */
void
worker_lost(struct worker *w)
{
	if (w->chan != NULL)
		chan_free(w->chan);
	w->chan = NULL;
	w->closing = 1;
	tool_sweep(w);
	event_base_loopbreak(w->base);
}
