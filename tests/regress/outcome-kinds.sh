#!/bin/bash
# outcome-kinds.sh: the outcome kinds the supervisor decides itself, each
# with a reason that says how and a summary that is never null: the
# deadline (timeout) apart from silence (idle, naming its seconds), a
# worker killed -9 (crashed), a launcher gone before or after HELLO
# (lost: its exit status, its signal, what it said), a launcher's banner
# where the first frame belongs (protocol), a close on request
# (cancelled); carried by `agent`'s JSON, MCP's wait_agent and
# agent_result, and a loop's worker_result on serve's /api/events and
# its state's errors[].
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 120
t_valgrind_worker
t_marker M kinds
t_slack
S=$T_TMP/state
R=$T_TMP/r
D=$(t_ms 300)

# kind FILE: [error_kind, summary is a non-empty string, reason]
kind() {
	jget "$1" '[d["error_kind"], isinstance(d["summary"], str) and d["summary"] != "", d["reason"]]'
}

# secs MS: seconds as the supervisor writes them (%g)
secs() {
	python3 -c "import sys; print('%g' % (int(sys.argv[1]) / 1000.0))" "$1"
}

# -- the deadline: timeout, with its seconds
agent "$R" develop --tool bash --state-dir "$S" --timeout-ms "$D" \
    --nudge-ms "$D" --grace-ms 300 --command "exec '$FAKE' --marker $M hang" go
is "$?" 5 "timeout: exit 5"
is "$(kind "$R")" \
    "[\"timeout\",true,\"deadline of $(secs "$D") s passed (no result $(secs "$D") s after the nudge)\"]" \
    "timeout: error_kind timeout, the deadline's seconds"
is "$(jget "$R" 'd["summary"]')" "Worker timeout" "timeout: DESIGN.md's summary"

# -- silence long before the deadline: idle, not timeout
agent "$R" develop --tool bash --state-dir "$S" --timeout-ms 60000 \
    --idle-ms "$D" --nudge-ms 60000 --grace-ms 300 \
    --command "exec '$FAKE' --marker $M hang" go
is "$?" 5 "idle: exit 5"
is "$(kind "$R")" "[\"idle\",true,\"no output for $(secs "$D") s\"]" \
    "idle: error_kind idle, the reason names the seconds"
is "$(jget "$R" 'd["summary"]')" "Worker idle: no output for $(secs "$D") s" \
    "idle: the summary says idle, not timeout"

# -- the worker itself killed -9 (by its own tool): crashed
agent "$R" develop --tool bash --state-dir "$S" --timeout-ms 60000 \
    --command 'kill -KILL $PPID' go
is "$?" 1 "crashed: exit 1"
is "$(kind "$R")" '["crashed",true,"worker killed by signal 9 (SIGKILL)"]' \
    "crashed: error_kind crashed, the signal named"

# lost_is LABEL RC REGEX: $R is a lost agent's JSON (exit 1), a summary,
# its reason matching REGEX (how it was lost)
lost_is() {
	is "$2" 1 "$1: exit 1"
	is "$(jget "$R" '[d["error_kind"], isinstance(d["summary"], str)]')" \
	    '["lost",true]' "$1: error_kind lost, a summary"
	like "$(jget "$R" 'd["reason"]')" "$3" "$1: the reason says how"
}

# -- a launcher that cannot reach its host, as ssh says it: lost
cat >"$T_TMP/fakessh" <<'EOF'
#!/bin/sh
echo "ssh: connect to host nowhere port 22: Connection refused" >&2
exit 255
EOF
chmod +x "$T_TMP/fakessh"
agent "$R" develop --tool bash --state-dir "$S" --command true \
    --launcher "$T_TMP/fakessh" go
lost_is "lost, unreachable" "$?" \
    "exited with status 255 before the worker said HELLO: ssh: connect to host nowhere"

# -- text where the first frame belongs (a login banner): protocol
printf '#!/bin/sh\necho "Welcome to nowhere"\nexec "$@"\n' >"$T_TMP/banner"
chmod +x "$T_TMP/banner"
agent "$R" develop --tool bash --state-dir "$S" --command true \
    --launcher "$T_TMP/banner" go
is "$?" 1 "protocol: exit 1"
is "$(jget "$R" '[d["error_kind"], isinstance(d["summary"], str)]')" \
    '["protocol",true]' "protocol: error_kind protocol, a summary"
like "$(jget "$R" 'd["reason"]')" "^protocol violation: .*text before the worker's HELLO" \
    "protocol: the reason names the violation"

