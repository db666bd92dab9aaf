#!/bin/bash
# api-verbs.sh: the verb table through `control`: loop_pause and loop_stop
# on a loop `run` drives (run exits 3 and 4), loop_resume and loop_status;
# garbage, wrongly typed and oversized requests answered with JSON errors
# while control keeps serving; close's default grace after a spawn;
# SIGTERM to control closes every agent and exits 4; loop_open with
# "start": true runs a loop in control's session to completion, a second
# start of it is refused naming the pid, a start once it completed is
# refused as completed, and EOF waits for it.
. "$(dirname "$0")/lib.sh"
t_watchdog 150
t_valgrind_worker
t_marker M api
t_slack

OK="exec '$FAKE' --marker $M result success"
HANG="exec '$FAKE' --marker $M hang"

# term_control NAME: SIGTERM to the control session: exit 4 within 2 s,
# no worker or tool of the test left.
term_control() {
	local t0 el
	t0=$(t_now_ms)
	kill -TERM "$CTL_PID"
	t_wait_pid "$CTL_PID" 10000
	el=$(( $(t_now_ms) - t0 ))
	is "$T_RC" 4 "$1: control exits 4"
	t_within "$el" 2000 "$1: out within 2 s ($el ms)"
	t_wait_gone "$M" 1000
	ok $? "$1: no worker or tool left"
}

# hosted_start NAME ID DEVELOP [EXTRA_JSON]: a project $T_TMP/NAME ($R)
# whose develop touches $R.dev and then runs DEVELOP, a control session on
# it (its output $T_TMP/NAME.ctl) hosting loop ID with "start": true;
# checks it started and its develop runs.
hosted_start() {
	R=$T_TMP/$1
	t_run_config "$R" "$OK init" "touch '$R.dev'; $3" "$OK dbg" \
	    "$OK val" "$OK done" ${4:+"$4"}
	ctl_start "$T_TMP/$1.ctl" -C "$R"
	ctl_send "{\"id\":1,\"verb\":\"loop_open\",\"loop_id\":\"$2\",\
\"task\":\"Host $1\",\"start\":true}"
	r=$(ctl_recv 1 10000)
	is "$(jget - 'd["ok"]' <<<"$r")" true "$1: started"
	t_wait_file "$R.dev" 10000
	ok $? "$1: develop is running"
}

# --- loop_pause on a loop run drives: the step finishes, run exits 3
R=$T_TMP/pause
t_run_config "$R" "$OK" \
    "touch '$R.dev'; exec '$FAKE' --marker $M wait-file '$R.go' result success dev" \
    "touch '$R.dbg'; $OK" "$OK" "$OK" '{"grace_ms": 500}'
t_loop_start "$R" p-1 "Pause me"
t_wait_file "$R.dev" 10000
ok $? "pause: develop is running"
ctl_start "$T_TMP/c1" -C "$R"
ctl_send '{"id":1,"verb":"loop_status","loop_id":"p-1"}'
r=$(ctl_recv 1)
is "$(jget - '[d["ok"], d["status"], d["loop"]["title"]]' <<<"$r")" \
    '[true,"running","Pause me"]' "loop_status: running, the state in loop"
ctl_send '{"id":2,"verb":"loop_pause","loop_id":"p-1"}'
r=$(ctl_recv 2)
is "$(jget - '[d["ok"], d["previous_status"], d["status"]]' <<<"$r")" \
    '[true,"running","paused"]' "loop_pause answers running -> paused"
touch "$R.go"			# develop may finish now
t_wait_pid "$PID" 10000
is "$T_RC" 3 "pause: run exits 3"
ok $([ ! -e "$R.dbg" ]; echo $?) "pause: no new worker after the pause"
is "$(jget "$F" '[d["status"], d["skill_state"]["completed_actions"]]')" \
    '["paused",["init","develop"]]' "pause: paused, develop's result kept"
ctl_send '{"id":3,"verb":"loop_pause","loop_id":"p-1"}'
r=$(ctl_recv 3)
is "$(jget - '[d["ok"], d["error"]]' <<<"$r")" \
    '[false,"cannot pause loop p-1: its status is paused"]' \
    "a second pause is refused, saying why"
ctl_send '{"id":4,"verb":"loop_resume","loop_id":"p-1"}'
r=$(ctl_recv 4)
is "$(jget - '[d["ok"], d["previous_status"], d["status"]]' <<<"$r")" \
    '[true,"paused","running"]' "loop_resume: paused -> running"
is "$(jget "$F" 'd["status"]')" running "loop_resume: running on disk"
ctl_stop 10000
is "$T_RC" 0 "control: EOF, exit 0"

