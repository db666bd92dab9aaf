#!/bin/bash
# agent-flood.sh: a tool that writes 200 MiB as fast as it can.  With no
# log cap (--log-max 0; agent-logcap.sh tests the cap) all of it must
# reach the log, the agent must still complete, and the supervisor's
# memory must not grow with the output.
. "$(dirname "$0")/lib.sh"
t_watchdog 80
t_marker M flood
S=$T_TMP/state
R=$T_TMP/r
MIB=200
LINES=$((MIB * 1024 * 1024 / 64))
LIMIT_KB=$((20 * 1024))

t0=$(t_now_ms)
timeout -k 2 70 $WRAP "$SUP" agent --json --state-dir "$S" --loop-id flood \
    --tool bash --timeout-ms 60000 --nudge-ms 1000 --grace-ms 500 \
    --log-max 0 --command "exec '$FAKE' --marker $M flood $MIB result success" \
    develop "go" >"$R" 2>"$R.err" &
pid=$!
# $pid is timeout(1); the supervisor is its child.
sup=
wrk=
whwm=?
rss=0
hwm=0
end=$((t0 + 75000))
while [ "$(t_now_ms)" -lt "$end" ]; do
	[ -z "$sup" ] && sup=$(pgrep -P "$pid" | head -n 1)
	[ -n "$sup" ] && [ -z "$wrk" ] && wrk=$(pgrep -P "$sup" | head -n 1)
	[ -n "$wrk" ] && v=$(t_vm "$wrk" VmHWM) && [ -n "$v" ] && whwm=$v
	if [ -n "$sup" ]; then
		v=$(t_vm "$sup" VmRSS)
		[ -n "$v" ] && [ "$v" -gt "$rss" ] && rss=$v
		v=$(t_vm "$sup" VmHWM)
		[ -n "$v" ] && [ "$v" -gt "$hwm" ] && hwm=$v
	fi
	st=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$pid/status" \
	    2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ] && break
	sleep 0.1
done
t_wait_pid "$pid" 5000
rc=$T_RC
el=$(( $(t_now_ms) - t0 ))
echo "# timing: $MIB MiB flood took $el ms"
echo "# memory: supervisor max VmRSS $rss kB, VmHWM $hwm kB;" \
    "worker VmHWM $whwm kB"

is "$rc" 0 "flood: exit 0"
is "$(jget "$R" '[d["agent_status"], d["status"]]')" '["completed","success"]' \
    "flood: completed with the result after the flood"
log=$(jget "$R" 'd["log_path"]')
size=$(stat -c %s "$log" 2>/dev/null || echo 0)
echo "# log: $size bytes"
ok $(( size < MIB * 1024 * 1024 )) "flood: the log holds all $MIB MiB"
like "$(tail -c 8192 "$log" 2>/dev/null | grep '^flood ' | tail -n 1)" \
    "^flood $(printf %010d "$LINES") " "flood: the last numbered line is there"
like "$(tail -c 4096 "$log" 2>/dev/null)" '- status: success' \
    "flood: the block after it too"
if t_measure_rss; then
	ok $(( rss == 0 || hwm == 0 )) "flood: the supervisor was sampled"
	ok $(( rss >= LIMIT_KB || hwm >= LIMIT_KB )) \
	    "flood: supervisor RSS under 20 MiB"
else
	t_skip "flood: memory not measured (sanitizers or a wrapper)"
	t_skip "flood: memory not measured (sanitizers or a wrapper)"
fi
ok $(( el > 60000 )) "flood: done in under 60 s"
t_wait_gone "$M" 2000; ok $? "flood: no tool left"
rm -rf "$S"
t_done
