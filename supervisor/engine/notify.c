/*
 * notify.c: a host's notifier (notify.h): its bus's events turned into
 * kinds (notifykind.c), stuck and held timed on the base, debounced per
 * (loop, kind), the body sent to each sink a rule names (never waiting:
 * the sinks are notifysink.c's), a failed delivery dead-lettered in
 * {state_dir}/notify.dead.jsonl, published (notify_failed) and counted.
 */
#include <config.h>

#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "bus.h"
#include "clock.h"
#include "log.h"
#include "meter.h"
#include "notify.h"
#include "xmalloc.h"

/* A sink of the config, parsed, and the kinds its rules send it. */
struct nsink {
	char				*name;
	const struct notify_sink_type	*t;
	void				*s;
	uint32_t			 kinds;	/* bit i: notify_kind_at(i) */
};

/* The last delivery of a (loop, kind): the debounce's memory. */
struct ndeb {
	char				*who;
	const struct notify_kind	*k;
	uint64_t			 at;	/* mono ms */
};

/* A timer of a loop (stuck) or a provider's hold (held). */
struct ntimer {
	TAILQ_ENTRY(ntimer)	 entry;
	struct notify		*n;
	char			*who;	/* loop id, or provider */
	struct event		*ev;
	json_t			*fields; /* held: provider_hold's */
	int			 hold;	/* a provider's hold, else a loop */
	int			 held;	/* a loop held: not stuck till thawed */
	uint64_t		 since;	/* the last event (mono ms) */
};
TAILQ_HEAD(ntimers, ntimer);

/* One delivery to one sink, until its done. */
struct ndeliv {
	TAILQ_ENTRY(ndeliv)		 entry;
	struct notify			*n;
	struct nsink			*sink;
	const struct notify_kind	*k;
	char				*loop_id;
	char				*body;
};
TAILQ_HEAD(ndelivs, ndeliv);

/* Who waits for a loop's deliveries to end (its host, at its end). */
struct nwait {
	TAILQ_ENTRY(nwait)	 entry;
	char			*loop_id;
	void			(*cb)(void *);
	void			*arg;
};
TAILQ_HEAD(nwaits, nwait);

struct notify {
	struct notify_env	 env;
	char			*dead;		/* the dead-letter log's path */
	struct nsink		*sinks;
	size_t			 nsinks;
	uint32_t		 want;		/* kinds any rule sends */
	uint64_t		 debounce_ms, stuck_ms, held_ms;
	struct ndeb		*deb;
	size_t			 ndeb;
	struct ntimers		 timers;
	struct ndelivs		 delivs;
	struct nwaits		 waits;
	struct bus_observer	*obs;
	int			 own_bus;	/* notify_solo's */
};

/* A kind's bit in the masks (its row in the table). */
static uint32_t
notify_bit(const struct notify_kind *k)
{
	size_t	i;

	for (i = 0; i < notify_kind_count(); i++)
		if (notify_kind_at(i) == k)
			return (uint32_t)1 << i;
	return 0;
}

/* A number of the config (checked already), or its default. */
static uint64_t
notify_ms(const json_t *conf, const char *key, uint64_t dflt)
{
	const json_t	*v = json_object_get(conf, key);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : dflt;
}

/* A rule's kinds as a mask (a word or an array of words). */
static uint32_t
notify_rule_kinds(const json_t *on)
{
	const json_t	*v;
	uint32_t	 m = 0;
	size_t		 i;

	if (json_is_string(on))
		return notify_bit(notify_kind_find(json_string_value(on)));
	json_array_foreach(on, i, v)
		m |= notify_bit(notify_kind_find(json_string_value(v)));
	return m;
}

/* The sinks made from the checked config, the rules onto them; -1. */
static int
notify_build(struct notify *n, const json_t *conf, char **err)
{
	const json_t	*sinks = json_object_get(conf, "sinks"), *rule, *v;
	const char	*name;
	size_t		 i, j;

	n->sinks = xcalloc(json_object_size(sinks) + 1, sizeof *n->sinks);
	json_object_foreach((json_t *)sinks, name, v) {
		struct nsink	*s = &n->sinks[n->nsinks];

		if (notify_sink_parse(v, name, &s->t, &s->s, err) != 0)
			return -1;
		s->name = xstrdup(name);
		if (s->t->attach != NULL)
			s->t->attach(s->s, n->env.children);
		n->nsinks++;
	}
	json_array_foreach(json_object_get(conf, "rules"), i, rule) {
		name = json_string_value(json_object_get(rule, "sink"));
		for (j = 0; name != NULL && j < n->nsinks; j++)
			if (strcmp(n->sinks[j].name, name) == 0)
				n->sinks[j].kinds |= notify_rule_kinds(
				    json_object_get(rule, "on"));
	}
	for (j = 0; j < n->nsinks; j++)
		n->want |= n->sinks[j].kinds;
	return 0;
}

