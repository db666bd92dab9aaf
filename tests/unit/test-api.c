/*
 * test-api.c: the verb table without workers: each verb's validation
 * errors, list/result on an empty table, and the loop verbs on state
 * files in a temp dir (status, open/create, pause/resume/stop as the file
 * shows them, a held lock not blocking the event loop).
 */
#include <config.h>

#include <sys/file.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "ccw-loop.h"
#include "clock.h"
#include "api.h"
#include "chan.h"
#include "state.h"
#include "statefix.h"
#include "sup.h"
#include "tap.h"
#include "xmalloc.h"

/* The state file of ccw-loop (its sections and rules). */
#define WS	(&ccw_loop_state)

struct t_reply {
	json_t	*body;
	int	 n;
};

static struct event_base	*base;

/* The api's reply: kept for the test. */
static void
t_got(json_t *body, void *arg)
{
	struct t_reply	*r = arg;

	r->n++;
	json_decref(r->body);
	r->body = json_incref(body);
}

/* Run the base until the reply came (10 s at most); the body, new ref. */
static json_t *
t_wait_reply(struct t_reply *r)
{
	uint64_t	end = clock_mono_ms() + 10000;

	while (r->n == 0 && clock_mono_ms() < end)
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK), usleep(500);
	if (r->n != 1)
		tap_diag("%d replies", r->n);
	return r->body != NULL ? r->body : json_object();
}

/* One request (JSON text) through the table; its reply (new ref). */
static json_t *
t_call(struct api *api, const char *text)
{
	struct t_reply	 r = { NULL, 0 };
	json_error_t	 e;
	json_t		*req = json_loads(text, JSON_ALLOW_NUL, &e);

	if (req == NULL)
		req = json_string(text);	/* not JSON: sent as a string */
	api_call(api, req, t_got, &r);
	json_decref(req);
	return t_wait_reply(&r);
}

/* The reply's "error", or "" when it is a success. */
static const char *
t_err_of(const json_t *j)
{
	const char	*e = json_string_value(json_object_get(j, "error"));

	return e != NULL ? e : "";
}

/* The request is refused, and the error holds want. */
static void
t_refused(struct api *api, const char *text, const char *want)
{
	json_t	*j = t_call(api, text);

	tap_ok(json_is_false(json_object_get(j, "ok")) &&
	    strstr(t_err_of(j), want) != NULL, "refused: %.60s (%s)", text,
	    t_err_of(j));
	json_decref(j);
}

/* A string member of the reply's loop state file, as on disk now. */
static const char *
t_disk(const char *id, const char *key)
{
	static char	 buf[128];
	json_t		*st = t_load(id);

	snprintf(buf, sizeof buf, "%s", json_string_value(json_object_get(st,
	    key)) ? json_string_value(json_object_get(st, key)) : "(none)");
	json_decref(st);
	return buf;
}

/* A spawn plan that refuses, saying why. */
static int
t_plan_refuse(void *arg, const struct api_spawn *sp, struct agent_req *ar,
    char **err)
{
	(void)arg;
	(void)ar;
	xasprintf(err, "no tool for role %s", sp->role);
	return -1;
}

