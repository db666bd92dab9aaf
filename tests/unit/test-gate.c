/*
 * test-gate.c: the provider gate: admissions only from the event loop,
 * in FIFO order, within a provider's cap; a hold with a known reset
 * admits nothing before it; the backoff grows hold after hold and starts
 * over after gate_ok; a cancelled start never runs; a NULL gate admits.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "chan.h"
#include "clock.h"
#include "gate.h"
#include "tap.h"

struct rec {
	char		 order[64];	/* letters of the admitted, in order */
	int		 holds, opens;
	long long	 hold_ms[16];
	char		 reason[32];
	char		 until[40];
	uint64_t	 opened_at;
};

struct who {
	struct rec	*rec;
	char		 letter;
	uint64_t	 at;		/* when admitted */
};

/* A start admitted: its letter appended. */
static void
admit(void *arg)
{
	struct who	*w = arg;
	size_t		 n = strlen(w->rec->order);

	w->rec->order[n] = w->letter;
	w->rec->order[n + 1] = '\0';
	w->at = clock_mono_ms();
}

/* provider_hold and provider_open, recorded. */
static void
on_event(void *arg, const char *name, const json_t *f)
{
	struct rec	*r = arg;
	const char	*s;

	if (strcmp(name, "provider_hold") == 0) {
		if (r->holds < 16)
			r->hold_ms[r->holds] = json_integer_value(
			    json_object_get(f, "hold_ms"));
		r->holds++;
		s = json_string_value(json_object_get(f, "reason"));
		snprintf(r->reason, sizeof r->reason, "%s", s ? s : "");
		s = json_string_value(json_object_get(f, "until"));
		snprintf(r->until, sizeof r->until, "%s", s ? s : "");
	} else if (strcmp(name, "provider_open") == 0) {
		r->opens++;
		r->opened_at = clock_mono_ms();
	}
}

/* A few turns of the loop with nothing expected. */
static void
turns(struct event_base *b)
{
	int	i;

	for (i = 0; i < 20; i++)
		event_base_loop(b, EVLOOP_ONCE | EVLOOP_NONBLOCK);
}

static int
count(const struct rec *r)
{
	return (int)strlen(r->order);
}

static void
test_null(void)
{
	gate_hold(NULL, "claude", 1000);
	gate_ok(NULL, "claude");
	gate_leave(NULL, "claude");
	gate_cancel(NULL);
	tap_ok(gate_enter(NULL, "claude", admit, NULL) == NULL,
	    "a NULL gate admits at once (no handle, the caller goes ahead)");
	tap_is_int(gate_alive(NULL, "claude"), 0, "a NULL gate counts none");
	tap_is_int((long long)gate_held_ms(NULL, "claude"), 0,
	    "a NULL gate holds nothing");
}

static void
test_fifo_cap(struct event_base *b)
{
	struct rec	 r;
	struct who	 w[5], x;
	struct gate	*g;
	int		 i;

	memset(&r, 0, sizeof r);
	g = gate_new(b, on_event, &r);
	gate_set_cap(g, "claude", 2);
	for (i = 0; i < 5; i++) {
		w[i].rec = &r;
		w[i].letter = (char)('a' + i);
		gate_enter(g, "claude", admit, &w[i]);
	}
	tap_is_int(count(&r), 0, "nothing is admitted inside gate_enter");
	turns(b);
	tap_is_str(r.order, "ab", "cap 2: the first two, in order");
	tap_is_int(gate_alive(g, "claude"), 2, "two slots taken");
	tap_is_int((long long)gate_waiting(g, "claude"), 3, "three wait");
	x.rec = &r;
	x.letter = 'X';
	gate_enter(g, "codex", admit, &x);
	turns(b);
	tap_is_str(r.order, "abX", "another provider is not held by the cap");
	gate_leave(g, "claude");
	turns(b);
	tap_is_str(r.order, "abXc", "a slot freed admits the next in line");
	for (i = 0; i < 4; i++)
		gate_leave(g, "claude");
	turns(b);
	tap_is_str(r.order, "abXcde", "every start in FIFO order");
	gate_free(g);
}

