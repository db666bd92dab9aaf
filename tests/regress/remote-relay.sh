#!/bin/bash
# remote-relay.sh: workers behind a launcher, where the launcher is
# relay.py: it behaves as ssh does (pipes, the far side in a session of
# its own, killed it leaves the far worker with EOF only), so these cases
# run on any machine; remote-ssh.sh and remote-slurm.sh run them through
# the real engines.  Also: --launcher's and the configuration's errors.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/remote-cases.sh"
t_watchdog 240
t_valgrind_worker
t_slack

t_marker ML relay
LAUNCH="python3 $srcdir/tests/regress/workers/relay.py $ML env CCW_RELAY=yes"
LAUNCH_BAD='false'
REMOTE_VAR=CCW_RELAY
remote_cases relay

# -- the command line: the reason names the launcher and what it said
out=$($WRAP "$SUP" agent develop --tool bash --command true --json \
    --state-dir "$T_TMP/bad" --launcher "sh -c \"exit 3\"" go 2>&1)
is "$?" 2 "--launcher with quotes: usage error (exit 2)"
like "$out" 'quotes and backslashes are not understood' "--launcher with quotes: said why"
out=$($WRAP "$SUP" agent develop --tool bash --command true --json \
    --state-dir "$T_TMP/bad" --launcher no-such-launcher-here go)
is "$?" 1 "missing launcher: exit 1"
like "$(jget - 'd["reason"]' <<<"$out")" \
    "cannot execute launcher 'no-such-launcher-here': No such file" \
    "missing launcher: named"
out=$($WRAP "$SUP" agent develop --tool bash --command true --json \
    --state-dir "$T_TMP/bad" --remote-worker /x/ccw-worker go 2>&1)
is "$?" 2 "--remote-worker alone: usage error"
like "$out" 'remote-worker needs --launcher' "--remote-worker alone: said why"
out=$($WRAP "$SUP" agent develop --tool bash --command true --json \
    --state-dir "$T_TMP/bad" --launcher "$LAUNCH" \
    --remote-worker /nonexistent/ccw-worker go)
is "$?" 1 "a remote worker not there: exit 1"
like "$(jget - 'd["reason"]' <<<"$out")" \
    "^launcher '.*' exited with status 127 before the worker said HELLO: .*/nonexistent/ccw-worker" \
    "a remote worker not there: $(jget - 'd["reason"]' <<<"$out")"
out=$($WRAP "$SUP" agent develop --tool bash --json --launcher "$LAUNCH" \
    --state-dir "$T_TMP/ok" --command "exec '$FAKE' result success hi" go)
is "$?" 0 "agent --launcher: completed"
like "$(jget - 'd["launcher"]' <<<"$out")" 'relay.py' "agent --launcher: the report names it"

# -- the configuration
B=$T_TMP/cfg
t_run_config "$B" true true true true true
for bad in '"launcher": 3' '"launcher": {"argv": "x", "color": 1}' \
    '"launcher": {"argv": ["x", ""]}' '"launcher": {"argv": "x", "ping_ms": 0}' \
    '"launcher": "ssh \"a b\""' '"launcher": {"argv": "x", "remote_worker": "a;b"}'; do
	python3 - "$B/.loop/config.json" "{$bad}" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1])); c.pop("launcher", None)
c.update(json.loads(sys.argv[2])); json.dump(c, open(sys.argv[1], "w"))
PYEOF
	out=$($WRAP "$SUP" agent develop -C "$B" --json go 2>&1)
	rc=$?
	is "$rc" 2 "config {$bad}: refused (exit 2)"
	like "$out" 'launcher' "config {$bad}: $(head -c 150 <<<"$out")"
done
# a role's own launcher beats the top level's; "local" is none
python3 - "$B/.loop/config.json" "$LAUNCH" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1])); c["launcher"] = "no-such-launcher-here"
c["roles"]["develop"]["launcher"] = "local"
c["roles"]["debug"]["launcher"] = sys.argv[2].split()
json.dump(c, open(sys.argv[1], "w"))
PYEOF
out=$($WRAP "$SUP" agent develop -C "$B" --json go)
is "$(jget - '[d["agent_status"], d["launcher"]]' <<<"$out")" '["completed",null]' \
    "config: a role's \"local\" beats the top level's launcher"
out=$($WRAP "$SUP" agent debug -C "$B" --json go)
like "$(jget - '[d["agent_status"], d["launcher"]]' <<<"$out")" '"completed","python3 .*relay.py' \
    "config: a role's launcher beats the top level's"
out=$($WRAP "$SUP" agent validate -C "$B" --json go)
like "$(jget - 'd["reason"]' <<<"$out")" "no-such-launcher-here" \
    "config: the top level's for the others"
t_done
