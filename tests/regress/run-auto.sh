#!/bin/bash
# run-auto.sh: `ccw-supervisor run` in auto mode with the fake agent as
# every role's bash tool: a whole loop, loop_back_to, max_iterations, a
# failed result, clarification answered or refused, TAP from a validate
# run, a worker timing out, --json events and usage errors.
. "$(dirname "$0")/lib.sh"
t_watchdog 170
t_valgrind_worker
t_marker M auto

cfg() { t_run_config "$@"; }

# valid ROOT ID: `state validate` accepts the state file.
valid() {
	$WRAP "$SUP" state -C "$1" validate "$2" >/dev/null 2>&1
}

OK="exec '$FAKE' --marker $M result success"

# --- a whole loop: init, develop, debug, validate, complete
R=$T_TMP/whole
cfg "$R" "$OK init-done" \
    "mkdir -p src; echo a >src/a.c; echo b >src/b.c; $OK 'added the feature' '[\"src/a.c\", \"src/b.c\"]'" "$OK dbg" \
    "$OK 'all good'" "$OK done"
t_loop_run "$R" whole-1 --json "Add the feature"
is "$RC" 0 "whole: exit 0"
is "$(jget "$F" 'd["status"]')" completed "whole: status completed"
valid "$R" whole-1
ok $? "whole: the state file is valid (state validate)"
is "$(jget "$F" 'd["current_iteration"]')" 3 \
    "whole: current_iteration 3 (develop, debug, validate)"
is "$(jget "$F" 'd["skill_state"]["completed_actions"]')" \
    '["init","develop","debug","validate","complete"]' "whole: the five actions"
is "$(jget "$F" '[d["skill_state"]["mode"], d["skill_state"]["action_index"]]')" \
    '["auto",5]' "whole: mode auto, action_index past complete"
is "$(jget "$F" 'd["skill_state"]["develop"]["tasks"][0]["files_changed"]')" \
    '["src/a.c","src/b.c"]' "whole: develop's task has its files"
is "$(jget "$F" '[d["skill_state"]["develop"][k] for k in ("total", "completed", "current_task")]')" \
    '[1,1,"task-001"]' "whole: develop counters"
is "$(jget "$F" 'd["skill_state"]["validate"]["passed"]')" true \
    "whole: validate passed"
is "$(jget "$F" 'd["title"]')" "Add the feature" "whole: title from the task"
P=$R/.loop/whole-1.progress
W=$R/.loop/whole-1.workers
ok $([ -s "$P/develop.md" ] && [ -s "$P/debug.md" ] && [ -s "$P/validate.md" ]; echo $?) \
    "whole: progress files develop.md, debug.md, validate.md"
is "$(python3 -c '
import json, sys
print(",".join(json.loads(l)["file"] for l in open(sys.argv[1])))' "$P/changes.log")" \
    "src/a.c,src/b.c" "whole: changes.log has a line per changed file"
n=0
for r in init develop debug validate complete; do
	[ -s "$W/$r.output.json" ] && n=$((n + 1))
done
is "$n" 5 "whole: the five worker outputs"
is "$(jget "$W/develop.output.json" '[d["outcome"], d["summary"]]')" \
    '["success","added the feature"]' "whole: develop's output"
is "$(python3 -c '
import json, sys
print(",".join(json.loads(l)["event"] for l in open(sys.argv[1])))' "$R/.loop/whole-1.history.jsonl")" \
    "loop_started,action,action,action,action,action,loop_end" "whole: the history"
# --json: NDJSON on stdout
is "$(python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
names = [e["event"] for e in ev]
print(names.count("worker_started"), names.count("worker_result"),
    names.count("LOOP_STATE_UPDATE"), names[-1], ev[-1]["status"],
    all("timestamp" in e and e["loop_id"] == "whole-1" for e in ev))' "$R.out")" \
    "5 5 6 LOOP_COMPLETED completed True" \
    "whole: --json: a line per event, LOOP_COMPLETED last"
is "$(head -n 1 "$R.out" | jget - '[d["event"], d["status"], d["action_index"]]')" \
    '["LOOP_STATE_UPDATE","running",0]' "whole: --json: the first event is the state"

