/*
 * fuzz-jsonrpc.c: libFuzzer target for the JSON-RPC lines mcp and acp
 * read on stdio (supervisor/api/jsonrpc.c): each line parsed, classified,
 * answered as the front ends answer, replies matched to our calls; and
 * the same lines fed to an MCP session, an ACP agent and the verb table
 * itself (as the control socket hands it a line), on a table that can
 * start nothing (no worker plan, no state directory, no project), so
 * that a line never runs a command.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "acp.h"
#include "api.h"
#include "chan.h"
#include "jsonrpc.h"
#include "mcp.h"
#include "sup.h"
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

/* The verb table the sessions call, made once for the process. */
struct fuzz_host {
	struct event_base	*base;
	struct sup		 sup;
	struct api		*api;
	char			 dir[64];
};
static struct fuzz_host	*fuzz_host;

/* Base, agent table and api: the sup's directory is never written. */
static struct fuzz_host *
fuzz_host_get(void)
{
	struct api_host	 ah;
	char		*err = NULL;

	if (fuzz_host != NULL)
		return fuzz_host;
	fuzz_host = xcalloc(1, sizeof *fuzz_host);
	snprintf(fuzz_host->dir, sizeof fuzz_host->dir, "/nonexistent/fuzz");
	fuzz_host->base = chan_base_new();
	if (sup_init(&fuzz_host->sup, fuzz_host->base, NULL, fuzz_host->dir,
	    "fuzz", &err) != 0)
		abort();
	memset(&ah, 0, sizeof ah);
	ah.sup = &fuzz_host->sup;	/* plan NULL: spawn is refused */
	fuzz_host->api = api_new(&ah);
	return fuzz_host;
}

/* What mcp sends: a reply or a notification, which must serialise. */
static void
fuzz_mcp_send(void *arg, const json_t *body, const json_t *about)
{
	char	*s;

	(void)arg;
	(void)about;
	if ((s = json_dumps(body, JSON_COMPACT)) == NULL)
		abort();
	free(s);
}

/* The verb table's reply to a control line: an object saying ok or not. */
static void
fuzz_api_reply(json_t *body, void *arg)
{
	(void)arg;
	if (!json_is_object(body) || !json_is_boolean(json_object_get(body,
	    "ok")))
		abort();
	fuzz_mcp_send(NULL, body, NULL);
}

/* What acp writes on stdout: the same. */
static void
fuzz_acp_write(void *arg, const json_t *body)
{
	fuzz_mcp_send(arg, body, NULL);
}

/* No project: session/new is refused before any loop is opened. */
static int
fuzz_acp_project(void *arg, const char *cwd, struct acp_project *p,
    char **err)
{
	(void)arg;
	(void)cwd;
	(void)p;
	*err = xstrdup("no project in the fuzzer");
	return -1;
}

/* A turn ended: nothing to do. */
static void
fuzz_acp_idle(void *arg)
{
	(void)arg;
}

/* The lines as `ccw-supervisor mcp` and `acp` take them from stdin. */
static void
fuzz_sessions(const char *buf, size_t len)
{
	struct fuzz_host	*h = fuzz_host_get();
	struct mcp_cfg		 mc;
	struct acp_cfg		 ac;
	struct mcp		*m;
	struct acp		*a;
	const char		*p, *nl, *end = buf + len;
	json_t			*v, *err;
	int			 i;

	memset(&mc, 0, sizeof mc);
	mc.api = h->api;
	mc.send = fuzz_mcp_send;
	m = mcp_new(&mc);
	memset(&ac, 0, sizeof ac);
	ac.base = h->base;
	ac.project = fuzz_acp_project;
	ac.write = fuzz_acp_write;
	ac.idle = fuzz_acp_idle;
	a = acp_new(&ac);
	for (p = buf; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if ((v = jsonrpc_parse(p, (size_t)(nl - p), &err)) != NULL) {
			mcp_message(m, v);
			api_call(h->api, v, fuzz_api_reply, NULL);
		}
		json_decref(v);
		json_decref(err);
		acp_line(a, p, (size_t)(nl - p));
		event_base_loop(h->base, EVLOOP_NONBLOCK);
	}
	/* End of input: what is in flight is stopped, then let go. */
	acp_stop_all(a, "end of input");
	for (i = 0; i < 3; i++)
		event_base_loop(h->base, EVLOOP_NONBLOCK);
	mcp_free(m);
	acp_free(a);
	api_close_all(h->api, 0);
	event_base_loop(h->base, EVLOOP_NONBLOCK);
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
	fuzz_sessions(buf, len);
	free(buf);
	return 0;
}
