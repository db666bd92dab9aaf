#!/bin/bash
# serve-mcp.sh: serve's /mcp, MCP's Streamable HTTP transport: every HTTP
# rule (mcp-probe.py): the token, Origin and Host (403), Accept (406),
# Content-Type (415), a parse error (400, -32700), the session id (400
# without, 404 unknown or deleted), 202 for a notification or response,
# MCP-Protocol-Version, 405, 413, DELETE; the GET stream (409 for a
# second), a call answered as SSE (progress, then the reply), a client
# leaving mid-call (the session survives); then the official SDK's
# client over HTTP (tests/node/mcp-http.mjs).  The sessions' cap and
# idle time: serve-mcp-sessions.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 180
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

# the official SDK's client over HTTP
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

# every agent the sessions spawned is gone with them
noauth GET /health
is "$(jr 'd["status"]')" 200 "serve still answers"
kill -TERM "$SRV_PID"
wait "$SRV_PID"
is "$?" 4 "SIGTERM: exit 4 (valgrind: nothing leaked, no invalid access)"
t_done
