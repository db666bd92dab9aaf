#!/bin/bash
# agent-more.sh: spawns that fail half-way (worker missing, descriptors
# exhausted) each end in one errored completion; follow-up input by
# resuming a stream tool's session; CLAUDECODE never reaches a tool; a
# CLI that never exits after its final event is killed 2 s later.
. "$(dirname "$0")/lib.sh"
t_watchdog 60
t_marker M more
S=$T_TMP/state
R=$T_TMP/r
t_slack

# -- the worker program cannot be executed
CCW_WORKER=$T_TMP/no-such-worker agent "$R" develop --tool bash \
    --state-dir "$S" --command true "go"
is "$?" 1 "worker missing: exit 1"
is "$(jget "$R" 'd["agent_status"]')" errored "worker missing: errored"
like "$(jget "$R" 'd["reason"]')" "no-such-worker: No such file" \
    "worker missing: the path and the error are named"

# -- descriptors run out half-way through a burst of spawns: every spawn
# still answers, the ones that could not start end errored, the rest run.
# (valgrind needs descriptors of its own under such a low limit).  24: a
# host at rest holds about 12 (event loop, committer, run lock, workers
# directory, /dev/null), and each worker 3 more (channel, pidfd, exec pipe).
fd_limit_test() {
(
	ulimit -n 24
	ctl_start "$T_TMP/ctl-fd" --state-dir "$S" --loop-id fd
	for i in $(seq 1 12); do
		ctl_send "{\"id\":$i,\"verb\":\"spawn\",\"role\":\"develop\",\
\"tool\":\"bash\",\"command\":\"exec '$FAKE' --marker $M sleep 1500 \
result success\"}"
	done
	ids=
	for i in $(seq 1 12); do
		ids="$ids,\"$(jget - 'd.get("agent_id", "none")' <<<"$(ctl_recv $i)")\""
	done
	ctl_send "{\"id\":99,\"verb\":\"wait\",\"targets\":[${ids#,}],\
\"timeout_ms\":10000,\"mode\":\"all\"}"
	ctl_recv 99 15000 >"$T_TMP/fd-wait"
	ctl_send '{"id":100,"verb":"list"}'
	ctl_recv 100 >"$T_TMP/fd-list"
	for i in $(seq 1 12); do
		ctl_send "{\"id\":$((200 + i)),\"verb\":\"result\",\
\"target\":\"agent-$i\"}"
		jget - 'd["result"]["reason"] or ""' <<<"$(ctl_recv $((200 + i)))"
	done >"$T_TMP/fd-reasons"
	ctl_stop 10000
)
is "$(jget "$T_TMP/fd-wait" '[d["ok"], d["timed_out"]]')" '[true,false]' \
    "fd limit: waiting for all 12 agents ends"
n_err=$(jget "$T_TMP/fd-list" 'sum(v == "errored" for v in d["agents"].values())')
n_ok=$(jget "$T_TMP/fd-list" 'sum(v == "completed" for v in d["agents"].values())')
echo "# fd limit 24: $n_ok completed, $n_err errored"
is "$((n_err + n_ok))" 12 "fd limit: all 12 spawns ended, completed or errored"
ok $(( n_err == 0 )) "fd limit: some spawns hit the limit"
ok $(( n_ok == 0 )) "fd limit: the others completed"
like "$(cat "$T_TMP/fd-reasons")" "spawn failed: .*Too many open files" \
    "fd limit: the reason names the exhausted resource"
t_wait_gone "$M" 2000
ok $? "fd limit: nothing left running"
}
if [ -n "$WRAP" ]; then
	t_skip "fd limit: not under a wrapper (it needs descriptors itself)"
else
	fd_limit_test
fi

