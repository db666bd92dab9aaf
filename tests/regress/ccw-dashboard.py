#!/usr/bin/env python3
# ccw-dashboard.py PORT ROOT: CCW's dashboard SPA as a client of serve.
# It sends, in their order, the requests of CCW's ccw/frontend/src/lib/
# api.ts (catlog22/Claude-Code-Workflow 07491b04): initializeAuth (GET
# /api/auth/token, the cookie), initializeCsrfToken (GET /api/csrf-token
# ?count=5, its token pool), switchWorkspace, fetchLoops, createLoop,
# updateLoopStatus pause, resume, stop, fetchLoops; as a browser does it
# (a cookie jar, same-origin fetch headers, X-CSRF-Token from the pool on
# every write, the pool refilled from each reply's X-CSRF-Token).  Then
# the refusals: no or a spent CSRF token, a foreign Origin on every route
# it added, bad JSON.  Prints "ok 1 DESC" / "ok 0 DESC" (t_probe_out).
import http.client
import json
import sys
import time
import urllib.parse

PORT, ROOT = int(sys.argv[1]), sys.argv[2]
ORIGIN = "http://127.0.0.1:%d" % PORT
POOL_MAX = 5            # api.ts: MAX_CSRF_TOKEN_POOL_SIZE
jar = {}                # the browser's cookies for this origin
pool = []               # api.ts: csrfTokenQueue
fails = 0


def say(cond, desc):
    """One check for t_probe_out."""
    global fails
    fails += 0 if cond else 1
    print("ok %d %s" % (1 if cond else 0, desc))
    sys.stdout.flush()


