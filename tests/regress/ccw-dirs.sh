#!/bin/bash
# ccw-dirs.sh: loops CCW's dashboard made, as its files are: found by id in
# ROOT/.workflow/.loop while ROOT/.loop holds config.json, new loops made
# where CCW sees them, older ROOT/.loop loops still found, --state-dir
# first, a refusal leaving no lock behind; and completed_at on a failed
# loop (CCW's stop writes it; the engine writes it when it fails one).
. "$(dirname "$0")/lib.sh"
t_watchdog 120
t_valgrind_worker
t_marker M ccwdirs

OK="exec '$FAKE' --marker $M result success"
ID=loop-v2-20260122T100000-deadbeef

# ccw_loop DIR ID STATUS: a loop file as CCW's POST (and stop) write it.
ccw_loop() {
	mkdir -p "$1"
	python3 - "$@" <<'PYEOF'
import json, sys
d, lid, status = sys.argv[1:4]
s = {"loop_id": lid, "title": "From the dashboard", "description": "d",
     "max_iterations": 10, "status": status, "current_iteration": 0,
     "created_at": "2026-01-22T10:00:00.000Z",
     "updated_at": "2026-01-22T10:00:00.000Z"}
if status == "failed":
    s.update(failure_reason="Manually stopped by user",
             completed_at="2026-01-22T10:01:00.000Z",
             updated_at="2026-01-22T10:01:00.000Z")
json.dump(s, open("%s/%s.json" % (d, lid), "w"), indent=2)
PYEOF
}

# locks DIR: the lock files left in DIR (none: empty).
locks() {
	(cd "$1" 2>/dev/null && ls -1 | grep '\.lock$' | tr '\n' ' ')
}

# --- CCW made the loop; ROOT/.loop holds only config.json
R=$T_TMP/ccw
t_run_config "$R" "$OK" "$OK" "$OK" "$OK" "$OK"
ccw_loop "$R/.workflow/.loop" $ID created
timeout -k 2 60 $WRAP "$SUP" run -C "$R" --loop-id $ID >"$R.out" 2>"$R.err"
is "$?" 0 "ccw loop: run --loop-id runs the loop CCW created"
F=$R/.workflow/.loop/$ID.json
is "$(jget "$F" '[d["status"], d["title"]]')" '["completed","From the dashboard"]' \
    "ccw loop: completed in CCW's file, its title kept"
is "$(ls -1 "$R/.loop" | tr '\n' ' ')" "config.json " \
    "ccw loop: nothing of the loop in ROOT/.loop"
$WRAP "$SUP" state -C "$R" show $ID >/dev/null 2>&1
ok $? "ccw loop: state show ID finds it"

# --- a loop that is nowhere: exit 2, both places named, no lock left
timeout -k 2 60 $WRAP "$SUP" run -C "$R" --loop-id loop-v2-nope >"$R.out" 2>"$R.err"
is "$?" 2 "absent loop: exit 2"
like "$(cat "$R.err")" "no such loop.*\.workflow/\.loop.*/\.loop\)" \
    "absent loop: the message names both directories"
is "$(locks "$R/.loop")$(locks "$R/.workflow/.loop" | grep -o 'loop-v2-nope[^ ]*')" "" \
    "absent loop: no stray lock file"

# --- a new loop in a CCW project goes where CCW's dashboard looks
timeout -k 2 60 $WRAP "$SUP" run -C "$R" --loop-id fresh-1 -n 3 "A new task" \
    >"$R.out" 2>"$R.err"
is "$?" 0 "new loop: exit 0"
ok $([ -f "$R/.workflow/.loop/fresh-1.json" ] && [ ! -e "$R/.loop/fresh-1.json" ]; echo $?) \
    "new loop: ROOT/.workflow/.loop/fresh-1.json, not ROOT/.loop"

# --- a loop of an older run in ROOT/.loop is still found
R2=$T_TMP/old
t_run_config "$R2" "$OK" "$OK" "$OK" "$OK" "$OK"
ccw_loop "$R2/.loop" old-1 created
mkdir -p "$R2/.workflow/.loop"
timeout -k 2 60 $WRAP "$SUP" run -C "$R2" --loop-id old-1 >"$R2.out" 2>"$R2.err"
is "$?" 0 "old loop: run --loop-id finds ROOT/.loop/old-1.json"
is "$(jget "$R2/.loop/old-1.json" 'd["status"]')" completed \
    "old loop: completed in place"
ok $([ ! -e "$R2/.workflow/.loop/old-1.json" ]; echo $?) \
    "old loop: no copy in ROOT/.workflow/.loop"

# --- --state-dir wins over both
R3=$T_TMP/explicit
t_run_config "$R3" "$OK" "$OK" "$OK" "$OK" "$OK"
ccw_loop "$R3/.workflow/.loop" same-1 created
timeout -k 2 60 $WRAP "$SUP" run -C "$R3" --state-dir "$R3/mine" \
    --loop-id same-1 -n 3 "Mine" >"$R3.out" 2>"$R3.err"
is "$?" 0 "--state-dir: exit 0"
is "$(jget "$R3/mine/same-1.json" 'd["status"]'):$(jget \
    "$R3/.workflow/.loop/same-1.json" 'd["status"]')" "completed:created" \
    "--state-dir: the loop there ran, CCW's file untouched"

# --- completed_at: CCW's stop on a failed loop is valid
ccw_loop "$R/.workflow/.loop" loop-v2-stopped failed
$WRAP "$SUP" state -C "$R" validate loop-v2-stopped >"$R.out" 2>&1
is "$?" 0 "ccw stop: state validate accepts failed with completed_at"
$WRAP "$SUP" state validate "$R/.workflow/.loop/loop-v2-stopped.json" >/dev/null 2>&1
is "$?" 0 "ccw stop: ... by file too"

# --- completed_at: a loop the engine fails has its end time
R4=$T_TMP/fail
t_run_config "$R4" "$OK" "exec '$FAKE' --marker $M result failed 'no way'" \
    "$OK" "$OK" "$OK"
t_loop_run "$R4" failing-1 "Fail it"
is "$RC" 1 "engine failure: exit 1"
like "$(jget "$F" '[d["status"], d["completed_at"]]')" \
    '^\["failed","20[0-9]{2}-[0-9]{2}-[0-9]{2}T' \
    "engine failure: failed with completed_at"
$WRAP "$SUP" state -C "$R4" validate failing-1 >/dev/null 2>&1
is "$?" 0 "engine failure: the file is valid"

t_done
