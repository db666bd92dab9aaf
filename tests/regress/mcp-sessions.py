#!/usr/bin/env python3
# mcp-sessions.py PORT TOKEN CASE [ARG...]: the life of serve's /mcp
# sessions for serve-mcp-sessions.sh, with clients that never DELETE:
#   flood N CAP   N initializes: every one answered, the gauge never over
#                 CAP, the least recently used evicted (404), then a new
#                 client's tools/list
#   busy CAP      every session holding a GET stream: 503 (none idle);
#                 one stream closed: room again
#   idle SECS CMD (serve run with CCW_MCP_IDLE_S=SECS) idle sessions
#                 expire; one with a GET stream and one with a call in
#                 flight (wait_agent on a bash agent running CMD) do not
#                 until they are idle in turn
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
                   "clientInfo": {"name": "mcp-sessions", "version": "1"}}}


def say(good, desc):
    print("ok %d %s" % (1 if good else 0, desc.replace("\n", " ")))
    sys.stdout.flush()


def call(method, body=None, sid=None, path="/mcp", token=True):
    """One request: (status, headers (lower-case names), body text)."""
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=60)
    h = {"Accept": BOTH}
    if token:
        h["Authorization"] = "Bearer " + TOKEN
    if sid:
        h["Mcp-Session-Id"] = sid
    data = None
    if body is not None:
        data = json.dumps(body)
        h["Content-Type"] = "application/json"
    c.request(method, path, body=data, headers=h)
    r = c.getresponse()
    text = r.read().decode("utf-8", "replace")
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, text


def js(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


def metrics():
    """/metrics as {sample name with labels: value}."""
    st, h, text = call("GET", path="/metrics", token=False)
    out = {}
    for ln in text.splitlines():
        if ln and not ln.startswith("#"):
            k, _, v = ln.rpartition(" ")
            out[k] = int(float(v))
    return out


def ended(m, why):
    return m.get('ccw_mcp_sessions_ended_total{reason="%s"}' % why, -1)


def session():
    """A new initialized session's id, or (None, status, body)."""
    st, h, text = call("POST", INIT)
    sid = h.get("mcp-session-id")
    if st != 200 or not sid:
        return None, st, text
    call("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"},
         sid=sid)
    return sid, st, text


def ping(sid, n=7):
    """The session's answer to a ping: its HTTP status (200: answered)."""
    st, h, text = call("POST", {"jsonrpc": "2.0", "id": n, "method": "ping"},
                       sid=sid)
    j = js(text) or {}
    return st if st != 200 or j.get("result") == {} else -st


def raw(head, body=b""):
    """A request on a socket left open: the socket."""
    s = socket.create_connection(("127.0.0.1", PORT), timeout=60)
    s.sendall(head.encode() + body)
    return s


def get_stream(sid):
    """The session's GET stream, held open: (socket, opened)."""
    s = raw("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
            "Authorization: Bearer %s\r\nAccept: text/event-stream\r\n"
            "Mcp-Session-Id: %s\r\n\r\n" % (PORT, TOKEN, sid))
    buf = b""
    while b": mcp" not in buf and not buf.startswith(b"HTTP/1.1 4"):
        d = s.recv(4096)
        if not d:
            break
        buf += d
    return s, buf.startswith(b"HTTP/1.1 200")


def until(cond, secs):
    """Polls cond() until true or secs passed: its last value."""
    end = time.time() + secs
    while True:
        v = cond()
        if v or time.time() >= end:
            return v
        time.sleep(0.1)


def case_flood():
    n, cap = int(sys.argv[4]), int(sys.argv[5])
    sids, bad, most = [], [], 0
    for i in range(n):
        sid, st, text = session()
        if sid is None:
            bad.append("%d: %d %s" % (i, st, text.strip()[:120]))
        sids.append(sid)
        if i % 10 == 9:
            most = max(most, metrics().get("ccw_mcp_sessions", cap + 1))
    say(not bad, "%d initializes never deleted: every one answered 200 (%s)"
        % (n, "; ".join(bad[:3])))
    m = metrics()
    most = max(most, m.get("ccw_mcp_sessions", cap + 1))
    say(most <= cap, "ccw_mcp_sessions never over the cap %d (%d at most)"
        % (cap, most))
    say(m.get("ccw_mcp_sessions") == cap and
        m.get("ccw_mcp_sessions_limit") == cap,
        "at the cap: ccw_mcp_sessions %s, ccw_mcp_sessions_limit %s" %
        (m.get("ccw_mcp_sessions"), m.get("ccw_mcp_sessions_limit")))
    say(ended(m, "evicted") == n - cap,
        "the least recently used idle ones evicted: %d (want %d)" %
        (ended(m, "evicted"), n - cap))
    say(ping(sids[0]) == 404, "an evicted session's id: 404 (%s), its "
        "client initializes anew" % ping(sids[0]))
    say(ping(sids[-1]) == 200, "the newest session still answers")
    # the oldest surviving one, used now, outlives the next eviction
    old = sids[n - cap]
    say(ping(old) == 200, "the oldest surviving session answers")
    sid, st, text = session()
    say(sid is not None, "a new client initializes (%d)" % st)
    st, h, text = call("POST", {"jsonrpc": "2.0", "id": 2,
                                "method": "tools/list"}, sid=sid)
    tools = ((js(text) or {}).get("result") or {}).get("tools") or []
    say(st == 200 and len(tools) > 0,
        "and lists the tools (%d, %d tools)" % (st, len(tools)))
    say(ping(old) == 200 and ping(sids[n - cap + 1]) == 404,
        "a session just used is not the one evicted; the least recent is")


