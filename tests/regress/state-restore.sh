#!/bin/bash
# state-restore.sh: a front end that rewrites the whole state file from a
# stale read, without the lock (as CCW does), reverting the engine's
# fields: the engine commits them again (the watch tells the store), and
# before a loop reports its end its last values are on disk.  The front
# end's own fields stay theirs.
. "$(dirname "$0")/lib.sh"
t_watchdog 90
t_valgrind_worker
t_marker M rst
t_slack

cfg() { t_run_config "$@"; }
OK="exec '$FAKE' --marker $M result success"

# stale FILE OUT: a front end's read, kept for later.
stale() { cp "$1" "$2"; }

# rewrite STALE FILE NOTE: the front end writes its stale copy back in
# place (O_TRUNC), with a field of its own changed.
rewrite() {
	python3 - "$1" "$2" "$3" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["notes"] = sys.argv[3]
open(sys.argv[2], "w").write(json.dumps(d, indent=2))
PYEOF
}

# holdlock FILE READY GO: flock FILE, touch READY, hold it until GO exists.
holdlock() {
	python3 - "$1" "$2" "$3" <<'PYEOF' &
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.01)
PYEOF
	LOCKPID=$!
}

# waitfor FILE EXPR MS: until the python EXPR on the file's d holds.
waitfor() {
	local end
	end=$(t_until "$3")
	until [ "$(jget "$1" "$2" 2>/dev/null)" = true ]; do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.01
	done
}

# --- a stale write during the run: restored at once, not at the next step
R=$T_TMP/mid
cfg "$R" "$OK" \
    "touch '$R.dev'; while [ ! -e '$R.go1' ]; do sleep 0.02; done; $OK dev" \
    "touch '$R.dbg'; while [ ! -e '$R.go' ]; do sleep 0.02; done; $OK" \
    "$OK" "$OK"
t_loop_start "$R" mid-1 "Restore me"
# a read taken while develop has not reported yet
t_wait_file "$R.dev" 10000
ok $? "mid: develop is running"
stale "$F" "$R.stale"
touch "$R.go1"
t_wait_file "$R.dbg" 10000
ok $? "mid: debug is running (develop's result committed)"
waitfor "$F" "'develop' in d['skill_state']['completed_actions']" 5000
rewrite "$R.stale" "$F" fe-1
waitfor "$F" "'develop' in d['skill_state']['completed_actions'] and d.get('notes') == 'fe-1'" 5000
ok $? "mid: develop's result back while debug still runs, their notes kept"
touch "$R.go"
t_wait_pid "$PID" 20000
is "$T_RC" 0 "mid: exit 0"
is "$(jget "$F" "[d['status'], d['skill_state']['completed_actions'], d.get('notes')]")" \
    '["completed",["init","develop","debug","validate","complete"],"fe-1"]' \
    "mid: the engine's last skill_state and the front end's notes"

# --- a stale write after the last commit, before the end is told: the
# loop's end waits for its history line, held here by a lock
R=$T_TMP/end
cfg "$R" "$OK" "$OK" "$OK" "$OK" \
    "touch '$R.cpl'; while [ ! -e '$R.go' ]; do sleep 0.02; done; $OK done"
t_loop_start "$R" end-1 "Restore me at the end"
t_wait_file "$R.cpl" 10000
ok $? "end: complete is running"
stale "$F" "$R.stale"
holdlock "$R/.loop/end-1.history.jsonl" "$R.locked" "$R.unlock"
t_wait_file "$R.locked" 10000
touch "$R.go"
waitfor "$F" "d['status'] == 'completed'" 10000
ok $? "end: the last commit landed (completed)"
rewrite "$R.stale" "$F" fe-2
touch "$R.unlock"
t_wait_pid "$PID" 20000
wait "$LOCKPID" 2>/dev/null
is "$T_RC" 0 "end: exit 0"
is "$(jget "$F" "[d['status'], d['skill_state']['completed_actions'][-1], d['skill_state']['action_index'], d.get('notes')]")" \
    '["completed","complete",5,"fe-2"]' \
    "end: completed with the engine's last skill_state, their notes kept"
$WRAP "$SUP" state -C "$R" validate end-1 >/dev/null 2>&1
ok $? "end: the state file is valid"

t_done