/* The dead-letter line: one write, appended, no link followed. */
static void
notify_dead(struct ndeliv *d, const char *error, unsigned attempts,
    const char *at)
{
	json_t	*body = json_loads(d->body, 0, NULL), *o;
	char	*line;
	int	 fd;

	o = json_pack("{s:s, s:s, s:s, s:s?, s:I, s:s, s:o}", "at", at,
	    "sink", d->sink->name, "kind", d->k->name, "loop_id", d->loop_id,
	    "attempts", (json_int_t)attempts, "error", error != NULL ? error :
	    "failed", "body", body != NULL ? body : json_string(d->body));
	line = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (line == NULL)
		return;
	fd = open(d->n->dead, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd < 0)
		log_warn("notify: %s", d->n->dead);
	else {
		line = xreallocarray(line, strlen(line) + 2, 1);
		strcat(line, "\n");
		if (write(fd, line, strlen(line)) != (ssize_t)strlen(line))
			log_warn("notify: %s: a short write", d->n->dead);
		close(fd);
	}
	free(line);
}

/* A record of a delivery, gone. */
static void
notify_deliv_free(struct ndeliv *d)
{
	TAILQ_REMOVE(&d->n->delivs, d, entry);
	free(d->loop_id);
	free(d->body);
	free(d);
}

/* Is a delivery of loop_id (NULL: of any loop or none) under way? */
static int
notify_pending(const struct notify *n, const char *loop_id)
{
	const struct ndeliv	*d;

	TAILQ_FOREACH(d, &n->delivs, entry)
		if (loop_id == NULL || (d->loop_id != NULL &&
		    strcmp(d->loop_id, loop_id) == 0))
			return 1;
	return 0;
}

/*
 * The waiters whose deliveries all ended told (all of them when the
 * notifier goes: nothing is under way then).
 */
static void
notify_waiters(struct notify *n, int all)
{
	struct nwait	*w, *next;

	for (w = TAILQ_FIRST(&n->waits); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (!all && notify_pending(n, w->loop_id))
			continue;
		TAILQ_REMOVE(&n->waits, w, entry);
		w->cb(w->arg);
		free(w->loop_id);
		free(w);
	}
}

/*
 * A loop ended (loop_id), or the command is ending (NULL: every
 * delivery): are notifications still on their way?  1: cb is called
 * once they all ended (or the notifier goes), so a command does not
 * exit from under its last delivery; 0: none.
 */
int
notify_wait(struct notify *n, const char *loop_id, void (*cb)(void *),
    void *arg)
{
	struct nwait	*w;

	if (n == NULL || !notify_pending(n, loop_id))
		return 0;
	w = xcalloc(1, sizeof *w);
	w->loop_id = loop_id != NULL ? xstrdup(loop_id) : NULL;
	w->cb = cb;
	w->arg = arg;
	TAILQ_INSERT_TAIL(&n->waits, w, entry);
	return 1;
}

/* A delivery ended: its record gone, its waiters maybe told. */
static void
notify_deliv_end(struct ndeliv *d)
{
	struct notify	*n = d->n;

	notify_deliv_free(d);
	notify_waiters(n, 0);
}

/*
 * A sink's done: sent is counted; failed is counted, dead-lettered and
 * published (notify_failed).  The loop never hears of it.
 */
static void
notify_done(void *arg, int ok, const char *error, unsigned attempts)
{
	struct ndeliv	*d = arg;
	struct notify	*n = d->n;
	const char	*lv[2] = { d->sink->name, d->k->name };
	char		 at[40];

	if (ok) {
		if (n->env.meter != NULL)
			meter_count(n->env.meter, METER_NOTIFY_SENT, lv);
		notify_deliv_end(d);
		return;
	}
	if (n->env.meter != NULL)
		meter_count(n->env.meter, METER_NOTIFY_FAILED, lv);
	clock_iso(NULL, 1, at, sizeof at);
	log_warnx("notify: %s of %s to sink %s failed: %s", d->k->name,
	    d->loop_id != NULL ? d->loop_id : "-", d->sink->name,
	    error != NULL ? error : "failed");
	notify_dead(d, error, attempts, at);
	bus_publish(n->env.bus, "notify_failed", json_pack("{s:s, s:s, s:s?, "
	    "s:s, s:I}", "sink", d->sink->name, "kind", d->k->name, "loop_id",
	    d->loop_id, "error", error != NULL ? error : "failed", "attempts",
	    (json_int_t)attempts));
	notify_deliv_end(d);
}

