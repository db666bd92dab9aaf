#!/bin/bash
# run-example.sh: the README's main job.  examples/calc is copied to a
# temp dir and its loop runs with the real binaries in parallel and auto
# modes, no network, no agent CLI: exit 0, status completed, a valid state
# file, the bug really fixed, the TAP results in the state; the example in
# the source tree stays untouched.  Also `capsule` on the command line.
. "$(dirname "$0")/lib.sh"
t_watchdog 150
t_valgrind_worker
EX="$srcdir/examples/calc"
TASK="Fix the calculator: subtraction gives wrong answers"

# fresh COPY: a writable copy of the example (distcheck's tree is read-only).
fresh() {
	rm -rf "$1"
	mkdir -p "$1"
	cp -R "$EX/." "$1"
	chmod -R u+w "$1"
}

# loop_of ROOT: the id of the one loop in ROOT/.loop (a generated id).
loop_of() { ls "$1/.loop" | sed -n 's/^\(loop-v2-.*\)\.json$/\1/p'; }

# --- the capsule command on hand-made states (no run needed)
C=$T_TMP/capsule
fresh "$C"
$WRAP "$SUP" capsule >/dev/null 2>&1
is "$?" 2 "capsule without an id: usage, exit 2"
$WRAP "$SUP" capsule -C "$C" '../x' >/dev/null 2>&1
is "$?" 2 "capsule refuses an invalid id with exit 2"
err=$($WRAP "$SUP" capsule -C "$C" nosuchloop 2>&1 >/dev/null)
is "$?" 1 "capsule of a loop that does not exist: exit 1"
like "$err" "no loop 'nosuchloop'" "and says so"
cat >"$C/.loop/paused-1.json" <<'EOF'
{"loop_id":"paused-1","title":"t","description":"","max_iterations":10,
 "status":"paused","current_iteration":2,
 "created_at":"2026-01-22T10:00:00.000Z","updated_at":"2026-01-22T10:00:05.000Z",
 "skill_state":{"current_action":"develop","last_action":"init",
  "completed_actions":["init"],"mode":"auto","action_index":1,
  "open_questions":[{"id":"Q1","question":"Keep integer division?",
   "options":["yes","no"],"recommended":"no"}],
  "develop":{"total":1,"completed":0,"current_task":null,"tasks":[
   {"id":"task-001","status":"in_progress","files_changed":["calc.sh"]}],
   "last_progress_at":null},
  "debug":{"active_bug":null,"hypotheses_count":0,"hypotheses":[],
   "confirmed_hypothesis":null,"iteration":0,"last_analysis_at":null},
  "validate":{"pass_rate":0,"coverage":0,"test_results":[],"passed":false,
   "failed_tests":[],"last_run_at":null},
  "errors":[]}}
