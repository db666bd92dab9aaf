#!/usr/bin/env python3
# rebind-probe.py PORT TOKEN SERVE_C CASE [ARGS]: raw-socket probes of
# serve's Host/Origin guard for serve-rebind.sh, as a DNS-rebinding page
# or another site would send them.  The routes are read from serve's own
# table (SERVE_C, supervisor/api/serve.c), so a new row is probed too.
# Prints "ok 1 DESC" (passed) or "ok 0 DESC" lines (t_probe_out).
import json
import re
import socket
import sys

PORT, TOKEN, SERVE_C, CASE = (int(sys.argv[1]), sys.argv[2], sys.argv[3],
                              sys.argv[4])
ARGS = sys.argv[5:]
ME = "127.0.0.1:%d" % PORT
# what a rebound page would run: the file ARGS[0] appears if it runs
ATTACK = json.dumps({"role": "develop", "tool": "bash",
                     "command": "touch " + (ARGS[0] if ARGS else "/dev/null")})
EVIL = "attacker.example:%d" % PORT


def say(cond, desc):
    print("ok %d %s" % (1 if cond else 0, desc.replace("\n", " ")))
    sys.stdout.flush()


def ask(method, path, host=ME, extra=(), body=None):
    """One request on its own connection: (status, {name: value}, text).
    host None: no Host field; a list: one field each."""
    lines = ["%s %s HTTP/1.1" % (method, path)]
    for h in ([] if host is None else host if isinstance(host, list)
              else [host]):
        lines.append("Host: " + h)
    lines += list(extra)
    data = b""
    if body is not None:
        data = body.encode()
        lines += ["Content-Type: application/json",
                  "Content-Length: %d" % len(data)]
    lines.append("Connection: close")
    s = socket.create_connection(("127.0.0.1", PORT), timeout=30)
    s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + data)
    raw = b""
    while b"\r\n\r\n" not in raw:
        c = s.recv(65536)
        if not c:
            break
        raw += c
    head, _, text = raw.partition(b"\r\n\r\n")
    hl = head.decode("latin-1").split("\r\n")
    try:
        st = int(hl[0].split()[1])
    except (IndexError, ValueError):
        st = 0
    hdr = {}
    for line in hl[1:]:
        k, _, v = line.partition(":")
        hdr.setdefault(k.strip().lower(), []).append(v.strip())
    # a reply has its length; a stream (what a refusal never is) is read
    # for a moment only: what it disclosed so far
    want = int((hdr.get("content-length") or ["-1"])[0])
    if want < 0:
        s.settimeout(1)
    try:
        while want < 0 or len(text) < want:
            c = s.recv(65536)
            if not c:
                break
            text += c
    except socket.timeout:
        pass
    s.close()
    return st, hdr, text.decode("utf-8", "replace")


def routes():
    """serve's table: (method, path with captures filled, flags)."""
    src = open(SERVE_C).read()
    rows = re.findall(r'\{\s*HTTP_([A-Z]+),\s*"([^"]+)",\s*\w+,\s*([^}]*)\}',
                      src)
    out = []
    for m, pat, flags in rows:
        out.append((m, re.sub(r":[A-Za-z]+", "x", pat), flags.strip()))
    return out


def body_for(method, path):
    """What a page would post: a command where one runs."""
    if method in ("GET", "HEAD", "DELETE"):
        return None
    if path == "/api/agents":
        return ATTACK
    return json.dumps({"title": "rebind", "tool": "bash", "role": "develop",
                       "command": "touch " + ARGS[0], "status": "running",
                       "jsonrpc": "2.0", "id": 1, "method": "initialize"})


def refused(st, hdr, text, codes):
    """Refused as it should be: the code, a JSON body, no token, no
    cookie."""
    try:
        json.loads(text)
        isjson = True
    except ValueError:
        isjson = False
    return (st in codes and isjson and TOKEN not in text and
            "set-cookie" not in hdr)


