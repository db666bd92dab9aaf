#!/usr/bin/env python3
# sock-probe.py: raw clients of the control socket for tests/regress/sock-*.sh,
# speaking proto/ frames by hand (no msgpack module needed):
#   sock-probe.py request PATH JSON   one REQUEST frame, then print what
#                                     happened: "reply" (a frame came back),
#                                     "closed" (EOF, nothing), "refused: ERR"
#   sock-probe.py raw PATH HEX        send the bytes, print "closed" when the
#                                     server closes within 10 s, else "open"
#   sock-probe.py stall PATH          subscribe, print "sent", never read
#                                     (until killed)
import json, socket, struct, sys, time


def pack(v):
    if isinstance(v, bool):
        return b"\xc3" if v else b"\xc2"
    if isinstance(v, int):
        if 0 <= v < 128:
            return bytes([v])
        return b"\xcf" + struct.pack(">Q", v)
    if isinstance(v, str):
        b = v.encode()
        return (bytes([0xa0 | len(b)]) if len(b) < 32 else
                b"\xda" + struct.pack(">H", len(b))) + b
    if isinstance(v, list):
        return bytes([0x90 | len(v)]) + b"".join(pack(x) for x in v)
    if isinstance(v, dict):
        return bytes([0x80 | len(v)]) + b"".join(
            pack(k) + pack(x) for k, x in v.items())
    raise TypeError(v)


def frame(mtype, body):
    b = pack(body)
    return b"CW\x02\x00" + struct.pack(">HI", mtype, len(b)) + b


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def until_closed(s, secs):
    s.settimeout(0.05)
    end, got = time.time() + secs, b""
    while time.time() < end:
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            return got, True
        if not d:
            return got, True
        got += d
        if len(got) >= 10:
            return got, False
    return got, False


cmd, path = sys.argv[1], sys.argv[2]
if cmd == "request":
    try:
        s = connect(path)
    except OSError as e:
        print("refused: %s" % e.strerror)
        sys.exit(0)
    try:
        s.sendall(frame(11, {"body": json.loads(sys.argv[3])}))
    except OSError:
        pass
    got, closed = until_closed(s, 10)
    print("reply" if got else "closed" if closed else "open")
elif cmd == "raw":
    s = connect(path)
    try:
        s.sendall(bytes.fromhex(sys.argv[3]))
    except OSError:
        pass
    got, closed = until_closed(s, 10)
    print("closed" if closed else "open")
elif cmd == "stall":
    s = connect(path)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(frame(11, {"body": {"id": 1, "verb": "subscribe"}}))
    print("sent", flush=True)
    while True:
        time.sleep(1)
