/*
 * test-result.c: the WORKER_RESULT / CLARIFICATION_NEEDED reader on the
 * shapes agents really write, and on hostile text (invalid UTF-8, NUL
 * bytes, 10 MiB without a block, no final newline, a fuzzer's finds).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "result.h"
#include "tap.h"
#include "xmalloc.h"

#define S(s)	(s), sizeof(s) - 1

static const char canonical[] =
    "I changed two files.\n"
    "WORKER_RESULT:\n"
    "- action: develop\n"
    "- status: success\n"
    "- summary: added the frame reader\n"
    "- files_changed: [\"src/a.c\", \"src/b.c\"]\n"
    "- next_suggestion: validate\n"
    "- loop_back_to: null\n"
    "DETAILED_OUTPUT:\n"
    "first line\n"
    "\n"
    "  third line, indented\n";

/*
 * Copy into a buffer of exactly n bytes so valgrind sees any read past
 * the end: the parser is told the text is not NUL-terminated.
 */
static int
parse(const char *s, size_t n, struct wresult *r)
{
	char	*buf;
	int	 rc;

	buf = xmalloc(n);
	memcpy(buf, s, n);
	rc = result_parse(buf, n, r);
	free(buf);
	return rc;
}

/* The fields that leave the parser must be valid UTF-8 for jansson. */
static int
valid_utf8(const char *s)
{
	json_t	*j;

	if (s == NULL)
		return 1;
	if ((j = json_string(s)) == NULL)
		return 0;
	json_decref(j);
	return 1;
}

/* The block as the design document shows it. */
static void
test_canonical(void)
{
	struct wresult	r;

	tap_is_int(parse(S(canonical), &r), 1, "canonical: block found");
	tap_is_str(r.status, "success", "canonical: status");
	tap_is_str(r.action, "develop", "canonical: action");
	tap_is_str(r.summary, "added the frame reader", "canonical: summary");
	tap_is_int((long long)r.files_changed.n, 2, "canonical: two files");
	tap_ok(r.files_changed.n == 2 &&
	    strcmp(r.files_changed.v[0], "src/a.c") == 0 &&
	    strcmp(r.files_changed.v[1], "src/b.c") == 0,
	    "canonical: file names");
	tap_is_str(r.next_suggestion, "validate", "canonical: next_suggestion");
	tap_is_str(r.loop_back_to, NULL, "canonical: loop_back_to null");
	tap_is_str(r.detailed_output, "first line\n\n  third line, indented",
	    "canonical: detailed output keeps blank and indented lines");
	tap_ok(r.questions == NULL, "canonical: no questions");
	result_clear(&r);
	tap_ok(r.status == NULL && r.files_changed.n == 0,
	    "result_clear zeroes");
}

/* Windows line ends, stray spaces, markdown and case. */
static void
test_tolerance(void)
{
	struct wresult	r;

	parse(S("WORKER_RESULT:\r\n- status: partial\r\n- summary: crlf\r\n"
	    "- files_changed: a.c, b.c\r\nDETAILED_OUTPUT:\r\nx\r\ny\r\n"), &r);
	tap_is_str(r.status, "partial", "crlf: status");
	tap_is_str(r.summary, "crlf", "crlf: no carriage return in summary");
	tap_is_str(r.detailed_output, "x\ny", "crlf: detailed output uses \\n");
	result_clear(&r);

	parse(S("   WORKER_RESULT:   \n   -   Status :   failed   \n"
	    "  summary:    spaced out   \n"), &r);
	tap_is_str(r.status, "failed", "spaces: status, key case-insensitive");
	tap_is_str(r.summary, "spaced out", "spaces: summary trimmed");
	result_clear(&r);

	parse(S("## **WORKER_RESULT**:\n* **status**: `needs_input`\n"
	    "- **summary:** bold summary\n- **ACTION**: debug\n"
	    "**DETAILED_OUTPUT**:\nbody\n"), &r);
	tap_is_str(r.status, "needs_input", "markdown: status in backticks");
	tap_is_str(r.summary, "bold summary", "markdown: bold key with colon");
	tap_is_str(r.action, "debug", "markdown: upper-case key");
	tap_is_str(r.detailed_output, "body", "markdown: bold DETAILED_OUTPUT");
	result_clear(&r);

	parse(S("Here it is:\n```\nWORKER_RESULT:\n- status: success\n"
	    "DETAILED_OUTPUT:\ninside the fence\n```\nThanks for reading.\n"),
	    &r);
	tap_is_str(r.status, "success", "fence: status");
	tap_is_str(r.detailed_output, "inside the fence",
	    "fence: detailed output stops at the closing fence");
	result_clear(&r);
}

