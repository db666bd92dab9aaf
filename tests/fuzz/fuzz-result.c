/*
 * fuzz-result.c: libFuzzer target for an agent's final answer: the
 * WORKER_RESULT / CLARIFICATION_NEEDED reader on the exact bytes (no
 * NUL after them), and the fallbacks on the same text as a C string.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"
#include "xmalloc.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Whatever leaves the reader must be valid UTF-8: jansson checks it. */
static void
fuzz_utf8(const char *s)
{
	json_t	*j;

	if (s == NULL)
		return;
	if ((j = json_string(s)) == NULL)
		abort();
	json_decref(j);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct wresult	 r;
	char		*text, *s;
	size_t		 i;

	/* An exact copy, so ASan sees any read past the agent's bytes. */
	text = xmalloc(len > 0 ? len : 1);
	memcpy(text, data, len);
	(void)result_parse(text, len, &r);
	fuzz_utf8(r.status);
	fuzz_utf8(r.action);
	fuzz_utf8(r.summary);
	fuzz_utf8(r.next_suggestion);
	fuzz_utf8(r.loop_back_to);
	fuzz_utf8(r.detailed_output);
	for (i = 0; i < r.files_changed.n; i++)
		fuzz_utf8(r.files_changed.v[i]);
	if (r.questions != NULL && !json_is_array(r.questions))
		abort();
	result_clear(&r);
	free(text);

	/* The fallbacks read what the worker kept: a C string. */
	text = xstrndup((const char *)data, len);
	s = fallback_summary(text);
	if (s != NULL && strlen(s) > 2000)
		abort();
	free(s);
	/* The kind is read from the reason, as worker/outcome.c does. */
	if ((s = fallback_reason(text)) != NULL && strlen(s) > 400)
		abort();
	(void)fallback_kind(s);
	free(s);
	free(text);
	return 0;
}
