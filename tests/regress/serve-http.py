#!/usr/bin/env python3
# serve-http.py PORT METHOD PATH [BODY] [-t TOKEN] [-s FILE]: one request to
# `ccw-supervisor serve` for the serve-*.sh tests (python3's http.client,
# nothing to install).  Prints one JSON line: {"status", "allow", "body"}
# (body parsed when it is JSON, else the text).  -s FILE: a stream
# (/api/events): every line appended to FILE as it comes, until closed.
import http.client
import json
import sys

args = sys.argv[1:]
token = stream = None
while "-t" in args or "-s" in args:
    for flag in ("-t", "-s"):
        if flag in args:
            i = args.index(flag)
            val = args[i + 1]
            del args[i:i + 2]
            if flag == "-t":
                token = val
            else:
                stream = val
port, method, path = int(args[0]), args[1], args[2]
body = args[3] if len(args) > 3 else None
hdr = {}
if token:
    hdr["Authorization"] = "Bearer " + token
if body is not None:
    hdr["Content-Type"] = "application/json"
c = http.client.HTTPConnection("127.0.0.1", port, timeout=None if stream else 30)
c.request(method, path, body=body, headers=hdr)
r = c.getresponse()
if stream:
    with open(stream, "a") as f:
        while True:
            line = r.fp.readline()
            if not line:
                break
            f.write(line.decode("utf-8", "replace"))
            f.flush()
    sys.exit(0)
raw = r.read().decode("utf-8", "replace")
try:
    parsed = json.loads(raw)
except ValueError:
    parsed = raw
print(json.dumps({"status": r.status, "allow": r.getheader("Allow"),
                  "type": r.getheader("Content-Type"), "body": parsed}))
