#!/usr/bin/env python3
# ws-probe.py PORT CASE [ARGS]: a WebSocket client (RFC 6455) over raw
# sockets for tests/regress/serve-ws.sh: the handshake and its refusals,
# the events, the frames a server must refuse, pings, the close
# handshake, fragments, a flood, many clients, a reader that stalls and
# one that never answers.  Prints "ok 1 DESC" (passed) or "ok 0 DESC"
# per check (t_probe_out), "ms TEXT" as diagnostics.  Every read is
# bounded by a timeout; nothing sleeps a fixed time.
import base64
import hashlib
import json
import os
import socket
import struct
import sys
import time

PORT = int(sys.argv[1])
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TMO = float(os.environ.get("WS_PROBE_TIMEOUT", "20"))


def say(good, desc):
    print("ok %d %s" % (1 if good else 0, desc), flush=True)


def key():
    return base64.b64encode(os.urandom(16)).decode()


def accept_of(k):
    return base64.b64encode(hashlib.sha1(k.encode() + GUID).digest()).decode()


def handshake(fields=None, drop=(), path="/ws", rcvbuf=0, behind=b""):
    """(sock, status, head fields lower-cased, the key, leftover bytes)"""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(TMO)
    s.connect(("127.0.0.1", PORT))
    k = key()
    f = {"Host": "127.0.0.1:%d" % PORT, "Upgrade": "websocket",
         "Connection": "Upgrade", "Sec-WebSocket-Key": k,
         "Sec-WebSocket-Version": "13"}
    if TOKEN:
        f["Authorization"] = "Bearer " + TOKEN
    f.update(fields or {})
    for d in drop:
        f.pop(d, None)
    req = "GET %s HTTP/1.1\r\n" % path + "".join(
        "%s: %s\r\n" % kv for kv in f.items()) + "\r\n"
    s.sendall(req.encode() + behind)
    buf = b""
    while b"\r\n\r\n" not in buf:
        b = s.recv(65536)
        if not b:
            break
        buf += b
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        status = 0
    hf = {}
    for ln in lines[1:]:
        n, _, v = ln.partition(":")
        hf[n.strip().lower()] = v.strip()
    return s, status, hf, k, rest


def frame(op, payload=b"", fin=True, mask=True, rsv=0, length=None):
    """A client frame; length: claim another length than the payload's."""
    n = len(payload) if length is None else length
    b0 = (0x80 if fin else 0) | rsv | op
    m = 0x80 if mask else 0
    if n < 126:
        h = struct.pack("!BB", b0, m | n)
    elif n < 65536:
        h = struct.pack("!BBH", b0, m | 126, n)
    else:
        h = struct.pack("!BBQ", b0, m | 127, n)
    if not mask:
        return h + payload
    mk = os.urandom(4)
    return h + mk + bytes(c ^ mk[i % 4] for i, c in enumerate(payload))


class Reader:
    """Server frames from a socket (they must come unmasked)."""

    def __init__(self, s, rest=b"", pong=False):
        self.s, self.buf, self.pong = s, rest, pong

    def need(self, n):
        while len(self.buf) < n:
            b = self.s.recv(65536)
            if not b:
                raise EOFError
            self.buf += b

    def next(self):
        """(fin, opcode, payload); EOFError at the end, timeout raised"""
        self.need(2)
        b0, b1 = self.buf[0], self.buf[1]
        if b1 & 0x80:
            raise ValueError("a masked server frame")
        n, h = b1 & 0x7F, 2
        if n == 126:
            self.need(4)
            n, h = struct.unpack("!H", self.buf[2:4])[0], 4
        elif n == 127:
            self.need(10)
            n, h = struct.unpack("!Q", self.buf[2:10])[0], 10
        self.need(h + n)
        p = self.buf[h:h + n]
        self.buf = self.buf[h + n:]
        if self.pong and b0 & 0x0F == 9:
            self.s.sendall(frame(10, p))
            return self.next()
        return bool(b0 & 0x80), b0 & 0x0F, p

    def until(self, op):
        """the payload of the next frame of opcode op (others skipped)"""
        while True:
            _, o, p = self.next()
            if o == op:
                return p


