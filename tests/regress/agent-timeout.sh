#!/bin/bash
# agent-timeout.sh: the deadline policy of `ccw-supervisor agent`: a stuck
# tool is nudged and converges; one stuck twice is killed with a
# synthesized result; SIGTERM ignored means SIGKILL after the grace; and a
# grandchild that left the group does not survive.
. "$(dirname "$0")/lib.sh"
t_watchdog 50
t_valgrind_worker
t_marker M timeout
S=$T_TMP/state
R=$T_TMP/r
# A wrapper such as valgrind slows the supervisor; timing bounds get room.
t_slack
# The short deadlines below must leave a worker time to start its tool
# (STARTED, the tool's first line) before they run out: under valgrind a
# worker takes a second or two to start, so they scale with t_ms.
D=$(t_ms 300)

# -- stuck until nudged, then converges
agent "$R" develop --tool bash --state-dir "$S" --timeout-ms 500 \
    --nudge-ms 3000 --grace-ms 500 \
    --command "exec '$FAKE' --marker $M on-input-result success" "go"
rc=$?
is "$rc" 0 "nudged: exit 0"
is "$(jget "$R" '[d["agent_status"], d["status"], d["nudged"], d["timed_out"]]')" \
    '["completed","success",true,false]' "nudged: completed, success, nudged"
log=$(jget "$R" 'd["log_path"]')
like "$(cat "$log" 2>/dev/null)" 'input: ## TIMEOUT' \
    "nudged: the tool got the ## TIMEOUT line on stdin"
is "$(jget "$R" 'd["duration_ms"] >= 500')" true "nudged: not before the timeout"

# -- stuck twice: killed, synthesized failure, exit 5
t0=$(t_now_ms)
agent "$R" develop --tool bash --state-dir "$S" --timeout-ms $D \
    --nudge-ms $D --grace-ms 400 \
    --command "exec '$FAKE' --marker $M hang" "go"
rc=$?
el=$(( $(t_now_ms) - t0 ))
echo "# timing: hang twice took $el ms (bound $((D + D + 400 + 1000 + SLACK)))"
is "$rc" 5 "killed: exit 5"
is "$(jget "$R" '[d["status"], d["summary"], d["timed_out"], d["nudged"]]')" \
    '["failed","Worker timeout",true,true]' \
    "killed: status failed, Worker timeout, timed_out, nudged"
ok $(( el < 2 * D )) "killed: not before timeout + nudge ($el ms)"
t_within "$el" $((D + D + 400 + 1000)) \
    "killed: within timeout + nudge + grace + 1 s ($el ms)"
pid=$(jget "$R" 'd["pid"]')
like "$pid" '^[0-9]+$' "killed: the tool pid is reported"
t_wait_gone "$M" 1000; ok $? "killed: the tool is gone"

# -- SIGTERM ignored: SIGKILL after the grace
t0=$(t_now_ms)
agent "$R" develop --tool bash --state-dir "$S" --timeout-ms $D \
    --nudge-ms $D --grace-ms 1000 \
    --command "exec '$FAKE' --marker $M ignore-term hang" "go"
rc=$?
el=$(( $(t_now_ms) - t0 ))
echo "# timing: SIGTERM ignored took $el ms (close at ~600 ms, grace 1000 ms)"
is "$rc" 5 "ignore-term: exit 5"
is "$(jget "$R" '[d["timed_out"], d["status"]]')" '[true,"failed"]' \
    "ignore-term: timed out, failed"
is "$(jget "$R" 'd["signal"]')" 9 \
    "ignore-term: the result records that the tool died of SIGKILL"
ok $(( el < D + D + 1000 )) "ignore-term: not killed before the grace ($el ms)"
t_within "$el" $((D + D + 1000 + 1000)) \
    "ignore-term: killed within grace + 1 s of the close ($el ms)"
t_wait_gone "$M" 1000; ok $? "ignore-term: the tool is gone"

# -- a grandchild in its own session holding stdout, tool finishes
t0=$(t_now_ms)
agent "$R" develop --tool bash --state-dir "$S" --timeout-ms 10000 \
    --nudge-ms 1000 --grace-ms 500 \
    --command "exec '$FAKE' --marker $M fork-grandchild result success" "go"
rc=$?
el=$(( $(t_now_ms) - t0 ))
echo "# timing: finished tool with a grandchild took $el ms"
is "$rc" 0 "grandchild, tool done: exit 0"
is "$(jget "$R" 'd["status"]')" success "grandchild, tool done: success"
t_within "$el" 6000 "grandchild, tool done: no wait for the grandchild"
gc=$(sed -n 's/^grandchild: //p' "$(jget "$R" 'd["log_path"]')" 2>/dev/null)
like "$gc" '^[0-9]+$' "grandchild, tool done: the grandchild was started"
t_wait_gone "$M" 2000; ok $? "grandchild, tool done: nothing with the marker survives"

# -- the same grandchild, tool stuck until killed
agent "$R" develop --tool bash --state-dir "$S" --timeout-ms $D \
    --nudge-ms $D --grace-ms 300 \
    --command "exec '$FAKE' --marker $M fork-grandchild hang" "go"
rc=$?
is "$rc" 5 "grandchild, tool killed: exit 5"
gc=$(sed -n 's/^grandchild: //p' "$(jget "$R" 'd["log_path"]')" 2>/dev/null)
like "$gc" '^[0-9]+$' "grandchild, tool killed: the grandchild was started"
pgid=$(jget "$R" 'd["pid"]')
t_wait_gone "$M" 2000; ok $? "grandchild, tool killed: nothing with the marker survives"
ok $(pgrep -g "$pgid" >/dev/null; echo $((! $?))) \
    "grandchild, tool killed: the tool's process group is empty"

# -- --idle-ms: silence counts as a timeout long before the deadline
t0=$(t_now_ms)
agent "$R" develop --tool bash --state-dir "$S" --timeout-ms 20000 \
    --idle-ms "$(t_ms 300)" --nudge-ms 300 --grace-ms 300 \
    --command "exec '$FAKE' --marker $M hang" "go"
rc=$?
el=$(( $(t_now_ms) - t0 ))
echo "# timing: silent tool with --idle-ms 300 killed after $el ms (deadline 20000)"
is "$rc" 5 "idle: exit 5"
is "$(jget "$R" '[d["status"], d["timed_out"], d["nudged"]]')" \
    '["failed",true,true]' "idle: nudged, then timed out"
idle=$(t_ms 300)
ok $(( el < 2 * idle )) "idle: not before two idle periods ($el ms)"
t_within "$el" $((2 * idle + 3000)) "idle: after two idle periods, not the deadline ($el ms)"

# -- a tool that keeps printing is not idle, however long it runs
agent "$R" develop --tool bash --state-dir "$S" --timeout-ms 20000 \
    --idle-ms "$(t_ms 400)" --command "exec '$FAKE' --marker $M print a sleep 150 \
print b sleep 150 print c sleep 150 print d sleep 150 print e \
result success" "go"
is "$?" 0 "busy: exit 0"
is "$(jget "$R" '[d["status"], d["nudged"]]')" '["success",false]' \
    "busy: never nudged"

t_done
