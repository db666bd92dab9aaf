#!/bin/bash
# batch-limits.sh: `batch` under a provider's rate limits and a budget.
# develop runs claude through a stand-in executable replaying claude's
# real streams (tests/streams): rate limited for 3 s, every item still
# completes, the hold (as long as the stream's retry_delay_ms) is in the
# events and no claude attempt starts while it is in force; a cost and a
# token budget crossed mid-batch hold the batch (issue 29: warnings at 50
# and 80 %, its loops held and paused with the reason, the batch paused
# and still up, nothing started or ended while held); SIGTERM ends the
# held batch with no process left, and a resume with a larger budget
# finishes without re-running completed items; kill -9 during a hold,
# then --resume: nothing lost.
. "$(dirname "$0")/lib.sh"
t_watchdog 90
t_valgrind_worker
t_marker M bl
t_slack

OK="exec '$FAKE' --marker $M result success"
STREAMS=$(cd "$srcdir/tests/streams" && pwd)
# the reset time the stand-in's 429 names (claude's retry_delay_ms), in
# neither of the default backoff's first two ranges (0.8-1.2, 1.6-2.4 s)
RESET=1400
# claude's real 429 with Retry-After (two api_retry, an is_error result
# with api_error_status 429), the delay set to RESET
sed "s/\"retry_delay_ms\":7000/\"retry_delay_ms\":$RESET/g" \
    "$STREAMS/claude-429-retryafter.jsonl" >"$T_TMP/429.jsonl"

# claude: the stand-in.  Its item (ITEM-N in the prompt on stdin) and
# every start and end go to $CL/claude.log as "start|end PID MS ITEM";
# with RL_MS set, rate limited for RL_MS ms from the first start (its
# time in $CL/t0); CLAUDE_SLOW ms of work before its answer, SLOW_MS
# for the first run of SLOW_ITEM.
cat >"$T_TMP/claude" <<EOF
#!/bin/bash
now() { local ns; ns=\$(date +%s%N); echo \$((ns / 1000000)); }
id=\$(grep -o 'ITEM-[0-9][0-9]*' | head -n 1)
echo "start \$\$ \$(now) \$id" >>"\$CL/claude.log"
trap 'echo "end \$\$ \$(now) \$id" >>"\$CL/claude.log"' EXIT
if [ -n "\${RL_MS:-}" ]; then
	# the first start's time, written whole before it is seen
	now >"\$CL/t0.\$\$"
	ln "\$CL/t0.\$\$" "\$CL/t0" 2>/dev/null
	rm -f "\$CL/t0.\$\$"
	if [ \$((\$(now) - \$(cat "\$CL/t0"))) -lt "\$RL_MS" ]; then
		'$FAKE' --marker $M replay "$T_TMP/429.jsonl"
		exit 1
	fi
fi
[ -n "\${CLAUDE_SLOW:-}" ] && '$FAKE' --marker $M sleep "\$CLAUDE_SLOW"
# SLOW_ITEM's first run takes SLOW_MS: the one running when a budget stops
if [ "\$id" = "\${SLOW_ITEM:-}" ] && mkdir "\$CL/slow.once" 2>/dev/null; then
	'$FAKE' --marker $M sleep "\$SLOW_MS"
fi
'$FAKE' --marker $M replay "$STREAMS/claude-success.jsonl"
EOF
chmod +x "$T_TMP/claude"

