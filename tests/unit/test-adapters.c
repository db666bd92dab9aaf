/*
 * test-adapters.c: each adapter's argv (first run and resume) against the
 * flags checked in tests/streams/README.md, and each stream parser against
 * tests/streams/ (real CLI output), garbage, huge and wrong-shaped lines.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "result.h"
#include "streamfeed.h"
#include "tap.h"
#include "xmalloc.h"

/* One string shows order and content of argv in a failing check's diag. */
static char *
join(const struct strv *sv)
{
	char	*out = xstrdup(""), *n;
	size_t	 i;

	for (i = 0; i < sv->n; i++) {
		xasprintf(&n, "%s%s%s", out, i > 0 ? " " : "", sv->v[i]);
		free(out);
		out = n;
	}
	return out;
}

/* Options come from JSON config; NULL text means "no options". */
static json_t *
opts(const char *text)
{
	json_error_t	err;

	return text == NULL ? NULL : json_loads(text, 0, &err);
}

/* Build argv; execv needs a NULL after the last argument, so check it too. */
static void
check_argv(const char *tool, const struct tool_spec *spec, const char *resume,
    const char *input, const char *want)
{
	const struct adapter	*ad;
	struct strv		 sv = { NULL, 0 };
	char			*got;

	if ((ad = adapter_find(tool)) == NULL) {
		tap_ok(0, "adapter %s exists", tool);
		return;
	}
	ad->build_argv(spec, resume, input, &sv);
	got = join(&sv);
	tap_ok(strcmp(got, want) == 0 && sv.v[sv.n] == NULL,
	    "%s argv%s: %s", tool, resume != NULL ? " (resume)" : "", want);
	if (strcmp(got, want) != 0)
		tap_diag("got: %s", got);
	free(got);
	strv_clear(&sv);
}

/* A spec with the given tool-level fields and options (owned by caller). */
static struct tool_spec
spec_of(const char *tool, const char *binary, const char *model, json_t *o)
{
	struct tool_spec	s;

	memset(&s, 0, sizeof s);
	s.tool = tool;
	s.binary = binary;
	s.model = model;
	s.prompt = "do the task";
	s.options = o;
	return s;
}

