#!/bin/bash
# errors.sh: an error's kind, not its words, picks each front end's answer
# (supervisor/engine/errcode.c, one row per kind): an unknown agent or
# loop is "code": "not_found" in control's reply, 404 on serve's HTTP
# routes, isError with that code as an MCP tool result, -32001 as an ACP
# error; a refused transition is "conflict" and 400; a bad argument is
# "invalid_argument" (-32602 on ACP); the CLI's exit statuses for a held
# run lock (busy: 1) and an unknown loop stay theirs; doctor places a
# configuration error on the file the load read, not by its words.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 150
t_marker M errs
t_slack

OK="exec '$FAKE' --marker $M result success"
R=$T_TMP/proj
t_run_config "$R" "$OK" "$OK" "$OK" "$OK" "$OK" '{"grace_ms": 500}'

# --- control: the reply carries the kind
ctl_start "$T_TMP/c1" -C "$R" --loop-id h1
ctl_send '{"id":1,"verb":"result","target":"agent-9"}' \
    '{"id":2,"verb":"loop_status","loop_id":"nosuch"}' \
    '{"id":3,"verb":"loop_open","loop_id":"e1","title":"t"}' \
    '{"id":4,"verb":"loop_pause","loop_id":"e1"}' \
    '{"id":5,"verb":"wait","targets":["agent-9"]}' \
    '{"id":6,"verb":"spawn","role":7}' \
    '{"id":7,"verb":"close","target":"agent-9"}'
is "$(ctl_recv 1 | jget - '[d["ok"], d["code"]]')" '[false,"not_found"]' \
    "control: result of an unknown agent: not_found"
is "$(ctl_recv 2 | jget - 'd["code"]')" not_found "control: an unknown loop: not_found"
is "$(ctl_recv 3 | jget - '[d["ok"], "code" in d]')" '[true,false]' \
    "control: a success carries no code"
is "$(ctl_recv 4 | jget - 'd["code"]')" conflict "control: pause of a created loop: conflict"
is "$(ctl_recv 5 | jget - 'd["code"]')" not_found "control: wait on an unknown agent: not_found"
is "$(ctl_recv 6 | jget - 'd["code"]')" invalid_argument "control: a wrongly typed member: invalid_argument"
is "$(ctl_recv 7 | jget - 'd["code"]')" not_found "control: close of an unknown agent: not_found"

# --- the CLI: a second driver of the same loop is busy (exit 1)
(: | $WRAP "$SUP" control -C "$R" --loop-id h1 >"$T_TMP/c2" 2>&1)
is "$?" 1 "control while another holds the run lock: busy, exit 1"
ctl_stop 10000
is "$T_RC" 0 "control: EOF, exit 0"
$WRAP "$SUP" run -C "$R" --loop-id nosuch >/dev/null 2>&1
is "$?" 2 "run --loop-id of an unknown loop: exit 2"

# --- serve: the status is the kind's
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens ($SRV_PORT)"
req GET /api/agents/agent-9
is "$(jr '[d["status"], d["body"]["code"]]')" '[404,"not_found"]' \
    "HTTP: GET an unknown agent: 404 (the words say 'unknown', the kind not_found)"
req POST /api/agents/agent-9/close '{}'
is "$(jr 'd["status"]')" 404 "HTTP: close an unknown agent: 404"
req DELETE /api/agents/agent-9
is "$(jr 'd["status"]')" 404 "HTTP: DELETE an unknown agent: 404"
req POST /api/agents/agent-9/input '{"message": "hi"}'
is "$(jr 'd["status"]')" 404 "HTTP: input to an unknown agent: 404"
req POST /api/agents/wait '{"targets": ["agent-9"]}'
is "$(jr 'd["status"]')" 404 "HTTP: wait on an unknown agent: 404"
req POST /api/agents '{"role": 7}'
is "$(jr '[d["status"], d["body"]["code"]]')" '[400,"invalid_argument"]' \
    "HTTP: spawn with a bad role: 400"
req GET /api/loops/v2/nosuch
is "$(jr 'd["status"]')" 404 "HTTP: an unknown loop: 404"
req POST /api/loops/v2/e1/pause
is "$(jr '[d["status"], d["body"]["success"]]')" '[400,false]' \
    "HTTP: pause of a created loop (conflict): 400"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 10000

# --- MCP on stdio: a tool's failure is isError with the kind
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
CTL_CMD=mcp ctl_start "$T_TMP/m1" -C "$R"
ctl_send "$INIT" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
ctl_recv 0 >/dev/null
ctl_send '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"loop_status","arguments":{"loop_id":"nosuch"}}}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agent_result","arguments":{"target":"agent-9"}}}'
is "$(ctl_recv 1 | jget - '[d["result"]["isError"], d["result"]["structuredContent"]["code"]]')" \
    '[true,"not_found"]' "MCP: loop_status of an unknown loop: isError, not_found"
is "$(ctl_recv 2 | jget - '[d["result"]["isError"], d["result"]["structuredContent"]["code"]]')" \
    '[true,"not_found"]' "MCP: agent_result of an unknown agent: isError, not_found"
ctl_stop 10000

# --- ACP: the JSON-RPC code is the kind's
out=$( { printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}';
	printf '{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"nosuch","cwd":"%s","mcpServers":[]}}\n' "$R"; } |
	timeout -k 2 60 $WRAP "$SUP" acp 2>"$T_TMP/acp.err")
is "$(grep '"id":2' <<<"$out" | jget - 'd["error"]["code"]')" -32001 \
    "ACP: session/load of an unknown loop: -32001 (not_found)"
# --- doctor: the error is the first file there (a directory), the next read
D=$T_TMP/doc
mkdir -p "$D/r/.loop/config.json" "$D/h/.config/ccw-supervisor"
echo '{}' >"$D/h/.config/ccw-supervisor/config.json"
HOME=$D/h $WRAP "$SUP" doctor -C "$D/r" --json >"$T_TMP/doc.json" 2>/dev/null
is "$(jget "$T_TMP/doc.json" '[f["status"] for f in d["config"]["files"] if f["what"] == "config"]')" \
    '["error","read"]' "doctor: .loop/config.json a directory is the error, the home file read"
echo '{"default_tool": 5}' >"$D/h/bad.json"
HOME=$D/h $WRAP "$SUP" doctor -C "$D/r" --config "$D/h/bad.json" --json >"$T_TMP/doc.json" 2>/dev/null
is "$(jget "$T_TMP/doc.json" '[f["status"] for f in d["config"]["files"] if f["what"] == "config (--config)"]')" \
    '["error"]' "doctor: a --config that does not validate is in error"

t_done
