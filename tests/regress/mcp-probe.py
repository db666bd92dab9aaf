#!/usr/bin/env python3
# mcp-probe.py PORT TOKEN CASE [ARG...]: probes of serve's /mcp (MCP's
# Streamable HTTP) for serve-mcp.sh with python3's http.client and raw
# sockets.  CASE rules; stream CMD and disconnect CMD SECONDS (a slow call:
# wait_agent on a bash agent running CMD, with a progress token).  The
# sessions of clients that never DELETE: flood N CAP (N initializes, the
# least recently used evicted, the gauge never over CAP), busy CAP (503
# only when every session holds a GET stream), idle CMD SECONDS (serve run
# with CCW_MCP_IDLE_S=SECONDS: idle sessions expire; one with a GET
# stream, one with a call in flight on a bash agent running CMD, only
# once idle).
# Prints "ok 1|0 DESCRIPTION" lines; exit 0 unless it crashed.
import http.client
import json
import socket
import sys
import time

PORT, TOKEN, CASE = int(sys.argv[1]), sys.argv[2], sys.argv[3]
BOTH = "application/json, text/event-stream"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "mcp-probe", "version": "1"}}}


def say(good, desc):
    print("ok %d %s" % (1 if good else 0, desc.replace("\n", " ")))
    sys.stdout.flush()


def call(method, body=None, token=True, sid=None, accept=BOTH,
         ctype="application/json", extra=None, raw=None):
    """One request: (status, headers (lower-case names), body text)."""
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    h = {}
    if token:
        h["Authorization"] = "Bearer " + TOKEN
    if sid:
        h["Mcp-Session-Id"] = sid
    if accept:
        h["Accept"] = accept
    data = raw if raw is not None else (
        json.dumps(body) if body is not None else None)
    if data is not None and ctype:
        h["Content-Type"] = ctype
    h.update(extra or {})
    c.request(method, "/mcp", body=data, headers=h)
    r = c.getresponse()
    text = r.read().decode("utf-8", "replace")
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, text


def js(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


def rpc_error(text):
    """The JSON-RPC error code of a refusal's body, or None."""
    j = js(text)
    if isinstance(j, dict) and j.get("jsonrpc") == "2.0" and \
            isinstance(j.get("error"), dict):
        return j["error"].get("code")
    return None


def session():
    """A new initialized session's id, or None."""
    st, h, text = call("POST", INIT)
    sid = h.get("mcp-session-id")
    if st != 200 or not sid:
        return None
    call("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"},
         sid=sid)
    return sid


def ping(sid, n=7):
    st, h, text = call("POST", {"jsonrpc": "2.0", "id": n, "method": "ping"},
                       sid=sid)
    j = js(text) or {}
    return st == 200 and j.get("id") == n and j.get("result") == {}


def gone(sid):
    """Does the session's id get 404 (ended, or never ours)?"""
    st, h, text = call("POST", {"jsonrpc": "2.0", "id": 6, "method": "ping"},
                       sid=sid)
    return st == 404


def metrics():
    """/metrics as {sample with its labels: value}."""
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode("utf-8", "replace")
    c.close()
    out = {}
    for ln in text.splitlines():
        if ln and not ln.startswith("#"):
            k, _, v = ln.rpartition(" ")
            out[k] = int(float(v))
    return out


def ended(m, why):
    """Sessions ended so (deleted, expired, evicted) in a scrape."""
    return m.get('ccw_mcp_sessions_ended_total{reason="%s"}' % why, -1)


def until(cond, secs):
    """Polls cond() until it is true or secs passed: its last value."""
    end = time.time() + secs
    while True:
        v = cond()
        if v or time.time() >= end:
            return v
        time.sleep(0.1)


def get_stream(sid):
    """The session's GET stream, held open (the response holds the
    socket: close it to leave): the response."""
    g = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    g.request("GET", "/mcp", headers={"Authorization": "Bearer " + TOKEN,
                                      "Accept": "text/event-stream",
                                      "Mcp-Session-Id": sid})
    return g.getresponse()


