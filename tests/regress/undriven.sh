#!/bin/bash
# undriven.sh: a loop nobody drives says so.  A loop started over mcp's
# stdio reads "running (driven by pid N)" while mcp runs it; its client
# gone (end of input), the file records why and `state list` says
# interrupted, with that reason, not running.  A `run` killed with -9
# (no cleanup) reads interrupted too.  serve --jobs 1 resumes one of the
# two: its /api shows one driven by serve's pid and one interrupted, and
# /metrics counts each; SIGTERM records serve's signal; a serve without
# --jobs resumes both.  An ACP session/cancel records its reason, and so
# does a SIGTERM to `run`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 240
t_valgrind_worker
t_marker M undriven
t_slack

OK="exec '$FAKE' --marker $M result success"
HANG="exec '$FAKE' --marker $M print working hang"
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
R=$T_TMP/proj
t_run_config "$R" "$OK" "$HANG" "$OK" "$OK" "$OK" '{"grace_ms": 500}'

# hanging: develop's tool (HANG) runs.  Not any process of the marker:
# init's tool holds it too, and it may be seen just before it exits.
hanging() {
	pgrep -f -- "--marker $M print working hang" >/dev/null
}

# st ARGS...: `state ARGS` of the project.
st() {
	timeout -k 2 60 $WRAP "$SUP" state -C "$R" "$@" 2>&1
}

# wait_list REGEX MS: until a line of `state list` matches REGEX.
wait_list() {
	local end
	end=$(t_until "$2")
	until st list | grep -Eq -- "$1"; do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.1
	done
}

# --- mcp: driven while it runs, interrupted with why once its client went away
CTL_CMD=mcp ctl_start "$T_TMP/m" -C "$R"
ctl_send "$INIT" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
ctl_send '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"loop_start","arguments":{"task":"Hang in develop","loop_id":"mcp-1"}}}'
r=$(ctl_recv 1 20000)
like "$r" '"loop_id":"mcp-1"' "mcp: loop_start answered"
wait_list "^mcp-1 +running .*\(driven by pid $CTL_PID\)$" 20000
ok $? "state list: mcp-1 running (driven by pid $CTL_PID, mcp)"
ctl_send '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"loop_status","arguments":{"loop_id":"mcp-1"}}}'
r=$(ctl_recv 2)
is "$(jget - '[d["result"]["structuredContent"]["loop"][k] for k in ("status", "driver_pid", "interrupted")]' <<<"$r")" \
    "[\"running\",$CTL_PID,null]" "loop_status: running, its driver's pid, not interrupted"
ctl_stop 20000
is "$T_RC" 0 "mcp: end of input, exit 0"
t_wait_gone "$M" 10000
ok $? "mcp: no worker left"
F=$R/.loop/mcp-1.json
is "$(jget "$F" '[d["status"], d["interrupted"]["reason"], d["interrupted"]["pid"]]')" \
    "[\"running\",\"the MCP client went away (end of mcp's input)\",$CTL_PID]" \
    "the file: still running (resumable), why it is not driven, by whom"
out=$(st list)
like "$out" "^mcp-1 +interrupted .*Hang in develop \(interrupted: the MCP client went away \(end of mcp's input\)\)$" \
    "state list: mcp-1 interrupted, and why"
unlike() { ok $(! grep -Eq -- "$2" <<<"$1"; echo $?) "$3"; }
unlike "$out" "^mcp-1 +running" "state list: mcp-1 is not shown running"
st list --json >"$T_TMP/list.json"
is "$(jget "$T_TMP/list.json" '[[x["driver_pid"], x["interrupted"]["reason"]] for x in d if x["loop_id"] == "mcp-1"]')" \
    "[[null,\"the MCP client went away (end of mcp's input)\"]]" \
    "state list --json: no driver_pid, interrupted's reason"
like "$(st show mcp-1)" "status: +interrupted: the MCP client went away" \
    "state show: interrupted, and why"

