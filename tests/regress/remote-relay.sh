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

# -- a lost worker is a failed step: the loop goes on by the role's retry
# policy (develop's launcher killed -9 mid-task, the retry completes)
R=$T_TMP/retry
t_marker MR retry
t_run_config "$R" "exec '$FAKE' result success init" \
    "if [ ! -e '$R/once' ]; then touch '$R/once'; exec '$FAKE' --marker $MR hang; fi; exec '$FAKE' result success dev" \
    "exec '$FAKE' result success dbg" "exec '$FAKE' result success tests" \
    "exec '$FAKE' result success bye" \
    '{"retry": {"attempts": 2, "initial_interval_ms": 100}}'
python3 - "$R/.loop/config.json" "$LAUNCH" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1])); c["launcher"] = sys.argv[2].split()
json.dump(c, open(sys.argv[1], "w"))
PYEOF
t_loop_start "$R" retry-1 -n 5 --json "Survive a lost host"
t_wait_count "$MR" 1 "$(t_ms 20000)"
ok $? "retry: the first develop runs behind the launcher"
lp=$(pgrep -P "$PID" -f relay.py | head -n 1)
kill -KILL "$lp"
t_wait_pid "$PID" "$(t_ms 60000)"
is "$T_RC" 0 "retry: the loop completed (exit 0)" ||
    echo "# $(jget "$R/.loop/retry-1.json" 'd["failure_reason"]')"
is "$(grep -c '"event":"step_retry"' "$R/.loop/retry-1.history.jsonl")" 1 \
    "retry: one step_retry in the history"
like "$(jget "$R/.loop/retry-1.json" '[e["message"] for e in d["skill_state"]["errors"] if e["action"] == "develop"]')" \
    'worker lost' "retry: the lost develop is in skill_state.errors"
is "$(jget "$R/.loop/retry-1.json" '[t["status"] for t in d["skill_state"]["develop"]["tasks"]]')" \
    '["failed","completed"]' "retry: its task failed, the retry's completed"
t_wait_gone "$MR" "$(t_ms 10000)"
ok $? "retry: nothing left on the far side"

# -- no shared disk: the far side runs in a mount namespace where the
# project's .loop (the state and the logs) is an empty tmpfs.  The
# worker logs on its own disk; the result, the usage and the TAP of a
# validate run reach the state file through the channel alone.
R=$T_TMP/apart
mkdir -p "$R/.loop"
if unshare -m --propagation private true 2>/dev/null; then
	TAP="printf '1..3\nok 1 - adds\nnot ok 2 - subtracts\nok 3 - multiplies\n'; exit 1"
	t_run_config "$R" "exec '$FAKE' result success init" \
	    "exec '$FAKE' result success dev" "exec '$FAKE' result success dbg" \
	    "$TAP" "exec '$FAKE' result success bye"
	python3 - "$R/.loop/config.json" "$srcdir/tests/regress/workers/relay.py" "$ML" <<'PYEOF'
import json, sys
p, relay, mark = sys.argv[1:4]
c = json.load(open(p))
c["launcher"] = ["unshare", "-m", "--propagation", "private", "sh", "-c",
    'mount -t tmpfs tmpfs "$0/.loop" && exec "$@"', p.rsplit("/.loop", 1)[0],
    "python3", relay, mark]