/* Every adapter, first run and resume, defaults and every option. */
static void
test_argv(void)
{
	struct tool_spec	 s;
	json_t			*o;

	s = spec_of("codex", NULL, NULL, NULL);
	check_argv("codex", &s, NULL, NULL,
	    "codex exec --json --skip-git-repo-check -s workspace-write -");
	check_argv("codex", &s, "01a2009c-45e1", "more",
	    "codex exec resume --json --skip-git-repo-check "
	    "-c sandbox_mode=\"workspace-write\" 01a2009c-45e1 -");
	o = opts("{\"sandbox\":\"read-only\",\"extra_args\":[\"--oss\",7,"
	    "\"--color\",\"never\"]}");
	s = spec_of("codex", "/opt/bin/codex", "gpt-5.3-codex", o);
	check_argv("codex", &s, NULL, NULL,
	    "/opt/bin/codex exec --json --skip-git-repo-check -s read-only "
	    "-m gpt-5.3-codex --oss --color never -");
	json_decref(o);
	o = opts("{\"sandbox\":\"danger-full-access\"}");
	s = spec_of("codex", NULL, NULL, o);
	check_argv("codex", &s, NULL, NULL, "codex exec --json "
	    "--skip-git-repo-check "
	    "--dangerously-bypass-approvals-and-sandbox -");
	check_argv("codex", &s, "T1", NULL, "codex exec resume --json "
	    "--skip-git-repo-check --dangerously-bypass-approvals-and-sandbox "
	    "T1 -");
	json_decref(o);
	o = opts("{\"sandbox\":\"x\\\" evil=\\\"1\"}");
	s = spec_of("codex", NULL, NULL, o);
	check_argv("codex", &s, "T1", NULL, "codex exec resume --json "
	    "--skip-git-repo-check -c sandbox_mode=\"read-only\" T1 -");
	json_decref(o);

	s = spec_of("claude", NULL, NULL, NULL);
	check_argv("claude", &s, NULL, NULL, "claude -p --output-format "
	    "stream-json --verbose --allowedTools Bash "
	    "--permission-mode acceptEdits");
	o = opts("{\"permission_mode\":\"bypassPermissions\","
	    "\"extra_args\":[\"--max-budget-usd\",\"2\"]}");
	s = spec_of("claude", "claude-beta", "opus", o);
	check_argv("claude", &s, "8176536d-4e49", "answer",
	    "claude-beta -p --output-format stream-json --verbose "
	    "--permission-mode bypassPermissions --model opus "
	    "--resume 8176536d-4e49 --max-budget-usd 2");
	json_decref(o);
	/* CCW's settingsFile and effort reach claude's own flags */
	o = opts("{\"permission\":\"read-only\",\"settings_file\":"
	    "\"/h/s.json\",\"effort\":\"high\"}");
	s = spec_of("claude", NULL, NULL, o);
	check_argv("claude", &s, NULL, NULL, "claude -p --output-format "
	    "stream-json --verbose --permission-mode plan --settings "
	    "/h/s.json --effort high");
	json_decref(o);

	s = spec_of("gemini", NULL, NULL, NULL);
	check_argv("gemini", &s, NULL, NULL,
	    "gemini --approval-mode yolo --skip-trust -o stream-json");
	o = opts("{\"approval_mode\":\"auto-edit\",\"skip_trust\":false,"
	    "\"extra_args\":[\"--include-directories\",\"../lib\"]}");
	s = spec_of("gemini", NULL, "gemini-2.5-flash", o);
	check_argv("gemini", &s, "d7af88a0", NULL,
	    "gemini -m gemini-2.5-flash --approval-mode auto_edit "
	    "-o stream-json -r d7af88a0 --include-directories ../lib");
	json_decref(o);

	s = spec_of("qwen", NULL, NULL, NULL);
	check_argv("qwen", &s, NULL, NULL,
	    "qwen --approval-mode yolo -o stream-json");
	o = opts("{\"approval_mode\":\"auto_edit\"}");
	s = spec_of("qwen", NULL, "qwen3-coder-plus", o);
	check_argv("qwen", &s, "ddecc03c", NULL, "qwen -m qwen3-coder-plus "
	    "--approval-mode auto-edit -o stream-json --resume ddecc03c");
	json_decref(o);

	s = spec_of("opencode", NULL, NULL, NULL);
	check_argv("opencode", &s, NULL, NULL,
	    "opencode run --format json --auto");
	o = opts("{\"approval_mode\":\"default\",\"extra_args\":[\"--agent\","
	    "\"build\"]}");
	s = spec_of("opencode", NULL, "anthropic/claude-sonnet-4-5", o);
	check_argv("opencode", &s, "ses_dff639a2", "go on",
	    "opencode run --format json -m anthropic/claude-sonnet-4-5 "
	    "--session ses_dff639a2 --agent build");
	json_decref(o);

	s = spec_of("bash", NULL, NULL, NULL);
	s.command = "make check";
	check_argv("bash", &s, NULL, NULL, "bash -c make check");
	check_argv("bash", &s, "ignored", "input", "bash -c make check");
	o = opts("{\"extra_args\":[\"--norc\"]}");
	s = spec_of("bash", "/bin/bash", NULL, o);
	check_argv("bash", &s, NULL, NULL, "/bin/bash --norc -c ");
	json_decref(o);

	o = opts("[\"options\",\"not\",\"an\",\"object\"]");
	s = spec_of("claude", "", "", o);
	check_argv("claude", &s, NULL, NULL, "claude -p --output-format "
	    "stream-json --verbose --allowedTools Bash "
	    "--permission-mode acceptEdits");
	json_decref(o);
}

/* options.permission per tool; an explicit tool option still wins. */
static void
test_permission(void)
{
	static const struct {
		const char	*tool;
		const char	*opts;
		const char	*want;
	} cases[] = {
		{ "codex", "{\"permission\":\"read-only\"}", "codex exec --json "
		    "--skip-git-repo-check -s read-only -" },
		{ "codex", "{\"permission\":\"workspace-write\"}", "codex exec "
		    "--json --skip-git-repo-check -s workspace-write -" },
		{ "codex", "{\"permission\":\"full\"}", "codex exec --json "
		    "--skip-git-repo-check "
		    "--dangerously-bypass-approvals-and-sandbox -" },
		{ "codex", "{\"permission\":\"bogus\"}", "codex exec --json "
		    "--skip-git-repo-check -s workspace-write -" },
		{ "codex", "{\"permission\":\"full\",\"sandbox\":\"read-only\"}",
		    "codex exec --json --skip-git-repo-check -s read-only -" },
		{ "claude", "{\"permission\":\"read-only\"}", "claude -p "
		    "--output-format stream-json --verbose --permission-mode plan" },
		{ "claude", "{\"permission\":\"full\"}", "claude -p "
		    "--output-format stream-json --verbose --permission-mode "
		    "bypassPermissions" },
		{ "claude", "{\"permission\":\"read-only\",\"permission_mode\":"
		    "\"default\"}", "claude -p --output-format stream-json "
		    "--verbose --permission-mode default" },
		{ "gemini", "{\"permission\":\"read-only\"}", "gemini "
		    "--approval-mode plan --skip-trust -o stream-json" },
		{ "gemini", "{\"permission\":\"full\"}", "gemini "
		    "--approval-mode yolo --skip-trust -o stream-json" },
		{ "qwen", "{\"permission\":\"read-only\"}", "qwen "
		    "--approval-mode plan -o stream-json" },
		{ "qwen", "{\"permission\":\"read-only\",\"approval_mode\":"
		    "\"yolo\"}", "qwen --approval-mode yolo -o stream-json" },
		{ "opencode", "{\"permission\":\"read-only\"}", "opencode run "
		    "--format json --agent plan" },
		{ "opencode", "{\"permission\":\"workspace-write\"}", "opencode "
		    "run --format json --auto" },
		{ "opencode", "{\"permission\":\"full\"}", "opencode run "
		    "--format json --auto" },
	};
	struct tool_spec	 s;
	json_t			*o;
	size_t			 i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		o = opts(cases[i].opts);
		s = spec_of(cases[i].tool, NULL, NULL, o);
		check_argv(cases[i].tool, &s, NULL, NULL, cases[i].want);
		json_decref(o);
	}
}

