#!/bin/bash
# loop-guard.sh: what keeps a loop's drivers and workers apart: agent ids
# never reused in a loop (a new agent never reads an older agent's log),
# one driver per loop (the run lock, refused with the holder's pid, freed
# by a kill -9), a symlinked ID.workers refused, and a parallel step that
# failed in every role retried only after the retry policy's wait.
. "$(dirname "$0")/lib.sh"
t_watchdog 150
t_valgrind_worker
t_marker M guard
t_slack

OK="exec '$FAKE' --marker $M result success"
NO="exec '$FAKE' --marker $M result failed 'no luck'"

# wait_for FILE MS: poll until FILE exists.
wait_for() {
	local end=$(( $(t_now_ms) + $2 ))
	until [ -e "$1" ]; do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# held_run ROOT ID GO: a run in the background whose develop waits for the
# file GO; returns once develop (agent-2) started.  $R, $GO, $PID.
held_run() {
	R=$1
	GO=$3
	t_run_config "$R" "$OK" \
	    "exec '$FAKE' --marker $M wait-file $GO result success" \
	    "$OK" "$OK" "$OK" '{"grace_ms": 500}'
	t_loop_start "$R" "$2" "Held at develop"
	wait_for "$R/.loop/$2.workers/agent-2.log" "$(t_ms 20000)"
}

# --- (7) a second agent in a loop is agent-2, with a log of its own
S=$T_TMP/s7
agent "$T_TMP/a1" develop --tool bash --state-dir "$S" --loop-id L7 \
    --command "$OK 'first summary'" go
is "$?" 0 "ids: the first agent completes"
agent "$T_TMP/a2" develop --tool bash --state-dir "$S" --loop-id L7 \
    --command "exit 3" go
is "$?" 1 "ids: a silent tool that exits 3: exit 1"
is "$(jget "$T_TMP/a2" '[d["agent_id"], d["status"],
    d["summary"] != "first summary"]')" '["agent-2","failed",true]' \
    "ids: it is agent-2, failed, not the first agent's summary"
like "$(cat "$S/L7.workers/agent-1.log")" 'first summary' \
    "ids: agent-1's log is left as it was"
ok $([ -e "$S/L7.workers/agent-2.log" ] && \
    ! grep -q 'first summary' "$S/L7.workers/agent-2.log"; echo $?) \
    "ids: agent-2's log is its own"
ctl_start "$T_TMP/ctl7" --state-dir "$S" --loop-id L7
ctl_send '{"id":1,"verb":"spawn","role":"develop","message":"go","tool":"bash","command":"exit 3"}'
is "$(ctl_recv 1 | jget - 'd["agent_id"]')" agent-3 \
    "ids: control in the same loop goes on at agent-3"
ctl_send '{"id":2,"verb":"wait","targets":["agent-3"],"timeout_ms":20000}'
ctl_recv 2 25000 >/dev/null
ctl_send '{"id":3,"verb":"result","target":"agent-3"}'
is "$(ctl_recv 3 | jget - 'd["result"]["status"]')" failed \
    "ids: control's agent-3 failed too"
ctl_stop
# a resumed run: the ids the state recorded count, even with no logs left
R=$T_TMP/r7
t_run_config "$R" "$OK" "$NO" "$OK" "$OK" "$OK"
t_loop_run "$R" res7 "Fail at develop"
is "$RC" 1 "ids: the first run fails at develop"
is "$(jget "$F" 'd["skill_state"]["worker_results"]["develop"]["agent_id"]')" \
    agent-2 "ids: develop was agent-2"
rm -f "$R"/.loop/res7.workers/agent-*
t_run_config "$R" "$OK" "$OK" "$OK" "$OK" "$OK"
t_loop_run "$R" res7
is "$RC" 0 "ids: the resumed run completes"
is "$(jget "$F" 'd["skill_state"]["worker_results"]["develop"]["agent_id"]')" \
    agent-3 "ids: its develop is agent-3, past the recorded agent-2"

# --- (8) one driver per loop
held_run $T_TMP/r8 one8 $T_TMP/go8
ok $? "lock: the first run reached develop"
P1=$PID
F=$R/.loop/one8.json
timeout -k 2 60 $WRAP "$SUP" run -C "$R" --loop-id one8 >"$R.out2" \
    2>"$R.err2"
is "$?" 1 "lock: a second run of the loop exits 1"
like "$(cat "$R.err2")" "pid $P1" "lock: its message names the holder's pid"
ok $([ ! -e "$R/.loop/one8.workers/agent-3.log" ]; echo $?) \
    "lock: the second run started no worker"
: >"$GO"
t_wait_pid "$P1" 30000
is "$T_RC" 0 "lock: the first run completes"
is "$(jget "$F" 'd["skill_state"]["completed_actions"]')" \
    '["init","develop","debug","validate","complete"]' \
    "lock: each action recorded once"
is "$(grep -c '"event":"action"' "$R/.loop/one8.history.jsonl")" 5 \
    "lock: five actions in the history"
