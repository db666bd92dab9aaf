#!/bin/bash
# serve-log-entry.sh: CCW's LOOP_LOG_ENTRY {loop_id, step_id, line} on
# serve's /api/events: a worker's log lines, with its loop's id and its
# step; a worker printing 100000 lines is bounded per second (100 lines
# a loop, the rest counted in a line saying so) and serve answers
# meanwhile.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 150
t_valgrind_worker
t_marker M slog

OK="exec '$FAKE' --marker $M result success"
R=$T_TMP/proj
# develop prints three lines, or a flood when $R.flood exists
DEV="if [ -e '$R.flood' ]; then i=0; while [ \$i -lt 100000 ]; do \
echo flood-\$i; i=\$((i + 1)); done; \
else for i in 1 2 3; do echo \"dev-line-\$i\"; done; fi; $OK dev"
t_run_config "$R" "$OK init" "$DEV" "$OK dbg" "$OK 'all good'" "$OK done"

# entries ID: the LOOP_LOG_ENTRY events of loop ID, one JSON a line
entries() {
	python3 -c '
import json, sys
for l in open(sys.argv[1]):
    if l.startswith("data: "):
        e = json.loads(l[6:])
        if e.get("type") == "LOOP_LOG_ENTRY" and e.get("loop_id") == sys.argv[2]:
            print(json.dumps(e))' "$T_TMP/ev" "$1"
}

srv_start "$T_TMP/srv" -C "$R" && srv_events "$T_TMP/ev"
ok $? "serve listens, a client follows /api/events"

# --- a worker's lines, with the loop's id and the step's
req POST /api/loops/v2 '{"title": "Print lines"}'
ID=$(jr 'd["body"]["data"]["loop_id"]')
req POST "/api/loops/v2/$ID/start"
srv_wait_status "$ID" completed "$(t_ms 20000)"
ok $? "the loop completed"
srv_wait_grep "$T_TMP/ev" 'dev-line-3' "$(t_ms 5000)"
ok $? "/api/events: the develop worker's last line arrived"
is "$(entries "$ID" | python3 -c '
import json, sys
print(json.dumps(sorted({k for l in sys.stdin for k in json.loads(l)})))')" \
    '["agent_id", "line", "loop_id", "step_id", "timestamp", "type"]' \
    "LOOP_LOG_ENTRY carries loop_id, step_id, agent_id and line"
is "$(entries "$ID" | python3 -c '
import json, sys
lines = []
for l in sys.stdin:
    e = json.loads(l)
    if e["step_id"] == "develop":
        lines += [x for x in e["line"].split("\n") if x.startswith("dev-line")]
print(" ".join(lines))')" "dev-line-1 dev-line-2 dev-line-3" \
    "the develop step's lines, in order, each once"

# --- a flood: bounded per second, serve answers meanwhile
touch "$R.flood"
req POST /api/loops/v2 '{"title": "Flood"}'
ID2=$(jr 'd["body"]["data"]["loop_id"]')
t0=$(t_now_ms)
req POST "/api/loops/v2/$ID2/start"
srv_wait_grep "$T_TMP/ev" "LOOP_LOG_ENTRY.*flood-|flood-.*LOOP_LOG_ENTRY" \
    "$(t_ms 20000)"
ok $? "the flood's lines arrive"
req GET "/api/loops/v2/$ID2"
is "$(jr 'd["status"]')" 200 "serve answers during the flood"
srv_wait_status "$ID2" completed "$(t_ms 60000)"
ok $? "the flooding loop completed"
srv_wait_grep "$T_TMP/ev" "not sent" "$(t_ms 5000)"
ok $? "a line says how much of the log was not sent"
t1=$(t_now_ms)
n=$(entries "$ID2" | python3 -c '
import json, sys
print(sum(1 for l in sys.stdin for x in json.loads(l)["line"].split("\n")
    if x.startswith("flood-")))')
secs=$(( (t1 - t0) / 1000 + 2 ))
ok $([ "$n" -gt 0 ] && [ "$n" -le $((100 * secs)) ]; echo $?) \
    "flood lines sent: $n, at most 100 a second over ${secs}s"
kill "$EVPID" 2>/dev/null
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
t_wait_gone "$M" 5000
ok $? "no agent left"

t_done