/* Validation of the agent verbs, list/result on an empty table. */
static void
t_agent_verbs(struct api *api)
{
	json_t	*j;
	char	*big, *req;

	t_refused(api, "{\"id\":1,\"verb\":\"frobnicate\"}",
	    "unknown verb 'frobnicate'");
	t_refused(api, "{\"id\":1}", "no \"verb\"");
	t_refused(api, "{\"verb\":7}", "no \"verb\"");
	t_refused(api, "[1,2]", "must be a JSON object");
	t_refused(api, "{\"verb\":\"spawn\"}", "spawn needs \"role\"");
	t_refused(api, "{\"verb\":\"spawn\",\"role\":3}",
	    "\"role\" must be a string");
	t_refused(api, "{\"verb\":\"spawn\",\"role\":\"develop\"}",
	    "no tool for role develop");
	big = xmalloc(API_TEXT_MAX + 2);
	memset(big, 'x', API_TEXT_MAX + 1);
	big[API_TEXT_MAX + 1] = '\0';
	xasprintf(&req, "{\"verb\":\"spawn\",\"role\":\"develop\","
	    "\"message\":\"%s\"}", big);
	t_refused(api, req, "at most 4194304 bytes");
	free(req);
	big[API_NAME_MAX + 1] = '\0';
	xasprintf(&req, "{\"verb\":\"close\",\"target\":\"%s\"}", big);
	t_refused(api, req, "\"target\" must be at most 4096 bytes");
	free(req);
	free(big);
	t_refused(api, "{\"verb\":\"spawn\",\"role\":\"a\\u0000b\"}",
	    "without NUL");
	t_refused(api, "{\"verb\":\"wait\"}", "wait needs \"targets\"");
	t_refused(api, "{\"verb\":\"wait\",\"targets\":[]}",
	    "non-empty array");
	t_refused(api, "{\"verb\":\"wait\",\"targets\":\"agent-1\"}",
	    "non-empty array");
	t_refused(api, "{\"verb\":\"wait\",\"targets\":[1]}", "strings");
	t_refused(api, "{\"verb\":\"wait\",\"targets\":[\"a\"],\"mode\":\"some\"}",
	    "one of: any all");
	t_refused(api, "{\"verb\":\"wait\",\"targets\":[\"a\"],"
	    "\"timeout_ms\":-1}", "non-negative integer");
	t_refused(api, "{\"verb\":\"wait\",\"targets\":[\"a\"],"
	    "\"timeout_ms\":1.5}", "non-negative integer");
	t_refused(api, "{\"verb\":\"wait\",\"targets\":[\"agent-9\"],"
	    "\"mode\":\"all\"}", "unknown agent 'agent-9'");
	t_refused(api, "{\"verb\":\"send_input\",\"target\":\"agent-1\"}",
	    "send_input needs \"message\"");
	t_refused(api, "{\"verb\":\"send_input\",\"target\":\"agent-1\","
	    "\"message\":\"m\",\"interrupt\":\"yes\"}", "must be a boolean");
	t_refused(api, "{\"verb\":\"send_input\",\"target\":\"agent-1\","
	    "\"message\":\"m\"}", "unknown agent 'agent-1'");
	t_refused(api, "{\"verb\":\"close\"}", "close needs \"target\"");
	t_refused(api, "{\"verb\":\"close\",\"target\":\"agent-1\","
	    "\"grace_ms\":\"5\"}", "non-negative integer");
	t_refused(api, "{\"verb\":\"close\",\"target\":\"agent-1\"}",
	    "unknown agent 'agent-1'");
	t_refused(api, "{\"verb\":\"result\",\"target\":\"agent-1\"}",
	    "unknown agent 'agent-1'");

	/* the wire shape control always printed: id last */
	j = t_call(api, "{\"id\":7,\"verb\":\"list\",\"extra\":1}");
	req = json_dumps(j, JSON_COMPACT);
	tap_is_str(req, "{\"ok\":true,\"agents\":{},\"id\":7}",
	    "list on an empty table, id echoed last");
	free(req);
	json_decref(j);
	j = t_call(api, "{\"verb\":\"result\",\"target\":\"x\"}");
	req = json_dumps(j, JSON_COMPACT);
	tap_is_str(req, "{\"ok\":false,\"error\":\"unknown agent 'x'\","
	    "\"code\":\"not_found\",\"id\":null}",
	    "an error without an id: its code, id null");
	free(req);
	json_decref(j);
	j = t_call(api, "{\"id\":\"a\",\"verb\":\"list\",\"model\":null}");
	tap_is_str(json_string_value(json_object_get(j, "id")), "a",
	    "a string id is echoed");
	json_decref(j);
	tap_ok(api_idle(api), "nothing pending after the replies");
	api_close_all(api, 100);
	tap_ok(api_idle(api), "close_all on an empty table: still idle");
}

