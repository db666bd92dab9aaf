#!/usr/bin/env python3
# soak.py: the soak figure of `make bench` (tests/bench/run.sh).
# `soak.py SUP FAKE ROOT MARKER SECONDS [SAMPLES.json]` runs one serve under
# churn for SECONDS (loops created, started, paused, resumed, stopped and
# deleted; crashing and retried roles, tools leaving setsid grandchildren,
# workers SIGKILLed; agents spawned and closed; SSE readers, socket clients
# and dropped connections coming and going), samples serve every few
# seconds, and prints run.sh's rows, tab-separated, on stdout; every
# sample goes to SAMPLES.json.  `soak.py --rows` names the rows it prints;
# `soak.py --report SAMPLES.json` prints them again from a saved run.
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time

import servebench

TICK_S = 0.1
LOOPS_AT_ONCE = 4
AGENTS_AT_ONCE = 2
SSE_AT_ONCE = 2
KIB = 1024.0
SILENT_AT_ONCE = 16
# what must stay flat after the warm-up: (row, unit, key, scale, bound in
# the unit): the median of the last third of the samples may pass that
# of the first third by the bound at most.  Medians, not single samples
# nor maxima: the instantaneous counts jump with the work in flight (a
# cgroup between its worker's exit and its rmdir, a loop between two
# steps), while what piles up moves the whole third.  cgroups and
# processes are those no live worker holds: they follow the live
# workers, and what outlives one is what is counted.
FLAT = [
    ("serve RSS", "MiB", "rss_kib", 1 / KIB, 1.0),
    ("largest worker's RSS", "MiB", "worker_rss_kib", 1 / KIB, 0.5),
    ("serve fds", "fds", "fds", 1, 8),
    ("serve threads", "threads", "threads", 1, 2),
    ("zombies (serve's children in Z)", "processes", "zombies", 1, 1),
    ("cgroups holding no live worker", "cgroups", "cg_idle", 1, 2),
    ("processes not a live worker's", "processes", "leftover", 1, 2),
    ("state bytes", "KiB", "state_bytes", 1 / KIB, 16),
]
RSS_TARGET = 1.0    # MiB per hour, serve's RSS after the warm-up
# the agents' files a workers directory keeps (serve's own agents: about
# one a second here), instead of 256 (retire.c's RETIRE_LOGS_KEEP): the
# bound is reached within the warm-up, so that the state bytes show it
# holding rather than the directory filling up to it
LOGS_KEEP = "64"


SLOPE = "soak: serve RSS slope after warm-up"
LEFT = "  processes left after serve stops"
CG_LEFT = "  cgroups left after serve stops"


def row_names():
    """Every row this figure prints, in order (`soak.py --rows`)."""
    return [SLOPE] + ["  " + f[0] for f in FLAT] + [LEFT, CG_LEFT]


def log(msg):
    print("bench: soak: " + msg, file=sys.stderr, flush=True)


def config(root, fake, marker):
    """Roles that succeed, crash, fail validation at random, or leave a
    setsid grandchild behind; retries quick, grace short."""
    f = "exec '%s' --marker %s " % (fake, marker)
    dev = ("case $((RANDOM %% 8)) in 0) %scrash;; 1) %sexit 3;; "
           "2) %sfork-grandchild sleep 300 result success dev;; "
           "*) %ssleep $((RANDOM %% 1500)) result success dev;; esac"
           % (f, f, f, f))
    val = ("if [ $((RANDOM %% 3)) = 0 ]; then %sresult success 'tests fail'; "
           "else %ssleep 200 result success 'all good'; fi" % (f, f))
    roles = {"init": f + "result success init", "develop": dev,
             "debug": f + "sleep 300 result success dbg", "validate": val,
             "complete": f + "result success done"}
    extra = {"grace_ms": 300, "retry": {
        "attempts": 3, "initial_interval_ms": 100,
        "maximum_interval_ms": 400}}
    os.makedirs(root + "/.loop", exist_ok=True)
    with open(root + "/.loop/config.json", "w") as fp:
        json.dump({"default_tool": "bash", "roles": {
            k: dict(command=v, **extra) for k, v in roles.items()}}, fp)