# --- --json: worker_progress with the worker's last output line
R=$T_TMP/progress
cfg "$R" "$OK" "exec '$FAKE' --marker $M print 'compiling foo.c' sleep $(t_ms 1600) \
result success" "$OK" "$OK" "$OK"
t_loop_run "$R" progress-1 --json "Show progress"
is "$RC" 0 "progress: exit 0"
is "$(python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
p = [e for e in ev if e["event"] == "worker_progress"]
print(p[0]["role"], p[0]["text"], p[0]["elapsed_ms"] >= 0, p[0].get("loop_id")) if p else print("none")' "$R.out")" \
    "develop compiling foo.c True progress-1" \
    "progress: a worker_progress event with the last line and its loop"

# --- the tasks file: init plans them, develop does the first pending one
R=$T_TMP/tasks
cfg "$R" "$OK" "echo 1 >t1.c; $OK 'did T1' '[\"t1.c\"]'" "$OK" "$OK" "$OK"
printf '%s\n' '{"id": "T1", "description": "first", "status": "pending"}' \
    'not json' '{"id": "T2", "description": "second"}' \
    >"$R/.loop/tasks-1.tasks.jsonl"
t_loop_run "$R" tasks-1 "Do the tasks"
is "$RC" 0 "tasks: exit 0"
is "$(jget "$F" '[(t["id"], t["status"], t["files_changed"]) for t in d["skill_state"]["develop"]["tasks"]]')" \
    '[["T1","completed",["t1.c"]],["T2","pending",[]]]' \
    "tasks: read at init, the first pending one done by develop"
is "$(jget "$F" '[d["skill_state"]["develop"][k] for k in ("total", "completed", "current_task")]')" \
    '[2,1,"T1"]' "tasks: counters"

# --- prompts: ROOT/.loop/roles/ROLE.md and roles.ROLE.prompt templates
R=$T_TMP/prompts
cfg "$R" "$OK" "timeout 0.5 cat >'$R.develop'; $OK" \
    "timeout 0.5 cat >'$R.debug'; $OK" \
    "timeout 0.5 cat >'$R.validate'; $OK" "$OK"
python3 - "$R/.loop/config.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["roles"]["debug"]["prompt"] = "prompts/debug.txt"
json.dump(c, open(sys.argv[1], "w"))
EOF
mkdir -p "$R/.loop/roles" "$R/prompts"
cat >"$R/.loop/roles/develop.md" <<'EOF'
LOOP={{loop_id}} ROLE={{ role }} MODE={{mode}} IT={{iteration}}/{{max_iterations}}
TASK={{task}}
STATE={{state_file}}
PROGRESS={{progress_file}}
OUTPUT={{output_file}}
UNKNOWN={{nope}}
SUMMARY:
{{state_summary}}
{{result_format}}
EOF
echo 'DEBUG TEMPLATE for {{loop_id}}' >"$R/prompts/debug.txt"
t_loop_run "$R" prompts-1 -n 5 "Write the parser"
is "$RC" 0 "prompts: exit 0"
D=$(cat "$R.develop" 2>/dev/null)
S=$R/.loop
like "$D" "^LOOP=prompts-1 ROLE=develop MODE=auto IT=1/5" \
    "prompts: ROOT/.loop/roles/develop.md with loop_id, role, mode, iterations"
like "$D" "TASK=Write the parser" "prompts: {{task}}"
like "$D" "STATE=$S/prompts-1.json" "prompts: {{state_file}}"
like "$D" "PROGRESS=$S/prompts-1.progress/develop.md" "prompts: {{progress_file}}"
like "$D" "OUTPUT=$S/prompts-1.workers/develop.output.json" "prompts: {{output_file}}"
like "$D" "UNKNOWN=\{\{nope\}\}" "prompts: an unknown placeholder stays"
like "$D" "completed actions: init" "prompts: {{state_summary}}"
like "$D" "WORKER_RESULT:" "prompts: {{result_format}}"
is "$(cat "$R.debug" 2>/dev/null)" "DEBUG TEMPLATE for prompts-1" \
    "prompts: roles.debug.prompt names the template"
V=$(cat "$R.validate" 2>/dev/null)
like "$V" "## TASK ASSIGNMENT" "prompts: the built-in template otherwise"
like "$V" "You are the validate worker of loop prompts-1" \
    "prompts: built-in: the role and the loop"
like "$V" "- action: validate" "prompts: built-in: the WORKER_RESULT block"
ok $(grep -q -e "Compact Capsule" -e "Rules after resume" "$R.validate"; \
    [ $? = 1 ]; echo $?) "prompts: built-in: no capsule in a fresh loop"

