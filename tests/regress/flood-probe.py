#!/usr/bin/env python3
# flood-probe.py: many clients at once, for serve-emfile.sh and
# sock-flood.sh.  The holding modes print "held N" once their N
# connections are open, hold them until stdin ends, close them and exit:
#   flood-probe.py tcp PORT N         N TCP connections to 127.0.0.1:PORT,
#                                     sending nothing
#   flood-probe.py unix PATH N [MS]   N connections to the control socket:
#                                     the even ones silent, the odd ones
#                                     half a REQUEST frame (its header and
#                                     3 of its 9 body bytes); with MS,
#                                     instead of waiting for stdin, waits
#                                     up to MS for the server to close them
#                                     and prints "closed K silent MIN MAX
#                                     half MIN MAX" (how many it closed, and
#                                     when: ms after each one's connect
#                                     began)
#   flood-probe.py sub PATH N         N subscribers (a whole subscribe
#                                     REQUEST each, replies not read)
#   flood-probe.py health PORT MS     GET /health every 50 ms (each given
#                                     1 s) until one is answered 200:
#                                     prints "200", or "none" after MS
# A connection the server closes at once is held all the same.
import http.client, selectors, socket, struct, sys, time


def frame(body):
    return b"CW\x02\x00" + struct.pack(">HI", 11, len(body)) + body


# a REQUEST whose header announces 9 body bytes, 3 of them sent
HALF = b"CW\x02\x00" + struct.pack(">HI", 11, 9) + b"\x81\xa4b"
# {"body": {"verb": "subscribe"}} in msgpack
SUB = frame(b"\x81\xa4body\x81\xa4verb\xa9subscribe")

cmd, where, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
socks, born = [], []
if cmd == "health":
    end = time.time() + n / 1000
    while time.time() < end:
        try:
            c = http.client.HTTPConnection("127.0.0.1", int(where), timeout=1)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                print("200")
                sys.exit(0)
        except OSError:
            pass
        time.sleep(0.05)
    print("none")
    sys.exit(0)
elif cmd == "tcp":
    for _ in range(n):
        socks.append(socket.create_connection(("127.0.0.1", int(where)),
                                              timeout=10))
elif cmd in ("unix", "sub"):
    for i in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # before connect: serve may accept before connect() returns here
        born.append(time.monotonic())
        s.connect(where)
        try:
            if cmd == "sub":
                s.sendall(SUB)
            elif i % 2:
                s.sendall(HALF)
        except OSError:
            pass
        socks.append(s)
else:
    sys.exit("usage: flood-probe.py tcp PORT N | unix PATH N [MS] | "
             "sub PATH N | health PORT MS")
print("held %d" % len(socks), flush=True)
if cmd == "unix" and len(sys.argv) > 4:
    sel = selectors.DefaultSelector()
    for i, s in enumerate(socks):
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, i)
    when = {}
    end = time.monotonic() + int(sys.argv[4]) / 1000
    while len(when) < len(socks) and time.monotonic() < end:
        for key, _ in sel.select(0.05):
            try:
                d = key.fileobj.recv(4096)
            except OSError:
                d = b""
            if not d:
                sel.unregister(key.fileobj)
                when[key.data] = time.monotonic() - born[key.data]
    ms = {k: [int(v * 1000) for i, v in when.items() if i % 2 == k]
          for k in (0, 1)}
    print("closed %d silent %d %d half %d %d" % (
        len(when), min(ms[0], default=-1), max(ms[0], default=-1),
        min(ms[1], default=-1), max(ms[1], default=-1)), flush=True)
else:
    sys.stdin.read()
for s in socks:
    s.close()
