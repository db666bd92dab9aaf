#!/usr/bin/env python3
"""server.py: the scripted stand-in model API for the e2e suite.

One ThreadingHTTPServer on 127.0.0.1 (port 0, written to --port-file once
listening).  Every prov_*.py next to this file is a provider module (the
wire format of one API); the first whose match(method, path) is true owns
the request.  scenario.py decides what the model "says"; faults (--fault)
replace the answer for the first N provider requests.  One JSON line per
request goes to --log.  SIGTERM ends it cleanly, releasing stalled sockets.
"""
import argparse
import glob
import importlib.util
import json
import os
import signal
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scenario  # noqa: E402


def load_providers():
    """Import every prov_*.py of this folder, sorted by name, so adding a
    provider is adding a file."""
    mods = []
    for path in sorted(glob.glob(os.path.join(HERE, "prov_*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except Exception as e:  # a broken provider must not take the others down
            sys.stderr.write("server.py: cannot load %s: %s\n" % (name, e))
            continue
        mods.append((name[len("prov_"):], mod))
    return mods


class Req:
    """What a provider sees of one request, plus the writers it answers
    with.  Writes after the client went away are swallowed."""

    def __init__(self, handler, method, body_bytes):
        self.h = handler
        self.method = method
        u = urllib.parse.urlsplit(handler.path)
        self.path = u.path
        self.query = {k: v[-1] for k, v in urllib.parse.parse_qs(u.query).items()}
        self.headers = handler.headers
        self.raw = body_bytes
        try:
            self.body = json.loads(body_bytes) if body_bytes else None
        except ValueError:
            self.body = None
        self.sse_open = False

    def _write(self, data):
        try:
            self.h.wfile.write(data)
            self.h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass

    def send_json(self, status, obj, headers=None):
        data = json.dumps(obj).encode()
        try:
            self.h.send_response(status)
            self.h.send_header("content-type", "application/json")
            self.h.send_header("content-length", str(len(data)))
            for k, v in (headers or {}).items():
                self.h.send_header(k, str(v))
            self.h.end_headers()
        except OSError:
            return
        self._write(data)

    def start_sse(self, status=200, headers=None):
        # No content-length and no chunking: the body ends when the
        # connection closes (end()), which every client accepts.
        try:
            self.h.send_response(status)
            self.h.send_header("content-type", "text/event-stream")
            self.h.send_header("cache-control", "no-cache")
            self.h.send_header("connection", "close")
            for k, v in (headers or {}).items():
                self.h.send_header(k, str(v))
            self.h.end_headers()
        except OSError:
            return
        self.h.close_connection = True
        self.sse_open = True

    def sse(self, data, event=None):
        if not isinstance(data, str):
            data = json.dumps(data)
        out = ""
        if event:
            out += "event: %s\n" % event
        out += "data: %s\n\n" % data
        self._write(out.encode())

    def end(self):
        self.h.close_connection = True
        try:
            self.h.wfile.flush()
        except OSError:
            pass


class State:
    """Everything the handler threads share: options, providers, the fault
    budget and the log file, behind one lock."""

    def __init__(self, args):
        self.args = args
        self.providers = load_providers()
        self.scenario = scenario.Scenario(args.script)
        self.lock = threading.Lock()
        self.faults_left = args.fault_count
        self.log = open(args.log, "a", buffering=1) if args.log else None
        self.stop = threading.Event()

    def take_fault(self):
        with self.lock:
            if self.args.fault == "none":
                return "none"
            if self.faults_left is None:
                return self.args.fault
            if self.faults_left > 0:
                self.faults_left -= 1
                return self.args.fault
            return "none"

    def retry_after(self):
        """The Retry-After seconds a 429 carries (--retry-after; "none":
        no header at all)."""
        ra = self.args.retry_after
        return None if ra == "none" else int(ra)

    def write_log(self, rec):
        if not self.log:
            return
        with self.lock:
            self.log.write(json.dumps(rec) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ccw-mockapi/1"

    def log_message(self, fmt, *a):  # keep stderr quiet; --log has the record
        pass

    def _body(self):
        n = int(self.headers.get("content-length") or 0)
        data = self.rfile.read(n) if n > 0 else b""
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            data = self._read_chunked()
        return data

    def _read_chunked(self):
        out = b""
        while True:
            line = self.rfile.readline()
            if not line:
                break
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                break
            out += self.rfile.read(size)
            self.rfile.readline()
        return out

    def _handle(self):
        st = self.server.state
        req = Req(self, self.command, self._body())
        prov = None
        for name, mod in st.providers:
            try:
                if mod.match(req.method, req.path):
                    prov = (name, mod)
                    break
            except Exception:
                continue
        rec = {"provider": prov[0] if prov else None, "method": req.method,
               "path": req.path, "role": None, "decision": None}
        if prov is None:
            rec["decision"] = "404"
            st.write_log(rec)
            req.send_json(404, {"error": {"message": "no stand-in for %s %s" % (req.method, req.path)}})
            return
        name, mod = prov
        try:
            convo = mod.conversation(req.body) if req.body is not None else []
            tools = bool(mod.has_tools(req.body)) if req.body is not None else False
        except Exception as e:
            convo, tools = [], False
            rec["parse_error"] = str(e)
        rec["role"] = scenario.role_of(convo)
        # the conversation's turns and its last user text: a resumed
        # session carries the earlier ones (the queue of questions' test)
        rec["turns"] = [k for k, _ in convo]
        users = [t for k, t in convo if k == "user"]
        rec["last_user"] = (users[-1] or "")[:4000] if users else None
        if hasattr(mod, "tool_names") and req.body is not None:
            try:
                rec["tools"] = sorted(mod.tool_names(req.body))
            except Exception:
                pass
        fault = st.take_fault()
        if fault in ("http500", "http503", "http529", "http429", "http401"):
            status = int(fault[4:])
            msg = {500: "mock internal server error",
                   503: "mock service unavailable: overloaded",
                   529: "Overloaded",
                   429: "mock rate limit exceeded, retry later",
                   401: "mock invalid API key (401 Unauthorized)"}[status]
            rec["decision"] = fault
            st.write_log(rec)
            mod.error(req, status, msg, st.retry_after() if status == 429 else None)
            return
        if fault == "quota":
            # HTTP 429 the way each provider says "out of quota" (billing
            # or a plan's usage limit), not a short-term rate limit.
            rec["decision"] = fault
            st.write_log(rec)
            mod.error(req, 429, None, st.retry_after(), quota=True)
            return
        if fault == "stall":
            rec["decision"] = "stall"
            st.write_log(rec)
            # Hold the socket open with no answer until shutdown.
            st.stop.wait()
            self.close_connection = True
            return
        if fault == "badmodel":
            rec["decision"] = "badmodel"
            st.write_log(rec)
            mod.error(req, 404, "The model `%s` does not exist or you do not have access to it."
                      % ((req.body or {}).get("model") or "mock-model"), None)
            return
        turn = st.scenario.decide(convo, tools)
        rec["decision"] = turn
        st.write_log(rec)
        try:
            mod.reply(req, turn)
        except (BrokenPipeError, ConnectionResetError):
            pass
        req.end()

    def do_POST(self):
        self._handle()

    def do_GET(self):
        self._handle()

    def do_PUT(self):
        self._handle()

    def do_DELETE(self):
        self._handle()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    ap.add_argument("--fault", default="none",
                    choices=["none", "http500", "http503", "http529", "http429",
                             "http401", "stall", "badmodel", "quota"])
    ap.add_argument("--fault-count", type=int, default=None)
    ap.add_argument("--retry-after", default="1",
                    help="seconds in a 429's Retry-After (and retryDelay); none: omit it")
    ap.add_argument("--script")
    args = ap.parse_args()

    st = State(args)
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.state = st

    def on_term(signum, frame):
        st.stop.set()
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, args.port_file)
    try:
        srv.serve_forever(poll_interval=0.2)
    finally:
        st.stop.set()
        srv.server_close()


if __name__ == "__main__":
    main()