# --- loop_stop in the middle of a parallel step: run closes all, exit 4
R=$T_TMP/stop
t_run_config "$R" "$OK" "$HANG" "$HANG" "$HANG" "$OK" '{"grace_ms": 500}'
t_loop_start "$R" s-1 -m parallel "Stop me"
t_wait_count "$M" 3 10000
ok $? "stop: three workers running"
ctl_start "$T_TMP/c2" -C "$R"
t0=$(t_now_ms)
ctl_send '{"id":1,"verb":"loop_stop","loop_id":"s-1"}'
r=$(ctl_recv 1)
is "$(jget - '[d["ok"], d["status"]]' <<<"$r")" '[true,"failed"]' \
    "loop_stop answers failed"
t_wait_pid "$PID" 10000
el=$(( $(t_now_ms) - t0 ))
is "$T_RC" 4 "stop: run exits 4"
t_within "$el" 2500 "stop: run out within 2.5 s ($el ms)"
t_wait_gone "$M" 1000
ok $? "stop: no worker left"
is "$(jget "$F" '[d["status"], d["failure_reason"]]')" \
    '["failed","Manually stopped by user"]' "stop: CCW's status and reason"
$WRAP "$SUP" state -C "$R" validate s-1 >/dev/null 2>&1
ok $? "stop: the state file is valid"

# --- garbage, wrong types, oversized: JSON errors, control survives
ctl_send 'not json at all' '[1,2]' '{"id":2,"verb":"spawn","role":123}' \
    '{"id":3,"verb":"wait","targets":[],"mode":"all"}' \
    '{"id":4,"verb":"loop_pause","loop_id":"../etc"}' \
    '{"id":5}' '{"id":6,"verb":"loop_open","title":""}'
r=$(ctl_recv 2)
like "$(jget - 'd["error"]' <<<"$r")" 'spawn: "role" must be a string' \
    "a wrongly typed member: named"
r=$(ctl_recv 3)
like "$(jget - 'd["error"]' <<<"$r")" 'non-empty array' "an empty targets"
r=$(ctl_recv 4)
like "$(jget - 'd["error"]' <<<"$r")" 'Invalid loop ID format' \
    "a loop id with a path refused"
r=$(ctl_recv 5)
like "$(jget - 'd["error"]' <<<"$r")" 'no "verb"' "no verb"
r=$(ctl_recv 6)
like "$(jget - 'd["error"]' <<<"$r")" 'title is required' "an empty title"
python3 -c 'import sys; sys.stdout.write("{\"id\":7,\"verb\":\"spawn\",\"role\":\"develop\",\"message\":\"" + "x" * (5 << 20) + "\"}\n")' >&"$CTL_FD"
r=$(ctl_recv 7 10000)
like "$(jget - 'd["error"]' <<<"$r")" 'at most 4194304 bytes' \
    "a 5 MiB message: refused by its size"
head -c $((17 << 20)) /dev/zero | tr '\0' x >&"$CTL_FD"
printf '\n{"id":8,"verb":"list"}\n' >&"$CTL_FD"
r=$(ctl_recv 8 10000)
is "$(jget - '[d["ok"], d["agents"]]' <<<"$r")" '[true,{}]' \
    "still serving after all that"
like "$(grep -c 'longer than 16777216 bytes' "$T_TMP/c2")" '^1$' \
    "a 17 MiB line: one error"
is "$(grep -c '"ok":false' "$T_TMP/c2")" 9 "one JSON error per bad request"
ctl_stop 10000
is "$T_RC" 0 "control: EOF, exit 0"

# --- close's default grace stays 5 s after a spawn (it used to become 0:
# the spawn's plan wrote the role's settings into control's options)
R=$T_TMP/grace
mkdir -p "$R"
ctl_start "$T_TMP/c4" -C "$R"
ctl_send "{\"id\":1,\"verb\":\"spawn\",\"role\":\"develop\",\"tool\":\"bash\",\
\"command\":\"exec '$FAKE' --marker $M ignore-term hang\"}"
r=$(ctl_recv 1)
t_wait_ignoring "$M" 10000
ok $? "grace: the tool ignores TERM"
t0=$(t_now_ms)
ctl_send '{"id":2,"verb":"close","target":"agent-1"}'
r=$(ctl_recv 2 20000)
el=$(( $(t_now_ms) - t0 ))
is "$(jget - 'd["ok"]' <<<"$r")" true "grace: close answers"
ok $(( el < 4500 )) "grace: a tool ignoring TERM gets the 5 s grace ($el ms)"
ctl_stop 10000
t_wait_gone "$M" 1000
ok $? "grace: nothing left"

