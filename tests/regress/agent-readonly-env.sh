#!/bin/bash
# agent-readonly-env.sh: a read-only opencode role gets its plan agent's
# permissions in OPENCODE_CONFIG_CONTENT (issue 23: plan's bash ran
# `echo X >> file`), through the worker to the tool's process, on the
# first turn and on a resumed one, merged into a content the user set;
# a writing role gets none.  A fake opencode records its environment;
# tests/e2e case readonly runs the real one.
. "$(dirname "$0")/lib.sh"
t_watchdog 60
t_valgrind_worker
S=$T_TMP/state

# The fake: argv and OPENCODE_CONFIG_CONTENT per run, then one final step.
t_fake_tool "$T_TMP/opencode"
cat >>"$T_TMP/opencode" <<'FAKEEOF'
printf '%s' "${OPENCODE_CONFIG_CONTENT-unset}" >"$dir/env.$n"
cat >/dev/null
printf '{"type":"step_start","sessionID":"ses_ro1"}\n'
printf '{"type":"text","sessionID":"ses_ro1","part":{"text":"WORKER_RESULT:\\n- status: success\\n- summary: turn %s\\n- files_changed: []\\n"}}\n' "$n"
printf '{"type":"step_finish","sessionID":"ses_ro1","part":{"reason":"stop","tokens":{"input":1,"output":1}}}\n'
FAKEEOF
chmod +x "$T_TMP/opencode"
printf '{"tools":{"opencode":{"path":"%s"}}}\n' "$T_TMP/opencode" \
    >"$T_TMP/cfg.json"

# perm N: the plan agent's permissions in run N's content, as JSON.
perm() {
	jget "$T_TMP/env.$1" 'd["agent"]["plan"]["permission"]'
}

R=$T_TMP/r.json
OPENCODE_CONFIG_CONTENT='{"model":"mock/x","agent":{"plan":{"permission":{"bash":"allow"}}}}' \
    agent "$R" init --tool opencode --config "$T_TMP/cfg.json" \
    --state-dir "$S" "look only"
is "$(jget "$R" '[d["permission"], d["status"]]')" '["read-only","success"]' \
    "init runs read-only and succeeds"
is "$(grep -cx -e --agent -e plan "$T_TMP/argv.1")" 2 "init: --agent plan"
is "$(jget "$T_TMP/env.1" 'd.get("model")')" mock/x \
    "init: the user's content is kept"
is "$(perm 1 | jget - '[list(d)[0], d["*"], d["bash"], d["edit"], d["task"], d["grep"]]')" \
    '["*","deny","deny","deny","deny","allow"]' \
    "init: every tool denied first, the write tools by name, grep allowed"

agent "$R" develop --tool opencode --config "$T_TMP/cfg.json" \
    --state-dir "$S" "change it"
is "$(jget "$R" 'd["permission"]')" workspace-write "develop runs workspace-write"
is "$(cat "$T_TMP/env.2")" unset "develop: no OPENCODE_CONFIG_CONTENT"

# A follow-up of the read-only role is a new run: the same permissions.
ctl_start "$T_TMP/ctl" --state-dir "$S" --loop-id ro --config "$T_TMP/cfg.json"
ctl_send '{"id":1,"verb":"spawn","role":"init","tool":"opencode","message":"first"}'
ctl_recv 1 >/dev/null
ctl_send '{"id":2,"verb":"wait","targets":["agent-1"],"timeout_ms":20000}'
ctl_recv 2 25000 >/dev/null
ctl_send '{"id":3,"verb":"send_input","target":"agent-1","message":"more"}'
ctl_recv 3 5000 >/dev/null
ctl_send '{"id":4,"verb":"wait","targets":["agent-1"],"timeout_ms":20000}'
ctl_recv 4 25000 >/dev/null
grep -qx -e ses_ro1 "$T_TMP/argv.4" 2>/dev/null
ok $? "follow-up: opencode resumed its session"
is "$(perm 4 | jget - 'd["bash"]')" deny "follow-up: bash still denied"
ctl_stop 10000
t_done
