#!/bin/bash
# acp-flood.sh: `ccw-supervisor acp` against a client that floods it.
# 2000 session/new lines piped at once, then end of input: at most the
# default cap (256) of sessions, so of loop files, the rest refused with
# JSON-RPC error -32000 and no file; the agent exits 0 soon after.  Then
# --max-sessions 2 with a turn running: a third session/new and a
# session/load of an unknown loop are refused, and a flood then end of
# input while the loop runs still ends every worker and exits promptly.
. "$(dirname "$0")/lib.sh"
t_watchdog 300
t_valgrind_worker
t_slack
t_marker M acpflood

CAP=256
HANG="exec '$FAKE' --marker $M print stuck hang"

# news N CWD FIRST: N session/new lines for CWD, ids from FIRST
news() {
	local i
	for ((i = $3; i < $3 + $1; i++)); do
		printf '{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":"%s","mcpServers":[]}}\n' \
		    "$i" "$2"
	done
}

# wait_exit PID WHAT: polls until PID is gone (a generous deadline, then
# killed); $RC its status, $EL the milliseconds from now to its exit
wait_exit() {
	local t0 end
	t0=$(t_now_ms)
	end=$(t_until 120000)
	while kill -0 "$1" 2>/dev/null && [ "$(t_now_ms)" -lt "$end" ]; do
		sleep 0.05
	done
	EL=$(( $(t_now_ms) - t0 ))
	kill -0 "$1" 2>/dev/null && { echo "#   $2: still running, killed"; kill -9 "$1"; }
	wait "$1"
	RC=$?
	echo "# $2: exited $EL ms after the end of input"
}

# --- the default cap: 2000 session/new at once, then end of input
P=$T_TMP/flood
mkdir -p "$P"
news 2000 "$P" 1 >"$T_TMP/flood.in"
mkfifo "$T_TMP/in"
$WRAP "$SUP" acp <"$T_TMP/in" >"$T_TMP/flood.out" 2>"$T_TMP/flood.err" &
PID=$!
# every line written, then the end of input at once (cat closes it)
cat "$T_TMP/flood.in" >"$T_TMP/in"
wait_exit "$PID" flood
is "$RC" 0 "2000 session/new, then end of input: exit 0"
t_within "$EL" 10000 "it exits promptly after the end of input"
files=$(find "$P/.loop" -maxdepth 1 -name 'loop-*.json' 2>/dev/null | wc -l)
is "$files" "$CAP" "as many loop files as the cap ($CAP), not one per line"
is "$(grep -c '"sessionId"' "$T_TMP/flood.out")" "$CAP" \
    "$CAP sessions made"
is "$(grep -c '"error":{"code":-32000,"message":"too many sessions' \
    "$T_TMP/flood.out")" $((2000 - CAP)) \
    "the other $((2000 - CAP)) refused with error -32000"
is "$(wc -l <"$T_TMP/flood.out")" 2000 "one answer per request"

# --- --max-sessions 2: a turn running, refusals, a flood, end of input
P=$T_TMP/turn
t_run_config "$P" "$HANG" "$HANG" "$HANG" "$HANG" "$HANG"
mkfifo "$T_TMP/in2"
$WRAP "$SUP" acp --max-sessions 2 <"$T_TMP/in2" >"$T_TMP/turn.out" \
    2>"$T_TMP/turn.err" &
PID=$!
exec {W}>"$T_TMP/in2"
news 3 "$P" 1 >&$W
end=$(t_until 20000)
until [ "$(grep -c '"id":[123],' "$T_TMP/turn.out")" -ge 3 ] ||
    [ "$(t_now_ms)" -ge "$end" ]; do sleep 0.05; done
SID=$(sed -n 's/.*"sessionId":"\([^"]*\)".*/\1/p' "$T_TMP/turn.out" | head -n 1)
is "$(grep -c '"sessionId"' "$T_TMP/turn.out")" 2 "--max-sessions 2: two sessions"
like "$(grep '"id":3,' "$T_TMP/turn.out")" '"code":-32000.*at most 2' \
    "a third session/new: error -32000 naming the cap"
printf '{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":"loop-v2-20250101T000000-00000000","cwd":"%s","mcpServers":[]}}\n' \
    "$P" >&$W
printf '{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"%s","prompt":[{"type":"text","text":"Hang"}]}}\n' \
    "$SID" >&$W
end=$(t_until 30000)
until [ -n "$(t_marked "$M")" ] && grep -q '"id":4,' "$T_TMP/turn.out" ||
    [ "$(t_now_ms)" -ge "$end" ]; do sleep 0.05; done
like "$(grep '"id":4,' "$T_TMP/turn.out")" '"code":-32000' \
    "session/load of another loop at the cap: error -32000"
ok $([ -n "$(t_marked "$M")" ]; echo $?) "the prompt's loop runs a worker"
news 500 "$P" 100 >&$W
exec {W}>&-
wait_exit "$PID" turn
is "$RC" 0 "a flood and end of input mid-turn: exit 0"
t_within "$EL" 3000 "it exits within the stop's grace"
is "$(t_marked "$M" | wc -l)" 0 "no process of the turn is left"
is "$(grep -c '"code":-32000' "$T_TMP/turn.out")" 502 \
    "every session/new of the flood refused"
is "$(find "$P/.loop" -maxdepth 1 -name 'loop-*.json' | wc -l)" 2 \
    "two loop files, the sessions'"
t_done