/* Is v the JSON string s? */
static int
str_is(const json_t *v, const char *s)
{
	return json_is_string(v) && strcmp(json_string_value(v), s) == 0;
}

/* The environment build_env adds, as one string ("" for none). */
static char *
env_of(const char *tool, const char *options)
{
	const struct adapter	*ad = adapter_find(tool);
	struct strv		 sv = { NULL, 0 };
	struct tool_spec	 s;
	json_t			*o = opts(options);
	char			*got;

	s = spec_of(tool, NULL, NULL, o);
	if (ad != NULL && ad->build_env != NULL)
		ad->build_env(&s, &sv);
	got = join(&sv);
	strv_clear(&sv);
	json_decref(o);
	return got;
}

/*
 * A read-only opencode role gets the plan agent with every tool denied but
 * the read tools, in OPENCODE_CONFIG_CONTENT, which keeps what the user
 * put there (issue 23: plan's bash allowed `echo X >> file`).
 */
static void
test_env(void)
{
	static const char	*ro = "{\"permission\":\"read-only\"}";
	const char		*pfx = "OPENCODE_CONFIG_CONTENT=";
	json_t			*cfg, *perm;
	char			*got;

	unsetenv("OPENCODE_CONFIG_CONTENT");
	got = env_of("opencode", ro);
	cfg = strncmp(got, pfx, strlen(pfx)) == 0 ?
	    json_loads(got + strlen(pfx), 0, NULL) : NULL;
	perm = json_object_get(json_object_get(json_object_get(cfg, "agent"),
	    "plan"), "permission");
	tap_ok(json_is_object(perm) &&
	    strcmp(json_object_iter_key(json_object_iter(perm)), "*") == 0 &&
	    str_is(json_object_get(perm, "*"), "deny"),
	    "opencode read-only: plan's permissions start with \"*\": deny");
	tap_ok(str_is(json_object_get(perm, "bash"), "deny") &&
	    str_is(json_object_get(perm, "edit"), "deny") &&
	    str_is(json_object_get(perm, "task"), "deny"),
	    "opencode read-only: bash, edit and task are denied by name");
	tap_is_str(json_string_value(json_object_get(perm, "grep")), "allow",
	    "opencode read-only: grep is allowed");
	tap_is_str(json_string_value(json_object_get(json_object_get(perm,
	    "read"), "*.env")), "ask", "opencode read-only: .env still asks");
	if (!json_is_object(perm))
		tap_diag("got: %s", got);
	json_decref(cfg);
	free(got);

	setenv("OPENCODE_CONFIG_CONTENT", "{\"model\":\"m/x\",\"agent\":"
	    "{\"plan\":{\"model\":\"m/y\",\"permission\":{\"bash\":"
	    "\"allow\"}}}}", 1);
	got = env_of("opencode", ro);
	cfg = json_loads(got + strlen(pfx), 0, NULL);
	perm = json_object_get(json_object_get(json_object_get(cfg, "agent"),
	    "plan"), "permission");
	tap_ok(json_is_string(json_object_get(cfg, "model")) &&
	    json_is_string(json_object_get(json_object_get(json_object_get(cfg,
	    "agent"), "plan"), "model")) &&
	    str_is(json_object_get(perm, "bash"), "deny"),
	    "opencode read-only: the user's content is kept, its bash allow "
	    "is not");
	json_decref(cfg);
	free(got);
	setenv("OPENCODE_CONFIG_CONTENT", "not json", 1);
	got = env_of("opencode", ro);
	tap_ok(strstr(got, "\"*\":\"deny\"") != NULL,
	    "opencode read-only: content that is not JSON is replaced");
	free(got);
	unsetenv("OPENCODE_CONFIG_CONTENT");

	got = env_of("opencode", "{\"permission\":\"workspace-write\"}");
	tap_is_str(got, "", "opencode workspace-write: no environment");
	free(got);
	got = env_of("opencode", "{\"permission\":\"read-only\","
	    "\"approval_mode\":\"auto\"}");
	tap_is_str(got, "", "opencode: an explicit approval_mode decides");
	free(got);
	got = env_of("claude", ro);
	tap_is_str(got, "", "claude: no environment");
	free(got);
}