/*
 * Debounced?  The (who, kind) delivered within debounce_ms: yes, and
 * counted; else its time is now.  Old entries go as new ones come.
 */
static int
notify_debounced(struct notify *n, const char *who,
    const struct notify_kind *k)
{
	uint64_t	 now = clock_mono_ms();
	size_t		 i, j;

	for (i = j = 0; i < n->ndeb; i++) {
		if (now - n->deb[i].at < n->debounce_ms)
			n->deb[j++] = n->deb[i];
		else
			free(n->deb[i].who);
	}
	n->ndeb = j;
	for (i = 0; i < n->ndeb; i++)
		if (n->deb[i].k == k && strcmp(n->deb[i].who, who) == 0) {
			if (n->env.meter != NULL)
				meter_count(n->env.meter,
				    METER_NOTIFY_DEBOUNCED, &k->name);
			log_info("notify: %s of %s debounced", k->name, who);
			return 1;
		}
	if (n->debounce_ms == 0)
		return 0;
	n->deb = xreallocarray(n->deb, n->ndeb + 1, sizeof *n->deb);
	n->deb[n->ndeb].who = xstrdup(who);
	n->deb[n->ndeb].k = k;
	n->deb[n->ndeb++].at = now;
	return 0;
}

/* The body: {"kind","loop_id","batch_id","at","event","text"}, a line. */
static char *
notify_body(const struct notify_kind *k, const char *loop_id,
    const json_t *ev)
{
	const char	*batch = json_string_value(json_object_get(ev,
			    "batch_id"));
	char		 at[40], *text, *s, *who = NULL;
	json_t		*o;

	clock_iso(NULL, 1, at, sizeof at);
	if (loop_id != NULL || batch != NULL)
		xasprintf(&who, "%s %s", loop_id != NULL ? "loop" : "batch",
		    loop_id != NULL ? loop_id : batch);
	text = notify_kind_text(k, who, ev);
	free(who);
	o = json_pack("{s:s, s:s?, s:s?, s:s, s:O, s:s}", "kind", k->name,
	    "loop_id", loop_id, "batch_id", batch, "at", at, "event", ev,
	    "text", text);
	s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	free(text);
	return s;
}

/*
 * The debounce's key: who, and for a threshold's event (budget_warning's
 * percent) the budget and the threshold too, so the 80 % warning is not
 * swallowed by the 50 % one: a person must hear each threshold once.
 */
static char *
notify_deb_key(const char *who, const json_t *ev)
{
	const json_t	*pct = json_object_get(ev, "percent");
	const char	*b = json_string_value(json_object_get(ev, "budget"));
	char		*key;

	if (!json_is_integer(pct))
		return xstrdup(who != NULL ? who : "");
	xasprintf(&key, "%s %s %lld%%", who != NULL ? who : "",
	    b != NULL ? b : "", (long long)json_integer_value(pct));
	return key;
}

/* A kind happened: debounced, else one delivery per sink that wants it. */
static void
notify_fire(struct notify *n, const struct notify_kind *k,
    const char *loop_id, const json_t *ev)
{
	const char	*who = loop_id;
	struct ndeliv	*d;
	char		*body, *key;
	size_t		 i;

	if (!(n->want & notify_bit(k)))
		return;
	if (who == NULL)
		who = json_string_value(json_object_get(ev, "batch_id"));
	if (who == NULL)
		who = json_string_value(json_object_get(ev, "provider"));
	key = notify_deb_key(who, ev);
	if (notify_debounced(n, key, k)) {
		free(key);
		return;
	}
	free(key);
	if ((body = notify_body(k, loop_id, ev)) == NULL)
		return;
	for (i = 0; i < n->nsinks; i++) {
		if (!(n->sinks[i].kinds & notify_bit(k)))
			continue;
		d = xcalloc(1, sizeof *d);
		d->n = n;
		d->sink = &n->sinks[i];
		d->k = k;
		d->loop_id = loop_id != NULL ? xstrdup(loop_id) : NULL;
		d->body = xstrdup(body);
		TAILQ_INSERT_TAIL(&n->delivs, d, entry);
		d->sink->t->send(d->sink->s, n->env.base, d->body,
		    strlen(d->body), notify_done, d);
	}
	free(body);
}

