#!/bin/bash
# tune-nofalsepass.sh: a step whose workers failed never scores or gates
# as passed, and its errors say why (the outcome kind and the tool's own
# words): tune with every diagnosis role failing, with the one role of
# --focus failing, with one role of six failing; a ccw-loop parallel
# group whose workers all fail; a validate run cut off after printing a
# passing TAP; a batch item whose worker failed.
. "$(dirname "$0")/lib.sh"
t_watchdog 180
t_valgrind_worker

# the tool every failing role runs: its reason on stderr, exit 1
cat >"$T_TMP/boom.sh" <<'EOF'
#!/bin/bash
echo "starting up" >&2
echo "boom: disk on fire" >&2
exit 1
EOF
# a diagnosis role that finds nothing (fails when $ROOT/fail.ROLE exists)
cat >"$T_TMP/diag.sh" <<EOF
#!/bin/bash
[ -e "fail.\$CCW_TUNE_ROLE" ] && exec bash "$T_TMP/boom.sh"
printf 'WORKER_RESULT:\n- action: %s\n- status: success\n- summary: checked\nDETAILED_OUTPUT:\n' "\$CCW_TUNE_ROLE"
printf '{"status":"completed","issues_found":0,"severity":"none","details":{"patterns_checked":["P"],"patterns_matched":[],"evidence":[],"recommendations":[]},"issues":[]}\n'
EOF
ROLES="context memory dataflow agent docs token_consumption"
# mkskill DIR: a skill and its roles' configuration
mkskill() {
	local d=$1 r
	mkdir -p "$d/skill/phases" "$d/skill/specs" "$d/.tune"
	printf -- '---\nname: mini\n---\n# Mini skill\n' >"$d/skill/SKILL.md"
	printf 'read the spec\n' >"$d/skill/phases/01-a.md"
	{
		printf '{ "default_tool": "bash", "roles": {\n'
		for r in $ROLES; do
			printf '  "%s": { "tool": "bash", "command": "bash %s" },\n' \
			    "$r" "$T_TMP/diag.sh"
		done
		printf '  "fix": { "tool": "bash", "command": "bash %s" } } }\n' \
		    "$T_TMP/boom.sh"
	} >"$d/.tune/config.json"
}
# tune DIR ARGS...: the command in DIR; $RC, DIR.out, DIR.err, $S (state)
tune() {
	local d=$1
	shift
	(cd "$d" && timeout -k 2 $(( $(t_ms 60000) / 1000 )) $WRAP "$SUP" tune \
	    -C "$d" "$d/skill" "prompts are huge" "$@" >"$d.out" 2>"$d.err")
	RC=$?
	S=$(sed -n 's/^tune [^:]*: .* state \(.*\)$/\1/p' "$d.out" | tail -n 1)
}
# every error names its role, agent, kind (a word) and the tool's words
CAUSE='failed \([a-z_]+: boom: disk on fire\)'

# --- every diagnosis role fails
P=$T_TMP/all
mkskill "$P"
for r in $ROLES; do : >"$P/fail.$r"; done
tune "$P"
is "$RC" 1 "tune, every role failed: exit 1"
is "$(jget "$S" '[d["status"], d["quality_score"], d["quality_gate"]]')" \
    '["failed",0,"fail"]' "tune, every role failed: failed, quality 0, gate fail"
like "$(cat "$P.out")" 'failed, quality 0 \(fail\)' \
    "tune, every role failed: the last line says fail"
ok $(grep -q 'pass\|quality 100' "$P.out"; [ $? -ne 0 ]; echo $?) \
    "tune, every role failed: no pass, no quality 100"
is "$(jget "$S" 'len(d["errors"])')" 6 "tune, every role failed: six errors"
is "$(python3 - "$S" "$CAUSE" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
bad = [e["message"] for e in d["errors"]
    if not re.fullmatch(r"[a-z_]+ agent-[0-9]+: " + sys.argv[2], e["message"])]
print(bad or "all")
EOF
)" all "tune, every role failed: each error names the kind and the reason"
like "$(cat "$P.err")" "error: context agent-[0-9]+: $CAUSE" \
    "tune, every role failed: the terminal says why"
W=$(dirname "$S")
like "$(cat "$W/report.md")" 'gate fail' "tune, every role failed: report.md: gate fail"
like "$(cat "$W/report.md")" 'Not checked \(the role failed\): context, memory' \
    "tune, every role failed: report.md names the roles not checked"
is "$(jget "$S" 'len(d["proposed_fixes"])')" 0 \
    "tune, every role failed: nothing proposed from nothing diagnosed"

# --- --focus on one role, and it fails: under the error budget, still no pass
P=$T_TMP/focus
mkskill "$P"
: >"$P/fail.context"
tune "$P" --focus context
is "$RC" 1 "tune --focus, the role failed: exit 1"
is "$(jget "$S" '[d["status"], d["quality_score"], d["quality_gate"], d["error_count"]]')" \
    '["failed",0,"fail",1]' "tune --focus, the role failed: gate fail, one error"

