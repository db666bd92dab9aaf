#!/usr/bin/env python3
# http-probe.py PORT CASE: one probe of serve's HTTP server (tests/http-serve)
# for http-limits.sh (idle also of serve itself, for serve-sock.sh), over
# raw sockets so that it can send what no HTTP library would.  Prints
# "ok 1|0 DESCRIPTION" lines (and "ms N DESC" for the one timing the
# script judges with t_within); exit 0 unless it crashed.
import json
import resource
import socket
import sys
import time

PORT = int(sys.argv[1])
CASE = sys.argv[2]


def say(good, desc):
    print("ok %d %s" % (1 if good else 0, desc.replace("\n", " ")))
    sys.stdout.flush()


def conn(timeout=10):
    s = socket.create_connection(("127.0.0.1", PORT), timeout=timeout)
    return s


def read_reply(s, limit=8 << 20):
    """One reply: (status, headers dict, body bytes); None if closed."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            return None if not buf else (0, {}, buf)
        buf += d
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    hdr = {}
    for ln in lines[1:]:
        k, v = ln.split(":", 1)
        hdr[k.strip().lower()] = v.strip()
    n = int(hdr.get("content-length", "-1"))
    if n < 0:
        return status, hdr, rest
    while len(rest) < n:
        d = s.recv(65536)
        if not d:
            break
        rest += d
    return status, hdr, rest[:n], rest[n:]


def ask(raw, timeout=10):
    s = conn(timeout)
    s.sendall(raw)
    r = read_reply(s)
    s.close()
    return r


def is_json_error(r, code):
    if r is None or r[0] != code:
        return False
    try:
        j = json.loads(r[2])
    except ValueError:
        return False
    return isinstance(j.get("error"), str) and j["error"] != ""


def get(path, extra=b""):
    """A GET naming serve by its address (serve's guard checks Host)."""
    return (b"GET " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1:" +
            str(PORT).encode() + b"\r\n" + extra + b"\r\n")


def case_basic():
    r = ask(get("/health"))
    say(r is not None and r[0] == 200 and json.loads(r[2]) == {"ok": True},
        "GET /health: 200 {\"ok\": true}")
    say(r is not None and r[1].get("content-type") == "application/json",
        "its Content-Type is application/json")
    r = ask(get("/nope"))
    say(is_json_error(r, 404), "unknown route: 404 with a JSON error (%s)" %
        (r[2] if r else None))
    r = ask(b"DELETE /health HTTP/1.1\r\nHost: t\r\n\r\n")
    say(is_json_error(r, 405) and r[1].get("allow") == "GET, HEAD",
        "wrong method: 405, Allow: GET, HEAD, a JSON error")
    r = ask(b"HEAD /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    say(r is not None and r[0] == 200 and r[2] == b"" and
        int(r[1]["content-length"]) > 0, "HEAD: the length, no body")
    for raw, code, what in (
            (b"GET / HTTP/2.0\r\nHost: t\r\n\r\n", 505, "HTTP/2.0"),
            (b"GET /health\r\n\r\n", 400, "no version"),
            (b"GET /health HTTP/1.1\r\n\r\n", 400, "no Host"),
            (b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked"
             b"\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 501, "a chunked body"),
            (b"GET /a%00 HTTP/1.1\r\nHost: t\r\n\r\n", 400, "an encoded NUL"),
            (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400,
             "TLS bytes")):
        r = ask(raw)
        say(is_json_error(r, code), "%s: %d with a JSON error (got %s)" %
            (what, code, r[0] if r else "closed"))


def case_keepalive():
    s = conn()
    s.sendall(get("/health"))
    a = read_reply(s)
    s.sendall(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\n"
              b"abc")
    b = read_reply(s)
    say(a and b and a[0] == 200 and json.loads(b[2]) ==
        {"bytes": 3, "sum": 294}, "two requests on one connection")
    # two pipelined in one write: two replies, in order
    s.sendall(get("/later") + get("/health", b"Connection: close\r\n"))
    data = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        data += d
    s.close()
    say(data.count(b"HTTP/1.1 200") == 2 and
        data.index(b'"later"') < data.index(b'"ok"'),
        "pipelined: both answered in order, then closed on request")
    # a client that half-closes after its request still gets the reply
    s = conn()
    s.sendall(get("/later"))
    s.shutdown(socket.SHUT_WR)
    r = read_reply(s)
    s.close()
    say(r is not None and r[0] == 200, "half-closed client: still answered")
    # a body that is all there
    body = bytes(range(256)) * 4096
    r = ask(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" %
            len(body) + body)
    say(r and r[0] == 200 and json.loads(r[2]) ==
        {"bytes": len(body), "sum": sum(body)}, "a 1 MiB body, byte-exact")


def case_sizes():
    r = ask(b"GET /health HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 20000 +
            b"\r\n\r\n")
    say(is_json_error(r, 431), "20 KB of header fields: 431, JSON (%s)" %
        (r[0] if r else "closed"))
    r = ask(b"GET /health HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 16000 +
            b"\r\n\r\n")
    say(r is not None and r[0] == 200, "16000 bytes of fields: served")
    # an announced body over 1 MiB is refused before it is sent ...
    s = conn()
    s.sendall(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n"
              % ((1 << 20) + 1))
    r = read_reply(s)
    s.close()
    say(is_json_error(r, 413), "Content-Length 1 MiB + 1: 413, JSON")
    # ... and a client that sends it anyway still reads the 413
    s = conn()
    try:
        s.sendall(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n"
                  b"\r\n" % (4 << 20) + b"x" * (4 << 20))
    except OSError:
        pass
    r = read_reply(s)
    s.close()
    say(is_json_error(r, 413), "4 MiB sent anyway: the 413 still arrives")


def case_trickle(deadline_ms):
    # one byte every 1 s: the absolute deadline closes it (408), whatever
    # the idle timer would say about a client that is never idle that long
    s = conn(timeout=60)
    raw = get("/health", b"X-Slow: " + b"s" * 100 + b"\r\n")
    t0 = time.monotonic()
    sent = 0
    closed = False
    reply = None
    s.settimeout(1.0)
    while sent < len(raw):
        try:
            s.sendall(raw[sent:sent + 1])
        except OSError:
            closed = True
            break
        sent += 1
        try:
            d = s.recv(65536)
            if d:
                reply = d
            closed = True
            break
        except socket.timeout:
            pass
    el = (time.monotonic() - t0) * 1000
    s.close()
    say(closed and sent < len(raw), "a client trickling a byte a second "
        "is closed before its request is complete (%d of %d bytes)" %
        (sent, len(raw)))
    say(reply is not None and reply.startswith(b"HTTP/1.1 408"),
        "it is told 408 (%r)" % (reply[:20] if reply else None))
    say(el >= deadline_ms - 100, "not before the deadline (%d ms)" % el)
    print("ms %d trickler closed (deadline %d ms)" % (el, deadline_ms))


def open_conns():
    """Open connections: the harness's /stats, or serve's /metrics."""
    r = ask(get("/stats"))
    if r is not None and r[0] == 200:
        return json.loads(r[2])["open"]
    r = ask(get("/metrics"))
    for ln in (r[2].decode() if r is not None else "").splitlines():
        if ln.startswith("ccw_http_connections "):
            return int(ln.split()[1])
    return -1


def case_idle(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 256), hard))
    socks = []
    for _ in range(n):
        socks.append(conn())
    # half of them started a request and stopped
    for s in socks[::2]:
        s.sendall(b"GET /heal")
    t0 = time.monotonic()
    r = ask(get("/health"), timeout=30)
    el = (time.monotonic() - t0) * 1000
    say(r is not None and r[0] == 200, "%d idle connections: /health "
        "answers" % n)
    print("ms %d /health beside %d idle connections" % (el, n))
    say(open_conns() >= n, "the server holds them all open (%d)" %
        open_conns())
    for s in socks:
        s.close()


