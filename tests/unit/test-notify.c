/*
 * test-notify.c: notifications (notify.h) on a real event base, reaper
 * and bus: the kinds table's mapping, the config's errors naming the key,
 * debounce per (loop, kind) through a real command sink, a failing and a
 * hanging command dead-lettered (notify_failed, the meter), the desktop
 * sink without a session bus, stuck on a silent loop, held on a hold
 * not lifted in time.
 */
#include <config.h>

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "bus.h"
#include "children.h"
#include "clock.h"
#include "meter.h"
#include "notify.h"
#include "tap.h"
#include "xmalloc.h"

static char	 dir[] = "/tmp/test-notify.XXXXXX";

/* The kinds: each bus event to its kind, LOOP_COMPLETED by status. */
static void
test_kinds(void)
{
	json_t	*f = json_pack("{s:s}", "final_status", "failed");
	char	*l = notify_kind_list();

	tap_is_int((long long)notify_kind_count(), 8, "eight kinds");
	tap_ok(strstr(l, "needs_input") != NULL && strstr(l, "held") != NULL,
	    "the list names them: %s", l);
	tap_is_str(notify_kind_of("LOOP_COMPLETED", f)->name, "failed",
	    "LOOP_COMPLETED failed is failed");
	json_object_set_new(f, "final_status", json_string("completed"));
	tap_is_str(notify_kind_of("LOOP_COMPLETED", f)->name, "completed",
	    "LOOP_COMPLETED completed is completed");
	json_object_set_new(f, "final_status", json_string("paused"));
	tap_ok(notify_kind_of("LOOP_COMPLETED", f) == NULL,
	    "a pause is no kind");
	tap_is_str(notify_kind_of("question_asked", f)->name, "needs_input",
	    "question_asked is needs_input");
	tap_ok(notify_kind_of("worker_result", f) == NULL,
	    "worker_result is no kind");
	json_decref(f);
	free(l);
}

/* One config's error: it names path. */
static void
conf_err(const char *text, const char *path)
{
	json_t	*root = json_loads(text, 0, NULL), *dst = NULL;
	char	*err = NULL;
	int	 rc = root != NULL ? notify_conf_apply("c.json", root, &dst,
		    &err) : 0;

	tap_ok(rc == -1 && err != NULL && strstr(err, path) != NULL,
	    "refused naming %s: %s", path, err != NULL ? err : "(none)");
	json_decref(root);
	json_decref(dst);
	free(err);
}

/* The config's errors, each naming its key path. */
static void
test_conf(void)
{
	conf_err("{\"notify\": {\"sinks\": {\"a\": {\"type\": \"command\"}}}}",
	    "notify.sinks.a.argv");
	conf_err("{\"notify\": {\"sinks\": {\"a\": {\"type\": \"command\", "
	    "\"argv\": [\"x\"]}}, \"rules\": [{\"on\": [\"failed\", "
	    "\"nope\"], \"sink\": \"a\"}]}}", "notify.rules[0].on[1]");
	conf_err("{\"notify\": {\"rules\": [{\"on\": [\"failed\"], \"sink\": "
	    "\"b\"}]}}", "notify.rules[0].sink");
	conf_err("{\"notify\": {\"debounce\": 1}}", "notify.debounce");
	conf_err("{\"notify\": {\"sinks\": {\"a\": {\"type\": \"pager\"}}}}",
	    "notify.sinks.a.type");
	conf_err("{\"notify\": {\"sinks\": {\"a\": {\"type\": \"command\", "
	    "\"argv\": [\"x\"], \"timeout_ms\": 0}}}}",
	    "notify.sinks.a.timeout_ms");
}

/* What the tests' base needs: the reaper, the bus, the meter. */
struct rig {
	struct event_base	*base;
	struct children		*ch;
	struct bus		*bus;
	struct meter		*meter;
	struct notify		*n;
	unsigned		 failed;	/* notify_failed seen */
	char			 error[256];
};

/* notify_failed events, counted, the last error kept. */
static void
rig_bus(void *arg, uint64_t seq, const char *name, const json_t *f)
{
	struct rig	*r = arg;

	(void)seq;
	if (strcmp(name, "notify_failed") != 0)
		return;
	r->failed++;
	snprintf(r->error, sizeof r->error, "%s",
	    json_string_value(json_object_get(f, "error")));
}