/* Set a loop's status as a front end would: rewrite the file. */
static void
t_set_status(const char *id, const char *status)
{
	t_fe_set(id, "status", json_string(status));
}

/* The loop verbs on files in t_path. */
static void
t_loop_verbs(struct api *api)
{
	json_t	*j, *st;
	char	*before;

	t_refused(api, "{\"verb\":\"loop_status\"}", "loop_status needs "
	    "\"loop_id\"");
	t_refused(api, "{\"verb\":\"loop_status\",\"loop_id\":\"../x\"}",
	    "Invalid loop ID format");
	t_refused(api, "{\"verb\":\"loop_status\",\"loop_id\":\"nope\"}",
	    "Loop not found: nope");
	t_refused(api, "{\"verb\":\"loop_pause\",\"loop_id\":\"nope\"}",
	    "Loop not found");
	t_create("L1");
	j = t_call(api, "{\"id\":1,\"verb\":\"loop_status\",\"loop_id\":\"L1\"}");
	tap_ok(json_is_true(json_object_get(j, "ok")), "loop_status ok");
	tap_is_str(json_string_value(json_object_get(j, "status")), "created",
	    "loop_status: created");
	tap_is_str(json_string_value(json_object_get(json_object_get(j,
	    "loop"), "title")), "t", "loop_status: the whole state in loop");
	json_decref(j);

	/* pause needs running: refused, and the file not touched */
	before = xstrdup(t_disk("L1", "updated_at"));
	t_refused(api, "{\"verb\":\"loop_pause\",\"loop_id\":\"L1\"}",
	    "cannot pause loop L1: its status is created");
	tap_is_str(t_disk("L1", "updated_at"), before,
	    "a refused pause does not write the file");
	free(before);
	t_refused(api, "{\"verb\":\"loop_resume\",\"loop_id\":\"L1\"}",
	    "its status is created");

	/* running: pause, resume, stop, each on disk; skill_state kept */
	t_set_status("L1", "running");
	st = t_load("L1");
	json_object_set_new(json_object_get(st, "skill_state"), "marker",
	    json_string("driver's"));
	t_fe_set("L1", "skill_state", json_deep_copy(json_object_get(st,
	    "skill_state")));
	json_decref(st);
	j = t_call(api, "{\"verb\":\"loop_pause\",\"loop_id\":\"L1\"}");
	tap_ok(json_is_true(json_object_get(j, "ok")), "loop_pause ok (%s)",
	    t_err_of(j));
	tap_is_str(json_string_value(json_object_get(j, "previous_status")),
	    "running", "loop_pause: previous running");
	tap_is_str(json_string_value(json_object_get(j, "status")), "paused",
	    "loop_pause: now paused");
	json_decref(j);
	tap_is_str(t_disk("L1", "status"), "paused", "paused on disk");
	st = t_load("L1");
	tap_is_str(json_string_value(json_object_get(json_object_get(st,
	    "skill_state"), "marker")), "driver's",
	    "the driver's skill_state untouched by the pause");
	json_decref(st);
	t_refused(api, "{\"verb\":\"loop_pause\",\"loop_id\":\"L1\"}",
	    "its status is paused");
	j = t_call(api, "{\"verb\":\"loop_resume\",\"loop_id\":\"L1\"}");
	tap_is_str(json_string_value(json_object_get(j, "status")), "running",
	    "loop_resume: running (%s)", t_err_of(j));
	json_decref(j);
	tap_is_str(t_disk("L1", "status"), "running", "running on disk");
	j = t_call(api, "{\"verb\":\"loop_stop\",\"loop_id\":\"L1\"}");
	tap_is_str(json_string_value(json_object_get(j, "status")), "failed",
	    "loop_stop: failed (%s)", t_err_of(j));
	json_decref(j);
	tap_is_str(t_disk("L1", "failure_reason"), "Manually stopped by user",
	    "loop_stop: CCW's reason on disk");
	st = t_load("L1");
	tap_is_int(state_validate(WS, st, NULL), 0, "the stopped file is valid");
	json_decref(st);
	t_refused(api, "{\"verb\":\"loop_stop\",\"loop_id\":\"L1\"}",
	    "its status is failed");
	t_refused(api, "{\"verb\":\"loop_resume\",\"loop_id\":\"L1\"}",
	    "its status is failed");

	/* stop from created and from paused */
	t_create("L2");
	j = t_call(api, "{\"verb\":\"loop_stop\",\"loop_id\":\"L2\"}");
	tap_is_str(json_string_value(json_object_get(j, "previous_status")),
	    "created", "loop_stop from created (%s)", t_err_of(j));
	json_decref(j);
	t_create("L3");
	t_set_status("L3", "paused");
	j = t_call(api, "{\"verb\":\"loop_stop\",\"loop_id\":\"L3\"}");
	tap_is_str(t_disk("L3", "status"), "failed",
	    "loop_stop from paused (%s)", t_err_of(j));
	json_decref(j);

	/* loop_open: report, create */
	t_refused(api, "{\"verb\":\"loop_open\"}", "needs \"loop_id\" or "
	    "\"title\"");
	t_refused(api, "{\"verb\":\"loop_open\",\"title\":\"\"}",
	    "title is required and must be non-empty");
	t_refused(api, "{\"verb\":\"loop_open\",\"title\":\"x\","
	    "\"max_iterations\":0}", "\"max_iterations\" must be an integer");
	t_refused(api, "{\"verb\":\"loop_open\",\"loop_id\":\"L9\"}",
	    "Loop not found: L9");
	j = t_call(api, "{\"verb\":\"loop_open\",\"loop_id\":\"L9\","
	    "\"title\":\"New\",\"max_iterations\":3}");
	tap_ok(json_is_true(json_object_get(j, "created")) &&
	    strcmp(t_disk("L9", "status"), "created") == 0,
	    "loop_open with a title creates the loop (%s)", t_err_of(j));
	tap_is_int(json_integer_value(json_object_get(json_object_get(j,
	    "loop"), "max_iterations")), 3, "loop_open: max_iterations kept");
	json_decref(j);
	j = t_call(api, "{\"verb\":\"loop_open\",\"loop_id\":\"L9\","
	    "\"title\":\"Again\"}");
	tap_ok(json_is_false(json_object_get(j, "created")) &&
	    strcmp(t_disk("L9", "title"), "New") == 0,
	    "loop_open of an existing loop reports it, unchanged");
	json_decref(j);
	j = t_call(api, "{\"verb\":\"loop_open\",\"title\":\"Gen\"}");
	tap_ok(strncmp(json_string_value(json_object_get(j, "loop_id")) ?
	    json_string_value(json_object_get(j, "loop_id")) : "", "loop-v2-",
	    8) == 0, "loop_open without an id makes one (%s)",
	    json_string_value(json_object_get(j, "loop_id")));
	json_decref(j);
}

