#!/usr/bin/env python3
# flood-probe.py: many idle clients at once, for serve-emfile.sh and
# sock-flood.sh; each mode prints "held N" once its N connections are open,
# then holds them until its stdin ends, closes them and exits:
#   flood-probe.py tcp PORT N         N TCP connections to 127.0.0.1:PORT,
#                                     sending nothing
#   flood-probe.py unix PATH N [MS]   N connections to the control socket:
#                                     the even ones silent, the odd ones
#                                     half a REQUEST frame (its header and
#                                     3 of its 9 body bytes); with MS,
#                                     instead of waiting for stdin, waits
#                                     up to MS for the server to close them
#                                     and prints "closed K" (how many it did)
#   flood-probe.py health PORT MS     GET /health every 50 ms (each given
#                                     1 s) until one is answered 200:
#                                     prints "200", or "none" after MS
import http.client, selectors, socket, struct, sys, time

cmd, where, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
socks = []
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
        s = socket.create_connection(("127.0.0.1", int(where)), timeout=10)
        socks.append(s)
elif cmd == "unix":
    # a REQUEST (11) header announcing a 9-byte body, then 3 of its bytes
    half = b"CW\x02\x00" + struct.pack(">HI", 11, 9) + b"\x81\xa4b"
    for i in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(where)
        if i % 2:
            s.sendall(half)
        socks.append(s)
else:
    sys.exit("usage: flood-probe.py tcp PORT N | unix PATH N [MS]")
print("held %d" % len(socks), flush=True)
if cmd == "unix" and len(sys.argv) > 4:
    sel = selectors.DefaultSelector()
    for s in socks:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    closed, end = 0, time.time() + int(sys.argv[4]) / 1000
    while closed < len(socks) and time.time() < end:
        for key, _ in sel.select(0.1):
            try:
                d = key.fileobj.recv(4096)
            except OSError:
                d = b""
            if not d:
                sel.unregister(key.fileobj)
                closed += 1
    print("closed %d" % closed, flush=True)
else:
    sys.stdin.read()
for s in socks:
    s.close()