# --- context flows (issue 9 items 3, 7, 11): init's plan becomes tasks;
# validate answers failed with TAP in DETAILED_OUTPUT and loop_back_to
# develop; the next develop is told the failing test; debug and validate
# are told develop's change and init's test command.
R=$T_TMP/ctx
INIT="printf 'WORKER_RESULT:\n- action: init\n- status: success\n- summary: \
planned\nDETAILED_OUTPUT:\n1. Fix sub in calc.c\n2. Add a negative test\n\
test_command: sh tests/run.sh\n'"
DEV="p=\$(timeout 0.5 cat); printf '%s\n=====\n' \"\$p\" >>'$R.develop'; \
echo fix >>calc.c; $OK 'fixed sub' '[\"calc.c\"]'"
DBG="timeout 0.5 cat >>'$R.debug'; $OK"
VAL="timeout 0.5 cat >>'$R.validate'; if [ -e '$R.count' ]; then $OK 'all pass'; \
else touch '$R.count'; printf 'WORKER_RESULT:\n- action: validate\n- status: \
failed\n- summary: 1 of 2 failing\n- loop_back_to: develop\nDETAILED_OUTPUT:\n\
  ok 1 - test_add\n  not ok 2 - test_sub\n  # expected 1, got 5\n'; fi"
cfg "$R" "$INIT" "$DEV" "$DBG" "$VAL" "$OK"
t_loop_run "$R" ctx-1 -n 10 "Fix the calculator"
is "$RC" 0 "context: exit 0 (a failed validation went back to develop)"
is "$(jget "$F" 'd["skill_state"]["completed_actions"]')" \
    '["init","develop","debug","develop","debug","validate","complete"]' \
    "context: validate failed (an error, not completed), then develop, debug, validate again"
is "$(jget "$F" '[(t["id"], t["description"]) for t in d["skill_state"]["develop"]["tasks"]]')" \
    '[["task-001","Fix sub in calc.c"],["task-002","Add a negative test"]]' \
    "context: init's plan became the develop tasks"
is "$(jget "$F" 'd["skill_state"]["test_command"]')" "sh tests/run.sh" \
    "context: init's test command kept"
D1=$(sed -n '1,/^=====$/p' "$R.develop")
D2=$(sed -n '/^=====$/,$p' "$R.develop")
like "$D1" "Your task now \(task-001\): Fix sub in calc.c" \
    "context: the first develop prompt has the first task"
like "$D1" "You are the develop worker of loop ctx-1 \(auto mode, iteration 1 of 10\)" \
    "context: iterations shown from 1"
like "$D2" "Your task now \(task-002\): Add a negative test" \
    "context: the second develop prompt has the next task"
like "$D2" "^- test_sub: expected 1, got 5$" \
    "context: the second develop prompt names the failing test and its message"
like "$(cat "$R.validate")" "Develop's last change: fixed sub" \
    "context: validate is told develop's summary"
like "$(cat "$R.validate")" "Files it changed: calc.c" \
    "context: validate is told develop's files"
like "$(cat "$R.debug")" "Test command: sh tests/run.sh" \
    "context: debug is told the test command"
like "$(cat "$R.validate")" "status: failed, loop_back_to: develop" \
    "context: validate is told what to answer when tests fail"
ok $(grep -q -e "Compact Capsule" -e "Rules after resume" "$R.develop" \
    "$R.debug" "$R.validate"; [ $? = 1 ]; echo $?) \
    "context: no capsule in any prompt of a fresh loop"
is "$(jget "$F" '[d["skill_state"]["validate"][k] for k in ("failed_tests", "passed")]')" \
    '[[],true]' "context: the second validation passed"
valid "$R" ctx-1
ok $? "context: the state file is valid"
R=$T_TMP/noprompt
cfg "$R" "$OK" "$OK" "$OK" "$OK" "$OK"
python3 - "$R/.loop/config.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["roles"]["develop"]["prompt"] = "missing.md"
json.dump(c, open(sys.argv[1], "w"))
EOF
t_loop_run "$R" noprompt-1 "No template"
is "$RC" 1 "prompts: a configured template that is missing fails the loop"
like "$(jget "$F" 'd["failure_reason"]')" "missing.md: no such file" \
    "prompts: saying which"

