#!/bin/bash
# freeze.sh: run --pause-policy freeze (issue 29).  Status paused written
# by a front end holds the loop: develop's tool stops where it is (its
# processes in state T, or its cgroup frozen) and its counter with it;
# the role's deadline does not run while frozen (held past it, develop
# still succeeds, never nudged); running again goes on where it was.
# A stop of a held loop closes its workers (nothing left); a worker
# killed from outside while frozen is reaped as usual; a run killed
# with SIGKILL while held does not leave them stopped for ever (the
# freeze's guard thaws them, the worker sees its channel closed).  Under
# both containment modes when a cgroup v2 can be made (else sweep only).
. "$(dirname "$0")/lib.sh"
t_watchdog 120
t_valgrind_worker
t_marker M freeze
t_slack

TMO=$(t_ms 2500)	# develop's deadline; the hold outlasts it
NUDGE=200

# status FILE STATUS: a front end's write of the status (a stop gives a
# reason), the rest of the file kept.
status() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["status"] = sys.argv[2]
if sys.argv[2] == "failed":
    d["failure_reason"] = "stopped by user"
open(sys.argv[1], "w").write(json.dumps(d, indent=2))
EOF
}

# stopped MARKER: every live process holding MARKER is stopped (T), and
# there is one at least.
stopped() {
	local p n=0
	for p in $(t_marked "$1"); do
		t_pstate "$p"
		[ "$T_PST" = T ] || return 1
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

# frozen MODE ROOT MARKER: the tool frozen (its processes in T under the
# sweep, its cgroup's events say frozen 1 under cgroup)
frozen() {
	local p cg
	if [ "$1" = sweep ]; then
		stopped "$3"
		return
	fi
	p=$(t_marked "$3" | head -n 1)
	[ -n "$p" ] || return 1
	cg=$(sed -n 's/^0:://p' "/proc/$p/cgroup")
	grep -qx 'frozen 1' "$V2$cg/cgroup.events" 2>/dev/null
}

# count FILE: the tick in FILE (0 before the first, or caught mid-write)
count() {
	local c
	c=$(cat "$1" 2>/dev/null)
	echo "${c:-0}"
}
above() { [ "$(count "$1")" -gt "$2" ]; }

OK="exec '$FAKE' --marker $M result success"
# tick FILE: a tick every 50 ms, the count in FILE, until FILE.end
# exists; then a result
tick() {
	echo "i=0; until [ -e '$1.end' ]; do i=\$((i+1)); echo \$i >'$1'; \
sleep 0.05; done; : $M; $OK dev"
}

# start ROOT ID MODE: run -v (the ladder's "nudging", "timed out" and
# the hold's lines on stderr) of loop ID in ROOT, containment MODE, with
# --pause-policy freeze, in the background; $PID, $F
start() {
	$WRAP "$SUP" -v run -C "$1" --loop-id "$2" --containment "$3" \
	    --pause-policy freeze "Hold me" >"$1.out" 2>"$1.err" &
	PID=$!
	F=$1/.loop/$2.json
}

# held_said ROOT: run -v said the loop is held (every freeze done, each
# with its guard)
held_said() {
	grep -q 'held (paused by a front end)' "$1.err"
}

# freeze_once MODE HOLD: hold a loop in the middle of develop for HOLD
# ms (past develop's deadline), resume it, and it completes with develop
# succeeded: develop's own time, without the hold, is well within it.
freeze_once() {
	local mode=$1 R=$T_TMP/$1 c1 t0 el
	t_run_config "$R" "$OK" "$(tick "$R.count")" "$OK" "$OK" "$OK" \
	    "{\"grace_ms\": 500, \"timeout_ms\": $TMO, \"nudge_ms\": $NUDGE}"
	start "$R" "f-$mode" "$mode"
	t_poll 20000 above "$R.count" 2
	ok $? "$mode: develop is counting"
	t0=$(t_now_ms)
	status "$F" paused
	t_poll 10000 frozen "$mode" "$R" "$M"
	ok $? "$mode: develop's tool is frozen"
	c1=$(count "$R.count")
	# held past develop's deadline and nudge, watching it stay frozen
	while [ $(( $(t_now_ms) - t0 )) -lt "$2" ]; do
		frozen "$mode" "$R" "$M" || break
		sleep 0.05
	done
	frozen "$mode" "$R" "$M"
	ok $? "$mode: still frozen $(( $(t_now_ms) - t0 )) ms later (deadline $TMO ms)"
	is "$(count "$R.count")" "$c1" "$mode: the counter stood still at $c1"
	is "$(jget "$F" 'd["status"]')" paused "$mode: the file says paused"
	kill -0 "$PID" 2>/dev/null
	ok $? "$mode: the run is still up"
	status "$F" running
	t_poll 10000 above "$R.count" "$c1"
	ok $? "$mode: thawed: the counter goes on"
	touch "$R.count.end"
	t_wait_pid "$PID" 30000
	is "$T_RC" 0 "$mode: the loop completed (exit 0)"
	is "$(jget "$F" '[d["status"], d["skill_state"]["completed_actions"]]')" \
	    '["completed",["init","develop","debug","validate","complete"]]' \
	    "$mode: completed, every action done"
	is "$(jget "$R/.loop/f-$mode.workers/develop.output.json" 'd["summary"]')" \
	    dev "$mode: develop succeeded (its own result)"
	held_said "$R"
	ok $? "$mode: run -v says the loop was held"
	ok $(grep -q 'nudging\|timed out\|deadline of' "$R.err"; echo $(( ! $? ))) \
	    "$mode: develop was never nudged nor timed out"
	is "$(grep -o '"event": *"loop_[a-z]*' "$R/.loop/f-$mode.history.jsonl" |
	    sed 's/.*"loop_/loop_/' | tr '\n' ' ')" \
	    "loop_started loop_held loop_thawed loop_end " \
	    "$mode: the history has loop_held then loop_thawed"
	t_wait_gone "$M" 5000
	ok $? "$mode: nothing left"
	el=$(( $(t_now_ms) - t0 ))
	echo "# $mode: paused to completed $el ms"
}

