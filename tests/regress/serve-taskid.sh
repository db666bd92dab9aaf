#!/bin/bash
# serve-taskid.sh: CCW's task routes by task id on `ccw-supervisor serve`
# (GET, PUT, DELETE /api/loops/v2/tasks/:taskId, PUT :id/tasks/reorder)
# with CCW's bodies, statuses and error shapes; the order renumbered
# after a delete; the tasks file rewritten whole, valid JSONL, every line
# newline-terminated (even after CCW left the last one without); the
# TASK_UPDATED, TASK_DELETED and TASK_REORDERED events on /api/events; a
# task updated through serve reaching the develop prompt; PATCH
# .../status refusing moves that make no sense.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 120
t_valgrind_worker
t_marker M srvtid
t_slack

OK="exec '$FAKE' --marker $M result success"
R=$T_TMP/proj
DEV="p=\$(timeout 0.5 cat); printf '%s\n=====\n' \"\$p\" >>'$R.develop'; $OK dev"
t_run_config "$R" "$OK init" "$DEV" "$OK dbg" "$OK 'all good'" "$OK done"
D=$R/.loop

srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens"
srv_events "$T_TMP/ev"
ok $? "/api/events: subscribed"

req POST /api/loops/v2 '{"title": "Task ids"}'
ID=$(jr 'd["body"]["data"]["loop_id"]')
TF=$D/$ID/tasks.jsonl
add() {
	req POST "/api/loops/v2/$ID/tasks" "{\"description\": \"$1\", \"tool\": \"bash\", \"mode\": \"write\", \"prompt_template\": \"do $1\"}"
	jr 'd["body"]["data"]["task_id"]'
}
A=$(add Alpha)
B=$(add Beta)
C=$(add Gamma)
like "$A $B $C" '^task-[0-9]+-[0-9a-f]{8} task-[0-9]+-[0-9a-f]{8} task-[0-9]+-[0-9a-f]{8}$' "three tasks added"

# --- GET by task id alone
req GET "/api/loops/v2/tasks/$B"
is "$(jr '[d["status"], d["body"]["success"], d["body"]["data"]["task_id"], d["body"]["data"]["loop_id"], d["body"]["data"]["description"], d["body"]["data"]["order"]]')" \
    "[200,true,\"$B\",\"$ID\",\"Beta\",1]" "GET tasks/:taskId: the task with its loop_id"
like "$(jr 'd["body"]["timestamp"]')" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z$' "GET tasks/:taskId: a timestamp"
req GET /api/loops/v2/tasks/task-1-deadbeef
is "$(jr '[d["status"], d["body"]]')" '[404,{"success":false,"error":"Task not found"}]' "GET an unknown task: 404"
req GET /api/loops/v2/tasks/..x
is "$(jr '[d["status"], d["body"]]')" '[400,{"success":false,"error":"Invalid task ID format"}]' "GET a bad task id: 400"
req GET /api/loops/v2/tasks/start
is "$(jr '[d["status"], d["body"]["error"]]')" '[404,"Task not found"]' \
    "tasks/start is a task id, not the loop \"tasks\""
req POST "/api/loops/v2/tasks/$B" '{}'
is "$(jr '[d["status"], d["allow"]]')" '[405,"GET, PUT, DELETE"]' "POST tasks/:taskId: 405 with Allow"