# --- run killed with -9: nothing recorded, yet interrupted
t_loop_start "$R" kill-1 "Killed driver"
wait_list "^kill-1 +running .*\(driven by pid $PID\)$" 20000
ok $? "state list: kill-1 running (driven by pid $PID, run)"
kill -KILL "$PID"
t_wait_pid "$PID" 10000
t_wait_gone "$M" 10000
ok $? "kill -9: the run's worker went with it"
# Polled: run may have died between vfork and exec of a worker, and that
# child holds a copy of the run lock's descriptor until its exec closes
# it (close-on-exec); on a loaded machine that takes a while.
KILLED_RE="^kill-1 +interrupted .*\(interrupted: no process drives it and its last driver recorded no reason \(killed or crashed\)\)$"
wait_list "$KILLED_RE" 20000
out=$(st list)
like "$out" "$KILLED_RE" "state list: a kill -9'd driver reads interrupted, no cleanup"
[ -n "$(grep -E -- "$KILLED_RE" <<<"$out")" ] ||
    echo "#   lock holders: $(grep -F ":$(stat -c %i "$R/.loop/kill-1.run.lock" 2>/dev/null) " /proc/locks)"
is "$(jget "$R/.loop/kill-1.json" '[d["status"], d.get("interrupted")]')" \
    '["running",null]' "its file: running, no reason recorded (nobody could)"

# --- serve --jobs 1: one resumed (driven by serve), one left interrupted
srv_start "$T_TMP/a" -C "$R" --jobs 1
ok $? "serve A listens (--jobs 1)"
A_PID=$SRV_PID
srv_wait_hosted 1 20000
ok $? "A resumed one loop at start-up"
req GET /api/loops/v2
is "$(jr 'sorted([[x["status"], x["driver_pid"] is not None, x["interrupted"] is not None] for x in d["body"]["data"]])')" \
    '[["running",false,true],["running",true,false]]' \
    "/api/loops/v2: one driven, one interrupted"
DRIVEN=$(jr '[x["loop_id"] for x in d["body"]["data"] if x["driver_pid"]][0]')
IDLE=$(jr '[x["loop_id"] for x in d["body"]["data"] if x["interrupted"]][0]')
req GET "/api/loops/v2/$DRIVEN"
is "$(jr '[d["body"]["data"]["driver_pid"], d["body"]["data"]["interrupted"]]')" \
    "[$A_PID,null]" "GET $DRIVEN: driven by serve A's pid"
req GET "/api/loops/v2/$IDLE"
is "$(jr '[d["body"]["data"]["driver_pid"], d["body"]["data"]["interrupted"] is not None]')" \
    '[null,true]' "GET $IDLE: interrupted, no driver"
noauth GET /metrics
like "$(jr 'd["body"]')" 'ccw_loops\{status="interrupted"\} 1' \
    "/metrics: one loop interrupted"
like "$(jr 'd["body"]')" 'ccw_loops\{status="running"\} 1' \
    "/metrics: one loop running (driven)"
noauth GET /
like "$(jr 'd["body"]')" 'st-interrupted' "the page has its interrupted status"
kill -TERM "$A_PID"
t_wait_pid "$A_PID" 20000
t_wait_gone "$M" 10000
ok $? "serve A stopped: no worker left"
is "$(jget "$R/.loop/$DRIVEN.json" '[d["status"], d["interrupted"]["reason"]]')" \
    '["running","serve got signal 15 (Terminated)"]' \
    "SIGTERM to serve: its loop records the signal"

# --- serve without --jobs resumes both; a driver clears the reason
srv_start "$T_TMP/b" -C "$R"
ok $? "serve B listens"
B_PID=$SRV_PID
srv_wait_hosted 2 20000
ok $? "B resumed both interrupted loops at start-up"
req GET /api/loops/v2
is "$(jr 'sorted([[x["loop_id"], x["driver_pid"], x["interrupted"]] for x in d["body"]["data"]])')" \
    "[[\"kill-1\",$B_PID,null],[\"mcp-1\",$B_PID,null]]" \
    "both driven by B, neither interrupted"
