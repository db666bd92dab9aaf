#!/bin/bash
# tune-run.sh: `ccw-supervisor tune` end to end with scripted roles: the
# TuningState written (every member, valid, updated_at on every change),
# a fix applied and verified, one rolled back, the iteration limit, the
# error budget, a diagnosis role timing out (merged without it), --focus,
# an ambiguity asked in interactive mode, --json, a second driver
# refused, SIGTERM and kill -9 at random moments then --resume, bad input.
. "$(dirname "$0")/lib.sh"
t_watchdog 300
t_valgrind_worker
t_slack
t_marker M tune

# diag.sh: a diagnosis role.  $ROOT/mode.ROLE says how it behaves: ok
# (default), hang, fail, garbage.  context finds the inlining line,
# memory the remember-from-conversation line; the others find nothing.
cat >"$T_TMP/diag.sh" <<EOF
#!/bin/bash
role=\$CCW_TUNE_ROLE
mode=\$(cat "mode.\$role" 2>/dev/null || echo ok)
[ -n "\${SLOW:-}" ] && sleep "\$SLOW"
case \$mode in
hang) exec "$FAKE" --marker $M hang ;;
fail) printf 'WORKER_RESULT:\n- status: failed\n- summary: broken\n'; exit 1 ;;
garbage) printf 'WORKER_RESULT:\n- status: success\n- summary: ok\nDETAILED_OUTPUT:\nno json here\n'; exit 0 ;;
esac
skill=\$CCW_TUNE_SKILL_DIR issues='[]'
if [ \$role = context ] && grep -q 'cat src' "\$skill/phases/01-a.md"; then
	issues='[{"type":"context_explosion","severity":"high","location":{"file":"phases/01-a.md","line_start":1},"description":"inlines whole files"}]'
elif [ \$role = memory ] && grep -q 'remember' "\$skill/phases/02-b.md"; then
	issues='[{"type":"memory_loss","severity":"critical","location":{"file":"phases/02-b.md"},"description":"state only in conversation"}]'
