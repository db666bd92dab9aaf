#!/bin/bash
# recipe-tool.sh: HACKING.md's "Adding an agent CLI", followed to the
# letter by a test-only tool, echo-agent: its row (tests/recipe/
# tool-echo-agent.c) is compiled into test copies of both programs
# (tests/recipe/ccw-supervisor and ccw-worker, CCW_RECIPE_TOOL) and its
# stand-in CLI replays tests/streams/echo-agent-success.jsonl.  Nothing
# else names it, yet every front end must know it: config validation
# (accepted; every "one of" lists it), agent, control (a follow-up turn
# resumes its session), run (a whole loop on it), batch (a CCW queue
# executor), mcp (the tool enum of spawn_agent, and a call) and doctor
# (probe, credentials, base URL).
. "$(dirname "$0")/lib.sh"
t_watchdog 120
SUP="$top_builddir/tests/recipe/ccw-supervisor"
WRK="$top_builddir/tests/recipe/ccw-worker"
unset CCW_WORKER
t_valgrind_worker
PATH=$(cd "$srcdir" && pwd)/tests/recipe:$PATH
ECHO_AGENT_DIR=$T_TMP/calls
mkdir -p "$ECHO_AGENT_DIR"
export PATH ECHO_AGENT_DIR
unset ECHO_AGENT_API_KEY ECHO_AGENT_HOME ECHO_AGENT_BASE_URL

if [ ! -x "$SUP" ] || [ ! -x "$WRK" ]; then
	echo "not ok 1 - the recipe build (tests/recipe/ccw-supervisor, ccw-worker) exists"
	echo "1..1"
	exit 1
fi

# --- config validation: a file naming it is accepted; an unknown tool's
# error lists it among the table's names
printf '{"default_tool":"echo-agent","tools":{"echo-agent":{"model":"e1"}},"roles":{"develop":{"tool":"echo-agent"}}}\n' \
    >"$T_TMP/cfg.json"
agent "$T_TMP/a1" develop --config "$T_TMP/cfg.json" --state-dir "$T_TMP/s" \
    "say it back"
is "$?" 0 "config naming echo-agent (default_tool, tools, a role): accepted, agent exit 0"
printf '{"tools":{"no-such-cli":{}}}\n' >"$T_TMP/bad.json"
agent "$T_TMP/a2" develop --config "$T_TMP/bad.json" --state-dir "$T_TMP/s" x
is "$?" 2 "config naming an unknown tool: exit 2"
like "$(cat "$T_TMP/a2.err")" 'tools\.no-such-cli: unknown tool \(expected bash, .*echo-agent' \
    "its error lists echo-agent among the tools"
agent "$T_TMP/a3" develop --tool no-such-cli --state-dir "$T_TMP/s" x
like "$(cat "$T_TMP/a3" "$T_TMP/a3.err")" "unknown tool 'no-such-cli' \(.*echo-agent" \
    "agent --tool unknown: the error lists echo-agent"

# --- agent: the row's argv, its stream read by its parser
r=$(cat "$T_TMP/a1")
is "$(jget - '[d["tool"], d["agent_status"], d["status"], d["summary"], d["session_id"]]' <<<"$r")" \
    '["echo-agent","completed","success","echo-agent echoed","echo-5e55-10n"]' \
    "agent: completed, the fixture's result block and session"
is "$(jget - '[d["usage"]["input_tokens"], d["usage"]["output_tokens"]]' <<<"$r")" \
    '[12,7]' "agent: the stream's token counts"
is "$(tr '\n' ' ' <"$ECHO_AGENT_DIR/argv.1")" "-m e1 " \
    "agent: argv from the row (the configured model)"
like "$(cat "$ECHO_AGENT_DIR/prompt.1")" 'say it back' "agent: the prompt on stdin"

# --- control: spawn it, wait, a follow-up turn resumes its session
ctl_start "$T_TMP/ctl" --state-dir "$T_TMP/s" --loop-id rc
ctl_send '{"id":1,"verb":"spawn","role":"develop","tool":"echo-agent","message":"first"}'
r=$(ctl_recv 1)
is "$(jget - 'd["ok"]' <<<"$r")" true "control: spawn with tool echo-agent"
ctl_send '{"id":2,"verb":"wait","targets":["agent-1"],"timeout_ms":20000}'
r=$(ctl_recv 2 25000)
is "$(jget - 'd["status"]["agent-1"]' <<<"$r")" completed "control: completed"
ctl_send '{"id":3,"verb":"send_input","target":"agent-1","message":"again"}'
r=$(ctl_recv 3)
is "$(jget - 'd["ok"]' <<<"$r")" true "control: a follow-up after the turn"
ctl_send '{"id":4,"verb":"wait","targets":["agent-1"],"timeout_ms":20000}'
r=$(ctl_recv 4 25000)
ctl_send '{"id":5,"verb":"result","target":"agent-1"}'
r=$(ctl_recv 5)
is "$(jget - '[d["result"]["turns"], d["result"]["session_id"]]' <<<"$r")" \
    '[2,"echo-5e55-10n"]' "control: two turns of one session"