# held MODE WHAT: a loop started in ROOT $T_TMP/WHAT-MODE, develop
# ticking until paused, held, its tool frozen; $R, $PID, $F
held() {
	R=$T_TMP/$2-$1
	t_run_config "$R" "$OK" "$(tick "$R.count")" "$OK" "$OK" "$OK" \
	    '{"grace_ms": 500}'
	start "$R" "$2-$1" "$1"
	t_poll 20000 above "$R.count" 1
	ok $? "$1: $2: develop is counting"
	status "$F" paused
	t_poll 10000 frozen "$1" "$R" "$M"
	ok $? "$1: $2: develop's tool is frozen"
	t_poll 10000 held_said "$R"
	ok $? "$1: $2: the loop is held"
}

# stop_held MODE: a stop of a held loop thaws and closes its workers
stop_held() {
	held "$1" stop
	status "$F" failed
	t_wait_pid "$PID" 10000
	is "$T_RC" 4 "$1: stop: the run exits 4"
	t_wait_gone "$M" 5000
	ok $? "$1: stop: nothing of develop is left"
	is "$(jget "$F" 'd["status"]')" failed "$1: stop: the file says failed"
}

# kill_held MODE: SIGKILL of the run while held: the guard thaws what
# was frozen, the worker finds its channel closed and ends its tool
kill_held() {
	held "$1" kill
	kill -KILL "$PID"
	t_wait_pid "$PID" 5000
	t_wait_gone "$M" 10000
	ok $? "$1: kill: nothing of develop is left frozen behind the dead run"
}

# worker_killed MODE: the worker SIGKILLed from outside while held is
# reaped as usual: its stopped tool swept, not left stopped; resumed,
# the loop takes develop's failure and ends
worker_killed() {
	local w
	held "$1" wk
	w=$(ps -o ppid= -p "$(t_marked "$M" | head -n 1)" | tr -d ' ')
	kill -KILL "$w"
	t_wait_gone "$M" 10000
	ok $? "$1: worker killed: its stopped tool was swept"
	status "$F" running
	t_wait_pid "$PID" 20000
	is "$T_RC" 1 "$1: worker killed: resumed, the loop ends failed (exit 1)"
}

# the v2 hierarchy and our cgroup in it (as contain-cgroup.sh finds them)
V2=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") {
    if ($(i + 1) == "cgroup2") { print $5; exit } ; break } }' \
    /proc/self/mountinfo)
OWN=$(sed -n 's/^0:://p' /proc/self/cgroup)
[ "$OWN" = / ] && OWN=
MODES=sweep
if [ -n "$V2" ] && mkdir "$V2$OWN/ccw-probe-$$" 2>/dev/null; then
	rmdir "$V2$OWN/ccw-probe-$$"
	MODES="sweep cgroup"
else
	t_skip "cgroup: no writable cgroup v2 hierarchy"
fi
# the deadline held past once (sweep): the verbs' timers stand still
# whichever way the worker is frozen
HOLD=$((TMO + NUDGE + 500))
for mode in $MODES; do
	freeze_once "$mode" "$HOLD"
	HOLD=300
	# a stop and a worker's death are the loop's and the agent's,
	# whatever froze the workers: once
	if [ "$mode" = sweep ]; then
		stop_held "$mode"
		worker_killed "$mode"
	fi
	kill_held "$mode"
done
t_done
