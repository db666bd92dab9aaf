#!/bin/bash
# agent-basic.sh: `ccw-supervisor agent` on a fake tool that succeeds,
# fails, crashes, is missing, is unknown, prints a broken block or asks a
# question; and `control` refusing bad requests without dying.
. "$(dirname "$0")/lib.sh"
t_watchdog 50
t_valgrind_worker
t_marker M basic
S=$T_TMP/state
W=$T_TMP/work
mkdir -p "$W" "$T_TMP/empty"
R=$T_TMP/r

# -- a tool that reads the message, works and succeeds
agent "$R" develop --tool bash --state-dir "$S" --loop-id L1 \
    --command "exec '$FAKE' --marker $M read-line print working \
	stderr on-stderr result success 'fixed the bug' \
	'[\"src/a.c\", \"src/b.c\"]'" "do it"
rc=$?
is "$rc" 0 "success: exit 0"
is "$(wc -l <"$R")" 1 "--json prints one line"
is "$(jget "$R" 'd["agent_status"]')" completed "success: agent_status"
is "$(jget "$R" 'd["status"]')" success "success: status"
is "$(jget "$R" 'd["summary"]')" "fixed the bug" "success: summary"
is "$(jget "$R" '[d["files_claimed"], d["files_changed"]]')" \
    '[["src/a.c","src/b.c"],[]]' \
    "success: the block's files are files_claimed; files_changed: none written"
is "$(jget "$R" '[d["role"], d["tool"], d["action"], d["next_suggestion"],
    d["loop_back_to"], d["reason"]]')" \
    '["develop","bash","develop","validate",null,null]' \
    "success: role, tool, action, next_suggestion, loop_back_to, reason"
is "$(jget "$R" '[d["exit_code"], d["signal"], d["timed_out"], d["nudged"]]')" \
    '[0,null,false,false]' "success: exit_code 0, no signal, no timeout"
is "$(jget "$R" '"-c" in d["argv"] and
    any("--marker" in a for a in d["argv"])')" true \
    "success: argv is the bash command line"
is "$(jget "$R" 'd["cwd"]')" "$PWD" "success: cwd is where it ran"
is "$(jget "$R" 'type(d["pid"]) is int and d["pid"] > 1 and
    type(d["worker_pid"]) is int and d["worker_pid"] > 1 and
    d["pid"] != d["worker_pid"]')" true "success: tool pid and worker pid"
is "$(jget "$R" 'type(d["duration_ms"]) is int and d["duration_ms"] >= 0')" \
    true "success: duration_ms"
is "$(jget "$R" 'd["detailed_output"]')" "fake output" "success: detailed_output"
is "$(jget "$R" 'sorted(k for k in ["agent_id", "detailed_output",
    "questions", "session_id", "stderr_tail"] if k not in d)')" '[]' \
    "success: every key is there"
id=$(jget "$R" 'd["agent_id"]')
log=$(jget "$R" 'd["log_path"]')
is "$log" "$S/L1.workers/$id.log" "success: log in STATE/LOOP.workers/ID.log"
ok $([ -f "$log" ]; echo $?) "success: the log exists"
like "$(cat "$log" 2>/dev/null)" '^got: do it' \
    "success: the message came in on stdin"
like "$(cat "$log" 2>/dev/null)" 'working' "success: the log holds stdout"
like "$(cat "$log" 2>/dev/null)" 'on-stderr' "success: the log holds stderr"
like "$(cat "$log" 2>/dev/null)" '- summary: fixed the bug' \
    "success: the log holds the block"

# -- a failed result; the state dir defaults to .loop under -C
agent "$R" debug --tool bash -C "$W" \
    --command "exec '$FAKE' --marker $M result failed 'tests still red'" \
    "fix it"
rc=$?
is "$rc" 1 "failed: exit 1"
is "$(jget "$R" '[d["agent_status"], d["status"], d["summary"]]')" \
    '["completed","failed","tests still red"]' "failed: completed, failed"
