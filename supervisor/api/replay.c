/*
 * replay.c: a loop's replay: its state file and its history (each
 * action's prompt, result, section after, time, usage: prompt.c records
 * them) gathered into JSON, and the one HTML document that steps through
 * them with its CSS and script inline, allowed by their SHA-256 only.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "progress.h"
#include "replay.h"
#include "rotate.h"
#include "state.h"
#include "xmalloc.h"

#define REPLAY_MAX_BYTES (16 * 1024 * 1024)	/* of history read at most */

/*
 * The policy names the inline <style> and <script> by their SHA-256:
 * an edit of either must update its hash here (tests/regress/replay.sh
 * fails, printing the hash the document needs).  The data block is
 * JSON, never run.  Nothing is fetched: the file opens without serve.
 */
#define REPLAY_POLICY \
    "default-src 'none'; " \
    "script-src 'sha256-p+sg5MF8FmynUCXYGrVD9DbexMgieSGUnscgLD9qPBs='; " \
    "style-src 'sha256-kS04YcadRdCTDeZ72lefunDzhIM1BAnopbqkQwziaVI='; " \
    "base-uri 'none'; form-action 'none'"

const char replay_csp_header[] =
    "Content-Security-Policy: " REPLAY_POLICY "; frame-ancestors 'none'"
    "\r\nReferrer-Policy: no-referrer\r\n";

static const char replay_head[] =
	"<!DOCTYPE html>\n"
	"<html lang=\"en\">\n"
	"<head>\n"
	"<meta charset=\"utf-8\">\n";

static const char replay_meta[] =
	"<meta http-equiv=\"Content-Security-Policy\" content=\""
	REPLAY_POLICY "\">\n"
	"<meta name=\"referrer\" content=\"no-referrer\">\n";

static const char replay_body[] =
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	"<title>Replay</title>\n"
	"<style>"
	"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fafafa;max-width:72em}\n"
	"h1{font-size:1.3em;margin:0 0 .3em}\n"
	"h2{font-size:1.1em;margin:.2em 0 .5em}\n"
	"h3{font-size:1em;margin:.8em 0 .3em}\n"
	"dl{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em;margin:.3em 0}\n"
	"dt{font-weight:bold;color:#444}\n"
	"dd{margin:0;overflow-wrap:anywhere}\n"
	"pre{background:#fff;border:1px solid #ccc;padding:.5em;white-space:pre-wrap;overflow-wrap:anywhere;max-height:30em;overflow:auto;margin:.2em 0}\n"
	"nav{display:flex;flex-wrap:wrap;gap:.5em;align-items:center;margin:.8em 0}\n"
	"button{font:inherit;padding:.3em .8em}\n"
	":focus-visible{outline:3px solid #05c;outline-offset:2px}\n"
	"#steps{list-style:none;padding:0;margin:.5em 0;display:flex;flex-wrap:wrap;gap:.3em}\n"
	"#steps button[aria-current=step]{background:#05c;color:#fff}\n"
	".failed{color:#a00}\n"
	".diff-add{color:#060}\n"
	".diff-del{color:#a00}\n"
	".muted{color:#555}\n"
	"#step{background:#fff;border:1px solid #ddd;padding:.8em 1em}\n"
	"</style>\n"
	"</head>\n"
	"<body>\n"
	"<main>\n"
	"<h1 id=\"title\">Replay</h1>\n"
	"<dl id=\"loop\"></dl>\n"
	"<p id=\"note\" class=\"muted\"></p>\n"
	"<nav aria-label=\"Steps\">\n"
	"<button type=\"button\" id=\"prev\" aria-keyshortcuts=\"ArrowLeft\">Previous</button>\n"
	"<span id=\"pos\" role=\"status\"></span>\n"
	"<button type=\"button\" id=\"next\" aria-keyshortcuts=\"ArrowRight\">Next</button>\n"
	"</nav>\n"
	"<ol id=\"steps\" aria-label=\"All steps\"></ol>\n"
	"<section id=\"step\" aria-label=\"The step shown\"></section>\n"
	"<p class=\"muted\">Keys: left arrow or k: previous; right arrow or j: next; Home: first; End: last.</p>\n"
	"</main>\n"
	"<script type=\"application/json\" id=\"replay-data\">";