/* Lookup and the table's flags, which tool.c acts on. */
static void
test_table(void)
{
	const struct adapter	*ad;
	char			*names;
	size_t			 i;

	tap_ok(adapter_find("cursor") == NULL, "unknown adapter -> NULL");
	tap_ok(adapter_find(NULL) == NULL, "NULL name -> NULL");
	tap_ok(adapter_find("Claude") == NULL, "names are case-sensitive");
	names = adapter_list(0, ", ");
	tap_ok(strncmp(names, "bash, codex, ", 13) == 0 &&
	    strstr(names, " or ") == NULL,
	    "adapter_list: every row, the command tool first (%s)", names);
	free(names);
	names = adapter_list(ADAPTER_AGENT, " or ");
	tap_ok(strncmp(names, "codex, ", 7) == 0 && strstr(names, "bash") ==
	    NULL && strstr(names, " or ") != NULL,
	    "adapter_list: the agent CLIs, CCW's order, \" or \" last (%s)",
	    names);
	free(names);
	for (i = 0; (ad = adapter_at(i)) != NULL; i++)
		tap_ok(adapter_find(ad->name) == ad && ad->build_argv != NULL &&
		    ((ad->flags & ADAPTER_AGENT) != 0) == (ad->line != NULL),
		    "row %s: found by name, builds argv, parses a stream iff "
		    "an agent CLI", ad->name);
	tap_ok(i == adapter_count(), "adapter_at walks adapter_count rows");
	tap_ok(adapter_flagged(ADAPTER_DEFAULT) != NULL &&
	    adapter_flagged(ADAPTER_CCW_DEFAULT) != NULL &&
	    adapter_flagged(ADAPTER_CCW_SUBAGENT) != NULL,
	    "a default tool, CCW's default and the batch sub-agent are rows");
	ad = adapter_find("bash");
	tap_ok(ad != NULL && ad->line == NULL && ad->live_input &&
	    !ad->stream_json && ad->prompt_stdin,
	    "bash: plain text, live stdin");
	ad = adapter_find("opencode");
	tap_ok(ad != NULL && ad->line != NULL && ad->stream_json &&
	    ad->prompt_stdin && !ad->live_input, "opencode: prompt on stdin");
	ad = adapter_find("codex");
	tap_ok(ad != NULL && ad->line != NULL && ad->prompt_stdin &&
	    !ad->live_input, "codex: JSON lines, prompt on stdin");
}

/* The parsed answer must carry the block result.c reads as success. */
static int
answer_ok(const struct tool_stream *ts)
{
	struct wresult	r;
	int		ok;

	if (ts->final_text == NULL || strstr(ts->final_text, "WORKER_RESULT") ==
	    NULL)
		return 0;
	memset(&r, 0, sizeof r);
	ok = result_parse(ts->final_text, strlen(ts->final_text), &r) &&
	    r.status != NULL && strcmp(r.status, "success") == 0;
	result_clear(&r);
	return ok;
}

/* A success stream: session, final, answer, usage. */
static void
check_success(const char *tool, const char *file, const char *sid,
    uint64_t tin, uint64_t tout, double cost)
{
	struct tool_stream	ts;

	if (feed(tool, file, &ts) != 0) {
		tap_ok(0, "%s: read", file);
		return;
	}
	tap_is_str(ts.session_id, sid, "%s: session id", file);
	tap_ok(ts.final_seen && !ts.final_failed, "%s: final, not failed",
	    file);
	tap_ok(answer_ok(&ts), "%s: final_text has a success WORKER_RESULT",
	    file);
	tap_ok(ts.tokens_in == tin && ts.tokens_out == tout,
	    "%s: tokens %llu/%llu", file, (unsigned long long)ts.tokens_in,
	    (unsigned long long)ts.tokens_out);
	tap_ok(ts.cost > cost - 1e-9 && ts.cost < cost + 1e-9, "%s: cost %g",
	    file, ts.cost);
	tap_ok(ts.error == NULL && ts.last_text != NULL, "%s: no error, "
	    "progress \"%s\"", file, ts.last_text ? ts.last_text : "(null)");
	tool_stream_clear(&ts);
}

/* A failure stream: its final event (if any) and the reason it gives. */
static void
check_failure(const char *tool, const char *file, const char *sid,
    int final, const char *err)
{
	struct tool_stream	ts;

	if (feed(tool, file, &ts) != 0) {
		tap_ok(0, "%s: read", file);
		return;
	}
	tap_is_str(ts.session_id, sid, "%s: session id", file);
	tap_ok(ts.final_seen == final && ts.final_failed == final,
	    "%s: final %d, failed %d", file, ts.final_seen, ts.final_failed);
	tap_is_str(ts.error, err, "%s: error text", file);
	tool_stream_clear(&ts);
}

