/*
 * fuzz-httphead.c: libFuzzer target for serve's HTTP request head parser
 * (supervisor/api/httphead.c): the head, its fields and its query string
 * as a peer on the network sends them, with a small and a large limit.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "httphead.h"
#include "xmalloc.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* One parse: what DONE hands out must be whole and within the bytes. */
static void
fuzz_head(const char *buf, size_t len, size_t max)
{
	struct http_head	 h;
	const char		*why = NULL;
	char			 v[64];
	size_t			 used = 0, i;
	int			 code = 0;

	switch (http_head_parse(buf, len, max, &h, &used, &code, &why)) {
	case HTTP_HEAD_MORE:
		if (len > max)
			abort();
		break;
	case HTTP_HEAD_BAD:
		if (code < 400 || code > 599 || why == NULL)
			abort();
		break;
	case HTTP_HEAD_DONE:
		if (used == 0 || used > len || used > max || h.path == NULL ||
		    h.query == NULL || h.nfields > HTTP_FIELDS_MAX)
			abort();
		for (i = 0; i < h.nfields; i++)
			if (h.fields[i].name == NULL || h.fields[i].value == NULL)
				abort();
		(void)http_head_field(&h, "host");
		(void)http_head_field(&h, "origin");
		(void)http_method_name(h.method);
		(void)http_query_get(h.query, "token", v, sizeof v);
		(void)http_query_get(h.query, "since", v, sizeof v);
		(void)http_query_get(h.query, "", v, 1);
		http_head_clear(&h);
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char	*buf;

	/* An exact copy, so ASan sees any read past the peer's bytes. */
	buf = xmalloc(len > 0 ? len : 1);
	memcpy(buf, data, len);
	fuzz_head(buf, len, 8192);
	fuzz_head(buf, len, 64);
	free(buf);
	return 0;
}
