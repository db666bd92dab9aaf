#!/bin/bash
# bounded.sh: memory and disk stay bounded for a host that runs for weeks
# (issue 26).  A crash loop (a parallel step whose every role fails,
# retried at once) keeps skill_state.errors at its newest 50 with
# errors_dropped counting the rest, and one failed task, not one per
# attempt; its history rotates by size, 3 old files kept, and its
# workers directory keeps the newest agents' logs.  serve with keep_agents 1 retires finished /api/agents agents
# (the ccw_workers gauge stays small, ccw_agents_retired_total counts)
# and still answers `result` of a retired one, as it did before, from
# the report it left beside its log.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 60
t_marker M bound

# --- a crash loop: 18 iterations of three failing roles, no wait between
R=$T_TMP/crash
mkdir -p "$R/.loop"
python3 - "$R/.loop/config.json" <<'PYEOF'
import json, sys
rt = {"attempts": 1000000, "initial_interval_ms": 1,
      "backoff_coefficient": 1.0, "maximum_interval_ms": 1}
roles = {"init": {"command": "true"}}
for r in ["develop", "debug", "validate", "complete"]:
    roles[r] = {"command": "exit 3", "retry": rt}
json.dump({"default_tool": "bash", "roles": roles}, open(sys.argv[1], "w"))
PYEOF
CCW_ROTATE_BYTES=2000 CCW_WORKER_LOGS_KEEP=10 \
    t_loop_run "$R" c1 -m parallel -n 18 --quiet crash
F=$R/.loop/c1.json
is "$(jget "$F" '[d["status"], d["current_iteration"]]')" '["failed",18]' \
    "crash loop: ran its 18 iterations and failed at the bound"
is "$(jget "$F" 'len(d["skill_state"]["errors"])')" 50 \
    "errors[]: the newest 50 kept (STATE_ERRORS_MAX)"
is "$(jget "$F" 'd["skill_state"].get("errors_dropped")')" 4 \
    "errors_dropped: the 4 older ones counted (3 roles x 18 - 50)"
is "$(jget "$F" 'all({"action", "message", "timestamp"} <= set(e) <= {"action", "message", "timestamp", "kind", "reason"} for e in d["skill_state"]["errors"])')" \
    true "errors[]: each entry keeps CCW's shape"
is "$(jget "$F" 'len(d["skill_state"]["develop"]["tasks"])')" 1 \
    "develop: the same failure fails its one task again, no task per attempt"
SZ=$(stat -c %s "$F")
[ "$SZ" -lt 12000 ]
ok $? "the state file stays small ($SZ bytes)"
"$SUP" state validate -C "$R" c1 >/dev/null 2>&1
ok $? "the capped state is valid (state validate)"
# the history rotates by size (CCW_ROTATE_BYTES 2000 for the test): at
# most ROTATE_KEEP (3) old files beside it, each about the limit: under
# it before its last append (an action's record, with the prompt replay
# shows, is larger than the limit), two records past it at the most
H=$R/.loop/c1.history.jsonl
is "$(cd "$R/.loop" && ls c1.history.jsonl* | tr '\n' ' ')" \
    "c1.history.jsonl c1.history.jsonl.1 c1.history.jsonl.2 c1.history.jsonl.3 " \
    "history: rotated, 3 old files kept"
BIG=$(stat -c %s "$H" "$H".[123] | sort -n | tail -n 1)
REC=$(cat "$H" "$H".[123] | awk '{ if (length($0) + 1 > m) m = length($0) + 1 } END { print m }')
[ "$BIG" -lt $((2000 + 2 * REC)) ]
ok $? "history: no file far past the limit ($BIG bytes, records up to $REC)"
tail -n 1 "$H" | jget - 'd["event"]' >/dev/null
ok $? "history: the current file ends with a whole record"
MD=$(cd "$R/.loop/c1.progress" && ls develop.md* | tr '\n' ' ')
is "$MD" "develop.md develop.md.1 develop.md.2 develop.md.3 " \
    "progress Markdown: rotated too, 3 old files kept"
head -n 1 "$R/.loop/c1.progress/develop.md" | grep -q '^# '
ok $? "progress Markdown: the current file starts with its header"
# worker logs: the newest CCW_WORKER_LOGS_KEEP (10) agents' files stay,
# and those of the step running (55 workers ran)
NL=$(ls "$R/.loop/c1.workers" | grep -c '^agent-[0-9]*\.log$')
[ "$NL" -ge 10 ] && [ "$NL" -le 16 ]
ok $? "worker logs: $NL of 55 kept (10 newest, the running step's)"
ls "$R/.loop/c1.workers/agent-55.log" >/dev/null 2>&1
ok $? "worker logs: the newest is there (ids never repeat)"