/* What each tool's success stream (and its garbage twin) must give. */
static const struct {
	const char	*tool;
	const char	*sid;
	uint64_t	 tin, tout;
	double		 cost;
} successes[] = {
	{ "codex", "01a2009c-45e1-7ff2-b3e1-6ecf4976bc4f", 2200, 105, 0 },
	{ "claude", "8176536d-4e49-443c-b166-20cb292dbf05", 2600, 120,
	    0.024675 },
	{ "gemini", "d7af88a0-6cd3-4c1a-95b5-0c6d087fbfef", 1200, 80, 0 },
	{ "qwen", "ddecc03c-a717-40a4-bff4-1b9b8fca9883", 1400, 90, 0 },
	{ "opencode", "ses_dff639a2cffeKOJwOpimVRDT3R", 1400, 90, 0 },
};

/* What each failure stream must give: session, final or not, reason. */
static const struct {
	const char	*tool;
	const char	*file;
	const char	*sid;
	int		 final;
	const char	*error;
} failures[] = {
	{ "codex", "codex-failure.jsonl",
	    "01a2009c-7e92-79f3-b7e4-8d904b476cb0", 1,
	    "The model `bad-model` does not exist or you do not have access "
	    "to it." },
	{ "codex", "codex-offline.jsonl",
	    "01a20092-ac35-78f2-90ee-0a2cb035356d", 0,
	    "Reconnecting... waiting for network (Connection failed: error "
	    "sending request)" },
	{ "claude", "claude-failure.jsonl",
	    "7a1ab4f6-9620-4ee5-8573-b1cc937ebbbe", 1,
	    "Not logged in \xc2\xb7 Please run /login" },
	{ "claude", "claude-apierror.jsonl",
	    "e4be9ecf-50fc-49ec-b1b9-d525927f173c", 1,
	    "API Error: 400 The model `bad-model` does not exist or you do "
	    "not have access to it." },
	{ "gemini", "gemini-failure.jsonl",
	    "f6d7a333-ef43-4edf-9220-2149525dffef", 1,
	    "[API Error: exception TypeError: fetch failed sending request]" },
	{ "qwen", "qwen-failure.jsonl", "5422fd33-c9a4-487b-9a2f-ba61a5271d11",
	    1, "No auth type is selected. Please configure an auth type "
	    "(e.g. via settings or `--auth-type`) before running in "
	    "non-interactive mode." },
	{ "qwen", "qwen-apierror.jsonl", "397c03af-2700-4396-8d11-0f779c33f1b1",
	    1, "[API Error: Connection error. (cause: fetch failed)]" },
	{ "opencode", "opencode-failure.jsonl",
	    "ses_dff6a4741ffecF7HP17pd15OYR", 1, "Cannot connect to API: "
	    "Unable to connect. Is the computer able to access the url?" },
};
#define NELEM(a)	(sizeof (a) / sizeof (a)[0])

/* The streams in tests/streams/, real CLI output (see README.md there). */
static void
test_streams(void)
{
	struct tool_stream	 ts;
	char			*name;
	size_t			 i, j;
	int			 ok;

	for (i = 0; i < 2 * NELEM(successes); i++) {
		j = i % NELEM(successes);
		xasprintf(&name, "%s-%s.jsonl", successes[j].tool,
		    i < NELEM(successes) ? "success" : "garbage");
		check_success(successes[j].tool, name, successes[j].sid,
		    successes[j].tin, successes[j].tout, successes[j].cost);
		free(name);
	}
	for (i = 0; i < NELEM(failures); i++)
		check_failure(failures[i].tool, failures[i].file,
		    failures[i].sid, failures[i].final, failures[i].error);

	/* Each parser reads every other tool's garbage without harm. */
	for (i = 0; i < NELEM(successes); i++) {
		ok = 1;
		for (j = 0; j < NELEM(successes); j++) {
			xasprintf(&name, "%s-garbage.jsonl", successes[j].tool);
			if (feed(successes[i].tool, name, &ts) != 0)
				ok = 0;
			tool_stream_clear(&ts);
			free(name);
		}
		tap_ok(ok, "%s parser survives every garbage stream",
		    successes[i].tool);
	}
}

#define L(s)	(s), sizeof(s) - 1

