#!/bin/bash
# ratelimit.sh: the provider gate through `run`.  A develop tool
# configured as claude whose executable prints claude's real 429 stream
# (tests/streams/claude-429.jsonl, ended by an is_error result with
# api_error_status 429) for ~2 s, then its success stream: the loop
# completes, nothing counts as failed, provider_hold is in the --json
# events and no attempt starts before its hold ends.  Then
# tools.claude.max_workers 1 in the parallel mode: never two claude
# workers alive at once.  A parallel step failed on auth everywhere is
# not retried (retry.non_retryable); the configuration's checks.
. "$(dirname "$0")/lib.sh"
t_watchdog 150
t_valgrind_worker
t_marker M rl
t_slack

OK="exec '$FAKE' --marker $M result success"
S=$(cd "$srcdir/tests/streams" && pwd)

# claude's 429 retries, then the result claude gives once they are spent
# (the shape of claude-404.jsonl's, status 429)
cp "$S/claude-429.jsonl" "$T_TMP/429.jsonl"
sed -n '$p' "$S/claude-404.jsonl" | sed -e 's/"api_error_status":404/"api_error_status":429/' \
    -e 's/"result":"[^"]*"/"result":"API Error: 429 {\\"type\\":\\"error\\",\\"error\\":{\\"type\\":\\"rate_limit_error\\",\\"message\\":\\"Rate limited\\"}}"/' \
    >>"$T_TMP/429.jsonl"

# claude.sh: with $T_TMP/rl.on, rate limited for 2 s from its first start
# (its time in $T_TMP/t0, ms); every start and end written to
# $T_TMP/claude.log as "start|end PID MS"
cat >"$T_TMP/claude" <<EOF
#!/bin/bash
cat >/dev/null
now() { local ns; ns=\$(date +%s%N); echo \$((ns / 1000000)); }
echo "start \$\$ \$(now)" >>"$T_TMP/claude.log"
trap 'echo "end \$\$ \$(now)" >>"$T_TMP/claude.log"' EXIT
if [ -n "\$CLAUDE_SLOW" ]; then
	'$FAKE' --marker $M sleep \$CLAUDE_SLOW
fi
if [ -e "$T_TMP/auth.on" ]; then
	'$FAKE' --marker $M replay "$S/claude-401.jsonl"
	exit 1
fi
if [ -e "$T_TMP/rl.on" ] && [ ! -s "$T_TMP/t0" ]; then
	now >"$T_TMP/t0"
fi
if [ -e "$T_TMP/rl.on" ] && [ \$((\$(now) - \$(cat "$T_TMP/t0"))) -lt 2000 ]; then
	'$FAKE' --marker $M replay "$T_TMP/429.jsonl"
	exit 1
fi
'$FAKE' --marker $M replay "$S/claude-success.jsonl"
EOF
chmod +x "$T_TMP/claude"

# cfg ROOT EXTRA-TOOLS-JSON: bash roles, develop (and with $2, the
# parallel group) on the claude stand-in
cfg() {
	mkdir -p "$1/.loop"
	python3 - "$1" "$T_TMP/claude" "$OK" "${2:-}" <<'PYEOF'
import json, sys
root, claude, ok, par = sys.argv[1:5]
roles = {r: {"command": ok + " " + r} for r in
    ("init", "develop", "debug", "validate", "complete")}
claude_roles = ("develop", "debug", "validate") if par else ("develop",)
for r in claude_roles:
    roles[r] = {"tool": "claude"}
tools = {"claude": {"path": claude}}
if par:
    tools["claude"]["max_workers"] = 1
json.dump({"default_tool": "bash", "roles": roles, "tools": tools},
    open(root + "/.loop/config.json", "w"), indent=1)
PYEOF
}

# --- a rate-limited develop: held, requeued, then completed
R=$T_TMP/rl
cfg "$R"
: >"$T_TMP/claude.log"
touch "$T_TMP/rl.on"
t_loop_run "$R" rl-1 --json "Survive a 429"
is "$RC" 0 "rate limited: the loop completes (exit 0)"
is "$(jget "$F" 'd["status"]')" completed "rate limited: status completed"
is "$(jget "$F" 'd.get("failure_reason")')" null "rate limited: no failure"
E=$R.out
is "$(python3 - "$E" <<'PYEOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
holds = [e for e in ev if e["event"] == "provider_hold"]
print(len(holds) > 0 and all(h["provider"] == "claude" and
    h["reason"] in ("backoff", "retry_after") and h["hold_ms"] > 0 and
    h["until"].endswith("Z") for h in holds))