# setup ROOT N: ROOT configured, N items in ROOT/items.jsonl, no claude run yet
setup() {
	t_claude_cfg "$1" "$T_TMP/claude" "$OK"
	t_batch_items "$1/items.jsonl" "$2"
	: >"$1/claude.log"
}
# started ROOT: $ID and $S (its state file) of the batch ROOT.err names
started() {
	ID=$(t_batch_id "$1.err")
	S=$1/.workflow/.batch/$ID/state.json
}
# budget_events OUT: the budget_warning events (percent, budget, before
# budget_exceeded), how many budget_exceeded, an item_started after one
budget_events() {
	python3 - "$1" <<'PYEOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
names = [e["event"] for e in ev]
ex = names.index("budget_exceeded") if "budget_exceeded" in names else len(names)
print([(e["percent"], e["budget"], i < ex) for i, e in enumerate(ev)
    if e["event"] == "budget_warning"], names.count("budget_exceeded"),
    "item_started" in names[ex:])
PYEOF
}
# batch ROOT ARGS...: the batch in the foreground (stdout ROOT.out,
# stderr appended to ROOT.err), its exit status in $RC
batch() {
	local r=$1
	shift
	CL=$r timeout -k 2 60 $WRAP "$SUP" batch "$@" -C "$r" --json \
	    >"$r.out" 2>>"$r.err"
	RC=$?
	[ "$RC" -eq 124 ] && sed 's/^/#   /' "$r.err" | tail -n 5
	return 0
}
# held ROOT ARGS...: the batch in the background (its pid $BP) until
# its state says paused (budget_exceeded in --json first), $ID and $S set
held() {
	local r=$1 end
	shift
	CL=$r $WRAP "$SUP" batch "$@" -C "$r" --json >"$r.out" 2>>"$r.err" &
	BP=$!
	end=$(t_until 30000)
	while :; do
		ID=$(t_batch_id "$r.err")
		[ -n "$ID" ] && [ "$(jget "$r/.workflow/.batch/$ID/state.json" \
		    'd["status"]' 2>/dev/null)" = paused ] && break
		[ "$(t_now_ms)" -ge "$end" ] && break
		sleep 0.05
	done
	started "$r"
}
# term: SIGTERM to the held batch $BP, its exit status in $RC
term() {
	kill -TERM "$BP"
	t_wait_pid "$BP" 20000
	RC=$T_RC
}
# runs ROOT: "ITEM-N count" for every item the stand-in ran for
runs() { awk '$1 == "start" { n[$4]++ } END { for (i in n) print i, n[i] }' "$1/claude.log" | sort; }
# done_runs ROOT STATE: the runs of the items completed in STATE
done_runs() {
	local it
	for it in $(jget "$2" '" ".join("ITEM-%d" % (i + 1) for i, q in enumerate(d["queue"]) if q["status"] == "completed")'); do
		runs "$1" | grep "^$it "
	done
}
# still ROOT BEFORE: the lines of BEFORE ("ITEM-N count") whose count changed
still() {
	local it n
	while read -r it n; do
		[ -z "$it" ] && continue
		runs "$1" | grep -qx "$it $n" || echo "$it"
	done <<<"$2"
}

# --- rate limited for 3 s from the first claude attempt: 6 items at
# --jobs 3 wait and complete
R=$T_TMP/rl
setup "$R" 6
RL_MS=3000 batch "$R" "$R/items.jsonl" --jobs 3
is "$RC" 0 "rate limited: exit 0"
started "$R"
is "$(jget "$S" '[d["status"], d["context"]["completed_count"], d["context"]["failed_count"]]')" \
    '["completed",6,0]' "rate limited: all 6 items completed, none failed"
is "$(python3 - "$R.out" <<'PYEOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
names = [e["event"] for e in ev]
holds = [i for i, e in enumerate(ev) if e["event"] == "provider_hold"]
opens = [i for i, e in enumerate(ev) if e["event"] == "provider_open"]
print(len(holds) > 0 and all(ev[i]["provider"] == "claude" for i in holds + opens)
    and len(opens) > 0 and opens[-1] > holds[-1], "step_requeued" in names)