/* A 1 MiB answer in one event, and 1 MiB of noise that looks like JSON. */
static void
test_huge(void)
{
	const struct adapter	*ad;
	struct tool_stream	 ts;
	char			*big, *line;
	size_t			 n = 1u << 20, i;
	int			 len;

	big = xmalloc(n + 1);
	memset(big, 'a', n);
	memcpy(big + n - 40, "\\nWORKER_RESULT:\\n- status: success", 35);
	big[n - 5] = '\0';
	len = xasprintf(&line, "{\"type\":\"result\",\"subtype\":\"success\","
	    "\"is_error\":false,\"result\":\"%s\"}", big);
	memset(&ts, 0, sizeof ts);
	ad = adapter_find("claude");
	feed_line(ad, &ts, line, (size_t)len);
	tap_ok(ts.final_seen && ts.final_text != NULL &&
	    strlen(ts.final_text) > n - 100 &&
	    strstr(ts.final_text, "WORKER_RESULT") != NULL,
	    "1 MiB result line parsed whole");
	tap_ok(ts.last_text != NULL &&
	    strlen(ts.last_text) < ADAPTER_SHORT_MAX + 20,
	    "its progress line stays short (%zu)",
	    ts.last_text != NULL ? strlen(ts.last_text) : 0);
	tool_stream_clear(&ts);
	free(line);

	/* Five 1 MiB deltas: only the last ADAPTER_TEXT_MAX bytes are kept. */
	ad = adapter_find("gemini");
	memset(big, 'b', n);
	big[n] = '\0';
	len = xasprintf(&line, "{\"type\":\"message\",\"role\":\"assistant\","
	    "\"delta\":true,\"content\":\"%s\"}", big);
	for (i = 0; i < 5; i++)
		feed_line(ad, &ts, line, (size_t)len);
	free(line);
	feed_line(ad, &ts, L("{\"type\":\"message\",\"role\":\"assistant\","
	    "\"delta\":true,\"content\":\"WORKER_RESULT:\"}"));
	tap_ok(ts.final_text != NULL &&
	    strlen(ts.final_text) == ADAPTER_TEXT_MAX && strcmp(ts.final_text +
	    ADAPTER_TEXT_MAX - 14, "WORKER_RESULT:") == 0,
	    "5 MiB of deltas: the last 4 MiB are kept");
	tool_stream_clear(&ts);

	memset(big, '{', n);
	for (i = 0; i < 2; i++) {
		ad = adapter_find(i ? "opencode" : "gemini");
		feed_line(ad, &ts, big, n);
		tap_ok(ts.session_id == NULL && !ts.final_seen &&
		    ts.last_text == NULL, "%s: 1 MiB of '{' ignored", ad->name);
		tool_stream_clear(&ts);
	}
	free(big);
}

/* Nesting past jansson's depth limit, and a line cut short, are ignored. */
static void
test_deep(void)
{
	static const char	 pre[] = "{\"type\":\"turn.completed\",\"x\":";
	const struct adapter	*ad;
	struct tool_stream	 ts;
	char			*buf;
	size_t			 n = 100000, i, plen = sizeof pre - 1;

	buf = xmalloc(n * plen);
	memset(buf, '[', n);
	memset(&ts, 0, sizeof ts);
	ad = adapter_find("codex");
	feed_line(ad, &ts, buf, n);
	for (i = 0; i < n; i++)
		memcpy(buf + i * plen, pre, plen);
	feed_line(ad, &ts, buf, n * plen);
	tap_ok(!ts.final_seen && ts.last_text == NULL,
	    "100000-deep arrays and unterminated objects ignored");
	tool_stream_clear(&ts);
	free(buf);
}

/* Valid JSON of the wrong shape: known fields with the wrong types. */
static void
test_shape(void)
{
	const struct adapter	*ad;
	struct tool_stream	 ts;

	memset(&ts, 0, sizeof ts);
	ad = adapter_find("claude");
	feed_line(ad, &ts, L("{\"type\":\"result\",\"result\":{\"x\":1},"
	    "\"is_error\":\"yes\",\"usage\":[1,2],\"total_cost_usd\":\"9\","
	    "\"session_id\":42}"));
	tap_ok(ts.final_seen && !ts.final_failed && ts.final_text == NULL &&
	    ts.tokens_in == 0 && ts.cost == 0 && ts.session_id == NULL,
	    "claude: mistyped result is final, its fields ignored");
	tool_stream_clear(&ts);

	ad = adapter_find("codex");
	feed_line(ad, &ts, L("{\"type\":\"turn.failed\",\"error\":\"flat\"}"));
	tap_is_str(ts.final_seen && ts.final_failed ? ts.error : NULL,
	    "turn failed", "codex: turn.failed without a message still fails");
	tool_stream_clear(&ts);
	feed_line(ad, &ts, L("{\"type\":\"turn.completed\",\"usage\":"
	    "{\"input_tokens\":-5,\"output_tokens\":1.5e300}}"));
	tap_ok(ts.final_seen && ts.tokens_in == 0 && ts.tokens_out == 0,
	    "codex: negative and absurd token counts read as 0");
	tool_stream_clear(&ts);

	ad = adapter_find("gemini");
	feed_line(ad, &ts, L("{\"type\":\"result\"}"));
	tap_ok(ts.final_seen && ts.final_failed && ts.error != NULL,
	    "gemini: a result without a status is a failure");
	tool_stream_clear(&ts);

	ad = adapter_find("opencode");
	feed_line(ad, &ts, L("{\"type\":\"step_finish\",\"part\":"
	    "{\"reason\":\"tool-calls\"}}"));
	tap_ok(!ts.final_seen, "opencode: a tool-calls step is not final");
	feed_line(ad, &ts, L("{\"type\":\"step_finish\",\"part\":"
	    "{\"reason\":\"length\",\"tokens\":{\"input\":3,\"cache\":"
	    "{\"read\":4}},\"cost\":0.5}}"));
	tap_ok(ts.final_seen && !ts.final_failed && ts.tokens_in == 7 &&
	    ts.cost == 0.5, "opencode: other reasons end the run, usage adds");
	tool_stream_clear(&ts);

	ad = adapter_find("claude");
	feed_line(ad, &ts, "", 0);
	feed_line(ad, &ts, L("\r"));
	feed_line(ad, &ts, L("{\"type\":\"result\",\"result\":\"a\\u0000b\"}"));
	tap_is_str(ts.final_text, "a", "empty lines ignored; text cut at NUL");
	tool_stream_clear(&ts);
}