/* A notifier of conf (text, %s the directory) on the rig. */
static void
rig_notify(struct rig *r, const char *conf)
{
	struct notify_env	 env;
	json_t			*root, *dst = NULL;
	char			*text, *err = NULL;

	xasprintf(&text, conf, dir, dir);
	root = json_loads(text, 0, NULL);
	if (notify_conf_apply("t.json", root, &dst, &err) != 0)
		tap_diag("conf: %s", err);
	memset(&env, 0, sizeof env);
	env.base = r->base;
	env.children = r->ch;
	env.bus = r->bus;
	env.meter = r->meter;
	env.state_dir = dir;
	env.lead = 1;
	notify_free(r->n);
	r->n = notify_new(&env, dst, &err);
	tap_ok(r->n != NULL, "a notifier made%s%s", err != NULL ? ": " : "",
	    err != NULL ? err : "");
	json_decref(root);
	json_decref(dst);
	free(text);
	free(err);
}

/* Lines in a file of dir holding text (NULL: any; 0: no file). */
static int
lines_with(const char *name, const char *text)
{
	char	 path[256], buf[8192];
	FILE	*f;
	int	 n = 0;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(buf, sizeof buf, f) != NULL)
		n += text == NULL || strstr(buf, text) != NULL;
	fclose(f);
	return n;
}

/* Lines in a file of dir. */
static int
lines(const char *name)
{
	return lines_with(name, NULL);
}

/* Turn the base until a file has n lines or the failures come (15 s). */
static int
spin(struct rig *r, const char *name, int n, unsigned failed)
{
	struct timeval	 tv = { 0, 50000 };
	uint64_t	 end = clock_mono_ms() + 15000;

	while (clock_mono_ms() < end) {
		if ((name == NULL || lines(name) >= n) && r->failed >= failed)
			return 1;
		event_base_loopexit(r->base, &tv);
		event_base_dispatch(r->base);
	}
	return 0;
}

/* A meter table's count for these labels. */
struct want {
	const char	*a, *b;
	unsigned long long n;
};

/* meter_walk's visit: the row of the wanted labels. */
static void
meter_visit(const char *const *lv, const struct meter_row *row, void *arg)
{
	struct want	*w = arg;

	if (strcmp(lv[0], w->a) == 0 && (w->b == NULL ||
	    strcmp(lv[1], w->b) == 0))
		w->n += row->count;
}

/* The count of a table's row. */
static unsigned long long
count(struct rig *r, enum meter_table t, const char *a, const char *b)
{
	struct want	w = { a, b, 0 };

	meter_walk(r->meter, t, meter_visit, &w);
	return w.n;
}

/* Turn the base until a (sink, kind) was sent n times (15 s). */
static int
spin_sent(struct rig *r, const char *sink, const char *kind,
    unsigned long long n)
{
	struct timeval	 tv = { 0, 50000 };
	uint64_t	 end = clock_mono_ms() + 15000;

	while (count(r, METER_NOTIFY_SENT, sink, kind) < n) {
		if (clock_mono_ms() >= end)
			return 0;
		event_base_loopexit(r->base, &tv);
		event_base_dispatch(r->base);
	}
	return 1;
}

/* A loop's end on the bus. */
static void
ended(struct rig *r, const char *loop, const char *status)
{
	bus_publish(r->bus, "LOOP_COMPLETED", json_pack("{s:s, s:s, s:s}",
	    "loop_id", loop, "final_status", status, "reason", "why not"));
}

/* Two quick fails of one loop: one delivery; another loop's: its own. */
static void
test_debounce(struct rig *r)
{
	rig_notify(r, "{\"notify\": {\"sinks\": {\"f\": {\"type\": "
	    "\"command\", \"argv\": [\"/bin/sh\", \"-c\", \"cat >> %s/got; "
	    "echo >> %s/got\"]}}, \"rules\": [{\"on\": [\"failed\"], "
	    "\"sink\": \"f\"}]}}");
	ended(r, "L1", "failed");
	ended(r, "L1", "failed");
	ended(r, "L2", "failed");
	ended(r, "L3", "paused");
	tap_ok(spin(r, "got", 2, 0), "two deliveries");
	tap_is_int(count(r, METER_NOTIFY_DEBOUNCED, "failed", NULL), 1,
	    "one debounced");
	tap_ok(spin_sent(r, "f", "failed", 2), "two sent");
	tap_is_int(lines("got"), 2, "no third (a pause notifies nobody)");
}

