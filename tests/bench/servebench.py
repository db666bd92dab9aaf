#!/usr/bin/env python3
# servebench.py: the serve figure of `make bench` (tests/bench/run.sh).
# `serve SUP FAKE ROOT N J` hosts N loops of fake agents in one serve, J
# started at a time, and measures throughput, the lag from a state change
# (its updated_at) to its SSE event, and serve's peak RSS; `run SUP FAKE ROOT
# N J` drives the same N loops as N `run` processes, J at a time.  One JSON
# object on stdout.
import concurrent.futures
import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time
from datetime import datetime

STARTERS = 16   # start requests in flight at once


def peak_kib(pid):
    """VmHWM of a live process in KiB, or 0."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def iso_s(s):
    """Seconds since the epoch of CCW's 2026-01-22T10:00:00.000Z."""
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=__import__("datetime").timezone.utc).timestamp()


def p99(v):
    if not v:
        return None
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * 0.99))]


def listen_port(proc):
    """The port a serve started with stdout=PIPE says it listens on (its
    first lines, 20 s at most); RuntimeError when it does not."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < 20:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(r"listening on http:.*:(\d+)$", line.strip())
        if m:
            return int(m.group(1))
    raise RuntimeError("serve did not listen")


class Serve:
    """One serve on a free loopback port, its token, its event stream."""

    def __init__(self, sup, root, jobs):
        self.proc = subprocess.Popen(
            [sup, "serve", "-C", root, "--http", "127.0.0.1:0",
             "--jobs", str(jobs)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.port = listen_port(self.proc)
        self.token = self.call("GET", "/api/auth/token")["token"]
        self.lags = []
        self.done = set()
        self.cv = threading.Condition()
        threading.Thread(target=self.events, daemon=True).start()

    def call(self, method, path, body=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        h = {"Content-Type": "application/json"}
        if getattr(self, "token", None):
            h["Authorization"] = "Bearer " + self.token
        c.request(method, path, json.dumps(body) if body is not None
                  else None, h)
        r = c.getresponse()
        d = json.loads(r.read() or b"{}")
        c.close()
        if r.status != 200:
            raise RuntimeError("%s %s: %d %s" % (method, path, r.status, d))
        return d

    def events(self):
        """Every LOOP_STATE_UPDATE's lag; LOOP_COMPLETED wakes the driver."""
        c = http.client.HTTPConnection("127.0.0.1", self.port)
        c.request("GET", "/api/events",
                  headers={"Authorization": "Bearer " + self.token})
        r = c.getresponse()
        for raw in r:
            line = raw.decode().rstrip("\n")
            if not line.startswith("data: "):
                continue
            now = time.time()
            ev = json.loads(line[6:])
            t = ev.get("type")
            if t == "LOOP_STATE_UPDATE" and ev.get("updated_at"):
                self.lags.append((now - iso_s(ev["updated_at"])) * 1000)
            elif t == "LOOP_COMPLETED":
                with self.cv:
                    self.done.add(ev["loop_id"])
                    self.cv.notify_all()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def bench_serve(sup, root, n, j):
    """Starts go out STARTERS at a time, as `run` processes are started
    without waiting for the one before to run: a start's reply waits
    for the loop's open (its created -> running commit), and one start
    at a time made the driver, not serve, what was measured."""
    s = Serve(sup, root, j)
    ids = [s.call("POST", "/api/loops/v2", {"title": "bench %d" % i})
           ["data"]["loop_id"] for i in range(n)]
    pool = concurrent.futures.ThreadPoolExecutor(STARTERS)
    starts = []
    t0 = time.monotonic()
    started = 0
    while True:
        with s.cv:
            ended = len(s.done)
            if ended == n:
                break
            # the lock is not held across a request: the event reader
            # takes it for every end it sees
            if started == n or started - ended >= j:
                if not s.cv.wait(60):
                    raise RuntimeError("no loop ended in 60 s (%d of %d)"
                                       % (len(s.done), n))
                continue
        starts.append(pool.submit(s.call, "POST",
                                  "/api/loops/v2/%s/start" % ids[started]))
        started += 1
    secs = time.monotonic() - t0
    pool.shutdown()
    for f in starts:
        f.result()
    rss = peak_kib(s.proc.pid)
    s.stop()
    return {"seconds": secs, "loops_per_s": n / secs, "rss_kib": rss,
            "lag_p99_ms": p99(s.lags), "lag_n": len(s.lags)}


def bench_run(sup, root, n, j):
    t0 = time.monotonic()
    live, i, failed = [], 0, 0
    while i < n or live:
        while i < n and len(live) < j:
            live.append(subprocess.Popen(
                [sup, "run", "-C", root, "bench %d" % i],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL))
            i += 1
        pid, st = os.wait()
        for p in live:
            if p.pid == pid:
                p.returncode = os.waitstatus_to_exitcode(st)
                failed += p.returncode != 0
                live.remove(p)
                break
    secs = time.monotonic() - t0
    return {"seconds": secs, "loops_per_s": n / secs, "failed": failed}


def configure(root, fake):
    """ROOT/.loop/config.json: every role a fake agent that succeeds at
    once, validate saying all is good: a loop is init, develop, validate,
    complete."""
    ok = "exec '%s' result success " % fake
    roles = {"init": ok + "init", "develop": ok + "dev", "debug": ok + "dbg",
             "validate": ok + "'all good'", "complete": ok + "done"}
    os.makedirs(root + "/.loop", exist_ok=True)
    with open(root + "/.loop/config.json", "w") as f:
        json.dump({"default_tool": "bash", "roles": {
            k: {"command": v} for k, v in roles.items()}}, f)


def main(argv):
    if len(argv) != 7 or argv[1] not in ("serve", "run"):
        print("usage: servebench.py serve|run SUP FAKE ROOT N J",
              file=sys.stderr)
        return 2
    what, sup, fake, root = argv[1:5]
    n, j = int(argv[5]), int(argv[6])
    configure(root, fake)
    fn = {"serve": bench_serve, "run": bench_run}[what]
    print(json.dumps(fn(sup, root, n, j)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
