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

#endif