/* A front end holding {id}.lock: the loop verb waits off the event loop. */
static void
t_held_lock(struct api *api)
{
	struct t_reply	 r = { NULL, 0 };
	json_t		*req;
	uint64_t	 t0, lat;
	int		 fd;

	t_create("L4");
	t_set_status("L4", "running");
	fd = openat(t_dirfd, "L4.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	tap_ok(fd >= 0 && flock(fd, LOCK_EX) == 0, "the test holds L4.lock");
	req = json_pack("{s:s, s:s}", "verb", "loop_pause", "loop_id", "L4");
	t0 = clock_mono_ms();
	api_call(api, req, t_got, &r);
	json_decref(req);
	while (clock_mono_ms() - t0 < 300)
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK), usleep(1000);
	lat = clock_mono_ms() - t0;
	if (r.n != 0)
		tap_diag("early reply: %s", t_err_of(r.body));
	tap_ok(r.n == 0 && lat < 1000 && !api_idle(api),
	    "the pause waits for the lock without blocking the loop (%llu ms)",
	    (unsigned long long)lat);
	flock(fd, LOCK_UN);
	close(fd);
	req = t_wait_reply(&r);
	tap_is_str(json_string_value(json_object_get(req, "status")),
	    "paused", "once the lock is free, the pause lands");
	json_decref(req);
}