PYEOF
)" "True True" "rate limited: provider_hold on claude then provider_open, step_requeued, in --json"
is "$(python3 - "$R.out" "$RESET" <<'PYEOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
holds = [e for e in ev if e["event"] == "provider_hold"]
print(sorted(set((h["hold_ms"], h["reason"]) for h in holds)))
PYEOF
)" "[($RESET, 'retry_after')]" "rate limited: every hold is the stream's reset ($RESET ms), not the backoff"
# each held period (holds that overlap are one) from the first hold to
# the provider_open after it: as long as the reset, give or take slack
H=$(python3 - "$R.out" "$R/claude.log" <<'PYEOF'
import json, sys
from datetime import datetime
def ms(s):
    return int(datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp() * 1000)
ev = [json.loads(l) for l in open(sys.argv[1])]
# held periods [a, b): b the last hold's until while they overlap
per = []
for e in ev:
    if e["event"] == "provider_hold":
        a, b = ms(e["timestamp"]), ms(e["until"])
        if per and a < per[-1][1]:
            per[-1][1] = max(per[-1][1], b)
        else:
            per.append([a, b, None])
    elif e["event"] == "provider_open" and per and per[-1][2] is None:
        per[-1][2] = ms(e["timestamp"])
# the develop attempts the gate let in, per item
adm = {}
for e in ev:
    if e["event"] == "worker_started" and e.get("role") == "develop":
        adm.setdefault(int(e["item_id"].split("-")[-1]), []).append(
            ms(e["timestamp"]))
starts = [(int(l.split()[2]), l.split()[3]) for l in open(sys.argv[2])
    if l.startswith("start")]
bad = []
for a, b, o in per:
    # no attempt let in while held (2 ms for the clocks' rounding)
    for it, ts in adm.items():
        bad += ["admitted %s %d ms into a hold" % (it, t - a) for t in ts
            if a < t < b - 2]
    # a claude start inside the hold is one let in before it, still
    # starting (a slow worker), never a new one
    for t, it in starts:
        if a < t < b - 2:
            let = [x for x in adm.get(int(it[5:]), []) if x <= t + 2]
            if not let or let[-1] >= a:
                bad.append("%s started %d ms into a hold" % (it, t - a))
print("periods %s" % [(b - a, (o - a) if o else None) for a, b, o in per])
print("bad %s" % (bad or "none"))
PYEOF
)
echo "# $(echo "$H" | head -n 1) (held ms, provider_open after ms)"
is "$(echo "$H" | sed -n 's/^bad //p')" none \
    "rate limited: no claude attempt started while a hold was in force"
is "$(echo "$H" | python3 -c '
import ast, sys
per = ast.literal_eval(sys.stdin.readline()[len("periods "):])
print(all(o is not None and o >= b - 2 for b, o in per) and len(per) > 0)')" True \
    "rate limited: provider_open no earlier than the hold's end"
t_within "$(echo "$H" | python3 -c '
import ast, sys
per = ast.literal_eval(sys.stdin.readline()[len("periods "):])
print(max([o - b for b, o in per if o is not None] or [99999]))')" 0 "rate limited: provider_open at the hold's end (late by at most slack)"
is "$(runs "$R" | awk '{ n += $2 } END { print (n > 6) }')" 1 \
    "rate limited: claude ran more than once per item (the 429s were real attempts)"

# --- worker items (kind worker, develop on claude) rate limited for 2 s:
# the gate holds them too, and each goes again until it completes
R=$T_TMP/rlw
setup "$R" 0
for i in 1 2 3; do
	printf '{"title": "worker %d", "description": "ITEM-%d: one worker", "kind": "worker"}\n' "$i" "$i"
done >"$R/items.jsonl"
RL_MS=2000 batch "$R" "$R/items.jsonl" --jobs 3
is "$RC" 0 "rate-limited worker items: exit 0"
started "$R"
is "$(jget "$S" '[q["status"] for q in d["queue"]]')" '["completed","completed","completed"]' \
    "rate-limited worker items: all completed, none failed"
is "$(python3 - "$R.out" "$R/claude.log" <<'PYEOF'
import json, sys
names = [json.loads(l)["event"] for l in open(sys.argv[1])]
starts = sum(1 for l in open(sys.argv[2]) if l.startswith("start"))
print("provider_hold" in names, "provider_open" in names, starts > 3)
PYEOF
)" "True True True" "rate-limited worker items: held, opened, run again"