# --- PUT
req PUT "/api/loops/v2/tasks/$B" '{"description": "x"}'
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"loop_id is required"}]' "PUT without loop_id: 400"
req PUT "/api/loops/v2/tasks/$B" '{"loop_id": "a/b"}'
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"Invalid loop_id format"}]' "PUT with a bad loop_id: 400"
req PUT "/api/loops/v2/tasks/$B" '{"loop_id": '
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"Invalid JSON body"}]' "PUT bad JSON: 400"
req PUT "/api/loops/v2/tasks/$B" "{\"loop_id\": \"$ID\", \"mode\": \"paint\"}"
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"mode must be one of: analysis, write, review"}]' "PUT a bad mode: 400"
req PUT "/api/loops/v2/tasks/$B" "{\"loop_id\": \"$ID\", \"tool\": \"vim\"}"
like "$(jr '[d["status"], d["body"]["error"]]')" '^\[400,"tool must be one of enabled tools: bash' "PUT a bad tool: 400"
req PUT "/api/loops/v2/tasks/$B" "{\"loop_id\": \"$ID\", \"on_error\": \"explode\"}"
is "$(jr 'd["status"]')" 400 "PUT a bad on_error: 400"
req PUT "/api/loops/v2/tasks/$B" "{\"loop_id\": \"$ID\", \"description\": \"  \"}"
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"description must be a non-empty string"}]' "PUT a blank description: 400"
req PUT /api/loops/v2/tasks/task-1-deadbeef "{\"loop_id\": \"$ID\", \"description\": \"x\"}"
is "$(jr '[d["status"], d["body"]]')" '[404,{"error":"Task not found"}]' "PUT an unknown task: 404"
req PUT "/api/loops/v2/tasks/$B" '{"loop_id": "loop-v2-nope", "description": "x"}'
is "$(jr '[d["status"], d["body"]]')" '[404,{"error":"Loop not found"}]' "PUT in an unknown loop: 404"
# CCW rewrites the file without its last newline: the rewrite mends it
printf '%s' "$(cat "$TF")" >"$TF"
req PUT "/api/loops/v2/tasks/$B" "{\"loop_id\": \"$ID\", \"description\": \"Beta two\", \"prompt_template\": \"PURPOSE: beta, updated\", \"mode\": \"review\", \"on_error\": \"pause\", \"command\": null, \"order\": 99, \"colour\": \"red\"}"
is "$(jr '[d["status"], d["body"]["success"], [d["body"]["data"][k] for k in ("task_id", "description", "prompt_template", "mode", "on_error", "tool", "order")]]')" \
    "[200,true,[\"$B\",\"Beta two\",\"PURPOSE: beta, updated\",\"review\",\"pause\",\"bash\",1]]" \
    "PUT: the fields given changed, the rest kept, order and unknown keys ignored"
is "$(jr '[d["body"]["data"]["updated_at"] > d["body"]["data"]["created_at"], "colour" in d["body"]["data"], "loop_id" in d["body"]["data"]]')" \
    '[true,false,false]' "PUT: updated_at refreshed, nothing else added"
# every line a JSON object, every one newline-terminated
jsonl_ok() {
	python3 - "$1" <<'PYEOF'
import json, sys
raw = open(sys.argv[1], "rb").read()
assert raw.endswith(b"\n"), "no final newline"
print([json.loads(l).get("task_id") for l in raw.decode().split("\n")[:-1]])
PYEOF
}
is "$(jsonl_ok "$TF")" "['$A', '$B', '$C']" "PUT: the file rewritten, valid JSONL, newline-terminated"
is "$(sed -n 2p "$TF" | jget - 'd["description"]')" "Beta two" "PUT: on disk"