static const char replay_tail[] =
	"</script>\n"
	"<script>"
	"\"use strict\";\n"
	"/* Replay of a finished loop: the data is the JSON block above (never\n"
	"   executed); every field reaches the DOM through textContent only. */\n"
	"const data = JSON.parse(document.getElementById(\"replay-data\").textContent);\n"
	"const loop = data.loop || {};\n"
	"const events = Array.isArray(data.history) ? data.history : [];\n"
	"const steps = events.filter(function (e) {\n"
	"\treturn e && e.event === \"action\";\n"
	"});\n"
	"let cur = 0;\n"
	"\n"
	"function el(tag, text, cls) {\n"
	"\tconst e = document.createElement(tag);\n"
	"\tif (text !== undefined && text !== null) e.textContent = String(text);\n"
	"\tif (cls) e.className = cls;\n"
	"\treturn e;\n"
	"}\n"
	"function str(v) {\n"
	"\tif (v === undefined || v === null) return \"\";\n"
	"\treturn typeof v === \"string\" ? v : JSON.stringify(v);\n"
	"}\n"
	"function put(dl, name, value, field) {\n"
	"\tconst dt = el(\"dt\", name);\n"
	"\tconst dd = el(\"dd\", value);\n"
	"\tif (field) dd.dataset.field = field;\n"
	"\tdl.appendChild(dt);\n"
	"\tdl.appendChild(dd);\n"
	"\treturn dd;\n"
	"}\n"
	"function ms(n) {\n"
	"\tif (typeof n !== \"number\") return \"not recorded\";\n"
	"\treturn n < 1000 ? n + \" ms\" : (n / 1000).toFixed(1) + \" s\";\n"
	"}\n"
	"function startOf(e) {\n"
	"\tconst end = Date.parse(e.timestamp);\n"
	"\tif (isNaN(end) || typeof e.duration_ms !== \"number\") return null;\n"
	"\treturn new Date(end - e.duration_ms).toISOString();\n"
	"}\n"
	"function cost(u) {\n"
	"\tif (!u || typeof u !== \"object\") return \"no usage reported\";\n"
	"\tconst parts = [];\n"
	"\tif (typeof u.cost_usd === \"number\") parts.push(\"$\" + u.cost_usd.toFixed(4));\n"
	"\tif (typeof u.input_tokens === \"number\")\n"
	"\t\tparts.push(u.input_tokens + \" tokens in\");\n"
	"\tif (typeof u.output_tokens === \"number\")\n"
	"\t\tparts.push(u.output_tokens + \" tokens out\");\n"
	"\treturn parts.length ? parts.join(\", \") : str(u);\n"
	"}\n"
	"\n"
	"/* What the action's merge changed in skill_state, a line a path. */\n"
	"function change(i) {\n"
	"\tconst e = steps[i];\n"
	"\tif (!Array.isArray(e.changes))\n"
	"\t\treturn [[\"muted\", \"not recorded (a history from before replay)\"]];\n"
	"\tconst lines = e.changes.map(function (c) {\n"
	"\t\tif (!c || typeof c !== \"object\") return [\"muted\", str(c)];\n"
	"\t\tif (c.more) return [\"muted\", \"... more changes left out\"];\n"
	"\t\tconst p = str(c.path);\n"
	"\t\tif (!(\"from\" in c))\n"
	"\t\t\treturn [\"diff-add\", \"+ \" + p + \": \" + JSON.stringify(c.to)];\n"
	"\t\tif (!(\"to\" in c))\n"
	"\t\t\treturn [\"diff-del\", \"- \" + p + \": \" + JSON.stringify(c.from)];\n"
	"\t\treturn [\"\", \"~ \" + p + \": \" + JSON.stringify(c.from) + \" -> \" +\n"
	"\t\t    JSON.stringify(c.to)];\n"
	"\t});\n"
	"\tif (!lines.length) lines.push([\"muted\", \"no change\"]);\n"
	"\treturn lines;\n"
	"}\n"
	"\n"
	"function header() {\n"
	"\tdocument.title = \"Replay: \" + str(loop.title || loop.loop_id);\n"
	"\tdocument.getElementById(\"title\").textContent =\n"
	"\t    \"Replay of loop \" + str(loop.loop_id) + \": \" + str(loop.title);\n"
	"\tconst dl = document.getElementById(\"loop\");\n"
	"\tput(dl, \"status\", loop.status, \"status\");\n"
	"\tput(dl, \"iterations\", str(loop.current_iteration) + \" of \" +\n"
	"\t    str(loop.max_iterations), \"iterations\");\n"
	"\tput(dl, \"created\", loop.created_at, \"created\");\n"
	"\tput(dl, \"ended\", loop.completed_at || loop.updated_at, \"ended\");\n"
	"\tlet total = 0, seen = false;\n"
	"\tsteps.forEach(function (e) {\n"
	"\t\tif (e.usage && typeof e.usage.cost_usd === \"number\") {\n"
	"\t\t\ttotal += e.usage.cost_usd;\n"
	"\t\t\tseen = true;\n"
	"\t\t}\n"
	"\t});\n"
	"\tput(dl, \"cost\", seen ? \"$\" + total.toFixed(4) : \"no usage reported\",\n"
	"\t    \"total-cost\");\n"
	"\tif (loop.failure_reason)\n"
	"\t\tput(dl, \"failure\", loop.failure_reason, \"failure\").className =\n"
	"\t\t    \"failed\";\n"
	"\tconst ol = document.getElementById(\"steps\");\n"
	"\tsteps.forEach(function (e, i) {\n"
	"\t\tconst li = el(\"li\");\n"
	"\t\tconst b = el(\"button\", (i + 1) + \". \" + str(e.action));\n"
	"\t\tb.type = \"button\";\n"
	"\t\tb.setAttribute(\"aria-label\", \"Step \" + (i + 1) + \": \" +\n"
	"\t\t    str(e.action) + \" \" + str(e.agent_id));\n"
	"\t\tb.addEventListener(\"click\", function () { go(i); });\n"
	"\t\tli.appendChild(b);\n"
	"\t\tol.appendChild(li);\n"
	"\t});\n"
	"\tif (Array.isArray(data.notes) && data.notes.length)\n"
	"\t\tdocument.getElementById(\"note\").textContent = data.notes.join(\"; \");\n"
	"}\n"
	"\n"
	"function section(box, name, field, lines) {\n"
	"\tbox.appendChild(el(\"h3\", name));\n"
	"\tconst pre = el(\"pre\");\n"
	"\tpre.dataset.field = field;\n"
	"\tpre.tabIndex = 0;\n"
	"\tpre.setAttribute(\"aria-label\", name);\n"
	"\tlines.forEach(function (l, k) {\n"
	"\t\tif (k) pre.appendChild(document.createTextNode(\"\\n\"));\n"
	"\t\tpre.appendChild(el(\"span\", l[1], l[0]));\n"
	"\t});\n"
	"\tbox.appendChild(pre);\n"
	"}\n"
	"\n"
	"function show() {\n"
	"\tconst box = document.getElementById(\"step\");\n"
	"\tbox.textContent = \"\";\n"
	"\tdocument.getElementById(\"pos\").textContent = steps.length ?\n"
	"\t    \"Step \" + (cur + 1) + \" of \" + steps.length : \"No actions recorded\";\n"
	"\tdocument.getElementById(\"prev\").disabled = cur <= 0;\n"
	"\tdocument.getElementById(\"next\").disabled = cur >= steps.length - 1;\n"
	"\tdocument.querySelectorAll(\"#steps button\").forEach(function (b, i) {\n"
	"\t\tif (i === cur) b.setAttribute(\"aria-current\", \"step\");\n"
	"\t\telse b.removeAttribute(\"aria-current\");\n"
	"\t});\n"
	"\tif (!steps.length) return;\n"
	"\tconst e = steps[cur];\n"
	"\tbox.dataset.step = String(cur + 1);\n"
	"\tbox.appendChild(el(\"h2\", \"Step \" + (cur + 1) + \": \" + str(e.action) +\n"
	"\t    \" (\" + str(e.agent_id) + \")\"));\n"
	"\tconst dl = el(\"dl\");\n"
	"\tput(dl, \"status\", e.status, \"status\").className =\n"
	"\t    e.status === \"failed\" ? \"failed\" : \"\";\n"
	"\tput(dl, \"iteration\", e.iteration, \"iteration\");\n"
	"\tput(dl, \"tool\", e.tool, \"tool\");\n"
	"\tput(dl, \"started\", startOf(e) || \"not recorded\", \"started\");\n"
	"\tput(dl, \"ended\", e.timestamp, \"ended\");\n"
	"\tput(dl, \"duration\", ms(e.duration_ms), \"duration\");\n"
	"\tput(dl, \"cost\", cost(e.usage), \"cost\");\n"
	"\tif (e.error_kind)\n"
	"\t\tput(dl, \"outcome\", str(e.error_kind) + (e.reason ? \": \" +\n"
	"\t\t    str(e.reason) : \"\"), \"outcome\").className = \"failed\";\n"
	"\tput(dl, \"files changed\", Array.isArray(e.files_changed) &&\n"
	"\t    e.files_changed.length ? e.files_changed.join(\", \") : \"none\",\n"
	"\t    \"files\");\n"
	"\tbox.appendChild(dl);\n"
	"\tsection(box, \"Result\", \"result\", [[\"\", str(e.summary)]]);\n"
	"\tsection(box, \"State change (skill_state)\", \"change\", change(cur));\n"
	"\tsection(box, \"Prompt\", \"prompt\", [[typeof e.prompt === \"string\" ?\n"
	"\t    \"\" : \"muted\", typeof e.prompt === \"string\" ? e.prompt :\n"
	"\t    \"not recorded (a history from before replay)\"]]);\n"
	"}\n"
	"\n"
	"function go(i) {\n"
	"\tif (!steps.length) return;\n"
	"\tcur = Math.max(0, Math.min(steps.length - 1, i));\n"
	"\tshow();\n"
	"}\n"
	"\n"
	"document.getElementById(\"prev\").addEventListener(\"click\", function () {\n"
	"\tgo(cur - 1);\n"
	"});\n"
	"document.getElementById(\"next\").addEventListener(\"click\", function () {\n"
	"\tgo(cur + 1);\n"
	"});\n"
	"document.addEventListener(\"keydown\", function (ev) {\n"
	"\tif (ev.altKey || ev.ctrlKey || ev.metaKey) return;\n"
	"\tif (ev.key === \"ArrowRight\" || ev.key === \"j\") go(cur + 1);\n"
	"\telse if (ev.key === \"ArrowLeft\" || ev.key === \"k\") go(cur - 1);\n"
	"\telse if (ev.key === \"Home\") go(0);\n"
	"\telse if (ev.key === \"End\") go(steps.length - 1);\n"
	"\telse return;\n"
	"\tev.preventDefault();\n"
	"});\n"
	"header();\n"
	"show();\n"
	"</script>\n"
	"</body>\n"
	"</html>\n";

