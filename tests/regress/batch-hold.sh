#!/bin/bash
# batch-hold.sh: a batch held at its budget (issue 29) goes on when the
# budget is raised from another process: `batch --resume ID --max-...`
# on the live batch writes the budget into its state file; too small a
# raise keeps it held (budget_reached again), a large one thaws every
# held item, a loop's and a worker item's (frozen: their counters stand
# still, then go on) and the batch completes.  --hold-timeout ends a
# hold nobody raised: the items stopped, exit 1 with the reason.
# --max-time holds the batch at its running time the same way.
# claude is a stand-in: ITEM-1 costs 0.024675 USD (claude's real
# success stream), the others tick a counter until told to finish.
. "$(dirname "$0")/lib.sh"
t_watchdog 90
t_valgrind_worker
t_marker M bh
# the bash roles' answer; claude's real success stream
OK="exec '$FAKE' --marker $M result success"
STREAMS=$(cd "$srcdir/tests/streams" && pwd)
# claude: ITEM-1 answers once the tickers run (so they are running at
# the hold); ITEM-2, ITEM-3 write $CL/ticks.ITEM-N (whole: renamed into
# place; their pid to $CL/pid.ITEM-N) every 50 ms until $CL/go exists
cat >"$T_TMP/claude" <<EOF
#!/bin/bash
id=\$(grep -o 'ITEM-[0-9][0-9]*' | head -n 1)
if [ "\$id" = ITEM-1 ]; then
	for i in \$(seq 400); do
		[ -e "\$CL/ticks.ITEM-2" ] && { [ -n "\${ONE:-}" ] ||
		    [ -e "\$CL/ticks.ITEM-3" ]; } && break
		'$FAKE' --marker $M sleep 50
	done
else
	echo \$\$ >"\$CL/pid.\$id"
	n=0
	until [ -e "\$CL/go" ]; do
		n=\$((n + 1))
		echo \$n >"\$CL/ticks.\$id.tmp"
		mv "\$CL/ticks.\$id.tmp" "\$CL/ticks.\$id"
		'$FAKE' --marker $M sleep 50
	done
fi
exec '$FAKE' --marker $M replay "$STREAMS/claude-success.jsonl"
EOF
chmod +x "$T_TMP/claude"

# setup ROOT: develop on the claude stand-in, the other roles bash;
# ITEM-1 and ITEM-2 loops, ITEM-3 a worker item (develop) unless ONE
setup() {
	t_claude_cfg "$1" "$T_TMP/claude" "$OK"
	printf '{"title": "item %d", "description": "ITEM-%d: do it", "max_iterations": 3}\n' \
	    1 1 2 2 >"$1/items.jsonl"
	[ -n "${ONE:-}" ] || echo '{"title": "item 3", "description": "ITEM-3: a worker", "kind": "worker"}' \
	    >>"$1/items.jsonl"
}
# st EXPR: EXPR of the batch's state file (d)
st() { jget "$S" "$1" 2>/dev/null; }
# paused_now: the batch $R.err names is paused ($ID, $S set)
paused_now() {
	ID=$(t_batch_id "$R.err")
	S=$R/.workflow/.batch/$ID/state.json
	[ -n "$ID" ] && [ "$(st 'd["status"]')" = paused ]
}
# reached N: N budget_reached events in $R.out
reached() { [ "$(grep -c '"event":"budget_reached"' "$R.out")" -ge "$1" ]; }
# ticking ITEM N: its counter went past N
ticking() { [ "$(cat "$R/ticks.$1" 2>/dev/null || echo 0)" -gt "$2" ]; }
# raise ARGS...: `batch --resume $ID ARGS` from another process: $RRC
raise() {
	$WRAP "$SUP" batch --resume "$ID" -C "$R" "$@" >"$R.raise" 2>&1
	RRC=$?
}

# --- held at 0.02 USD (ITEM-1's claude costs 0.024675): raised too
# little, then enough; the loop's and the worker's counters
R=$T_TMP/raise
setup "$R"
CL=$R $WRAP "$SUP" batch "$R/items.jsonl" -C "$R" --json --jobs 3 \
    --max-cost-usd 0.02 >"$R.out" 2>"$R.err" &
BP=$!
t_poll 30000 paused_now
ok $? "held: the batch is paused at its budget"
is "$(st '[d["context"]["pause_reason"].startswith("budget: cost"), "hold_deadline" in d["context"], d["budget"]]')" \
    '[true,true,{"max_cost_usd":0.02}]' "held: pause_reason, hold_deadline and the top-level budget in its state"
