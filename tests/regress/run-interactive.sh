#!/bin/bash
# run-interactive.sh: interactive mode driven as a person would, on a real
# terminal: `run -m interactive` on a copy of examples/calc inside tmux (a
# private server on its own socket), the menu read off the screen, the
# answers typed.  Then the screen and the state file are checked.
. "$(dirname "$0")/lib.sh"
t_watchdog 150
. "$(dirname "$0")/tmux-lib.sh"
t_valgrind_worker
EX="$srcdir/examples/calc"
MENU='Next action \[develop/debug/validate/complete/exit\]'

# start SESSION ROOT: `run -m interactive` on ROOT in a new session; its
# exit status is written to ROOT.rc and shown as "EXIT=N".
start() {
	rm -rf "$2"
	mkdir -p "$2"
	cp -R "$EX/." "$2"
	chmod -R u+w "$2"
	tm new-session -d -s "$1" -x 200 -y 50 "cd '$2' && $WRAP '$SUP' run \
-m interactive -C '$2' 'Fix the calculator'; rc=\$?; echo \$rc >'$2.rc'; \
echo EXIT=\$rc; read x"
}

# answer SESSION TEXT: type a line.
answer() {
	tm send-keys -t "$1" -l "$2"
	tm send-keys -t "$1" Enter
}

# loop_of ROOT: the id of the one loop in ROOT/.loop (a generated id).
loop_of() { ls "$1/.loop" | sed -n 's/^\(loop-v2-.*\)\.json$/\1/p'; }

# --- a whole loop from the menu: the word, the letter, the number
R=$T_TMP/a
start a "$R"
wait_screen a "$MENU" 1 30000
ok $? "the menu is shown"
[ "$T_FAILED" -gt 0 ] && screen a | tail -n 20 | sed 's/^/#   /'
like "$SCREEN" '1\) develop.*5\) exit' "with the numbered actions"
answer a complete
wait_screen a "$MENU" 2 30000
ok $? "complete before validation: the menu again"
like "$SCREEN" "validation has not passed" "saying why"
answer a frobnicate
wait_screen a "$MENU" 3 30000
ok $? "an unknown answer: asked again"
like "$SCREEN" "'frobnicate' is not an action" "saying so"
answer a develop
wait_screen a "$MENU" 4 30000
ok $? "'develop' ran develop, the menu is back"
like "$SCREEN" "fixed subtraction" "the screen shows develop's summary"
answer a v
wait_screen a "$MENU" 5 30000
ok $? "'v' ran validate, the menu is back"
like "$SCREEN" "all 7 tests pass" "the screen shows validate's summary"
like "$SCREEN" "validation passed" "the menu says validation passed"
answer a 4
wait_screen a '^EXIT=' 1 30000
ok $? "'4' ran complete, which ends the run"
is "$(cat "$R.rc" 2>/dev/null)" 0 "run exits 0"
[ "$(cat "$R.rc" 2>/dev/null)" != 0 ] && screen a | tail -n 30 | sed 's/^/#   /'
id=$(loop_of "$R")
F=$R/.loop/$id.json
is "$(jget "$F" 'd["status"]')" completed "status completed"
is "$(jget "$F" 'd["skill_state"]["mode"]')" interactive "mode interactive"
is "$(jget "$F" '[a for a in d["skill_state"]["completed_actions"] if a in ("develop", "debug", "validate", "complete")]')" \
    '["develop","validate","complete"]' "the actions chosen, in order, debug not run"
is "$(jget "$F" 'len(d["skill_state"]["validate"]["test_results"])')" 7 \
    "the TAP results are in the state"
out=$($WRAP "$SUP" state -C "$R" validate "$id")
is "$?" 0 "the state file is valid"
sh "$R/tests/run.sh" >/dev/null 2>&1
is "$?" 0 "the bug is fixed"

# --- leaving at once: exit from the first menu, then the capsule
R=$T_TMP/b
start b "$R"
wait_screen b "$MENU" 1 30000
ok $? "second run: the menu is shown"
answer b exit
wait_screen b '^EXIT=' 1 30000
ok $? "exit leaves the run"
rc=$(cat "$R.rc" 2>/dev/null)
ok $([ "$rc" != 0 ] && [ -n "$rc" ]; echo $?) "leaving before complete is not success (exit $rc)"
id=$(loop_of "$R")
st=$(jget "$R/.loop/$id.json" 'd["status"]')
ok $([ "$st" != completed ] && [ "$st" != running ]; echo $?) \
    "the loop is not left running or completed ($st)"
sh "$R/tests/run.sh" >/dev/null 2>&1
is "$?" 1 "nothing was fixed"
cap=$($WRAP "$SUP" capsule -C "$R" "$id" 2>/dev/null)
like "$cap" '### Resume Point' "its capsule has a resume point"

tm kill-server >/dev/null 2>&1
ok $(! tm has-session 2>/dev/null; echo $?) "our tmux server is gone"
t_done
