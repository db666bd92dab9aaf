#!/bin/bash
# acp-perm.sh: a CLI's permission request in an ACP session (issue 29).
# develop is claude (the stand-in tests/regress/perm-claude.py) with
# ask_permissions and a question_timeout_ms; a raw stdio client talks
# to `ccw-supervisor acp`: the request comes as session/request_permission
# (allow_once / reject_once), the client's allow runs the command (the
# question answered via acp), its reject does not and the turn goes on,
# a client that never answers gets the deadline's policy, and a question
# answered elsewhere first keeps that answer (the client's late reply is
# ignored).
. "$(dirname "$0")/lib.sh"
t_watchdog 120
t_valgrind_worker
t_marker M acpperm
PC=$(cd "$srcdir" && pwd)/tests/regress/perm-claude.py
OK="exec '$FAKE' --marker $M result success"

cat >"$T_TMP/claude" <<FAKEEOF
#!/bin/bash
exec python3 '$PC' "\$@"
FAKEEOF
chmod +x "$T_TMP/claude"

# project ROOT TIMEOUT_MS POLICY: develop the stand-in claude asking.
project() {
	mkdir -p "$1/.loop"
	python3 - "$@" "$T_TMP/claude" "$OK" <<'PYEOF'
import json, sys
root, tmo, pol, claude, ok = sys.argv[1:6]
dev = {"tool": "claude", "ask_permissions": True,
       "question_timeout_ms": int(tmo), "on_question_timeout": pol}
json.dump({"default_tool": "bash", "tools": {"claude": {"path": claude}},
           "roles": {"init": {"command": ok}, "debug": {"command": ok},
                     "validate": {"command": ok},
                     "complete": {"command": ok}, "develop": dev}},
          open(root + "/.loop/config.json", "w"))
PYEOF
}

# client ROOT MODE: one session, one prompt; MODE allow, reject (each
# option picked), never (no reply) or elsewhere (`answer` deny first,
# then the client's allow).  Its JSON line in $J.
client() {
	J=$(timeout -k 2 "$(( $(t_ms 60000) / 1000 ))" \
	    python3 - "$1" "$2" "$(t_ms 60000)" $WRAP "$SUP" acp \
	    2>"$T_TMP/$2.err" <<'PYEOF'
import json, os, subprocess, sys, time
root, mode, ms, cmd = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
end = time.time() + ms / 1000.0
err = open(os.path.join(os.path.dirname(root), mode + ".agent.err"), "w")
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=err, text=True)
out = {"perms": []}
def send(m):
    p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()
def state(sid):
    try:
        return json.load(open("%s/.loop/%s.json" % (root, sid)))
    except (OSError, ValueError):
        return {}
def answered(sid, qid):
    for q in state(sid).get("skill_state", {}).get("questions", []):
        if q["id"] == qid and q["status"] != "open":
            return True
    return False
def ask(m):
    out["perms"].append(m["params"])
    if mode == "never":
        return
    if mode == "elsewhere":
        qid = m["params"]["toolCall"]["toolCallId"]
        subprocess.run([cmd[-2], "answer", "-C", root, "--by", "carol",
                        sid, qid, "deny"], stdout=subprocess.DEVNULL)
        while not answered(sid, qid) and time.time() < end:
            time.sleep(0.02)
    oid = "deny" if mode == "reject" else "allow"
    send({"jsonrpc": "2.0", "id": m["id"], "result": {"outcome": {
        "outcome": "selected", "optionId": oid}}})
def call(i, method, params):
    send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
    for line in p.stdout:
        m = json.loads(line)
        if m.get("method") == "session/request_permission":
            ask(m)
        elif m.get("id") == i and "method" not in m:
            return m
    return {"error": "EOF"}
call(1, "initialize", {"protocolVersion": 1})
sid = call(2, "session/new", {"cwd": root, "mcpServers": []})["result"]["sessionId"]
out["sessionId"] = sid
r = call(3, "session/prompt", {"sessionId": sid, "prompt": [
    {"type": "text", "text": "PERM-RUN: touch made.txt"}]})
out["stopReason"] = r.get("result", {}).get("stopReason", r)
p.stdin.close()
out["exit"] = p.wait(timeout=max(1, end - time.time()))
print(json.dumps(out))
PYEOF
)
	[ -n "$J" ] || J='{"error": "no output"}'
	grep -q '"error"' <<<"$J" && printf '#   %.600s\n' "$J" &&
	    tail -n 5 "$T_TMP/$2.agent.err" | sed 's/^/#   /'
	return 0
}
# j EXPR: a field of $J (python, d is the object).
j() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); v=$1; print(v if isinstance(v, str) else json.dumps(v))" "$J" 2>/dev/null; }
# q ROOT EXPR: of the session's loop's questions (qs), as jget prints it.
q() { jget "$1/.loop/$(j 'd["sessionId"]').json" "[$2 for q in d['skill_state']['questions']]"; }

