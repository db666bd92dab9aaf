#!/bin/bash
# budget.sh: a loop's budget pauses instead of killing (issue 29).  A wall
# budget (--max-time 3000, more under valgrind) on a develop that counts
# until told: warnings at 50 and 80 % and budget_reached on --json, status paused with
# pause_reason and the budget in the state, develop frozen where it is
# (its counter stands still) while run stays up; status running with
# the budget not raised pauses it again at once; `run --loop-id
# --max-time` of the loop the first run drives (its budget raised and
# running, one commit) thaws it: the counter goes on, develop succeeds
# and the loop completes.  A budget raised while the loop runs (its
# status left running) is read at once: the loop runs past the old one.
# Bad budget options are usage errors.
# serve: a create body's budget pauses the loop the same way; the resume
# route's body raises it and the loop completes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 150
t_valgrind_worker
t_marker M budget
t_slack

OK="exec '$FAKE' --marker $M result success"

# front FILE STATUS: a front end's one write of the state's status.
front() {
	python3 - "$@" <<'EOF2'
import json, sys
path, status = sys.argv[1], sys.argv[2]
d = json.load(open(path))
d["status"] = status
with open(path, "w") as f:
    f.write(json.dumps(d, indent=2))
EOF2
}

# until_json FILE EXPR WANT MS: poll FILE until jget EXPR prints WANT.
until_json() {
	local end
	end=$(t_until "$4")
	until [ "$(jget "$1" "$2" 2>/dev/null)" = "$3" ]; do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.02
	done
}

# events OUT: the budget events of run --json's stdout, in order.
events() {
	python3 - "$1" <<'EOF2'
import json, sys
out = []
for line in open(sys.argv[1]):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("event") == "budget_warning":
        out.append("warn %s %d" % (e["budget"], e["percent"]))
    elif e.get("event") == "budget_reached":
        out.append("reached %s" % e["budget"])
print(", ".join(out))
EOF2
}

# counting FILE: develop's command: count into FILE, 50 ms a step, until
# FILE.stop exists (2 minutes at most), then succeed.  It runs until the
# test says, so the budget (scaled by t_ms for valgrind and the
# sanitizers, whose init takes longer) is reached while it counts.  Each
# count is written whole and renamed into place: a worker frozen between
# a truncate and its write left the file empty (a CI run read '').  The
# file starts at 0, so a budget reached before develop starts reads 0,
# and the raise still sees it count.
counting() {
	echo "i=0; while [ ! -e '$1.stop' ] && [ \$i -lt 2400 ]; do i=\$((i + 1)); echo \$i >'$1.n'; mv -f '$1.n' '$1'; sleep 0.05; done; exec '$FAKE' --marker $M result success counted"
}

# counter_root NAME: $R (the root $T_TMP/NAME) whose develop counts into
# $C (from 0), every other role succeeding.
counter_root() {
	R=$T_TMP/$1
	C=$R.count
	echo 0 >"$C"
	t_run_config "$R" "$OK" "$(counting "$C")" "$OK" "$OK" "$OK" \
	    '{"grace_ms": 500}'
}

# counts_past FILE FROM: wait until FILE counts past FROM (20 s at most).
counts_past() {
	local end
	end=$(t_until "$(t_ms 20000)")
	until [ "$(cat "$1")" -gt "$2" ] 2>/dev/null ||
	    [ "$(t_now_ms)" -ge "$end" ]; do
		sleep 0.02
	done
	[ "$(cat "$1")" -gt "$2" ] 2>/dev/null
}

# counts_on FILE FROM: wait until FILE counts past FROM, then stop it.
counts_on() {
	counts_past "$1" "$2"
	local rc=$?
	touch "$1.stop"
	return $rc
}

B=$(t_ms 3000)
counter_root wall
t_loop_start "$R" wall-1 --max-time "$B" --json "Count"
until_json "$F" 'd["status"]' paused "$(t_ms 15000)"
ok $? "wall: the loop is paused at its budget"
is "$(jget "$F" 'd["budget"]')" "{\"max_wall_ms\":$B}" "wall: the budget in the state"
like "$(jget "$F" 'd["pause_reason"]')" \
    "^budget: [0-9]{4,} ms of running time reached --max-time $B\$" \
    "wall: pause_reason says which budget"
is "$(events "$R.out")" "warn wall_ms 50, warn wall_ms 80, reached wall_ms" \
    "wall: budget_warning at 50 and 80 %, then budget_reached, once each"
n1=$(cat "$C")
sleep 0.6	# the counter steps every 50 ms: twelve steps if it ran
n2=$(cat "$C")
ok $([ -n "$n1" ] && [ "$n1" = "$n2" ]; echo $?) \
    "wall: develop is frozen where it was (counter $n1, then $n2)"
ok $(kill -0 "$PID" 2>/dev/null; echo $?) "wall: run is still up"

