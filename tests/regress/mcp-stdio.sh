#!/bin/bash
# mcp-stdio.sh: `ccw-supervisor mcp` on stdio.  Without any SDK: a
# malformed line is answered -32700 and the session still answers ping;
# a request before initialize is refused; an over-long line is answered
# and skipped; a wait_agent with a progressToken sends progress each
# second and, cancelled, is never answered and kills nothing; end of
# input mid-wait closes every agent (none left) and exits 0; SIGTERM
# exits 4 with none left.  Then tests/node/mcp-stdio.mjs drives it with
# the official TypeScript SDK client (a SKIP without node or npm).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/node-lib.sh"
t_watchdog 150
t_valgrind_worker
t_marker M mcp
t_slack

OK="exec '$FAKE' --marker $M result success"
HANG="exec '$FAKE' --marker $M print working hang"
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
CTL_CMD=mcp

# call ID TOOL ARGS_JSON [META_JSON]: a tools/call line.
call() {
	ctl_send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\
\"params\":{\"name\":\"$2\",\"arguments\":$3${4:+,\"_meta\":$4}}}"
}

# ping ID: a ping line.
ping() {
	ctl_send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"ping\"}"
}

R=$T_TMP/proj
t_run_config "$R" "$OK" "$HANG" "$OK" "$OK" "$OK" '{"grace_ms": 500}'

# --- malformed lines, a request before initialize, an over-long line
ctl_start "$T_TMP/m1" -C "$R"
ctl_send '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
r=$(ctl_recv 1)
is "$(jget - '[d["error"]["code"], "result" in d]' <<<"$r")" '[-32600,false]' \
    "a request before initialize: an error"
ping 2
r=$(ctl_recv 2)
is "$(jget - 'd["result"]' <<<"$r")" '{}' "ping before initialize is answered"
ctl_send "$INIT"
r=$(ctl_recv 0)
is "$(jget - '[d["result"]["protocolVersion"], d["result"]["serverInfo"]["name"], sorted(d["result"]["capabilities"])]' <<<"$r")" \
    '["2025-06-18","ccw-supervisor",["logging","tools"]]' \
    "initialize: the client's version, our name, tools and logging"
ctl_send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
ctl_send '{"jsonrpc": "2.0", "id": 3, "method": '
r=$(ctl_recv null)
is "$(jget - 'd["error"]["code"]' <<<"$r")" -32700 "a malformed line: -32700"
ping 4
r=$(ctl_recv 4)
is "$(jget - 'd["result"]' <<<"$r")" '{}' "the session answers ping after it"
ctl_send '{"jsonrpc":"1.0","id":5,"method":"ping"}'
r=$(ctl_recv 5)
is "$(jget - 'd["error"]["code"]' <<<"$r")" -32600 "no jsonrpc 2.0: -32600"
ctl_send '{"jsonrpc":"2.0","id":6,"method":"resources/list"}'
r=$(ctl_recv 6)
is "$(jget - 'd["error"]["code"]' <<<"$r")" -32601 "an unknown method: -32601"
# over linein's 16 MiB: answered (with a null id) and skipped
python3 -c 'import sys; sys.stdout.write("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"x\":\"" + "a" * (17 << 20) + "\"}\n")' >&"$CTL_FD"
ping 8
r=$(ctl_recv 8 20000)
is "$(jget - 'd["result"]' <<<"$r")" '{}' "after an over-long line the session goes on"
like "$(grep -c 'longer than' "$CTL_OUT")" '^1$' "the over-long line is answered once"
ok $(grep -q '"id":7' "$CTL_OUT"; echo $(( ! $? ))) "the over-long request is not run"
call 9 no_such_tool '{}'
r=$(ctl_recv 9)
is "$(jget - 'd["error"]["code"]' <<<"$r")" -32602 "an unknown tool: -32602"
call 10 close_agent '{"target":"agent-99"}'
r=$(ctl_recv 10)
is "$(jget - '[d["result"]["isError"], d["result"]["structuredContent"]["agent_id"]]' <<<"$r")" \
    '[true,"agent-99"]' "a verb's error is an isError result naming the agent"
# enums the tables own: roles (the workflow's), actions (loop_control's)
ctl_send '{"jsonrpc":"2.0","id":11,"method":"tools/list"}'
r=$(ctl_recv 11)
ROLES=$(jget - '" ".join([t for t in d["result"]["tools"] if t["name"] == "spawn_agent"][0]["inputSchema"]["properties"]["role"]["enum"])' <<<"$r")
like "$ROLES" '(^| )develop( |$)' "spawn_agent's role enum: the workflow's roles"
is "$(jget - '[t for t in d["result"]["tools"] if t["name"] == "loop_control"][0]["inputSchema"]["properties"]["action"]["enum"]' <<<"$r")" \
    '["pause","resume","stop"]' "loop_control's action enum: its action table"
call 12 spawn_agent '{"role":"nope"}'
r=$(ctl_recv 12)
msg=$(jget - 'd["result"]["structuredContent"]["error"]' <<<"$r")
miss=""
for w in $ROLES; do
	case $msg in *"$w"*) ;; *) miss="$miss $w" ;; esac
done
is "$(jget - 'd["result"]["isError"]' <<<"$r")/$miss" "true/" \
    "an unknown role's error names every role of the enum"
call 13 loop_control '{"loop_id":"L1","action":"explode"}'
r=$(ctl_recv 13)
is "$(jget - '[d["result"]["isError"], d["result"]["structuredContent"]["code"]]' <<<"$r")" \
    '[true,"invalid_argument"]' "loop_control: an unknown action is refused"
