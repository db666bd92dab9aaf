/*
 * test-batchtext.c: state.json's text made from kept pieces (batchtext.c)
 * is byte for byte json_dumps' of the whole state, before and after
 * entries, issues and top-level members change and the history grows or
 * drops its first entry; a change not told is not seen (what it keeps).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "batchtext.h"
#include "tap.h"

/* The text against json_dumps' of st. */
static void
same(struct batch_text *t, const json_t *st, const char *what)
{
	char	*a = batchtext_dump(t, st);
	char	*b = json_dumps(st, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	tap_ok(a != NULL && b != NULL && strcmp(a, b) == 0, "%s", what);
	free(a);
	free(b);
}

static void
hist_same(struct batch_text *t, const json_t *h, const char *what)
{
	char	*a = batchtext_history(t, h);
	char	*b = json_dumps(h, JSON_INDENT(2));

	tap_ok(a != NULL && b != NULL && strcmp(a, b) == 0, "%s", what);
	free(a);
	free(b);
}

static void
test_state(void)
{
	struct batch_text	*t = batchtext_new();
	json_t	*st, *q, *e;
	char	*s;

	st = json_loads("{\"batch_id\": \"b\", \"issues\": {}, \"queue\": [],"
	    " \"context\": {\"usage\": {}, \"n\": 1.5, \"e\": []}, "
	    "\"errors\": []}", 0, NULL);
	same(t, st, "empty queue and issues");
	q = json_object_get(st, "queue");
	json_array_append_new(q, json_pack("{s:s, s:{s:I, s:n}, s:[]}",
	    "item_id", "a\n\"\xc3\xa9", "usage", "in", (json_int_t)3, "cost",
	    "x"));
	json_array_append_new(q, json_pack("{s:s, s:s}", "item_id", "b",
	    "status", "pending"));
	json_object_set_new(json_object_get(st, "issues"), "I-1", json_pack(
	    "{s:s, s:n}", "status", "planned", "error"));
	json_object_set_new(json_object_get(st, "issues"), "I \"2\"",
	    json_pack("{s:s}", "status", "planned"));
	same(t, st, "entries, issues, escapes, nesting");
	e = json_array_get(q, 1);
	json_object_set_new(e, "status", json_string("completed"));
	batchtext_item(t, 1);
	json_object_set_new(json_object_get(json_object_get(st, "issues"),
	    "I \"2\""), "status", json_string("completed"));
	batchtext_issue(t, "I \"2\"");
	json_object_set_new(st, "updated_at", json_string("now"));
	same(t, st, "a changed entry and issue told, a new top-level member");
	json_object_set_new(e, "status", json_string("failed"));
	s = batchtext_dump(t, st);
	tap_ok(strstr(s, "\"completed\"") != NULL && strstr(s, "failed") ==
	    NULL, "a change not told keeps the kept text");
	free(s);
	json_array_set_new(q, 1, json_pack("{s:s}", "item_id", "c"));
	same(t, st, "an entry replaced is encoded again");
	json_decref(st);
	batchtext_free(t);
}

static void
test_history(void)
{
	struct batch_text	*t = batchtext_new();
	json_t	*h = json_array();
	int	 i;

	hist_same(t, h, "an empty history");
	for (i = 0; i < 3; i++) {
		json_array_append_new(h, json_pack("{s:i, s:s}", "n", i, "p",
		    "x"));
		hist_same(t, h, "the history grown");
	}
	json_array_remove(h, 0);
	json_array_append_new(h, json_pack("{s:i}", "n", 9));
	hist_same(t, h, "its first entry dropped, one appended");
	json_decref(h);
	batchtext_free(t);
}

int
main(void)
{
	test_state();
	test_history();
	return tap_done();
}
