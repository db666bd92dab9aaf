/*
 * gate.c: the provider gate: per provider a cap, a FIFO of waiting
 * starts admitted from the event loop (one pump event), and a hold
 * after a rate limit, timed on the monotonic clock, announced on the
 * caller's event function as provider_hold and provider_open.
 */
#include <config.h>

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "chan.h"
#include "clock.h"
#include "gate.h"
#include "toolconfig.h"
#include "xmalloc.h"

struct gate_prov;

struct gate_wait {
	TAILQ_ENTRY(gate_wait)	 entry;
	struct gate_prov	*p;
	gate_cb			 cb;
	void			*arg;
};
TAILQ_HEAD(gate_waits, gate_wait);

/* A provider's hold: open, or held until a time (the timer armed). */
enum gate_hold_state { GH_OPEN, GH_HELD };

struct gate_prov {
	TAILQ_ENTRY(gate_prov)	 entry;
	struct gate		*g;
	char			*name;
	unsigned		 cap;		/* 0: none */
	unsigned		 alive;
	enum gate_hold_state	 hold;
	uint64_t		 until;		/* GH_HELD: monotonic ms */
	unsigned		 holds;		/* in a row, since gate_ok */
	struct event		*timer;		/* the hold's end */
	struct gate_waits	 waits;
	size_t			 nwaits;
};
TAILQ_HEAD(gate_provs, gate_prov);

struct gate {
	struct event_base	*base;
	gate_event_fn		 event;
	void			*event_arg;
	struct gate_provs	 provs;
	struct event		*pump;		/* admissions, next turn */
	uint64_t		 min_ms, max_ms; /* the backoff's bounds */
	uint32_t		 rng;		/* the jitter's, per gate */
};

static void	gate_open_cb(evutil_socket_t, short, void *);

/* A provider by name; NULL unless made (make: created on first use). */
static struct gate_prov *
gate_prov(const struct gate *g, const char *name, int make)
{
	struct gate_prov	*p;

	TAILQ_FOREACH(p, &g->provs, entry)
		if (strcmp(p->name, name) == 0)
			return p;
	if (!make)
		return NULL;
	p = xcalloc(1, sizeof *p);
	p->g = (struct gate *)g;
	p->name = xstrdup(name);
	TAILQ_INIT(&p->waits);
	p->timer = evtimer_new(g->base, gate_open_cb, p);
	TAILQ_INSERT_TAIL(&((struct gate *)g)->provs, p, entry);
	return p;
}

/* Admit, provider by provider, what the holds and caps let in. */
static void
gate_pump_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct gate		*g = arg;
	struct gate_prov	*p;
	struct gate_wait	*w;
	gate_cb			 cb;
	void			*cbarg;

	(void)fd;
	(void)ev;
	TAILQ_FOREACH(p, &g->provs, entry) {
		/* a callback may cancel or enter: the head is read anew */
		while (p->hold == GH_OPEN && (p->cap == 0 ||
		    p->alive < p->cap) && (w = TAILQ_FIRST(&p->waits)) != NULL) {
			TAILQ_REMOVE(&p->waits, w, entry);
			p->nwaits--;
			p->alive++;
			cb = w->cb;
			cbarg = w->arg;
			free(w);
			cb(cbarg);
		}
	}
}

/* Admissions are decided on the next turn, never inside a caller. */
static void
gate_pump(struct gate *g)
{
	event_active(g->pump, EV_TIMEOUT, 0);
}

/* An event for the caller, its fields freed after. */
static void
gate_event(struct gate *g, const char *name, json_t *fields)
{
	if (g->event != NULL)
		g->event(g->event_arg, name, fields);
	json_decref(fields);
}

/* The hold is over (the timer fires a tick early at worst: re-armed). */
static void
gate_open_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct gate_prov	*p = arg;
	uint64_t		 now = clock_mono_ms();

	(void)fd;
	(void)ev;
	if (p->hold != GH_HELD)
		return;
	if (now < p->until) {
		chan_arm_ms(p->timer, p->until - now);
		return;
	}
	p->hold = GH_OPEN;
	gate_event(p->g, "provider_open", json_pack("{s:s}", "provider",
	    p->name));
	gate_pump(p->g);
}

/* The gate on the caller's base; events go to fn (NULL: none). */
struct gate *
gate_new(struct event_base *base, gate_event_fn fn, void *arg)
{
	struct gate	*g = xcalloc(1, sizeof *g);

	g->base = base;
	g->event = fn;
	g->event_arg = arg;
	TAILQ_INIT(&g->provs);
	g->pump = event_new(base, -1, 0, gate_pump_cb, g);
	g->min_ms = GATE_BACKOFF_MIN_MS;
	g->max_ms = GATE_BACKOFF_MAX_MS;
	g->rng = (uint32_t)clock_mono_ms() ^ (uint32_t)(uintptr_t)g;
	if (g->rng == 0)
		g->rng = 1;
	return g;
}

/* Everything goes; waiters never hear (their owners are going too). */
void
gate_free(struct gate *g)
{
	struct gate_prov	*p;
	struct gate_wait	*w;

	if (g == NULL)
		return;
	while ((p = TAILQ_FIRST(&g->provs)) != NULL) {
		TAILQ_REMOVE(&g->provs, p, entry);
		while ((w = TAILQ_FIRST(&p->waits)) != NULL) {
			TAILQ_REMOVE(&p->waits, w, entry);
			free(w);
		}
		event_free(p->timer);
		free(p->name);
		free(p);
	}
	event_free(g->pump);
	free(g);
}