like "$(jget - 'd["result"]["structuredContent"]["error"]' <<<"$r")" \
    'pause resume stop' "... naming the table's actions"
ctl_stop
is "$T_RC" 0 "end of input: exit 0"

# --- progress and cancellation; then end of input mid-wait
ctl_start "$T_TMP/m2" -C "$R"
ctl_send "$INIT"
ctl_recv 0 >/dev/null
call 1 spawn_agent '{"role":"develop"}'
r=$(ctl_recv 1)
is "$(jget - 'd["result"]["structuredContent"]["agent_id"]' <<<"$r")" agent-1 \
    "spawn_agent names the agent"
t_wait_count "$M" 1 10000
call 2 wait_agent '{"targets":["agent-1"]}' '{"progressToken":"p2"}'
end=$(t_until 10000)
until [ "$(grep -c '"progressToken":"p2"' "$CTL_OUT")" -ge 2 ] ||
    [ "$(t_now_ms)" -ge "$end" ]; do
	sleep 0.05
done
n=$(grep -c '"progressToken":"p2"' "$CTL_OUT")
ok $(( n < 2 )) "wait_agent sends progress while it waits ($n)"
like "$(grep '"progressToken":"p2"' "$CTL_OUT" | tail -n 1)" \
    'agent-1 (running|working)' "the progress names the agent and its state"
ctl_send '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}}'
call 3 list_agents '{}'
r=$(ctl_recv 3)
is "$(jget - 'd["result"]["structuredContent"]["agents"]' <<<"$r")" \
    '{"agent-1":"running"}' "a cancelled wait kills nothing"
n=$(grep -c '"progressToken":"p2"' "$CTL_OUT")
ping 4
ctl_recv 4 >/dev/null
sleep 1.5	# a second and a half with no progress: proves the timer stopped
is "$(grep -c '"progressToken":"p2"' "$CTL_OUT")" "$n" \
    "no progress after the cancel"
ok $(grep -q '"id":2[,}]' "$CTL_OUT"; echo $(( ! $? ))) \
    "the cancelled wait is never answered"
call 5 wait_agent '{"targets":["agent-1"],"mode":"all"}'
t_wait_count "$M" 1 1000
exec {CTL_FD}>&-
t_wait_pid "$CTL_PID" 15000
is "$T_RC" 0 "end of input mid-wait: exit 0"
t_wait_gone "$M" 5000
ok $? "end of input: no agent left"

# --- SIGTERM: every agent closed, exit 4
ctl_start "$T_TMP/m3" -C "$R"
ctl_send "$INIT"
ctl_recv 0 >/dev/null
call 1 spawn_agent '{"role":"develop"}'
ctl_recv 1 >/dev/null
t_wait_count "$M" 1 10000
ok $? "an agent runs"
call 2 wait_agent '{"targets":["agent-1"]}'
t0=$(t_now_ms)
kill -TERM "$CTL_PID"
t_wait_pid "$CTL_PID" 10000
el=$(( $(t_now_ms) - t0 ))
is "$T_RC" 4 "SIGTERM: exit 4"
t_within "$el" 2000 "SIGTERM: out within 2 s ($el ms)"
t_wait_gone "$M" 1000
ok $? "SIGTERM: no agent left"
exec {CTL_FD}>&-

# --- the official SDK's client (tests/node/mcp-stdio.mjs)
if out=$(t_node_sdk 2>&1); then
	NODE_SUP=$T_TMP/sup
	R2=$T_TMP/sdk
	t_run_config "$R2" "$OK init" \
	    "exec '$FAKE' --marker $M print step-one sleep 300 result success dev" \
	    "$OK dbg" "$OK val" "$OK done"
	# a fake claude for send_input's follow-up turn: a session, a result
	cat >"$T_TMP/claude" <<'FAKEEOF'
#!/bin/bash
cat >/dev/null
printf '{"type":"system","subtype":"init","session_id":"sess-1"}\n'
printf '{"type":"result","subtype":"success","is_error":false,"session_id":"sess-1","result":"WORKER_RESULT:\\n- status: success\\n- summary: a turn\\n- files_changed: []\\n"}\n'
FAKEEOF
	chmod +x "$T_TMP/claude"
	python3 - "$R2/.loop/config.json" "$T_TMP/claude" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["tools"] = {"claude": {"path": sys.argv[2]}}
json.dump(c, open(sys.argv[1], "w"))
PYEOF
	CCW_MCP_MARKER=$M CCW_FAKE=$FAKE t_node mcp-stdio.mjs "$NODE_SUP" \
	    "$R2" >"$T_TMP/node.out" 2>"$T_TMP/node.err"
	rc=$?
	# its TAP lines, numbered on after ours
	while IFS= read -r l; do
		case $l in
		"ok "*) ok 0 "sdk: ${l#ok * - }" ;;
		"not ok "*) ok 1 "sdk: ${l#not ok * - }" ;;
		"#"*) echo "$l" ;;
		esac
	done <"$T_TMP/node.out"
	is "$rc" 0 "the SDK client script exits 0"
	[ "$rc" = 0 ] || sed 's/^/#   /' "$T_TMP/node.err" | tail -n 20
	t_wait_gone "$M" 5000
	ok $? "sdk: no agent left after the client closed"
else
	t_skip "the SDK client: $(printf '%s' "$out" | sed 's/^1\.\.0 # SKIP //')"
fi
t_done
