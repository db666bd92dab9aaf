#!/bin/bash
# ccw-tasks.sh: tasks a front end put in CCW's {id}/tasks.jsonl, written
# exactly as CCW writes it (key task_id, listed by order, no newline after
# the last line): each reaches skill_state and the develop prompt with its
# description and prompt_template, a task added while the loop runs is
# seen by the next develop, and a line that cannot be used is reported in
# the log and the state's errors, never dropped in silence.
. "$(dirname "$0")/lib.sh"
t_watchdog 120
t_valgrind_worker
t_marker M ccwtasks

OK="exec '$FAKE' --marker $M result success"
ID=loop-v2-20260122T100000-cafef00d
R=$T_TMP/p
D=$R/.workflow/.loop
TF=$D/$ID/tasks.jsonl
mkdir -p "$D/$ID"

# A loop as CCW's POST writes it.
python3 - "$D/$ID.json" "$ID" <<'PYEOF'
import json, sys
json.dump({"loop_id": sys.argv[2], "title": "Tasks from the dashboard",
    "description": "d", "max_iterations": 10, "status": "created",
    "current_iteration": 0, "created_at": "2026-01-22T10:00:00.000Z",
    "updated_at": "2026-01-22T10:00:00.000Z"}, open(sys.argv[1], "w"), indent=2)
PYEOF
# ccw-api.md's example line, then a second task listed first but ordered
# after it, a line with no task_id, and no newline at the end (as CCW).
L1='{"task_id":"task-1737540000123-deadbeef","description":"Implement X","tool":"gemini","mode":"write","prompt_template":"PURPOSE: ...","order":0,"created_at":"2026-01-22T10:00:00.000Z","updated_at":"2026-01-22T10:00:00.000Z","command":"npm test","on_error":"continue"}'
L2='{"task_id":"task-1737540000456-beefcafe","description":"Document X","tool":"bash","mode":"write","prompt_template":"PURPOSE: write docs/x.md","order":1,"created_at":"2026-01-22T10:00:00.000Z","updated_at":"2026-01-22T10:00:00.000Z"}'
L3='{"task_id":"task-1737540000789-0badf00d","description":"Added while running","tool":"bash","mode":"write","prompt_template":"PURPOSE: late","order":2,"created_at":"2026-01-22T10:00:00.000Z","updated_at":"2026-01-22T10:00:00.000Z"}'
printf '%s\n{"description":"no task id"}\n%s' "$L2" "$L1" >"$TF"

# develop keeps its prompts; the first one adds a task the way CCW does
# (a newline before it, none after); validate fails once, back to develop.
DEV="p=\$(timeout 0.5 cat); printf '%s\n=====\n' \"\$p\" >>'$R.develop'; \
[ -e '$R.added' ] || { touch '$R.added'; printf '\n%s' '$L3' >>'$TF'; }; \
$OK 'did it' '[\"x.c\"]'"
VAL="timeout 0.5 cat >/dev/null; if [ -e '$R.count' ]; then $OK 'all pass'; \
else touch '$R.count'; printf 'WORKER_RESULT:\n- action: validate\n- status: \
failed\n- summary: 1 failing\n- loop_back_to: develop\n'; fi"
t_run_config "$R" "$OK" "$DEV" "$OK" "$VAL" "$OK"
timeout -k 2 60 $WRAP "$SUP" run -C "$R" --loop-id $ID >"$R.out" 2>"$R.err"
is "$?" 0 "ccw tasks: the loop ran to its end"
F=$D/$ID.json
is "$(jget "$F" '[t["id"] for t in d["skill_state"]["develop"]["tasks"]]')" \
    '["task-1737540000123-deadbeef","task-1737540000456-beefcafe","task-1737540000789-0badf00d"]' \
    "ccw tasks: keyed on task_id, in CCW's order, the one added while running too"
is "$(jget "$F" '[d["skill_state"]["develop"]["tasks"][0][k] for k in ("description", "prompt_template", "command", "on_error")]')" \
    '["Implement X","PURPOSE: ...","npm test","continue"]' \
    "ccw tasks: description, prompt_template, command, on_error kept"
D1=$(sed -n '1,/^=====$/p' "$R.develop")
D2=$(sed -n '/^=====$/,$p' "$R.develop")
like "$D1" "Your task now \(task-1737540000123-deadbeef\): Implement X" \
    "ccw tasks: the first develop prompt has the task of order 0"
like "$D1" "Its instructions:" "ccw tasks: ... and its prompt_template"
like "$D1" "^PURPOSE: \.\.\.$" "ccw tasks: ... verbatim"
like "$D1" "Still planned after it: task-1737540000456-beefcafe: Document X \(instructions: PURPOSE: write docs/x.md\)" \
    "ccw tasks: the next task with its description and prompt_template"
like "$D2" "Your task now \(task-1737540000456-beefcafe\): Document X" \
    "ccw tasks: the second develop prompt has the next task"
like "$D2" "task-1737540000789-0badf00d: Added while running" \
    "ccw tasks: ... and the task added while the loop ran"
like "$(cat "$R.err")" "1 malformed line in $ID/tasks.jsonl .*line 2" \
    "ccw tasks: the line without task_id is reported in the log"
is "$(jget "$F" '["line 2" in e["message"] for e in d["skill_state"]["errors"] if e["action"] == "tasks"]')" \
    '[true]' "ccw tasks: ... and once in skill_state.errors"
$WRAP "$SUP" state -C "$R" validate $ID >/dev/null 2>&1
ok $? "ccw tasks: the state file is valid"

t_done