def closed_with(s, rest, code):
    """Does the server send close(code) and then close the connection?"""
    r = Reader(s, rest)
    try:
        p = r.until(8)
    except (EOFError, OSError, ValueError) as e:
        print("ms no close frame: %r" % e)
        return False
    got = struct.unpack("!H", p[:2])[0] if len(p) >= 2 else None
    if got != code:
        print("ms close code %r, want %d" % (got, code))
        return False
    try:
        while True:
            r.next()
    except EOFError:
        return True
    except OSError as e:
        print("ms after the close: %r" % e)
        return False


def http(method, path, body=None):
    s = socket.create_connection(("127.0.0.1", PORT), timeout=TMO)
    b = json.dumps(body).encode() if body is not None else b""
    auth = "Authorization: Bearer %s\r\n" % TOKEN if TOKEN else ""
    s.sendall(("%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s"
               "Content-Type: application/json\r\nContent-Length: %d\r\n"
               "Connection: close\r\n\r\n" % (method, path, PORT, auth, len(b))
               ).encode() + b)
    buf = b""
    while True:
        c = s.recv(65536)
        if not c:
            break
        buf += c
    s.close()
    head, _, body = buf.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body or b"null")


def case_handshake():
    s, st, hf, k, _ = handshake()
    say(st == 101 and hf.get("upgrade", "").lower() == "websocket" and
        hf.get("connection", "").lower() == "upgrade",
        "a valid handshake: 101, Upgrade: websocket, Connection: Upgrade")
    say(hf.get("sec-websocket-accept") == accept_of(k),
        "Sec-WebSocket-Accept is the key's SHA-1 with the GUID")
    s.close()
    s, st, _, _, _ = handshake(drop=("Authorization",))
    say(st == 401, "no token: 401 (got %d)" % st)
    s.close()
    s, st, _, _, _ = handshake({"Cookie": "ccw_token=" + TOKEN},
                               drop=("Authorization",))
    say(st == 101, "the token's cookie: 101 (got %d)" % st)
    s.close()
    s, st, _, _, _ = handshake({"Origin": "http://evil.example"})
    say(st == 403, "a foreign Origin: 403 (got %d)" % st)
    s.close()
    s, st, _, _, _ = handshake({"Origin": "http://127.0.0.1:%d" % PORT})
    say(st == 101, "our own Origin: 101 (got %d)" % st)
    s.close()
    s, st, hf, _, _ = handshake(drop=("Upgrade",))
    say(st == 426 and hf.get("upgrade") == "websocket",
        "no Upgrade: 426 naming websocket (got %d)" % st)
    s.close()
    s, st, hf, _, _ = handshake({"Connection": "keep-alive"})
    say(st == 426, "Connection without upgrade: 426 (got %d)" % st)
    s.close()
    s, st, hf, _, _ = handshake({"Sec-WebSocket-Version": "8"})
    say(st == 426 and hf.get("sec-websocket-version") == "13",
        "version 8: 426 naming 13 (got %d)" % st)
    s.close()
    for bad in ("abc", "", base64.b64encode(os.urandom(15)).decode(),
                "!" * 22 + "=="):
        s, st, _, _, _ = handshake({"Sec-WebSocket-Key": bad})
        say(st == 400, "key %r: 400 (got %d)" % (bad, st))
        s.close()
    s, st, _, _, _ = handshake(drop=("Sec-WebSocket-Key",))
    say(st == 400, "no key: 400 (got %d)" % st)
    s.close()


