#!/bin/bash
# serve-basic.sh: `ccw-supervisor serve` on loopback with fake agents as
# the roles: /health and /metrics without a token, the token scheme (401
# without, the token route, 200 with), 404 and 405 with Allow, CCW's loop
# routes (create, validation, get, PUT, list, start, pause, resume, stop,
# delete refused while running and removing every file), the loop's
# events on /api/events, /api/agents, the token file rules, SIGTERM.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 150
t_valgrind_worker
t_marker M srvb
t_slack

# ev_of TYPE ID EXPR: EXPR of each TYPE event of loop ID on /api/events
# so far, in order, as one JSON list
ev_of() {
	python3 -c '
import json, sys
out = []
for l in open(sys.argv[1]):
    if l.startswith("data: "):
        e = json.loads(l[6:])
        if e.get("type") == sys.argv[2] and e.get("loop_id") == sys.argv[3]:
            out.append(eval(sys.argv[4]))
print(json.dumps(out))' "$T_TMP/ev" "$@"
}

OK="exec '$FAKE' --marker $M result success"
R=$T_TMP/proj
# develop waits for a go file (removed after each use) so that the loop
# is seen running and paused; once $R.hangmode exists it never finishes
DEV="if [ -e '$R.hangmode' ]; then touch '$R.h'; exec '$FAKE' --marker $M hang; fi; \
touch '$R.dev'; while [ ! -e '$R.go' ]; do sleep 0.02; done; \
rm -f '$R.go'; $OK dev"
t_run_config "$R" "$OK init" "$DEV" "$OK dbg" "$OK 'all good'" "$OK done" \
    '{"grace_ms": 500}'

srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens on a free loopback port ($SRV_PORT)"
like "$SRV_TOKEN" '^[0-9a-f]{32}$' "GET /api/auth/token from loopback: a random token"

# --- open routes, the token, routing
noauth GET /health
is "$(jr '[d["status"], d["body"]["status"]]')" '[200,"ok"]' "/health: 200 without a token"
noauth GET /metrics
is "$(jr 'd["status"]')" 200 "/metrics: 200 without a token"
like "$(jr 'd["body"]')" 'ccw_http_replies_total\{class="2xx"\} [1-9]' \
    "/metrics: replies by class in Prometheus text"
like "$(jr 'd["body"]')" 'ccw_sse_subscribers 0' "/metrics: SSE subscribers"
noauth GET /api/loops/v2
is "$(jr '[d["status"], d["body"]["success"]]')" '[401,false]' "no token: 401 JSON"
RES=$(python3 "$HTTPC" "$SRV_PORT" GET /api/loops/v2 -t wrong)
is "$(jr 'd["status"]')" 401 "a wrong token: 401"
req GET /api/loops/v2
is "$(jr '[d["status"], d["body"]["total"]]')" '[200,0]' "the token: 200, no loop yet"
req GET /api/nothing
is "$(jr '[d["status"], d["type"]]')" '[404,"application/json"]' "unknown route: 404 JSON"
req PUT /api/loops/v2
is "$(jr '[d["status"], d["allow"], d["body"]["success"]]')" \
    '[405,"GET, POST",false]' "wrong method: 405 with Allow, JSON body"

# --- events from here on
srv_events "$T_TMP/ev"
ok $? "/api/events: subscribed"

# --- create
req POST /api/loops/v2 '{"title": ""}'
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"title is required and must be non-empty"}]' \
    "create without a title: 400, CCW's body-route error"
req POST /api/loops/v2 '{"title": "Add X", "max_iterations": 0}'
is "$(jr 'd["status"]')" 400 "create with max_iterations 0: 400"
req POST /api/loops/v2 '{"title": "Add X", "description": "the feature", "max_iterations": 3}'
is "$(jr '[d["status"], d["body"]["success"], d["body"]["data"]["status"], d["body"]["data"]["max_iterations"]]')" \
    '[200,true,"created",3]' "create: 200, status created"
ID=$(jr 'd["body"]["data"]["loop_id"]')
like "$ID" '^loop-v2-[0-9]{8}T[0-9]{6}-[0-9a-f]{8}$' "create: a CCW loop id"
req GET "/api/loops/v2/$ID"
is "$(jr '[d["status"], d["body"]["data"]["title"]]')" '[200,"Add X"]' "get: the loop"
req GET "/api/loops/v2/nope-1"
is "$(jr '[d["status"], d["body"]]')" '[404,{"success":false,"error":"Loop not found"}]' "get: 404 Loop not found"
req GET "/api/loops/v2/..x"
is "$(jr '[d["status"], d["body"]["error"]]')" '[400,"Invalid loop ID format"]' "get: a bad id is 400"
req POST "/api/loops/v2/$ID/pause"
is "$(jr 'd["status"]')" 400 "pause of a created loop: 400"
req PUT "/api/loops/v2/$ID" '{"title": "Add Y", "tags": [], "priority": "high", "notes": "n"}'
is "$(jr '[d["status"], d["body"]["data"]["title"], d["body"]["data"]["tags"], d["body"]["data"]["priority"], d["body"]["data"]["status"]]')" \
    '[200,"Add Y",[],"high","created"]' "PUT: the front end's fields committed"