/*
 * The history's files, oldest first ({id}.history.jsonl.KEEP .. .1,
 * then the live one), the newest REPLAY_MAX_BYTES of them; one event a
 * line, a line that is no JSON object skipped and counted.
 */
static json_t *
replay_history(int dirfd, const char *id, json_t *notes)
{
	json_t	*all = json_array(), *part, *ev;
	char	*name, *buf, *line, *nl, *err = NULL;
	size_t	 len, total = 0, bad = 0;
	int	 i, rc;

	for (i = 0; i <= ROTATE_KEEP && total < REPLAY_MAX_BYTES; i++) {
		if (i == 0)
			xasprintf(&name, "%s.history.jsonl", id);
		else
			xasprintf(&name, "%s.history.jsonl.%d", id, i);
		rc = progress_read_file(dirfd, name, name, &buf, &len, NULL,
		    &err);
		free(name);
		if (rc != 0) {
			if (rc < 0)
				json_array_append_new(notes, json_string(err));
			free(err);
			err = NULL;
			continue;
		}
		total += len;
		part = json_array();
		for (line = buf; *line != '\0'; line = nl) {
			nl = line + strcspn(line, "\n");
			if (*nl == '\n')
				*nl++ = '\0';
			if (*line == '\0')
				continue;
			ev = json_loads(line, 0, NULL);
			if (json_is_object(ev))
				json_array_append(part, ev);
			else
				bad++;
			json_decref(ev);
		}
		free(buf);
		json_array_extend(part, all);
		json_decref(all);
		all = part;
	}
	if (i <= ROTATE_KEEP)
		json_array_append_new(notes, json_sprintf("older history left "
		    "out (over %d MiB)", REPLAY_MAX_BYTES >> 20));
	if (bad > 0)
		json_array_append_new(notes, json_sprintf("%zu unreadable "
		    "history lines skipped", bad));
	return all;
}