is "$(jget "$R" 'd["cwd"]')" "$W" "failed: -C sets the cwd"
log=$(jget "$R" 'd["log_path"]')
like "$log" "^$W/\\.loop/.+\\.workers/.+\\.log$" \
    "failed: the log is under -C DIR/.loop"
ok $([ -f "$log" ]; echo $?) "failed: the log exists"

# -- a crash
agent "$R" develop --tool bash --state-dir "$S" \
    --command "exec '$FAKE' --marker $M print before-crash crash" "go"
rc=$?
is "$rc" 1 "crash: exit 1"
is "$(jget "$R" 'd["agent_status"]')" errored "crash: errored"
like "$(jget "$R" 'd["reason"]')" 'signal 11.*SIGSEGV' \
    "crash: the reason names the signal"
is "$(jget "$R" '[d["signal"], d["exit_code"]]')" '[11,null]' \
    "crash: signal 11, no exit code"
like "$(cat "$(jget "$R" 'd["log_path"]')" 2>/dev/null)" before-crash \
    "crash: the output before the crash is in the log"

# -- a tool whose program is missing
if PATH=/usr/bin:/bin command -v codex >/dev/null; then
	t_skip "missing tool: codex is installed in /usr/bin or /bin"
	t_skip "missing tool: reason"
	t_skip "missing tool: exit 1"
else
	PATH="$T_TMP/empty:/usr/bin:/bin" agent "$R" develop --tool codex \
	    --state-dir "$S" "go"
	rc=$?
	is "$(jget "$R" 'd["agent_status"]')" errored "missing tool: errored"
	like "$(jget "$R" 'd["reason"]')" "codex.*not found|not found.*codex" \
	    "missing tool: the reason names it"
	is "$rc" 1 "missing tool: exit 1"
fi

# -- an unknown tool name is a usage error
agent "$R" develop --tool nosuchtool --state-dir "$S" "go"
rc=$?
is "$rc" 2 "unknown --tool: exit 2"
like "$(cat "$R.err")" nosuchtool "unknown --tool: named on stderr"
is "$(cat "$R")" "" "unknown --tool: nothing on stdout"

# -- a broken block is read leniently, not fatally
agent "$R" develop --tool bash --state-dir "$S" \
    --command "exec '$FAKE' --marker $M bad-block" "go"
rc=$?
ok $([ "$rc" = 0 ] || [ "$rc" = 1 ]; echo $?) "bad block: exit 0 or 1 ($rc)"
is "$(jget "$R" 'd["agent_status"]')" completed "bad block: completed"
like "$(jget "$R" 'd["status"]')" '^(unknown|success|failed|partial|needs_input)$' \
    "bad block: a valid status"
is "$(jget "$R" 'type(d["files_changed"]) is list')" true \
    "bad block: files_changed is a list"

# -- a question
agent "$R" develop --tool bash --state-dir "$S" \
    --command "exec '$FAKE' --marker $M print thinking clarify" "go"
rc=$?
is "$rc" 0 "clarify: exit 0"
is "$(jget "$R" 'd["status"]')" needs_input "clarify: needs_input"
is "$(jget "$R" 'type(d["questions"]) is list and len(d["questions"]) == 1')" \
    true "clarify: one question"
like "$(jget "$R" 'd["questions"]')" 'Which database\?.*sqlite' \
    "clarify: the question and its options"

