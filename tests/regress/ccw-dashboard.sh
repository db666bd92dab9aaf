#!/bin/bash
# ccw-dashboard.sh: CCW's dashboard SPA (its Loop Monitor) as a client of
# serve: ccw-dashboard.py sends the requests of CCW's frontend api.ts in
# their order (auth cookie, CSRF token pool, switch-path, the v1 loop
# list, create, pause, resume, stop, the list again) with the cookie and
# CSRF flow, then the refusals (no, wrong or spent CSRF token, a foreign
# Origin on every route it adds, bad JSON).  The loop it makes runs on
# fake agents; stop leaves no worker behind.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 120
t_valgrind_worker
t_marker M ccwdash
t_slack

OK="exec '$FAKE' --marker $M result success"
R=$T_TMP/proj
mkdir -p "$R"
# develop hangs: the loop stays running until the client stops it
t_run_config "$R" "$OK init" "exec '$FAKE' --marker $M hang" "$OK dbg" \
    "$OK 'all good'" "$OK done" '{"grace_ms": 500}'
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens ($SRV_PORT)"
python3 "$srcdir/tests/regress/ccw-dashboard.py" "$SRV_PORT" "$R" \
    >"$T_TMP/dash.out" 2>"$T_TMP/dash.err"
ok $? "the dashboard client ran every request" ||
    sed 's/^/#   /' "$T_TMP/dash.err"
t_probe_out "$T_TMP/dash.out" "dashboard: "
ID=$(sed -n 's/^loop //p' "$T_TMP/dash.out")
like "$ID" '^loop-v2-' "the loop the dashboard made ($ID)"
is "$(jget "$R/.loop/$ID.json" '[d["status"], d["failure_reason"]]' 2>/dev/null)" \
    '["failed","Manually stopped by user"]' "its file says stopped, CCW's reason"
t_wait_gone "$M" 10000
ok $? "stop: the loop's workers are gone"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 10000
is "$T_RC" 4 "serve: SIGTERM, exit 4"
t_done
