#!/bin/bash
# agent-followup.sh: send_input to an agent whose turn has ended (issue 9
# item 4): a new worker for the same agent id resumes the tool's session
# with the message, in a log of its own; wait waits for the new turn; the
# result accumulates over the turns; an agent without a session id gets a
# clear error; a turn log that exists already (a file or a link) makes the
# follow-up fail, never appended to or parsed.
. "$(dirname "$0")/lib.sh"
t_watchdog 60
t_valgrind_worker
S=$T_TMP/state

# A fake claude: each run records its argv and stdin, then reports a
# session, a result block naming one file, tokens and a cost.
t_fake_tool "$T_TMP/claude"
cat >>"$T_TMP/claude" <<'FAKEEOF'
cat >"$dir/stdin.$n"
files='["a.c"]'; [ $n -gt 1 ] && files='["b.c", "a.c"]'
printf '{"type":"system","subtype":"init","session_id":"sess-1"}\n'
printf '{"type":"result","subtype":"success","is_error":false,"session_id":"sess-1","total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":5},"result":"WORKER_RESULT:\\n- status: success\\n- summary: turn %s\\n- files_changed: %s\\n"}\n' \
    "$n" "$(printf '%s' "$files" | sed 's/"/\\"/g')"
FAKEEOF
chmod +x "$T_TMP/claude"
printf '{"tools":{"claude":{"path":"%s"}}}\n' "$T_TMP/claude" >"$T_TMP/cfg.json"

ctl_start "$T_TMP/ctl" --state-dir "$S" --loop-id fu --config "$T_TMP/cfg.json"
ctl_send '{"id":1,"verb":"spawn","role":"develop","tool":"claude","message":"first"}'
ctl_recv 1 >/dev/null
ctl_send '{"id":2,"verb":"wait","targets":["agent-1"],"timeout_ms":20000}'
r=$(ctl_recv 2 25000)
is "$(jget - 'd["status"]["agent-1"]' <<<"$r")" completed "first turn: completed"
ctl_send '{"id":3,"verb":"send_input","target":"agent-1","message":"more please"}'
r=$(ctl_recv 3 5000)
is "$(jget - '[d["ok"], d.get("error"), d.get("submission_id", 0) > 0]' <<<"$r")" \
    '[true,null,true]' "follow-up after the turn ended: accepted, a submission id"
ctl_send '{"id":4,"verb":"wait","targets":["agent-1"],"timeout_ms":20000}'
r=$(ctl_recv 4 25000)
is "$(jget - '[d["status"]["agent-1"], d["timed_out"]]' <<<"$r")" \
    '["completed",false]' "wait waits for the new turn"
ctl_send '{"id":5,"verb":"result","target":"agent-1"}'
r=$(ctl_recv 5)
is "$(jget - '[d["result"][k] for k in ("agent_id", "summary", "turns", "session_id")]' <<<"$r")" \
    '["agent-1","turn 2",2,"sess-1"]' \
    "second turn: same agent id, its summary, two turns, the session"
is "$(cat "$T_TMP/stdin.2" 2>/dev/null)" "more please" \
    "second turn: the message is the new worker's prompt"
is "$(jget - 'sorted(d["result"]["files_claimed"])' <<<"$r")" '["a.c","b.c"]' \
    "accumulated: files_claimed of both turns, once each"
is "$(jget - '[d["result"]["usage"][k] for k in ("input_tokens", "output_tokens")] + [round(d["result"]["usage"]["cost_usd"], 4)]' <<<"$r")" \
    '[20,10,0.02]' "accumulated: tokens and cost summed"
like "$(jget - 'd["result"]["log_path"]' <<<"$r")" '/agent-1\.turn2\.log$' \
    "second turn: a log of its own"
ok $([ -s "$S/fu.workers/agent-1.log" ] && [ -s "$S/fu.workers/agent-1.turn2.log" ]; echo $?) \
    "both turns' logs kept"
is "$(jget - 'd["result"]["pid"] != None' <<<"$r")" true "the latest turn's pid"
if grep -qx -e sess-1 "$T_TMP/argv.2" 2>/dev/null; then
	echo "# the worker resumed the session (argv names sess-1)"
else
	echo "# note: this worker does not map options.resume_session yet"
fi

# -- a turn's log that already exists (an older driver's, or a link put
# there) is never appended to nor parsed: the follow-up is refused, the
# file and a link's target are left as they were (issue 10 item 7)
L3=$S/fu.workers/agent-1.turn3.log
printf 'WORKER_RESULT:\n- status: failed\n- summary: stale turn\n' >"$L3"
old=$(cat "$L3")
ctl_send '{"id":20,"verb":"send_input","target":"agent-1","message":"third"}'
r=$(ctl_recv 20 5000)
is "$(jget - 'd["ok"]' <<<"$r")" false "a turn log that exists: the follow-up is refused"
like "$(jget - 'd["error"]' <<<"$r")" 'agent-1\.turn3\.log already exists' \
    "refused, naming the log"
is "$(cat "$L3")" "$old" "the existing log is not appended to"
rm -f "$L3"
printf 'not a log\n' >"$T_TMP/target"
ln -s "$T_TMP/target" "$L3"
ctl_send '{"id":21,"verb":"send_input","target":"agent-1","message":"third"}'
r=$(ctl_recv 21 5000)
is "$(jget - 'd["ok"]' <<<"$r")" false "a turn log that is a link: refused"
is "$(cat "$T_TMP/target")" "not a log" "the link's target is untouched"
ok $([ -L "$L3" ]; echo $?) "the link is left as it was"
ctl_send '{"id":22,"verb":"result","target":"agent-1"}'
r=$(ctl_recv 22)
is "$(jget - '[d["result"]["summary"], d["result"]["turns"]]' <<<"$r")" \
    '["turn 2",2]' "the refused turns changed nothing: still turn 2's result"
rm -f "$L3"
ctl_send '{"id":23,"verb":"send_input","target":"agent-1","message":"third"}'
r=$(ctl_recv 23 5000)
is "$(jget - 'd["ok"]' <<<"$r")" true "the log gone: the follow-up is accepted"
ctl_send '{"id":24,"verb":"wait","targets":["agent-1"],"timeout_ms":20000}'
ctl_recv 24 25000 >/dev/null
ctl_send '{"id":25,"verb":"result","target":"agent-1"}'
r=$(ctl_recv 25)
is "$(jget - '[d["result"]["summary"], d["result"]["turns"]]' <<<"$r")" \
    '["turn 3",3]' "third turn: its own result"
ok $(grep -q 'stale turn' "$L3"; [ $? = 1 ] && [ -s "$L3" ]; echo $?) \
    "third turn: a fresh log, nothing of the old one in it"

# -- bash reports no session id: a clear error
ctl_send "{\"id\":6,\"verb\":\"spawn\",\"role\":\"develop\",\"tool\":\"bash\",\
\"command\":\"exec '$FAKE' result success\"}"
ctl_recv 6 >/dev/null
ctl_send '{"id":7,"verb":"wait","targets":["agent-2"],"timeout_ms":20000}'
ctl_recv 7 25000 >/dev/null
ctl_send '{"id":8,"verb":"send_input","target":"agent-2","message":"again"}'
r=$(ctl_recv 8 5000)
is "$(jget - 'd["ok"]' <<<"$r")" false "no session: refused"
like "$(jget - 'd["error"]' <<<"$r")" "no session id" "no session: saying why"
ctl_stop 15000
is "$T_RC" 0 "control: exit 0"
t_done
