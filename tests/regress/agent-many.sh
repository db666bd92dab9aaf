#!/bin/bash
# agent-many.sh: many agents under one `control` session: 200 that exit at
# the same moment, 100 started at once (80 and 50 under the sanitizers, 40
# and 30 under a wrapper: the counts are the plain run's to prove), and 16
# send_input round trips in flight together.  Every exit, result and
# delivery must be accounted for.
. "$(dirname "$0")/lib.sh"
t_watchdog 85
t_marker M many
S=$T_TMP/state
GO=$T_TMP/go
ulimit -n "$(ulimit -Hn)" 2>/dev/null

# spawn_req ID COMMAND: a spawn request for a bash tool.
spawn_req() {
	printf '{"id":%s,"verb":"spawn","role":"develop","message":"go",'\
'"tool":"bash","command":"%s","model":null}' "$1" "$2"
}

# send_many FROM TO MAKER: write requests FROM..TO in one go, each made by
# the function MAKER ID.
send_many() {
	local i
	for ((i = $1; i <= $2; i++)); do
		"$3" "$i"
		echo
	done >&"$CTL_FD"
	CTL_LINES=$((CTL_LINES + $2 - $1 + 1))
}

# check_ids FROM TO PYEXPR: every response FROM..TO is in the output and
# PYEXPR (over the response r) is true for each; prints the failures.
check_ids() {
	python3 -c '
import json, sys
lo, hi, expr = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
got = {}
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if isinstance(r, dict) and isinstance(r.get("id"), int):
        got[r["id"]] = r
bad = []
for i in range(lo, hi + 1):
    r = got.get(i)
    try:
        good = r is not None and eval("(" + expr + ")", {"r": r, "i": i})
    except Exception:
        good = False
    if not good:
        bad.append(i)
for i in bad[:5]:
    print("#   id %d: %s" % (i, json.dumps(got.get(i))[:300]))
sys.exit(1 if bad else 0)
' "$CTL_OUT" "$1" "$2" "$3"
}

# wait_ids FROM TO MS: wait until responses FROM..TO have all arrived.
wait_ids() {
	local end
	end=$(( $(t_now_ms) + $3 ))
	until check_ids "$1" "$2" True >/dev/null; do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		kill -0 "$CTL_PID" 2>/dev/null ||
		    { check_ids "$1" "$2" True >/dev/null; return; }
		sleep 0.1
	done
}

# ids_json FROM TO: the agent ids answered to spawns FROM..TO, as JSON.
ids_json() {
	python3 -c '
import json, sys
ids = {}
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if isinstance(r, dict) and isinstance(r.get("id"), int) and "agent_id" in r:
        ids[r["id"]] = r["agent_id"]
print(json.dumps([ids.get(i) for i in range(int(sys.argv[2]),
    int(sys.argv[3]) + 1)]))
' "$CTL_OUT" "$1" "$2"
}

NB=200 NQ=100
[ "${CCW_SANITIZERS:-no}" = yes ] && NB=80 NQ=50
[ -n "$WRAP" ] && NB=40 NQ=30
# -- NB agents (200; 40 under a wrapper, where the point is the memory
# checks of every path, not the count) that all end when one file appears
# Odd request ids print a success block and exit 0, even ones exit 3
# with no block.
many_spawn() {
	if [ $(($1 % 2)) -eq 1 ]; then
		spawn_req "$1" "exec '$FAKE' --marker $M wait-file $GO \
result success exit 0"
	else
		spawn_req "$1" "exec '$FAKE' --marker $M wait-file $GO exit 3"
	fi
}
ctl_start "$T_TMP/ctl-200" --state-dir "$S" --loop-id m200
t0=$(t_now_ms)
send_many 1 $NB many_spawn
wait_ids 1 $NB "$(t_ms 20000)"
ok $? "$NB: all spawns answered"
check_ids 1 $NB 'r["ok"] is True and r["agent_id"].startswith("agent-")'
ok $? "$NB: all spawns ok"
ids=$(ids_json 1 $NB)
t_wait_count "$M" $NB 30000
ok $? "$NB: all $NB tools running"
echo "# timing: $NB spawns running after $(( $(t_now_ms) - t0 )) ms"
touch "$GO"
t0=$(t_now_ms)
ctl_send "{\"id\":1000,\"verb\":\"wait\",\"targets\":$ids,\
\"timeout_ms\":$(t_ms 30000),\"mode\":\"all\"}"
r=$(ctl_recv 1000 35000)
echo "# timing: $NB exits collected in $(( $(t_now_ms) - t0 )) ms"
is "$(jget - '[d["ok"], d["timed_out"], len(d["status"]),
    sorted(set(d["status"].values()))]' <<<"$r")" '[true,false,'$NB',["completed"]]' \
    "$NB: wait all: every agent completed"