# --- the cost budget crossed mid-batch: 8 items at --jobs 2, each one
# claude run of 0.024675 USD (claude-success.jsonl's total_cost_usd);
# 0.1 USD is 50 % after the 3rd, 80 % after the 4th, crossed at the 5th
# while ITEM-6's claude still works (8 s): the batch holds it (frozen),
# paused with the reason, and stays up; SIGTERM then ends it
R=$T_TMP/cost
setup "$R" 8
CLAUDE_SLOW=300 SLOW_ITEM=ITEM-6 SLOW_MS=8000 held "$R" "$R/items.jsonl" \
    --jobs 2 --max-cost-usd 0.1
is "$(jget "$S" '[d["status"], d["context"]["pause_reason"].startswith("budget: cost")]')" \
    '["paused",true]' "cost budget: the batch is paused, context.pause_reason names the budget"
ok $(kill -0 "$BP" 2>/dev/null; echo $?) "cost budget: the held batch is still up"
is "$(budget_events "$R.out")" \
    "[(50, 'cost_usd', True), (80, 'cost_usd', True)] 1 False" \
    "cost budget: budget_warning at 50 then 80 %, once each, then budget_exceeded once; no item_started after it"
is "$(grep '"event":"budget_reached"' "$R.out" | jget - '[d["budget"], d["limit"], d["reason"].startswith("budget: cost"), "batch_id" in d]')" \
    '["cost_usd",0.1,true,true]' "cost budget: budget_reached with the batch's id, as a loop's (issue 29)"
# every loop still executing is held: paused with the budget's reason
is "$(python3 -c '
import json, sys
q = json.load(open(sys.argv[1]))["queue"]
ex = [e for e in q if e["status"] == "executing"]
print(len(ex) > 0, all((lambda d: d["status"] == "paused" and d["pause_reason"].startswith("budget: cost"))(json.load(open(e["state_dir"] + "/" + e["loop_id"] + ".json"))) for e in ex))' "$S")" \
    "True True" "cost budget: each executing item's loop is paused with the budget's reason"
ok $(grep -q '"event":"loop_held"' "$R.out"; echo $?) "cost budget: loop_held in the events"
# held: ITEM-6's claude (8 s) neither ends nor does anything start
# while it stands (frozen, it writes nothing to the claude log)
P6=$(awk '$1 == "start" && $4 == "ITEM-6" { print $2 }' "$R/claude.log")
t_poll 10000 t_frozen "$P6"
ok $? "cost budget: ITEM-6's running claude is frozen"
L1=$(cat "$R/claude.log")
ok $(grep -q "start .* ITEM-6$" "$R/claude.log" && ! grep -q "end .* ITEM-6$" "$R/claude.log"; echo $?) \
    "cost budget: ITEM-6's claude started and is held, not ended"
is "$(cat "$R/claude.log")" "$L1" "cost budget: nothing started or ended while held"
term
is "$RC" 4 "cost budget: SIGTERM ends the held batch (exit 4, stopped)"
t_wait_gone "$M" 10000
ok $? "cost budget: no claude (or other tool) left running"
is "$(jget "$S" '[d["status"], "pause_reason" in d["context"], d["context"]["usage"]["cost_usd"] >= 0.1, d["context"]["max_cost_usd"], d["context"]["failed_count"]]')" \
    '["running",false,true,0.1,0]' "cost budget: after SIGTERM: running (resumable), usage >= 0.1, none failed"
echo "# cost budget: usage at the hold $(jget "$S" 'd["context"]["usage"]'), completed $(jget "$S" 'd["context"]["completed_count"]') of 8"
BEFORE=$(done_runs "$R" "$S")
batch "$R" --resume "$ID" --max-cost-usd 1
is "$RC" 0 "cost budget: --resume with a larger budget completes (exit 0)"
is "$(jget "$S" '[d["status"], d["context"]["completed_count"], d["context"]["failed_count"], d["context"]["stop_reason"]]')" \
    '["completed",8,0,null]' "cost budget: after the resume all 8 completed"