def case_routes():
    """Every row of the table against a foreign Host, a foreign Origin,
    Origin null, our name on another port, two Host fields; the token
    sent each time (the attacker may have it: nothing must run)."""
    rows = routes()
    say(len(rows) >= 20, "serve.c's table read: %d routes" % len(rows))
    auth = "Authorization: Bearer " + TOKEN
    for m, path, flags in rows:
        b = body_for(m, path)
        name = "%s %s" % (m, path)
        opened = "SERVE_OPEN" in flags
        st, h, t = ask(m, path, host=EVIL, extra=[auth], body=b)
        if opened:
            say(st == 200 and TOKEN not in t,
                "%s (open) with Host %s: %d, nothing held" % (name, EVIL, st))
        else:
            say(refused(st, h, t, (421, 403)),
                "%s with Host %s: refused (%d %s)" % (name, EVIL, st,
                                                      t.strip()[:80]))
        for origin, why in (("http://" + EVIL, "a foreign Origin"),
                            ("null", "Origin null"),
                            ("http://localhost:%d" % (PORT ^ 1),
                             "our name on another port")):
            st, h, t = ask(m, path, extra=[auth, "Origin: " + origin],
                           body=b)
            if opened:
                continue
            say(refused(st, h, t, (403,)),
                "%s with %s: 403 (%d)" % (name, why, st))
        st, h, t = ask(m, path, host=[ME, ME], extra=[auth], body=b)
        say(st == 400 and TOKEN not in t,
            "%s with two Host fields: 400 (%d)" % (name, st))
        st, h, t = ask(m, path, host=[ME, EVIL], extra=[auth], body=b)
        say(st == 400 and TOKEN not in t,
            "%s with Host ours then foreign: 400 (%d)" % (name, st))
    # no route, or another method: the guard answers first, all the same
    for m, path in (("GET", "/api/nothing"), ("PUT", "/api/agents"),
                    ("PUT", "/mcp")):
        st, h, t = ask(m, path, host=EVIL, extra=[auth])
        say(refused(st, h, t, (421,)) and "allow" not in h,
            "%s %s (no such route) with Host %s: 421 (%d)" % (m, path, EVIL,
                                                             st))
    st, h, t = ask("POST", "/health", host=EVIL)
    say(st == 405 and TOKEN not in t,
        "POST /health (open path) with Host %s: 405 (%d)" % (EVIL, st))


def case_attack():
    """The two-step attack of a rebound page: the token, then a command
    (with the token obtained elsewhere, and with the cookie)."""
    for extra in ([], ["Origin: http://" + EVIL],
                  ["Sec-Fetch-Site: same-origin"]):
        st, h, t = ask("GET", "/api/auth/token", host=EVIL, extra=extra)
        say(refused(st, h, t, (421, 403)),
            "GET /api/auth/token, Host %s %s: refused, no token, no "
            "cookie (%d %s)" % (EVIL, " ".join(extra), st, t.strip()[:60]))
    b = ATTACK
    for extra in (["Authorization: Bearer " + TOKEN],
                  ["Authorization: Bearer " + TOKEN,
                   "Origin: http://" + EVIL],
                  ["Cookie: ccw_token=" + TOKEN,
                   "Origin: http://" + EVIL],
                  ["Cookie: ccw_token=" + TOKEN]):
        st, h, t = ask("POST", "/api/agents", host=EVIL, extra=extra,
                       body=b)
        say(refused(st, h, t, (421, 403)),
            "POST /api/agents (bash touch), Host %s, %s: refused (%d)" %
            (EVIL, " + ".join(e.split(":")[0] for e in extra), st))
    # a rebound name whose Origin is ours cannot happen; ours with a
    # foreign Origin is CSRF: refused too
    st, h, t = ask("POST", "/api/agents", extra=[
        "Authorization: Bearer " + TOKEN, "Origin: http://" + EVIL], body=b)
    say(refused(st, h, t, (403,)),
        "POST /api/agents from a foreign Origin to our Host: 403 (%d)" % st)
    st, h, t = ask("GET", "/api/auth/token", host="0.0.0.0:%d" % PORT)
    say(refused(st, h, t, (421,)),
        "Host 0.0.0.0:PORT (no name): 421 (%d)" % st)