def post_raw(sid, msg):
    """A POST of msg on a socket whose answer is never read: the socket
    (closing it is the client leaving mid-call)."""
    body = json.dumps(msg).encode()
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    s.sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
               "Authorization: Bearer %s\r\nAccept: %s\r\n"
               "Content-Type: application/json\r\nMcp-Session-Id: %s\r\n"
               "Content-Length: %d\r\n\r\n" %
               (PORT, TOKEN, BOTH, sid, len(body))).encode() + body)
    return s


def slow_call(sid):
    """A bash agent running argv[4] spawned; a wait_agent on it (2.5 s,
    with a progress token: progress first, then the reply)."""
    st, h, text = call("POST", {
        "jsonrpc": "2.0", "id": 50, "method": "tools/call",
        "params": {"name": "spawn_agent", "arguments": {
            "role": "develop", "tool": "bash", "command": sys.argv[4]}}},
        sid=sid)
    res = (js(text) or {}).get("result", {})
    data = res.get("structuredContent")
    if data is None:
        data = js(res.get("content", [{}])[0].get("text", "null")) or {}
    say(st == 200 and isinstance(data.get("agent_id"), str),
        "spawn_agent of a bash agent (%s)" % text.strip()[:200])
    return {"jsonrpc": "2.0", "id": "w1", "method": "tools/call",
            "params": {"name": "wait_agent",
                       "_meta": {"progressToken": "p1"},
                       "arguments": {"targets": [data.get("agent_id")],
                                     "timeout_ms": 2500}}}


def sse_events(fp, want, deadline):
    """Reads SSE events from fp until `want` data events or EOF."""
    out, data = [], []
    while len(out) < want and time.time() < deadline:
        line = fp.readline()
        if not line:
            break
        line = line.decode("utf-8", "replace").rstrip("\r\n")
        if line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "" and data:
            out.append(js("\n".join(data)))
            data = []
    return out