# --- loop_back_to: validate sends it back to develop once
R=$T_TMP/back
VAL="if [ -e '$R.count' ]; then $OK 'passes now'; else touch '$R.count'; \
printf 'WORKER_RESULT:\n- action: validate\n- status: success\n- summary: \
not yet\n- loop_back_to: develop\n'; fi"
cfg "$R" "$OK" "$OK dev" "$OK" "$VAL" "$OK"
t_loop_run "$R" back-1 "Loop back once"
is "$RC" 0 "loop back: exit 0"
is "$(jget "$F" 'd["skill_state"]["completed_actions"]')" \
    '["init","develop","debug","validate","develop","debug","validate","complete"]' \
    "loop back: develop, debug, validate ran twice"
is "$(jget "$F" '[d["status"], d["current_iteration"]]')" '["completed",6]' \
    "loop back: completed after 6 iterations"

# --- max_iterations: validate always loops back; -n 3
R=$T_TMP/max
BACK="printf 'WORKER_RESULT:\n- action: validate\n- status: success\n- \
summary: again\n- loop_back_to: develop\n'"
cfg "$R" "$OK" "$OK" "$OK" "$BACK" "$OK"
t_loop_run "$R" max-1 -n 3 "Never done"
is "$RC" 1 "max_iterations: exit 1"
is "$(jget "$F" '[d["status"], d["failure_reason"], d["current_iteration"], d["max_iterations"]]')" \
    '["failed","max_iterations 3 reached",3,3]' \
    "max_iterations: failed, the reason, bounded at 3"
valid "$R" max-1
ok $? "max_iterations: the state file is valid"
like "$(cat "$R.err")" 'max_iterations 3 reached' "max_iterations: said on stderr"

# --- a failed result ends the loop
R=$T_TMP/fail
cfg "$R" "$OK" "$OK" "exec '$FAKE' --marker $M result failed 'cannot reproduce'" \
    "$OK" "$OK"
t_loop_run "$R" fail-1 "Fail in debug"
is "$RC" 1 "failed result: exit 1"
is "$(jget "$F" '[d["status"], d["failure_reason"]]')" \
    '["failed","debug failed: cannot reproduce"]' "failed result: the reason"
is "$(jget "$F" '[(e["action"], e["message"]) for e in d["skill_state"]["errors"]]')" \
    '[["debug","cannot reproduce"]]' "failed result: in skill_state.errors"
ok $([ ! -e "$R/.loop/fail-1.workers/validate.output.json" ]; echo $?) \
    "failed result: validate never ran"
valid "$R" fail-1
ok $? "failed result: the state file is valid"

# --- clarification: the recommended option, by running the role again
R=$T_TMP/clar
ASK="p=\$(timeout 0.5 cat); printf '%s\n' \"\$p\" >>'$R.prompts'; \
case \"\$p\" in *'CLARIFICATION ANSWERS'*'Which database? -> sqlite'*) \
$OK 'used sqlite';; *) exec '$FAKE' --marker $M clarify;; esac"
cfg "$R" "$OK" "$ASK" "$OK" "$OK" "$OK"
t_loop_run "$R" clar-1 "Store the users"
is "$RC" 0 "clarify recommended: exit 0"
is "$(jget "$R/.loop/clar-1.workers/develop.output.json" 'd["summary"]')" \
    "used sqlite" "clarify recommended: develop ran again with the answer"
is "$(jget "$F" '[(q["id"], q["status"], q["answer"]) for q in d["skill_state"]["open_questions"]]')" \
    '[["Q1","answered","sqlite"]]' "clarify recommended: the question is answered"
is "$(grep -c 'TASK ASSIGNMENT' "$R.prompts")" 2 \
    "clarify recommended: two develop prompts"
is "$(jget "$F" 'd["skill_state"]["completed_actions"].count("develop")')" 1 \
    "clarify recommended: one develop action"

# --- clarification refused: --on-clarify fail
R=$T_TMP/clarfail
cfg "$R" "$OK" "exec '$FAKE' --marker $M clarify" "$OK" "$OK" "$OK"
t_loop_run "$R" clarfail-1 --on-clarify fail "Store the users"
is "$RC" 1 "clarify fail: exit 1"
is "$(jget "$F" '[d["status"], d["failure_reason"]]')" \
    '["failed","develop: clarification needed: Q1: Which database?"]' \
    "clarify fail: failure_reason names the question"