/* A timer's record, gone. */
static void
notify_timer_free(struct ntimer *t)
{
	TAILQ_REMOVE(&t->n->timers, t, entry);
	event_free(t->ev);
	json_decref(t->fields);
	free(t->who);
	free(t);
}

/* The timer added for ms from now. */
static void
notify_timer_add(struct ntimer *t, uint64_t ms)
{
	struct timeval	tv = { (time_t)(ms / 1000),
			    (suseconds_t)(ms % 1000) * 1000 };

	evtimer_add(t->ev, &tv);
}

/* stuck or held: its time passed with nothing to end it. */
static void
notify_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ntimer	*t = arg;
	struct notify	*n = t->n;
	json_t		*ev;
	uint64_t	 left, now;

	(void)fd;
	(void)what;
	/*
	 * libevent counts the timeout from its cached time of the loop's
	 * turn, which can be earlier than since: early by that much, the
	 * rest is waited for, so silent_ms is never under the limit.
	 */
	if ((left = t->since + (t->hold ? n->held_ms : n->stuck_ms)) >
	    (now = clock_mono_ms())) {
		notify_timer_add(t, left - now);
		return;
	}
	if (t->hold) {
		ev = json_deep_copy(t->fields);
		notify_timer_free(t);
		notify_fire(n, notify_kind_find("held"), NULL, ev);
		json_decref(ev);
		return;
	}
	ev = json_pack("{s:s, s:I}", "loop_id", t->who, "silent_ms",
	    (json_int_t)(now - t->since));
	notify_fire(n, notify_kind_find("stuck"), t->who, ev);
	json_decref(ev);
}

/* The timer of who (a loop, or a provider's hold), made if asked. */
static struct ntimer *
notify_timer(struct notify *n, const char *who, int hold, int make)
{
	struct ntimer	*t;

	TAILQ_FOREACH(t, &n->timers, entry)
		if (t->hold == hold && strcmp(t->who, who) == 0)
			return t;
	if (!make)
		return NULL;
	t = xcalloc(1, sizeof *t);
	t->n = n;
	t->who = xstrdup(who);
	t->hold = hold;
	t->ev = evtimer_new(n->env.base, notify_timer_cb, t);
	TAILQ_INSERT_TAIL(&n->timers, t, entry);
	return t;
}

/* (Re)armed for ms from now. */
static void
notify_timer_arm(struct ntimer *t, uint64_t ms)
{
	t->since = clock_mono_ms();
	notify_timer_add(t, ms);
}

/*
 * A loop's event for stuck: any event is progress (the timer starts
 * over), its end stops it, and a hold (loop_held) stops it till its
 * loop_thawed: the events a held loop still makes (its budget_reached,
 * a question) do not start it again, a held loop is not stuck.
 */
static void
notify_stuck_track(struct notify *n, const char *loop_id, const char *name)
{
	struct ntimer	*t;
	int		 end = strcmp(name, "LOOP_COMPLETED") == 0;

	if (!(n->want & notify_bit(notify_kind_find("stuck"))))
		return;
	t = notify_timer(n, loop_id, 0, !end);
	if (t == NULL)
		return;
	if (end) {
		notify_timer_free(t);
		return;
	}
	if (strcmp(name, "loop_held") == 0)
		t->held = 1;
	else if (strcmp(name, "loop_thawed") == 0)
		t->held = 0;
	if (t->held)
		evtimer_del(t->ev);
	else
		notify_timer_arm(t, n->stuck_ms);
}

/* A provider held (a timer to held_ms) or open again (timer gone). */
static void
notify_held_track(struct notify *n, const char *name, const json_t *f)
{
	const char	*p = json_string_value(json_object_get(f, "provider"));
	struct ntimer	*t;

	if (p == NULL || !(n->want & notify_bit(notify_kind_find("held"))))
		return;
	if (strcmp(name, "provider_open") == 0) {
		if ((t = notify_timer(n, p, 1, 0)) != NULL)
			notify_timer_free(t);
		return;
	}
	t = notify_timer(n, p, 1, 1);
	if (evtimer_pending(t->ev, NULL))
		return;		/* held since the first hold */
	json_decref(t->fields);
	t->fields = json_deep_copy(f);
	notify_timer_arm(t, n->held_ms);
}