# --- SIGTERM to control: every agent closed by the ladder, exit 4
R=$T_TMP/term
mkdir -p "$R"
ctl_start "$T_TMP/c3" -C "$R" --grace-ms 300
ctl_send "{\"id\":1,\"verb\":\"spawn\",\"role\":\"develop\",\"tool\":\"bash\",\
\"command\":\"$HANG\"}" "{\"id\":2,\"verb\":\"spawn\",\"role\":\"debug\",\
\"tool\":\"bash\",\"command\":\"exec '$FAKE' --marker $M ignore-term hang\"}"
r=$(ctl_recv 2)
is "$(jget - 'd["ok"]' <<<"$r")" true "sigterm: two agents spawned"
t_wait_count "$M" 2 10000
ok $? "sigterm: both tools running"
ctl_send '{"id":3,"verb":"wait","targets":["agent-1","agent-2"],"mode":"all"}'
term_control sigterm
r=$(ctl_recv 3 100)
is "$(jget - '[d["ok"], sorted(d["status"].values())]' <<<"$r")" \
    '[true,["shutdown","shutdown"]]' "sigterm: the pending wait was answered"
exec {CTL_FD}>&-

# --- loop_open "start": true: control hosts the loop; loop_status follows
R=$T_TMP/hosted
t_run_config "$R" "$OK init" \
    "exec '$FAKE' --marker $M wait-file '$R.go' result success dev" \
    "$OK dbg" "$OK val" "$OK done"
ctl_start "$T_TMP/c5" -C "$R"
ctl_send '{"id":1,"verb":"loop_open","loop_id":"h-1","task":"Hosted by control","start":true}'
r=$(ctl_recv 1 10000)
is "$(jget - '[d["ok"], d["status"], d["started"], d["mode"]]' <<<"$r")" \
    '[true,"running",true,"auto"]' "hosted: loop_open start answers running"
ctl_send '{"id":2,"verb":"loop_open","loop_id":"h-1","start":true}'
r=$(ctl_recv 2 10000)
like "$(jget - 'd["error"]' <<<"$r")" \
    "loop h-1 is already running in this host \(pid $CTL_PID\)" \
    "hosted: a second start is refused, naming the driver's pid"
ctl_send '{"id":3,"verb":"loop_open","loop_id":"h-2","mode":"parallel"}'
r=$(ctl_recv 3)
like "$(jget - 'd["error"]' <<<"$r")" 'go with "start"' \
    "hosted: mode without start is refused"
touch "$R.go"
n=10 st=none end=$(( $(t_now_ms) + $(t_ms 30000) ))
while [ "$st" != completed ] && [ "$(t_now_ms)" -lt "$end" ]; do
	n=$((n + 1))
	ctl_send "{\"id\":$n,\"verb\":\"loop_status\",\"loop_id\":\"h-1\"}"
	st=$(jget - 'd["status"]' <<<"$(ctl_recv $n)")
	[ "$st" = completed ] || sleep 0.1
done
is "$st" completed "hosted: loop_status says completed"
is "$(jget "$R/.loop/h-1.json" 'd["skill_state"]["completed_actions"]')" \
    '["init","develop","debug","validate","complete"]' "hosted: the five actions"
$WRAP "$SUP" state -C "$R" validate h-1 >/dev/null 2>&1
ok $? "hosted: the state file is valid"
# started again once the host let it go: refused, never said running (its
# end would never come, and EOF below would wait for it)
n=100 msg=none end=$(( $(t_now_ms) + $(t_ms 10000) ))
while [ "$(t_now_ms)" -lt "$end" ]; do
	n=$((n + 1))
	ctl_send "{\"id\":$n,\"verb\":\"loop_open\",\"loop_id\":\"h-1\",\"start\":true}"
	msg=$(jget - 'd.get("error") or d.get("status")' <<<"$(ctl_recv $n 10000)")
	case $msg in *"already running"*) sleep 0.1 ;; *) break ;; esac
done
like "$msg" 'loop h-1 is already completed' \
    "hosted: a start of the completed loop is refused: $msg"
ctl_stop 10000
is "$T_RC" 0 "hosted: EOF, exit 0"

# --- EOF while a hosted loop runs: control waits for its end, exit 0
hosted_start hosted-eof e-1 \
    "exec '$FAKE' --marker $M wait-file '$T_TMP/hosted-eof.go' result success dev"
# (had EOF stopped the loop, its develop would be killed: never completed)
exec {CTL_FD}>&-
touch "$R.go"
t_wait_pid "$CTL_PID" 20000
is "$T_RC" 0 "hosted-eof: control exits 0 once the loop ended"
is "$(jget "$R/.loop/e-1.json" 'd["status"]')" completed \
    "hosted-eof: the loop completed"

# --- SIGTERM with a hosted loop running: it is stopped, control exits 4
hosted_start hosted-term t-1 "$HANG" '{"grace_ms": 500}'
term_control hosted-term
is "$(jget "$R/.loop/t-1.json" '[d["status"], d["skill_state"]["completed_actions"]]')" \
    '["running",["init"]]' "hosted-term: status left running for run --loop-id"
exec {CTL_FD}>&-

t_done