out=$(st list)
like "$out" "^mcp-1 +running .*\(driven by pid $B_PID\)$" \
    "state list: mcp-1 running, driven by serve B"
kill -TERM "$B_PID"
t_wait_pid "$B_PID" 20000
t_wait_gone "$M" 10000
ok $? "serve B stopped: no worker left"

# --- acp: session/cancel is recorded in the loop
P=$T_TMP/acp
t_run_config "$P" "$OK" "$HANG" "$OK" "$OK" "$OK" '{"grace_ms": 500}'
mkfifo "$T_TMP/in"
$WRAP "$SUP" acp <"$T_TMP/in" >"$T_TMP/acp.out" 2>"$T_TMP/acp.err" &
APID=$!
exec {W}>"$T_TMP/in"
printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"$P\",\"mcpServers\":[]}}" >&$W
end=$(t_until 20000)
until SID=$(sed -n 's/.*"sessionId":"\([^"]*\)".*/\1/p' "$T_TMP/acp.out" | head -n 1) &&
    [ -n "$SID" ] || [ "$(t_now_ms)" -ge "$end" ]; do sleep 0.05; done
printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"$SID\",\"prompt\":[{\"type\":\"text\",\"text\":\"Hang\"}]}}" >&$W
end=$(t_until 30000)
until hanging || [ "$(t_now_ms)" -ge "$end" ]; do
	sleep 0.05
done
hanging
ok $? "acp: develop's worker runs"
printf '%s\n' "{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"$SID\"}}" >&$W
srv_wait_grep "$T_TMP/acp.out" '"id":2,"result":\{"stopReason":"cancelled"' 20000
ok $? "acp: the prompt ends cancelled"
is "$(jget "$P/.loop/$SID.json" '[d["status"], d["interrupted"]["reason"]]')" \
    '["running","cancelled by the client (session/cancel)"]' \
    "session/cancel: the loop records why nobody drives it"
like "$(timeout -k 2 60 $WRAP "$SUP" state -C "$P" list 2>&1)" \
    "^$SID +interrupted .*\(interrupted: cancelled by the client \(session/cancel\)\)$" \
    "state list: the cancelled loop is interrupted, and why"
kill -0 "$APID" 2>/dev/null
ok $? "acp still runs the session (the lock is let go, not the process)"
exec {W}>&-
t_wait_pid "$APID" 20000
is "$T_RC" 0 "acp: end of input, exit 0"
t_wait_gone "$M" 10000
ok $? "no worker left"

# --- run stopped by SIGTERM: its file records why, as the hosts' do
Q=$T_TMP/runsig
t_run_config "$Q" "$OK" "$HANG" "$OK" "$OK" "$OK" '{"grace_ms": 500}'
t_loop_start "$Q" term-1 "Signalled run"
end=$(t_until 20000)
until hanging || [ "$(t_now_ms)" -ge "$end" ]; do
	sleep 0.05
done
hanging
ok $? "run: develop's worker runs"
hanging || { tail -n 5 "$Q.err" | sed 's/^/#   run: /'
	jget "$F" '[d.get("status"), d.get("skill_state", {}).get("last_action")]' | sed 's/^/#   loop: /'; }
kill -TERM "$PID"
t_wait_pid "$PID" 20000
is "$T_RC" 4 "run: SIGTERM, exit 4"
is "$(jget "$F" '[d["status"], d["interrupted"]["reason"], d["interrupted"]["pid"]]')" \
    "[\"running\",\"run got signal 15 (Terminated)\",$PID]" \
    "run: SIGTERM recorded in the loop, with run's pid"
like "$(timeout -k 2 60 $WRAP "$SUP" state -C "$Q" list 2>&1)" \
    "^term-1 +interrupted .*\(interrupted: run got signal 15 \(Terminated\)\)$" \
    "state list: the signalled run's loop is interrupted, and why"
t_wait_gone "$M" 10000
ok $? "run: no worker left"

t_done
