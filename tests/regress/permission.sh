#!/bin/bash
# permission.sh: a CLI's permission request as a question (issue 29).
# The relay alone (`ccw-worker --permission-relay SOCKET`): MCP's
# initialize and tools/list, a line that is no JSON and one over its cap
# answered with errors and survived, a worker gone, silent or speaking
# garbage: each a denial, never a hang or an allow.  Then claude
# (tests/regress/perm-claude.py, which does what claude does with
# --permission-prompt-tool) through `agent` and a loop: a role without
# ask_permissions gets no relay; `agent` has no one to ask (denied at
# once); a loop's develop asks: the question (kind permission) is
# answered allow (the command ran) or deny (it did not, the turn goes
# on), and nobody answering by the deadline applies on_question_timeout.
. "$(dirname "$0")/lib.sh"
t_watchdog 120
t_valgrind_worker
t_marker M permission
PC=$(cd "$srcdir" && pwd)/tests/regress/perm-claude.py
S=$T_TMP/state
R=$T_TMP/r
FW_PIDS=

# relay SOCKET: the relay with the lines of stdin; its replies, one a line.
relay() {
	timeout -k 2 20 $WRAP "$WRK" --permission-relay "$1"
}

# callout N: the text of the answer of tools/call in a reply line.
CALL='{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ask","arguments":{"tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t1"}}}'
behavior() {
	python3 -c '
import json, sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("id") == 9:
        print(json.loads(m["result"]["content"][0]["text"])["behavior"])'
}

# -- MCP's handshake, then garbage, an oversized line, and a call with
# no worker behind the socket: errors, then a denial
{
	echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}'
	echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	echo '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
	echo 'this is no json'
	head -c 1100000 /dev/zero | tr '\0' x; echo
	echo '{"jsonrpc":"2.0","id":3,"method":"resources/list"}'
	echo "$CALL"
} | relay "$T_TMP/none.sock" >"$T_TMP/relay.out"
is "$?" 0 "relay: exits 0 at the end of its input"
is "$(python3 -c '
import json, sys
out = []
for l in open(sys.argv[1]):
    m = json.loads(l)
    if "error" in m:
        out.append([m["id"], m["error"]["code"], m["error"]["message"]])
    elif m["id"] == 1:
        out.append([m["result"]["protocolVersion"], m["result"]["serverInfo"]["name"]])
    elif m["id"] == 2:
        out.append([t["name"] for t in m["result"]["tools"]])
    else:
        out.append(json.loads(m["result"]["content"][0]["text"]))
print(json.dumps(out))' "$T_TMP/relay.out")" \
    '[["2025-11-25", "ccw-permission"], ["ask"], [null, -32700, "parse error"], [null, -32700, "line too long"], [3, -32601, "method not found"], {"behavior": "deny", "message": "permission denied: the supervisor could not be asked (its worker is gone)"}]' \
    "relay: handshake, garbage and an oversized line refused, no worker: denied"

# fake_worker MODE SOCK: a worker end that reads the request and then
# closes (gone), answers garbage, or answers allow; up once $SOCK exists.
fake_worker() {
	python3 - "$1" "$2" <<'PYEOF' &
import json, os, socket, sys
mode, path = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(1)
c, _ = s.accept()
req = json.loads(c.makefile().readline())
if mode == "garbage":
    c.sendall(b"{not an answer\n")
elif mode == "allow":
    c.sendall((json.dumps({"behavior": "allow", "updatedInput": req["input"]}) + "\n").encode())
c.close()
PYEOF
	FW_PIDS="$FW_PIDS $!"
	t_wait_file "$2" 5000
}
fake_worker gone "$T_TMP/gone.sock"
is "$(echo "$CALL" | relay "$T_TMP/gone.sock" | behavior)" deny \
    "relay: a worker that closes without answering: denied"
fake_worker garbage "$T_TMP/garbage.sock"
is "$(echo "$CALL" | relay "$T_TMP/garbage.sock" | behavior)" deny \
    "relay: a worker that answers garbage: denied"
fake_worker allow "$T_TMP/allow.sock"
is "$(echo "$CALL" | relay "$T_TMP/allow.sock" | behavior)" allow \
    "relay: the worker's allow handed back"
for p in $FW_PIDS; do t_wait_pid "$p" 5000; done

# the fake claude and a config whose develop has ask_permissions ($1)
cat >"$T_TMP/claude" <<FAKEEOF
#!/bin/bash
case " \$* " in
*" --permission-prompt-tool "*) exec python3 '$PC' "\$@" ;;
esac
printf '%s\n' "\$@" >'$T_TMP/argv.noask'
exec '$FAKE' --marker $M result success
FAKEEOF
chmod +x "$T_TMP/claude"
cfg() {
	printf '{"tools":{"claude":{"path":"%s"}},"roles":{"develop":{"ask_permissions":%s}}}\n' \
	    "$T_TMP/claude" "$1" >"$T_TMP/cfg-$1.json"
}
cfg false
cfg true

