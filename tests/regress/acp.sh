#!/bin/bash
# acp.sh: `ccw-supervisor acp`, the Agent Client Protocol agent.  First
# the faults a client can cause, on raw stdio: a malformed line gets an
# error and the agent still answers; end of input in the middle of a
# turn stops the loop, leaves no process and exits 0; session/resume in
# a second agent process runs the loop a first one made.  Then the official
# ACP SDK as the client (tests/node/acp-client.mjs): a turn over fake
# agents to end_turn with plan and tool call updates, cancel mid-turn
# (every worker gone within the grace), load after kill -9, a permission
# round trip, max_iterations -> max_turn_requests.  Without node or the
# npm registry the SDK part is one SKIP.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/node-lib.sh"
t_watchdog 300
t_valgrind_worker
t_slack
t_marker M acp

OK="exec '$FAKE' --marker $M print working sleep 50 result success"
HANG="exec '$FAKE' --marker $M print stuck hang"

# project NAME DEVELOP: a project whose roles are fake agents, develop's
# command given; its path in $P.
project() {
	P=$T_TMP/$1
	t_run_config "$P" "$OK" "$2" "$OK" "$OK" "$OK"
}

# rpc ID METHOD PARAMS: one request line.
rpc() {
	printf '{"jsonrpc":"2.0","id":%s,"method":"%s","params":%s}\n' "$1" "$2" "$3"
}

# --- a malformed line: an error reply, and the agent goes on
out=$( { echo '{"jsonrpc": "2.0", "id": 1, "method": '; echo '[1,2]';
	rpc 2 initialize '{"protocolVersion":1}'; } |
	timeout -k 2 60 $WRAP "$SUP" acp 2>"$T_TMP/bad.err")
RC=$?
like "$(sed -n 1p <<<"$out")" '"code":-32700' "malformed JSON: a parse error (-32700)"
like "$(sed -n 2p <<<"$out")" '"code":-32600' "a batch: invalid request (-32600)"
like "$(sed -n 3p <<<"$out")" '"id":2,"result":\{"protocolVersion":1' \
    "the agent still answers initialize after them"
is "$RC" 0 "end of input: exit 0"

# --- end of input in the middle of a turn
project eof "$HANG"
mkfifo "$T_TMP/in"
$WRAP "$SUP" acp <"$T_TMP/in" >"$T_TMP/eof.out" 2>"$T_TMP/eof.err" &
PID=$!
exec {W}>"$T_TMP/in"
rpc 1 session/new "{\"cwd\":\"$P\",\"mcpServers\":[]}" >&$W
end=$(t_until 20000)
until SID=$(sed -n 's/.*"sessionId":"\([^"]*\)".*/\1/p' "$T_TMP/eof.out" | head -n 1) &&
    [ -n "$SID" ] || [ "$(t_now_ms)" -ge "$end" ]; do sleep 0.05; done
rpc 2 session/prompt "{\"sessionId\":\"$SID\",\"prompt\":[{\"type\":\"text\",\"text\":\"Hang\"}]}" >&$W
end=$(t_until 30000)
# develop's own tool (init's holds the marker too, and may be seen just
# before it exits)
until pgrep -f -- "--marker $M print stuck hang" >/dev/null &&
    grep -q '"title":"develop' "$T_TMP/eof.out" ||
    [ "$(t_now_ms)" -ge "$end" ]; do sleep 0.05; done
pgrep -f -- "--marker $M print stuck hang" >/dev/null
ok $? "EOF mid-turn: develop's worker runs"
t0=$(t_now_ms)
exec {W}>&-
wait "$PID"
RC=$?
el=$(( $(t_now_ms) - t0 ))
is "$RC" 0 "EOF mid-turn: the agent exits 0"
t_within "$el" 2000 "EOF mid-turn: it exits within the stop's grace"
is "$(t_marked "$M" | wc -l)" 0 "EOF mid-turn: no process of the turn is left"
is "$(jget "$P/.loop/$SID.json" 'd["status"]')" running \
    "EOF mid-turn: the loop stays resumable (session/load, then a prompt)"