def case_cap(cap):
    socks = [conn() for _ in range(cap)]
    # the server must have taken them all before the next one counts
    for s in socks:
        s.sendall(b"G")
    time.sleep(0)
    deadline = time.monotonic() + 30
    extra = None
    while time.monotonic() < deadline:
        extra = ask(get("/health"))
        if extra and extra[0] == 503:
            break
        time.sleep(0.05)
    say(is_json_error(extra, 503), "connection %d over a cap of %d: 503, "
        "JSON" % (cap + 1, cap))
    for s in socks:
        s.close()
    deadline = time.monotonic() + 30
    r = None
    while time.monotonic() < deadline:
        r = ask(get("/health"))
        if r and r[0] == 200:
            break
        time.sleep(0.05)
    say(r is not None and r[0] == 200, "once they left: served again")


def stats():
    return json.loads(ask(get("/stats"))[2])


def wait_stats(key, want, sec=30):
    deadline = time.monotonic() + sec
    st = stats()
    while st[key] != want and time.monotonic() < deadline:
        time.sleep(0.02)
        st = stats()
    return st


def case_stream():
    before = stats()["told"]
    s = conn()
    s.sendall(get("/stream"))
    buf = b""
    while buf.count(b"\n\n") < 5:
        buf += s.recv(65536)
    say(buf.startswith(b"HTTP/1.1 200") and
        b"content-type: text/event-stream" in buf.lower() and
        b"content-length" not in buf.lower(),
        "a stream: 200, text/event-stream, no length")
    say(b"id: 1\ndata:" in buf and b"id: 3\n" in buf, "its events in order")
    s.close()
    st = wait_stats("streams", 0)
    say(st["told"] == before + 1 and st["inflight"] == 0,
        "the client left: the stream's owner was told, nothing left over")
    # a reader that never reads: closed once it is stream_max behind
    s = conn()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(get("/stream?big=1"))
    st = wait_stats("streams", 0, sec=60)
    say(st["streams"] == 0 and st["told"] == before + 2,
        "a stream whose reader stalls is closed, its owner told")
    s.close()
    # a waiting answer whose client leaves: told, no reply written
    s = conn()
    s.sendall(get("/later"))
    s.close()
    st = wait_stats("inflight", 0)
    say(st["inflight"] == 0, "a waiting answer's client left: settled")