PYEOF
)" True "rate limited: provider_hold {provider claude, hold_ms, until, reason} in --json"
is "$(python3 - "$E" <<'PYEOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
res = [e for e in ev if e["event"] == "worker_result" and e["role"] == "develop"]
req = [e for e in ev if e["event"] == "step_requeued"]
print(len(res) >= 2 and all(r["error_kind"] == "rate_limited" for r in res[:-1])
    and res[-1]["status"] == "success" and len(req) == len(res) - 1 and
    any(e["event"] == "provider_open" for e in ev))
PYEOF
)" True "rate limited: develop requeued until it succeeds (step_requeued, provider_open)"
python3 - "$E" <<'PYEOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
print("# develop attempts %d, holds %s ms" % (
    sum(e["event"] == "worker_started" and e["role"] == "develop" for e in ev),
    [e["hold_ms"] for e in ev if e["event"] == "provider_hold"]))
PYEOF
# each attempt after a hold starts no earlier than the hold's end
is "$(python3 - "$E" <<'PYEOF'
import json, sys
from datetime import datetime
def ms(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp() * 1000
ev = [json.loads(l) for l in open(sys.argv[1])]
bad, hold = [], None
for e in ev:
    if e["event"] == "provider_hold":
        hold = ms(e["timestamp"]) + e["hold_ms"]
    elif e["event"] == "worker_started" and e["role"] == "develop" and hold:
        if ms(e["timestamp"]) + 2 < hold:
            bad.append(hold - ms(e["timestamp"]))
        hold = None
print(bad or "respected")
PYEOF
)" respected "rate limited: no attempt starts before its hold ends"
is "$(jget "$F" '[e["message"].startswith("rate limited on claude") for e in d["skill_state"]["errors"]].count(True) >= 1')" \
    true "rate limited: the attempt is written down in skill_state.errors"
is "$(jget "$F" 'sorted(d["skill_state"]["usage"])')" \
    '["cost_usd","input_tokens","output_tokens"]' \
    "usage: skill_state.usage sums the workers' usage"
ok $([ "$(jget "$F" 'd["skill_state"]["usage"]["output_tokens"] > 0')" = true ]; echo $?) \
    "usage: output tokens counted"
$WRAP "$SUP" state -C "$R" validate rl-1 >/dev/null 2>&1
ok $? "usage: the state file with usage is valid"

# --- tools.claude.max_workers 1: the parallel group one claude at a time
R=$T_TMP/cap
cfg "$R" par
rm -f "$T_TMP/rl.on"
: >"$T_TMP/claude.log"
CLAUDE_SLOW=300 timeout -k 2 60 $WRAP "$SUP" run -m parallel -C "$R" \
    --loop-id cap-1 --json "One at a time" >"$R.out" 2>"$R.err"
is "$?" 0 "cap: the parallel loop completes"
is "$(python3 - "$T_TMP/claude.log" <<'PYEOF'
import sys
alive, most, starts = 0, 0, 0
ev = [l.split() for l in open(sys.argv[1])]
ev.sort(key=lambda e: (int(e[2]), e[0] == "start"))
for kind, pid, t in ev:
    alive += 1 if kind == "start" else -1
    starts += kind == "start"
    most = max(most, alive)
print(starts >= 3, most)
PYEOF
)" "True 1" "cap: three claude workers, never two alive at once"

# --- every role of the parallel step failed on auth (non-retryable by
# default): the loop fails at once, naming the kind, nothing retried
R=$T_TMP/auth
cfg "$R" par
touch "$T_TMP/auth.on"
timeout -k 2 60 $WRAP "$SUP" run -m parallel -C "$R" --loop-id auth-1 \
    --json "No key" >"$R.out" 2>"$R.err"
is "$?" 1 "non-retryable: the loop fails"
F=$R/.loop/auth-1.json
like "$(jget "$F" 'd["failure_reason"]')" "error kind auth" \
    "non-retryable: the reason names the kind"
is "$(grep -c '"event":"worker_started".*"role":"develop"' "$R.out")" 1 \
    "non-retryable: the step is not tried again"
rm -f "$T_TMP/auth.on"

# --- the configuration: rate_limited is never non-retryable
R=$T_TMP/conf
mkdir -p "$R/.loop"
echo '{"roles": {"develop": {"retry": {"non_retryable": ["auth", "rate_limited"]}}}}' \
    >"$R/.loop/config.json"
out=$($WRAP "$SUP" run -C "$R" --loop-id c-1 "x" 2>&1)
like "$out" "rate_limited cannot be non-retryable" \
    "config: rate_limited refused in non_retryable"
echo '{"tools": {"claude": {"max_workers": -1}}}' >"$R/.loop/config.json"
out=$($WRAP "$SUP" run -C "$R" --loop-id c-2 "x" 2>&1)
like "$out" "tools.claude.max_workers" "config: a bad max_workers is named"

t_done