class Serve:
    """One serve with a control socket and a loopback port."""

    def __init__(self, sup, root, sock):
        self.sock = sock
        self.proc = subprocess.Popen(
            [sup, "serve", "-C", root, "--http", "127.0.0.1:0",
             "--socket", sock],
            env=dict(os.environ, CCW_WORKER_LOGS_KEEP=os.environ.get(
                "CCW_WORKER_LOGS_KEEP", LOGS_KEEP)),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.port = servebench.listen_port(self.proc)
        threading.Thread(target=self.drain, daemon=True).start()
        self.token = None
        self.token = self.call("GET", "/api/auth/token")[1]["token"]

    def drain(self):
        for _ in self.proc.stdout:
            pass

    def call(self, method, path, body=None, timeout=15):
        c = http.client.HTTPConnection("127.0.0.1", self.port,
                                       timeout=timeout)
        h = {"Content-Type": "application/json"}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        try:
            c.request(method, path, json.dumps(body) if body is not None
                      else None, h)
            r = c.getresponse()
            d = r.read()
            try:
                d = json.loads(d or b"{}")
            except ValueError:
                d = {}
            return r.status, d
        finally:
            c.close()


class Churn:
    """What comes and goes: loops, agents, readers, clients."""

    def __init__(self, srv):
        self.srv = srv
        self.loops = {}          # id -> status we last saw or set
        self.agents = []
        self.readers = []
        self.silent = []         # connections that never say goodbye
        self.n = {k: 0 for k in ("loops", "paused", "stopped", "deleted",
                                 "completed", "failed", "agents", "sse",
                                 "sock", "dropped", "silent",
                                 "silent_dropped", "killed", "errors")}

    def call(self, method, path, body=None):
        try:
            return self.srv.call(method, path, body)
        except (OSError, http.client.HTTPException):
            self.n["errors"] += 1
            return 0, {}

    def refresh(self):
        """The loops' statuses; ended ones are deleted (files and all)."""
        st, d = self.call("GET", "/api/loops/v2?limit=1000")
        if st != 200:
            return
        for lp in d.get("data", []):
            i, s = lp.get("loop_id"), lp.get("status")
            if s in ("completed", "failed", "stopped"):
                if s != "stopped" and i in self.loops:
                    self.n[s] += 1
                if self.call("DELETE", "/api/loops/v2/%s" % i)[0] == 200:
                    self.n["deleted"] += 1
                self.loops.pop(i, None)
            elif i:
                self.loops[i] = s

    def loop_step(self):
        live = [i for i, s in self.loops.items() if s != "paused"]
        if len(self.loops) < LOOPS_AT_ONCE:
            self.start_loop()
        r = random.random()
        if live and r < 0.04:
            i = random.choice(live)
            st = self.call("POST", "/api/loops/v2/%s/pause" % i)
            if st[0] == 200:
                self.loops[i] = "paused"
                self.n["paused"] += 1
        elif live and r < 0.07:
            i = random.choice(live)
            st = self.call("POST", "/api/loops/v2/%s/stop" % i)
            if st[0] == 200:
                self.n["stopped"] += 1
        for i, s in list(self.loops.items()):
            if s == "paused" and random.random() < 0.1:
                self.call("POST", "/api/loops/v2/%s/resume" % i)

    def start_loop(self):
        """Half over HTTP (create, then start), half over the socket."""
        if random.random() < 0.5:
            st, d = self.call("POST", "/api/loops/v2", {
                "title": "soak %d" % self.n["loops"], "max_iterations": 3})
            i = d.get("data", {}).get("loop_id") if st == 200 else None
            if i and self.call("POST", "/api/loops/v2/%s/start" % i)[0] \
                    == 200:
                self.loops[i] = "running"
                self.n["loops"] += 1
            return
        d = self.sock_call({"id": 1, "verb": "loop_open", "start": True,
                            "title": "soak %d" % self.n["loops"],
                            "max_iterations": 3})
        if d and d.get("ok"):
            self.loops[d["loop_id"]] = "running"
            self.n["loops"] += 1

    def sock_call(self, req, linger=0.0):
        """One request on serve's control socket, its reply; the client
        stays LINGER seconds (a subscriber hears events) and goes."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        try:
            s.connect(self.srv.sock)
            s.sendall((json.dumps(req) + "\n").encode())
            line = s.makefile("rb").readline()
            self.n["sock"] += 1
            end = time.monotonic() + linger
            s.settimeout(0.2)
            while time.monotonic() < end:
                try:
                    if not s.recv(65536):
                        break
                except socket.timeout:
                    pass
            return json.loads(line or b"{}")
        except (OSError, ValueError):
            self.n["errors"] += 1
            return None
        finally:
            s.close()

    def agent_step(self):
        """Agents spawned over HTTP with a tool that succeeds, crashes or
        hangs; each is closed after a while, finished or not."""
        if len(self.agents) < AGENTS_AT_ONCE and random.random() < 0.2:
            f = random.choice(["result success ok", "crash", "exit 5",
                               "sleep 800 result success ok", "hang"])
            st, d = self.call("POST", "/api/agents", {
                "role": "develop", "tool": "bash",
                "command": "exec '%s' --marker %s %s" % (
                    self.fake, self.marker, f)})
            if st == 200 and d.get("agent_id"):
                self.agents.append((d["agent_id"],
                                    time.monotonic() + random.uniform(0.3, 3)))
                self.n["agents"] += 1
        now = time.monotonic()
        for a in [a for a in self.agents if a[1] <= now]:
            self.call("GET", "/api/agents/%s" % a[0])
            self.call("POST", "/api/agents/%s/close" % a[0], {})
            self.agents.remove(a)

    def reader(self, secs):
        """An SSE client that reads for SECS and drops the connection."""
        c = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=10)
        end = time.monotonic() + secs
        try:
            c.request("GET", "/api/events",
                      headers={"Authorization": "Bearer " + self.srv.token})
            # kept: getresponse drops c.sock when the stream says
            # "Connection: close", while r's file still reads through it
            sock = c.sock
            r = c.getresponse()
            # each read waits until the reader's time is up at most: a
            # stream read that timed out cannot be read again (Python's
            # socket file), and a quiet stream at the end is no error
            while time.monotonic() < end:
                sock.settimeout(max(0.05, end - time.monotonic()))
                try:
                    if not r.fp.readline():
                        break
                except socket.timeout:
                    break
        except (OSError, http.client.HTTPException, ValueError):
            self.n["errors"] += 1
        finally:
            c.close()

    def client_step(self):
        self.readers = [t for t in self.readers if t.is_alive()]
        if len(self.readers) < SSE_AT_ONCE and random.random() < 0.1:
            t = threading.Thread(target=self.reader, daemon=True,
                                 args=(random.uniform(0.5, 5),))
            t.start()
            self.readers.append(t)
            self.n["sse"] += 1
        r = random.random()
        if r < 0.05:
            self.sock_call({"id": 2, "verb": "subscribe"},
                           random.uniform(0, 0.5))
        elif r < 0.1:
            self.sock_call({"id": 3, "verb": "list"})
        elif r < 0.13:
            self.drop_connection()
        elif r < 0.16:
            self.call("GET", "/metrics")

    def drop_connection(self):
        """A client that sends half a request, or none, and goes."""
        try:
            s = socket.create_connection(("127.0.0.1", self.srv.port), 2)
            if random.random() < 0.5:
                s.sendall(b"GET /api/loops/v2 HTTP/1.1\r\nHost: x\r\n")
            s.close()
            self.n["dropped"] += 1
        except OSError:
            self.n["errors"] += 1

    def silent_step(self):
        """Clients that never say goodbye: a TCP or control-socket
        connection with nothing, or half a request or frame, sent, left
        open until serve's deadlines drop it (counted); past
        SILENT_AT_ONCE the oldest is closed here."""
        for s in list(self.silent):
            try:
                if s.recv(4096, socket.MSG_DONTWAIT):
                    continue     # a 408 on its way; its close follows
            except BlockingIOError:
                continue
            except OSError:
                pass
            s.close()
            self.silent.remove(s)
            self.n["silent_dropped"] += 1
        if random.random() >= 0.02:
            return
        if len(self.silent) >= SILENT_AT_ONCE:
            self.silent.pop(0).close()
        half = random.choice([b"", b"half"])
        try:
            if random.random() < 0.5:
                s = socket.create_connection(("127.0.0.1", self.srv.port), 2)
                half = half and b"POST /api/loops/v2 HTTP/1.1\r\nHost: x\r\n"
            else:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(2)
                s.connect(self.srv.sock)
                half = half and b'{"id": 9, "verb": "li'
            s.sendall(half)
            self.silent.append(s)
            self.n["silent"] += 1
        except OSError:
            self.n["errors"] += 1

    def kill_worker(self):
        """Now and then a worker dies by SIGKILL, its tool tree running:
        one of serve's children read just now, checked to be a worker."""
        pid = self.srv.proc.pid
        try:
            with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                kids = [int(k) for k in f.read().split()]
        except (OSError, ValueError):
            return
        random.shuffle(kids)
        for k in kids:
            try:
                with open("/proc/%d/comm" % k) as f:
                    if f.read().strip() != "ccw-worker":
                        continue
                os.kill(k, signal.SIGKILL)
                self.n["killed"] += 1
            except OSError:
                pass
            return


def procs_now():
    """pid -> (ppid, state, comm, cmdline) of every process."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        rp = s.rindex(")")
        rest = s[rp + 2:].split()
        out[int(d)] = (int(rest[1]), rest[0], s[s.index("(") + 1:rp], cmd)
    return out


def status_kib(pid, key):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cgroup_dir(pid):
    """PID's directory in the v2 hierarchy (from /proc/self/mountinfo and
    /proc/PID/cgroup), or None where there is none."""
    mnt = None
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                a, b = line.split(" - ", 1)
                if b.split()[0] == "cgroup2":
                    mnt = a.split()[4]
                    break
        with open("/proc/%d/cgroup" % pid) as f:
            for line in f:
                if line.startswith("0::"):
                    p = line[3:].strip()
                    return mnt and os.path.join(mnt, p.lstrip("/"))
    except (OSError, ValueError, IndexError):
        pass
    return None


def own_cgroup():
    """A cgroup of the soak's own in the v2 hierarchy, below ours, with
    this process moved into it before serve starts, so that serve and all
    it makes are below it and nothing another program makes is: (where we
    were, it).  Where that cannot be had (no v2 mount, not allowed):
    (None, where we are), and whatever appears there counts."""
    base = cgroup_dir(os.getpid())
    if not base:
        return None, None
    top = os.path.join(base, "ccw-soak-%d" % os.getpid())
    try:
        os.mkdir(top)
        with open(os.path.join(top, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        return base, top
    except OSError:
        try:
            os.rmdir(top)
        except OSError:
            pass
        return None, base


def leave_cgroup(home, top):
    """Back where we were; the soak's cgroup and what is left in it go."""
    if not home:
        return
    try:
        with open(os.path.join(home, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        if os.path.exists(os.path.join(top, "cgroup.kill")):
            with open(os.path.join(top, "cgroup.kill"), "w") as f:
                f.write("1")
        end = time.monotonic() + 2
        while time.monotonic() < end:
            with open(os.path.join(top, "cgroup.events")) as f:
                if "populated 0" in f.read():
                    break
            time.sleep(0.05)
        for d, _, _ in os.walk(top, topdown=False):
            os.rmdir(d)
    except OSError as e:
        log("cannot remove %s: %s" % (top, e))


def cgroup_dirs(top):
    """The set of cgroup directories under TOP (TOP itself not counted)."""
    out = set()
    if top and os.path.isdir(top):
        for d, ds, _ in os.walk(top):
            out.update(os.path.join(d, x) for x in ds)
    return out


def cgroups_idle(top, before, workers):
    """The cgroup directories below TOP, not in BEFORE, that hold no live
    worker (WORKERS) in them or below them: a worker's own, its loop's
    and serve's are held while the worker lives."""
    held = set()
    for w in workers:
        d = cgroup_dir(w)
        while d and d.startswith(top + "/"):
            held.add(d)
            d = os.path.dirname(d)
    return len(cgroup_dirs(top) - before - held)


def ancestors():
    """This process and those above it (their command lines may carry the
    marker: a timeout(1) or shell that started us is not a leftover)."""
    out, p = set(), os.getpid()
    while p > 1 and p not in out:
        out.add(p)
        try:
            with open("/proc/%d/stat" % p) as f:
                s = f.read()
            p = int(s[s.rindex(")") + 2:].split()[1])
        except (OSError, ValueError):
            break
    return out


def tree_bytes(top):
    n = 0
    for d, _, fs in os.walk(top):
        for f in fs:
            try:
                n += os.lstat(os.path.join(d, f)).st_size
            except OSError:
                pass
    return n


def leftovers(procs, serve, marker, mine):
    """Processes under serve, or carrying the marker, that are neither
    serve, a live worker, inside a live worker's tree, nor a zombie."""
    kids = {}
    for p, (pp, _, _, _) in procs.items():
        kids.setdefault(pp, []).append(p)
    workers = [p for p in kids.get(serve, [])
               if procs[p][2] == "ccw-worker" and procs[p][1] != "Z"]
    owned, stack = set(workers) | {serve}, list(workers)
    while stack:
        for k in kids.get(stack.pop(), []):
            owned.add(k)
            stack.append(k)
    under, stack = set(), [serve]
    while stack:
        for k in kids.get(stack.pop(), []):
            under.add(k)
            stack.append(k)
    cand = under | {p for p, v in procs.items() if marker in v[3]}
    return [p for p in cand if p not in owned and p not in mine
            and procs[p][1] != "Z"]


def sample(srv, root, marker, cg, t0):
    """One sample of serve and what is under it; CG is (dir, the cgroup
    dirs under it before serve started): only new ones count."""
    procs = procs_now()
    pid = srv.proc.pid
    ws = [p for p, v in procs.items()
          if v[0] == pid and v[2] == "ccw-worker" and v[1] != "Z"]
    try:
        fds = len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        fds = 0
    return {
        "t": time.monotonic() - t0,
        "rss_kib": status_kib(pid, "VmRSS"),
        "worker_rss_kib": max([status_kib(p, "VmRSS") for p in ws] or [0]),
        "workers": len(ws),
        "fds": fds,
        "threads": status_kib(pid, "Threads"),
        "zombies": sum(1 for v in procs.values()
                       if v[0] == pid and v[1] == "Z"),
        "cgroups": len(cgroup_dirs(cg[0]) - cg[1]),
        "cg_idle": cgroups_idle(cg[0], cg[1], ws) if cg[0] else 0,
        "leftover": len(leftovers(procs, pid, marker, ancestors())),
        "state_bytes": tree_bytes(root + "/.loop"),
    }


def fit(xs, ys):
    """Least-squares slope of ys over xs, or None with fewer than 2."""
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def row(*f):
    print("\t".join(str(x) for x in f), flush=True)


def num(v):
    return ("%.1f" % v) if isinstance(v, float) else str(v)


def thirds(xs):
    """The medians of the first and the last third of XS."""
    k = max(1, len(xs) // 3)
    return [sorted(t)[len(t) // 2] for t in (xs[:k], xs[-k:])]


def verdict(ok, what):
    """A row's verdict said in words on stderr: PASS or MISS, and why."""
    log("%s: %s" % ("PASS" if ok else "MISS", what))
    return "yes" if ok else "no"


def report(samples, warm, after, cg_after):
    """The rows: RSS's least-squares slope over the samples after the
    warm-up against its target; each measure of FLAT flat or not by the
    medians of the first and the last third of those samples; what
    outlives serve.  Each verdict also goes to stderr as PASS or MISS."""
    post = [s for s in samples if s["t"] >= warm] or samples[-1:]
    xs = [s["t"] / 3600.0 for s in post]
    slope = fit(xs, [s["rss_kib"] / KIB for s in post])
    if slope is None:
        row(SLOPE, "n/a", "-", "MiB/hour", "-", "<= 1 MiB/h", "n/a")
    else:
        row(SLOPE, "%.2f" % slope, "-", "MiB/hour", "-", "<= 1 MiB/h",
            verdict(slope <= RSS_TARGET, "serve's RSS slope %.2f MiB/h "
                    "after %ds of warm-up (target <= %g)"
                    % (slope, warm, RSS_TARGET)))
    for label, unit, key, k, tol in FLAT:
        # a worker's RSS only where there was one
        got = [s[key] * k for s in post if key in s and
               (key != "worker_rss_kib" or s["workers"])]
        if not got:
            row("  " + label, "n/a", "-", unit, "-", "flat", "n/a")
            continue
        first, last = thirds(got)
        fmt = "%.1f" if k != 1 else "%d"
        figs = "/".join(fmt % x for x in (first, last))
        row("  " + label, figs, "-",
            unit + " (median of first/last third)", "-",
            "flat (+<= %s)" % num(tol),
            verdict(last - first <= tol, "%s flat: median %s in the first"
                    " third after the warm-up, %s in the last (+<= %s; "
                    "max %s)" % (label, fmt % first, fmt % last, num(tol),
                                 fmt % max(got))))
    row(LEFT, str(after), "-", "processes", "-", "0",
        verdict(after == 0, "%d processes left 2 s after serve stopped"
                % after))
    row(CG_LEFT, str(cg_after), "-", "cgroups", "-", "0",
        verdict(cg_after == 0, "%d cgroups left after serve stopped"
                % cg_after))


def churn(srv, ch, secs, period, sample_at):
    """SECONDS of churn, a sample every PERIOD; the samples."""
    samples, t0 = [], time.monotonic()
    next_s = next_r = t0
    while time.monotonic() - t0 < secs and srv.proc.poll() is None:
        now = time.monotonic()
        if now >= next_s:
            samples.append(sample_at(t0))
            next_s += period
        if now >= next_r:
            ch.refresh()
            next_r = now + 0.5
        ch.loop_step()
        ch.agent_step()
        ch.client_step()
        ch.silent_step()
        if random.random() < 0.01:
            ch.kill_worker()
        time.sleep(TICK_S)
    if srv.proc.poll() is None:
        samples.append(sample_at(t0))
    else:
        log("serve exited early (%s)" % srv.proc.returncode)
    log("churn: " + ", ".join("%s %d" % kv for kv in ch.n.items()))
    busy = sum(1 for s in samples if s["workers"])
    log("workers live in %d of %d samples%s" % (
        busy, len(samples), "" if busy else ": NO WORKER RAN"))
    return samples


def stop(srv):
    """SIGTERM, then SIGKILL after 30 s: whatever happened, serve goes."""
    if srv.proc.poll() is not None:
        return
    srv.proc.terminate()
    try:
        srv.proc.wait(30)
    except subprocess.TimeoutExpired:
        log("serve ignored SIGTERM for 30 s; killed")
        srv.proc.kill()
        srv.proc.wait()


def outliving(marker):
    """The processes with MARKER alive 2 s (the issue's bound) after serve
    stopped, ours and our ancestors aside."""
    end = time.monotonic() + 2
    mine = ancestors()
    while True:
        left = [p for p, v in procs_now().items()
                if marker in v[3] and p not in mine and v[1] != "Z"]
        if not left or time.monotonic() >= end:
            return left
        time.sleep(0.1)


def main(argv):
    if argv[1:] == ["--rows"]:
        print("\n".join(row_names()))
        return 0
    if len(argv) == 3 and argv[1] == "--report":
        with open(argv[2]) as f:
            d = json.load(f)
        report(d["samples"], d["warmup_s"], d["left_after_stop"],
               d["cgroups_after_stop"])
        return 0
    if len(argv) not in (6, 7):
        print("usage: soak.py SUP FAKE ROOT MARKER SECONDS [SAMPLES.json]"
              " | --rows | --report SAMPLES.json",
              file=sys.stderr)
        return 2
    secs = max(1, int(float(argv[5])))
    # the roles' commands run in ROOT: a relative path would name nothing
    # there, and no worker would ever run
    argv[1:3] = [os.path.abspath(a) for a in argv[1:3]]
    for f in argv[1:3]:
        if not os.access(f, os.X_OK):
            print("soak.py: %s: not an executable" % f, file=sys.stderr)
            return 2
    random.seed(os.getpid())
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.makedirs(argv[3], exist_ok=True)
    config(argv[3], argv[2], argv[4])
    home, top = own_cgroup()
    try:
        return soak(argv, secs, top)
    finally:
        leave_cgroup(home, top)


def soak(argv, secs, top):
    """The run of main: serve under churn, its rows, its samples."""
    sup, fake, root, marker = argv[1:5]
    warm = min(180, secs // 5)
    period = min(5.0, max(0.5, secs / 60.0))
    cg = (top, cgroup_dirs(top))
    srv = Serve(sup, root, os.path.join(root, "ctl.sock"))
    try:
        ch = Churn(srv)
        ch.fake, ch.marker = fake, marker
        log("%ds of churn (warm-up %ds, a sample every %.1fs), serve pid "
            "%d, cgroup %s" % (secs, warm, period, srv.proc.pid,
                               cg[0] or "none"))
        samples = churn(srv, ch, secs, period,
                        lambda t0: sample(srv, root, marker, cg, t0))
    finally:
        stop(srv)
    left = outliving(marker)
    cg_after = len(cgroup_dirs(cg[0]) - cg[1])
    if len(argv) == 7:
        with open(argv[6], "w") as f:
            json.dump({"seconds": secs, "warmup_s": warm, "churn": ch.n,
                       "cgroup": top,
                       "left_after_stop": len(left), "cgroups_after_stop":
                       cg_after, "samples": samples}, f)
    report(samples, warm, len(left), cg_after)
    for p in left:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
