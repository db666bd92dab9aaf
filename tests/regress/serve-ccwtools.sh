#!/bin/bash
# serve-ccwtools.sh: the task routes take the tools CCW's cli-tools.json
# enables as CCW reads it (claude-cli-tools.ts, loop-v2-routes.ts): in a
# file CCW wrote (version 3.4.0) a tool it leaves out is disabled, and
# POST :id/tasks and PUT tasks/:taskId refuse it with CCW's 400 text.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 60
t_slack

export HOME=$T_TMP/home
unset CCW_DATA_DIR
R=$T_TMP/proj
mkdir -p "$HOME/.claude" "$R/.workflow/.loop"
# only codex and gemini, in the table's order (CCW lists the file's)
echo '{"version": "3.4.0", "tools": {"codex": {"enabled": true, "type": "builtin"}, "gemini": {"enabled": true, "primaryModel": "gemini-2.5-flash"}, "qwen": {"enabled": false}}}' \
    >"$HOME/.claude/cli-tools.json"
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens"
req POST /api/loops/v2 '{"title": "CCW tools"}'
ID=$(jr 'd["body"]["data"]["loop_id"]')

WANT='tool must be one of enabled tools: bash, codex, gemini'
req POST "/api/loops/v2/$ID/tasks" '{"description": "C", "tool": "claude", "mode": "write", "prompt_template": "p"}'
is "$(jr '[d["status"], d["body"]]')" "[400,{\"error\":\"$WANT\"}]" \
    "POST: claude, absent from cli-tools.json: CCW's 400"
req POST "/api/loops/v2/$ID/tasks" '{"description": "Q", "tool": "qwen", "mode": "write", "prompt_template": "p"}'
is "$(jr 'd["status"]')" 400 "POST: qwen, enabled false: 400"
req POST "/api/loops/v2/$ID/tasks" '{"description": "G", "tool": "gemini", "mode": "write", "prompt_template": "p"}'
is "$(jr '[d["status"], d["body"]["data"]["tool"]]')" '[200,"gemini"]' \
    "POST: gemini, enabled true: 200"
TID=$(jr 'd["body"]["data"]["task_id"]')
req PUT "/api/loops/v2/tasks/$TID" "{\"loop_id\": \"$ID\", \"tool\": \"claude\"}"
is "$(jr '[d["status"], d["body"]["error"]]')" "[400,\"$WANT\"]" \
    "PUT: claude: CCW's 400"
req PUT "/api/loops/v2/tasks/$TID" "{\"loop_id\": \"$ID\", \"tool\": \"codex\"}"
is "$(jr '[d["status"], d["body"]["data"]["tool"]]')" '[200,"codex"]' \
    "PUT: codex, enabled true: 200"
req POST "/api/loops/v2/$ID/tasks" '{"description": "B", "tool": "bash", "mode": "write", "prompt_template": "p"}'
is "$(jr 'd["status"]')" 200 "bash, never listed, is always taken"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
t_done
