/*
 * pagejs.h: the start both of serve's pages give their script: the
 * token's cookie fetched again (auth: serve restarted), a request with it
 * retried once on a 401 (call), its JSON or an Error (api).  String
 * literals, so each page's inline script, and its CSP hash, holds it.
 */
#ifndef PAGEJS_H
#define PAGEJS_H

#define PAGE_JS_FETCH \
	"/* The cookie again: serve restarted with a new token. */\n" \
	"async function auth() {\n" \
	"\tconst r = await fetch(\"/api/auth/token\", { cache: \"no-store\" });\n" \
	"\tif (!r.ok) throw new Error(\"no token: \" + r.status);\n" \
	"}\n" \
	"\n" \
	"/* A request with the cookie; on a 401 the cookie anew, then once more. */\n" \
	"async function call(method, path, body, head) {\n" \
	"\tconst o = { method: method, cache: \"no-store\", headers: head || {} };\n" \
	"\tif (body !== undefined) {\n" \
	"\t\to.headers[\"Content-Type\"] = \"application/json\";\n" \
	"\t\to.body = JSON.stringify(body);\n" \
	"\t}\n" \
	"\tconst r = await fetch(path, o);\n" \
	"\tif (r.status !== 401) return r;\n" \
	"\tawait auth();\n" \
	"\treturn fetch(path, o);\n" \
	"}\n" \
	"\n" \
	"async function api(method, path, body) {\n" \
	"\tconst r = await call(method, path, body);\n" \
	"\tlet b = null;\n" \
	"\ttry { b = await r.json(); } catch (e) { b = null; }\n" \
	"\tif (!r.ok)\n" \
	"\t\tthrow new Error(method + \" \" + path + \": \" + r.status + \" \" +\n" \
	"\t\t    (b && b.error ? b.error : \"\"));\n" \
	"\treturn b;\n" \
	"}\n" \
	"\n"

/*
 * The bus for a page: events(on, up, down) reads /api/events with the
 * cookie, resumed from the last id seen with Last-Event-ID after a loss,
 * trying again 0.25 s later, doubling to 4 s.
 */
#define PAGE_JS_EVENTS \
	"/* The last bus event seen: a stream lost is resumed after it. */\n" \
	"let lastId = \"0\";\n" \
	"\n" \
	"/* One SSE block (\"id:\", \"event:\", \"data:\" lines): its event to on. */\n" \
	"function block(text, on) {\n" \
	"\tlet type = \"message\", data = \"\";\n" \
	"\ttext.split(\"\\n\").forEach(function (line) {\n" \
	"\t\tif (line.startsWith(\"id:\")) lastId = line.slice(3).trim();\n" \
	"\t\telse if (line.startsWith(\"event:\")) type = line.slice(6).trim();\n" \
	"\t\telse if (line.startsWith(\"data:\")) data += line.slice(5).trim();\n" \
	"\t});\n" \
	"\tif (data === \"\") return;\n" \
	"\tlet d = null;\n" \
	"\ttry { d = JSON.parse(data); } catch (e) { return; }\n" \
	"\tif (d && typeof d === \"object\") on(type, d);\n" \
	"}\n" \
	"\n" \
	"/* /api/events, each event to on(type, data); up() once it streams,\n" \
	"   down() when it is lost (serve stopped or restarted): then again from\n" \
	"   the last id seen (Last-Event-ID), a little later each time. */\n" \
	"async function events(on, up, down) {\n" \
	"\tlet wait = 250;\n" \
	"\tfor (;;) {\n" \
	"\t\ttry {\n" \
	"\t\t\tconst r = await call(\"GET\", \"/api/events\", undefined,\n" \
	"\t\t\t    { \"Last-Event-ID\": lastId });\n" \
	"\t\t\tif (!r.ok || !r.body) throw new Error(\"events: \" + r.status);\n" \
	"\t\t\twait = 250;\n" \
	"\t\t\tup();\n" \
	"\t\t\tconst rd = r.body.getReader();\n" \
	"\t\t\tconst dec = new TextDecoder();\n" \
	"\t\t\tlet buf = \"\";\n" \
	"\t\t\tfor (;;) {\n" \
	"\t\t\t\tconst c = await rd.read();\n" \
	"\t\t\t\tif (c.done) break;\n" \
	"\t\t\t\tbuf += dec.decode(c.value, { stream: true });\n" \
	"\t\t\t\tlet i;\n" \
	"\t\t\t\twhile ((i = buf.indexOf(\"\\n\\n\")) >= 0) {\n" \
	"\t\t\t\t\tblock(buf.slice(0, i), on);\n" \
	"\t\t\t\t\tbuf = buf.slice(i + 2);\n" \
	"\t\t\t\t}\n" \
	"\t\t\t}\n" \
	"\t\t} catch (e) { /* lost: said by down() */ }\n" \
	"\t\tdown();\n" \
	"\t\tawait new Promise(function (res) { setTimeout(res, wait); });\n" \
	"\t\twait = Math.min(wait * 2, 4000);\n" \
	"\t}\n" \
	"}\n" \
	"\n" \
	""

#endif