S=$T_TMP/s8
ctl_start "$T_TMP/ctl8" --state-dir "$S" --loop-id c8
ctl_send '{"id":1,"verb":"list"}'
ctl_recv 1 >/dev/null
agent "$T_TMP/a8" develop --tool bash --state-dir "$S" --loop-id c8 \
    --command "$OK" go
is "$?" 1 "lock: agent on a loop control drives: exit 1"
like "$(cat "$T_TMP/a8.err")" "pid $CTL_PID" \
    "lock: agent's refusal names control's pid"
ctl_stop
# a holder killed with SIGKILL leaves its pid in the file: no matter
held_run $T_TMP/r8k kill8 $T_TMP/go8k
ok $? "kill: the run reached develop"
{ kill -KILL "$PID"; t_wait_pid "$PID" 5000; } 2>/dev/null
like "$(cat "$R/.loop/kill8.run.lock")" "^$PID" \
    "kill: the dead holder's pid is still in the lock file"
: >"$GO"
t_loop_run "$R" kill8
is "$RC" 0 "kill: a new run of the loop proceeds and completes"
# the dead holder's fd outlives it a moment (a child between fork and
# exec holds a copy): the lock names a dead pid but is still held.  A
# new run waits for that copy to close instead of being refused.
true & DEAD=$!
wait "$DEAD"
printf '%s\n' "$DEAD" >"$R/.loop/kill8.run.lock"
flock -x "$R/.loop/kill8.run.lock" sleep 0.5 &
HOLD=$!
end=$(t_until 5000)
while flock -n "$R/.loop/kill8.run.lock" true && [ "$(t_now_ms)" -lt "$end" ]
do
	sleep 0.01
done
! flock -n "$R/.loop/kill8.run.lock" true
ok $? "copy: the lock is held by a process other than the dead pid"
t_run_config "$R" "$OK" "$OK" "$OK" "$OK" "$OK"
t_loop_run "$R" kill8
wait "$HOLD"
is "$RC" 0 "copy: a run waits for a dead holder's copy, and completes"

# --- (9) a symlinked ID.workers is refused, nothing written through it
S=$T_TMP/s9
mkdir -p "$S" "$T_TMP/target9"
ln -s "$T_TMP/target9" "$S/L9.workers"
agent "$T_TMP/a9" develop --tool bash --state-dir "$S" --loop-id L9 \
    --command "$OK" go
ok $(( $? == 0 )) "link: agent refuses a symlinked L9.workers"
like "$(cat "$T_TMP/a9.err")" 'L9.workers: is a symbolic link' \
    "link: agent says why"
ctl_start "$T_TMP/ctl9" --state-dir "$S" --loop-id L9
ctl_stop
ok $(( T_RC == 0 )) "link: control refuses it too"
R=$T_TMP/r9
mkdir -p "$R/.loop"
ln -s "$T_TMP/target9" "$R/.loop/run9.workers"
t_run_config "$R" "$OK" "$OK" "$OK" "$OK" "$OK"
t_loop_run "$R" run9 "Through a link"
ok $(( RC == 0 )) "link: run refuses a symlinked run9.workers"
like "$(cat "$R.err")" 'run9.workers: is a symbolic link' "link: run says why"
is "$(ls -A "$T_TMP/target9")" "" "link: nothing was written into the target"

# --- (13) a parallel step failing in every role waits before each retry
R=$T_TMP/r13
t_run_config "$R" "$OK" "$NO" "$NO" "$NO" "$OK" '{"grace_ms": 500,
    "retry": {"attempts": 3, "initial_interval_ms": 300,
    "backoff_coefficient": 2, "maximum_interval_ms": 1000}}'
t_loop_run "$R" par13 -m parallel -n 10 --json "Never works"
is "$RC" 1 "retry: exit 1"
like "$(jget "$F" 'd["failure_reason"]')" '3 times in a row .*3 attempts' \
    "retry: failed once the three attempts were spent"
is "$(python3 - "$R.out" <<'PYEOF'
import json, sys
from datetime import datetime
def ms(e):
    t = datetime.strptime(e["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ")
    return t.timestamp() * 1000
ev = [json.loads(l) for l in open(sys.argv[1])]
starts = [e for e in ev if e["event"] == "worker_started" and e["role"] != "init"]
retries = [e for e in ev if e["event"] == "step_retry"]
out = [len(starts), [(r["attempt"], r["delay_ms"]) for r in retries]]
# each retried batch starts at least its delay after the last result before
for r in retries:
    i = ev.index(r)
    last = max(ms(e) for e in ev[:i] if e["event"] == "worker_result")
    first = min(ms(e) for e in ev[i:] if e["event"] == "worker_started")
    out.append(first - last >= r["delay_ms"] - 1)
print(json.dumps(out, separators=(",", ":")))
PYEOF
)" '[9,[[2,300],[3,600]],true,true]' \
    "retry: three batches; tries 2 and 3 after 300 and 600 ms at least"
is "$(grep -c '"event":"step_retry"' "$R/.loop/par13.history.jsonl")" 2 \
    "retry: the two waits are in the history"

t_wait_gone "$M" 2000
ok $? "no fake agent left"
t_done