# --- reorder
req PUT "/api/loops/v2/$ID/tasks/reorder" '{"ordered_task_ids": []}'
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"ordered_task_ids cannot be empty"}]' "reorder an empty list: 400"
req PUT "/api/loops/v2/$ID/tasks/reorder" '{}'
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"ordered_task_ids must be an array"}]' "reorder without the list: 400"
req PUT "/api/loops/v2/$ID/tasks/reorder" "{\"ordered_task_ids\": [\"$C\", \"task-1-cafecafe\"]}"
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"Task not found: task-1-cafecafe"}]' "reorder an unknown id: 400"
req PUT "/api/loops/v2/$ID/tasks/reorder" "{\"ordered_task_ids\": [\"$C\", \"$C\"]}"
is "$(jr 'd["status"]')" 400 "reorder an id twice: 400"
req PUT "/api/loops/v2/$ID/tasks/reorder" '{"ordered_task_ids": '
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"Invalid JSON body"}]' "reorder bad JSON: 400"
req PUT "/api/loops/v2/loop-v2-nope/tasks/reorder" "{\"ordered_task_ids\": [\"$C\"]}"
is "$(jr '[d["status"], d["body"]]')" '[404,{"error":"Loop not found"}]' "reorder in an unknown loop: 404"
req PUT "/api/loops/v2/$ID/tasks/reorder" "{\"ordered_task_ids\": [\"$C\", \"$A\"]}"
is "$(jr '[d["status"], [[t["task_id"], t["order"]] for t in d["body"]["data"]]]')" \
    "[200,[[\"$C\",0],[\"$A\",1],[\"$B\",2]]]" "reorder: the ids given first, one left out after them"
req GET "/api/loops/v2/$ID/tasks"
is "$(jr '[t["task_id"] for t in d["body"]["data"]]')" "[\"$C\",\"$A\",\"$B\"]" "reorder: the list follows"

# --- DELETE
req DELETE "/api/loops/v2/tasks/$A"
is "$(jr '[d["status"], d["body"]]')" '[400,{"success":false,"error":"loop_id query parameter is required"}]' \
    "DELETE without loop_id: 400"
req DELETE "/api/loops/v2/tasks/task-1-deadbeef?loop_id=$ID"
is "$(jr '[d["status"], d["body"]]')" '[404,{"success":false,"error":"Task not found"}]' "DELETE an unknown task: 404"
req DELETE "/api/loops/v2/tasks/$A?loop_id=$ID"
is "$(jr '[d["status"], d["body"]]')" '[200,{"success":true,"message":"Task deleted"}]' "DELETE: Task deleted"
req GET "/api/loops/v2/$ID/tasks"
is "$(jr '[[t["task_id"], t["order"]] for t in d["body"]["data"]]')" "[[\"$C\",0],[\"$B\",1]]" \
    "DELETE: the order renumbered 0..n-1"
is "$(jsonl_ok "$TF")" "['$C', '$B']" "DELETE: the file valid JSONL, newline-terminated"
req GET "/api/loops/v2/tasks/$A"
is "$(jr 'd["status"]')" 404 "DELETE: the task is gone"

# --- the engine's layout ({id}.tasks.jsonl, key "id"): rewritten in
# place while it is the only file; with CCW's file too, merged into it
req POST /api/loops/v2 '{"title": "Engine layout"}'
L3=$(jr 'd["body"]["data"]["loop_id"]')
printf '%s\n%s\n' '{"id":"t-one","description":"One","order":0}' \
    '{"id":"t-two","description":"Two","order":1}' >"$D/$L3.tasks.jsonl"
req DELETE "/api/loops/v2/tasks/t-one?loop_id=$L3"
is "$(jr 'd["status"]'):$(cat "$D/$L3.tasks.jsonl"):$(ls -d "$D/$L3" 2>/dev/null)" \
    '200:{"id":"t-two","description":"Two","order":0}:' "engine layout: rewritten in place"
mkdir "$D/$L3"
printf '%s' '{"task_id":"t-ccw","description":"Ccw","order":0}' >"$D/$L3/tasks.jsonl"
req PUT /api/loops/v2/tasks/t-ccw "{\"loop_id\": \"$L3\", \"description\": \"Ccw two\"}"
is "$(jr 'd["status"]'):$(jsonl_ok "$D/$L3/tasks.jsonl"):$(ls "$D/$L3.tasks.jsonl" 2>&1 | grep -c 'No such')" \
    "200:['t-ccw', None]:1" "both layouts: merged into CCW's file, the engine's removed"
is "$(sed -n 2p "$D/$L3/tasks.jsonl" | jget - 'd["id"]')" t-two "both layouts: ... nothing lost"

