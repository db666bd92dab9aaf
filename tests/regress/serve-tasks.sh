#!/bin/bash
# serve-tasks.sh: CCW's task routes of a loop on `ccw-supervisor serve`:
# validation with CCW's body-route errors, a task added to CCW's
# {id}/tasks.jsonl with its id and order (every line newline-terminated,
# a torn last line that CCW left mended), the list by order, 404 for a
# loop that does not exist, a tool the project's configuration disables
# refused with the enabled ones named.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 60
t_slack

R=$T_TMP/proj
mkdir -p "$R/.workflow/.loop" "$R/.loop"
# the documented setup: our configuration in .loop beside CCW's loops
echo '{"default_tool": "bash", "tools": {"qwen": {"enabled": false}, "gemini": {"enabled": true}}}' \
    >"$R/.loop/config.json"
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens"
req POST /api/loops/v2 '{"title": "Tasks"}'
ID=$(jr 'd["body"]["data"]["loop_id"]')
D=$R/.workflow/.loop
is "$(ls "$D/$ID.json" 2>/dev/null)" "$D/$ID.json" "a CCW project: the loop is in .workflow/.loop"

req POST "/api/loops/v2/$ID/tasks" '{"tool": "bash", "mode": "write", "prompt_template": "p"}'
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"description is required"}]' "no description: 400"
req POST "/api/loops/v2/$ID/tasks" '{"description": "x", "tool": "bash", "mode": "paint", "prompt_template": "p"}'
is "$(jr 'd["status"]')" 400 "a bad mode: 400"
req POST "/api/loops/v2/nope-1/tasks" '{"description": "x", "tool": "bash", "mode": "write", "prompt_template": "p"}'
is "$(jr '[d["status"], d["body"]]')" '[404,{"error":"Loop not found"}]' "no such loop: 404"

req POST "/api/loops/v2/$ID/tasks" '{"description": "First", "tool": "bash", "mode": "write", "prompt_template": "do A", "on_error": "continue"}'
is "$(jr '[d["status"], d["body"]["data"]["order"], d["body"]["data"]["description"]]')" \
    '[200,0,"First"]' "add: 200, order 0"
like "$(jr 'd["body"]["data"]["task_id"]')" '^task-[0-9]{13}-[0-9a-f]{8}$' "add: a CCW task id"
# CCW rewrites the file without its last newline
printf '%s' "$(cat "$D/$ID/tasks.jsonl")" >"$D/$ID/tasks.jsonl"
req POST "/api/loops/v2/$ID/tasks" '{"description": "Second", "tool": "bash", "mode": "review", "prompt_template": "do B"}'
is "$(jr '[d["status"], d["body"]["data"]["order"]]')" '[200,1]' "add after a torn line: order 1"
is "$(wc -l <"$D/$ID/tasks.jsonl")" 2 "two lines, each newline-terminated"
is "$(tail -c 1 "$D/$ID/tasks.jsonl" | od -An -c | tr -d ' ')" '\n' "the file ends with a newline"
req GET "/api/loops/v2/$ID/tasks"
is "$(jr '[d["status"], d["body"]["total"], [t["description"] for t in d["body"]["data"]], d["body"]["loop_id"]]')" \
    "[200,2,[\"First\",\"Second\"],\"$ID\"]" "list: both, by order"
req POST "/api/loops/v2/$ID/tasks" '{"description": "Q", "tool": "qwen", "mode": "write", "prompt_template": "p"}'
is "$(jr '[d["status"], d["body"]["error"].startswith("tool must be one of enabled tools: bash, "), "qwen" in d["body"]["error"], "gemini" in d["body"]["error"]]')" \
    '[400,true,false,true]' "a tool the project disables: 400 naming the enabled ones ($(jr 'd["body"]["error"]'))"
req POST "/api/loops/v2/$ID/tasks" '{"description": "G", "tool": "gemini", "mode": "write", "prompt_template": "p"}'
is "$(jr '[d["status"], d["body"]["data"]["tool"], d["body"]["data"]["order"]]')" '[200,"gemini",2]' "an enabled tool: 200"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
is "$T_RC" 4 "SIGTERM: exit 4"
t_done
