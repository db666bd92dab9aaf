/*
 * fuzz-jsonrpc.c: libFuzzer target for the JSON-RPC lines mcp and acp
 * read on stdio (supervisor/api/jsonrpc.c): each line parsed, classified,
 * answered as the front ends answer, and replies matched to our calls.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "xmalloc.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* A reply to one of our calls (or its drop): a result or an error, never both. */
static void
fuzz_reply(void *arg, const json_t *result, const json_t *error)
{
	int	*n = arg;

	if (result != NULL && error != NULL)
		abort();
	if (error != NULL && !json_is_object(error))
		abort();
	(*n)++;
}

/* The body a front end would send must serialise. */
static void
fuzz_send(json_t *body)
{
	char	*s;

	if (body == NULL || (s = json_dumps(body, JSON_COMPACT)) == NULL)
		abort();
	free(s);
	json_decref(body);
}

/* One line as cmd-mcp.c and cmd-acp.c take it. */
static void
fuzz_line(struct jsonrpc_calls *cs, const char *line, size_t len)
{
	struct jsonrpc_msg	 m;
	json_t			*v, *err;
	const char		*why;

	if ((v = jsonrpc_parse(line, len, &err)) == NULL) {
		if (err != NULL)
			fuzz_send(err);
		return;
	}
	switch (jsonrpc_classify(v, &m, &why)) {
	case JR_INVALID:
		if (why == NULL)
			abort();
		fuzz_send(jsonrpc_error_new(m.id, JSONRPC_INVALID_REQUEST,
		    "%s", why));
		break;
	case JR_REQUEST:
		if (m.id == NULL || m.method == NULL)
			abort();
		fuzz_send(jsonrpc_result_new(m.id, json_object()));
		break;
	case JR_NOTIFY:
		if (m.method == NULL)
			abort();
		fuzz_send(jsonrpc_notify_new(m.method, m.params != NULL ?
		    json_deep_copy(m.params) : NULL));
		break;
	case JR_RESULT:
	case JR_ERROR:
		(void)jsonrpc_calls_reply(cs, &m);
		break;
	}
	json_decref(v);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct jsonrpc_calls	*cs = jsonrpc_calls_new();
	const char		*p, *nl, *end;
	char			*buf;
	int			 i, n = 0;

	/* Three calls of ours waiting (ids 1, 2, 3) for the peer's replies. */
	for (i = 0; i < 3; i++)
		json_decref(jsonrpc_calls_request(cs, "session/request_permission",
		    json_object(), fuzz_reply, &n));
	/* An exact copy, so ASan sees any read past the peer's bytes. */
	buf = xmalloc(len > 0 ? len : 1);
	memcpy(buf, data, len);
	end = buf + len;
	for (p = buf; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		fuzz_line(cs, p, (size_t)(nl - p));
	}
	jsonrpc_calls_free(cs);
	if (n != 3)
		abort();
	free(buf);
	return 0;
}