# -- follow-up input to a stream tool: queued, then the session resumed.
# A fake codex: the first turn announces a thread, works a second, ends
# without a block; `exec resume ID` echoes its stdin in a result block.
cat >"$T_TMP/codex" <<FAKEEOF
#!/bin/bash
if [ "\$2" = resume ]; then
	in=\$(cat)
	printf '{"type":"thread.started","thread_id":"%s"}\n' "\${@: -2:1}"
	printf '{"type":"item.completed","item":{"type":"agent_message","text":"WORKER_RESULT:\\\\n- status: success\\\\n- summary: resumed %s with %s\\\\n"}}\n' "\${@: -2:1}" "\$in"
	printf '{"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":6}}\n'
	exit 0
fi
cat >/dev/null
printf '{"type":"thread.started","thread_id":"thread-42"}\n'
exec '$FAKE' --marker $M sleep 1000 print '{"type":"item.completed","item":{"type":"agent_message","text":"first turn"}}' print '{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":2}}'
FAKEEOF
chmod +x "$T_TMP/codex"
printf '{"tools":{"codex":{"path":"%s"}}}\n' "$T_TMP/codex" >"$T_TMP/cfg.json"
ctl_start "$T_TMP/ctl-resume" --state-dir "$S" --loop-id resume \
    --config "$T_TMP/cfg.json"
ctl_send '{"id":1,"verb":"spawn","role":"develop","tool":"codex","message":"first"}'
ctl_recv 1 >/dev/null
# The first turn is under way (its fake sleeps after the thread id).
t_wait_count "$M" 1 10000
ok $? "resume: the first turn is running"
ctl_send '{"id":2,"verb":"send_input","target":"agent-1","message":"more please"}'
r=$(ctl_recv 2 5000)
is "$(jget - '[d["ok"], d.get("error")]' <<<"$r")" '[true,null]' \
    "resume: input accepted while the first turn runs"
ctl_send '{"id":3,"verb":"wait","targets":["agent-1"],"timeout_ms":10000}'
r=$(ctl_recv 3 15000)
is "$(jget - 'd["status"]["agent-1"]' <<<"$r")" completed "resume: completed"
ctl_send '{"id":4,"verb":"result","target":"agent-1"}'
r=$(ctl_recv 4)
is "$(jget - 'd["result"]["summary"]' <<<"$r")" \
    "resumed thread-42 with more please" \
    "resume: the second turn ran on the same session with the input"
is "$(jget - 'd["result"]["session_id"]' <<<"$r")" thread-42 \
    "resume: the session id is reported"
ctl_stop 10000

# -- CLAUDECODE is removed from every tool's environment
CLAUDECODE=1 agent "$R" develop --tool bash --state-dir "$S" \
    --command 'echo "cc=${CLAUDECODE-unset}"' "go"
log=$(jget "$R" 'd["log_path"]')
like "$(cat "$log")" '^cc=unset$' "CLAUDECODE is not passed to the tool"

# -- a stream CLI that never exits after its final event
printf '#!/bin/bash\ncat >/dev/null\nexec %s --marker %s replay %s hang\n' \
    "$FAKE" "$M" "$srcdir/tests/streams/claude-success.jsonl" \
    >"$T_TMP/claude"
chmod +x "$T_TMP/claude"
printf '{"tools":{"claude":{"path":"%s"}}}\n' "$T_TMP/claude" \
    >"$T_TMP/cfg2.json"
t0=$(t_now_ms)
agent "$R" develop --tool claude --config "$T_TMP/cfg2.json" \
    --state-dir "$S" "go"
rc=$?
el=$(( $(t_now_ms) - t0 ))
echo "# timing: final event to kill took $el ms (grace 2000 ms)"
is "$rc" 0 "never-exiting CLI: exit 0 (the final event decides)"
is "$(jget "$R" '[d["agent_status"], d["status"], d["signal"]]')" \
    '["completed","success",15]' \
    "never-exiting CLI: completed, success, the group got SIGTERM"
ok $(( el < 1900 )) "never-exiting CLI: not killed before 2 s after the final event ($el ms)"
t_within "$el" 5000 "never-exiting CLI: killed about 2 s after the final event ($el ms)"
t_wait_gone "$M" 2000
ok $? "never-exiting CLI: nothing left"

t_done