def case_events():
    """20 clients; a loop created: each gets its event as JSON text."""
    socks = []
    for _ in range(20):
        s, st, _, _, rest = handshake()
        if st != 101:
            say(False, "20 clients upgraded (one got %d)" % st)
            return
        socks.append(Reader(s, rest))
    say(True, "20 clients upgraded")
    st, body = http("POST", "/api/loops/v2",
                    {"title": "ws probe", "max_iterations": 2})
    lid = (body or {}).get("data", {}).get("loop_id") or \
        (body or {}).get("data", {}).get("id")
    say(st in (200, 201) and lid, "a loop created (%d, %s)" % (st, lid))
    got, shape = 0, True
    t0 = time.monotonic()
    for r in socks:
        try:
            while True:
                p = r.until(1)
                e = json.loads(p)
                if e.get("loop_id") == lid:
                    shape &= isinstance(e.get("type"), str) and \
                        "timestamp" in e and list(e)[0] == "type"
                    got += 1
                    break
        except (EOFError, OSError, ValueError) as ex:
            print("ms a client: %r" % ex)
    print("ms the loop's event at 20 clients in %d ms" %
          ((time.monotonic() - t0) * 1000))
    say(got == 20, "each of 20 clients got the loop's event (%d)" % got)
    say(shape, "an event is {type first, the fields, timestamp} as text")
    for r in socks:
        r.s.sendall(frame(8, struct.pack("!H", 1000)))
        r.s.close()


def fresh():
    s, st, _, _, rest = handshake()
    assert st == 101, st
    return s, rest