t_poll 10000 t_frozen "$(cat "$R/pid.ITEM-2")"
ok $? "held: ITEM-2's (a loop's) claude is frozen"
t_poll 10000 t_frozen "$(cat "$R/pid.ITEM-3")"
ok $? "held: ITEM-3's (a worker item's) claude is frozen"
T2=$(cat "$R/ticks.ITEM-2")
T3=$(cat "$R/ticks.ITEM-3")
raise --max-cost-usd 0.021
is "$RRC" 0 "a raise too small: exit 0"
like "$(cat "$R.raise")" "budget set for its running batch" "a raise too small: it says so"
t_poll 20000 reached 2
ok $? "a raise too small: budget_reached again"
is "$(st '[d["status"], d["budget"], d["context"]["max_cost_usd"], "0.0210" in d["context"]["pause_reason"]]')" \
    '["paused",{"max_cost_usd":0.021},0.021,true]' "a raise too small: still paused, the new budget in its reason"
is "$(cat "$R/ticks.ITEM-2") $(cat "$R/ticks.ITEM-3")" "$T2 $T3" \
    "held: the loop's and the worker's counters stood still"
raise --max-cost-usd 1
is "$RRC" 0 "raised: exit 0"
t_poll 20000 ticking ITEM-2 "$T2"
ok $? "raised: the loop's counter goes on"
t_poll 20000 ticking ITEM-3 "$T3"
ok $? "raised: the worker's counter goes on"
is "$(st '[d["status"], "pause_reason" in d["context"], "hold_deadline" in d["context"]]')" \
    '["running",false,false]' "raised: running, no pause_reason, no hold_deadline"
touch "$R/go"
t_wait_pid "$BP" 30000
is "$T_RC" 0 "raised: the batch completes (exit 0)"
is "$(st '[d["context"]["completed_count"], d["context"]["stop_reason"]]')" '[3,null]' \
    "raised: all 3 completed, no stop reason"
is "$(python3 -c '
import json, sys
n = [json.loads(l)["event"] for l in open(sys.argv[1])]
print(n.count("budget_raised"), n.count("batch_resumed"), "loop_thawed" in n)' "$R.out")" \
    "2 1 True" "raised: budget_raised twice, batch_resumed once, loop_thawed"
t_wait_gone "$M" 10000
ok $? "raised: no tool left running"

# --- --max-time: the batch's running time held at its budget (warnings
# at 50 and 80 %), raised by --resume --max-time, the loop goes on
R=$T_TMP/wall
ONE=1 setup "$R"
W=$(t_ms 3000)
CL=$R ONE=1 $WRAP "$SUP" batch "$R/items.jsonl" -C "$R" --json --jobs 2 \
    --max-time "$W" >"$R.out" 2>"$R.err" &
BP=$!
t_poll 30000 paused_now
ok $? "wall: the batch is paused at its --max-time"
like "$(st 'd["context"]["pause_reason"]')" "^budget: [0-9]+ ms of running time reached --max-time $W\$" \
    "wall: pause_reason says the running time"
is "$(python3 -c '
import json, sys
print([(e["budget"], e["percent"]) for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "budget_warning"])' "$R.out")" \
    "[('wall_ms', 50), ('wall_ms', 80)]" "wall: budget_warning at 50 and 80 %"
t_poll 10000 t_frozen "$(cat "$R/pid.ITEM-2")"
ok $? "wall: ITEM-2's claude is frozen"
T2=$(cat "$R/ticks.ITEM-2")
raise --max-time 600000
is "$RRC" 0 "wall: raise --max-time: exit 0"
t_poll 20000 ticking ITEM-2 "$T2"
ok $? "wall: raised, the loop's counter goes on"
touch "$R/go"
t_wait_pid "$BP" 30000
is "$T_RC" 0 "wall: the batch completes (exit 0)"
is "$(st '[d["budget"], d["context"]["max_wall_ms"], d["context"]["usage"]["wall_ms"] >= '"$W"']')" \
    '[{"max_wall_ms":600000},600000,true]' "wall: the raised budget and the running time in its state"

# --- --hold-timeout 1: nobody raises it; ITEM-2 stopped, exit 1
R=$T_TMP/timeout
ONE=1 setup "$R"
CL=$R ONE=1 timeout -k 2 60 $WRAP "$SUP" batch "$R/items.jsonl" -C "$R" \
    --json --jobs 2 --max-cost-usd 0.02 --hold-timeout 1 >"$R.out" 2>"$R.err"
is "$?" 1 "--hold-timeout 1: exit 1"
ID=$(t_batch_id "$R.err")
S=$R/.workflow/.batch/$ID/state.json
like "$(st 'd["context"]["stop_reason"]')" "^budget: cost .*--hold-timeout" \
    "--hold-timeout 1: stop_reason names the budget and the timeout"
is "$(st '[d["status"], d["queue"][1]["status"], "hold_deadline" in d["context"]]')" \
    '["completed","pending",false]' "--hold-timeout 1: ITEM-2 left pending for --resume"
ok $(grep -q '"event":"loop_held"' "$R.out"; echo $?) "--hold-timeout 1: held first (loop_held)"
t_wait_gone "$M" 10000
ok $? "--hold-timeout 1: no tool left running"
t_done