static void
test_hold_known(struct event_base *b)
{
	struct rec	 r;
	struct who	 w;
	struct gate	*g;
	uint64_t	 t0;

	memset(&r, 0, sizeof r);
	memset(&w, 0, sizeof w);
	w.rec = &r;
	w.letter = 'a';
	g = gate_new(b, on_event, &r);
	t0 = clock_mono_ms();
	gate_hold(g, "claude", 300);
	tap_is_int(r.holds, 1, "provider_hold published");
	tap_is_int(r.hold_ms[0], 300, "hold_ms is the provider's reset");
	tap_is_str(r.reason, "retry_after", "reason: the provider's reset");
	tap_ok(clock_iso_valid(r.until) && r.until[strlen(r.until) - 1] ==
	    'Z', "until is ISO 8601 UTC (%s)", r.until);
	gate_hold(g, "claude", 10);
	tap_ok(gate_held_ms(g, "claude") > 200, "a shorter hold does not "
	    "cut one in force");
	gate_enter(g, "claude", admit, &w);
	while (count(&r) < 1 && clock_mono_ms() < t0 + 10000)
		event_base_loop(b, EVLOOP_ONCE);
	tap_is_str(r.order, "a", "admitted once the hold is over");
	tap_ok(w.at >= t0 + 300, "not before the hold's end (%llu ms)",
	    (unsigned long long)(w.at - t0));
	tap_is_int(r.opens, 1, "provider_open published");
	tap_ok(r.opened_at <= w.at, "provider_open before the admission");
	gate_free(g);
}

/* Wait for the provider to open again (polled). */
static void
wait_open(struct event_base *b, struct rec *r, int opens)
{
	uint64_t	end = clock_mono_ms() + 10000;

	while (r->opens < opens && clock_mono_ms() < end)
		event_base_loop(b, EVLOOP_ONCE);
}

static void
test_backoff(struct event_base *b)
{
	struct rec	 r;
	struct gate	*g;
	int		 i;
	static const long long lo[] = { 80, 160, 320, 320 };
	static const long long hi[] = { 120, 240, 480, 480 };

	memset(&r, 0, sizeof r);
	g = gate_new(b, on_event, &r);
	gate_set_backoff(g, 100, 400);
	for (i = 0; i < 4; i++) {
		gate_hold(g, "gemini", 0);
		if (i == 0) {
			/* workers the same hold catches: not a new hold */
			gate_hold(g, "gemini", 0);
			tap_is_int(r.holds, 1, "a hold in force is not "
			    "counted again");
		}
		tap_ok(r.hold_ms[r.holds - 1] >= lo[i] &&
		    r.hold_ms[r.holds - 1] <= hi[i], "backoff %d: %lld ms "
		    "within %lld-%lld", i + 1, r.hold_ms[r.holds - 1], lo[i],
		    hi[i]);
		tap_is_str(r.reason, "backoff", "reason: backoff");
		wait_open(b, &r, i + 1);
	}
	gate_ok(g, "gemini");
	gate_hold(g, "gemini", 0);
	tap_ok(r.hold_ms[r.holds - 1] >= 80 && r.hold_ms[r.holds - 1] <= 120,
	    "gate_ok starts the backoff over (%lld ms)",
	    r.hold_ms[r.holds - 1]);
	gate_free(g);	/* with its timer armed: no leak, no call */
}

static void
test_cancel(struct event_base *b)
{
	struct rec		 r;
	struct who		 w[3];
	struct gate		*g;
	struct gate_wait	*h;
	int			 i;

	memset(&r, 0, sizeof r);
	g = gate_new(b, NULL, NULL);
	gate_set_cap(g, "qwen", 1);
	for (i = 0; i < 3; i++) {
		w[i].rec = &r;
		w[i].letter = (char)('a' + i);
	}
	gate_enter(g, "qwen", admit, &w[0]);
	h = gate_enter(g, "qwen", admit, &w[1]);
	gate_enter(g, "qwen", admit, &w[2]);
	turns(b);
	gate_cancel(h);
	tap_is_int((long long)gate_waiting(g, "qwen"), 1, "one waits after "
	    "the cancel");
	gate_leave(g, "qwen");
	turns(b);
	tap_is_str(r.order, "ac", "a cancelled start never runs");
	/* a start cancelled before its first turn: never admitted either */
	h = gate_enter(g, "opencode", admit, &w[1]);
	gate_cancel(h);
	turns(b);
	tap_is_str(r.order, "ac", "cancelled before the pump: never runs");
	gate_free(g);
}

int
main(void)
{
	struct event_base	*b = chan_base_new();

	test_null();
	test_fifo_cap(b);
	test_hold_known(b);
	test_backoff(b);
	test_cancel(b);
	event_base_free(b);
	return tap_done();
}
