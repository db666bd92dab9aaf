#!/bin/bash
# no-litter.sh: nothing is created for a loop that does not exist.  An
# mcp session, a control session and a serve that start no loop and no
# agent leave .loop/ as they found it (no {id}.run.lock, no empty
# {id}.workers/); a control session that spawns gets both, its agent's
# log in them, at the first spawn; a named --loop-id is still locked at
# once (errors.sh: busy).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 90
t_valgrind_worker
t_marker M litter

OK="exec '$FAKE' --marker $M result success"
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
R=$T_TMP/proj
t_run_config "$R" "$OK" "$OK" "$OK" "$OK" "$OK"
BEFORE=$(ls -A "$R/.loop")

# --- mcp: requests that start nothing, through a pipe
printf '%s\n' "$INIT" '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_agents","arguments":{}}}' |
    $WRAP "$SUP" mcp -C "$R" >"$T_TMP/mcp.out" 2>"$T_TMP/mcp.err"
is "$?" 0 "mcp: exit 0"
is "$(grep -c '"id":[0-2],' "$T_TMP/mcp.out")" 3 "mcp: every request answered"
is "$(ls -A "$R/.loop")" "$BEFORE" "mcp that starts nothing: nothing new in .loop/"

# --- control: a session with no spawn
printf '%s\n' '{"id":1,"verb":"list"}' |
    $WRAP "$SUP" control -C "$R" >"$T_TMP/ctl.out" 2>"$T_TMP/ctl.err"
is "$?" 0 "control: exit 0"
is "$(ls -A "$R/.loop")" "$BEFORE" "control that spawns nothing: nothing new in .loop/"

# --- serve: up, asked, stopped
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens ($SRV_PORT)"
req GET /api/agents
is "$(jget - 'd["status"]' <<<"$RES")" 200 "serve: /api/agents answers"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
is "$(ls -A "$R/.loop")" "$BEFORE" "serve that starts nothing: nothing new in .loop/"

# --- control that spawns: the lock and the workers' directory appear
ctl_start "$T_TMP/sp" -C "$R"
ctl_send '{"id":1,"verb":"spawn","role":"develop"}'
r=$(ctl_recv 1)
is "$(jget - '[d["ok"], d["agent_id"]]' <<<"$r")" '[true,"agent-1"]' \
    "control: spawn answered"
ctl_send '{"id":2,"verb":"wait","targets":["agent-1"],"mode":"all"}'
r=$(ctl_recv 2 "$(t_ms 20000)")
like "$r" '"ok":true' "control: the agent ran to its end"
ctl_stop
is "$T_RC" 0 "control that spawned: exit 0"
ok $(ls "$R"/.loop/*.run.lock >/dev/null 2>&1 &&
    ls "$R"/.loop/*.workers/agent-1.log >/dev/null 2>&1; echo $?) \
    "a spawn makes its loop's run lock and workers/agent-1.log"
t_wait_gone "$M" 5000
ok $? "no agent left"

t_done