def fetch(method, path, body=None, csrf=None, origin=None, cookies=True,
          extra=None):
    """One fetch(url, {credentials: 'same-origin'}) as Chromium sends it
    from a page of this origin: (status, headers, parsed body)."""
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    hdr = {"Accept": "*/*", "Sec-Fetch-Site": "same-origin",
           "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}
    if method not in ("GET", "HEAD"):
        hdr["Origin"] = ORIGIN          # Chromium: on every non-GET fetch
    if origin is not None:
        hdr["Origin"] = origin
        hdr["Sec-Fetch-Site"] = "cross-site"
    if cookies and jar:
        hdr["Cookie"] = "; ".join("%s=%s" % kv for kv in jar.items())
    if csrf is not None:
        hdr["X-CSRF-Token"] = csrf
    if body is not None:
        hdr["Content-Type"] = "application/json"
    hdr.update(extra or {})
    c.request(method, path, body=body, headers=hdr)
    r = c.getresponse()
    raw = r.read().decode("utf-8", "replace")
    heads = r.getheaders()
    c.close()
    for k, v in heads:
        if k.lower() == "set-cookie":
            name, _, rest = v.partition("=")
            jar[name] = rest.split(";")[0]
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = raw
    return r.status, {k.lower(): v for k, v in heads}, parsed


def fetch_api(method, path, body=None):
    """api.ts fetchApi: a write takes a token from the pool (or fetches
    one when it is empty); every reply's X-CSRF-Token refills it."""
    tok = None
    if method in ("POST", "PUT", "PATCH", "DELETE"):
        tok = pool.pop(0) if pool else None
        if tok is None:
            st, h, b = fetch("GET", "/api/csrf-token")
            tok = b.get("csrfToken") if isinstance(b, dict) else None
    st, h, b = fetch(method, path, body, csrf=tok)
    t = h.get("x-csrf-token")
    if t and t not in pool and len(pool) < POOL_MAX:
        pool.append(t)
    return st, h, b


def loops_of(b):
    """fetchLoops: data.loops, by id."""
    return {l["id"]: l for l in (b.get("loops") or [])} \
        if isinstance(b, dict) else {}


q = urllib.parse.quote(ROOT, safe="")
# --- main.tsx: initializeAuth, before React renders
st, h, b = fetch("GET", "/api/auth/token")
say(st == 200 and "ccw_token" in jar and "HttpOnly" in
    h.get("set-cookie", ""), "initializeAuth: GET /api/auth/token sets "
    "the HttpOnly ccw_token cookie (%d)" % st)
# --- App.tsx: initializeCsrfToken
st, h, b = fetch("GET", "/api/csrf-token?count=%d" % POOL_MAX)
toks = b.get("tokens") if isinstance(b, dict) else None
say(st == 200 and isinstance(toks, list) and len(toks) == POOL_MAX and
    len(set(toks)) == POOL_MAX and b.get("expiresIn") == 900,
    "GET /api/csrf-token?count=5: {tokens: 5 distinct, expiresIn: 900} "
    "(%d %s)" % (st, json.dumps(b)[:80]))
say("ccw_session_id" in jar and "XSRF-TOKEN" in jar and
    h.get("x-csrf-token") == (toks or [None])[0],
    "csrf-token: the session cookie, XSRF-TOKEN and X-CSRF-Token set")
for t in toks or []:
    pool.append(t)
st, h, b = fetch("GET", "/api/csrf-token")
say(st == 200 and isinstance(b, dict) and len(b.get("csrfToken", "")) ==
    64, "GET /api/csrf-token: {csrfToken} (one, 64 hex)")
single = b.get("csrfToken") if isinstance(b, dict) else None
# --- AppShell: switchWorkspace(path)
st, h, b = fetch_api("GET", "/api/switch-path?path=" + q)
say(st == 200 and isinstance(b, dict) and b.get("projectPath") and
    isinstance(b.get("recentPaths"), list) and
    b.get("activeSessions") == [] and b.get("archivedSessions") == [],
    "switchWorkspace: {projectPath, recentPaths, activeSessions, "
    "archivedSessions} (%d %s)" % (st, json.dumps(b)[:100]))
# --- LoopMonitor: fetchLoops(projectPath)
st, h, b = fetch_api("GET", "/api/loops?path=" + q)
before = loops_of(b)
say(st == 200 and isinstance(b, dict) and isinstance(b.get("loops"), list),
    "fetchLoops: {loops: [...]} (%d, %d loops)" % (st, len(before)))
# --- createLoop
body = json.dumps({"prompt": "Fix the flaky test\nin detail: x",
                   "tool": "gemini", "mode": "write"})
st, h, b = fetch_api("POST", "/api/loops", body)
lid = b.get("id") if isinstance(b, dict) else None
say(st == 200 and lid and b.get("status") == "running" and
    b.get("name") == "Fix the flaky test" and
    b.get("prompt") == "Fix the flaky test\nin detail: x" and
    b.get("currentStep") is not None and b.get("totalSteps") == 10 and
    b.get("createdAt") and b.get("data", {}).get("loopId") == lid,
    "createLoop: 200, a v1 Loop, created and started (%d %s)" %
    (st, json.dumps(b)[:160]))
say(h.get("x-csrf-token") and h.get("x-csrf-token") not in toks,
    "a write's reply carries the next CSRF token")
print("loop " + str(lid))
sys.stdout.flush()
# --- updateLoopStatus pause, resume, stop
for action, want, msg in (("pause", "paused", "Loop paused"),
                          ("resume", "running", "Loop resumed"),
                          ("stop", "failed", "Loop stopped")):
    st, h, b = fetch_api("POST", "/api/loops/%s/%s" % (lid, action))
    say(st == 200 and b.get("status") == want and b.get("id") == lid and
        b.get("message") == msg and b.get("success") is True,
        "updateLoopStatus %s: 200, %s, '%s' (%d %s)" % (
            action, want, msg, st, json.dumps(b)[:120]))
say(b.get("error") == "Manually stopped by user" and b.get("completedAt"),
    "stop: error and completedAt in the Loop")
# --- the Loop Monitor's next poll sees the change
st, h, b = fetch_api("GET", "/api/loops?path=" + q)
after = loops_of(b)
say(lid not in before and lid in after and after[lid]["status"] ==
    "failed" and after[lid]["name"] == "Fix the flaky test",
    "fetchLoops again: the new loop, failed (%s)" %
    json.dumps(after.get(lid))[:160])

# --- b3f420ac's api.ts: the token read from the XSRF-TOKEN cookie
st, h, b = fetch("POST", "/api/loops/%s/pause" % lid)
say(st == 400 and b.get("success") is False,
    "XSRF-TOKEN cookie alone passes the check (b3f420ac's api.ts): then "
    "the loop's own 400 (%d %s)" % (st, json.dumps(b)[:80]))
# --- refusals: CSRF
saved = dict(jar)
jar.pop("XSRF-TOKEN", None)
st, h, b = fetch("POST", "/api/loops/%s/resume" % lid)
say(st == 403 and b == {"error": "CSRF validation failed"},
    "a write without a CSRF token: 403 (%d %s)" % (st, json.dumps(b)))
st, h, b = fetch("POST", "/api/loops", body, csrf="0" * 64)
say(st == 403, "a wrong CSRF token: 403 (%d)" % st)
st, h, b = fetch("POST", "/api/loops", body, csrf=toks[0])
say(st == 403, "a spent CSRF token (single use): 403 (%d)" % st)
sess = jar.pop("ccw_session_id")
st, h, b = fetch("POST", "/api/loops", body, csrf=single)
say(st == 403, "a token without its session cookie: 403 (%d)" % st)
jar["ccw_session_id"] = "f" * 32
st, h, b = fetch("POST", "/api/loops", body, csrf=single)
say(st == 403, "a token with another session: 403 (%d)" % st)
jar["ccw_session_id"] = sess
st, h, b = fetch("GET", "/api/loops", cookies=False)
say(st == 401, "no cookie, no token: 401 (%d)" % st)
bearer = {"Authorization": "Bearer " + jar["ccw_token"]}
st, h, b = fetch("POST", "/api/loops/nope-1/stop", cookies=False,
                 extra=bearer)
say(st == 404, "the bearer token needs no CSRF token (CCW's rule): the "
    "loop's own 404 (%d)" % st)
st, h, b = fetch("POST", "/api/loops/nope-1/stop",
                 extra={"Authorization": "Bearer wrong"})
say(st == 403, "a wrong bearer beside the cookie still needs CSRF: 403 "
    "(%d)" % st)
st, h, b = fetch("GET", "/api/csrf-token?count=99")
say(st == 200 and len(b.get("tokens", [])) == 10,
    "csrf-token?count=99: 10 tokens at most (CCW's cap)")
# --- bad JSON: 400 (the CSRF token good)
st, h, b = fetch_api("POST", "/api/loops", "{not json")
say(st == 400 and b == {"error": "Invalid JSON body"},
    "bad JSON: 400 (%d %s)" % (st, json.dumps(b)))
st, h, b = fetch_api("POST", "/api/loops", json.dumps({"tool": "gemini"}))
say(st == 400 and b == {"error": "prompt is required"},
    "no prompt: 400 (%d %s)" % (st, json.dumps(b)))
st, h, b = fetch_api("POST", "/api/loops/nope-1/pause")
say(st == 404 and b.get("error") == "Loop not found",
    "an unknown loop: 404 (%d)" % st)
st, h, b = fetch_api("GET", "/api/switch-path?path=%2F")
say(st == 404, "switch-path to a path that is not a root: 404 (%d)" % st)
st, h, b = fetch_api("GET", "/api/switch-path")
say(st == 400 and b == {"error": "Path is required"},
    "switch-path without a path: 400 (%d)" % st)
# --- a foreign Origin on every route this adds, even with the cookies
jar.update(saved)
for method, path in (("GET", "/api/switch-path?path=" + q),
                     ("GET", "/api/csrf-token"),
                     ("GET", "/api/loops"), ("POST", "/api/loops"),
                     ("POST", "/api/loops/%s/pause" % lid),
                     ("POST", "/api/loops/%s/resume" % lid),
                     ("POST", "/api/loops/%s/stop" % lid)):
    tok = pool.pop(0) if pool else None
    st, h, b = fetch(method, path, body if path == "/api/loops" and
                     method == "POST" else None, csrf=tok,
                     origin="http://evil.example")
    say(st == 403 and "x-csrf-token" not in h,
        "a foreign Origin: %s %s refused (%d)" % (method, path.split("?")[0],
                                                 st))
sys.exit(1 if fails else 0)
