#!/bin/bash
# agent-contain.sh: the supervisor signals only what it can prove is its
# own, and a worker's death ends its agent.  A forged tool_pid naming
# another process group (or 1) is never signalled; a SIGSTOPped worker is
# nudged and killed on the role's own deadlines; a worker that dies while
# a descendant holds its channel still completes its agent.
. "$(dirname "$0")/lib.sh"
t_watchdog 60
t_slack
t_marker MS contain-sentinel
t_marker MW contain-worker
t_marker MT contain-tool
S=$T_TMP/state
t_valgrind_worker
mkdir -p "$T_TMP/workers"
cp "$srcdir"/tests/regress/workers/forge.py "$T_TMP/workers/"
chmod +x "$T_TMP/workers/forge.py"
export CCW_FAKE_AGENT=$FAKE CCW_FORGE_MARKER=$MW

# strace_ok: strace can trace this supervisor and make its kill(2) calls
# fail (so a kill(-1) the code under test might send harms no one).
strace_ok() {
	[ -z "$WRAP" ] && command -v strace >/dev/null 2>&1 &&
	    ! strace -qq -o /dev/null -e trace=kill -e inject=kill:error=EPERM \
	    /bin/kill -0 $$ 2>/dev/null
}

# forged PID: an agent whose worker's STARTED names PID as its tool, then
# breaks the protocol (so the supervisor kills "the tool").  With strace
# the supervisor's kill calls are recorded in $T_TMP/strace-PID and made to
# fail.
forged() {
	local pre=
	strace_ok && pre="strace -qq -o $T_TMP/strace-$1 -e trace=kill,wait4 \
-e inject=kill:error=EPERM"
	CCW_FORGE=tool-pid CCW_FORGE_TOOL_PID=$1 \
	    CCW_WORKER=$T_TMP/workers/forge.py timeout -k 2 20 \
	    $pre $WRAP "$SUP" agent --json develop --tool bash --command true \
	    --state-dir "$S" --timeout-ms 20000 "go" >"$T_TMP/forged-$1" \
	    2>"$T_TMP/forged-$1.err"
}

