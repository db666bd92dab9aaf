#!/bin/bash
# serve-routes.sh: every row of serve's route table is reachable: each
# row (read from supervisor/api/serve.c, so a new row is covered the day
# it is added) asked with our Host and the token reaches its handler,
# never the router's 404 or 405, and a row whose handler serves several
# routes calls the verb its op names (the handler reads the row's op,
# never the path).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 120
t_slack

R=$T_TMP/proj
mkdir -p "$R"
t_run_config "$R" true true true true true
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens ($SRV_PORT)"
python3 "$srcdir/tests/regress/serve-routes.py" "$SRV_PORT" "$SRV_TOKEN" \
    "$srcdir/supervisor/api/serve.c" >"$T_TMP/routes.out" 2>"$T_TMP/routes.err"
ok $? "the probe ran" || sed 's/^/#   /' "$T_TMP/routes.err"
t_probe_out "$T_TMP/routes.out" "routes: "
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 10000
is "$T_RC" 4 "serve: SIGTERM, exit 4"
t_done
