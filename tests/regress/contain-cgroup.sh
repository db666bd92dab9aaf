#!/bin/bash
# contain-cgroup.sh: containment = cgroup (issue 26).  A worker and the
# tree its bash tool starts (a child, a setsid grandchild, a stopped
# grandchild in its own session) live in the worker's own cgroup v2
# while it runs; when the worker is SIGKILLed, under serve and under run,
# nothing of the tree is left within 2 s and the cgroup directory is gone.
# --containment sweep makes no cgroup.  /metrics says the mode.  SKIP
# (77) without a writable cgroup v2 hierarchy (root, or a delegation).
. "$(dirname "$0")/lib.sh"
. "$srcdir/tests/regress/serve-lib.sh"
t_watchdog 60
t_slack

# the v2 hierarchy (from mountinfo, never assumed) and our cgroup in it
V2=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") {
    if ($(i + 1) == "cgroup2") { print $5; exit } ; break } }' \
    /proc/self/mountinfo)
OWN=$(sed -n 's/^0:://p' /proc/self/cgroup)
[ "$OWN" = / ] && OWN=
if [ -z "$V2" ] || ! mkdir "$V2$OWN/ccw-probe-$$" 2>/dev/null; then
	echo "1..0 # SKIP no writable cgroup v2 hierarchy"
	exit 77
fi
rmdir "$V2$OWN/ccw-probe-$$"

t_marker M contain-tree
# the tool: a child, a setsid grandchild, a stopped setsid grandchild,
# then the tool itself hangs: four processes holding the marker
TREE="'$FAKE' --marker $M hang & setsid '$FAKE' --marker $M hang & \
setsid bash -c 'kill -STOP \$\$; : $M' & exec '$FAKE' --marker $M hang"

# cgroup_of PID: its v2 cgroup path, relative to the mount
cgroup_of() {
	sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null
}

# killed WHAT PARENT: SIGKILL the worker of PARENT once its tree runs;
# the tree and the worker's cgroup must go within 2 s.
killed() {
	local what=$1 parent=$2 w cg t0 el end
	w=$(t_wait_tool "$parent" ccw-worker 8000)
	ok $? "$what: the worker runs"
	t_wait_count "$M" 4 8000
	ok $? "$what: the tool's tree runs (4 processes)" ||
	    pgrep -af "$M" | sed 's/^/#   /'
	cg=$(cgroup_of "$w")
	like "$cg" "/ccw-$parent/.*/agent-1\$" \
	    "$what: the worker lives in its own cgroup ($cg)"
	[ -n "$cg" ] && [ "$cg" != / ] && [ -d "$V2$cg" ]
	ok $? "$what: its cgroup directory exists while it runs"
	t0=$(t_now_ms)
	kill -KILL "$w"
	t_wait_gone "$M" 2000
	ok $? "$what: nothing of the tree is left"
	end=$(t_until 2000)
	while [ -n "$cg" ] && [ "$cg" != / ] && [ -d "$V2$cg" ] &&
	    [ "$(t_now_ms)" -lt "$end" ]; do
		sleep 0.02
	done
	el=$(( $(t_now_ms) - t0 ))
	[ -n "$cg" ] && [ "$cg" != / ] && [ ! -d "$V2$cg" ]
	ok $? "$what: the cgroup directory is gone"
	echo "# timing: $what: tree and cgroup gone $el ms after the SIGKILL"
	t_within "$el" $((2000 + SLACK)) "$what: within 2 s (+ slack)"
}

ROOT=$T_TMP/root
mkdir -p "$ROOT"

# -- serve: a worker of /api/agents
srv_start "$T_TMP/srv" -C "$ROOT"
ok $? "serve: listening"
req GET /metrics
like "$(jr 'd["body"]')" 'ccw_containment_mode\{mode="cgroup"\} 1' \
    "serve: /metrics says containment cgroup"
req POST /api/agents "$(python3 -c 'import json, sys
print(json.dumps({"role": "develop", "tool": "bash", "command": sys.argv[1]}))' "$TREE")"
is "$(jr 'd["status"]')" 200 "serve: agent spawned"
killed serve "$SRV_PID"
like "$(grep -o 'agent-1: [0-9]* process[a-z]* outlived' "$T_TMP/srv.err")" \
    'agent-1: [1-9][0-9]* process(es)? outlived' \
    "serve: what outlived the worker is counted (a warning)"
