#!/bin/bash
# serve-mcp-sessions.sh: serve's /mcp sessions when clients never DELETE
# theirs (Claude Code, the Inspector and the SDK do not): 200 initializes
# all answered, the least recently used idle session evicted at the cap
# (its id 404), ccw_mcp_sessions never over the cap, then a new client
# (the official SDK's when node is there) works; 503 only when every
# session is busy (a GET stream open); with a short idle time
# (CCW_MCP_IDLE_S) idle sessions expire and the gauge drops, one with a
# GET stream or a call in flight lives on until it is idle, and an
# expired session's agent is closed.  The probes are mcp-sessions.py.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 300
t_valgrind_worker
t_slack

P="$srcdir/tests/regress/mcp-sessions.py"
# probe CASE ARGS: run one probe, its "ok" lines become checks here
probe() {
	python3 "$P" "$SRV_PORT" "$SRV_TOKEN" "$@" >"$T_TMP/probe.out" \
	    2>"$T_TMP/probe.err"
	ok $? "probe $1 ran" || sed 's/^/#   /' "$T_TMP/probe.err"
	t_probe_out "$T_TMP/probe.out" "$1: "
}

# srv_stop WHAT: SIGTERM; exit 4, nothing leaked (valgrind)
srv_stop() {
	kill -TERM "$SRV_PID"
	wait "$SRV_PID"
	is "$?" 4 "$1: SIGTERM, exit 4 (valgrind: nothing leaked)"
}

R=$T_TMP/proj
mkdir -p "$R"
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens ($SRV_PORT)" || { t_done; exit 1; }
probe flood 200 64

# a new client after the flood: the official SDK's
if command -v node >/dev/null 2>&1; then
	(. "$srcdir/tests/regress/node-lib.sh"; t_node_sdk
	t_node mcp-http.mjs "http://127.0.0.1:$SRV_PORT/mcp" "$SRV_TOKEN") \
	    >"$T_TMP/node.out" 2>"$T_TMP/node.err"
	rc=$?
	if grep -q '^1\.\.0 # SKIP' "$T_TMP/node.out"; then
		t_skip "$(sed -n 's/^1\.\.0 # SKIP //p' "$T_TMP/node.out")"
	else
		ok $rc "mcp-http.mjs ran after the flood" ||
		    sed 's/^/#   /' "$T_TMP/node.err"
		t_probe_out "$T_TMP/node.out" "sdk after the flood: "
	fi
else
	t_skip "node is not installed: no SDK client"
fi

probe busy 64
srv_stop "after the flood"

# a short idle time; the agent of the session whose call was in flight
t_marker M mcpidle
IDLE=$(( $(t_ms 2000) / 1000 ))
export CCW_MCP_IDLE_S=$IDLE
srv_start "$T_TMP/idle" -C "$R"
ok $? "serve with CCW_MCP_IDLE_S=$IDLE listens ($SRV_PORT)" || { t_done; exit 1; }
unset CCW_MCP_IDLE_S
probe idle "$IDLE" "exec '$FAKE' --marker $M hang"
t_wait_gone "$M" "$(t_ms 10000)"
ok $? "the expired session's agent was closed"
srv_stop "short idle time"
t_done
