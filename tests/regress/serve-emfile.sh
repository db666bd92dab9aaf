#!/bin/bash
# serve-emfile.sh: serve out of descriptors.  Under `prlimit --nofile=64`,
# 100 TCP connections held open put its HTTP listener at EMFILE: serve
# must pause accepting (supervisor/api/lpause.c) instead of spinning on
# accept(2), so its CPU over a 2 s window stays under 10 % of a core and
# its stderr under 4 KiB (one line per period, not libevent's warning per
# failed accept); once the connections close, /health answers 200 again.
. "$(dirname "$0")/lib.sh"
t_watchdog 90
t_slack

FP="$srcdir/tests/regress/flood-probe.py"
R=$T_TMP/proj
mkdir -p "$R/.loop"
echo '{"default_tool": "bash"}' >"$R/.loop/config.json"
if ! command -v prlimit >/dev/null; then
	t_skip "serve out of descriptors: needs prlimit (util-linux)"
	t_done
fi

# --- serve with 64 descriptors at most (soft and hard: it cannot raise it)
prlimit --nofile=64 $WRAP "$SUP" serve -C "$R" --no-socket \
    --http 127.0.0.1:0 >"$T_TMP/srv.out" 2>"$T_TMP/srv.err" &
SPID=$!
PORT=
end=$(t_until "$(t_ms 10000)")
while [ -z "$PORT" ] && [ "$(t_now_ms)" -lt "$end" ]; do
	PORT=$(sed -n 's/.*listening on http:.*:\([0-9]*\)$/\1/p' "$T_TMP/srv.out")
	sleep 0.02
done
ok $([ -n "$PORT" ]; echo $?) "serve listens under a limit of 64 descriptors"
is "$(python3 "$FP" health "$PORT" "$(t_ms 5000)")" 200 "/health answers"

# --- 100 connections held: the listener hits EMFILE
mkfifo "$T_TMP/hold.in"
python3 "$FP" tcp "$PORT" 100 <"$T_TMP/hold.in" >"$T_TMP/hold.out" &
HPID=$!
exec {HFD}>"$T_TMP/hold.in"
end=$(t_until "$(t_ms 10000)")
until grep -q held "$T_TMP/hold.out" || [ "$(t_now_ms)" -ge "$end" ]; do
	sleep 0.02
done
is "$(cat "$T_TMP/hold.out")" "held 100" "100 connections are held open"
# serve has taken all it could and failed at least one accept(2)
end=$(t_until "$(t_ms 10000)")
until [ -s "$T_TMP/srv.err" ] || [ "$(t_now_ms)" -ge "$end" ]; do
	sleep 0.05
done
like "$(head -c 300 "$T_TMP/srv.err")" "Too many open files" \
    "serve's accept fails with EMFILE"

# cpu_ticks PID: utime + stime of PID (clock ticks)
cpu_ticks() {
	local f
	read -r -a f <"/proc/$1/stat"
	# fields 14 and 15, after a comm that holds no space here
	echo $(( f[13] + f[14] ))
}
HZ=$(getconf CLK_TCK)
e0=$(wc -c <"$T_TMP/srv.err")
c0=$(cpu_ticks "$SPID")
t0=$(t_now_ms)
sleep 2			# the measured window, not a wait for an event
c1=$(cpu_ticks "$SPID")
t1=$(t_now_ms)
e1=$(wc -c <"$T_TMP/srv.err")
pct=$(( (c1 - c0) * 1000 * 100 / HZ / (t1 - t0) ))
if [ -n "$WRAP" ]; then
	t_skip "serve's CPU at EMFILE: not judged under a wrapper ($pct %)"
else
	ok $(( pct >= 10 )) "serve at EMFILE uses $pct % of a core (< 10 %)"
fi
ok $(( e1 >= 4096 )) "serve's stderr holds $e1 bytes (< 4 KiB), $((e1 - e0)) in the window"
like "$(head -c 4096 "$T_TMP/srv.err")" "accept: .*paused" "the pause is logged"
ok $(kill -0 "$SPID"; echo $?) "serve is still there"

# --- the connections go: /health answers again
exec {HFD}>&-
t_wait_pid "$HPID" "$(t_ms 10000)"
is "$(python3 "$FP" health "$PORT" "$(t_ms 10000)")" 200 \
    "/health answers 200 once the descriptors are free"
like "$(head -c 4096 "$T_TMP/srv.err")" "accepting again" \
    "the end of the pause is logged"
kill -TERM "$SPID"
t_wait_pid "$SPID" "$(t_ms 20000)"
is "$T_RC" 4 "serve exits 4 on SIGTERM"
ok $(( $(wc -c <"$T_TMP/srv.err") >= 4096 )) "serve's stderr stayed under 4 KiB"
t_done