def case_rules():
    st, h, text = call("POST", INIT, token=False)
    say(st == 401, "no token: 401 (serve's bearer rule)")
    st, h, text = call("POST", INIT,
                       extra={"Origin": "http://evil.example"})
    say(st == 403 and rpc_error(text) is not None,
        "Origin evil.example: 403 with a JSON-RPC error body (%d %s)" %
        (st, text.strip()))
    st, h, text = call("POST", INIT, extra={"Origin": "null"})
    say(st == 403, "Origin null: 403")
    st, h, text = call("POST", INIT, extra={
        "Host": "evil.example.com:%d" % PORT,
        "Origin": "http://evil.example.com:%d" % PORT})
    say(st == 403, "Host and Origin evil.example.com (a rebinding): 403")
    st, h, text = call("POST", INIT, accept="application/json")
    say(st == 406 and rpc_error(text) is not None,
        "Accept without text/event-stream: 406 (%d)" % st)
    st, h, text = call("POST", INIT, accept=None)
    say(st == 406, "no Accept: 406")
    st, h, text = call("POST", INIT, ctype="text/plain")
    say(st == 415 and rpc_error(text) is not None,
        "Content-Type text/plain: 415 (%d)" % st)
    st, h, text = call("POST", raw="{\"jsonrpc\": \"2.0\", ")
    j = js(text) or {}
    say(st == 400 and rpc_error(text) == -32700 and "id" in j and
        j["id"] is None, "a parse error: 400, -32700, id null (%s)" %
        text.strip())
    st, h, text = call("POST", [INIT])
    say(st == 400 and rpc_error(text) == -32600, "a batch: 400, -32600")
    st, h, text = call("POST", {"jsonrpc": "2.0", "id": 3, "method": "ping"})
    say(st == 400 and rpc_error(text) is not None,
        "a request without Mcp-Session-Id: 400 (%d)" % st)
    st, h, text = call("POST", {"jsonrpc": "2.0", "id": 3, "method": "ping"},
                       sid="0123456789abcdef0123456789abcdef")
    say(st == 404 and rpc_error(text) is not None,
        "an unknown Mcp-Session-Id: 404 (%d)" % st)
    st, h, text = call("POST", INIT, extra={
        "Origin": "http://localhost:%d" % PORT})
    sid = h.get("mcp-session-id", "")
    j = js(text) or {}
    say(st == 200 and h.get("content-type", "").startswith(
        "application/json") and j.get("id") == 1 and "result" in j,
        "initialize (Origin localhost): 200 application/json, the result")
    say(len(sid) >= 16 and all(0x21 <= ord(ch) <= 0x7e for ch in sid),
        "initialize: Mcp-Session-Id, visible ASCII (%s)" % sid)
    st, h, text = call("POST", {"jsonrpc": "2.0",
                                "method": "notifications/initialized"},
                       sid=sid)
    say(st == 202 and text == "", "a notification: 202, no body (%d)" % st)
    st, h, text = call("POST", {"jsonrpc": "2.0", "id": 99, "result": {}},
                       sid=sid)
    say(st == 202 and text == "", "a response: 202, no body (%d)" % st)
    say(ping(sid), "ping with the session: 200, result {}, its id")
    st, h, text = call("POST", {"jsonrpc": "2.0", "id": 4, "method": "ping"},
                       sid=sid, extra={"MCP-Protocol-Version": "1999-01-01"})
    say(st == 400, "MCP-Protocol-Version 1999-01-01: 400 (%d)" % st)
    st, h, text = call("POST", {"jsonrpc": "2.0", "id": 5, "method": "ping"},
                       sid=sid, extra={"MCP-Protocol-Version": "2025-06-18"})
    say(st == 200, "MCP-Protocol-Version 2025-06-18: 200 (%d)" % st)
    st, h, text = call("PUT", {}, sid=sid)
    say(st == 405 and "POST" in h.get("allow", "") and
        "DELETE" in h.get("allow", ""), "PUT: 405, Allow (%s)" %
        h.get("allow"))
    st, h, text = call("GET", sid=sid, accept="application/json")
    say(st == 406, "GET without text/event-stream: 406 (%d)" % st)
    st, h, text = call("GET", accept="text/event-stream")
    say(st == 400, "GET without a session: 400 (%d)" % st)
    st, h, text = call("POST", None, sid=sid, ctype="application/json",
                       raw="x" * (2 << 20))
    say(st == 413, "a body over the limit: 413 (%d)" % st)
    st, h, text = call("DELETE", sid=sid)
    say(st == 200, "DELETE: 200 (%d)" % st)
    st, h, text = call("POST", {"jsonrpc": "2.0", "id": 6, "method": "ping"},
                       sid=sid)
    say(st == 404, "the deleted session: 404 (%d)" % st)
    st, h, text = call("DELETE", sid=sid)
    say(st == 404, "DELETE it again: 404 (%d)" % st)


