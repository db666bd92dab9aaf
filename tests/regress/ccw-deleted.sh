#!/bin/bash
# ccw-deleted.sh: the state file deleted by its owner (a dashboard's
# delete) while the loop runs or a pause drains: the workers are stopped
# at once (not run to their end), the side files, directories and locks
# go, the file is never made again, and run ends "stopped" (exit 4)
# saying why.
. "$(dirname "$0")/lib.sh"
t_watchdog 90
t_valgrind_worker
t_marker M del
t_slack

cfg() { t_run_config "$@" '{"grace_ms": 500}'; }

# pause FILE: a front end sets the status to paused, in place.
pause() {
	python3 - "$1" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["status"] = "paused"
open(sys.argv[1], "w").write(json.dumps(d, indent=2))
PYEOF
}

OK="exec '$FAKE' --marker $M result success"

# deleted ROOT ID WHAT: the checks after a deletion.
deleted() {
	local d=$1/.loop id=$2 what=$3 left
	t_wait_pid "$PID" 15000
	is "$T_RC" 4 "$what: exit 4 (stopped)"
	like "$(cat "$1.err")" "loop $id: the state file was deleted" \
	    "$what: says the state file was deleted"
	like "$(cat "$1.err")" "loop $id stopped \\(exit 4\\)" "$what: ends stopped"
	t_wait_gone "$M-$id" 1000
	ok $? "$what: the worker's tool is gone"
	ok $([ ! -e "$d/$id.json" ]; echo $?) "$what: the state file is not made again"
	left=$(cd "$d" && ls -d "$id".* "$id" 2>/dev/null | tr '\n' ' ')
	is "$left" "" "$what: no side file, directory or lock left"
	! grep -q "commit failed" "$1.err"
	ok $? "$what: no 'commit failed' (exit 70) on the way"
}

# --- deleted while a pause drains: the worker does not run to its end
R=$T_TMP/drain
cfg "$R" "$OK" "touch '$R.dev'; exec '$FAKE' --marker $M-drain-1 sleep 60000" \
    "$OK" "$OK" "$OK"
$WRAP "$SUP" -v run -C "$R" --loop-id drain-1 "Delete me" >"$R.out" 2>"$R.err" &
PID=$!
F=$R/.loop/drain-1.json
t_wait_file "$R.dev" 10000
ok $? "drain: develop is running"
pause "$F"
end=$(t_until 10000)
until grep -q "status is now paused" "$R.err"; do
	[ "$(t_now_ms)" -ge "$end" ] && break
	sleep 0.02
done
mkdir -p "$R/.loop/drain-1"
echo '{"task_id":"t-1","order":0}' >"$R/.loop/drain-1/tasks.jsonl"
t0=$(t_now_ms)
rm -f "$F"
deleted "$R" drain-1 drain
el=$(( $(t_now_ms) - t0 ))
t_within "$el" 2000 "drain: stopped within 2 s of the deletion ($el ms)"

# --- deleted while running (no pause)
R=$T_TMP/run
cfg "$R" "$OK" "touch '$R.dev'; exec '$FAKE' --marker $M-run-1 sleep 60000" \
    "$OK" "$OK" "$OK"
t_loop_start "$R" run-1 "Delete me"
t_wait_file "$R.dev" 10000
ok $? "running: develop is running"
rm -f "$F"
deleted "$R" run-1 running

t_done