n=$(cat "$ECHO_AGENT_DIR/n")
is "$(tr '\n' ' ' <"$ECHO_AGENT_DIR/argv.$n")" "--resume echo-5e55-10n " \
    "control: the follow-up's argv resumes the session (the row's argv)"
ctl_stop
is "$T_RC" 0 "control: exit 0 at end of input"

# --- run: a whole loop with echo-agent as the default tool
R=$T_TMP/proj
mkdir -p "$R/.loop"
printf '{"default_tool":"echo-agent"}\n' >"$R/.loop/config.json"
t_loop_run "$R" rl-1 "Echo the feature"
is "$RC" 0 "run: exit 0"
is "$(jget "$F" '[d["status"], d["skill_state"]["completed_actions"]]')" \
    '["completed",["init","develop","debug","validate","complete"]]' \
    "run: the loop completed on echo-agent"

# --- batch: a CCW queue whose items name echo-agent as their executor
Q=.workflow/issues/queues/QUE-20260201-120000.json
C=$T_TMP/queue
cp -R "$srcdir/examples/queue" "$C"
python3 - "$C/$Q" <<'EOF'
import json, sys
q = json.load(open(sys.argv[1]))
for s in q["solutions"]:
    s["executor"] = "echo-agent"
open(sys.argv[1], "w").write(json.dumps(q, indent=2))
EOF
timeout -k 2 60 $WRAP "$SUP" batch "$C/$Q" -C "$C" --json >"$C.out" 2>"$C.err"
is "$?" 0 "batch: executor echo-agent accepted, exit 0"
is "$(python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
print(sorted((e["item_id"], e.get("status")) for e in ev if e["event"] == "item_done"))
' "$C.out" 2>&1)" \
    "[('S-1', 'completed'), ('S-2', 'completed'), ('S-3', 'completed'), ('S-4', 'completed')]" \
    "batch: every item done by an echo-agent worker"
python3 - "$C/$Q" <<'EOF'
import json, sys
q = json.load(open(sys.argv[1]))
q["solutions"][0]["executor"] = "no-such-cli"
open(sys.argv[1], "w").write(json.dumps(q, indent=2))
EOF
timeout -k 2 60 $WRAP "$SUP" batch "$C/$Q" -C "$C" --json >"$C.out2" 2>"$C.err2"
like "$(cat "$C.err2")" 'executor must be loop, worker, agent, .*echo-agent' \
    "batch: an unknown executor's error lists echo-agent"

# --- mcp: the schema's tool enum is the table; a call spawns it
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
CTL_CMD=mcp ctl_start "$T_TMP/mcp" -C "$R"
ctl_send "$INIT" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
ctl_recv 0 >/dev/null
ctl_send '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
r=$(ctl_recv 1)
is "$(jget - '[t for t in d["result"]["tools"] if t["name"] == "spawn_agent"][0]["inputSchema"]["properties"]["tool"]["enum"]' <<<"$r")" \
    '["bash","codex","claude","gemini","qwen","opencode","echo-agent"]' \
    "mcp: spawn_agent's tool enum is the table, echo-agent last"
ctl_send '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"spawn_agent","arguments":{"role":"develop","tool":"echo-agent","message":"via mcp"}}}'
r=$(ctl_recv 2)
id=$(jget - 'd["result"]["structuredContent"]["agent_id"]' <<<"$r")
ctl_send "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"wait_agent\",\"arguments\":{\"targets\":[\"$id\"],\"timeout_ms\":20000}}}"
r=$(ctl_recv 3 25000)
is "$(jget - 'd["result"]["structuredContent"]["status"]' <<<"$r")" \
    "{\"$id\":\"completed\"}" "mcp: spawn_agent with tool echo-agent completes"
ctl_stop

# --- doctor: probed, its credential sources and base URL from its row
mkdir -p "$T_TMP/eh"
echo k >"$T_TMP/eh/key"
ECHO_AGENT_API_KEY=x ECHO_AGENT_HOME=$T_TMP/eh \
ECHO_AGENT_BASE_URL=http://user:pw@127.0.0.1:9/v1?k=s \
    timeout -k 2 60 $WRAP "$SUP" doctor --json -C "$R" >"$T_TMP/doc" 2>"$T_TMP/doc.err"
t=$(jget "$T_TMP/doc" '[t for t in d["tools"] if t["name"] == "echo-agent"][0]')
is "$(jget - '[d["adapter"], d["enabled"], d["runnable"], d["version"]]' <<<"$t")" \
    '[true,true,true,"echo-agent 1.0 (stand-in)"]' "doctor: echo-agent probed (--version)"
is "$(jget - '[d["credentials"]["needed"], d["credentials"]["configured"], [s["kind"] for s in d["credentials"]["sources"]]]' <<<"$t")" \
    '[true,true,["env","file"]]' "doctor: its row's credential variable and file"
is "$(jget - '[(b["env"], b["url"], b["vendor"]) for b in d["base_urls"]]' <<<"$t")" \
    '[["ECHO_AGENT_BASE_URL","http://127.0.0.1:9/v1",false]]' \
    "doctor: its base URL override, cleaned, not the vendor's"
t_done
