/*
 * test-jsonrpc.c: JSON-RPC 2.0 messages as mcp and acp read them: each
 * kind classified, every malformed shape refused with a reason (and its
 * id kept when usable), parse errors as -32700 with a null id, and our
 * own calls matched to replies, dropped, or told when freed.
 */
#include <config.h>

#include <string.h>

#include "jsonrpc.h"
#include "tap.h"

/* Classify the JSON text s. */
static enum jsonrpc_kind
kind_of(const char *s, struct jsonrpc_msg *m, const char **why)
{
	json_t			*v = json_loads(s, 0, NULL);
	enum jsonrpc_kind	 k;

	k = jsonrpc_classify(v, m, why);
	json_decref(v);	/* m's borrowed parts are not looked at after */
	return k;
}

struct got {
	int	calls;
	int	dropped;
	char	text[64];
};

/* A reply to one of our calls. */
static void
on_reply(void *arg, const json_t *result, const json_t *error)
{
	struct got	*g = arg;

	g->calls++;
	if (result == NULL && error == NULL)
		g->dropped++;
	else if (result != NULL)
		snprintf(g->text, sizeof g->text, "%s",
		    json_string_value(json_object_get(result, "x")));
	else
		snprintf(g->text, sizeof g->text, "err %lld",
		    json_integer_value(json_object_get(error, "code")));
}

/* The peer's reply text s to our calls cs. */
static int
reply_with(struct jsonrpc_calls *cs, const char *s)
{
	json_t			*v = json_loads(s, 0, NULL);
	struct jsonrpc_msg	 m;
	const char		*why;
	int			 rc;

	jsonrpc_classify(v, &m, &why);
	rc = jsonrpc_calls_reply(cs, &m);
	json_decref(v);
	return rc;
}

int
main(void)
{
	static const char *bad[] = {
		"[1,2]", "\"x\"", "{\"id\":1,\"method\":\"a\"}",
		"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"a\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"a\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"a\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":3}",
		"{\"jsonrpc\":\"2.0\",\"id\":1}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"error\":{}}",
		"{\"jsonrpc\":\"2.0\",\"result\":1}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"no\"}",
		NULL
	};
	struct jsonrpc_msg	 m;
	struct jsonrpc_calls	*cs;
	struct got		 g1, g2, g3;
	const char		*why;
	json_t			*v, *err, *body;
	char			*s;
	int			 i;

	tap_is_int(kind_of("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}",
	    &m, &why), JR_REQUEST, "a request");
	tap_is_int(kind_of("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"m\","
	    "\"params\":{\"k\":1}}", &m, &why), JR_REQUEST,
	    "a request with a string id and params");
	tap_is_int(kind_of("{\"jsonrpc\":\"2.0\",\"method\":\"n\"}", &m, &why),
	    JR_NOTIFY, "a notification");
	tap_is_int(kind_of("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", &m,
	    &why), JR_RESULT, "a result");
	tap_is_int(kind_of("{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":1,"
	    "\"message\":\"m\"}}", &m, &why), JR_ERROR, "an error");
	for (i = 0; bad[i] != NULL; i++) {
		tap_is_int(kind_of(bad[i], &m, &why), JR_INVALID, "invalid: %s",
		    bad[i]);
		tap_ok(why != NULL && *why != '\0', "with a reason (%s)",
		    why != NULL ? why : "none");
	}
	v = json_loads("{\"id\":9,\"method\":\"a\"}", 0, NULL);
	jsonrpc_classify(v, &m, &why);
	tap_ok(json_integer_value(m.id) == 9, "an invalid message keeps its id");
	json_decref(v);

	tap_ok(jsonrpc_parse("  \r", 3, &err) == NULL && err == NULL,
	    "a blank line is skipped");
	tap_ok(jsonrpc_parse("{\"a\":", 5, &err) == NULL && err != NULL,
	    "a broken line is a parse error");
	tap_is_int(json_integer_value(json_object_get(json_object_get(err,
	    "error"), "code")), JSONRPC_PARSE_ERROR, "-32700");
	tap_ok(json_is_null(json_object_get(err, "id")), "with a null id");
	json_decref(err);
	tap_ok(jsonrpc_parse("{\"a\":1,\"a\":2}", 13, &err) == NULL &&
	    err != NULL, "duplicate keys are refused");
	json_decref(err);

	v = json_integer(4);
	body = jsonrpc_result_new(v, json_pack("{s:i}", "n", 1));
	s = json_dumps(body, JSON_SORT_KEYS | JSON_COMPACT);
	tap_is_str(s, "{\"id\":4,\"jsonrpc\":\"2.0\",\"result\":{\"n\":1}}",
	    "a result body");
	free(s);
	json_decref(body);
	body = jsonrpc_error_new(v, JSONRPC_NO_METHOD, "no method %s", "x");
	s = json_dumps(body, JSON_SORT_KEYS | JSON_COMPACT);
	tap_is_str(s, "{\"error\":{\"code\":-32601,\"message\":\"no method x\"},"
	    "\"id\":4,\"jsonrpc\":\"2.0\"}", "an error body");
	free(s);
	json_decref(body);
	json_decref(v);

	memset(&g1, 0, sizeof g1);
	memset(&g2, 0, sizeof g2);
	memset(&g3, 0, sizeof g3);
	cs = jsonrpc_calls_new();
	body = jsonrpc_calls_request(cs, "a", json_object(), on_reply, &g1);
	tap_is_int(json_integer_value(json_object_get(body, "id")), 1,
	    "our first call is id 1");
	tap_is_str(json_string_value(json_object_get(body, "method")), "a",
	    "with its method");
	json_decref(body);
	json_decref(jsonrpc_calls_request(cs, "b", NULL, on_reply, &g2));
	json_decref(jsonrpc_calls_request(cs, "c", NULL, on_reply, &g3));
	tap_is_int((long long)jsonrpc_calls_count(cs), 3, "three waiting");
	tap_is_int(reply_with(cs, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":"
	    "{\"x\":\"two\"}}"), 0, "the reply to call 2 matches");
	tap_is_str(g2.text, "two", "and reaches its caller");
	tap_is_int(reply_with(cs, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":"
	    "{}}"), -1, "a second reply to it does not");
	tap_is_int(reply_with(cs, "{\"jsonrpc\":\"2.0\",\"id\":\"1\","
	    "\"result\":{}}"), -1, "nor a string id");
	jsonrpc_calls_drop(cs, &g1);
	tap_is_int(reply_with(cs, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
	    "{}}"), -1, "a dropped call is forgotten");
	tap_is_int(g1.calls, 0, "and never told");
	jsonrpc_calls_free(cs);
	tap_is_int(g3.dropped, 1, "a call waiting at the end is told");
	return tap_done();
}