EOF
out=$(cd "$C" && $WRAP "$SUP" capsule paused-1 2>"$T_TMP/cap.err")
is "$?" 0 "capsule of a paused loop: exit 0"
like "$out" '^## Compact Capsule \(resume context\)' "the rendering starts with its title"
like "$out" '- Q1 \[BLOCKING\]: Keep integer division\?' "the open question, blocking"
like "$out" 'Next action: resume develop' "the resume point"
like "$out" '- task-001\.1 calc\.sh \[planned\]' "the interrupted write"
want=$(python3 -c '
import sys
h = 0xcbf29ce484222325
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
print("%016x" % h)' "$C/calc.sh")
like "$out" "- calc\.sh: 1 anchor\(s\), fileHash=${want:0:12}" \
    "the anchor hashes the file under the root (FNV-1a 64)"
ok $(! grep -q '### Stop Hook\|### Hard Deny' <<<"$out"; echo $?) \
    "no stop hook or hard deny for a paused loop"
$WRAP "$SUP" capsule --state-dir "$C/.loop" paused-1 --json \
    >"$T_TMP/cap.json" 2>/dev/null
is "$(jget "$T_TMP/cap.json" '[d["traceId"], d["resumeSnapshot"]["pendingQuestionId"], d["sourceAnchors"][0]["fileHash"]]')" \
    "[\"paused-1\",\"Q1\",\"$want\"]" "--json with --state-dir: the same capsule"
sed 's/"loop_id":"paused-1"/"loop_id":7/' "$C/.loop/paused-1.json" \
    >"$C/.loop/broken-1.json"
err=$($WRAP "$SUP" capsule -C "$C" broken-1 2>&1 >/dev/null)
is "$?" 1 "a state without a loop id gives an invalid capsule: exit 1"
like "$err" "invalid: missing traceId" "naming the missing field"

# --- the loop, in both modes
for mode in parallel auto; do
	R=$T_TMP/$mode
	fresh "$R"
	sh "$R/tests/run.sh" >/dev/null 2>&1
	is "$?" 1 "$mode: the copy starts with the bug (its suite fails)"
	start=$(t_now_ms)
	timeout -k 2 100 $WRAP "$SUP" run -m "$mode" -C "$R" "$TASK" \
	    >"$T_TMP/$mode.out" 2>"$T_TMP/$mode.err"
	rc=$?
	is "$rc" 0 "$mode: run exits 0 ($(( $(t_now_ms) - start )) ms)"
	[ "$rc" -ne 0 ] && sed 's/^/#   /' "$T_TMP/$mode.err" | tail -n 20
	id=$(loop_of "$R")
	F=$R/.loop/$id.json
	ok $([ -n "$id" ] && [ -f "$F" ]; echo $?) "$mode: one state file ($id)"
	is "$(jget "$F" 'd["status"]')" completed "$mode: status completed"
	out=$($WRAP "$SUP" state -C "$R" validate "$id")
	is "$?" 0 "$mode: state validate exits 0"
	like "$out" ": valid$" "$mode: the state file is valid"
	sh "$R/tests/run.sh" >"$T_TMP/$mode.tap" 2>&1
	is "$?" 0 "$mode: the bug is really fixed: the suite passes afterwards"
	ok $(grep -q "expr='a - b'" "$R/calc.sh"; echo $?) \
	    "$mode: calc.sh now computes a - b"
	is "$(jget "$F" 'd["skill_state"]["validate"]["passed"]')" true \
	    "$mode: validate.passed"
	is "$(jget "$F" 'len(d["skill_state"]["validate"]["test_results"])')" 7 \
	    "$mode: the 7 TAP results are in skill_state.validate.test_results"
	is "$(jget "$F" 'sorted(set(t["status"] for t in d["skill_state"]["validate"]["test_results"]))')" \
	    '["passed"]' "$mode: all of them passed"
	is "$(jget "$F" '[t["test_name"] for t in d["skill_state"]["validate"]["test_results"]][1]')" \
	    "subtraction" "$mode: with the test names from the TAP"
	is "$(jget "$F" 'd["skill_state"]["validate"]["failed_tests"]')" '[]' \
	    "$mode: no failed test"
	is "$(jget "$F" 'd["skill_state"]["mode"]')" "$mode" "$mode: mode recorded"
	like "$(jget "$F" 'd["skill_state"]["completed_actions"]')" \
	    'init.*complete' "$mode: init ... complete in completed_actions"
	like "$(jget "$F" 'd["completed_at"]')" '^20[0-9]{2}-' \
	    "$mode: completed_at set"
	if [ "$mode" = parallel ]; then
		is "$(jget "$F" 'sorted(k for k in d["skill_state"]["parallel_results"] if k in ("develop", "debug", "validate"))')" \
		    '["debug","develop","validate"]' \
		    "parallel: parallel_results has the three roles"
		is "$(jget "$F" 'd["skill_state"]["parallel_results"]["conflicts"]')" \
		    '[]' "parallel: no conflict (only develop wrote a file)"
	fi
	cap=$($WRAP "$SUP" capsule -C "$R" "$id" 2>/dev/null)
	is "$?" 0 "$mode: capsule of the finished loop exits 0"
	like "$cap" 'Type: done' "$mode: its stop hook says done"
done

# --- a loop that fails: its capsule says where and why
R=$T_TMP/failing
fresh "$R"
sed "s/expr='b - a'/expr='b  -  a'/" "$EX/calc.sh" >"$R/calc.sh"
timeout -k 2 100 $WRAP "$SUP" run -C "$R" "$TASK" >/dev/null 2>&1
is "$?" 1 "develop cannot find the bug: run exits 1"
id=$(loop_of "$R")
is "$(jget "$R/.loop/$id.json" '[d["status"], d["failure_reason"]]')" \
    '["failed","develop failed: no subtraction branch found in calc.sh"]' \
    "status failed, with develop's reason"
$WRAP "$SUP" state -C "$R" validate "$id" >/dev/null
is "$?" 0 "the failed loop's state file is valid"
cap=$($WRAP "$SUP" capsule -C "$R" "$id" 2>/dev/null)
is "$?" 0 "capsule of the failed loop exits 0"
like "$cap" 'Next action: resume develop' "it resumes develop"
like "$cap" '- loop failed: develop failed: no subtraction' "the failure is a hard deny"
like "$cap" 'Type: blocked' "and a blocked stop hook"
like "$cap" 'Reason: validation has not run yet' "the gate has not passed"

# --- the source tree is untouched
ok $(grep -q "expr='b - a'" "$EX/calc.sh"; echo $?) \
    "the example in the source tree still has its bug"
is "$(cd "$EX/.loop" && ls)" "config.json" \
    "and no state file was written into it"
t_done