is "$(jget "$R/.loop/$ID.json" '[d["title"], d["priority"], d["notes"]]')" '["Add Y","high","n"]' "PUT: on disk"
req PUT "/api/loops/v2/$ID" '{"priority": "urgent"}'
is "$(jr '[d["status"], list(d["body"].keys())]')" '[400,["error"]]' "PUT with a bad priority: 400 {error}"

# --- start, running, pause, resume, completed
req POST "/api/loops/v2/$ID/start"
is "$(jr '[d["status"], d["body"]["message"], d["body"]["data"]["status"]]')" \
    '[200,"Loop started","running"]' "start: 200, Loop started, running"
t_wait_file "$R.dev" 10000
ok $? "start launched the loop: develop runs"
srv_wait_hosted 1 5000
ok $? "/health: the server drives 1 loop"
req DELETE "/api/loops/v2/$ID"
is "$(jr '[d["status"], d["body"]]')" \
    '[400,{"success":false,"error":"Cannot delete running loop. Stop it first."}]' \
    "delete while running: 400"
req PUT "/api/loops/v2/$ID" '{"title": "Not now"}'
is "$(jr '[d["status"], d["body"]]')" '[400,{"error":"Cannot update loop with status: running"}]' \
    "PUT while running: 400"
req POST "/api/loops/v2/$ID/pause"
is "$(jr '[d["status"], d["body"]["message"], d["body"]["data"]["status"]]')" \
    '[200,"Loop paused","paused"]' "pause: 200, paused"
touch "$R.go"
srv_wait_hosted 0 10000
ok $? "paused: the driver finished its step and let the loop go"
is "$(jget "$R/.loop/$ID.json" '[d["status"], d["skill_state"]["completed_actions"]]')" \
    '["paused",["init","develop"]]' "paused after develop"
req POST "/api/loops/v2/$ID/resume"
is "$(jr '[d["status"], d["body"]["message"], d["body"]["data"]["status"]]')" \
    '[200,"Loop resumed","running"]' "resume: 200, running"
srv_wait_status "$ID" completed 20000
ok $? "resume relaunched the loop: it completed"
is "$(jget "$R/.loop/$ID.json" 'd["skill_state"]["completed_actions"]')" \
    '["init","develop","debug","validate","complete"]' "every action ran once, from the saved one"
req POST "/api/loops/v2/$ID/resume"
is "$(jr '[d["status"], d["body"]["success"]]')" '[400,false]' "resume of a completed loop: 400"
srv_wait_grep "$T_TMP/ev" "\"LOOP_COMPLETED\".*$ID|$ID.*LOOP_COMPLETED" 5000
ok $? "/api/events: LOOP_COMPLETED of the loop"
like "$(grep "^data: " "$T_TMP/ev" | grep LOOP_STATE_UPDATE | grep "$ID" | grep -c '"running"')" '^[1-9]' \
    "/api/events: LOOP_STATE_UPDATE with status running"
like "$(grep "^data: " "$T_TMP/ev" | grep LOOP_STATE_UPDATE | grep -c '"paused"')" '^[1-9]' \
    "/api/events: LOOP_STATE_UPDATE with status paused"
like "$(grep -m1 '^id: ' "$T_TMP/ev")" '^id: [0-9]+$' "/api/events: an id: line per event"
# CCW's declared fields: LOOP_COMPLETED's final_status, total_iterations
# and reason (the page reads final_status), a LOOP_STEP_COMPLETED per step
srv_wait_grep "$T_TMP/ev" "\"final_status\": *\"completed\".*$ID|$ID.*\"final_status\": *\"completed\"" 5000
ok $? "/api/events: LOOP_COMPLETED with final_status completed"
is "$(ev_of LOOP_COMPLETED "$ID" '[e.get("final_status"), e.get("total_iterations"), "reason" in e]')" \
    "[[\"paused\", 1, true], [\"completed\", $(jget "$R/.loop/$ID.json" 'd["current_iteration"]'), true]]" \
    "/api/events: LOOP_COMPLETED's final_status and total_iterations, paused then completed"
is "$(ev_of LOOP_STEP_COMPLETED "$ID" '[e.get("step_id"), e.get("status"), "timestamp" in e]')" \
    '[["init", "success", true], ["develop", "success", true], ["debug", "success", true], ["validate", "success", true], ["complete", "success", true]]' \
    "/api/events: a LOOP_STEP_COMPLETED per step, with its status"