/*
 * What replay shows of a loop: its state file's front fields, its
 * history's events, notes on what could not be read.  NULL and why when
 * there is no such loop or its state file cannot be read.
 */
json_t *
replay_collect(int dirfd, const char *id, char **err)
{
	static const char *const keep[] = { "loop_id", "title", "description",
	    "status", "current_iteration", "max_iterations", "created_at",
	    "updated_at", "completed_at", "failure_reason", NULL };
	json_t	*st = NULL, *loop, *notes, *v;
	char	*why = NULL;
	size_t	 i;

	*err = NULL;
	switch (state_load_at(dirfd, id, ".json", STATE_LOAD_NOQUARANTINE,
	    &st, NULL, &why)) {
	case STATE_OK:
		break;
	case STATE_ENOENT:
		xasprintf(err, "no loop '%s' in this state directory", id);
		free(why);
		return NULL;
	default:
		xasprintf(err, "%s: %s", id, why != NULL ? why : "unreadable");
		free(why);
		return NULL;
	}
	free(why);
	loop = json_object();
	for (i = 0; keep[i] != NULL; i++)
		if ((v = json_object_get(st, keep[i])) != NULL)
			json_object_set(loop, keep[i], v);
	json_decref(st);
	notes = json_array();
	v = replay_history(dirfd, id, notes);
	return json_pack("{s:o, s:o, s:o}", "loop", loop, "history", v,
	    "notes", notes);
}