# --- serve: a crash loop's workers leave memory step by step, and
# finished /api/agents agents retire past keep_agents.  A second crash
# loop is left running by a signal; serve resumes it at start.
python3 - "$R/.loop/config.json" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1])); c["keep_agents"] = 1
json.dump(c, open(sys.argv[1], "w"))
PYEOF
t_loop_start "$R" c2 -m parallel -n 100000 --quiet crash
# c2's iteration (0 until its file is there)
iter() {
	local n
	n=$(jget "$R/.loop/c2.json" 'd["current_iteration"]' 2>/dev/null)
	case $n in [0-9]*) echo "$n" ;; *) echo 0 ;; esac
}
END=$(t_until "$(t_ms 10000)")
until [ "$(iter)" -ge 1 ] || [ "$(t_now_ms)" -ge "$END" ]; do
	sleep 0.05
done
kill -TERM "$PID"
t_wait_pid "$PID" 10000
is "$(jget "$R/.loop/c2.json" 'd["status"]')" running "a second crash loop left running"
OK="exec '$FAKE' --marker $M result success"
srv_start "$T_TMP/serve" -C "$R"
ok $? "serve listens ($SRV_PORT)"
metric() {
	python3 "$HTTPC" "$SRV_PORT" GET /metrics | jget - 'd["body"]' |
	    python3 -c '
import sys
want = sys.argv[1]
n = 0
for l in sys.stdin:
    if l.startswith(want):
        n += int(float(l.split()[-1]))
print(n)' "$1"
}
END=$(t_until "$(t_ms 20000)")
until [ "$(iter)" -ge 20 ] || [ "$(t_now_ms)" -ge "$END" ]; do
	sleep 0.1
done
N=$(metric 'ccw_workers{source="loop"')
IT=$(iter)
[ "$IT" -ge 20 ] && [ "$N" -le 6 ]
ok $? "serve's crash loop at iteration $IT keeps $N workers in memory (<= 6: two steps)"
req POST /api/loops/v2/c2/stop
is "$(jr 'd["status"]')" 200 "the crash loop stopped"

req POST /api/agents "{\"role\": \"develop\", \"tool\": \"bash\", \"command\": \"$OK said-1\"}"
FIRST=agent-1
req POST /api/agents/wait "{\"targets\": [\"$FIRST\"], \"timeout_ms\": $(t_ms 20000)}"
req GET "/api/agents/$FIRST"
printf '%s\n' "$RES" | jget - 'd["body"]' >"$T_TMP/before.json"
is "$(jget "$T_TMP/before.json" '[d["ok"], d["result"]["summary"]]')" \
    '[true,"said-1"]' "result of the first agent while it is in memory"
for i in 2 3; do
	req POST /api/agents "{\"role\": \"develop\", \"tool\": \"bash\", \"command\": \"$OK said-$i\"}"
done
req POST /api/agents/wait "{\"targets\": [\"agent-2\", \"agent-3\"], \"mode\": \"all\", \"timeout_ms\": $(t_ms 20000)}"
is "$(jr 'd["body"]["status"]')" '{"agent-2":"completed","agent-3":"completed"}' \
    "two more agents finished"

# the retirement runs on serve's next loop turn: poll /metrics for it
END=$(t_until 10000)
while [ "$(metric ccw_agents_retired_total)" -lt 2 ] &&
    [ "$(t_now_ms)" -lt "$END" ]; do
	sleep 0.05
done
is "$(metric ccw_agents_retired_total)" 2 \
    "/metrics: 2 of 3 finished agents retired (keep_agents 1)"
is "$(metric 'ccw_workers{source="api"')" 1 \
    "/metrics: /api/agents keeps 1 agent in memory"
req GET /api/agents
is "$(jr 'sorted(d["body"]["agents"])')" '["agent-3"]' "list: the newest"
req GET "/api/agents/$FIRST"
printf '%s\n' "$RES" | jget - 'd["body"]' >"$T_TMP/after.json"
is "$(jr 'd["status"]')" 200 "result of a retired agent: 200"
is "$(jget "$T_TMP/after.json" 'd')" "$(jget "$T_TMP/before.json" 'd')" \
    "result of a retired agent: the same answer as before it retired"
ls "$R/.loop/"*.workers/"$FIRST.result.json" >/dev/null 2>&1
ok $? "its report is saved beside its log"
req GET /api/agents/agent-99
is "$(jr 'd["status"]')" 404 "an agent never spawned: still 404"

kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
is "$T_RC" 4 "serve: SIGTERM, exit 4 (nothing freed twice, nothing leaked)"
t_done
