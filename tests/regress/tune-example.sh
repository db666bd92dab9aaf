#!/bin/bash
# tune-example.sh: examples/skill-tune as the README runs it, from a clean
# copy, no network, no agent CLI: the planted problems found by the
# example's grep/awk/jq roles, two really fixed and verified, the naive
# docs fix rolled back from its backup, the state file, the backups, the
# report; the example in the source tree stays untouched.
. "$(dirname "$0")/lib.sh"
t_watchdog 200
t_valgrind_worker
EX="$srcdir/examples/skill-tune"
D="$T_TMP/ex dir"	# a space in the path: the roles quote it
rm -rf "$D"
mkdir -p "$D"
cp -R "$EX/." "$D"
chmod -R u+w "$D"

(cd "$D" && timeout -k 2 $(( $(t_ms 120000) / 1000 )) $WRAP "$SUP" tune -C "$D" \
    "$D/skill" "prompts are huge and the skill forgets the user's constraints" \
    >"$T_TMP/out" 2>"$T_TMP/err")
is "$?" 0 "example: exit 0" || sed 's/^/#   /' "$T_TMP/err" | tail -n 20
S=$(sed -n 's/^tune .* state \(.*\)$/\1/p' "$T_TMP/out")
W=$(dirname "$S")
is "$(jget "$S" '[d["status"], d["quality_score"], d["quality_gate"], d["iteration_count"]]')" \
    '["completed",84,"pass",1]' "example: completed, 84, the gate passes after one round"
is "$(jget "$S" 'len(d["requirement_analysis"]["dimensions"])')" 2 \
    "example: two dimensions (huge prompts, forgotten constraints)"
is "$(jget "$S" 'sorted(i["type"] for i in d["issues"])')" \
    '["agent_failure","dataflow_break"]' \
    "example: left: the agent call without a contract, the spec conflict"
is "$(jget "$S" '[[a["fix_id"], a["verification_result"], a["rollback_available"]] for a in d["applied_fixes"]]')" \
    '[["FIX-001","pass",true],["FIX-002","pass",true],["FIX-003","fail",false]]' \
    "example: two fixes verified, the naive one rolled back"
is "$(jget "$S" '[f["strategy"] for f in d["proposed_fixes"]]')" \
    '["lazy_loading","structured_state","custom"]' "example: the strategies"
is "$(jget "$S" '[d["diagnosis"]["docs"]["conflicts"][0]["key"], len(d["diagnosis"]["docs"]["redundancies"])]')" \
    '["TaskRecord.status",0]' "example: docs reports its conflict"
# the skill: two files changed for real, the third as it was
grep -q 'cat src' "$D/skill/phases/02-analyze.md"
ok $(( ! $? )) "example: phases/02-analyze.md no longer inlines files"
grep -q 'state.json' "$D/skill/phases/01-collect.md"
ok $? "example: phases/01-collect.md keeps the constraints in state.json"
cmp -s "$EX/skill/specs/output-schema.md" "$D/skill/specs/output-schema.md"
ok $? "example: specs/output-schema.md is back as it was"
cmp -s "$EX/skill/phases/02-analyze.md" "$W/backups/FIX-001/files/phases/02-analyze.md"
ok $? "example: FIX-001's backup is the original file"
cmp -s "$EX/skill/specs/output-schema.md" "$W/backups/FIX-003/files/specs/output-schema.md"
ok $? "example: FIX-003's backup is the original file"
is "$(jget "$W/backups/FIX-003/manifest.json" '[[m["file"], m["existed"]] for m in d]')" \
    '[["specs/output-schema.md",true]]' "example: its manifest"
is "$(jget "$S" 'd["final_report"]')" "$(cat "$W/report.md")" "example: report.md is final_report"
like "$(cat "$W/report.md")" 'FIX-003 \| custom \| specs/output-schema.md \| verification failed, rolled back' \
    "example: the report tells the rollback"
like "$(cat "$T_TMP/err")" 'FIX-003 did not help \(still found: dataflow_break\|specs/output-schema.md' \
    "example: the terminal says why FIX-003 went back"
diff -r "$EX/skill" "$D/skill" | grep -q 'cat src'
ok $? "example: the tree's own copy is untouched"
t_done