def case_busy():
    cap = int(sys.argv[4])
    sids = []
    while len(sids) < cap:
        sid, st, text = session()
        if sid is None:
            break
        sids.append(sid)
    socks = [get_stream(sid) for sid in sids]
    say(len(sids) == cap and all(ok for s, ok in socks),
        "%d sessions, each with its GET stream open" % len(sids))
    st, h, text = call("POST", INIT)
    err = ((js(text) or {}).get("error") or {}).get("code")
    say(st == 503 and err is not None,
        "none idle: initialize 503 with a JSON-RPC error (%d %s)" %
        (st, text.strip()[:120]))
    say(metrics().get("ccw_mcp_sessions_refused_total") == 1,
        "ccw_mcp_sessions_refused_total counts it")
    say(all(ping(sid) == 200 for sid in sids[:3]),
        "no busy session was evicted")
    if len(socks) <= 5:
        say(False, "no sessions to go on with")
        return
    socks[5][0].close()
    new = until(lambda: session()[0], 30)
    say(new is not None, "one stream closed: a new session fits")
    say(ping(sids[5]) == 404, "the session that went idle made room (404)")
    for s, ok in socks:
        s.close()
    for sid in sids:
        call("DELETE", sid=sid)
    call("DELETE", sid=new)


def case_idle():
    secs, cmd = int(sys.argv[4]), sys.argv[5]
    sids = [session()[0] for i in range(10)]
    say(all(sids), "10 sessions")
    g, opened = get_stream(sids[0])
    say(opened, "session 0 holds its GET stream")
    st, h, text = call("POST", {
        "jsonrpc": "2.0", "id": 50, "method": "tools/call",
        "params": {"name": "spawn_agent", "arguments": {
            "role": "develop", "tool": "bash", "command": cmd}}},
        sid=sids[1])
    res = (js(text) or {}).get("result", {})
    data = res.get("structuredContent")
    if data is None:
        data = js(res.get("content", [{}])[0].get("text", "null")) or {}
    agent = data.get("agent_id")
    say(st == 200 and isinstance(agent, str), "session 1 spawns a bash agent")
    body = json.dumps({
        "jsonrpc": "2.0", "id": 51, "method": "tools/call",
        "params": {"name": "wait_agent", "arguments": {
            "targets": [agent], "timeout_ms": 4 * secs * 1000}}}).encode()
    w = raw("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
            "Authorization: Bearer %s\r\nAccept: %s\r\n"
            "Content-Type: application/json\r\nMcp-Session-Id: %s\r\n"
            "Content-Length: %d\r\n\r\n" % (PORT, TOKEN, BOTH, sids[1],
                                            len(body)), body)
    m = until(lambda: (lambda m: m if ended(m, "expired") >= 8 else None)(
        metrics()), 10 * secs + 30) or metrics()
    say(ended(m, "expired") == 8 and m.get("ccw_mcp_sessions") == 2,
        "the 8 idle sessions expired (%s), 2 left (%s)" %
        (ended(m, "expired"), m.get("ccw_mcp_sessions")))
    say(ping(sids[2]) == 404, "an expired session's id: 404")
    say(ping(sids[0]) == 200, "the one with a GET stream lives on")
    say(ping(sids[1]) == 200, "the one with a call in flight lives on")
    # the streams' clients leave: the GET one goes idle now, the caller's
    # session when its call ends (the wait's timeout), each then expires
    g.close()
    w.close()
    m = until(lambda: (lambda m: m if m.get("ccw_mcp_sessions") == 1
                       else None)(metrics()), 10 * secs + 30) or metrics()
    say(m.get("ccw_mcp_sessions") == 1 and ping(sids[0]) == 404,
        "its stream closed, session 0 expired (%s left)" %
        m.get("ccw_mcp_sessions"))
    say(ping(sids[1]) == 200,
        "session 1's call runs on after its client left: not idle")
    m = until(lambda: (lambda m: m if m.get("ccw_mcp_sessions") == 0
                       else None)(metrics()), 20 * secs + 30) or metrics()
    say(m.get("ccw_mcp_sessions") == 0 and ended(m, "expired") == 10,
        "its call over, session 1 expired too: none left (%s), 10 "
        "expired (%s)" % (m.get("ccw_mcp_sessions"), ended(m, "expired")))
    say(m.get("ccw_mcp_session_idle_seconds") == secs,
        "ccw_mcp_session_idle_seconds %s" %
        m.get("ccw_mcp_session_idle_seconds"))


{"flood": case_flood, "busy": case_busy, "idle": case_idle}[CASE]()