fi
printf 'WORKER_RESULT:\n- action: %s\n- status: success\n- summary: checked\nDETAILED_OUTPUT:\n' "\$role"
printf '{"status":"completed","issues_found":0,"severity":"none","details":{"patterns_checked":["P"],"patterns_matched":[],"evidence":[],"recommendations":[]},"issues":%s}\n' "\$issues"
EOF
# fix.sh: fixes context's issue for real; for memory's it proposes a
# change that does not help (another one every round: it is applied,
# verified, rolled back each time).
cat >"$T_TMP/fix.sh" <<'EOF'
#!/bin/bash
ctx=$(jq -r '[.[] | select(.type == "context_explosion")][0].id // empty' "$CCW_TUNE_ISSUES")
mem=$(jq -r '[.[] | select(.type == "memory_loss")][0].id // empty' "$CCW_TUNE_ISSUES")
printf 'WORKER_RESULT:\n- action: fix\n- status: success\n- summary: proposed\nDETAILED_OUTPUT:\n'
jq -nc --arg c "$ctx" --arg m "$mem" --arg it "$CCW_TUNE_ITERATION" '{fixes: ([
 (if $c != "" then {id: "FIX-001", issue_ids: [$c], strategy: "lazy_loading", description: "paths, not contents", rationale: "r", changes: [{file: "phases/01-a.md", action: "modify", old_content: "paste $(cat src/*) into every prompt", new_content: "pass the paths of src/ files"}], risk: "low", estimated_impact: "smaller prompts", verification_steps: ["context again"]} else empty end),
 (if $m != "" then {id: "FIX-002", issue_ids: [$m], strategy: "structured_state", description: "a note only", rationale: "r", changes: [{file: "phases/02-b.md", action: "modify", new_content: ("remember it, round " + $it + "\n")}], risk: "low", estimated_impact: "none", verification_steps: ["memory again"]} else empty end)
])}'
EOF
ROLES="context memory dataflow agent docs token_consumption"
# mkproj DIR [ROLE=OPTIONS...]: a project with the skill and the roles'
# configuration; extra role settings as JSON members (ROLE='"timeout_ms":300')
mkproj() {
	local d=$1 r extra
	shift
	mkdir -p "$d/skill/phases" "$d/skill/specs" "$d/.tune"
	printf -- '---\nname: mini\n---\n# Mini skill\n' >"$d/skill/SKILL.md"
	printf 'paste $(cat src/*) into every prompt\n' >"$d/skill/phases/01-a.md"
	printf 'remember the constraints from the conversation\n' >"$d/skill/phases/02-b.md"
	printf 'a spec\n' >"$d/skill/specs/s.md"
	{
		printf '{ "default_tool": "bash", "roles": {\n'
		for r in $ROLES; do
			extra=$(printf '%s\n' "$@" | sed -n "s/^$r=//p")
			printf '  "%s": { "tool": "bash", "command": "bash %s"%s },\n' \
			    "$r" "$T_TMP/diag.sh" "${extra:+, $extra}"
		done
		printf '  "fix": { "tool": "bash", "command": "bash %s" } } }\n' \
		    "$T_TMP/fix.sh"
	} >"$d/.tune/config.json"
}
# tune DIR ARGS...: the command in DIR (60 s at most); $RC, DIR.out, DIR.err
tune() {
	local d=$1
	shift
	(cd "$d" && timeout -k 2 $(( $(t_ms 60000) / 1000 )) $WRAP "$SUP" tune -C "$d" "$@" \
	    >"$d.out" 2>"$d.err")
	RC=$?
}
# the run's id and state file from its last words
sfile() { sed -n 's/^tune \([^:]*\): .* state \(.*\)$/\2/p' "$1.out" | tail -n 1; }
check_state() {
	python3 - "$1" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
need = ["status", "started_at", "updated_at", "target_skill",
 "user_issue_description", "focus_areas", "diagnosis", "issues",
 "issues_by_severity", "proposed_fixes", "applied_fixes", "pending_fixes",
 "iteration_count", "max_iterations", "quality_score", "quality_gate",
 "completed_actions", "current_action", "action_history", "errors",
 "error_count", "max_errors", "work_dir", "backup_dir", "final_report",
 "requirement_analysis"]
bad = [k for k in need if k not in s]
for h in s["action_history"]:
    if h["completed_at"] < h["started_at"] or h["result"] not in ("success", "failure", "skipped"):
        bad.append("history " + h["action"])
if s["updated_at"] < s["started_at"]: bad.append("updated_at")
sev = {k: sum(i["severity"] == k for i in s["issues"]) for k in ("critical", "high", "medium", "low")}
if sev != s["issues_by_severity"]: bad.append("counts")
print("ok" if not bad else "bad: " + ",".join(bad))
EOF
}

# --- a run: context's issue fixed and verified, memory's rolled back
P=$T_TMP/p1
mkproj "$P"
tune "$P" "$P/skill" "prompts are huge and it forgets things" --max-iterations 1
S=$(sfile "$P")
is "$RC" 1 "run: exit 1 (the gate still fails: memory's issue is left)"
is "$(check_state "$S")" ok "run: every member of TuningState, consistent"
is "$(jget "$S" '[d["status"], d["iteration_count"], d["max_iterations"]]')" \
    '["completed",1,1]' "run: completed after its one iteration"
is "$(cat "$P/skill/phases/01-a.md")" "pass the paths of src/ files" \
    "run: the real fix is in the skill"
is "$(cat "$P/skill/phases/02-b.md")" "remember the constraints from the conversation" \
    "run: the unhelpful fix was rolled back"
is "$(jget "$S" '[[a["fix_id"], a["success"], a["verification_result"], a["rollback_available"]] for a in d["applied_fixes"]]')" \
    '[["FIX-001",true,"pass",true],["FIX-002",true,"fail",false]]' \
    "run: applied_fixes: one verified, one rolled back"
W=$(dirname "$S")
is "$(cat "$W/backups/FIX-001/files/phases/01-a.md")" 'paste $(cat src/*) into every prompt' \
    "run: the backup holds the file as it was"
is "$(jget "$S" '[i["type"] for i in d["issues"]]')" '["memory_loss"]' \
    "run: the issue left"
is "$(jget "$S" 'd["final_report"]')" "$(cat "$W/report.md")" \
    "run: report.md is final_report"
