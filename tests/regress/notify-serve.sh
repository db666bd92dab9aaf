#!/bin/bash
# notify-serve.sh: notifications from serve's hosts: a loop started
# through the API fails; its `failed` goes to a sink that works and to
# one that fails (dead-lettered); /metrics counts both
# (ccw_notify_sent_total, ccw_notify_failed_total) and has the debounced
# family.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 60
t_marker M notsrv

OK="exec '$FAKE' --marker $M result success"
R=$T_TMP/proj
mkdir -p "$R/.loop"
python3 - "$R" "$OK" "$T_TMP/got" <<'PYEOF'
import json, sys
root, ok, got = sys.argv[1:4]
roles = {r: {"command": ok, "grace_ms": 500} for r in
    ("init", "develop", "validate", "complete")}
roles["debug"] = {"command": "exit 1", "grace_ms": 500}
notify = {"sinks": {
    "good": {"type": "command", "argv": ["/bin/sh", "-c", "cat >>" + got]},
    "bad": {"type": "command", "argv": ["/bin/false"]}},
    "rules": [{"on": ["failed"], "sink": "good"},
              {"on": ["failed"], "sink": "bad"}]}
json.dump({"default_tool": "bash", "roles": roles, "notify": notify},
    open(root + "/.loop/config.json", "w"), indent=1)
PYEOF

T_STOP_VARS="SRV_PID"
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens ($SRV_PORT)" || { t_done; exit 1; }

req POST /api/loops/v2 '{"title": "fail me", "max_iterations": 2}'
ID=$(jr 'd["body"]["data"]["loop_id"]')
req POST "/api/loops/v2/$ID/start"
D=$R/.loop/notify.dead.jsonl
t_wait_file "$D" 30000
ok $? "the failing sink's dead letter"
is "$(jget "$D" '[d["sink"], d["kind"], d["loop_id"]]' 2>&1)" \
    "[\"bad\",\"failed\",\"$ID\"]" "the dead letter names sink, kind, loop"
t_wait_file "$T_TMP/got" 10000
is "$(jget "$T_TMP/got" '[d["kind"], d["loop_id"]]' 2>&1)" \
    "[\"failed\",\"$ID\"]" "the working sink got the failed body"

# the counts land when each delivery ends: polled
end=$(t_until 10000)
while :; do
	python3 "$HTTPC" "$SRV_PORT" GET /metrics | jget - 'd["body"]' \
	    >"$T_TMP/metrics.txt"
	grep -q '^ccw_notify_sent_total{sink="good",kind="failed"} 1$' \
	    "$T_TMP/metrics.txt" && grep -q \
	    '^ccw_notify_failed_total{sink="bad",kind="failed"} 1$' \
	    "$T_TMP/metrics.txt" && break
	[ "$(t_now_ms)" -ge "$end" ] && break
	sleep 0.1
done
like "$(cat "$T_TMP/metrics.txt")" \
    'ccw_notify_sent_total\{sink="good",kind="failed"\} 1' \
    "/metrics: ccw_notify_sent_total{sink,kind}"
like "$(cat "$T_TMP/metrics.txt")" \
    'ccw_notify_failed_total\{sink="bad",kind="failed"\} 1' \
    "/metrics: ccw_notify_failed_total{sink,kind}"
like "$(cat "$T_TMP/metrics.txt")" '# TYPE ccw_notify_debounced_total counter' \
    "/metrics: ccw_notify_debounced_total is a counter"

t_done
