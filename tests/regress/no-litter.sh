#!/bin/bash
# no-litter.sh: nothing is created for a loop that does not exist.  An
# mcp session, a control session and a serve that start no loop and no
# agent leave .loop/ as they found it (no {id}.run.lock, no empty
# {id}.workers/); a control session that spawns gets both, its agent's
# log in them, at the first spawn; a named --loop-id is still locked at
# once (errors.sh: busy).  A bare project (no .loop/) that an mcp, a
# control and a serve session start no loop in has no new entry at all.
# In a git repository whose .loop/config.json is committed, the loops
# an mcp, a serve and a run session drive leave nothing `git status`
# shows but those loops' own files: .loop/ID.json and its companions
# (.loop/ID.* and .loop/ID/, ID a loop with a state file).
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

# --- a bare project: nothing at all, not even an empty .loop/
B=$T_TMP/bare
mkdir "$B"
printf '%s\n' "$INIT" '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' |
    $WRAP "$SUP" mcp -C "$B" >"$T_TMP/bmcp.out" 2>"$T_TMP/bmcp.err"
is "$?" 0 "bare mcp: exit 0"
printf '%s\n' '{"id":1,"verb":"list"}' |
    $WRAP "$SUP" control -C "$B" >"$T_TMP/bctl.out" 2>"$T_TMP/bctl.err"
is "$?" 0 "bare control: exit 0"
srv_start "$T_TMP/bsrv" -C "$B" --no-socket
ok $? "bare serve listens ($SRV_PORT)"
req GET /api/loops/v2
is "$(jget - 'd["status"]' <<<"$RES")" 200 "bare serve: /api/loops/v2 answers"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
is "$(ls -A "$B")" "" "sessions that start no loop: the project has no new entry"

# --- loops in a git repository: git status shows their files only
G=$T_TMP/git
t_run_config "$G" "$OK" "$OK" "$OK" "$OK" "$OK"
git -C "$G" init -q && git -C "$G" add .loop/config.json &&
    git -C "$G" -c user.name=t -c user.email=t@t commit -qm config
ok $? "a git repository with its .loop/config.json committed"

# (mcp) a loop started over MCP, run to its end
CTL_CMD=mcp ctl_start "$T_TMP/gmcp" -C "$G"
ctl_send "$INIT" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
ctl_send '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"loop_start","arguments":{"task":"Add X","loop_id":"mcp-1"}}}'
r=$(ctl_recv 1)
like "$r" 'mcp-1' "mcp: loop_start answered"
t_wait_file "$G/.loop/mcp-1.json" "$(t_ms 10000)"
end=$(t_until "$(t_ms 30000)")
until [ "$(jget "$G/.loop/mcp-1.json" 'd["status"]' 2>/dev/null)" = completed ] ||
    [ "$(t_now_ms)" -ge "$end" ]; do sleep 0.05; done
is "$(jget "$G/.loop/mcp-1.json" 'd["status"]')" completed "mcp: the loop completed"
ctl_stop
is "$T_RC" 0 "mcp with a loop: exit 0"

# (serve) a loop created and started over HTTP, run to its end
srv_start "$T_TMP/gsrv" -C "$G" --no-socket
ok $? "serve listens ($SRV_PORT)"
req POST /api/loops/v2 '{"title": "Add Y"}'
SID=$(jr 'd["body"]["data"]["loop_id"]')
req POST "/api/loops/v2/$SID/start"
is "$(jr 'd["status"]')" 200 "serve: the loop started"
srv_wait_status "$SID" completed "$(t_ms 30000)"
ok $? "serve: the loop completed"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000

# (run) a loop run in the foreground
t_loop_run "$G" run-1 "Add Z"
is "$RC" 0 "run: exit 0"

litter=$(git -C "$G" status --porcelain --untracked-files=all | while read -r st p; do
	case $p in
	.loop/*) id=${p#.loop/}; id=${id%%/*} ;;
	*) echo "$p"; continue ;;
	esac
	for l in mcp-1 "$SID" run-1; do
		case $id in "$l"|"$l".*) [ -f "$G/.loop/$l.json" ] && continue 2 ;; esac
	done
	echo "$p"
done)
is "$litter" "" "git status: the loops' own files and nothing else"
is "$(git -C "$G" status --porcelain --untracked-files=all | grep -c '')" \
    "$(git -C "$G" status --porcelain --untracked-files=all | grep -cE '^\?\? \.loop/(mcp-1|run-1|'"$SID"')[./]')" \
    "every entry git shows is untracked and a loop's"
t_wait_gone "$M" 5000
ok $? "no agent left after the loops"

t_done