like "$(cat "$W/report.md")" 'FIX-002 \| structured_state \| phases/02-b.md \| verification failed, rolled back' \
    "run: the report says what became of each fix"
is "$(jget "$S" '[h["action"] for h in d["action_history"]][:6]')" \
    '["action-init","action-analyze-requirements","action-diagnose","action-propose-fixes","action-apply-FIX-001","action-verify-FIX-001"]' \
    "run: action_history in order"
is "$(jget "$S" 'd["requirement_analysis"]["dimensions"][0]["inferred_category"]')" \
    context_explosion "run: the description analysed first"

# --- the iteration limit: another unhelpful fix every round
P=$T_TMP/p2
mkproj "$P"
tune "$P" "$P/skill" "it forgets the user's constraints" --max-iterations 3 --json
S=$(sfile "$P")
[ -z "$S" ] && S=$(ls "$P"/skill/.tune/*/state.json | head -n 1)
is "$RC" 1 "limit: exit 1"
is "$(jget "$S" '[d["iteration_count"], d["quality_gate"], len(d["applied_fixes"])]')" \
    '[3,"fail",4]' "limit: 3 rounds (FIX-001 once, an unhelpful fix each round)"
is "$(cat "$P/skill/phases/02-b.md")" "remember the constraints from the conversation" "limit: every unhelpful fix rolled back"
is "$(head -n 1 "$P.out" | jget - 'd["event"]')" tune_started "--json: the first event"
is "$(tail -n 1 "$P.out" | jget - '[d["event"], d["status"], d["quality_gate"]]')" \
    '["tune_completed","completed","fail"]' "--json: the last event"
is "$(grep -c '"event":"fix_rolled_back"' "$P.out")" 3 "--json: three rollbacks told"

# --- a diagnosis role timing out: merged without it, an error counted
P=$T_TMP/p3
mkproj "$P" 'agent="timeout_ms": 300, "nudge_ms": 300, "grace_ms": 300'
echo hang >"$P/mode.agent"
t0=$(t_now_ms)
tune "$P" "$P/skill" "prompts are huge" --max-iterations 1
S=$(sfile "$P")
is "$(jget "$S" '[d["diagnosis"]["agent"]["status"], d["diagnosis"]["context"]["status"], d["error_count"] >= 1]')" \
    '["failed","completed",true]' "timeout: agent failed, the others merged"
like "$(jget "$S" 'd["errors"][0]["message"]')" 'agent agent-[0-9]+: timed out' \
    "timeout: the error says so"
is "$(cat "$P/skill/phases/01-a.md")" "pass the paths of src/ files" \
    "timeout: the run went on and fixed context's issue"
t_wait_gone "$M" 5000
ok $? "timeout: the hung tool is gone"

# --- the error budget: two roles fail, max_errors 2
P=$T_TMP/p4
mkproj "$P"
echo fail >"$P/mode.dataflow"
echo garbage >"$P/mode.docs"
tune "$P" "$P/skill" "prompts are huge" --max-errors 2
S=$(sfile "$P")
is "$RC" 1 "budget: exit 1"
is "$(jget "$S" '[d["status"], d["error_count"], d["max_errors"], len(d["proposed_fixes"])]')" \
    '["failed",2,2,0]' "budget: failed with 2 errors, nothing proposed"
like "$(jget "$S" '" / ".join(e["message"] for e in d["errors"])')" \
    'no JSON object' "budget: the garbage answer named"
is "$(cat "$P/skill/phases/01-a.md")" 'paste $(cat src/*) into every prompt' \
    "budget: the skill untouched"

# --- --focus and an ambiguity asked
P=$T_TMP/p5
mkproj "$P"
tune "$P" "$P/skill" "prompts are huge" --focus context --max-iterations 1
S=$(sfile "$P")
is "$(jget "$S" '[d["diagnosis"][r]["status"] for r in ("context", "memory", "docs")]')" \
    '["completed","skipped","skipped"]' "--focus: only context ran"
is "$RC" 0 "--focus: exit 0 (context's issue fixed, the gate passes)"
P=$T_TMP/p6
mkproj "$P"
(cd "$P" && printf '2\n' | timeout 60 $WRAP "$SUP" tune -C "$P" -m interactive \
    "$P/skill" "long memory" --max-iterations 1 >"$P.out" 2>"$P.err")
S=$(sfile "$P")
is "$(jget "$S" 'd["requirement_analysis"]["dimensions"][0]["inferred_category"]')" \
    memory_loss "interactive: the second reading chosen"
like "$(cat "$P.err")" '2\) memory_loss' "interactive: the options shown"
P=$T_TMP/p7
mkproj "$P"
tune "$P" "$P/skill" "long memory" --max-iterations 1
is "$(jget "$(sfile "$P")" 'd["requirement_analysis"]["dimensions"][0]["inferred_category"]')" \
    context_explosion "headless: the recommended reading"

# --- a second driver, then SIGTERM: resumable
P=$T_TMP/p8
mkproj "$P"
echo "keep it in mind" >"$P/skill/phases/02-b.md"	# nothing for memory
echo hang >"$P/mode.docs"
(cd "$P" && exec $WRAP "$SUP" tune -C "$P" "$P/skill" "prompts are huge" \
    --json >"$P.out" 2>"$P.err") &
pid=$!
t_wait_count "$M" 1 $(t_ms 10000)
ID=$(head -n 1 "$P.out" | jget - 'd["tune_id"]')
tune "$P" "$P/skill" --resume "$ID"
is "$RC" 1 "second driver: exit 1"
like "$(cat "$P.err")" 'pid [0-9]+' "second driver: the holder's pid named"
kill -TERM "$pid"
t_wait_pid "$pid" $(t_ms 15000)
is "$T_RC" 4 "SIGTERM: exit 4"
t_wait_gone "$M" 5000
ok $? "SIGTERM: no tool left"
S=$P/skill/.tune/$ID/state.json
is "$(jget "$S" 'd["status"]')" running "SIGTERM: left running"
rm "$P/mode.docs"
tune "$P" "$P/skill" --resume "$ID"
is "$RC" 0 "resume: exit 0"
is "$(jget "$S" '[d["status"], d["quality_gate"]]')" '["completed","pass"]' \
    "resume: completed, the gate passes"

# --- kill -9 at random moments, then --resume until it completes
P=$T_TMP/p9
mkproj "$P"
echo "keep it in mind" >"$P/skill/phases/02-b.md"
export SLOW=0.1
(cd "$P" && exec $WRAP "$SUP" tune -C "$P" "$P/skill" "prompts are huge" \
    --json >"$P.out" 2>"$P.err") &
pid=$!
end=$(t_until 10000)
while [ ! -s "$P.out" ] && [ "$(t_now_ms)" -lt "$end" ]; do sleep 0.05; done
ID=$(head -n 1 "$P.out" | jget - 'd["tune_id"]')
S=$P/skill/.tune/$ID/state.json
rounds=0
while [ $rounds -lt 6 ]; do
	sleep "0.$((RANDOM % 6 + 1))"
	kill -KILL "$pid" 2>/dev/null
	t_wait_pid "$pid" 10000
	rounds=$((rounds + 1))
	[ "$(jget "$S" 'd["status"]')" = completed ] && break
	(cd "$P" && exec $WRAP "$SUP" tune -C "$P" "$P/skill" --resume "$ID" \
	    >"$P.out" 2>>"$P.err") &
	pid=$!
done
kill -0 "$pid" 2>/dev/null && t_wait_pid "$pid" $(t_ms 60000)
if [ "$(jget "$S" 'd["status"]')" != completed ]; then
	tune "$P" "$P/skill" --resume "$ID"
fi
unset SLOW
is "$(jget "$S" '[d["status"], d["quality_gate"], d["pending_fixes"]]')" \
    '["completed","pass",[]]' "kill -9 x$rounds then --resume: completed"
is "$(check_state "$S")" ok "kill -9: the state is whole and consistent"
is "$(cat "$P/skill/phases/01-a.md")" "pass the paths of src/ files" \
    "kill -9: the fix applied exactly once"
is "$(ls "$P/skill/.tune/$ID" | grep -c '\.tmp$')" 0 "kill -9: no temp file left"

# --- a kill between the steps of a fix, made exactly: the state as the
# write-ahead record leaves it, then --resume
P=$T_TMP/p11
mkproj "$P"
echo "keep it in mind" >"$P/skill/phases/02-b.md"
tune "$P" "$P/skill" "prompts are huge"
S=$(sfile "$P")
ID=$(basename "$(dirname "$S")")

# reopen FILE MID: the state as a kill leaves it, running with context's
# issue open (as the diagnosis before the fix found it) and the last
# AppliedFix pending: recorded, files not (all) written (MID=1), or
# written and recorded, not verified (MID=0)
reopen() {
	python3 - "$1" "$2" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
s["status"] = "running"
if sys.argv[2] == "1":
    s["applied_fixes"] = s["applied_fixes"][:1]
    s["applied_fixes"][0]["success"] = False
s["applied_fixes"][-1]["verification_result"] = "pending"
iss = {"type": "context_explosion", "severity": "high",
    "location": {"file": "phases/01-a.md", "line_start": 1},
    "description": "inlines whole files", "evidence": [], "root_cause": "",
    "impact": "", "suggested_fix": "", "related_issues": []}
s["diagnosis"]["context"].update(issues=[dict(iss)], issues_found=1,
    severity="high")
s["issues"] = [dict(iss, id="ISS-001", priority=1)]
s["issues_by_severity"]["high"] = 1
s["proposed_fixes"][0]["issue_ids"] = ["ISS-001"]
json.dump(s, open(sys.argv[1], "w"), indent=2)
PYEOF
}
reopen "$S" 1
echo "half written" >"$P/skill/phases/01-a.md"
tune "$P" "$P/skill" --resume "$ID" --json
is "$RC" 0 "kill mid-apply: the resume completes"
is "$(jget "$S" '[[a["fix_id"], a["success"], a["verification_result"]] for a in d["applied_fixes"]]')" \
    '[["FIX-001",false,"fail"],["FIX-001",true,"pass"]]' \
    "kill mid-apply: rolled back from the backup, applied again, verified"
is "$(cat "$P/skill/phases/01-a.md")" "pass the paths of src/ files" \
    "kill mid-apply: the file as the fix makes it, once"
reopen "$S" 0
tune "$P" "$P/skill" --resume "$ID" --json
is "$RC" 0 "kill before verify: the resume completes"
is "$(grep -c '"event":"worker_started"' "$P.out")" 7 \
    "kill before verify: context verified (1 worker), then a round of 6"
is "$(jget "$S" 'd["applied_fixes"][-1]["verification_result"]')" pass \
    "kill before verify: verified"
tune "$P" "$P/skill" --resume "$ID"
is "$RC" 0 "a run that ended: --resume only reports it"
like "$(cat "$P.out")" "tune $ID: completed" "... and says so"

# --- bad input: a clear error, exit 2, nothing made
P=$T_TMP/p10
mkproj "$P"
tune "$P"
is "$RC" 2 "usage: no arguments"
tune "$P" "$P/nope" "x"
is "$RC" 2 "usage: no such directory"
tune "$P" "$P/.tune" "x"
is "$RC" 2 "usage: not a skill folder"
like "$(cat "$P.err")" 'no SKILL.md' "usage: says why"
tune "$P" "$P/skill" "x" --focus nose
is "$RC" 2 "usage: an unknown focus"
tune "$P" "$P/skill" "x" --max-iterations 0
is "$RC" 2 "usage: --max-iterations 0"
tune "$P" "$P/skill" ""
is "$RC" 2 "usage: an empty description"
tune "$P" "$P/skill" --resume tune-nosuch
is "$RC" 2 "usage: an unknown run"
like "$(cat "$P.err")" 'no such tuning run' "usage: named"
tune "$P" "$P/skill" --resume ../x
is "$RC" 2 "usage: a hostile id"
is "$(ls "$P/skill/.tune" 2>/dev/null | grep -vc '\.run\.lock$')" 0 \
    "usage: no run was made"
tune "$P" --help
is "$RC" 0 "--help: exit 0"
like "$(cat "$P.out")" 'usage: ccw-supervisor tune SKILL_DIR' "--help: usage"

t_done
