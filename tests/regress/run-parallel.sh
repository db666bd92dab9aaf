#!/bin/bash
# run-parallel.sh: `ccw-supervisor run -m parallel`: develop, debug and
# validate at once after init, merged in role order into parallel_results
# with file conflicts; a worker that misses the batch deadline is nudged,
# then closed, and the others' results are merged all the same.
. "$(dirname "$0")/lib.sh"
t_watchdog 120
t_valgrind_worker
t_marker M par
t_slack

cfg() { t_run_config "$@" '{"grace_ms": 500}'; }

# run ROOT ID ARGS...: a parallel loop, 60 s at most; $RC, $F.
run() {
	local root=$1 id=$2
	shift 2
	timeout -k 2 60 $WRAP "$SUP" run -m parallel -C "$root" \
	    --loop-id "$id" "$@" >"$root.out" 2>"$root.err"
	RC=$?
	F=$root/.loop/$id.json
	[ "$RC" -eq 124 ] && sed 's/^/#   /' "$root.err" | tail -n 5
}

OK="exec '$FAKE' --marker $M result success"
SLOW="exec '$FAKE' --marker $M sleep 800 result success"
PR='d["skill_state"]["parallel_results"]'

# --- three workers at once, merged
R=$T_TMP/all
cfg "$R" "$OK init" "$SLOW 'dev done' '[\"src/a.c\"]'" "$SLOW 'dbg done'" \
    "$SLOW 'tests pass'" "$OK bye"
t0=$(t_now_ms)
run "$R" all-1 --json "Do it in parallel"
el=$(( $(t_now_ms) - t0 ))
is "$RC" 0 "parallel: exit 0"
is "$(jget "$F" '[d["status"], d["skill_state"]["mode"]]')" \
    '["completed","parallel"]' "parallel: completed, mode parallel"
