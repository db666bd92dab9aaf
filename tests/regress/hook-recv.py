#!/usr/bin/env python3
# hook-recv.py DIR [SECRET_FILE]: notify-webhook.sh's webhook receiver on
# loopback.  It writes its port to DIR/port, verifies X-CCW-Signature
# itself (hmac, hashlib) and appends one JSON line per request to
# DIR/log.jsonl before it answers.  The path says how to answer, counted
# per X-CCW-Delivery: /ok; /fail/N (500 to the first N tries); /status/C
# (always C); /hang/N (no answer to the first N, until the client goes);
# /r429/N (429 with Retry-After: 1 to the first N).
import hashlib
import hmac
import json
import os
import select
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR = sys.argv[1]
SECRET = None
if len(sys.argv) > 2:
    with open(sys.argv[2], "rb") as f:
        SECRET = f.read()
    if SECRET.endswith(b"\n"):
        SECRET = SECRET[:-1]
LOCK = threading.Lock()
TRIES = {}


class Hook(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        did = self.headers.get("X-CCW-Delivery", "")
        sig = self.headers.get("X-CCW-Signature")
        sig_ok = None
        if sig is not None and SECRET is not None:
            want = "sha256=" + hmac.new(SECRET, body,
                                        hashlib.sha256).hexdigest()
            sig_ok = hmac.compare_digest(sig, want)
        with LOCK:
            TRIES[did] = TRIES.get(did, 0) + 1
            tries = TRIES[did]
            rec = {"path": self.path, "delivery": did, "try": tries,
                   "sig": sig, "sig_ok": sig_ok,
                   "ua": self.headers.get("User-Agent"),
                   "ct": self.headers.get("Content-Type"),
                   "body": body.decode("utf-8", "replace"),
                   "at_ms": int(time.time() * 1000)}
            with open(os.path.join(DIR, "log.jsonl"), "a") as f:
                f.write(json.dumps(rec) + "\n")
        parts = self.path.strip("/").split("/")
        k = int(parts[1]) if len(parts) > 1 else 0
        if parts[0] == "hang" and tries <= k:
            self.hang()
            return
        code, extra = 200, {}
        if parts[0] == "fail" and tries <= k:
            code = 500
        elif parts[0] == "status":
            code = k
        elif parts[0] == "r429" and tries <= k:
            code, extra = 429, {"Retry-After": "1"}
        self.answer(code, extra)

    def answer(self, code, extra):
        data = (b"receiver says %d " % code) + b"x" * 1000
        self.send_response(code)
        for name, value in extra.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def hang(self):
        """No answer: wait for the client to close (30 s at most)."""
        self.close_connection = True
        end = time.time() + 30
        while time.time() < end:
            r, _, _ = select.select([self.connection], [], [], 0.2)
            if r and not self.connection.recv(1024):
                return


srv = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
srv.daemon_threads = True
with open(os.path.join(DIR, "port.tmp"), "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
srv.serve_forever()
