#!/bin/bash
# run-perm.sh: a CLI's permission request at the terminal of `run -m
# interactive` (issue 29): develop's claude (tests/regress/perm-claude.py)
# asks to use Bash; the prompt "[develop] claude asks to use Bash: CMD --
# allow? [Y/n]" waits for the person even with no question_timeout_ms
# (headless would answer at once); Enter takes the recommended allow
# (via terminal, the command ran), n denies (it did not), and a question
# answered first by `ccw-supervisor answer` is withdrawn with a line, as
# is one whose question_timeout_ms passed (on_question_timeout applies).
# stdin is a FIFO (polled like a terminal), stderr a file read back.
. "$(dirname "$0")/lib.sh"
t_watchdog 60
t_valgrind_worker
t_marker M run-perm
PC=$(cd "$srcdir" && pwd)/tests/regress/perm-claude.py
R=$T_TMP/r
ID=tp-1
F=$R/.loop/$ID.json
MENU='Next action \[develop/debug/validate/complete/exit\]'
ASK='\[develop\] claude asks to use Bash: touch made.txt -- allow\? \[Y/n\]'

cat >"$T_TMP/claude" <<FAKEEOF
#!/bin/bash
exec python3 '$PC' "\$@"
FAKEEOF
chmod +x "$T_TMP/claude"
# cfg TIMEOUT_MS: develop the stand-in claude with ask_permissions
cfg() {
	mkdir -p "$R/.loop"
	python3 - "$R" "$T_TMP/claude" "exec '$FAKE' --marker $M result success" "$1" <<'PYEOF'
import json, sys
ok = {"command": sys.argv[3]}
json.dump({"default_tool": "bash", "tools": {"claude": {"path": sys.argv[2]}},
           "roles": {"init": ok, "debug": ok, "validate": ok, "complete": ok,
                     "develop": {"tool": "claude", "ask_permissions": True,
                                 "question_timeout_ms": int(sys.argv[4]),
                                 "on_question_timeout": "recommended"}}},
          open(sys.argv[1] + "/.loop/config.json", "w"))
PYEOF
}
cfg 0

# seen N RE: the run's stderr has RE at least N times (one poll)
seen() { [ "$(grep -cE "$2" "$R.err")" -ge "$1" ]; }
# wait_for N RE: seen, within 20 s
wait_for() { t_poll 20000 seen "$1" "$2"; }
# the permission questions' kind, status, answer, via
PQ='[(q["kind"], q["status"], q.get("answer"), q.get("via")) for q in d["skill_state"]["questions"]]'

mkfifo "$T_TMP/in"
$WRAP "$SUP" run -m interactive -C "$R" --loop-id "$ID" \
    'PERM-RUN: touch made.txt' <"$T_TMP/in" >"$R.out" 2>"$R.err" &
PID=$!
exec 3>"$T_TMP/in"

wait_for 1 "$MENU"
ok $? "the menu is shown"
echo develop >&3
wait_for 1 "$ASK"
ok $? "allow: the permission question is asked at the terminal"
[ "$T_FAILED" -gt 0 ] && { tail -n 5 "$R.err"; echo; } | sed 's/^/#   /'
is "$(jget "$F" "$PQ")" '[["permission","open",null,null]]' \
    "allow: open with no question_timeout_ms: nobody answered for the person"
[ ! -e "$R/made.txt" ]
ok $? "allow: the command waits"
echo >&3
wait_for 2 "$MENU"
ok $? "allow: Enter answered, develop ended, the menu is back"
[ -e "$R/made.txt" ]
ok $? "allow: Enter took the recommended allow, the command ran"
is "$(jget "$F" "$PQ")" '[["permission","answered","allow","terminal"]]' \
    "allow: answered allow via terminal"

rm -f "$R/made.txt"
echo develop >&3
wait_for 2 "$ASK"
ok $? "deny: asked again"
echo n >&3
wait_for 3 "$MENU"
ok $? "deny: n answered, the menu is back"
[ ! -e "$R/made.txt" ]
ok $? "deny: the command did not run"
is "$(jget "$F" "${PQ}[1:]")" '[["permission","answered","deny","terminal"]]' \
    "deny: answered deny via terminal"

echo develop >&3
wait_for 3 "$ASK"
ok $? "elsewhere: asked a third time"
QID=$(jget "$F" '[q["id"] for q in d["skill_state"]["questions"] if q["status"] == "open"][0]')
$WRAP "$SUP" answer -C "$R" --by bob "$ID" "$QID" deny >/dev/null 2>&1
is "$?" 0 "elsewhere: ccw-supervisor answer takes it"
wait_for 1 "^\($QID answered deny via cli elsewhere: no longer asked here\)"
ok $? "elsewhere: the prompt is withdrawn, saying so"
wait_for 4 "$MENU"
ok $? "elsewhere: the menu is back"
[ ! -e "$R/made.txt" ]
ok $? "elsewhere: the command did not run"

echo exit >&3
exec 3>&-
t_wait_pid "$PID" 20000
is "$(jget "$F" '[q["via"] for q in d["skill_state"]["questions"]]')" \
    '["terminal","terminal","cli"]' "three questions, their answers' ways"

# -- a deadline (question_timeout_ms 3000, recommended): nobody types,
# the prompt is withdrawn when it expires, the policy's allow taken
cfg 3000
mv "$R.err" "$R.err.1"
$WRAP "$SUP" run -m interactive -C "$R" --loop-id tp-2 \
    'PERM-RUN: touch made.txt' <"$T_TMP/in" >"$R.out" 2>"$R.err" &
PID=$!
exec 3>"$T_TMP/in"
wait_for 1 "$MENU"
echo develop >&3
wait_for 1 "^\(q-[0-9a-f]+ expired: no longer asked here\)"
ok $? "deadline: the prompt is withdrawn when the question expires"
wait_for 2 "$MENU"
ok $? "deadline: the menu is back"
seen 1 "$ASK"
ok $? "deadline: it had been asked"
[ -e "$R/made.txt" ]
ok $? "deadline: recommended allow, the command ran"
is "$(jget "$R/.loop/tp-2.json" "$PQ")" '[["permission","answered","allow","policy"]]' \
    "deadline: answered allow via policy"
echo exit >&3
exec 3>&-
t_wait_pid "$PID" 20000
t_done