is "$(jget "$F" 'd["skill_state"]["open_questions"][0]["status"]')" open \
    "clarify fail: the question stays open"
valid "$R" clarfail-1
ok $? "clarify fail: the state file is valid"

# --- TAP: a validate command with one failing test, no WORKER_RESULT
R=$T_TMP/tap
TAP="printf '1..3\nok 1 - adds\nnot ok 2 - subtracts\n# expected 2, got -2\n\
ok 3 - multiplies\n'; exit 1"
cfg "$R" "$OK" "$OK" "$OK" "$TAP" "$OK"
t_loop_run "$R" tap-1 -n 3 "Fix subtraction"
is "$RC" 1 "tap: tests keep failing: exit 1 at max_iterations"
V='d["skill_state"]["validate"]'
is "$(jget "$F" "[$V[\"pass_rate\"], $V[\"failed_tests\"], $V[\"passed\"]]")" \
    '[66.7,["subtracts"],false]' "tap: pass_rate, failed_tests, passed"
is "$(jget "$F" "[(t[\"test_name\"], t[\"status\"]) for t in $V[\"test_results\"]]")" \
    '[["adds","passed"],["subtracts","failed"],["multiplies","passed"]]' \
    "tap: test_results"
is "$(jget "$F" "$V[\"test_results\"][1][\"error_message\"]")" \
    "expected 2, got -2" "tap: the diagnostic is the error message"
is "$(jget "$F" 'd["skill_state"]["completed_actions"]')" \
    '["init","develop","debug","validate"]' \
    "tap: failing tests loop back to develop (not a failed action)"
valid "$R" tap-1
ok $? "tap: the state file is valid"

# --- a worker that never answers: nudged, closed, loop failed, exit 5
R=$T_TMP/hang
TM=$(t_ms 400)
cfg "$R" "$OK" "exec '$FAKE' --marker $M hang" "$OK" "$OK" "$OK" \
    "{\"timeout_ms\": $TM, \"nudge_ms\": $TM, \"grace_ms\": 300}"
t0=$(t_now_ms)
t_loop_run "$R" hang-1 "Hang"
el=$(( $(t_now_ms) - t0 ))
is "$RC" 5 "timeout: exit 5"
like "$(jget "$F" 'd["failure_reason"]')" '^develop: worker timeout' \
    "timeout: failure_reason"
is "$(jget "$R/.loop/hang-1.workers/develop.output.json" '[d["timed_out"], d["nudged"]]')" \
    '[true,true]' "timeout: nudged, then timed out"
ok $(( el < 2 * TM )) "timeout: not before timeout + nudge ($el ms)"
t_wait_gone "$M" 2000
ok $? "timeout: no process left"

# --- usage
$WRAP "$SUP" run >/dev/null 2>&1
is "$?" 2 "usage: no TASK, no --loop-id: exit 2"
$WRAP "$SUP" run -m sideways -C "$T_TMP" "x" >/dev/null 2>&1
is "$?" 2 "usage: unknown mode: exit 2"
$WRAP "$SUP" run --on-clarify maybe -C "$T_TMP" "x" >/dev/null 2>&1
is "$?" 2 "usage: bad --on-clarify: exit 2"
R=$T_TMP/nocmd
mkdir -p "$R/.loop"
echo '{"default_tool": "bash"}' >"$R/.loop/config.json"
err=$($WRAP "$SUP" run -C "$R" "x" 2>&1)
is "$?" 2 "usage: a bash role without a command: exit 2"
like "$err" 'needs --command' "usage: saying which"
ok $([ -z "$(ls "$R/.loop" | grep -v config.json)" ]; echo $?) \
    "usage: no state file was made"
$WRAP "$SUP" run -C "$T_TMP/whole" --loop-id no-such-loop >/dev/null 2>&1
is "$?" 2 "usage: --loop-id of no loop and no TASK: exit 2"
$WRAP "$SUP" run -C "$T_TMP/whole" --loop-id whole-1 >/dev/null 2>"$T_TMP/done.err"
is "$?" 0 "resume of a completed loop: nothing to do, exit 0"
like "$(cat "$T_TMP/done.err")" 'already completed' "and says so"

t_wait_gone "$M" 2000
ok $? "no fake agent left"
t_done