req GET /metrics
is "$(jr 'd["body"]' | awk '$1 == "ccw_processes_leaked_total" { print ($2 >= 1) }')" 1 \
    "serve: and in ccw_processes_leaked_total"
req GET /api/agents/agent-1
is "$(jr 'type(d["body"].get("result", d["body"]).get("resources", {}).get("cpu_s")).__name__')" float \
    "serve: the cgroup's CPU seconds are in the agent's resources"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 10000
is "$(ls -d "$V2$OWN"/ccw-"$SRV_PID" 2>/dev/null)" "" \
    "serve: its own cgroup directory went with it"

# -- run: the loop's init worker
t_run_config "$ROOT" "$TREE" true true true true
t_loop_start "$ROOT" cg1 "do it"
RUNPID=$PID
killed run "$RUNPID"
kill -TERM "$RUNPID" 2>/dev/null
t_wait_pid "$RUNPID" 10000

# -- a supervisor that died (SIGKILL) left its cgroup with a process in
# it: the next supervisor's first table kills it and removes the cgroup.
# (A supervisor of a test running beside this one may sweep it first,
# even before the process entered it: then it is set up again.)
t_marker MD contain-dead
for try in 1 2 3 4 5; do
	true & DEAD=$!
	wait "$DEAD"
	STALE=$V2$OWN/ccw-$DEAD/loop/agent-1
	setsid bash -c "mkdir -p '$STALE' && echo \$\$ > '$STALE/cgroup.procs' &&
	    exec '$FAKE' --marker $MD hang" 2>/dev/null &
	t_wait_count "$MD" 1 3000 && break
done
ok $? "stale: a process lives in a dead supervisor's cgroup"
$WRAP "$SUP" agent --json develop --tool bash --command true \
    --state-dir "$T_TMP/st" go >/dev/null 2>"$T_TMP/stale.err"
t_wait_gone "$MD" 2000
ok $? "stale: the next supervisor killed it"
[ ! -d "$V2$OWN/ccw-$DEAD" ]
ok $? "stale: and removed the dead supervisor's cgroup"

# -- containment forced to sweep: no cgroup of ours at all
srv_start "$T_TMP/srv2" -C "$ROOT" --containment sweep
ok $? "sweep: serve listening" || { t_done; exit; }
req GET /metrics
like "$(jr 'd["body"]')" 'ccw_containment_mode\{mode="sweep"\} 1' \
    "sweep: /metrics says containment sweep"
req POST /api/agents "{\"role\": \"develop\", \"tool\": \"bash\", \"command\": \"exec '$FAKE' --marker $M hang\"}"
w=$(t_wait_tool "$SRV_PID" ccw-worker 8000)
t_wait_count "$M" 1 8000
ok $? "sweep: the worker's tool runs"
is "$(cgroup_of "$w")" "$(cgroup_of "$SRV_PID")" \
    "sweep: the worker stays in serve's own cgroup"
is "$(ls -d "$V2$OWN"/ccw-"$SRV_PID" 2>/dev/null)" "" \
    "sweep: no cgroup directory is made"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 10000
t_wait_gone "$M" 3000
ok $? "sweep: the tool is gone with serve"

# -- containment=cgroup asked where none can be had (an unprivileged
# user under root's cgroup): the sweep, and why, said by doctor and by
# the supervisor as it starts
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	U=$T_TMP/unpriv
	mkdir -p "$U" && chmod 777 "$U" "$T_TMP"
	HOME=$U CCW_CONTAINMENT=cgroup setpriv --reuid=65534 --regid=65534 \
	    --clear-groups "$SUP" doctor -C "$U" >"$U/doctor.out" 2>&1
	like "$(grep '^containment' "$U/doctor.out")" \
	    'sweep +containment=cgroup asked but cannot make a cgroup' \
	    "forced, not had: doctor says sweep and why"
	HOME=$U CCW_CONTAINMENT=cgroup setpriv --reuid=65534 --regid=65534 \
	    --clear-groups $WRAP "$SUP" agent --json develop --tool bash \
	    --command true -C "$U" --state-dir "$U/st" go >/dev/null \
	    2>"$U/agent.err"
	like "$(cat "$U/agent.err")" \
	    'containment=cgroup asked but cannot make a cgroup.*the sweep contains workers' \
	    "forced, not had: the supervisor says so as it starts"
else
	t_skip "not root or no setpriv: the forced, not had case"
	t_skip "not root or no setpriv: the forced, not had case"
fi

t_done