# --- list
req POST /api/loops/v2 '{"title": "Second"}'
ID2=$(jr 'd["body"]["data"]["loop_id"]')
req GET "/api/loops/v2?status=created"
is "$(jr '[d["body"]["total"], d["body"]["data"][0]["loop_id"]]')" "[1,\"$ID2\"]" "list ?status=created"
req GET "/api/loops/v2?limit=1&offset=0"
is "$(jr '[d["body"]["total"], len(d["body"]["data"]), d["body"]["hasMore"], d["body"]["data"][0]["loop_id"]]')" \
    "[2,1,true,\"$ID2\"]" "list: newest first, limit and hasMore"

# --- stop kills the workers; delete removes every file
touch "$R.hangmode"
req POST "/api/loops/v2/$ID2/start"
t_wait_file "$R.h" 10000
ok $? "stop: the second loop's develop hangs"
req POST "/api/loops/v2/$ID2/stop"
is "$(jr '[d["status"], d["body"]["message"], d["body"]["data"]["status"], d["body"]["data"]["failure_reason"]]')" \
    '[200,"Loop stopped","failed","Manually stopped by user"]' "stop: 200, failed, CCW's reason"
t_wait_gone "$M" 10000
ok $? "stop: the workers are gone"
srv_wait_hosted 0 10000
ok $? "stop: the loop left the host"
ok $(jget "$R/.loop/$ID2.json" '"completed_at" in d' | grep -q true; echo $?) "stop: completed_at set"
srv_wait_grep "$T_TMP/ev" "LOOP_COMPLETED.*$ID2|$ID2.*LOOP_COMPLETED" 5000
# Whichever lands last, the loop's last commit or serve's stop, the
# loop's last save carries the stop's status and reason: the event says
# what the file says.
is "$(ev_of LOOP_COMPLETED "$ID2" '[e.get("final_status"), e.get("reason")]')" \
    '[["failed", "Manually stopped by user"]]' \
    "stop: LOOP_COMPLETED says failed with CCW's reason, as the file does"
mkdir -p "$R/.loop/$ID2"
printf '{"task_id":"t"}\n' >"$R/.loop/$ID2/tasks.jsonl"
req DELETE "/api/loops/v2/$ID2"
is "$(jr '[d["status"], d["body"]]')" '[200,{"success":true,"message":"Loop deleted"}]' "delete: 200"
is "$(ls "$R/.loop" | grep -c "$ID2")" 0 "delete: no file of the loop left (tasks dir, workers, locks)"
srv_wait_grep "$T_TMP/ev" "LOOP_DELETED.*$ID2|$ID2.*LOOP_DELETED" 5000
ok $? "/api/events: LOOP_DELETED"
req GET "/api/loops/v2/$ID2"
is "$(jr 'd["status"]')" 404 "deleted: 404"

# --- /api/agents through the verb table
req POST /api/agents "{\"role\": \"develop\", \"tool\": \"bash\", \"command\": \"$OK agent-said\"}"
AG=$(jr 'd["body"].get("agent_id")')
is "$(jr '[d["status"], d["body"]["ok"]]')" '[200,true]' "agents: spawn"
req POST /api/agents/wait "{\"targets\": [\"$AG\"], \"timeout_ms\": 20000}"
is "$(jr "d[\"body\"][\"status\"][\"$AG\"]")" completed "agents: wait"
req GET "/api/agents/$AG"
is "$(jr '[d["body"]["result"]["status"], d["body"]["result"]["summary"]]')" \
    '["success","agent-said"]' "agents: result (the WORKER_RESULT)"
req GET /api/agents
is "$(jr "d[\"body\"][\"agents\"][\"$AG\"]")" completed "agents: list"
req POST "/api/agents/$AG/close" '{}'
is "$(jr '[d["status"], d["body"]["ok"]]')" '[200,true]' "agents: close"

# --- SIGTERM: exit 4
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
is "$T_RC" 4 "SIGTERM: exit 4"
t_wait_pid "$EVPID" 5000

# --- the token file
printf 'sekrit-token\n' >"$T_TMP/tok"
chmod 0644 "$T_TMP/tok"
timeout 10 $WRAP "$SUP" serve -C "$R" --http 127.0.0.1:0 --token-file "$T_TMP/tok" >/dev/null 2>"$T_TMP/tok.err"
is "$?" 2 "a token file others may read: exit 2"
like "$(cat "$T_TMP/tok.err")" "0600" "says why"
timeout 10 $WRAP "$SUP" serve -C "$R" --http 0.0.0.0:0 >/dev/null 2>"$T_TMP/any.err"
is "$?" 2 "beyond loopback without --token-file: exit 2"
chmod 0600 "$T_TMP/tok"
srv_start "$T_TMP/srv2" -C "$R" --token-file "$T_TMP/tok"
is "$SRV_TOKEN" sekrit-token "the token route gives the file's token"
req GET /api/loops/v2
is "$(jr 'd["status"]')" 200 "the file's token is accepted"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
is "$T_RC" 4 "SIGTERM, nothing running: exit 4"
t_done