def case_stream():
    """The GET stream (one per session) and a POST answered as SSE."""
    sid = session()
    say(sid is not None, "a session")
    g = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    g.request("GET", "/mcp", headers={"Authorization": "Bearer " + TOKEN,
                                      "Accept": "text/event-stream",
                                      "Mcp-Session-Id": sid})
    gr = g.getresponse()
    say(gr.status == 200 and gr.getheader("Content-Type", "").startswith(
        "text/event-stream"), "GET: 200 text/event-stream (%d)" % gr.status)
    st, h, text = call("GET", sid=sid, accept="text/event-stream")
    say(st == 409, "a second GET stream: 409 (%d)" % st)
    st, h, text = call("POST", {"jsonrpc": "2.0", "id": 40,
                                "method": "logging/setLevel",
                                "params": {"level": "debug"}}, sid=sid)
    say(st == 200, "logging/setLevel debug: 200 (%d)" % st)
    slow = slow_call(sid)
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    c.request("POST", "/mcp", body=json.dumps(slow), headers={
        "Authorization": "Bearer " + TOKEN, "Accept": BOTH,
        "Content-Type": "application/json", "Mcp-Session-Id": sid})
    r = c.getresponse()
    say(r.status == 200 and r.getheader("Content-Type", "").startswith(
        "text/event-stream"), "progress before the reply: an SSE answer")
    ev = sse_events(r.fp, 10, time.time() + 30)
    say(len(ev) >= 2 and ev[0].get("method") == "notifications/progress"
        and ev[0]["params"].get("progressToken") == "p1" and
        ev[-1].get("id") == slow["id"] and
        ("result" in ev[-1] or "error" in ev[-1]),
        "the progress event first, the reply last (%s)" %
        json.dumps(ev)[:300])
    say(r.fp.readline() == b"", "the answer's stream ends after the reply")
    c.close()
    try:
        ev = sse_events(gr.fp, 1, time.time() + 30)
    except OSError:
        ev = []
    say(len(ev) == 1 and ev[0].get("method") == "notifications/message",
        "a log message on the GET stream (%s)" % json.dumps(ev)[:200])
    gr.close()
    g.close()
    # the stream's client left: a new one may open once serve sees it
    deadline, st = time.time() + 10, None
    while time.time() < deadline:
        g = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
        g.request("GET", "/mcp", headers={
            "Authorization": "Bearer " + TOKEN,
            "Accept": "text/event-stream", "Mcp-Session-Id": sid})
        st = g.getresponse().status
        g.close()
        if st != 409:
            break
        time.sleep(0.05)
    say(st == 200, "the GET stream's client left: a new one opens (%s)" % st)
    say(ping(sid), "the session still answers")
    call("DELETE", sid=sid)


def case_disconnect():
    """A client leaves mid-request: its reply dropped, the session kept."""
    sid = session()
    say(sid is not None, "a session")
    s = post_raw(sid, slow_call(sid))
    time.sleep(0.1)
    s.close()
    say(ping(sid, 8), "the session answers after its client left")
    time.sleep(float(sys.argv[5]) if len(sys.argv) > 5 else 1.0)
    say(ping(sid, 9), "and after the dropped reply was due")
    st, h, text = call("DELETE", sid=sid)
    say(st == 200, "DELETE: 200")


def case_flood():
    """Clients that never DELETE: every initialize answered, the least
    recently used idle session evicted (404), the gauge within the cap."""
    n, cap = int(sys.argv[4]), int(sys.argv[5])
    sids, bad, most = [], [], 0
    for i in range(n):
        st, h, text = call("POST", INIT)
        sid = h.get("mcp-session-id")
        if st != 200 or not sid:
            bad.append("%d: %d %s" % (i, st, text.strip()[:120]))
        else:
            call("POST", {"jsonrpc": "2.0",
                          "method": "notifications/initialized"}, sid=sid)
        sids.append(sid)
        if i % 10 == 9:
            most = max(most, metrics().get("ccw_mcp_sessions", cap + 1))
    say(not bad, "%d initializes never deleted: each answered 200 (%s)" %
        (n, "; ".join(bad[:3])))
    m = metrics()
    most = max(most, m.get("ccw_mcp_sessions", cap + 1))
    say(most <= cap, "ccw_mcp_sessions never over the cap %d (%d at most)"
        % (cap, most))
    say(m.get("ccw_mcp_sessions") == cap and
        m.get("ccw_mcp_sessions_limit") == cap,
        "at the cap: ccw_mcp_sessions %s, ccw_mcp_sessions_limit %s" %
        (m.get("ccw_mcp_sessions"), m.get("ccw_mcp_sessions_limit")))
    say(ended(m, "evicted") == n - cap, "the least recently used idle "
        "ones evicted: %d (want %d)" % (ended(m, "evicted"), n - cap))
    say(gone(sids[0]), "an evicted session's id: 404 (its client "
        "initializes anew)")
    say(ping(sids[-1]), "the newest session still answers")
    # the oldest survivor, used now, is not the next one evicted
    say(ping(sids[n - cap]), "the oldest surviving session answers")
    sid = session()
    say(sid is not None, "a new client initializes")
    st, h, text = call("POST", {"jsonrpc": "2.0", "id": 2,
                                "method": "tools/list"}, sid=sid)
    tools = ((js(text) or {}).get("result") or {}).get("tools") or []
    say(st == 200 and len(tools) > 0,
        "and lists the tools (%d, %d tools)" % (st, len(tools)))
    say(ping(sids[n - cap]) and gone(sids[n - cap + 1]),
        "a session just used is not the one evicted; the least recent is")