class Events:
    """An SSE client: events as (id, event, data dict)."""

    def __init__(self, last=None, query=""):
        self.s = conn(timeout=30)
        extra = b"Last-Event-ID: %s\r\n" % last.encode() if last else b""
        self.s.sendall(get("/events" + query, extra))
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self.buf += self.s.recv(65536)
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        self.head = head.decode("latin-1")

    def next(self):
        while True:
            while b"\n\n" not in self.buf:
                d = self.s.recv(65536)
                if not d:
                    return None
                self.buf += d
            block, self.buf = self.buf.split(b"\n\n", 1)
            ev = {}
            for ln in block.decode().split("\n"):
                if ln.startswith(":") or ":" not in ln:
                    continue
                k, v = ln.split(":", 1)
                ev[k] = v[1:] if v.startswith(" ") else v
            if "data" in ev:
                return int(ev["id"]), ev["event"], json.loads(ev["data"])

    def until(self, event, loop=None):
        got = []
        while True:
            e = self.next()
            if e is None:
                return got
            got.append(e)
            if e[1] == event and (loop is None or e[2].get("loop_id") == loop):
                return got

    def close(self):
        self.s.close()


def publish(evs):
    body = json.dumps(evs).encode()
    r = ask(b"POST /publish HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n"
            b"\r\n" % len(body) + body)
    return json.loads(r[2])["seq"]