/*
 * A refusal of its kind: the reply's "code" is the kind's name (the
 * front ends map the code, so every error path must carry the right one).
 */
static void
t_code(struct api *api, const char *text, enum err_code want)
{
	json_t	*j = t_call(api, text);

	tap_is_str(json_string_value(json_object_get(j, "code")),
	    err_code_name(want), "%.60s: %s", text, err_code_name(want));
	tap_ok(api_reply_code(j) == want, "%.60s: api_reply_code", text);
	json_decref(j);
}

/* Each error path of the verbs yields its kind. */
static void
t_codes(struct api *api)
{
	t_code(api, "{\"verb\":\"frobnicate\"}", ERR_INVALID);
	t_code(api, "{\"verb\":\"spawn\",\"role\":3}", ERR_INVALID);
	t_code(api, "{\"verb\":\"spawn\",\"role\":\"develop\"}", ERR_INVALID);
	t_code(api, "{\"verb\":\"spawn\",\"role\":\"d\",\"cwd\":\"rel\"}",
	    ERR_INVALID);
	t_code(api, "{\"verb\":\"result\",\"target\":\"agent-9\"}",
	    ERR_NOT_FOUND);
	t_code(api, "{\"verb\":\"close\",\"target\":\"agent-9\"}",
	    ERR_NOT_FOUND);
	t_code(api, "{\"verb\":\"wait\",\"targets\":[\"agent-9\"]}",
	    ERR_NOT_FOUND);
	t_code(api, "{\"verb\":\"send_input\",\"target\":\"agent-9\","
	    "\"message\":\"m\"}", ERR_NOT_FOUND);
	t_code(api, "{\"verb\":\"loop_status\",\"loop_id\":\"nope\"}",
	    ERR_NOT_FOUND);
	t_code(api, "{\"verb\":\"loop_stop\",\"loop_id\":\"nope\"}",
	    ERR_NOT_FOUND);
	t_code(api, "{\"verb\":\"loop_status\",\"loop_id\":\"../x\"}",
	    ERR_INVALID);
	t_code(api, "{\"verb\":\"loop_open\",\"title\":\"\"}", ERR_INVALID);
	t_code(api, "{\"verb\":\"answer_question\",\"question_id\":"
	    "\"q-000000000000\",\"answer\":\"a\"}", ERR_NOT_FOUND);
	t_code(api, "{\"verb\":\"answer_question\",\"question_id\":"
	    "\"q-000000000000\",\"answer\":\"\"}", ERR_INVALID);
	t_code(api, "{\"verb\":\"list_questions\",\"loop_id\":\"../x\"}",
	    ERR_INVALID);
	t_code(api, "{\"verb\":\"list_questions\",\"status\":\"some\"}",
	    ERR_INVALID);
	t_create("C1");
	t_code(api, "{\"verb\":\"loop_pause\",\"loop_id\":\"C1\"}",
	    ERR_CONFLICT);
	t_code(api, "{\"verb\":\"loop_resume\",\"loop_id\":\"C1\"}",
	    ERR_CONFLICT);
	t_set_status("C1", "running");
	t_code(api, "{\"verb\":\"loop_update\",\"loop_id\":\"C1\","
	    "\"title\":\"x\"}", ERR_CONFLICT);
	t_code(api, "{\"verb\":\"loop_open\",\"loop_id\":\"C1\","
	    "\"start\":true}", ERR_UNAVAILABLE);
}