/* The bus's event: a loop's (of this host's) or of none (the lead's). */
static void
notify_bus_cb(void *arg, uint64_t seq, const char *name, const json_t *f)
{
	struct notify			*n = arg;
	const char			*loop_id = json_string_value(
					    json_object_get(f, "loop_id"));
	const struct notify_kind	*k;

	(void)seq;
	if (strcmp(name, "notify_failed") == 0)
		return;
	if (loop_id != NULL && n->env.mine != NULL &&
	    !n->env.mine(n->env.arg, loop_id))
		return;		/* another host's loop on a shared bus */
	if (loop_id == NULL && !n->env.lead)
		return;
	if (loop_id != NULL)
		notify_stuck_track(n, loop_id, name);
	if (strcmp(name, "provider_hold") == 0 ||
	    strcmp(name, "provider_open") == 0)
		notify_held_track(n, name, f);
	if ((k = notify_kind_of(name, f)) != NULL)
		notify_fire(n, k, loop_id, f);
}

/*
 * The notifier of a host from its config's checked `notify` (NULL: none
 * is made, and NULL is no error): sinks parsed, the bus observed.
 */
struct notify *
notify_new(const struct notify_env *env, const json_t *conf, char **err)
{
	struct notify	*n;

	*err = NULL;
	if (!json_is_object(conf))
		return NULL;
	n = xcalloc(1, sizeof *n);
	n->env = *env;
	TAILQ_INIT(&n->timers);
	TAILQ_INIT(&n->delivs);
	TAILQ_INIT(&n->waits);
	xasprintf(&n->dead, "%s/%s", env->state_dir, NOTIFY_DEAD_FILE);
	n->debounce_ms = notify_ms(conf, "debounce_ms", NOTIFY_DEBOUNCE_MS);
	n->stuck_ms = notify_ms(conf, "stuck_ms", NOTIFY_STUCK_MS);
	n->held_ms = notify_ms(conf, "held_ms", NOTIFY_HELD_MS);
	if (notify_build(n, conf, err) != 0) {
		notify_free(n);
		return NULL;
	}
	if (n->want != 0)
		n->obs = bus_observe(env->bus, notify_bus_cb, n);
	return n;
}

/*
 * A notifier for a front end without a host (run: one loop, its own
 * reaper): a bus of its own, fed by notify_feed.  NULL without conf.
 */
struct notify *
notify_solo(struct event_base *base, struct children *ch, const json_t *conf,
    const char *state_dir, char **err)
{
	struct notify_env	 env;
	struct notify		*n;

	memset(&env, 0, sizeof env);
	env.base = base;
	env.children = ch;
	env.bus = bus_new(16);
	env.state_dir = state_dir;
	env.lead = 1;
	if ((n = notify_new(&env, conf, err)) == NULL)
		bus_free(env.bus);
	else
		n->own_bus = 1;
	return n;
}

/* notify_solo's event of loop_id (its fields borrowed; NULL n: none). */
void
notify_feed(struct notify *n, const char *loop_id, const char *name,
    const json_t *fields)
{
	json_t	*o;

	if (n == NULL || n->obs == NULL)
		return;
	o = json_is_object(fields) ? json_deep_copy(fields) : json_object();
	if (json_object_get(o, "loop_id") == NULL)
		json_object_set_new(o, "loop_id", json_string(loop_id));
	bus_publish(n->env.bus, name, o);
}

/* Sinks first (what is in flight cancelled, no done), then the rest. */
void
notify_free(struct notify *n)
{
	size_t	i;

	if (n == NULL)
		return;
	if (n->obs != NULL)
		bus_unobserve(n->env.bus, n->obs);
	for (i = 0; i < n->nsinks; i++) {
		n->sinks[i].t->free(n->sinks[i].s);
		free(n->sinks[i].name);
	}
	while (!TAILQ_EMPTY(&n->delivs))
		notify_deliv_free(TAILQ_FIRST(&n->delivs));
	notify_waiters(n, 1);	/* nothing is under way now */
	while (!TAILQ_EMPTY(&n->timers))
		notify_timer_free(TAILQ_FIRST(&n->timers));
	for (i = 0; i < n->ndeb; i++)
		free(n->deb[i].who);
	free(n->deb);
	free(n->sinks);
	free(n->dead);
	if (n->own_bus)
		bus_free(n->env.bus);
	free(n);
}