/*
 * The data as the text of a <script type="application/json">: JSON in
 * which '<', '>' and '&' (only ever inside strings) are \u escapes, so
 * no "</script>" or "<!--" in the data can end or bend the block.
 */
static void
replay_put_json(struct sbuf *sb, const json_t *data)
{
	char	*s = json_dumps(data, JSON_COMPACT | JSON_ENSURE_ASCII), *p;

	for (p = s; p != NULL && *p != '\0'; p++)
		switch (*p) {
		case '<': sbuf_puts(sb, "\\u003c"); break;
		case '>': sbuf_puts(sb, "\\u003e"); break;
		case '&': sbuf_puts(sb, "\\u0026"); break;
		default: sbuf_add(sb, p, 1); break;
		}
	free(s);
}

/*
 * The document (owned, its length in *lenp); standalone: with its own
 * policy as a meta tag (a file opened without serve, whose header gives
 * it otherwise).
 */
char *
replay_render(const json_t *data, int standalone, size_t *lenp)
{
	struct sbuf	sb = { NULL, 0, 0 };

	sbuf_puts(&sb, replay_head);
	if (standalone)
		sbuf_puts(&sb, replay_meta);
	sbuf_puts(&sb, replay_body);
	replay_put_json(&sb, data);
	sbuf_puts(&sb, replay_tail);
	*lenp = sb.len;
	return sb.p;
}