/*
 * The kind, not the words: a reply reworded keeps its status, and one
 * saying "not found" of the wrong kind is not a 404; every kind has a
 * name that parses back.
 */
static void
t_code_table(void)
{
	static const char *const replies[] = {
	    "{\"ok\":false,\"error\":\"Loop not found: x\","
	    "\"code\":\"invalid_argument\"}",
	    "{\"ok\":false,\"error\":\"reworded entirely\","
	    "\"code\":\"not_found\"}",
	    "{\"ok\":false,\"error\":\"no such loop\"}",
	    "{\"ok\":true}",
	};
	static const int	 http[] = { 400, 404, 400, 200 };
	static const int	 rpc[] = { -32602, -32001, -32603, 0 };
	enum err_code		 c;
	json_t			*j;
	size_t			 i;

	for (i = 0; i < sizeof replies / sizeof replies[0]; i++) {
		j = json_loads(replies[i], 0, NULL);
		tap_is_int(err_code_http(api_reply_code(j)), http[i],
		    "HTTP status of %s", replies[i]);
		tap_is_int(err_code_jsonrpc(api_reply_code(j)), rpc[i],
		    "JSON-RPC code of %s", replies[i]);
		json_decref(j);
	}
	for (c = ERR_NONE; c <= ERR_INTERNAL; c++)
		tap_ok(err_code_parse(err_code_name(c)) == c,
		    "kind %d: name %s parses back", (int)c, err_code_name(c));
	tap_is_int(err_code_http_own(ERR_CONFLICT), 409,
	    "our routes: a conflict is 409 (CCW's keep 400)");
	tap_is_int(err_code_http_own(ERR_NOT_FOUND), 404,
	    "our routes: not_found is 404");
	tap_is_int(err_code_http_own(ERR_INVALID), 400,
	    "our routes: invalid_argument is 400");
	tap_ok(err_code_parse("frob") == ERR_INTERNAL,
	    "an unknown code is internal, never a success");
	tap_is_int(err_code_exit(ERR_BUSY), EXIT_FAILED, "busy: exit 1");
	tap_is_int(err_code_exit(ERR_INVALID), EXIT_USAGE, "invalid: exit 2");
}

int
main(void)
{
	struct api_host	 host;
	struct sup	 sup;
	struct api	*api;
	char		*err = NULL;

	t_setup();
	base = chan_base_new();
	if (sup_init(&sup, base, NULL, t_path, "host", &err) != 0) {
		tap_ok(0, "sup_init: %s", err);
		return tap_done();
	}
	memset(&host, 0, sizeof host);
	host.sup = &sup;
	host.state_dir = t_path;
	host.plan = t_plan_refuse;
	api = api_new(&host);
	t_loop_verbs(api);
	t_codes(api);
	t_code_table();
	t_held_lock(api);
	t_agent_verbs(api);	/* last: its api_close_all stops lock waits */
	api_free(api);

	host.state_dir = NULL;
	host.plan = NULL;
	api = api_new(&host);
	t_refused(api, "{\"verb\":\"loop_status\",\"loop_id\":\"L1\"}",
	    "no state directory");
	t_refused(api, "{\"verb\":\"spawn\",\"role\":\"develop\"}",
	    "cannot start agents");
	t_code(api, "{\"verb\":\"loop_status\",\"loop_id\":\"L1\"}",
	    ERR_UNAVAILABLE);
	t_code(api, "{\"verb\":\"spawn\",\"role\":\"develop\"}",
	    ERR_UNAVAILABLE);
	api_free(api);
	sup_free(&sup);
	event_base_free(base);
	t_teardown();
	return tap_done();
}