# running again, the budget not raised: paused again at once
front "$F" running
until_json "$F" '[d["status"], d.get("pause_reason", "")[:6]]' \
    '["paused","budget"]' "$(t_ms 10000)"
ok $? "still reached: paused again at once with the reason"
end=$(t_until "$(t_ms 5000)")
until [ "$(grep -c '"budget_reached"' "$R.out")" -ge 2 ] ||
    [ "$(t_now_ms)" -ge "$end" ]; do
	sleep 0.02
done
is "$(grep -c '"budget_reached"' "$R.out")" 2 "still reached: budget_reached again"
is "$(cat "$C")" "$n2" "still reached: the counter still stands"

# running with a raised budget, by the CLI (run --loop-id of a loop
# another run drives writes the budget and the resume for it): thawed,
# develop goes on, the loop ends
$WRAP "$SUP" run -C "$R" --loop-id wall-1 --max-time 60000 >/dev/null 2>"$R.raise"
is "$?" 0 "raised: run --loop-id --max-time for the driving run exits 0"
like "$(cat "$R.raise")" "budget set for its driver" "raised: it says so"
counts_on "$C" "$n2"
ok $? "raised: the counter goes on from $n2"
t_wait_pid "$PID" "$(t_ms 30000)"
is "$T_RC" 0 "raised: run exits 0"
is "$(jget "$F" '[d["status"], d["skill_state"]["completed_actions"], "pause_reason" in d, d["budget"]]')" \
    '["completed",["init","develop","debug","validate","complete"],false,{"max_wall_ms":60000}]' \
    "raised: completed, develop included; no pause_reason left"
is "$(jget "$R/.loop/wall-1.workers/develop.output.json" 'd["summary"]')" counted \
    "raised: develop succeeded"
like "$(cat "$R/.loop/wall-1.history.jsonl")" '"event":"budget_reached"' \
    "raised: the history has the budget's pause"

# --- raised while it runs (the status stays running): the loop reads
# the new budget at once and runs past the old one.  The counter steps
# every 50 ms, so counting past 1.5 times the old budget's steps proves
# develop ran past it unfrozen.
counter_root live
t_loop_start "$R" live-1 --max-time "$B" --json "Count"
counts_past "$C" 0
ok $? "live: develop counts"
python3 - "$F" <<'EOF2'
import json, sys
d = json.load(open(sys.argv[1]))
d["budget"] = {"max_wall_ms": 60000}
with open(sys.argv[1], "w") as f:
    f.write(json.dumps(d, indent=2))
EOF2
counts_on "$C" $(( B / 50 * 3 / 2 ))
ok $? "live: develop counts past the old budget ($(cat "$C") steps of 50 ms, the old budget $B ms)"
t_wait_pid "$PID" "$(t_ms 30000)"
is "$T_RC" 0 "live: run exits 0"
is "$(grep -c '"budget_reached"' "$R.out")" 0 "live: the old budget was never reached"
is "$(jget "$F" '[d["status"], d["budget"]]')" '["completed",{"max_wall_ms":60000}]' \
    "live: completed, the raised budget kept"

# --- serve: the budget in the create body, raised by the resume body
counter_root srv
srv_start "$T_TMP/s" -C "$R"
ok $? "serve: listens"
req POST /api/loops/v2 "{\"title\": \"Count\", \"budget\": {\"max_wall_ms\": $(t_ms 2000)}}"
ID=$(jr 'd["body"]["data"]["loop_id"]')
req POST "/api/loops/v2/$ID/start"
srv_wait_status "$ID" paused "$(t_ms 15000)"
ok $? "serve: paused at the create body's budget"
F=$R/.loop/$ID.json
like "$(jget "$F" 'd["pause_reason"]')" "reached --max-time $(t_ms 2000)\$" \
    "serve: pause_reason in the state"
req POST /api/loops/v2 '{"title": "Bad", "budget": {"max_tokens": "lots"}}'
is "$(jr 'd["status"]')" 400 "serve: a bad budget is refused (400)"
req POST "/api/loops/v2/$ID/resume" '{"budget": {"max_wall_ms": 60000}}'
is "$(jr 'd["status"]')" 200 "serve: resume with a raised budget"
n1=$(cat "$C" 2>/dev/null || echo 0)
counts_on "$C" "$n1"
ok $? "serve: develop counts on from $n1"
srv_wait_status "$ID" completed "$(t_ms 20000)"
ok $? "serve: the loop completes"
is "$(jget "$F" 'd["budget"]')" '{"max_wall_ms":60000}' "serve: the raised budget saved"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 10000

# --- bad budgets: usage errors
for a in "--max-time 0" "--max-cost-usd x" "--max-tokens -5"; do
	$WRAP "$SUP" run -C "$T_TMP/bad" $a "task" >/dev/null 2>"$T_TMP/bad.err"
	is "$?" 2 "usage: run $a exits 2"
done

t_done