# -- control: bad requests get errors and the supervisor keeps serving
C=$T_TMP/ctl
ctl_start "$C" --state-dir "$S" --loop-id L2
ctl_send "{\"id\":1,\"verb\":\"spawn\",\"role\":\"develop\",\"message\":\"go\",\
\"tool\":\"bash\",\"command\":\"exec '$FAKE' --marker $M result success\",\
\"model\":null}"
r=$(ctl_recv 1)
is "$(jget - 'd["ok"]' <<<"$r")" true "control: spawn ok"
A=$(jget - 'd["agent_id"]' <<<"$r")
ctl_send "{\"id\":2,\"verb\":\"wait\",\"targets\":[\"$A\"],\"timeout_ms\":10000,\
\"mode\":\"all\"}"
r=$(ctl_recv 2 15000)
is "$(jget - '[d["ok"], d["status"]["'"$A"'"], d["timed_out"]]' <<<"$r")" \
    '[true,"completed",false]' "control: wait sees it completed"
ctl_send "{\"id\":3,\"verb\":\"send_input\",\"target\":\"$A\",\
\"message\":\"late\",\"interrupt\":false}"
r=$(ctl_recv 3)
is "$(jget - 'd["ok"]' <<<"$r")" false "control: send_input to a finished agent fails"
like "$(jget - 'd["error"]' <<<"$r")" "$A is completed" \
    "control: and says the agent is completed"
ctl_send "{\"id\":4,\"verb\":\"result\",\"target\":\"$A\"}"
r=$(ctl_recv 4)
is "$(jget - '[d["ok"], d["result"]["status"], d["result"]["agent_id"]]' \
    <<<"$r")" "[true,\"success\",\"$A\"]" "control: result of the agent"
ctl_send "{\"id\":5,\"verb\":\"close\",\"target\":\"$A\",\"grace_ms\":500}"
r=$(ctl_recv 5)
is "$(jget - '[d["ok"], d["previous_status"]]' <<<"$r")" '[true,"completed"]' \
    "control: close answers the previous status"
ctl_send "{\"id\":6,\"verb\":\"close\",\"target\":\"$A\",\"grace_ms\":500}"
r=$(ctl_recv 6)
is "$(jget - 'd["ok"]' <<<"$r")" false "control: a second close fails"
like "$(jget - 'd["error"]' <<<"$r")" "already closed" \
    "control: and says already closed"
ctl_send '{"id":7,"verb":"wait","targets":["agent-9"],"timeout_ms":100,"mode":"any"}'
r=$(ctl_recv 7)
is "$(jget - '[d["ok"], d["error"]]' <<<"$r")" \
    "[false,\"unknown agent 'agent-9'\"]" "control: wait on an unknown id"
ctl_send '{"id":8,"verb":"result","target":"agent-9"}' \
    '{"id":9,"verb":"close","target":"agent-9"}'
r=$(ctl_recv 8)
like "$(jget - 'd["error"]' <<<"$r")" "unknown agent 'agent-9'" \
    "control: result of an unknown id"
r=$(ctl_recv 9)
like "$(jget - 'd["error"]' <<<"$r")" "unknown agent 'agent-9'" \
    "control: close of an unknown id"
ctl_send '{"id":10,"verb":'
bad=$CTL_LINES
r=$(ctl_recv null)
is "$(jget - 'd["ok"]' <<<"$r")" false "control: a malformed line is refused"
like "$(jget - 'd["error"]' <<<"$r")" "line $bad([^0-9]|$)" \
    "control: the error names the line number ($bad)"
ctl_send '{"id":11,"verb":"frobnicate"}'
r=$(ctl_recv 11)
is "$(jget - 'd["ok"]' <<<"$r")" false "control: unknown verb refused"
like "$(jget - 'd["error"]' <<<"$r")" frobnicate "control: the verb is named"
ctl_send '{"id":12,"verb":"list"}'
r=$(ctl_recv 12)
is "$(jget - '[d["ok"], type(d["agents"]) is dict]' <<<"$r")" '[true,true]' \
    "control: still serving after all that"
ctl_stop 10000
is "$T_RC" 0 "control: EOF on stdin, exit 0"
is "$(grep -c . "$C")" 12 "control: one response per request"

t_wait_gone "$M" 2000; ok $? "no tool is left running"
t_done