def case_protocol(maxmsg):
    s, rest = fresh()
    r = Reader(s, rest)
    s.sendall(frame(9, b"hi"))
    try:
        p = r.until(10)
    except (EOFError, OSError) as e:
        p = repr(e)
    say(p == b"hi", "a ping gets a pong with its payload")
    # fragments: "he" + ping between + "llo"; still open, pong on time
    s.sendall(frame(1, b"he", fin=False) + frame(9, b"mid") +
              frame(0, b"llo"))
    try:
        p = r.until(10)
    except (EOFError, OSError) as e:
        p = repr(e)
    say(p == b"mid", "a ping between fragments is answered, the message read")
    # a flood: many small frames in one go, then a ping: still answered
    n = 20000
    s.sendall(b"".join(frame(1, b'{"x":1}') for _ in range(n)) +
              frame(9, b"end"))
    t0 = time.monotonic()
    try:
        p = r.until(10)
    except (EOFError, OSError) as e:
        p = repr(e)
    print("ms %d frames flooded, then a pong in %d ms" %
          (n, (time.monotonic() - t0) * 1000))
    say(p == b"end", "after a flood of %d frames a ping is still answered" % n)
    s.sendall(frame(8, struct.pack("!H", 1000) + b"bye"))
    say(closed_with(s, r.buf, 1000),
        "the close handshake: close 1000 echoed, then the connection closed")
    s.close()
    # a frame in the same write as the handshake is read after the 101
    s, st, _, _, rest = handshake(behind=frame(9, b"early"))
    try:
        p = Reader(s, rest).until(10)
    except (EOFError, OSError) as e:
        p = repr(e)
    say(st == 101 and p == b"early",
        "a ping sent with the handshake is answered after the 101")
    s.close()

    cases = [
        ("an unmasked frame", frame(1, b"x", mask=False), 1002),
        ("a reserved bit", frame(1, b"x", rsv=0x40), 1002),
        ("an unknown opcode", frame(3, b"x"), 1002),
        ("a fragmented ping", frame(9, b"x", fin=False), 1002),
        ("a ping over 125 bytes", frame(9, b"x" * 126), 1002),
        ("a continuation of nothing", frame(0, b"x"), 1002),
        ("a new message inside another",
         frame(1, b"a", fin=False) + frame(1, b"b"), 1002),
        ("text not UTF-8", frame(1, b"\xc0\xaf"), 1007),
        ("a close with code 1005", frame(8, struct.pack("!H", 1005)), 1002),
        ("a close of one byte", frame(8, b"\x03"), 1002),
        ("garbage", bytes([0x7F, 0xFF]) + os.urandom(64), 1002),
        ("a frame over %d bytes (its header alone)" % maxmsg,
         frame(2, b"", length=maxmsg + 1)[:10], 1009),
        ("a message over %d bytes in fragments" % maxmsg,
         frame(2, b"x" * (maxmsg // 2 + 1), fin=False) +
         frame(0, b"x" * (maxmsg // 2 + 1)), 1009),
    ]
    for desc, data, code in cases:
        s, rest = fresh()
        s.sendall(data)
        say(closed_with(s, rest, code), "%s: closed %d" % (desc, code))
        s.close()
    # a client that leaves without a word: the server is not bothered
    s, rest = fresh()
    s.close()
    s, rest = fresh()
    s.sendall(frame(9, b"again"))
    say(Reader(s, rest).until(10) == b"again",
        "after a client vanished mid-stream others are served")
    s.close()


def stats():
    return http("GET", "/stats")[1]


def wait_stats(key, want, sec=30):
    end = time.monotonic() + sec
    while True:
        st = stats()
        if st[key] == want or time.monotonic() > end:
            return st
        time.sleep(0.02)


def case_slow():
    """A reader that stalls is dropped; one that reads gets every event."""
    a, ra = fresh()
    ra = Reader(a, ra, pong=True)
    b = handshake(rcvbuf=4096)[0]
    wait_stats("ws_clients", 2, 10)
    fill = "y" * 4000
    sent = 0
    end = time.monotonic() + TMO
    while stats()["ws_clients"] == 2 and time.monotonic() < end:
        batch = [{"type": "LOOP_LOG_ENTRY", "loop_id": "L", "n": sent + i,
                  "line": fill} for i in range(8)]
        http("POST", "/publish", batch)
        sent += 8
        # the reader reads what came so far
        while True:
            _, o, p = ra.next()
            if o == 1 and json.loads(p).get("n") == sent - 1:
                break
    st = stats()
    print("ms the stalled reader dropped after %d events of 4 KB" % sent)
    say(st["ws_clients"] == 1 and st["ws_dropped"] >= 1,
        "a reader that never reads is dropped (%d left, %d dropped)" %
        (st["ws_clients"], st["ws_dropped"]))
    a.sendall(frame(9, b"alive"))
    say(ra.until(10) == b"alive", "the reading client is still served")
    a.close()
    b.close()


def case_silent(ping_ms):
    """A client that never answers a ping is dropped after two."""
    s, _, _, _, rest = handshake()
    r = Reader(s, rest)
    pings = 0
    t0 = time.monotonic()
    try:
        while True:
            _, o, _ = r.next()
            pings += o == 9
    except (EOFError, OSError):
        pass
    el = (time.monotonic() - t0) * 1000
    print("ms a silent client dropped after %d ms, %d pings" % (el, pings))
    say(pings >= 1 and el >= ping_ms,
        "a silent client is pinged, then dropped (%d pings)" % pings)
    s.close()
    # one that answers stays
    s, rest = fresh()
    r = Reader(s, rest)
    for _ in range(3):
        _, o, p = r.next()
        while o != 9:
            _, o, p = r.next()
        s.sendall(frame(10, p))
    say(stats()["ws_clients"] == 1, "a client answering pings stays")
    s.sendall(frame(8, struct.pack("!H", 1000)))
    say(closed_with(s, r.buf, 1000), "and leaves with the close handshake")
    s.close()


def case_hold():
    """Held open until the server stops: it says going away (1001)."""
    s, rest = fresh()
    print("ms ready", flush=True)
    s.settimeout(None)
    say(closed_with(s, rest, 1001), "a server stopping closes with 1001")


TOKEN = ""
CASES = {"handshake": case_handshake, "events": case_events,
         "protocol": case_protocol, "hold": case_hold, "slow": case_slow,
         "silent": case_silent}
if __name__ == "__main__":
    TOKEN = os.environ.get("WS_TOKEN", "")
    if sys.argv[2] not in CASES:
        sys.exit("unknown case " + sys.argv[2])
    CASES[sys.argv[2]](*map(int, sys.argv[3:]))