# --- one role of six fails: partial, not a pass
P=$T_TMP/one
mkskill "$P"
: >"$P/fail.memory"
tune "$P" --max-iterations 1
is "$RC" 1 "tune, one role failed: exit 1"
is "$(jget "$S" '[d["diagnosis"]["memory"]["status"], d["diagnosis"]["context"]["status"], d["quality_gate"]]')" \
    '["failed","completed","fail"]' "tune, one role failed: the gate fails"
like "$(jget "$S" 'd["errors"][0]["message"]')" "^memory agent-[0-9]+: $CAUSE\$" \
    "tune, one role failed: the error says why"
rm "$P/fail.memory"
tune "$P" --max-iterations 1
is "$(jget "$S" '[d["quality_score"], d["quality_gate"]]') $RC" '[100,"pass"] 0' \
    "tune, no role failed: quality 100, pass, exit 0"

# --- ccw-loop: a parallel group whose workers all fail
R=$T_TMP/par
t_run_config "$R" "echo init" "bash $T_TMP/boom.sh" "bash $T_TMP/boom.sh" \
    "bash $T_TMP/boom.sh" "echo done" '{"grace_ms": 500}'
(cd "$R" && timeout -k 2 60 $WRAP "$SUP" run -m parallel -C "$R" \
    --loop-id par-1 --json "do it" >"$R.out" 2>"$R.err")
is "$?" 1 "parallel, every worker failed: exit 1"
F=$R/.loop/par-1.json
is "$(jget "$F" '[d["status"], d["skill_state"]["validate"]["passed"]]')" \
    '["failed",false]' "parallel, every worker failed: failed, validate not passed"
is "$(jget "$F" '[c for c in d["skill_state"]["completed_actions"] if c != "init"]')" \
    '[]' "parallel, every worker failed: no action counted as completed"
is "$(python3 -c '
import json, sys
print(sorted({e["status"] for e in map(json.loads, open(sys.argv[1]))
    if e["event"] == "LOOP_STEP_COMPLETED" and e["step_id"] == "parallel"}))' "$R.out")" \
    "['failed']" "parallel, every worker failed: the group's step is failed"
is "$(python3 - "$F" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
m = [e["message"] for e in d["skill_state"]["errors"]]
print(bool(m) and all(re.fullmatch(r"[a-z_]+: boom: disk on fire", x) for x in m))
EOF
)" True "parallel, every worker failed: each error names the kind and the reason"

# --- ccw-loop: validate prints a passing TAP, then its tool is killed
R=$T_TMP/tap
printf 'echo 1..1\necho "ok 1 - all good"\nkill -KILL $$\n' >"$T_TMP/tapkill.sh"
t_run_config "$R" "echo init" "echo dev" "echo dbg" "bash $T_TMP/tapkill.sh" \
    "echo done"
(cd "$R" && timeout -k 2 60 $WRAP "$SUP" run -C "$R" --loop-id tap-1 \
    --max-iterations 3 "do it" >"$R.out" 2>"$R.err")
is "$?" 1 "validate cut off: exit 1"
is "$(jget "$R/.loop/tap-1.json" '[d["status"], d["skill_state"]["validate"]["passed"], "validate" in d["skill_state"]["completed_actions"]]')" \
    '["failed",false,false]' "validate cut off: its TAP is not a pass, the action failed"
like "$(jget "$R/.loop/tap-1.json" '[e["message"] for e in d["skill_state"]["errors"]]')" \
    '\[.[a-z_]+: [^]]*signal 9' "validate cut off: the error names the kind and the signal"

# --- batch: an item whose worker failed
R=$T_TMP/batch
t_run_config "$R" "echo init" "bash $T_TMP/boom.sh" "echo dbg" "echo val" "echo done"
printf '{"title": "a failing worker", "description": "ITEM-1", "kind": "worker"}\n' \
    >"$R/items.jsonl"
(cd "$R" && timeout -k 2 60 $WRAP "$SUP" batch "$R/items.jsonl" -C "$R" \
    >"$R.out" 2>"$R.err")
is "$?" 1 "batch, the worker failed: exit 1"
ID=$(t_batch_id "$R.err")
B=$R/.workflow/.batch/$ID/state.json
is "$(jget "$B" '[d["queue"][0]["status"], d["context"]["completed_count"], d["context"]["failed_count"]]')" \
    '["failed",0,1]' "batch, the worker failed: the item failed, none completed"
like "$(jget "$B" 'd["queue"][0]["failure_reason"]')" "^develop agent-[0-9]+: $CAUSE\$" \
    "batch, the worker failed: the failure names the kind and the reason"

t_done