/* Progress lines are one short line of valid UTF-8 whatever came in. */
static void
test_unicode(void)
{
	static const char	 pre[] = "{\"type\":\"message\",\"role\":"
	    "\"assistant\",\"delta\":true,\"content\":\"";
	static const char	 unit[] = "\xe2\x9c\x93\\n\\t\xf0\x9f\x98\x80";
	const struct adapter	*ad;
	struct tool_stream	 ts;
	char			*line;
	size_t			 i, off, len;
	json_t			*j;

	len = sizeof pre - 1 + 60 * (sizeof unit - 1) + 2;
	line = xmalloc(len);
	memcpy(line, pre, sizeof pre - 1);
	off = sizeof pre - 1;
	for (i = 0; i < 60; i++, off += sizeof unit - 1)
		memcpy(line + off, unit, sizeof unit - 1);
	memcpy(line + off, "\"}", 2);
	memset(&ts, 0, sizeof ts);
	ad = adapter_find("gemini");
	feed_line(ad, &ts, line, len);
	feed_line(ad, &ts, line, len);
	j = ts.last_text != NULL ? json_string(ts.last_text) : NULL;
	tap_ok(j != NULL && strchr(ts.last_text, '\n') == NULL &&
	    strchr(ts.last_text, '\t') == NULL &&
	    strlen(ts.last_text) <= ADAPTER_SHORT_MAX + 20,
	    "progress line: one line, valid UTF-8, short");
	tap_ok(ts.final_text != NULL && strlen(ts.final_text) == 2 * 60 * 9,
	    "deltas concatenate (%zu bytes)",
	    ts.final_text != NULL ? strlen(ts.final_text) : 0);
	json_decref(j);
	free(line);
	tool_stream_clear(&ts);
}

/* Session ids go back into argv: option-like ones are refused, first wins. */
static void
test_session(void)
{
	const struct adapter	*ad;
	struct tool_stream	 ts;

	memset(&ts, 0, sizeof ts);
	ad = adapter_find("qwen");
	feed_line(ad, &ts, L("{\"type\":\"system\",\"subtype\":\"init\","
	    "\"session_id\":\"--yolo\"}"));
	feed_line(ad, &ts, L("{\"type\":\"system\",\"subtype\":\"init\","
	    "\"session_id\":\"good-1\"}"));
	feed_line(ad, &ts, L("{\"type\":\"system\",\"subtype\":\"init\","
	    "\"session_id\":\"later-2\"}"));
	tap_is_str(ts.session_id, "good-1",
	    "session id: option-like refused, first good one kept");
	tool_stream_clear(&ts);
}

/*
 * The kind an error's words or HTTP status tell (proto/outcome.h): the
 * phrases of the five CLIs and their APIs, including the ones a careless
 * order would misread (a quota also says 429, an overload 503, a
 * timeout's milliseconds look like a 500).
 */