# Ask for every result at once, by the ids the spawns answered.
python3 -c '
import json, sys
for i, a in enumerate(json.loads(sys.argv[1]), 1):
    print(json.dumps({"id": 2000 + i, "verb": "result", "target": a}))
' "$ids" >&"$CTL_FD"
wait_ids 2001 $((2000 + NB)) "$(t_ms 15000)"
ok $? "$NB: every result answered"
check_ids 2001 $((2000 + NB)) 'r["ok"] and (r["result"]["exit_code"],
    r["result"]["status"] == "success") == ((0, True) if i % 2 else (3, False))'
ok $? "$NB: odd ones exit 0 with success, even ones exit 3 without"
check_ids 2002 $((2000 + NB)) 'i % 2 == 1 or r["result"]["status"] in ("unknown", "failed")'
ok $? "$NB: no block means status unknown or failed"
ctl_stop 20000
is "$T_RC" 0 "$NB: the supervisor exits 0 on EOF"
t_wait_gone "$M" 2000; ok $? "$NB: no tool left"

# -- NQ agents at once (100; 30 under a wrapper), all complete
rm -f "$GO"
quick_spawn() {
	spawn_req "$1" "exec '$FAKE' --marker $M result success 'done $1'"
}
ctl_start "$T_TMP/ctl-100" --state-dir "$S" --loop-id m100
t0=$(t_now_ms)
send_many 1 $NQ quick_spawn
wait_ids 1 $NQ "$(t_ms 20000)"
ok $? "$NQ: all spawns answered"
ids=$(ids_json 1 $NQ)
ctl_send "{\"id\":1000,\"verb\":\"wait\",\"targets\":$ids,\
\"timeout_ms\":$(t_ms 30000),\"mode\":\"all\"}"
r=$(ctl_recv 1000 35000)
echo "# timing: $NQ agents done in $(( $(t_now_ms) - t0 )) ms"
is "$(jget - '[d["ok"], d["timed_out"], sorted(set(d["status"].values()))]' \
    <<<"$r")" '[true,false,["completed"]]' "$NQ: all completed"
python3 -c '
import json, sys
for i, a in enumerate(json.loads(sys.argv[1]), 1):
    print(json.dumps({"id": 2000 + i, "verb": "result", "target": a}))
' "$ids" >&"$CTL_FD"
wait_ids 2001 $((2000 + NQ)) "$(t_ms 15000)"
check_ids 2001 $((2000 + NQ)) 'r["result"]["status"] == "success" and
    r["result"]["summary"] == "done %d" % (i - 2000)'
ok $? "$NQ: each has its own result"
ctl_stop 20000
is "$T_RC" 0 "$NQ: the supervisor exits 0 on EOF"

# -- 16 send_input round trips in flight together
echo_spawn() {
	spawn_req "$1" "exec '$FAKE' --marker $M echo-stdin"
}
input_req() {
	local a=${IDS[$(($1 - 101))]}
	printf '{"id":%s,"verb":"send_input","target":"%s","message":"%s",'\
'"interrupt":false}' "$1" "$a" "note $(($1 - 100)) for $a"
}
ctl_start "$T_TMP/ctl-16" --state-dir "$S" --loop-id m16
send_many 1 16 echo_spawn
wait_ids 1 16 10000
ok $? "16: all spawns answered"
ids=$(ids_json 1 16)
# the agent ids in a shell array: one python for all 16 (IDS[i - 1])
mapfile -t IDS < <(jget - '"\n".join(str(a) for a in d)' <<<"$ids")
t_wait_count "$M" 16 10000
ok $? "16: all 16 tools running"
send_many 101 116 input_req
wait_ids 101 116 10000
ok $? "16: every send_input answered"
check_ids 101 116 'r["ok"] is True and isinstance(r.get("submission_id"), int)'
ok $? "16: every send_input acknowledged with a submission id"
missing=
end=$(( $(t_now_ms) + 5000 ))
for ((i = 1; i <= 16; i++)); do
	a=${IDS[$((i - 1))]}
	log=$S/m16.workers/$a.log
	until grep -q "^note $i for $a\$" "$log" 2>/dev/null; do
		[ "$(t_now_ms)" -ge "$end" ] && break
		sleep 0.05
	done
	grep -q "^note $i for $a\$" "$log" 2>/dev/null || missing="$missing $a"
	[ "$(grep -c '^note ' "$log" 2>/dev/null)" = 1 ] || missing="$missing $a(n)"
done
is "$missing" "" "16: each agent's log has its own message, only that one"
ctl_stop 20000
is "$T_RC" 0 "16: the supervisor exits 0 on EOF, closing the agents"
t_wait_gone "$M" 2000; ok $? "16: no tool left"

t_done
