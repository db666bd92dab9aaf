#!/bin/bash
# stale-temps.sh: no temp file outlives recovery.  A loop's driver killed
# with SIGKILL may leave NAME.PID.tmp (a replace between its write and
# its rename) next to the state file and in the loop's side directories;
# the resume (`run --loop-id`, serve's start-up) and `state`'s verbs
# remove those of dead pids and keep a live process's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 150
t_valgrind_worker
t_slack
t_marker M stale

OK="exec '$FAKE' --marker $M result success"
R=$T_TMP/proj
GO=$T_TMP/go
# develop says it runs ($R.dev), then hangs unless $GO exists
t_run_config "$R" "$OK init" \
    "touch '$R.dev'; [ -e '$GO' ] && $OK dev; exec '$FAKE' --marker $M hang" \
    "$OK dbg" "$OK 'all good'" "$OK done" '{"grace_ms": 500}'
DEAD=$(sh -c 'echo $$')		# a pid that has exited
LIVE=$$				# this shell's: alive all along

# crash ID: start loop ID with `run`, kill it with SIGKILL in develop,
# then plant its temps of a dead pid and one of a live pid.
crash() {
	rm -f "$R.dev" "$GO"
	t_loop_start "$R" "$1" "Survive a crash"
	t_wait_file "$R.dev" "$(t_ms 10000)"
	ok $? "$1: develop runs"
	kill -KILL "$PID"
	t_wait_pid "$PID" 5000
	t_wait_gone "$M" "$(t_ms 10000)"
	ok $? "$1: SIGKILL of its driver, the workers went with it"
	mkdir -p "$R/.loop/$1.workers" "$R/.loop/$1"
	: >"$R/.loop/$1.workers/develop.output.json.$DEAD.tmp"
	: >"$R/.loop/$1/tasks.jsonl.$DEAD.tmp"
	: >"$R/.loop/$1.tasks.jsonl.$DEAD.tmp"
	: >"$R/.loop/$1.workers/develop.output.json.$LIVE.tmp"
}

# left ID: the temp files of loop ID still there, one a line.
left() {
	(cd "$R/.loop" && ls -d "$1".*.tmp "$1".workers/*.tmp "$1"/*.tmp \
	    2>/dev/null)
}

# --- run --loop-id resumes: the dead pid's temps go
crash r-1
touch "$GO"
t_loop_run "$R" r-1
is "$RC" 0 "r-1: run resumed the loop to its end"
is "$(jget "$F" 'd["status"]')" completed "r-1: completed"
is "$(left r-1)" "r-1.workers/develop.output.json.$LIVE.tmp" \
    "r-1: no temp of a dead pid is left; a live pid's is kept"
rm -f "$R/.loop/r-1.workers/develop.output.json.$LIVE.tmp"

# --- `state list` clears every loop's, as it clears {id}.json.tmp
: >"$R/.loop/r-1.workers/debug.output.json.$DEAD.tmp"
$WRAP "$SUP" state -C "$R" list >"$T_TMP/list.out" 2>&1
is "$?" 0 "state list: exit 0"
is "$(left r-1)" "" "state list: the dead pid's temp went"

# --- serve resumes at start-up: the same
crash s-1
touch "$GO"
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens"
srv_wait_status s-1 completed "$(t_ms 20000)"
ok $? "s-1: serve resumed the loop at start-up and it completed"
is "$(left s-1)" "s-1.workers/develop.output.json.$LIVE.tmp" \
    "s-1: no temp of a dead pid is left; a live pid's is kept"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
t_wait_gone "$M" 5000
ok $? "no agent left"

t_done