static void
test_kinds(void)
{
	static const struct {
		const char		*msg;
		enum outcome_kind	 kind;
	} words[] = {
		{ "unexpected status 401 Unauthorized", OUTCOME_AUTH },
		{ "Not logged in \xc2\xb7 Please run /login", OUTCOME_AUTH },
		{ "The model `x` does not exist", OUTCOME_MODEL },
		{ "RESOURCE_EXHAUSTED: quota", OUTCOME_RATE_LIMITED },
		{ "exceeded retry limit, last status: 429 Too Many Requests",
		    OUTCOME_RATE_LIMITED },
		{ "Quota exceeded. Check your plan and billing details.",
		    OUTCOME_QUOTA_EXHAUSTED },
		{ "[API Error: You have exhausted your daily quota on this "
		    "model.]", OUTCOME_QUOTA_EXHAUSTED },
		{ "{\"error\":{\"type\":\"insufficient_quota\"}}",
		    OUTCOME_QUOTA_EXHAUSTED },
		{ "API Error: 529 Overloaded. This is a server-side issue",
		    OUTCOME_OVERLOADED },
		{ "503 Service Unavailable: overloaded", OUTCOME_OVERLOADED },
		{ "unexpected status 500 Internal Server Error: boom",
		    OUTCOME_SERVER_ERROR },
		{ "API Error: 502 Bad Gateway", OUTCOME_SERVER_ERROR },
		{ "[API Error: fetch failed]", OUTCOME_NETWORK },
		{ "request timed out after 5000ms", OUTCOME_NETWORK },
		{ "segfault in tool", OUTCOME_TOOL_ERROR },
		/* a port or an id is no status: whole numbers only */
		{ "unexpected status 529 <unknown status code>: Overloaded, "
		    "url: http://127.0.0.1:40123/v1/responses",
		    OUTCOME_OVERLOADED },
		{ "connection refused: 127.0.0.1:44031", OUTCOME_NETWORK },
		{ "request id req_5004", OUTCOME_TOOL_ERROR },
		{ "HTTP 401: bad key", OUTCOME_AUTH },
	};
	static const struct {
		long			 status;
		const char		*msg;
		enum outcome_kind	 kind;
	} statuses[] = {
		{ 401, NULL, OUTCOME_AUTH }, { 403, NULL, OUTCOME_AUTH },
		{ 404, NULL, OUTCOME_MODEL }, { 429, NULL, OUTCOME_RATE_LIMITED },
		{ 429, "insufficient_quota", OUTCOME_QUOTA_EXHAUSTED },
		{ 529, NULL, OUTCOME_OVERLOADED },
		{ 503, "overloaded_error", OUTCOME_OVERLOADED },
		{ 503, "upstream down", OUTCOME_SERVER_ERROR },
		{ 500, NULL, OUTCOME_SERVER_ERROR }, { 400, NULL, OUTCOME_NONE },
		{ 0, "Overloaded", OUTCOME_NONE },
	};
	size_t	i;

	for (i = 0; i < sizeof words / sizeof words[0]; i++)
		tap_is_str(outcome_name(fallback_kind(words[i].msg)),
		    outcome_name(words[i].kind), "kind of \"%s\"", words[i].msg);
	for (i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
		tap_is_str(outcome_name(fallback_kind_status(statuses[i].status,
		    statuses[i].msg)), outcome_name(statuses[i].kind),
		    "kind of HTTP %ld %s", statuses[i].status,
		    statuses[i].msg != NULL ? statuses[i].msg : "");
	tap_ok(fallback_kind(NULL) == OUTCOME_TOOL_ERROR,
	    "kind of no message: tool_error");
	tap_ok(fallback_settle(OUTCOME_QUOTA_EXHAUSTED, 5000) ==
	    OUTCOME_RATE_LIMITED && fallback_settle(OUTCOME_QUOTA_EXHAUSTED,
	    0) == OUTCOME_QUOTA_EXHAUSTED && fallback_settle(
	    OUTCOME_OVERLOADED, 5000) == OUTCOME_OVERLOADED,
	    "a quota with a reset is a rate limit to wait out");
}

/* Summary, reason and error kind when the agent did not state them. */
static void
test_fallback(void)
{
	char	*s;

	s = fallback_summary("First paragraph.\n\nI fixed calc.sh:\nthe "
	    "subtraction was reversed.\n\n  \n");
	tap_is_str(s, "I fixed calc.sh:\nthe subtraction was reversed.",
	    "summary: the last paragraph");
	free(s);
	s = fallback_summary("one line");
	tap_is_str(s, "one line", "summary: a single line");
	free(s);
	tap_ok(fallback_summary(" \n\n ") == NULL && fallback_summary(NULL) ==
	    NULL, "summary: none from blank text");

	s = fallback_reason("Loading...\nError: Invalid API key provided\n"
	    "    at foo (x.js:1:2)\n    at bar\n}\n\nNode.js v22.1.0\n");
	tap_is_str(s, "Error: Invalid API key provided",
	    "reason: the last meaningful stderr line");
	free(s);
	tap_ok(fallback_reason("\n  at x\n--\n") == NULL,
	    "reason: none from noise");

	test_kinds();
}

#undef L

/* Each group is independent; the plan is printed last. */
int
main(void)
{
	test_table();
	test_argv();
	test_env();
	test_streams();
	test_huge();
	test_deep();
	test_shape();
	test_unicode();
	test_session();
	test_permission();
	test_fallback();
	return tap_done();
}
