#!/usr/bin/env python3
# perm-claude.py: a stand-in for claude in permission.sh.  It does what
# claude 2.1.197 does with --mcp-config and --permission-prompt-tool
# mcp__S__T (measured in tests/e2e/cli-permission.sh): starts server S
# of the config, says initialize, notifications/initialized and
# tools/list, and before a Bash call calls T with {tool_name, input,
# tool_use_id}; the text of the answer is {"behavior": "allow",
# "updatedInput": ...} or {"behavior": "deny", "message": ...}.  The
# command is the prompt's `PERM-RUN: cmd` line; PERM-GARBAGE in the
# prompt first sends the relay a line that is no JSON and one over its
# cap (each must get a JSON-RPC error, and the relay must go on).  It
# PERM-BIG makes the input large (a 300 KB description), as a Write of a
# large file would.  It prints claude's stream-json: init, the tool's
# result, the result event with a WORKER_RESULT block saying what
# happened.
import json
import subprocess
import sys

argv = sys.argv[1:]


def opt(name):
    return argv[argv.index(name) + 1] if name in argv else None


def out(ev):
    sys.stdout.write(json.dumps(ev) + "\n")
    sys.stdout.flush()


prompt = sys.stdin.read()
cmd = "true"
for line in prompt.splitlines():
    if line.startswith("PERM-RUN:"):
        cmd = line[len("PERM-RUN:"):].strip()
out({"type": "system", "subtype": "init", "session_id": "perm-sess-1",
     "model": "perm-fake"})
cfg, tool = opt("--mcp-config"), opt("--permission-prompt-tool")
_, server, tname = tool.split("__", 2)
srv = json.loads(cfg)["mcpServers"][server]
relay = subprocess.Popen([srv["command"]] + srv.get("args", []),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
seq = [0]


def rpc(method, params=None, notify=False):
    m = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        m["params"] = params
    if not notify:
        seq[0] += 1
        m["id"] = seq[0]
    relay.stdin.write(json.dumps(m) + "\n")
    relay.stdin.flush()
    if notify:
        return None
    return json.loads(relay.stdout.readline())


rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
rpc("notifications/initialized", notify=True)
names = [t["name"] for t in rpc("tools/list")["result"]["tools"]]
errors = []
if "PERM-GARBAGE" in prompt:
    for bad in ["this is no json", "x" * (1024 * 1024 + 100)]:
        relay.stdin.write(bad + "\n")
        relay.stdin.flush()
        errors.append(json.loads(relay.stdout.readline())["error"]["code"])
use = {"command": cmd, "description": "the test's command"}
if "PERM-BIG" in prompt:
    use["description"] = "d" * 300000
out({"type": "assistant", "message": {"content": [
    {"type": "tool_use", "id": "toolu_perm_1", "name": "Bash",
     "input": use}]}})
r = rpc("tools/call", {"name": tname, "arguments": {
    "tool_name": "Bash", "input": use, "tool_use_id": "toolu_perm_1"}})
ans = json.loads(r["result"]["content"][0]["text"])
if ans["behavior"] == "allow":
    done = subprocess.run(ans["updatedInput"]["command"], shell=True)
    said = "ran: exit %d, input %d bytes back" % (
        done.returncode, len(json.dumps(ans["updatedInput"])))
else:
    said = "denied: " + ans["message"]
relay.stdin.close()
relay.wait()
out({"type": "user", "message": {"content": [
    {"type": "tool_result", "tool_use_id": "toolu_perm_1", "content": said,
     "is_error": ans["behavior"] != "allow"}]}})
text = ("%s (tools %s, errors %s)\n\nWORKER_RESULT:\n- action: develop\n"
        "- status: success\n- summary: %s\n- files_changed: []\n"
        "- next_suggestion: null\n- loop_back_to: null\n") % (
            said, ",".join(names), errors, said)
out({"type": "result", "subtype": "success", "is_error": False,
     "result": text, "session_id": "perm-sess-1",
     "usage": {"input_tokens": 1, "output_tokens": 1},
     "total_cost_usd": 0})
