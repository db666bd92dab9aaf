#!/bin/bash
# http-limits.sh: serve's HTTP server (supervisor/api/http.c, behind the
# test routes of tests/http-serve) against clients no library would be:
# refusals with their codes and JSON bodies, keep-alive and pipelining,
# the size limits (431, 413), a trickling client closed by the absolute
# request deadline, 1000 idle connections, the connection cap, streams
# whose readers leave or stall; the event bus as Server-Sent Events.  The probes are tests/regress/http-probe.py.
# shellcheck disable=SC1091
. "${srcdir:-.}/tests/regress/lib.sh"
t_watchdog 120
t_slack

if ! command -v python3 >/dev/null; then
	t_skip "no python3"
	t_done
fi
P="$srcdir/tests/regress/http-probe.py"
HS="$top_builddir/tests/http-serve"
REQ_MS=3000

# serve_start ARGS: the harness in the background; $HPID, $PORT
serve_start() {
	rm -f "$T_TMP/port"
	$WRAP "$HS" "$T_TMP/port" "$@" 2>"$T_TMP/hs.err" &
	HPID=$!
	t_wait_file "$T_TMP/port" 10000 && PORT=$(cat "$T_TMP/port")
	[ -n "${PORT:-}" ]
}

# serve_stop: SIGTERM; it must exit 0 (valgrind: no leak, no error)
serve_stop() {
	kill -TERM "$HPID"
	wait "$HPID"
	is "$?" 0 "$1: the server exits 0 on SIGTERM, everything freed"
}

# probe CASE ARGS: run one probe, its "ok" lines become checks here
probe() {
	python3 "$P" "$PORT" "$@" >"$T_TMP/probe.out" 2>"$T_TMP/probe.err"
	ok $? "probe $1 ran" || sed 's/^/#   /' "$T_TMP/probe.err"
	t_probe_out "$T_TMP/probe.out"
}

serve_start -r "$REQ_MS" -s 262144
ok $? "the harness listens on 127.0.0.1 (port ${PORT:-none})"
probe basic
probe keepalive
probe sizes
probe trickle "$REQ_MS"
probe stream
probe idle 1000
# the idle figure: /health beside 1000 idle connections within 1 s
el=$(sed -n 's/^ms \([0-9]*\) \/health beside.*/\1/p' "$T_TMP/probe.out")
t_within "${el:-99999}" 1000 "/health beside 1000 idle connections within 1 s (${el:-?} ms)"
serve_stop "limits"

# /api/events: the bus as SSE (supervisor/api/sse.c): coalescing per
# (type, loop) with the trailing value flushed, replay, the ring's end
serve_start -k 256
ok $? "the harness listens with a bus keeping 256 events"
probe events 256
serve_stop "events"

# the cap: a 9th connection is refused with 503 at once, not queued
serve_start -c 8
ok $? "the harness listens with a cap of 8 connections"
probe cap 8
serve_stop "cap"

# the idle deadline closes a connection that never sends a request
serve_start -i 300
ok $? "the harness listens with a 300 ms idle deadline"
out=$(python3 -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
t0 = time.monotonic()
n = len(s.recv(100))
print(n, int((time.monotonic() - t0) * 1000))' "$PORT" 2>&1)
is "${out% *}" 0 "a silent connection is closed by the idle deadline, nothing said"
el=${out#* }
ok $(( el < 290 )) "not before it (${el} ms)"
serve_stop "idle"

t_done