/* Defaults for what is missing, and unknown statuses. */
static void
test_defaults(void)
{
	struct wresult	r;

	tap_is_int(parse(S("WORKER_RESULT:\n- status: success\n"), &r), 1,
	    "missing fields: found");
	tap_ok(r.action == NULL && r.summary == NULL &&
	    r.next_suggestion == NULL && r.loop_back_to == NULL &&
	    r.detailed_output == NULL && r.files_changed.n == 0,
	    "missing fields: defaults");
	result_clear(&r);

	parse(S("WORKER_RESULT:\n- summary: before\n- status: great\n"
	    "- colour: blue\n- next_suggestion: none\n- summary: again\n"), &r);
	tap_is_str(r.status, "unknown", "bad status: unknown");
	tap_is_str(r.summary, "before",
	    "bad status: parsing goes on, first value wins");
	tap_is_str(r.next_suggestion, NULL, "none means NULL");
	result_clear(&r);

	tap_is_int(parse(S("just some prose about WORKER_RESULT: blocks\n"),
	    &r), 0, "no block: 0");
	tap_is_str(r.status, "unknown", "no block: status unknown");
	result_clear(&r);

	tap_is_int(result_parse(NULL, 0, &r), 0, "empty text: 0");
	tap_is_str(r.status, "unknown", "empty text: status unknown");
	result_clear(&r);
}

/* The echoed prompt holds a template block before the real one. */
static void
test_last_wins(void)
{
	struct wresult	r;

	parse(S("End with:\nWORKER_RESULT:\n- action: develop\n"
	    "- status: success | failed | needs_input | partial\n"
	    "- summary: one line\nDETAILED_OUTPUT:\nfree text\n\n"
	    "OK, done.\n**WORKER_RESULT:**\n- status: failed\n"
	    "- summary: tests fail\n"), &r);
	tap_is_str(r.status, "failed", "last block wins: status");
	tap_is_str(r.summary, "tests fail", "last block wins: summary");
	tap_ok(r.action == NULL, "last block wins: nothing from the template");
	result_clear(&r);
}

/* files_changed in every shape agents use. */
static void
test_files(void)
{
	struct wresult	r;

	parse(S("WORKER_RESULT:\n- files_changed: []\n"), &r);
	tap_is_int((long long)r.files_changed.n, 0, "files: []");
	result_clear(&r);
	parse(S("WORKER_RESULT:\n- files_changed: null\n"), &r);
	tap_is_int((long long)r.files_changed.n, 0, "files: null");
	result_clear(&r);
	parse(S("WORKER_RESULT:\n- files_changed: [a.c, `b c.c`, 'd.h']\n"),
	    &r);
	tap_ok(r.files_changed.n == 3 &&
	    strcmp(r.files_changed.v[1], "b c.c") == 0 &&
	    strcmp(r.files_changed.v[2], "d.h") == 0,
	    "files: bracketed bare words");
	result_clear(&r);
	parse(S("WORKER_RESULT:\n- files_changed:\n  - x.c\n  - y.c\n"
	    "- status: success\n"), &r);
	tap_ok(r.files_changed.n == 2 &&
	    strcmp(r.files_changed.v[1], "y.c") == 0 &&
	    strcmp(r.status, "success") == 0, "files: bullet list");
	result_clear(&r);
	parse(S("WORKER_RESULT:\n- files_changed: [\n  \"p.c\",\n  \"q.c\"\n]\n"
	    "- status: partial\n"), &r);
	tap_ok(r.files_changed.n == 2 &&
	    strcmp(r.files_changed.v[0], "p.c") == 0 &&
	    strcmp(r.status, "partial") == 0, "files: JSON over lines");
	result_clear(&r);
}