# -- without ask_permissions: no relay, claude's argv as before
mkdir -p "$T_TMP/p0"
agent "$R" develop --tool claude --config "$T_TMP/cfg-false.json" \
    -C "$T_TMP/p0" --state-dir "$S" "go"
is "$?" 0 "no ask_permissions: the turn completes"
is "$(grep -c -e --mcp-config -e --permission-prompt-tool "$T_TMP/argv.noask")" 0 \
    "no ask_permissions: no --mcp-config, no --permission-prompt-tool"
grep -q '^Bash$' "$T_TMP/argv.noask"
ok $? "no ask_permissions: Bash allowed unasked (--allowedTools Bash)"

# -- `agent` has no one to ask: denied at once, the command never ran;
# the relay's garbage and oversized lines on the way changed nothing
mkdir -p "$T_TMP/p1"
agent "$R" develop --tool claude --config "$T_TMP/cfg-true.json" \
    -C "$T_TMP/p1" --state-dir "$S" "PERM-RUN: touch made.txt
PERM-GARBAGE"
is "$?" 0 "agent, ask_permissions: the turn completes"
is "$(jget "$R" '[d["summary"], "--permission-prompt-tool" in d["argv"], "Bash" in d["argv"]]')" \
    '["denied: no one here answers permission requests",true,false]' \
    "agent: denied at once (no owner to ask); Bash not allowed unasked"
[ ! -e "$T_TMP/p1/made.txt" ]
ok $? "agent: the denied command did not run"
grep -q "errors \[-32700, -32700\]" "$(jget "$R" 'd["log_path"]')"
ok $? "agent: garbage and an oversized line got errors, the relay went on"
sock=$(jget "$R" 'd["argv"][d["argv"].index("--mcp-config") + 1]' |
    jget - 'd["mcpServers"]["ccw_permission"]["args"][1]')
like "$sock" '/ccw-perm-[^/]+/sock$' "agent: the relay's socket in a private directory"
[ ! -e "$(dirname "$sock")" ]
ok $? "agent: that directory gone with the worker"

# lcfg ROOT TIMEOUT_MS POLICY [PERMISSION]: a loop whose develop is the
# stand-in claude with ask_permissions; every other role says success.
OK="exec '$FAKE' --marker $M result success"
lcfg() {
	mkdir -p "$1/.loop"
	python3 - "$@" "$T_TMP/claude" "$OK" <<'PYEOF'
import json, sys
root, tmo, pol, perm = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ok = {"command": sys.argv[6]}
dev = {"tool": "claude", "ask_permissions": True, "question_timeout_ms": tmo,
       "on_question_timeout": pol}
if perm != "-":
    dev["permission"] = perm
json.dump({"default_tool": "bash", "tools": {"claude": {"path": sys.argv[5]}},
           "roles": {"init": ok, "debug": ok, "validate": ok, "complete": ok,
                     "develop": dev}}, open(root + "/.loop/config.json", "w"))
PYEOF
}
TASK='PERM-RUN: touch made.txt'
PQ='[(q.get("kind"), q["tool_name"], q["options"], q["recommended"], q["input"]["command"], q["status"]) for q in d["skill_state"]["questions"]]'
ANS='[(q["status"], q["answer"], q["via"]) for q in d["skill_state"]["questions"]]'

# open_pq STATE MS: the open permission question's id, once there.
open_pq() {
	t_poll "$2" jget "$1" '[q["id"] for q in d["skill_state"].get("questions", []) if q["status"] == "open"][0]' >/dev/null 2>&1 &&
	    jget "$1" '[q["id"] for q in d["skill_state"]["questions"] if q["status"] == "open"][0]'
}

# -- a loop's develop asks; the question answered allow: the command ran
R=$T_TMP/allow
lcfg "$R" 60000 fail -
t_loop_start "$R" allow-1 --json "$TASK"
QID=$(open_pq "$F" 20000)
like "$QID" '^q-[0-9a-f]{12}$' "allow: the permission question is open"
is "$(jget "$F" "$PQ")" \
    '[["permission","Bash",["allow","deny"],"allow","touch made.txt","open"]]' \
    "allow: kind permission, Bash, allow or deny, recommended allow, the command"