# --- session/resume in a second agent: the loop a first one created
# (and left at its exit) is found again, and a prompt runs it to the end
project resume "$OK"
SID=$(rpc 1 session/new "{\"cwd\":\"$P\",\"mcpServers\":[]}" |
    timeout -k 2 60 $WRAP "$SUP" acp 2>"$T_TMP/res1.err" |
    sed -n 's/.*"sessionId":"\([^"]*\)".*/\1/p')
ok $([ -n "$SID" ]; echo $?) "resume: a first agent made the session ($SID)"
# each request once the one before it is answered, as a client does
python3 - "$SID" "$P" $WRAP "$SUP" acp >"$T_TMP/res.out" 2>"$T_TMP/res.err" <<'PYEOF'
import json, subprocess, sys
sid, cwd, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     text=True)
updates = 0
def call(i, method, params):
    global updates
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method,
                              "params": params}) + "\n")
    p.stdin.flush()
    for line in p.stdout:
        m = json.loads(line)
        if m.get("method") == "session/update":
            updates += 1
        elif m.get("id") == i:
            return m
call(1, "initialize", {"protocolVersion": 1})
r = call(2, "session/resume", {"sessionId": sid, "cwd": cwd, "mcpServers": []})
print(json.dumps(r))
r = call(3, "session/prompt", {"sessionId": sid, "prompt": [
    {"type": "text", "text": "Resume me"}]})
print(json.dumps(r))
print(updates)
p.stdin.close()
print(p.wait(timeout=60))
PYEOF
is "$(sed -n 1p "$T_TMP/res.out")" '{"jsonrpc": "2.0", "id": 2, "result": {}}' \
    "resume: the second agent takes the session" ||
    sed 's/^/#   /' "$T_TMP/res.err" | tail -n 5
like "$(sed -n 2p "$T_TMP/res.out")" '"stopReason": "end_turn"' \
    "resume: a prompt runs its loop to end_turn"
n=$(sed -n 3p "$T_TMP/res.out")
ok $(( ${n:-0} < 5 )) "resume: the turn streamed its updates (${n:-none})"
is "$(sed -n 4p "$T_TMP/res.out")" 0 "resume: the agent exits 0 at end of input"
is "$(jget "$P/.loop/$SID.json" '[d["status"], d["title"]]')" \
    '["completed","Resume me"]' "resume: the loop completed, the prompt its task"

# --- the official SDK as the client
sdk=$(t_node_sdk; echo SDK-READY)
case "$sdk" in
*SDK-READY) NODE_SUP=$T_TMP/sup ;;
*)	t_skip "${sdk#1..0 # SKIP }"
	t_done
	exit ;;
esac

# client SCENARIO CWD [GOFILE]: the client's JSON line in $J.
client() {
	J=$(ACP_CLIENT_TIMEOUT_MS=$(t_ms 60000) t_node acp-client.mjs \
	    "$NODE_SUP" "$@" 2>"$T_TMP/client.err")
	[ -n "$J" ] || J='{"error": "no output"}'
	grep -q '"error"' <<<"$J" && printf '#   %s\n' "$J" | head -c 600 &&
	    sed 's/^/#   /' "$T_TMP/client.err" | tail -n 5
	return 0
}
# j EXPR: a field of $J (python, d is the object).
j() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(json.dumps($1) if not isinstance($1, str) else $1)" "$J" 2>/dev/null; }

# a turn to end_turn
project turn "$OK 'added it'"
client turn "$P"
is "$(j 'd["init"]["protocolVersion"]')" 1 "handshake: protocol version 1"
is "$(j 'd["init"]["agentCapabilities"]["loadSession"]')" true \
    "handshake: loadSession"
is "$(j 'd["stopReason"]')" end_turn "a turn: end_turn"
is "$(j 'd["toolCalls"]')" \
    '["init (bash)", "develop (bash)", "debug (bash)", "validate (bash)", "complete (bash)"]' \
    "one tool call per worker, titled role (tool)"
