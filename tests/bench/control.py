#!/usr/bin/env python3
# control.py: the bench's front end to `ccw-supervisor control`.  Owns the
# three measured conversations (lifecycles with J in flight, sequential
# send_input round trips, N idle agents) and prints one JSON object of
# figures on stdout; run.sh does the timing of the baselines and the table.
import json
import os
import subprocess
import sys
import time


class Control:
    # One supervisor, spoken to in JSON lines; responses are read whole
    # lines at a time from an unbuffered pipe so that no read waits on a
    # buffer filling up.
    def __init__(self, sup, root, extra=()):
        self.p = subprocess.Popen([sup, 'control', '-C', root] + list(extra),
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, bufsize=0)
        self.win = self.p.stdin.fileno()
        self.rout = self.p.stdout.fileno()
        self.buf = b''
        self.next_id = 0

    # Send one request; the id is ours so that answers can be matched.
    def send(self, verb, **kw):
        self.next_id += 1
        kw['id'] = self.next_id
        kw['verb'] = verb
        self.send_raw(json.dumps(kw, separators=(',', ':')).encode() + b'\n')
        return self.next_id

    # Write a prepared line; the pipe is small, so loop on short writes.
    def send_raw(self, line):
        while line:
            n = os.write(self.win, line)
            line = line[n:]

    # One raw response line, without parsing it: the round-trip figures
    # must not charge Python's JSON decoder to the supervisor.
    def line(self):
        while True:
            i = self.buf.find(b'\n')
            if i >= 0:
                ln, self.buf = self.buf[:i], self.buf[i + 1:]
                return ln
            chunk = os.read(self.rout, 65536)
            if not chunk:
                raise RuntimeError('control: supervisor closed stdout')
            self.buf += chunk

    # One parsed response; a failed request stops the figure.
    def reply(self):
        r = json.loads(self.line())
        if not r.get('ok'):
            raise RuntimeError('control: %s' % r)
        return r

    # End of input closes every agent; the supervisor exits when they are gone.
    def finish(self):
        self.p.stdin.close()
        rest = self.p.stdout.read()
        rc = self.p.wait()
        if rc != 0:
            raise RuntimeError('control: exit status %d' % rc)
        return rest

    # Poll `list` until every agent has left pending_init.
    def wait_running(self, n, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.send('list')
            agents = self.reply()['agents']
            pend = [a for a, s in agents.items() if s == 'pending_init']
            if len(agents) >= n and not pend:
                bad = [a for a, s in agents.items() if s != 'running']
                if bad:
                    raise RuntimeError('agents not running: %s' % bad[:5])
                return
            time.sleep(0.05)
        raise RuntimeError('agents did not start in %ds' % timeout)


# Figure 1: N spawn -> wait -> close lifecycles with J in flight; a finished
# agent is closed and the next one spawned in the same breath.
def lifecycles(sup, root, n, j, command):
    t0 = time.monotonic()
    c = Control(sup, root)
    kind = {}
    spawned = closed = 0

    def spawn():
        nonlocal spawned
        spawned += 1
        kind[c.send('spawn', role='develop', tool='bash', command=command,
                    message='bench')] = ('spawn', None)

    for _ in range(min(n, j)):
        spawn()
    while closed < n:
        r = c.reply()
        what, agent = kind.pop(r['id'])
        if what == 'spawn':
            kind[c.send('wait', targets=[r['agent_id']], timeout_ms=60000)] = \
                ('wait', r['agent_id'])
        elif what == 'wait':
            st = r['status'][agent]
            if r['timed_out'] or st != 'completed':
                raise RuntimeError('%s ended %s' % (agent, st))
            kind[c.send('close', target=agent)] = ('close', agent)
            if spawned < n:
                spawn()
        else:
            closed += 1
    c.finish()
    return {'seconds': time.monotonic() - t0}


# Figure 2: N sequential send_input round trips to one running agent, then
# N `list` round trips, the control front end's own cost (pipe, JSON).
def roundtrip(sup, root, n, size, command):
    c = Control(sup, root)
    c.send('spawn', role='develop', tool='bash', command=command,
           message='bench')
    agent = c.reply()['agent_id']
    c.wait_running(1, 30)
    text = 'x' * size
    # Warm up both paths before timing.
    for i in range(50):
        c.send('send_input', target=agent, message=text)
        c.reply()
        c.send('list')
        c.reply()
    lines = []
    for i in range(n):
        c.next_id += 1
        lines.append(json.dumps({'id': c.next_id, 'verb': 'send_input',
                                 'target': agent, 'message': text},
                                separators=(',', ':')).encode() + b'\n')
    t0 = time.perf_counter()
    for ln in lines:
        c.send_raw(ln)
        if b'"ok":true' not in c.line():
            raise RuntimeError('send_input failed')
    t1 = time.perf_counter()
    ln = b'{"id":0,"verb":"list"}\n'
    for i in range(n):
        c.send_raw(ln)
        if b'"ok":true' not in c.line():
            raise RuntimeError('list failed')
    t2 = time.perf_counter()
    c.send('close', target=agent, grace_ms=200)
    c.reply()
    c.finish()
    return {'send_input_us': (t1 - t0) * 1e6 / n,
            'list_us': (t2 - t1) * 1e6 / n}


# utime + stime of pid, in clock ticks.
def cpu_ticks(pid):
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return int(fields[11]) + int(fields[12])


# Time on a CPU of pid in ns (schedstat), precise where tick-based
# utime+stime rounds a thousand tiny wake-ups down to nothing.
def run_ns(pid):
    try:
        with open('/proc/%d/schedstat' % pid) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


# One line of /proc/PID/status, in KiB.
def status_kib(pid, key):
    with open('/proc/%d/status' % pid) as f:
        for ln in f:
            if ln.startswith(key + ':'):
                return int(ln.split()[1])
    return 0


# The direct children of pid: the workers of a supervisor.
def children(pid):
    with open('/proc/%d/task/%d/children' % (pid, pid)) as f:
        return [int(x) for x in f.read().split()]


# Figure 4: N idle agents at once, then the supervisor's RSS and CPU over
# IDLE seconds, then every agent closed; the workers' pids are returned so
# that run.sh can check that none is left.
def idle(sup, root, n, idle_s, command):
    c = Control(sup, root)
    pid = c.p.pid
    t0 = time.monotonic()
    for i in range(n):
        c.send('spawn', role='develop', tool='bash', command=command,
               message='bench')
    agents = [c.reply()['agent_id'] for _ in range(n)]
    c.wait_running(n, 120)
    t_up = time.monotonic() - t0
    workers = children(pid)
    wns0 = sum(run_ns(w) for w in workers)
    rss0 = status_kib(pid, 'VmRSS')
    cpu0 = cpu_ticks(pid)
    ns0 = run_ns(pid)
    time.sleep(idle_s)
    ns1 = run_ns(pid)
    cpu1 = cpu_ticks(pid)
    rss1 = status_kib(pid, 'VmRSS')
    wns1 = sum(run_ns(w) for w in workers)
    hz = os.sysconf('SC_CLK_TCK')
    t1 = time.monotonic()
    for a in agents:
        c.send('close', target=a, grace_ms=500)
    for a in agents:
        c.reply()
    c.finish()
    return {'rss_kib': max(rss0, rss1),
            'cpu_pct': 100.0 * (cpu1 - cpu0) / hz / idle_s,
            'cpu_pct_ns': 100.0 * (ns1 - ns0) / 1e9 / idle_s,
            'workers_cpu_pct': 100.0 * (wns1 - wns0) / 1e9 / idle_s,
            'nworkers': len(workers),
            'startup_s': t_up,
            'close_s': time.monotonic() - t1,
            'worker_pids': workers}


# Dispatch on the figure's name; usage errors exit 2.
def main(argv):
    if len(argv) < 4:
        sys.stderr.write('usage: control.py lifecycles SUP ROOT N J CMD\n'
                         '       control.py roundtrip SUP ROOT N SIZE CMD\n'
                         '       control.py idle SUP ROOT N SECONDS CMD\n')
        return 2
    fig, sup, root = argv[1], argv[2], argv[3]
    if fig == 'lifecycles':
        out = lifecycles(sup, root, int(argv[4]), int(argv[5]), argv[6])
    elif fig == 'roundtrip':
        out = roundtrip(sup, root, int(argv[4]), int(argv[5]), argv[6])
    elif fig == 'idle':
        out = idle(sup, root, int(argv[4]), float(argv[5]), argv[6])
    else:
        sys.stderr.write('control.py: unknown figure %s\n' % fig)
        return 2
    print(json.dumps(out))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