def case_legit():
    """Our names still work, and the token's cookie."""
    auth = "Authorization: Bearer " + TOKEN
    for host in (ME, "localhost:%d" % PORT, "[::1]:%d" % PORT,
                 "LOCALHOST:%d" % PORT, "127.0.0.1",
                 "localhost:%d" % (PORT ^ 1)):
        st, h, t = ask("GET", "/api/loops/v2", host=host, extra=[auth])
        say(st == 200, "GET /api/loops/v2, Host %s: 200 (%d)" % (host, st))
    for origin in ("http://127.0.0.1:%d" % PORT, "http://localhost:%d" % PORT,
                   "https://[::1]:%d" % PORT):
        st, h, t = ask("GET", "/api/loops/v2", extra=[auth,
                                                      "Origin: " + origin])
        say(st == 200, "Origin %s: 200 (%d)" % (origin, st))
    st, h, t = ask("GET", "/health", host=None)
    say(st == 400, "HTTP/1.1 without Host: the parser's 400 (%d)" % st)
    st, h, t = ask("GET", "/api/auth/token",
                   extra=["Origin: http://localhost:%d" % PORT])
    ck = (h.get("set-cookie") or [""])[0]
    attrs = [a.strip() for a in ck.split(";")]
    say(st == 200 and json.loads(t).get("token") == TOKEN,
        "GET /api/auth/token, our Host and Origin: the token (%d)" % st)
    say(attrs[0] == "ccw_token=" + TOKEN and "HttpOnly" in attrs and
        "SameSite=Strict" in attrs and "Path=/" in attrs,
        "it sets the cookie ccw_token, HttpOnly, SameSite=Strict, "
        "Path=/ (%s)" % ck.replace(TOKEN, "TOKEN"))
    st, h, t = ask("GET", "/api/loops/v2",
                   extra=["Cookie: a=b; ccw_token=%s; c=d" % TOKEN])
    say(st == 200, "the cookie alone authorizes (%d)" % st)
    st, h, t = ask("GET", "/api/loops/v2", extra=[
        "Cookie: ccw_token=" + TOKEN, "Sec-Fetch-Site: same-origin"])
    say(st == 200, "the cookie from our own page: 200 (%d)" % st)
    st, h, t = ask("GET", "/api/loops/v2", extra=[
        "Cookie: ccw_token=" + TOKEN, "Sec-Fetch-Site: same-site"])
    say(st == 401, "the cookie on a request another port's page made "
        "(Sec-Fetch-Site: same-site): 401 (%d)" % st)
    st, h, t = ask("GET", "/api/loops/v2",
                   extra=["Cookie: ccw_token=" + TOKEN + "x"])
    say(st == 401, "a wrong cookie: 401 (%d)" % st)
    for m, path in (("GET", "/api/loops/v2"), ("POST", "/api/agents"),
                    ("GET", "/api/events"), ("POST", "/mcp")):
        st, h, t = ask(m, path, body="{}" if m == "POST" else None)
        say(st == 401 and h.get("www-authenticate") ==
            ['Bearer realm="ccw-supervisor"'],
            "%s %s without a token: 401 with WWW-Authenticate: Bearer "
            "realm=\"ccw-supervisor\" (%d %s)" % (m, path, st,
                                                 h.get("www-authenticate")))


def case_proxy():
    """--allowed-host ARGS[0] (a reverse proxy's name)."""
    name, auth = ARGS[0], "Authorization: Bearer " + TOKEN
    for host in (name, name + ":443", ME):
        st, h, t = ask("GET", "/api/loops/v2", host=host, extra=[auth])
        say(st == 200, "Host %s: 200 (%d)" % (host, st))
    st, h, t = ask("POST", "/api/loops/v2", host=name, extra=[
        auth, "Origin: https://" + name], body=json.dumps({"title": "p"}))
    say(st in (200, 201), "POST from Origin https://%s: created (%d)" %
        (name, st))
    st, h, t = ask("GET", "/api/loops/v2", host="other." + name,
                   extra=[auth])
    say(st == 421, "Host other.%s: 421 (%d)" % (name, st))
    st, h, t = ask("GET", "/api/loops/v2", host=EVIL, extra=[auth])
    say(st == 421, "Host %s: still 421 (%d)" % (EVIL, st))


{"routes": case_routes, "attack": case_attack, "legit": case_legit,
 "proxy": case_proxy}[CASE]()