is "$(j 'd["results"]')" \
    '["completed", "completed", "completed", "completed", "completed"]' \
    "each worker's result: a completed tool_call_update"
is "$(j 'd["plan"]')" \
    '["completed", "completed", "completed", "completed", "completed"]' \
    "the last plan: every role completed"
ok $(j 'd["kinds"]["tool_call_update"] >= 10 and d["kinds"]["plan"] >= 2' |
    grep -q true; echo $?) "progress lines came as tool_call_update too"
like "$(j 'd["last"]')" 'completed after 3 iterations' \
    "the last message sums the loop up"
is "$(j 'd["unknown"]')" -32601 "an unknown method: -32601"
is "$(j 'd["exit"]')" '{"code": 0, "signal": null}' "EOF: the agent exits 0"
SID=$(j 'd["sessionId"]')
is "$(jget "$P/.loop/$SID.json" '[d["status"], d["title"]]')" \
    '["completed","Store the users"]' "the session's loop: completed, the prompt its title"

# cancel mid-turn: every worker gone before the reply
project cancel "$HANG"
client cancel "$P"
is "$(j 'd["stopReason"]')" cancelled "cancel: stopReason cancelled"
is "$(t_marked "$M" | wc -l)" 0 "cancel: no worker process survives"
t_within "$(j 'd["cancelMs"]')" 2000 "cancel: answered within the stop's grace"
SID=$(j 'd["sessionId"]')
is "$(jget "$P/.loop/$SID.json" 'd["status"]')" running \
    "cancel: the loop stays resumable by the next prompt"

# a permission round trip: develop asks, the client picks postgres
P=$T_TMP/ask
ASK="p=\$(timeout 0.5 cat); case \"\$p\" in *'Which database? -> postgres'*) \
exec '$FAKE' --marker $M result success 'used postgres';; *) \
exec '$FAKE' --marker $M clarify;; esac"
t_run_config "$P" "$OK" "$ASK" "$OK" "$OK" "$OK"
client ask "$P"
is "$(j 'len(d["permissions"])')" 1 "ask: one session/request_permission"
is "$(j '[o["name"] for o in d["permissions"][0]["options"]]')" \
    '["sqlite", "postgres"]' "ask: one option per offered answer"
is "$(j 'sorted(set(o["kind"] for o in d["permissions"][0]["options"]))')" \
    '["allow_once"]' "ask: options of kind allow_once"
like "$(j 'd["permissions"][0]["toolCall"]')" \
    'agent-[0-9]+.*develop asks: Which database' "ask: on the asking worker's tool call"
is "$(j 'd["stopReason"]')" end_turn "ask: the turn ends end_turn"
SID=$(j 'd["sessionId"]')
is "$(jget "$P/.loop/$SID.workers/develop.output.json" 'd["summary"]')" \
    "used postgres" "ask: the worker got the client's answer"

# max_iterations -> max_turn_requests
project maxiter "$OK"
client maxiter "$P"
is "$(j 'd["stopReason"]')" max_turn_requests "max_iterations 1: max_turn_requests"
like "$(j 'd["last"]')" 'max_iterations 1 reached' "saying why"

# load after kill -9: a second agent replays and finishes the loop
GO=$T_TMP/go
project load "exec '$FAKE' --marker $M print waiting wait-file '$GO' result success resumed"
client load "$P" "$GO"
is "$(j 'd["killed"]["signal"]')" SIGKILL "load: the first agent was killed -9"
ok $(j 'd["replayed"].get("plan", 0) >= 1 and d["replayed"].get("user_message_chunk", 0) == 1' |
    grep -q true; echo $?) "load: the plan and the task replayed"
like "$(j 'd["replayText"]')" 'Survive a crash' "load: the task is in the replay"
is "$(j 'd["stopReason"]')" end_turn "load: the next prompt finishes the loop"
SID=$(j 'd["sessionId"]')
is "$(jget "$P/.loop/$SID.json" 'd["status"]')" completed "load: the loop completed"
is "$(t_marked "$M" | wc -l)" 0 "no marked process is left"
t_done