[ ! -e "$R/made.txt" ]
ok $? "allow: the command waits for the answer"
$WRAP "$SUP" answer -C "$R" --by alice allow-1 "$QID" allow >/dev/null 2>&1
is "$?" 0 "allow: ccw-supervisor answer takes it"
t_wait_pid "$PID" 30000
is "$T_RC" 0 "allow: the loop completes"
[ -e "$R/made.txt" ]
ok $? "allow: the command ran"
is "$(jget "$F" "$ANS")" '[["answered","allow","cli"]]' "allow: answered via cli"
grep -q '"event": *"question_asked".*"kind": *"permission"' "$R.out"
ok $? "allow: --json told question_asked with the record"

# -- answered with a reason: denied, the model told why, the turn goes on
R=$T_TMP/deny
lcfg "$R" 60000 fail -
t_loop_start "$R" deny-1 "$TASK"
QID=$(open_pq "$F" 20000)
printf '{"question_id":"%s","answer":"no, run make","by":"bob","via":"http","at":"2026-11-28T11:00:00Z"}\n' \
    "$QID" >>"$R/.loop/deny-1.answers.jsonl"
t_wait_pid "$PID" 30000
is "$T_RC" 0 "deny: the loop completes"
[ ! -e "$R/made.txt" ]
ok $? "deny: the command did not run"
is "$(jget "$R/.loop/deny-1.workers/develop.output.json" 'd["summary"]')" \
    "denied: denied by the operator: no, run make" \
    "deny: the tool was told the operator's reason"

# -- nobody answers by the deadline: recommended (the role may write)
# (a long command of multi-byte characters: the question's text is cut
# at 200 bytes, never inside a character; a large input, not kept in
# the record, handed back whole)
R=$T_TMP/rec
lcfg "$R" 300 recommended -
t_loop_run "$R" rec-1 "$TASK; : $(printf '\303\251%.0s' $(seq 150))
PERM-BIG"
is "$RC" 0 "recommended: the loop completes"
[ -e "$R/made.txt" ]
ok $? "recommended: allowed by the policy, the command ran"
is "$(jget "$F" "$ANS")" '[["answered","allow","policy"]]' \
    "recommended: answered allow via policy"
is "$(jget "$F" '[(len(q["question"].split(": ", 1)[1].encode()), q["question"][-1]) for q in d["skill_state"]["questions"]]')" \
    '[[200,"\u00e9"]]' "recommended: the long command cut at 200 bytes, whole characters"
is "$(jget "$R/.loop/rec-1.workers/develop.output.json" 'd["summary"]')" \
    "ran: exit 0, input 300952 bytes back" \
    "recommended: the large input handed back whole"
is "$(jget "$F" '["input" in q for q in d["skill_state"]["questions"]]')" \
    '[false]' "recommended: an input over 4 KiB not kept in the record"
grep -q '"question_expired"' "$R/.loop/rec-1.history.jsonl"
ok $? "recommended: the history says it expired"

# -- nobody answers by the deadline: fail denies and fails the loop
R=$T_TMP/fail
lcfg "$R" 300 fail -
t_loop_run "$R" fail-1 "$TASK"
is "$RC" 1 "fail: exit 1"
like "$(jget "$F" '[d["status"], d["failure_reason"]]')" \
    '\["failed","develop: a permission request was not answered in time' \
    "fail: failed, the reason says so"
is "$(jget "$F" '[q["status"] for q in d["skill_state"]["questions"]]')" \
    '["expired"]' "fail: the question expired"
[ ! -e "$R/made.txt" ]
ok $? "fail: the command did not run"

# -- the loop stopped while the tool waits: the question expires with it
R=$T_TMP/stop
lcfg "$R" 60000 fail -
t_loop_start "$R" stop-1 "$TASK"
QID=$(open_pq "$F" 20000)
like "$QID" '^q-' "stop: the permission question is open"
kill -TERM "$PID"
t_wait_pid "$PID" 30000
is "$T_RC" 4 "stop: exit 4 (stopped)"
is "$(jget "$F" '[d["status"], [q["status"] for q in d["skill_state"]["questions"]]]')" \
    '["running",["expired"]]' \
    "stop: the status kept (a signal), the question expired (nobody lists it)"
[ ! -e "$R/made.txt" ]
ok $? "stop: the command did not run"

# -- headless (no question_timeout_ms), a read-only role: denied at once
R=$T_TMP/ro
lcfg "$R" 0 recommended read-only
t_loop_run "$R" ro-1 "$TASK"
is "$RC" 0 "read-only, headless: the loop completes"
is "$(jget "$F" '[(q["recommended"], q["status"], q["answer"], q["via"]) for q in d["skill_state"]["questions"]]')" \
    '[["deny","answered","deny","policy"]]' \
    "read-only, headless: recommended deny, taken at once"
[ ! -e "$R/made.txt" ]
ok $? "read-only, headless: the command did not run"

t_done