# turn MODE TIMEOUT_MS POLICY: a project ($R) and a client's turn in it:
# one request, the turn ends end_turn, the agent exits 0.
turn() {
	R=$T_TMP/$1
	project "$R" "$2" "$3"
	client "$R" "$1"
	is "$(j '[len(d["perms"]), d["stopReason"], d["exit"]]')" \
	    '[1, "end_turn", 0]' "$1: one request, the turn ends end_turn, exit 0"
}

# -- allow: the request, its options, the command ran, via acp
turn allow 60000 fail
is "$(j '[(o["optionId"], o["name"], o["kind"]) for o in d["perms"][0]["options"]]')" \
    '[["allow", "Allow", "allow_once"], ["deny", "Deny", "reject_once"]]' \
    "allow: options allow (allow_once) and deny (reject_once)"
is "$(j '[d["perms"][0]["toolCall"][k] for k in ("title", "kind", "rawInput")]')" \
    '["develop asks to use Bash: touch made.txt", "execute", {"command": "touch made.txt", "description": "the test'"'"'s command"}]' \
    "allow: the tool call titled role, tool and command, kind execute, the input raw"
is "$(j 'd["perms"][0]["toolCall"]["toolCallId"] == d["perms"][0]["_meta"]["question"]["id"]')" \
    true "allow: the tool call's id is the question's"
[ -e "$R/made.txt" ]
ok $? "allow: the command ran"
is "$(q "$R" '(q["kind"], q["status"], q["answer"], q["via"])')" \
    '[["permission","answered","allow","acp"]]' "allow: answered allow via acp"

# -- reject: the command did not run, the turn goes on
turn reject 60000 fail
[ ! -e "$R/made.txt" ]
ok $? "reject: the command did not run"
is "$(q "$R" '(q["status"], q["answer"], q["via"])')" \
    '[["answered","deny","acp"]]' "reject: answered deny via acp"
is "$(jget "$R/.loop/$(j 'd["sessionId"]').workers/develop.output.json" 'd["summary"]')" \
    "denied: denied by the operator" "reject: the tool was told"

# -- never answered: the deadline's policy (recommended: allow)
turn never 300 recommended
is "$(q "$R" '(q["status"], q["answer"], q["via"])')" \
    '[["answered","allow","policy"]]' "never: answered allow by the policy"
[ -e "$R/made.txt" ]
ok $? "never: the command ran"

# -- answered elsewhere first: that answer stands, the late allow ignored
turn elsewhere 60000 fail
is "$(q "$R" '(q["status"], q["answer"], q["via"], q["answered_by"])')" \
    '[["answered","deny","cli","carol"]]' "elsewhere: the first answer stands"
[ ! -e "$R/made.txt" ]
ok $? "elsewhere: the command did not run"
is "$(t_marked "$M" | wc -l)" 0 "no marked process is left"
t_done
