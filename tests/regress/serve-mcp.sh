#!/bin/bash
# serve-mcp.sh: serve's /mcp, MCP's Streamable HTTP transport: every HTTP
# rule (mcp-probe.py): the token, Origin and Host (403), Accept (406),
# Content-Type (415), a parse error (400, -32700), the session id (400
# without, 404 unknown or deleted), 202 for a notification or response,
# MCP-Protocol-Version, 405, 413, DELETE; the GET stream (409 for a
# second), a call answered as SSE (progress, then the reply), a client
# leaving mid-call (the session survives).  Then clients that never
# DELETE: 200 initializes all answered, the least recently used idle
# session evicted at the cap (its id 404), ccw_mcp_sessions never over
# the cap, and the official SDK's client over HTTP after them
# (tests/node/mcp-http.mjs); 503 only when every session holds a GET
# stream.  Last, a serve whose sessions expire after a short idle time
# (CCW_MCP_IDLE_S): idle ones expire and the gauge drops, one with a GET
# stream or a call in flight only once idle, its agent then closed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 300
t_valgrind_worker
t_slack

P="$srcdir/tests/regress/mcp-probe.py"
# probe CASE ARGS: run one probe, its "ok" lines become checks here
probe() {
	python3 "$P" "$SRV_PORT" "$SRV_TOKEN" "$@" >"$T_TMP/probe.out" \
	    2>"$T_TMP/probe.err"
	ok $? "probe $1 ran" || sed 's/^/#   /' "$T_TMP/probe.err"
	t_probe_out "$T_TMP/probe.out" "$1: "
}

R=$T_TMP/proj
mkdir -p "$R"
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens on a free loopback port ($SRV_PORT)" || { t_done; exit 1; }

probe rules
# a bash agent that hangs: wait_agent on it sends progress, then times out
probe stream "echo step one; sleep 1; echo step two; sleep 60"
# the agent of a session its client left: DELETE closes it (no one else
# holds its id)
t_marker M srvmcp
probe disconnect "exec '$FAKE' --marker $M hang" "$(( $(t_ms 2000) / 1000 + 1 ))"
t_wait_gone "$M" "$(t_ms 10000)"
ok $? "DELETE closed the agent its session spawned"
probe flood 200 64

# the official SDK's client over HTTP, after 200 sessions never deleted
if command -v node >/dev/null 2>&1; then
	(. "$srcdir/tests/regress/node-lib.sh"; t_node_sdk
	t_node mcp-http.mjs "http://127.0.0.1:$SRV_PORT/mcp" "$SRV_TOKEN") \
	    >"$T_TMP/node.out" 2>"$T_TMP/node.err"
	rc=$?
	if grep -q '^1\.\.0 # SKIP' "$T_TMP/node.out"; then
		t_skip "$(sed -n 's/^1\.\.0 # SKIP //p' "$T_TMP/node.out")"
	else
		ok $rc "mcp-http.mjs ran" || sed 's/^/#   /' "$T_TMP/node.err"
		while IFS= read -r line; do
			case "$line" in
			"ok "*)
				good=${line#ok }
				ok $(( ! ${good%% *} )) "sdk: ${good#? }"
				;;
			"#"*) echo "$line" ;;
			esac
		done <"$T_TMP/node.out"
	fi
else
	t_skip "node is not installed: no SDK client"
fi
probe busy 64

# every agent the sessions spawned is gone with them
noauth GET /health
is "$(jr 'd["status"]')" 200 "serve still answers"
kill -TERM "$SRV_PID"
wait "$SRV_PID"
is "$?" 4 "SIGTERM: exit 4 (valgrind: nothing leaked, no invalid access)"

# a short idle time; the agent of the session whose call was in flight
t_marker M srvidle
IDLE=$(( $(t_ms 2000) / 1000 ))
export CCW_MCP_IDLE_S=$IDLE
srv_start "$T_TMP/idle" -C "$R"
ok $? "serve with CCW_MCP_IDLE_S=$IDLE listens ($SRV_PORT)" || { t_done; exit 1; }
unset CCW_MCP_IDLE_S
probe idle "exec '$FAKE' --marker $M hang" "$IDLE"
t_wait_gone "$M" "$(t_ms 10000)"
ok $? "the expired session's agent was closed"
kill -TERM "$SRV_PID"
wait "$SRV_PID"
is "$?" 4 "short idle time: SIGTERM, exit 4 (valgrind: nothing leaked)"
t_done
