#!/bin/bash
# serve-outcome-gaps.sh: outcomes that used to reach no event and no
# metric.  A loop stopped under serve while its develop hangs publishes
# that worker's worker_result on /api/events (failed, error_kind
# cancelled) and /metrics counts it as outcome "cancelled"; a worker
# spawned through /api/agents (not in a loop) whose bash exits 1 is
# counted in ccw_worker_outcomes_total and the duration histogram, as a
# loop's is: outcome "failed" (the tool's status; the worker did not
# crash, so no error kind).  A loop that serve's own SIGTERM stops is
# counted in ccw_loops_ended_total (stopped) and left running with
# serve's signal as the reason.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 150
t_valgrind_worker
t_marker M srvgap

OK="exec '$FAKE' --marker $M result success"
R=$T_TMP/proj
DEV="touch '$R.h'; exec '$FAKE' --marker $M hang"
t_run_config "$R" "$OK init" "$DEV" "$OK dbg" "$OK 'all good'" "$OK done" \
    '{"grace_ms": 500}'

# serve and the event stream stopped by pid before the cleanup
T_STOP_VARS="SRV_PID EVPID"
srv_start "$T_TMP/srv" -C "$R" --grace-ms 60000
ok $? "serve listens ($SRV_PORT)" || { t_done; exit 1; }
srv_events "$T_TMP/ev"
ok $? "/api/events: subscribed"

# metric_until NAME{LABELS} MS: poll /metrics until the series is there;
# its value printed (empty at the deadline)
metric_until() {
	local end v
	end=$(t_until "$2")
	while :; do
		v=$(python3 "$HTTPC" "$SRV_PORT" GET /metrics |
		    jget - 'd["body"]' | awk -v k="$1" '$1 == k { print $2 }')
		[ -n "$v" ] && break
		[ "$(t_now_ms)" -ge "$end" ] && break
		sleep 0.1
	done
	echo "$v"
}

# --- a loop stopped while its develop hangs
req POST /api/loops/v2 '{"title": "Stopped"}'
ID=$(jr 'd["body"]["data"]["loop_id"]')
req POST "/api/loops/v2/$ID/start"
t_wait_file "$R.h" 20000
ok $? "the loop's develop hangs"
req POST "/api/loops/v2/$ID/stop"
is "$(jr 'd["status"]')" 200 "stop: 200"
srv_wait_grep "$T_TMP/ev" "LOOP_COMPLETED.*$ID|$ID.*LOOP_COMPLETED" 20000
ok $? "/api/events: LOOP_COMPLETED"
is "$(python3 -c '
import json, sys
out = []
for l in open(sys.argv[1]):
    if l.startswith("data: "):
        e = json.loads(l[6:])
        if (e.get("type") == "worker_result" and e.get("loop_id") ==
            sys.argv[2] and e.get("role") == "develop"):
            out.append([e.get("role"), e.get("status"), e.get("error_kind"),
                bool(e.get("reason"))])
print(json.dumps(out))' "$T_TMP/ev" "$ID")" \
    '[["develop", "failed", "cancelled", true]]' \
    "/api/events: the stopped develop's worker_result, failed, cancelled, with a reason"
is "$(metric_until 'ccw_worker_outcomes_total{role="develop",tool="bash",outcome="cancelled"}' 10000)" 1 \
    "/metrics: the stopped develop counted as cancelled"
is "$(jget "$R/.loop/$ID.json" '[d["status"], d["skill_state"].get("completed_actions", [])]')" \
    '["failed",["init"]]' "the state: failed as before, develop not among the completed actions"

# --- a worker of /api/agents whose bash exits 1
req POST /api/agents '{"role": "develop", "tool": "bash", "command": "exit 1"}'
is "$(jr '[d["status"], d["body"]["ok"]]')" '[200,true]' "agents: spawn"
is "$(metric_until 'ccw_worker_duration_seconds_count{role="develop",tool="bash",outcome="failed"}' 20000)" 1 \
    "/metrics: the agent's exit 1 in the duration histogram (failed)"
is "$(metric_until 'ccw_worker_outcomes_total{role="develop",tool="bash",outcome="failed"}' 1000)" 1 \
    "/metrics: the agent's exit 1 counted (failed)"

# --- serve's own SIGTERM: the loop it stops counts as ended (stopped).
# An agent that ignores SIGTERM (the grace is long) keeps serve up after
# the loop ended, so /metrics can be read; its file let go, serve exits.
rm -f "$R.h"
req POST /api/loops/v2 '{"title": "Signalled"}'
ID2=$(jr 'd["body"]["data"]["loop_id"]')
req POST "/api/loops/v2/$ID2/start"
t_wait_file "$R.h" 20000
ok $? "the second loop's develop hangs"
req POST /api/agents "{\"role\": \"develop\", \"tool\": \"bash\", \"command\": \"trap '' TERM INT; touch '$R.up'; exec '$FAKE' --marker $M ignore-term wait-file '$R.rel'\"}"
is "$(jr 'd["status"]')" 200 "agents: spawn one that ignores SIGTERM"
t_wait_file "$R.up" 20000
ok $? "the agent runs beside the loop's develop"
kill -TERM "$SRV_PID"
is "$(metric_until 'ccw_loops_ended_total{status="stopped"}' 20000)" 1 \
    "/metrics: the loop serve's SIGTERM stopped counted as ended, stopped"
touch "$R.rel"
t_wait_pid "$SRV_PID" 30000
like "$T_RC" '^(0|4)$' "serve stops on SIGTERM (exit $T_RC)"
SRV_PID=
is "$(jget "$R/.loop/$ID2.json" '[d["status"], d["interrupted"]["reason"]]')" \
    '["running","serve got signal 15 (Terminated)"]' \
    "the stopped loop is left running, serve's signal recorded"
t_done