/* Questions: their JSON shape and their effect on the status. */
static void
test_clarify(void)
{
	struct wresult	 r;
	json_t		*q;

	tap_is_int(parse(S("WORKER_RESULT:\n- status: success\n"
	    "DETAILED_OUTPUT:\nsome text\nCLARIFICATION_NEEDED:\n"
	    "Q1: Which database? | Options: [SQLite, Postgres] | "
	    "Recommended: [SQLite]\n"
	    "- Q2: Keep the old API? | Options: [yes, no]\n"
	    "trailing prose\n"), &r), 1, "clarify+result: found");
	tap_is_str(r.status, "needs_input", "clarify forces needs_input");
	tap_is_str(r.detailed_output, "some text",
	    "detailed output stops at CLARIFICATION_NEEDED");
	tap_is_int((long long)json_array_size(r.questions), 2, "two questions");
	q = json_array_get(r.questions, 0);
	tap_is_str(json_string_value(json_object_get(q, "id")), "Q1", "q1 id");
	tap_is_str(json_string_value(json_object_get(q, "question")),
	    "Which database?", "q1 text");
	tap_ok(json_array_size(json_object_get(q, "options")) == 2 &&
	    strcmp(json_string_value(json_array_get(json_object_get(q,
	    "options"), 1)), "Postgres") == 0, "q1 options");
	tap_is_str(json_string_value(json_object_get(q, "recommended")),
	    "SQLite", "q1 recommended");
	q = json_array_get(r.questions, 1);
	tap_ok(json_is_null(json_object_get(q, "recommended")),
	    "q2 recommended null when absent");
	result_clear(&r);

	tap_is_int(parse(S("I need to know:\n**CLARIFICATION_NEEDED:**\n"
	    "Q1: Which port? | Options: [80, 8080] | Recommended: 8080\n"),
	    &r), 1, "clarify alone: found");
	tap_is_str(r.status, "needs_input", "clarify alone: needs_input");
	tap_is_int((long long)json_array_size(r.questions), 1,
	    "clarify alone: one question");
	result_clear(&r);

	parse(S("WORKER_RESULT:\n- status: success\n"
	    "CLARIFICATION_NEEDED: none\n"), &r);
	tap_is_str(r.status, "success",
	    "CLARIFICATION_NEEDED: none is no question");
	result_clear(&r);
}

/* Bytes that are not text must not crash us nor leak out. */
static void
test_hostile(void)
{
	struct wresult	 r;
	char		*big;
	size_t		 n = 10u << 20, i;
	clock_t		 t0;
	double		 secs;

	parse(S("\xff\xfe garbage\nWORKER_RESULT:\n- status: success\n"
	    "- summary: bad \xc3\x28 \xed\xa0\x80 \xf4\x90\x80\x80 "
	    "end\xe2\x82\n- files_changed: [\"ok\xff.c\"]\n"
	    "DETAILED_OUTPUT:\n\xc0\xaf\n"), &r);
	tap_ok(valid_utf8(r.summary) && valid_utf8(r.detailed_output) &&
	    r.files_changed.n == 1 && valid_utf8(r.files_changed.v[0]),
	    "invalid UTF-8 replaced");
	tap_ok(r.summary != NULL && strstr(r.summary, "\xef\xbf\xbd") != NULL,
	    "invalid UTF-8 becomes U+FFFD");
	result_clear(&r);

	parse(S("pre\0amble\nWORKER_RESULT:\n- status: success\n"
	    "- summary: a\0b\n"), &r);
	tap_is_str(r.summary, "a\xef\xbf\xbd" "b",
	    "NUL inside a field replaced");
	result_clear(&r);

	/*
	 * The 22 bytes the fuzzer found (tests/fuzz/result/): a question
	 * line that is only decoration, at the very end of the text, read
	 * 2 bytes past it (ASan, valgrind).
	 */
	tap_is_int(parse(S("CLARIFICATION_NEEDED\n*"), &r), 1,
	    "decoration-only question line at the end: found");
	tap_is_int((long long)json_array_size(r.questions), 0,
	    "decoration-only question line: no question");
	result_clear(&r);
	parse(S("CLARIFICATION_NEEDED:\nQ1: Which? | Options: [a, b]\n  __ "),
	    &r);
	tap_is_int((long long)json_array_size(r.questions), 1,
	    "a question, then blank decoration at the end: one question");
	result_clear(&r);

	tap_is_int(parse(S("WORKER_RESULT:\n- status: partial\n- summary: cut"),
	    &r), 1, "no final newline: found");
	tap_is_str(r.summary, "cut", "no final newline: last field read");
	result_clear(&r);

	big = xmalloc(n);
	for (i = 0; i < n; i++)
		big[i] = (i % 97 == 96) ? '\n' : (char)('a' + i % 26);
	t0 = clock();
	tap_is_int(result_parse(big, n, &r), 0, "10 MiB without a block: 0");
	secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
	tap_ok(secs < 2.0, "10 MiB without a block is fast (%.3f s)", secs);
	result_clear(&r);
	memset(big, '-', n);
	result_parse(big, n, &r);
	tap_is_str(r.status, "unknown", "10 MiB single line of dashes");
	result_clear(&r);
	free(big);
}

/* Each group is independent; the plan is printed last. */
int
main(void)
{
	test_canonical();
	test_tolerance();
	test_defaults();
	test_last_wins();
	test_files();
	test_clarify();
	test_hostile();
	return tap_done();
}
