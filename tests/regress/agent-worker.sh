#!/bin/bash
# agent-worker.sh: what the worker reports about real-CLI behaviour (issue
# 9), with stand-in CLIs (bash scripts speaking the real streams): $PWD
# follows -C; stderr is kept apart and names the failure; a kill after a
# good final event is no failure; API errors fail fast with a kind; no
# cost unless the CLI reports one; answers without a block get a summary
# and, like every answer, git's list of changed files; resume_session; input queued before
# the session id is known; results add up over turns.
. "$(dirname "$0")/lib.sh"
t_watchdog 90
t_valgrind_worker
t_marker M wrk
S=$T_TMP/state
R=$T_TMP/r
W=$T_TMP/work
mkdir -p "$W"

# cli NAME BODY: a stand-in CLI at $T_TMP/NAME and a config using it
# (tools.NAME.path, plus the options JSON in $3 if given).
cli() {
	printf '#!/bin/bash\n# %s\n%s\n' "$M" "$2" >"$T_TMP/$1"
	chmod +x "$T_TMP/$1"
	printf '{"tools":{"%s":{"path":"%s","options":%s}}}\n' "$1" \
	    "$T_TMP/$1" "${3:-{\}}" >"$T_TMP/cfg-$1.json"
}

# -- item 1: $PWD is the -C directory, not the caller's
(cd / && agent "$R" develop --tool bash -C "$W" --state-dir "$S" \
    --command 'tr "\0" "\n" </proc/$$/environ | grep ^PWD=' "hi")
log=$(jget "$R" 'd["log_path"]')
is "$(grep '^PWD=' "$log")" "PWD=$W" "PWD: the tool's \$PWD is the -C dir"

# -- item 6: stderr apart; the failure names its last meaningful line
agent "$R" develop --tool bash --state-dir "$S" --command 'echo on-stdout
echo "Error: invalid x-api-key" >&2; echo "    at f (cli.js:1:2)" >&2
echo "Node.js v22.0.0" >&2; exit 1' "go"
is "$(jget "$R" '[d["status"], d["reason"], d["error_kind"]]')" \
    '["failed","Error: invalid x-api-key","auth"]' \
    "stderr: failed, the reason is the tool's own message, kind auth"
is "$(jget "$R" 'd["stderr_tail"] == "Error: invalid x-api-key\n    at f (cli.js:1:2)\nNode.js v22.0.0\n"')" \
    true "stderr: stderr_tail is stderr only"
like "$(cat "$(jget "$R" 'd["log_path"]')")" "on-stdout" \
    "stderr: the log still holds stdout"
like "$(cat "$(jget "$R" 'd["log_path"]')")" "invalid x-api-key" \
    "stderr: ... and stderr"

# -- item 5: a CLI that exits 1 on the kill after its good final event
cli qwen 'cat >/dev/null
printf "%s\n" "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"q-1\"}"
printf "%s\n" "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"Looked around.\\n\\nThe plan: fix calc.sh.\",\"session_id\":\"q-1\"}"
trap "exit 1" TERM
while :; do sleep 0.05; done'
agent "$R" init --tool qwen --config "$T_TMP/cfg-qwen.json" --state-dir "$S" \
    "go"
is "$(jget "$R" '[d["agent_status"], d["status"] != "failed", d["reason"], d["summary"]]')" \
    '["completed",true,null,"The plan: fix calc.sh."]' \
    "final event decides: killed after success is no failure; summary is the last paragraph"

# -- item 9: an auth error ends the turn fast; a CLI that keeps retrying
cli claude "cat >/dev/null
cat '$srcdir/tests/streams/claude-401.jsonl'
exec sleep 1000"
t0=$(t_now_ms)
agent "$R" develop --tool claude --config "$T_TMP/cfg-claude.json" \
    --state-dir "$S" --timeout-ms 60000 "go"
el=$(( $(t_now_ms) - t0 ))
echo "# timing: auth error to result $el ms"
is "$(jget "$R" '[d["status"], d["error_kind"], d["timed_out"]]')" \
    '["failed","auth",false]' "401: failed, kind auth, no timeout"
like "$(jget "$R" 'd["summary"]')" "HTTP 401.*authentication_failed" \
    "401: the summary names the API error"
ok $(( el > 30000 )) "401: over long before the deadline ($el ms)"
t_wait_gone "$M" 3000
ok $? "401: nothing left"

# -- item 12: no cost from a CLI that reports none; claude's is kept
cli codex "cat >/dev/null; cat '$srcdir/tests/streams/codex-success.jsonl'"
agent "$R" develop --tool codex --config "$T_TMP/cfg-codex.json" \
    --state-dir "$S" "go"
is "$(jget "$R" '[d["status"], d["usage"]]')" \
    '["success",{"input_tokens":2200,"output_tokens":105,"cost_usd":null}]' \
    "codex: usage without cost_usd"
is "$(jget "$R" '[d["files_claimed"], d["turns"]]')" '[["src/a.c"],1]' \
    "codex: the block's files are the claim, one turn"

# -- item 10: no block: the last paragraph, and files from git
G=$T_TMP/repo
mkdir -p "$G"
git -C "$G" init -q && printf 'a\n' >"$G/a.txt" && printf 'b\n' >"$G/b.txt" &&
    printf 'x\n' >"$G/dirty.txt" &&
    git -C "$G" add . && git -C "$G" -c user.name=t -c user.email=t@t \
    commit -qm init && printf 'y\n' >>"$G/dirty.txt"