# --- the events
srv_wait_grep "$T_TMP/ev" "TASK_DELETED" 5000
ok $? "/api/events: TASK_DELETED"
ev() {
	grep '^data: ' "$T_TMP/ev" | sed 's/^data: //' | python3 -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    if d.get("type") == sys.argv[1] and d.get("loop_id") == sys.argv[3]:
        print(json.dumps(eval(sys.argv[2]), separators=(",", ":")))' "$1" "$2" "$ID"
}
is "$(ev TASK_UPDATED '[d["loop_id"], d["task_id"], d["task"]["description"]]')" \
    "[\"$ID\",\"$B\",\"Beta two\"]" "/api/events: TASK_UPDATED {loop_id, task_id, task}"
is "$(ev TASK_REORDERED '[d["loop_id"], d["ordered_task_ids"], [t["task_id"] for t in d["tasks"]]]')" \
    "[\"$ID\",[\"$C\",\"$A\"],[\"$C\",\"$A\",\"$B\"]]" "/api/events: TASK_REORDERED {loop_id, ordered_task_ids, tasks}"
is "$(ev TASK_DELETED '[d["loop_id"], d["task_id"], sorted(d)]')" \
    "[\"$ID\",\"$A\",[\"loop_id\",\"task_id\",\"timestamp\",\"type\"]]" \
    "/api/events: TASK_DELETED {loop_id, task_id}"

# --- the updated task reaches the develop prompt
req POST "/api/loops/v2/$ID/start"
is "$(jr 'd["status"]')" 200 "start"
srv_wait_status "$ID" completed 30000
ok $? "the loop ran to its end"
like "$(cat "$R.develop")" "Your task now \($C\): Gamma" "develop: the task of order 0 first"
like "$(cat "$R.develop")" "$B: Beta two \(instructions: PURPOSE: beta, updated\)" \
    "develop: the task updated through serve, with its new instructions"
is "$(grep -Ec "$A|Alpha" "$R.develop")" 0 "develop: the deleted task is not there"

# --- PATCH .../status: moves that make no sense refused
req PATCH "/api/loops/v2/$ID/status" '{"status": "running"}'
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"Cannot change loop status from completed to running"}]' \
    "PATCH completed -> running: 400"
req PATCH "/api/loops/v2/$ID/status" '{"status": "bogus"}'
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"Invalid status: bogus"}]' "PATCH an unknown status: 400"
req PATCH "/api/loops/v2/$ID/status" '{}'
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"status is required"}]' "PATCH without a status: 400"
req POST /api/loops/v2 '{"title": "Moves"}'
L2=$(jr 'd["body"]["data"]["loop_id"]')
req PATCH "/api/loops/v2/$L2/status" '{"status": "paused"}'
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"Cannot change loop status from created to paused"}]' \
    "PATCH created -> paused: 400"
req PATCH "/api/loops/v2/$L2/status" '{"status": "completed"}'
is "$(jr 'd["status"]')" 400 "PATCH to completed: 400 (the engine's)"
req PATCH "/api/loops/v2/$L2/status" '{"status": "failed"}'
is "$(jr '[d["status"], d["body"]["success"], d["body"]["data"]["status"], "message" in d["body"]]')" \
    '[200,true,"failed",false]' "PATCH created -> failed: {success, data}"
req PATCH "/api/loops/v2/$L2/status" '{"status": "running"}'
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"Cannot change loop status from failed to running"}]' \
    "PATCH failed -> running: 400"
req PATCH "/api/loops/v2/loop-v2-nope/status" '{"status": "failed"}'
is "$(jr '[d["status"], d["body"]]')" '[404,{"error":"Loop not found"}]' "PATCH an unknown loop: 404"

kill "$EVPID" 2>/dev/null
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
is "$T_RC" 4 "SIGTERM: exit 4"
t_done
