#!/bin/bash
# serve-resume.sh: a serve killed with SIGKILL while a loop runs; a new
# serve on the same root resumes the loop from its saved action and it
# completes.  One driver per loop: a second serve on the same root does
# not drive a loop the first one runs; --jobs caps the loops at once (a warning naming its pid), yet
# its stop reaches the first one's workers through the file.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 150
t_valgrind_worker
t_marker M srvr
t_slack

OK="exec '$FAKE' --marker $M result success"
R=$T_TMP/proj
# develop hangs until $R.go exists
DEV="touch '$R.dev'; if [ -e '$R.go' ]; then $OK dev; fi; \
exec '$FAKE' --marker $M hang"
t_run_config "$R" "$OK init" "$DEV" "$OK dbg" "$OK 'all good'" "$OK done" \
    '{"grace_ms": 500}'

srv_start "$T_TMP/a" -C "$R"
ok $? "serve A listens"
req POST /api/loops/v2 '{"title": "Survive a crash"}'
ID=$(jr 'd["body"]["data"]["loop_id"]')
req POST "/api/loops/v2/$ID/start"
is "$(jr 'd["status"]')" 200 "A started the loop"
t_wait_file "$R.dev" 10000
ok $? "its develop runs"
kill -KILL "$SRV_PID"
t_wait_pid "$SRV_PID" 5000
t_wait_gone "$M" 10000
ok $? "SIGKILL of serve A: its workers went with it"
is "$(jget "$R/.loop/$ID.json" '[d["status"], d["skill_state"]["completed_actions"]]')" \
    '["running",["init"]]' "the file says running, init done"

touch "$R.go"
srv_start "$T_TMP/b" -C "$R" --jobs 1
ok $? "serve B listens on the same root (--jobs 1)"
B_PID=$SRV_PID
B_PORT=$SRV_PORT
B_TOKEN=$SRV_TOKEN
srv_wait_status "$ID" completed 20000
ok $? "B resumed the loop at start-up and it completed"
is "$(jget "$R/.loop/$ID.json" 'd["skill_state"]["completed_actions"]')" \
    '["init","develop","debug","validate","complete"]' \
    "resumed from the saved action (init not run again)"
like "$(cat "$T_TMP/b.err")" "resum" "B says it resumed a loop"

# --- one driver per loop: a second serve leaves B's loop to B
rm -f "$R.go" "$R.dev"
req POST /api/loops/v2 '{"title": "Driven by B"}'
ID2=$(jr 'd["body"]["data"]["loop_id"]')
req POST "/api/loops/v2/$ID2/start"
t_wait_file "$R.dev" 10000
ok $? "B runs a second loop"
req POST /api/loops/v2 '{"title": "One too many"}'
req POST "/api/loops/v2/$(jr 'd["body"]["data"]["loop_id"]')/start"
is "$(jr '[d["status"], d["body"]["success"]]')" '[503,false]' \
    "--jobs 1: a second loop at once is refused (503)"
srv_start "$T_TMP/c" -C "$R"
ok $? "serve C listens on the same root"
C_PID=$SRV_PID
srv_wait_grep "$T_TMP/c.err" "$ID2.*$B_PID|not resumed.*$B_PID" 10000
ok $? "C does not drive B's loop: a warning names B's pid"
noauth GET /health
is "$(jr 'd["body"]["loops_running"]')" 0 "C drives no loop"
req POST "/api/loops/v2/$ID2/start"
is "$(jr '[d["status"], d["body"]["error"]]')" \
    '[400,"Cannot start loop with status: running"]' "C refuses to start it"
req POST "/api/loops/v2/$ID2/stop"
is "$(jr '[d["status"], d["body"]["data"]["status"]]')" '[200,"failed"]' \
    "C's stop is committed"
t_wait_gone "$M" 10000
ok $? "B saw the stop in the file and closed its workers"
SRV_PORT=$B_PORT SRV_TOKEN=$B_TOKEN srv_wait_hosted 0 10000
ok $? "B let the loop go"

kill -TERM "$C_PID" "$B_PID"
t_wait_pid "$C_PID" 15000
is "$T_RC" 4 "C: SIGTERM, exit 4"
t_wait_pid "$B_PID" 15000
is "$T_RC" 4 "B: SIGTERM, exit 4"
t_done