$WRAP "$SUP" state -C "$R" validate all-1 >/dev/null 2>&1
ok $? "parallel: the state file is valid"
is "$(jget "$F" "[$PR[r][\"status\"] for r in (\"develop\", \"debug\", \"validate\")]")" \
    '["success","success","success"]' "parallel: parallel_results for each role"
is "$(jget "$F" "[$PR[\"conflicts\"], isinstance($PR[\"merged_at\"], str)]")" \
    '[[],true]' "parallel: no conflict, merged_at"
is "$(jget "$F" 'd["skill_state"]["completed_actions"]')" \
    '["init","develop","debug","validate","complete"]' \
    "parallel: completed actions in role order"
is "$(jget "$F" 'd["current_iteration"]')" 1 "parallel: one iteration"
t_within "$el" 3999 "parallel: the three 800 ms workers overlapped ($el ms)"
is "$(python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
roles = ("develop", "debug", "validate")
started = [i for i, e in enumerate(ev) if e["event"] == "worker_started" and e["role"] in roles]
results = [i for i, e in enumerate(ev) if e["event"] == "worker_result" and e["role"] in roles]
print(len(started), len(results), max(started) < min(results))' "$R.out")" \
    "3 3 True" "parallel: --json: all three started before any result"
# steps_of FILE: each LOOP_STEP_COMPLETED of run's --json output, in order
steps_of() {
	python3 -c '
import json, sys
print(json.dumps([[e["step_id"], e["status"]] for e in map(json.loads, open(sys.argv[1]))
    if e["event"] == "LOOP_STEP_COMPLETED"]))' "$1"
}
is "$(steps_of "$R.out")" '[["init", "success"], ["parallel", "success"], ["complete", "success"]]' \
    "parallel: --json: a LOOP_STEP_COMPLETED per step, the group one step"

# --- a path two workers changed (observed, and claimed by each) is a
# conflict; the workers share the directory, so each may observe both
R=$T_TMP/conflict
cfg "$R" "$OK" "mkdir -p src; echo d >>src/a.c; $OK dev '[\"src/a.c\"]'" \
    "mkdir -p src; echo b >>src/b.c; echo b >>src/a.c; $OK dbg '[\"src/b.c\", \"./src/a.c\"]'" \
    "$OK val" "$OK"
run "$R" conflict-1 "Two writers"
is "$RC" 0 "conflict: exit 0"
is "$(jget "$F" "$PR[\"conflicts\"]")" \
    '[{"file":"src/a.c","workers":["develop","debug"],"resolution":"manual"}]' \
    "conflict: src/a.c, develop and debug, manual"
is "$(python3 -c '
import json, sys
print(sorted(set(json.loads(l)["file"] for l in open(sys.argv[1]))))' \
    "$R/.loop/conflict-1.progress/changes.log")" \
    "['src/a.c', 'src/b.c']" "conflict: changes.log has every change (as observed)"

# --- a worker misses the batch deadline: nudged, closed; the rest merged
R=$T_TMP/late
cfg "$R" "$OK" "exec '$FAKE' --marker $M hang" "$OK dbg" "$OK val" "$OK"
# (the batch must leave the others time to start and answer: t_ms)
BM=$(t_ms 700) BN=$(t_ms 400)
t0=$(t_now_ms)
run "$R" late-1 --json --batch-ms $BM --batch-nudge-ms $BN "One is stuck"
el=$(( $(t_now_ms) - t0 ))
is "$RC" 0 "late: exit 0 (validate passed)"
is "$(jget "$R/.loop/late-1.workers/develop.output.json" '[d["nudged"], d["timed_out"], d["outcome"]]')" \
    '[true,true,"failed"]' "late: develop was nudged, then timed out"
is "$(jget "$F" "[$PR[\"develop\"][\"timed_out\"], $PR[\"debug\"][\"status\"], $PR[\"validate\"][\"status\"]]")" \
    '[true,"success","success"]' "late: the others' results are merged"
is "$(jget "$F" '[(e["action"], e["message"]) for e in d["skill_state"]["errors"]]')" \
    '[["develop","worker timeout"]]' "late: the timeout is in errors"
is "$(jget "$F" 'd["skill_state"]["develop"]["tasks"][0]["status"]')" failed \
    "late: develop's task failed"
is "$(steps_of "$R.out")" '[["init", "success"], ["parallel", "partial"], ["complete", "success"]]' \
    "late: --json: the group's step is partial, one role failed"
ok $(( el < BM + BN )) "late: not before batch + nudge ($el ms)"
t_wait_gone "$M" 2000
ok $? "late: the stuck tool is gone"

# --- the nudge makes a stuck worker converge
R=$T_TMP/nudge
cfg "$R" "$OK" "exec '$FAKE' --marker $M on-input-result success" "$OK" \
    "$OK" "$OK"
run "$R" nudge-1 --batch-ms 500 --batch-nudge-ms 5000 "Converge"
is "$RC" 0 "nudge: exit 0"
is "$(jget "$F" "[$PR[\"develop\"][\"status\"], $PR[\"develop\"][\"timed_out\"]]")" \
    '["success",false]' "nudge: develop converged after the nudge"
like "$(cat "$R"/.loop/nudge-1.workers/agent-*.log)" 'input: ## TIMEOUT' \
    "nudge: it got the ## TIMEOUT text"

# --- validation never passes: the batch runs again until max_iterations
R=$T_TMP/again
cfg "$R" "$OK" "$OK" "$OK" "exec '$FAKE' --marker $M result failed 'still red'" \
    "$OK"
run "$R" again-1 -n 2 "Never green"
is "$RC" 1 "again: exit 1"
is "$(jget "$F" '[d["status"], d["failure_reason"], d["current_iteration"]]')" \
    '["failed","max_iterations 2 reached",2]' "again: two batches, then failed"
is "$(jget "$F" 'len(d["skill_state"]["errors"])')" 2 \
    "again: each failed validate is an error, not the end"

t_wait_gone "$M" 2000
ok $? "no fake agent left"
t_done