def case_events(keep):
    a = Events()
    say("200 OK" in a.head and "text/event-stream" in a.head,
        "GET /events: a stream")
    # a burst in one request: one loop turn on the server
    evs = [{"type": "LOOP_STATE_UPDATE", "loop_id": "L1",
            "current_iteration": i, "status": "running"}
           for i in range(1, 101)]
    evs.append({"type": "LOOP_STEP_COMPLETED", "loop_id": "L1",
                "step_id": "develop", "exit_code": 0})
    evs += [{"type": "LOOP_LOG_ENTRY", "loop_id": "L2", "line": "l%d" % i}
            for i in range(20)]
    evs += [{"type": "LOOP_STATE_UPDATE", "loop_id": "L2",
             "current_iteration": i} for i in range(1, 51)]
    # two parallel workers of one loop: each keeps its own latest line
    evs += [{"type": "worker_progress", "loop_id": "L2", "agent_id": a,
             "text": "%s %d" % (a, i)} for i in range(10)
            for a in ("agent-1", "agent-2")]
    evs.append({"type": "LOOP_COMPLETED", "loop_id": "L2",
                "final_status": "completed"})
    last = publish(evs)
    got = a.until("LOOP_COMPLETED", "L2")
    ids = [g[0] for g in got]
    say(ids == sorted(ids) and len(set(ids)) == len(ids),
        "ids only grow (%d events)" % len(ids))
    say(ids and ids[-1] == last, "the last id is the bus's last seq")
    s1 = [g for g in got if g[1] == "LOOP_STATE_UPDATE" and
          g[2]["loop_id"] == "L1"]
    say(len(s1) == 1 and s1[0][2]["current_iteration"] == 100,
        "100 state updates of a loop in one turn: one event, the last "
        "value (%s)" % [g[2]["current_iteration"] for g in s1])
    order = [g[1] for g in got if g[2]["loop_id"] == "L1"]
    say(order == ["LOOP_STATE_UPDATE", "LOOP_STEP_COMPLETED"],
        "the pending update is sent before the loop's next event (%s)" %
        order)
    logs = [g[2]["line"] for g in got if g[1] == "LOOP_LOG_ENTRY"]
    say(logs == ["l%d" % i for i in range(20)],
        "log lines are never coalesced: 20 of 20, in order")
    s2 = [g[2]["current_iteration"] for g in got
          if g[1] == "LOOP_STATE_UPDATE" and g[2]["loop_id"] == "L2"]
    say(s2 == [50], "the other loop's updates: its last value (%s)" % s2)
    wp = sorted(g[2]["text"] for g in got if g[1] == "worker_progress")
    say(wp == ["agent-1 9", "agent-2 9"],
        "a loop's parallel workers: each one's last line (%s)" % wp)
    say(all(g[2]["type"] == g[1] and "timestamp" in g[2] for g in got),
        "each data object has its type and a timestamp")
    # a lone update is flushed without anything after it
    seq = publish([{"type": "LOOP_STATE_UPDATE", "loop_id": "L3",
                    "status": "paused"}])
    t0 = time.monotonic()
    e = a.next()
    el = (time.monotonic() - t0) * 1000
    say(e is not None and e[0] == seq and e[2]["status"] == "paused",
        "a trailing update alone is flushed")
    print("ms %d trailing flush" % el)
    # resume after the step event: everything after it, from the ring
    step = [g[0] for g in got if g[1] == "LOOP_STEP_COMPLETED"][0]
    b = Events(last=str(step))
    first = b.next()
    say(first is not None and first[0] == step + 1,
        "Last-Event-ID: the replay starts right after it (%s)" %
        (first[0] if first else None))
    rest = b.until("LOOP_STATE_UPDATE", "L3")
    say(len(rest) + 1 == seq - step, "every event after it is replayed "
        "(%d of %d)" % (len(rest) + 1, seq - step))
    b.close()
    c = Events(query="?lastEventId=%d" % (seq - 1))
    e = c.next()
    say(e is not None and e[0] == seq, "?lastEventId= works as the field")
    c.close()
    # older than the ring keeps: a reset, then live events
    publish([{"type": "LOOP_LOG_ENTRY", "loop_id": "L4", "line": "x"}] *
             (keep + 5))
    d = Events(last="1")
    e = d.next()
    say(e is not None and e[1] == "reset" and e[2]["after"] == 1,
        "a Last-Event-ID the ring no longer holds: a reset event")
    seq = publish([{"type": "LOOP_DELETED", "loop_id": "L4"}])
    e = d.next()
    say(e is not None and e[0] == seq and e[1] == "LOOP_DELETED",
        "then the live events")
    d.close()
    r = ask(get("/events", b"Last-Event-ID: abc\r\n"))
    say(is_json_error(r, 400), "a Last-Event-ID that is no number: 400")
    a.close()
    st = wait_stats("sse_clients", 0)
    say(st["sse_clients"] == 0, "every client that left was let go")


cases = {
    "basic": case_basic,
    "keepalive": case_keepalive,
    "sizes": case_sizes,
    "stream": case_stream,
}
if CASE in cases:
    cases[CASE]()
elif CASE == "trickle":
    case_trickle(int(sys.argv[3]))
elif CASE == "idle":
    case_idle(int(sys.argv[3]))
elif CASE == "events":
    case_events(int(sys.argv[3]))
elif CASE == "cap":
    case_cap(int(sys.argv[3]))
else:
    sys.exit("http-probe: unknown case " + CASE)
