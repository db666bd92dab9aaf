#!/bin/bash
# stop-bounded.sh: SIGTERM to run, serve and batch while the disk is slow
# (strace attached to the host delays every fsync and fdatasync by 3 s,
# so that each commit takes 6 s): each exits 4 within the tools' grace
# on a stop (1 s) + 2 s, instead of waiting for the commits in flight;
# afterwards every state file is whole (the one before the signal or a
# newer one, never torn) and a later start on the same directory works
# (it removes the temp file an abandoned commit left).
. "$(dirname "$0")/lib.sh"
t_watchdog 90
t_valgrind_worker
t_marker M stopb
t_slack

if ! command -v strace >/dev/null; then
	echo "1..0 # SKIP strace is not installed (build-aux/install-deps.sh)"
	exit 0
fi
# LeakSanitizer cannot work in a process strace traces: not this test's job
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

OK="exec '$FAKE' --marker $M result success"
BOUND=3000	# a stop's grace of the tools (1 s) + 2 s

# slow_disk PID: strace attached to PID and all its threads, every fsync
# and fdatasync delayed by 3 s from now on; $STRACE.  Fails if strace
# cannot attach (no ptrace permission).
slow_disk() {
	local end t all
	strace -f -qq -o /dev/null -e trace=fsync,fdatasync \
	    -e inject=fsync,fdatasync:delay_enter=3s -p "$1" 2>/dev/null &
	STRACE=$!
	end=$(t_until 5000)
	while :; do
		all=1
		for t in /proc/"$1"/task/*/status; do
			grep -q 'TracerPid:[[:space:]]*[1-9]' "$t" 2>/dev/null ||
			    all=
		done
		[ -n "$all" ] && return 0
		kill -0 "$STRACE" 2>/dev/null || return 1
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.02
	done
}

# stop HOST PID: SIGTERM to PID (its disk slow); its exit 4 within BOUND.
stop() {
	local t0 el
	t0=$(t_now_ms)
	kill -TERM "$2"
	t_wait_pid "$2" 30000
	el=$(( $(t_now_ms) - t0 ))
	wait "$STRACE" 2>/dev/null
	is "$T_RC" 4 "$1: SIGTERM: exit 4"
	t_within "$el" "$BOUND" \
	    "$1: SIGTERM with a 3 s fsync ends within $BOUND ms ($el ms)"
}

# whole HOST FILE BEFORE: FILE is a whole state file: the copy BEFORE
# taken before the signal, or a newer one of the same loop.
whole() {
	is "$(python3 - "$2" "$3" <<'PYEOF'
import json, sys
now, before = (json.load(open(p)) for p in sys.argv[1:3])
same = now.get("loop_id") == before.get("loop_id")
newer = now.get("updated_at", "") >= before.get("updated_at", "")
print("whole" if same and (now == before or newer) else "changed: %r" % now)
PYEOF
)" whole "$1: the state file is whole: the old one or the new one"
}

# --- run
R=$T_TMP/run
t_run_config "$R" "$OK" \
    "touch '$R.dev'; [ -e '$R.go' ] && $OK; exec '$FAKE' --marker $M hang" \
    "$OK" "$OK" "$OK" '{"grace_ms": 500}'
t_loop_start "$R" stop-1 "Stop me on a slow disk"
t_wait_file "$R.dev" 10000
ok $? "run: develop runs"
if ! slow_disk "$PID"; then
	kill -KILL "$PID"
	t_skip "strace cannot attach here (ptrace not permitted)"
	t_done
	exit
fi
cp "$F" "$R.before"
stop run "$PID"
whole run "$F" "$R.before"
t_wait_gone "$M" 2000
ok $? "run: no tool left behind"
"$SUP" state -C "$R" show stop-1 >/dev/null 2>&1
ok $? "run: state show reads the loop afterwards"
touch "$R.go"
t_loop_run "$R" stop-1
is "$RC" 0 "run: run --loop-id resumes it to the end afterwards"
ok $([ ! -e "$F.tmp" ]; echo $?) "run: no temp file left"

# --- serve (its agents' grace below the loops': the loops' bound holds)
. "$(dirname "$0")/serve-lib.sh"
R=$T_TMP/srv
t_run_config "$R" "$OK" "touch '$R.dev'; exec '$FAKE' --marker $M hang" \
    "$OK" "$OK" "$OK" '{"grace_ms": 500}'
srv_start "$T_TMP/srv-out" -C "$R" --grace-ms 500
ok $? "serve: listens"
req POST /api/loops/v2 '{"title": "Stop serve on a slow disk"}'
ID=$(jr 'd["body"]["data"]["loop_id"]')
req POST "/api/loops/v2/$ID/start"
t_wait_file "$R.dev" 10000
ok $? "serve: the loop's develop runs"
F=$R/.loop/$ID.json
slow_disk "$SRV_PID"
ok $? "serve: strace attached"
cp "$F" "$R.before"
stop serve "$SRV_PID"
whole serve "$F" "$R.before"
t_wait_gone "$M" 2000
ok $? "serve: no tool left behind"
"$SUP" state -C "$R" show "$ID" >/dev/null 2>&1
ok $? "serve: state show reads the loop afterwards"
ok $([ ! -e "$F.tmp" ]; echo $?) "serve: no temp file left after a start"

# --- batch
R=$T_TMP/bat
t_run_config "$R" "$OK" "touch '$R.dev'; exec '$FAKE' --marker $M hang" \
    "$OK" "$OK" "$OK" '{"grace_ms": 500}'
t_batch_items "$R/items.jsonl" 1
$WRAP "$SUP" batch "$R/items.jsonl" -C "$R" >"$R.out" 2>"$R.err" &
PID=$!
t_wait_file "$R.dev" 10000
ok $? "batch: the item's develop runs"
F=$(ls "$R"/.workflow/.loop/*.json "$R"/.loop/loop-*.json 2>/dev/null |
    head -n 1)
slow_disk "$PID"
ok $? "batch: strace attached"
cp "$F" "$R.before"
stop batch "$PID"
whole batch "$F" "$R.before"
t_wait_gone "$M" 2000
ok $? "batch: no tool left behind"
"$SUP" state -C "$R" show "$(basename "$F" .json)" >/dev/null 2>&1
ok $? "batch: state show reads the item's loop afterwards"
ok $([ ! -e "$F.tmp" ]; echo $?) "batch: no temp file left after a start"

t_done