# no_kill_after_reap FILE: in a strace log, no kill(2) names a pid (or its
# group) that an earlier wait4 had already reaped; prints the offenders.
no_kill_after_reap() {
	awk '/^wait4\(/ && $NF ~ /^[0-9]+$/ { reaped[$NF] = 1 }
	    /^kill\(/ { p = $1; sub(/^kill\(-?/, "", p); sub(/,.*/, "", p)
	    if (p in reaped) { print; bad = 1 } }
	    END { exit bad }' "$1"
}

# -- a forged tool_pid of another process group: that group lives
setsid "$FAKE" --marker "$MS" hang &
SENT=$!
t_wait_count "$MS" 1 5000
pgid=$(awk '{ sub(/.*\) /, ""); print $3 }' "/proc/$SENT/stat")
is "$pgid" "$SENT" "sentinel: leads its own process group"
forged "$SENT"
is "$?" 1 "forged group: the agent ends (exit 1)"
like "$(jget "$T_TMP/forged-$SENT" 'd["reason"]')" 'protocol violation' \
    "forged group: errored for the protocol violation"
kill -0 "$SENT" 2>/dev/null
ok $? "forged group: the sentinel group was not killed"
if [ -e "$T_TMP/strace-$SENT" ]; then
	grep -q "kill(-$SENT," "$T_TMP/strace-$SENT"
	ok $(( $? == 0 )) "forged group: no kill(-$SENT) was even tried"
	no_kill_after_reap "$T_TMP/strace-$SENT"
	ok $? "forged group: no pid is signalled after it was reaped"
else
	t_skip "forged group: strace unavailable"
fi
t_wait_gone "$MW" 3000
ok $? "forged group: the forging worker is gone"

# -- tool_pid 1: no kill(-1).  Only under strace, whose injected EPERM
# makes a kill(-1) by faulty code harmless.
if strace_ok; then
	forged 1
	is "$?" 1 "pid 1: the supervisor survives, the agent ends (exit 1)"
	grep -E -q 'kill\(-1,' "$T_TMP/strace-1"
	ok $(( $? == 0 )) "pid 1: no kill(-1) was tried"
	grep -q 'kill(1,' "$T_TMP/strace-1"
	ok $(( $? == 0 )) "pid 1: no kill(1) either"
	kill -0 "$SENT" 2>/dev/null
	ok $? "pid 1: the sentinel lives"
	t_wait_gone "$MW" 3000
	ok $? "pid 1: the forging worker is gone"
else
	t_skip "pid 1: needs strace with fault injection (not under a wrapper)"
fi
kill -KILL "$SENT" 2>/dev/null
wait "$SENT" 2>/dev/null

# -- a SIGSTOPped worker: timeout TO + nudge 300 (counted from the nudge
# being sent, not from an acknowledgement that cannot come) + grace 200
# and the close's own second: about TO + 1.5 s, not TO + 11.5.  TO (3 s,
# 8 s when the sanitizers or a wrapper slow the start) is long enough for
# the worker to be stopped before its nudge on a loaded machine; when it
# was not, the worker answered the nudge itself and the bounds say nothing.
TO=3000
{ [ "${CCW_SANITIZERS:-no}" = yes ] || [ -n "$WRAP" ]; } && TO=8000
t0=$(t_now_ms)
$WRAP "$SUP" agent --json develop --tool bash --state-dir "$S" \
    --command "exec '$FAKE' --marker $MT hang" --timeout-ms $TO \
    --nudge-ms 300 --grace-ms 200 "go" >"$T_TMP/stopped" \
    2>"$T_TMP/stopped.err" &
AP=$!
# (the marker is in the supervisor's own argv: wait for its worker, then
# for the worker's tool; stopping a worker not yet spawned stopped nothing)
W=$(t_wait_child "$AP" 8000) && t_wait_tool "$W" "$MT" 8000 >/dev/null
ok $? "stopped: the worker and its tool run"
kill -STOP "$W"
echo "# stopped: worker $W ($(tr '\0' ' ' <"/proc/$W/cmdline" 2>/dev/null)) of $AP: $(sed -n 's/^State:[[:space:]]*//p' "/proc/$W/status" 2>/dev/null)"
up=$(( $(t_now_ms) - t0 ))
t_wait_pid "$AP" 30000
el=$(( $(t_now_ms) - t0 ))
echo "# timing: stopped worker: agent ended after $el ms (stopped at $up ms, timeout $TO)"
is "$T_RC" 5 "stopped: timed out (exit 5)"
t_within "$el" $((TO + 1500 + up)) \
    "stopped: ends within timeout + 1.5 s + slack ($el ms)"
if [ "$up" -lt $((TO - 500)) ]; then
	ok $(( el < TO + 1500 )) \
	    "stopped: not before timeout + nudge + grace + 1 s" ||
	    sed 's/^/# stderr: /' "$T_TMP/stopped.err"
else
	t_skip "stopped: the worker was stopped after its timeout ($up ms)"
fi
if [ "$up" -lt $((TO - 500)) ] && [ -z "$WRAP" ]; then
	is "$(jget "$T_TMP/stopped" '[d["timed_out"], d["nudged"]]')" \
	    '[true,false]' "stopped: timed out, the nudge never acknowledged"
else
	# (under valgrind the stopped worker's state is valgrind's to report)
	t_skip "stopped: the worker started too late to be stopped before its nudge, or a wrapper ($up ms)"
fi
t_wait_gone "$MT" 3000
ok $? "stopped: the tool is gone"

# -- the worker dies while a descendant holds its channel: the agent still
# completes, wait and close answer, control exits.  Under the sweep: in
# a cgroup (contain-cgroup.sh) the descendant dies with the worker.
CCW_CONTAINMENT=sweep CCW_FORGE=orphan-fd3 CCW_WORKER=$T_TMP/workers/forge.py \
    ctl_start "$T_TMP/ctl" --state-dir "$S" --loop-id orphan
ctl_send '{"id":1,"verb":"spawn","role":"develop","message":"go","tool":"bash","command":"true","model":null}'
a=$(ctl_recv 1 | jget - 'd["agent_id"]')
like "$a" '^agent-[0-9]+$' "orphan: spawned"
t_wait_count "$MW" 1 5000
ok $? "orphan: the descendant holding fd 3 runs"
t1=$(t_now_ms)
ctl_send "{\"id\":2,\"verb\":\"wait\",\"targets\":[\"$a\"],\"timeout_ms\":8000}"
r=$(ctl_recv 2 12000)
el=$(( $(t_now_ms) - t1 ))
echo "# timing: orphan: wait answered after $el ms"
is "$(jget - '[d["timed_out"], d["status"]["'"$a"'"]]' <<<"$r")" \
    '[false,"completed"]' "orphan: wait answers completed, not timed out"
ctl_send "{\"id\":3,\"verb\":\"result\",\"target\":\"$a\"}"
is "$(ctl_recv 3 | jget - 'd["result"]["summary"]')" forged \
    "orphan: with the result the worker sent before dying"
ctl_send "{\"id\":4,\"verb\":\"close\",\"target\":\"$a\"}"
r=$(ctl_recv 4 5000)
is "$(jget - 'd["ok"]' <<<"$r")" true "orphan: close answers"
ctl_stop 5000
is "$T_RC" 0 "orphan: control exits 0 on EOF"
t_wait_gone "$MW" 3000
ok $? "orphan: the descendant is gone with the supervisor"

t_done