# -- the launcher killed -9 mid-task (the host gone): lost, after HELLO
# (the markers in a script, not in the supervisor's own argv)
t_marker ML relay
t_marker MR far
echo "exec '$FAKE' --marker $MR hang" >"$T_TMP/far.sh"
timeout -k 2 60 $WRAP "$SUP" agent --json develop --tool bash --state-dir "$S" \
    --timeout-ms 60000 --command "sh '$T_TMP/far.sh'" \
    --launcher "python3 $srcdir/tests/regress/workers/relay.py $ML" go \
    >"$R" 2>"$R.err" &
AP=$!
t_wait_count "$MR" 1 "$(t_ms 20000)"
ok $? "lost, mid-task: the far tool runs"
kill -KILL "$(pgrep -f -- "^python3 .*relay\.py $ML" | head -n 1)"
t_wait_pid "$AP" "$(t_ms 20000)"
lost_is "lost, mid-task" "$T_RC" \
    "^worker lost: launcher '.*' killed by signal 9 \(SIGKILL\)"
t_wait_gone "$MR" "$(t_ms 10000)"

# -- MCP: a close on request is cancelled; wait_agent names the kind
P=$T_TMP/proj
t_run_config "$P" true true true true true '{"grace_ms": 300}'
CTL_CMD=mcp ctl_start "$T_TMP/m" -C "$P"
ctl_send '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}'
ctl_recv 0 >/dev/null
ok $? "mcp: initialized"
mcall() {
	ctl_send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\
\"params\":{\"name\":\"$2\",\"arguments\":$3}}"
	ctl_recv "$1" "$(t_ms 20000)" | jget - 'd["result"]["structuredContent"]'
}
a=$(mcall 1 spawn_agent "{\"role\":\"develop\",\"tool\":\"bash\",\"message\":\"go\",\
\"command\":\"exec '$FAKE' --marker $M print working hang\"}" | jget - 'd["agent_id"]')
like "$a" '^agent-[0-9]+$' "mcp: spawned"
t_wait_count "$M" 1 "$(t_ms 20000)"
mcall 2 close_agent "{\"target\":\"$a\"}" >/dev/null
r=$(mcall 3 wait_agent "{\"targets\":[\"$a\"],\"timeout_ms\":$(t_ms 20000)}")
is "$(jget - "[d['status']['$a'], d['error_kinds']]" <<<"$r")" \
    "[\"shutdown\",{\"$a\":\"cancelled\"}]" "mcp: wait_agent names the kind"
mcall 4 agent_result "{\"target\":\"$a\"}" | jget - 'd["result"]' >"$T_TMP/res"
is "$(kind "$T_TMP/res")" '["cancelled",true,"closed on request"]' \
    "mcp: agent_result: cancelled, closed on request"
ctl_stop
t_wait_gone "$M" "$(t_ms 10000)"

# -- a loop under serve: the worker_result event and errors[] carry it
L=$T_TMP/loop
t_run_config "$L" "exec '$FAKE' --marker $M result success init" \
    "exec '$FAKE' --marker $M hang" true true true \
    "{\"grace_ms\": 300, \"nudge_ms\": 60000, \"idle_ms\": $D, \"retry\": {\"attempts\": 1}}"
srv_start "$T_TMP/srv" -C "$L" && srv_events "$T_TMP/ev"
ok $? "serve listens, /api/events subscribed"
req POST /api/loops/v2 '{"title": "Idle develop", "max_iterations": 2}'
ID=$(jr 'd["body"]["data"]["loop_id"]')
req POST "/api/loops/v2/$ID/start"
srv_wait_status "$ID" failed 30000
ok $? "serve: the loop failed"
srv_wait_grep "$T_TMP/ev" '"worker_result".*"develop"|"develop".*"worker_result"' 5000
ev=$(grep '^data: ' "$T_TMP/ev" | sed 's/^data: //' | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("type") == "worker_result" and e.get("role") == "develop":
        print(json.dumps([e.get("error_kind"), isinstance(e.get("summary"), str), e.get("reason")]))
        break')
is "$ev" "[\"idle\", true, \"no output for $(secs "$D") s\"]" \
    "/api/events: worker_result with error_kind, summary and reason"
is "$(jget "$L/.loop/$ID.json" '[[e["kind"], e["reason"]] for e in d["skill_state"]["errors"] if e["action"] == "develop"]')" \
    "[[\"idle\",\"no output for $(secs "$D") s\"]]" "the state's errors[]: kind and reason"
like "$(jget "$L/.loop/$ID.json" 'd["failure_reason"]')" \
    "^develop: worker idle \(no output for" "failure_reason: idle, not timeout"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" "$(t_ms 15000)"
kill "$EVPID" 2>/dev/null
t_wait_gone "$M" "$(t_ms 10000)"
t_done