/* tools.NAME.max_workers: at most cap alive at once (0: no cap). */
void
gate_set_cap(struct gate *g, const char *provider, unsigned cap)
{
	if (g == NULL || provider == NULL)
		return;
	gate_prov(g, provider, 1)->cap = cap;
	gate_pump(g);
}

/* Every tool's tools.NAME.max_workers from the configuration. */
void
gate_set_caps(struct gate *g, const struct config *c)
{
	size_t	i;

	for (i = 0; c != NULL && i < c->ntools; i++)
		if (c->tools[i].max_workers > 0)
			gate_set_cap(g, c->tools[i].name,
			    c->tools[i].max_workers);
}

/* The backoff's first hold and its cap (tests, a batch's own policy). */
void
gate_set_backoff(struct gate *g, uint64_t min_ms, uint64_t max_ms)
{
	if (g == NULL || min_ms == 0 || max_ms < min_ms)
		return;
	g->min_ms = min_ms;
	g->max_ms = max_ms;
}

/* Queue a start; see gate.h. */
struct gate_wait *
gate_enter(struct gate *g, const char *provider, gate_cb cb, void *arg)
{
	struct gate_wait	*w;

	if (g == NULL)
		return NULL;
	w = xcalloc(1, sizeof *w);
	w->p = gate_prov(g, provider != NULL ? provider : "", 1);
	w->cb = cb;
	w->arg = arg;
	TAILQ_INSERT_TAIL(&w->p->waits, w, entry);
	w->p->nwaits++;
	gate_pump(g);
	return w;
}

/* A start nobody wants now: out of the queue, never admitted. */
void
gate_cancel(struct gate_wait *w)
{
	if (w == NULL)
		return;
	TAILQ_REMOVE(&w->p->waits, w, entry);
	w->p->nwaits--;
	free(w);
}

/* A worker admitted by the gate ended: its slot is free. */
void
gate_leave(struct gate *g, const char *provider)
{
	struct gate_prov	*p;

	if (g == NULL || (p = gate_prov(g, provider != NULL ? provider : "",
	    0)) == NULL || p->alive == 0)
		return;
	p->alive--;
	if (p->nwaits > 0)
		gate_pump(g);
}

/* The next backoff: 1 s doubling to 60 s, +- 20 % (xorshift32). */
static uint64_t
gate_backoff(struct gate *g, unsigned holds)
{
	uint64_t	ms = g->min_ms;
	unsigned	i;
	int64_t		span;

	for (i = 1; i < holds && ms < g->max_ms; i++)
		ms *= 2;
	if (ms > g->max_ms)
		ms = g->max_ms;
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 17;
	g->rng ^= g->rng << 5;
	span = (int64_t)ms * GATE_JITTER_PCT / 100;
	return (uint64_t)((int64_t)ms - span +
	    (int64_t)(g->rng % (uint32_t)(2 * span + 1)));
}

/* A rate limit on the provider: see gate.h. */
void
gate_hold(struct gate *g, const char *provider, uint64_t retry_after_ms)
{
	struct gate_prov	*p;
	struct timespec		 ts;
	uint64_t		 now, ms;
	char			 until[40];

	if (g == NULL)
		return;
	p = gate_prov(g, provider != NULL ? provider : "", 1);
	now = clock_mono_ms();
	/*
	 * the workers a hold in force catches are that one limit: only a
	 * known later reset moves it
	 */
	if (p->hold == GH_HELD && (retry_after_ms == 0 ||
	    p->until >= now + retry_after_ms))
		return;
	p->holds++;
	ms = retry_after_ms != 0 ? retry_after_ms : gate_backoff(g, p->holds);
	p->hold = GH_HELD;
	p->until = now + ms;
	chan_arm_ms(p->timer, ms);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	clock_iso(&ts, 1, until, sizeof until);
	gate_event(g, "provider_hold", json_pack("{s:s, s:I, s:s, s:s}",
	    "provider", p->name, "hold_ms", (json_int_t)ms, "until", until,
	    "reason", retry_after_ms != 0 ? "retry_after" : "backoff"));
}

/* A worker on the provider succeeded: the backoff starts over. */
void
gate_ok(struct gate *g, const char *provider)
{
	struct gate_prov	*p;

	if (g != NULL && (p = gate_prov(g, provider != NULL ? provider : "",
	    0)) != NULL)
		p->holds = 0;
}

/* Slots taken on the provider. */
unsigned
gate_alive(const struct gate *g, const char *provider)
{
	const struct gate_prov	*p;

	return g != NULL && (p = gate_prov(g, provider, 0)) != NULL ?
	    p->alive : 0;
}

/* Starts queued on the provider. */
size_t
gate_waiting(const struct gate *g, const char *provider)
{
	const struct gate_prov	*p;

	return g != NULL && (p = gate_prov(g, provider, 0)) != NULL ?
	    p->nwaits : 0;
}

/* What is left of the provider's hold, 0 when open. */
uint64_t
gate_held_ms(const struct gate *g, const char *provider)
{
	const struct gate_prov	*p;
	uint64_t		 now = clock_mono_ms();

	if (g == NULL || (p = gate_prov(g, provider, 0)) == NULL ||
	    p->hold != GH_HELD || p->until <= now)
		return 0;
	return p->until - now;
}