def case_busy():
    """Every session busy (a GET stream open): 503; one idle: room."""
    cap = int(sys.argv[4])
    sids = [session() for i in range(cap)]
    streams = [get_stream(sid) for sid in sids if sid]
    say(len(streams) == cap and all(g.status == 200 for g in streams),
        "%d sessions, each with its GET stream open" % len(streams))
    st, h, text = call("POST", INIT)
    say(st == 503 and rpc_error(text) is not None,
        "none idle: initialize 503 with a JSON-RPC error (%d %s)" %
        (st, text.strip()[:120]))
    say(metrics().get("ccw_mcp_sessions_refused_total") == 1,
        "ccw_mcp_sessions_refused_total counts it")
    say(all(ping(sid) for sid in sids[:3]), "no busy session was evicted")
    if len(streams) <= 5:
        return
    streams[5].close()
    new = until(session, 30)
    say(new is not None, "one stream closed: a new session fits")
    say(gone(sids[5]), "the session that went idle made room (404)")
    for g in streams:
        g.close()
    for sid in sids + [new]:
        call("DELETE", sid=sid)


def case_idle():
    """Idle sessions expire; one with a GET stream or a call in flight
    only once idle (its agent is closed then)."""
    secs = int(sys.argv[5])
    # each busy from the start: session 0 with a GET stream, session 1
    # with a wait_agent on a bash agent; then 8 idle ones
    sids = [session()]
    g = get_stream(sids[0])
    say(g.status == 200, "session 0 holds its GET stream")
    sids.append(session())
    wait = slow_call(sids[1])
    wait["params"]["arguments"]["timeout_ms"] = 4 * secs * 1000
    w = post_raw(sids[1], wait)
    sids += [session() for i in range(8)]
    say(all(sids), "10 sessions")
    m = until(lambda: (lambda m: m if ended(m, "expired") >= 8 else None)(
        metrics()), 10 * secs + 30) or metrics()
    say(ended(m, "expired") == 8 and m.get("ccw_mcp_sessions") == 2,
        "the 8 idle sessions expired (%s), 2 left (%s)" %
        (ended(m, "expired"), m.get("ccw_mcp_sessions")))
    say(gone(sids[2]), "an expired session's id: 404")
    say(ping(sids[0]), "the one with a GET stream lives on")
    say(ping(sids[1]), "the one with a call in flight lives on")
    # both clients leave: session 0 is idle now, session 1 once its call
    # ends (the wait's timeout); each expires after that
    g.close()
    w.close()
    m = until(lambda: (lambda m: m if m.get("ccw_mcp_sessions") == 1
                       else None)(metrics()), 10 * secs + 30) or metrics()
    say(m.get("ccw_mcp_sessions") == 1 and gone(sids[0]),
        "its stream closed, session 0 expired (%s left)" %
        m.get("ccw_mcp_sessions"))
    say(ping(sids[1]), "session 1's call runs on after its client left")
    m = until(lambda: (lambda m: m if m.get("ccw_mcp_sessions") == 0
                       else None)(metrics()), 20 * secs + 30) or metrics()
    say(m.get("ccw_mcp_sessions") == 0 and ended(m, "expired") == 10,
        "its call over, session 1 expired too: none left (%s), 10 "
        "expired (%s)" % (m.get("ccw_mcp_sessions"), ended(m, "expired")))
    say(m.get("ccw_mcp_session_idle_seconds") == secs,
        "ccw_mcp_session_idle_seconds %s" %
        m.get("ccw_mcp_session_idle_seconds"))


{"rules": case_rules, "stream": case_stream, "disconnect": case_disconnect,
 "flood": case_flood, "busy": case_busy, "idle": case_idle}[CASE]()