/* A command failing and one hanging past its deadline: dead letters. */
static void
test_failures(struct rig *r)
{
	rig_notify(r, "{\"notify\": {\"debounce_ms\": 0, \"sinks\": {"
	    "\"bad\": {\"type\": \"command\", \"argv\": [\"/bin/false\"]}, "
	    "\"hang\": {\"type\": \"command\", \"argv\": [\"/bin/sleep\", "
	    "\"30\"], \"timeout_ms\": 200}}, \"rules\": [{\"on\": "
	    "[\"completed\"], \"sink\": \"bad\"}, {\"on\": [\"completed\"], "
	    "\"sink\": \"hang\"}]}}");
	ended(r, "L4", "completed");
	tap_ok(spin(r, NOTIFY_DEAD_FILE, 2, 2), "two dead letters, two "
	    "notify_failed");
	tap_is_int(count(r, METER_NOTIFY_FAILED, "bad", "completed"), 1,
	    "bad counted");
	tap_is_int(count(r, METER_NOTIFY_FAILED, "hang", "completed"), 1,
	    "hang counted");
	tap_ok(strstr(r->error, "killed") != NULL || strstr(r->error,
	    "exit status 1") != NULL, "the error says why: %s", r->error);
}

/* desktop without a session bus: failed, saying so. */
static void
test_desktop(struct rig *r)
{
	unsetenv("DBUS_SESSION_BUS_ADDRESS");
	rig_notify(r, "{\"notify\": {\"sinks\": {\"d\": {\"type\": "
	    "\"desktop\"}}, \"rules\": [{\"on\": \"failed\", \"sink\": "
	    "\"d\"}]}}");
	r->failed = 0;
	ended(r, "L5", "failed");
	tap_ok(spin(r, NULL, 0, 1) && strstr(r->error, "no session bus") !=
	    NULL, "desktop: %s", r->error);
}

/* stuck: a loop silent past stuck_ms, told once. */
static void
test_stuck(struct rig *r)
{
	rig_notify(r, "{\"notify\": {\"stuck_ms\": 100, \"sinks\": {\"s\": "
	    "{\"type\": \"command\", \"argv\": [\"/bin/sh\", \"-c\", \"cat >> "
	    "%s/stuck; echo >> %s/stuck\"]}}, \"rules\": [{\"on\": "
	    "[\"stuck\"], \"sink\": \"s\"}]}}");
	bus_publish(r->bus, "worker_started", json_pack("{s:s}", "loop_id",
	    "L6"));
	tap_ok(spin(r, "stuck", 1, 0), "stuck told");
}

/* held: a hold not lifted within held_ms is told; one lifted is not. */
static void
test_held(struct rig *r)
{
	rig_notify(r, "{\"notify\": {\"held_ms\": 150, \"sinks\": {\"h\": "
	    "{\"type\": \"command\", \"argv\": [\"/bin/sh\", \"-c\", \"cat >> "
	    "%s/held; echo >> %s/held\"]}}, \"rules\": [{\"on\": "
	    "[\"held\"], \"sink\": \"h\"}]}}");
	bus_publish(r->bus, "provider_hold", json_pack("{s:s, s:I}",
	    "provider", "codex", "hold_ms", (json_int_t)60000));
	bus_publish(r->bus, "provider_open", json_pack("{s:s}", "provider",
	    "codex"));
	bus_publish(r->bus, "provider_hold", json_pack("{s:s, s:I}",
	    "provider", "claude", "hold_ms", (json_int_t)60000));
	tap_ok(spin(r, "held", 1, 0), "held told");
	tap_ok(spin_sent(r, "h", "held", 1), "held: sent");
	tap_ok(lines("held") == 1 && lines_with("held",
	    "\"provider\":\"claude\"") == 1,
	    "held: once, claude's: the hold lifted in time is not told");
}

int
main(void)
{
	struct rig	 r;
	char		*err = NULL;

	if (mkdtemp(dir) == NULL)
		return 1;
	test_kinds();
	test_conf();
	memset(&r, 0, sizeof r);
	r.base = event_base_new();
	r.ch = children_new(r.base, &err);
	r.bus = bus_new(16);
	r.meter = meter_new();
	bus_observe(r.bus, rig_bus, &r);
	test_debounce(&r);
	test_failures(&r);
	test_desktop(&r);
	test_stuck(&r);
	test_held(&r);
	notify_free(r.n);
	bus_free(r.bus);
	meter_free(r.meter);
	children_free(r.ch);
	event_base_free(r.base);
	xasprintf(&err, "rm -rf '%s'", dir);
	(void)system(err);
	free(err);
	return tap_done();
}