json.dump(c, open(p, "w"), indent=1)
PYEOF
	t_loop_run "$R" apart-1 -m parallel -n 1 "Fix subtraction"
	is "$RC" 1 "apart: tests still failing at max_iterations (exit 1)"
	V='d["skill_state"]["validate"]'
	is "$(jget "$F" "[$V[\"pass_rate\"], $V[\"failed_tests\"], $V[\"passed\"]]")" \
	    '[66.7,["subtracts"],false]' "apart: the TAP came on the channel"
	$WRAP "$SUP" state -C "$R" validate apart-1 >/dev/null 2>&1
	ok $? "apart: the state file is valid"
	n=$(find "$R/.loop/apart-1.workers" -name 'agent-*.log' -size +0 | wc -l)
	is "$n" 0 "apart: no worker wrote into our state directory"
	like "$(jget "$R/.loop/apart-1.workers/validate.output.json" 'd["log_path"]')" \
	    '/ccw-worker-[0-9]+/apart-1-agent-[0-9]+-[0-9]+\.log$' \
	    "apart: the validate log is on the far side, where STARTED said"
else
	t_skip "apart: unshare -m is not permitted here (needs root)"
fi

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

# -- batch: --launcher for every item, an item's own launcher first; a
# loop item may not name one
B=$T_TMP/batch
mkdir -p "$B/seen"
t_run_config "$B" "exec '$FAKE' result success init" \
    "$(remote_seen "$B" loop-develop); exec '$FAKE' result success dev" \
    "exec '$FAKE' result success dbg" "exec '$FAKE' result success tests" \
    "exec '$FAKE' result success bye"
python3 - "$B/items.jsonl" "$B/seen" "$FAKE" "$LAUNCH" <<'PYEOF'
import json, sys
out, seen, fake, launch = sys.argv[1:5]
with open(out, "w") as f:
    f.write(json.dumps({"title": "a loop", "max_iterations": 3}) + "\n")
    f.write(json.dumps({"title": "its own", "kind": "worker", "role": "debug",
        "launcher": launch.split() + ["env", "CCW_RELAY=own"]}) + "\n")
PYEOF
python3 - "$B/.loop/config.json" "$B/seen" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["roles"]["debug"]["command"] = 'touch %s/debug-"${CCW_RELAY:-}"; exec true' % sys.argv[2]
json.dump(c, open(sys.argv[1], "w"))
PYEOF
timeout -k 2 120 $WRAP "$SUP" batch "$B/items.jsonl" -C "$B" --jobs 2 \
    --launcher "$LAUNCH" >"$B.out" 2>"$B.err"
is "$?" 0 "batch --launcher: exit 0"
is "$(cat "$B/seen/loop-develop" 2>/dev/null)" yes "batch --launcher: a loop item's workers ran behind it"
[ -e "$B/seen/debug-own" ]
ok $? "batch: a worker item's own launcher ran it"
printf '{"title": "x", "launcher": "ssh h"}\n' >"$B/bad.jsonl"
out=$($WRAP "$SUP" batch "$B/bad.jsonl" -C "$B" 2>&1)
is "$?" 2 "batch: a loop item's launcher refused (exit 2)"
like "$out" 'launcher needs "kind": "worker"' "batch: said why"
out=$($WRAP "$SUP" batch "$B/items.jsonl" -C "$B" --remote-worker /x 2>&1)
is "$?" 2 "batch: --remote-worker alone refused"

# -- a launcher whose stdout carries a banner before the worker's frames,
# and one that never starts a worker (start_ms)
python3 - "$B/.loop/config.json" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["roles"]["develop"]["launcher"] = ["sh", "-c", 'echo "Welcome to build2"; exec "$@"', "sh"]
c["roles"]["debug"]["launcher"] = {"argv": ["sh", "-c", "exec sleep 30", "sh"], "start_ms": 500}
c["roles"]["develop"]["command"] = c["roles"]["debug"]["command"] = "true"
json.dump(c, open(sys.argv[1], "w"))
PYEOF
out=$($WRAP "$SUP" agent develop -C "$B" --json --state-dir "$T_TMP/banner" go)
is "$?" 1 "banner: errored (exit 1)"
like "$(jget - 'd["reason"]' <<<"$out")" \
    "^protocol violation: .*the launcher's stdout carried text before the worker's HELLO" \
    "banner: $(jget - 'd["reason"]' <<<"$out")"
t0=$(t_now_ms)
out=$($WRAP "$SUP" agent debug -C "$B" --json --state-dir "$T_TMP/never" go)
rc=$?
el=$(( $(t_now_ms) - t0 ))
is "$rc" 1 "no HELLO: errored (exit 1)"
like "$(jget - 'd["reason"]' <<<"$out")" \
    "^launcher 'sh -c exec sleep 30 sh': no worker said HELLO within [0-9]+ ms" \
    "no HELLO: $(jget - 'd["reason"]' <<<"$out")"
ok $(( el < 500 )) "no HELLO: not before start_ms ($el ms)"
t_within "$el" 1500 "no HELLO: given up after start_ms, not 30 s ($el ms)"

# -- a chatty far side: the launcher's stderr file is trimmed on every
# heartbeat (8 MB written, at most 256 KiB + 4 KiB kept), and the last
# line of 8 MB still names why a launcher failed
t_marker MN noise
python3 - "$B/.loop/config.json" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
noise = "yes 'far side noise' | head -c 8000000 >&2; echo >&2; "
c["roles"]["develop"]["launcher"] = {"argv": ["sh", "-c", noise + 'exec "$@"', "sh"], "ping_ms": 100}
c["roles"]["debug"]["launcher"] = ["sh", "-c", noise + "echo 'ssh: the last word' >&2; exit 255", "sh"]
json.dump(c, open(sys.argv[1], "w"))
PYEOF
$WRAP "$SUP" agent develop -C "$B" --json --state-dir "$T_TMP/noise" \
    --command "exec '$FAKE' --marker $MN hang" go >/dev/null 2>&1 &
AP=$!
t_wait_count "$MN" 2 "$(t_ms 20000)"
ok $? "noise: the far tool runs"
# the supervisor's unlinked stderr file of the launcher, polled until trimmed
end=$(t_until 5000) big=none
while [ "$(t_now_ms)" -lt "$end" ]; do
	big=0
	for f in /proc/$AP/fd/*; do
		case $(readlink "$f" 2>/dev/null) in
		*"(deleted)") s=$(stat -L -c %s "$f" 2>/dev/null || echo 0)
			[ "$s" -gt "$big" ] && big=$s ;;
		esac
	done
	[ "$big" -gt 0 ] && [ "$big" -le $((256 * 1024 + 4096)) ] && break
	sleep 0.1
done
ok $(( big == 0 || big > 256 * 1024 + 4096 )) "noise: the stderr file is trimmed ($big bytes of 8000000)"
kill -TERM "$AP"
t_wait_pid "$AP" "$(t_ms 10000)"
is "$T_RC" 4 "noise: SIGTERM, exit 4"
t_wait_gone "$MN" "$(t_ms 10000)"
ok $? "noise: nothing left"
out=$($WRAP "$SUP" agent debug -C "$B" --json --state-dir "$T_TMP/noise2" go)
like "$(jget - 'd["reason"]' <<<"$out")" 'exited with status 255 before the worker said HELLO: ssh: the last word$' \
    "noise: the last of 8 MB names why ($(jget - 'd["reason"]' <<<"$out" | tail -c 60))"

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
