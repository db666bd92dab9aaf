/*
 * test-jsondiff.c: json_diff's list of changes: members and elements
 * added, removed and changed; an array that only grew; a bounded log
 * that lost its head; the cap.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "jsondiff.h"
#include "tap.h"

/* The diff of two JSON texts, compact, compared with want. */
static void
check(const char *a, const char *b, size_t max, const char *want,
    const char *what)
{
	json_t	*ja = json_loads(a, JSON_DECODE_ANY, NULL);
	json_t	*jb = json_loads(b, JSON_DECODE_ANY, NULL);
	json_t	*d = json_diff(ja, jb, max);
	char	*got = json_dumps(d, JSON_COMPACT);

	tap_is_str(got, want, "%s", what);
	free(got);
	json_decref(d);
	json_decref(ja);
	json_decref(jb);
}

int
main(void)
{
	check("{\"a\":1,\"b\":{\"c\":2}}", "{\"a\":1,\"b\":{\"c\":2}}", 64,
	    "[]", "equal values: no change");
	check("{\"a\":{\"b\":1,\"c\":2}}", "{\"a\":{\"b\":3,\"d\":[1]}}", 64,
	    "[{\"path\":\"a.b\",\"from\":1,\"to\":3},{\"path\":\"a.c\","
	    "\"from\":2},{\"path\":\"a.d\",\"to\":[1]}]",
	    "a member changed, one removed, one added (its whole value)");
	check("{\"e\":[1,1,1]}", "{\"e\":[1,1,1,1]}", 64,
	    "[{\"path\":\"e[3]\",\"to\":1}]", "an array that only grew");
	check("{\"e\":[1,2,3,4,5]}", "{\"e\":[2,3,4,5,6]}", 64,
	    "[{\"path\":\"e[0]\",\"from\":1},{\"path\":\"e[4]\",\"to\":6}]",
	    "a log kept at its newest 5: one out, one in");
	check("{\"e\":[1,2]}", "{\"e\":[]}", 64,
	    "[{\"path\":\"e[0]\",\"from\":1},{\"path\":\"e[1]\",\"from\":2}]",
	    "an array emptied");
	check("{\"x\":null}", "{\"x\":\"s\"}", 64,
	    "[{\"path\":\"x\",\"from\":null,\"to\":\"s\"}]",
	    "null to a string is a change");
	check("[1,2,3,4]", "[5,6,7,8]", 2,
	    "[{\"path\":\"[0]\",\"from\":1,\"to\":5},{\"path\":\"[1]\","
	    "\"from\":2,\"to\":6},{\"path\":\"...\",\"more\":true}]",
	    "capped: the rest said to be left out");
	check("1", "2", 64, "[{\"path\":\"(all)\",\"from\":1,\"to\":2}]",
	    "two scalars");
	return tap_done();
}