is "$(still "$R" "$BEFORE")" "" "cost budget: no item completed before the resume ran claude again"
is "$(grep -c '"event":"item_started"' "$R.out")" "$((8 - $(echo "$BEFORE" | grep -c .)))" \
    "cost budget: the resume started only the items not completed"
is "$(jget "$S" 'd["context"]["usage"]["cost_usd"] >= 8 * 0.024675 - 1e-9')" true \
    "cost budget: the usage after the resume counts every run"

# --- the token budget: 2720 tokens a run (2600 in with the cache, 120
# out); 7000 is 50 % after the 2nd, crossed at the 3rd
R=$T_TMP/tok
setup "$R" 5
CLAUDE_SLOW=300 held "$R" "$R/items.jsonl" --jobs 1 --max-tokens 7000
is "$(jget "$S" 'd["status"]')" paused "token budget: the batch is paused"
is "$(budget_events "$R.out")" \
    "[(50, 'tokens', True), (80, 'tokens', True)] 1 False" \
    "token budget: warnings at 50 and 80 %, budget_exceeded, nothing started after"
is "$(jget "$S" '[d["context"]["pause_reason"].startswith("budget:") and "tokens" in d["context"]["pause_reason"], d["context"]["usage"]["input_tokens"] + d["context"]["usage"]["output_tokens"] >= 7000, d["context"]["completed_count"] < 5]')" \
    '[true,true,true]' "token budget: the reason names the tokens, the usage is over, not all completed"
echo "# token budget: usage at the hold $(jget "$S" 'd["context"]["usage"]')"
term
is "$RC" 4 "token budget: SIGTERM ends the held batch (exit 4)"
t_wait_gone "$M" 10000
ok $? "token budget: no tool left running"

# --- rate limited, the budget fine: kill -9 during a hold, then --resume
R=$T_TMP/kill
setup "$R" 4
CL=$R RL_MS=3000 $WRAP "$SUP" batch "$R/items.jsonl" -C "$R" --jobs 2 --json \
    --max-cost-usd 5 >"$R.out" 2>"$R.err" &
pid=$!
end=$(t_until 20000)
until grep -q '"event":"provider_hold"' "$R.out" || [ "$(t_now_ms)" -ge "$end" ]; do
	sleep 0.02
done
ok $(grep -q '"event":"provider_hold"' "$R.out"; echo $?) "kill -9: a hold is in force"
kill -KILL "$pid" 2>/dev/null
t_wait_pid "$pid" 10000
ok $([ "$T_RC" -eq 137 ]; echo $?) "kill -9: the batch was killed during the hold ($T_RC)"
is "$(grep -c '"event":"provider_open"' "$R.out")" 0 "kill -9: before the hold ended"
t_wait_gone "$M" 10000
ok $? "kill -9: its workers took their tools down"
started "$R"
BEFORE=$(done_runs "$R" "$S")
cp "$R.out" "$R.out1"
RL_MS=3000 batch "$R" --resume "$ID" --max-cost-usd 5
is "$RC" 0 "kill -9: --resume completes (exit 0)"
is "$(jget "$S" '[d["status"], d["context"]["completed_count"], d["context"]["failed_count"], d["context"]["stop_reason"]]')" \
    '["completed",4,0,null]' "kill -9: all 4 completed, none failed, no stop reason"
is "$(still "$R" "$BEFORE")" "" "kill -9: no item completed before the kill ran claude again"
is "$(python3 -c '
import json, sys
q = json.load(open(sys.argv[1]))["queue"]
print(sum(json.load(open(e["state_dir"] + "/" + e["loop_id"] + ".json"))["status"] == "completed" for e in q))' "$S")" 4 \
    "kill -9: every item's loop state file says completed"
ok $([ "$(grep -c '"error_kind":"rate_limited"' "$R.out1")" -gt 0 ]; echo $?) \
    "kill -9: the attempts before it were rate limited"

t_done
