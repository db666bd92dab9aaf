#!/bin/bash
# retire-control.sh: `control` (and so `mcp`, which shares its session)
# retires finished agents past keep_agents as serve's /api/agents does
# (bounded.sh): with keep_agents 1 and three agents finished, the two
# older ones' reports are saved as AGENT_ID.result.json and `result` and
# `wait` of the first answer from it, in the same shape as before.
. "$(dirname "$0")/lib.sh"
t_watchdog 40
t_marker M retctl
R=$T_TMP/r
t_run_config "$R" true true true true true
python3 - "$R/.loop/config.json" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1])); c["keep_agents"] = 1
json.dump(c, open(sys.argv[1], "w"))
PYEOF
OK="exec '$FAKE' --marker $M result success"
spawn() {
	ctl_send "{\"id\":$1,\"verb\":\"spawn\",\"role\":\"develop\",\
\"message\":\"go\",\"tool\":\"bash\",\"command\":\"$OK said-$2\"}"
}

ctl_start "$T_TMP/c" -C "$R"
spawn 1 1
r=$(ctl_recv 1 "$(t_ms 10000)")
is "$(jget - '[d["ok"], d["agent_id"]]' <<<"$r")" '[true,"agent-1"]' \
    "control: the first agent spawned"
ctl_send "{\"id\":2,\"verb\":\"wait\",\"targets\":[\"agent-1\"],\
\"timeout_ms\":$(t_ms 20000)}"
r=$(ctl_recv 2 "$(t_ms 25000)")
is "$(jget - 'd["status"]' <<<"$r")" '{"agent-1":"completed"}' \
    "control: the first agent finished"
ctl_send '{"id":3,"verb":"result","target":"agent-1"}'
ctl_recv 3 | jget - '{k: v for k, v in d.items() if k != "id"}' \
    >"$T_TMP/before.json"
is "$(jget "$T_TMP/before.json" '[d["ok"], d["result"]["summary"]]')" \
    '[true,"said-1"]' "result of the first agent while it is in memory"
spawn 4 2
spawn 5 3
ctl_recv 4 >/dev/null && ctl_recv 5 >/dev/null
ctl_send "{\"id\":6,\"verb\":\"wait\",\"targets\":[\"agent-2\",\"agent-3\"],\
\"mode\":\"all\",\"timeout_ms\":$(t_ms 20000)}"
r=$(ctl_recv 6 "$(t_ms 25000)")
is "$(jget - 'd["status"]' <<<"$r")" \
    '{"agent-2":"completed","agent-3":"completed"}' "two more agents finished"

# the retirement runs on the session's next loop turn: poll for the files
D=$(ls -d "$R/.loop/"*.workers)
END=$(t_until 10000)
until [ -e "$D/agent-1.result.json" ] && [ -e "$D/agent-2.result.json" ] ||
    [ "$(t_now_ms)" -ge "$END" ]; do
	sleep 0.05
done
ok $([ -e "$D/agent-1.result.json" ] && [ -e "$D/agent-2.result.json" ]
    echo $?) "the two older agents retired: their reports saved beside their logs"
ok $([ ! -e "$D/agent-3.result.json" ]; echo $?) \
    "the newest finished agent is kept in memory (keep_agents 1)"
ctl_send '{"id":7,"verb":"result","target":"agent-1"}'
ctl_recv 7 | jget - '{k: v for k, v in d.items() if k != "id"}' \
    >"$T_TMP/after.json"
is "$(jget "$T_TMP/after.json" 'd')" "$(jget "$T_TMP/before.json" 'd')" \
    "result of a retired agent: the same answer as before it retired"
ctl_send '{"id":8,"verb":"wait","targets":["agent-1"],"timeout_ms":100}'
r=$(ctl_recv 8)
is "$(jget - '[d["ok"], d["status"]]' <<<"$r")" '[true,{"agent-1":"completed"}]' \
    "wait on a retired agent: completed"
ctl_stop "$(t_ms 15000)"
is "$T_RC" 0 "control: EOF, exit 0 (nothing freed twice, nothing leaked)"
t_done