cli claude 'cat >/dev/null
echo changed >>a.txt; echo new >new.txt
printf "%s\n" "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"c-1\"}"
printf "%s\n" "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"I edited a.txt.\\n\\nAdded new.txt and fixed a.txt.\",\"session_id\":\"c-1\"}"'
agent "$R" develop --tool claude --config "$T_TMP/cfg-claude.json" \
    -C "$G" --state-dir "$S" "go"
is "$(jget "$R" '[d["status"], d["summary"], sorted(d["files_changed"]), d["files_source"]]')" \
    '["unknown","Added new.txt and fixed a.txt.",["a.txt","new.txt"],"git"]' \
    "no block: summary from the answer, files from git (not the file dirty before)"

# -- item 4: options.resume_session makes the first run a resumed turn
cli codex 'in=$(cat)
printf "%s\n" "{\"type\":\"thread.started\",\"thread_id\":\"${@: -2:1}\"}"
printf "%s\n" "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"WORKER_RESULT:\\n- status: success\\n- summary: resumed ${@: -2:1} with $in\\n\"}}"
printf "%s\n" "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}"' \
    '{"resume_session":"thread-7"}'
agent "$R" develop --tool codex --config "$T_TMP/cfg-codex.json" \
    --raw --state-dir "$S" "the follow-up"
is "$(jget "$R" '[d["summary"], d["session_id"], d["argv"][2]]')" \
    '["resumed thread-7 with the follow-up","thread-7","resume"]' \
    "resume_session: the first run resumes that session with the prompt"

# -- item 4 and 8: input before the session id is known is queued; the
# result adds up both turns
cli codex 'in=$(cat)
if [ "$2" = resume ]; then
	printf "%s\n" "{\"type\":\"thread.started\",\"thread_id\":\"${@: -2:1}\"}"
	printf "%s\n" "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"WORKER_RESULT:\\n- status: success\\n- summary: second turn with $in\\n- files_changed: [b.c]\\n\"}}"
	printf "%s\n" "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":5,\"output_tokens\":6}}"
	exit 0
fi
while [ ! -e "$CCW_GO" ]; do sleep 0.02; done
printf "%s\n" "{\"type\":\"thread.started\",\"thread_id\":\"thread-9\"}"
printf "%s\n" "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"WORKER_RESULT:\\n- status: success\\n- summary: first\\n- files_changed: [a.c]\\n\"}}"
printf "%s\n" "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":2}}"'
export CCW_GO=$T_TMP/go
ctl_start "$T_TMP/ctl" --state-dir "$S" --loop-id queued \
    --config "$T_TMP/cfg-codex.json"
ctl_send '{"id":1,"verb":"spawn","role":"develop","tool":"codex","message":"first"}'
ctl_recv 1 >/dev/null
ctl_send '{"id":2,"verb":"send_input","target":"agent-1","message":"more please"}'
r=$(ctl_recv 2 5000)
is "$(jget - '[d["ok"], d.get("error")]' <<<"$r")" '[true,null]' \
    "queued: input accepted before the session id is known"
touch "$CCW_GO"
ctl_send '{"id":3,"verb":"wait","targets":["agent-1"],"timeout_ms":20000}'
ctl_recv 3 25000 >/dev/null
ctl_send '{"id":4,"verb":"result","target":"agent-1"}'
r=$(ctl_recv 4)
is "$(jget - '[d["result"]["summary"], d["result"]["turns"], d["result"]["usage"]]' <<<"$r")" \
    '["second turn with more please",2,{"input_tokens":6,"output_tokens":8,"cost_usd":null}]' \
    "turns: the input ran as a resumed turn; usage adds up"
is "$(jget - '[sorted(d["result"]["files_claimed"]), d["result"]["argv"][2], d["result"]["session_id"]]' <<<"$r")" \
    '[["a.c","b.c"],"resume","thread-9"]' \
    "turns: files claimed in both turns; argv and session of the latest"
ctl_stop 10000

# -- queued input, but the turn ends without a session id
rm -f "$CCW_GO"
cli codex 'cat >/dev/null
while [ ! -e "$CCW_GO" ]; do sleep 0.02; done
echo "Error: not logged in" >&2; exit 1'
ctl_start "$T_TMP/ctl2" --state-dir "$S" --loop-id nosession \
    --config "$T_TMP/cfg-codex.json"
ctl_send '{"id":1,"verb":"spawn","role":"develop","tool":"codex","message":"first"}'
ctl_recv 1 >/dev/null
ctl_send '{"id":2,"verb":"send_input","target":"agent-1","message":"more"}'
ctl_recv 2 5000 >/dev/null
touch "$CCW_GO"
ctl_send '{"id":3,"verb":"wait","targets":["agent-1"],"timeout_ms":20000}'
ctl_recv 3 25000 >/dev/null
ctl_send '{"id":4,"verb":"result","target":"agent-1"}'
r=$(ctl_recv 4)
like "$(jget - 'd["result"]["reason"]' <<<"$r")" \
    "follow-up input not delivered: codex ended its turn without a session id" \
    "no session: the queued input fails with a clear reason"
ctl_stop 10000
unset CCW_GO

t_done
