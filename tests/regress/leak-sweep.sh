#!/bin/bash
# leak-sweep.sh: issue 26's sweep (the fallback where no cgroup is had).
# A worker SIGKILLed with a tool tree (the tool, its child, a setsid
# grandchild) under serve, control, run and batch: nothing of the tree
# is left within 2 s, the leak is counted (serve's /metrics
# ccw_processes_leaked_total) and a warning names the agent (the
# processes_leaked event on /api/events; the log line elsewhere).  The
# worker's fork window: a worker killed between the tool's fork and its
# PR_SET_PDEATHSIG (widened by the CCW_TEST_TOOL_FORK_DELAY_MS seam)
# leaves no tool, even with the supervisor stopped.  close: a SIGSTOPped
# grandchild in a session of its own is ended with the rest.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 60
t_slack

# The supervisor's containment options, in ONE place: every start below
# passes them.  This test is the sweep's: a cgroup per worker (the
# default as root) would end the tree before the sweep sees it, so the
# sweep is forced (contain-cgroup.sh tests the cgroup mode).
CONTAIN=()
export CCW_CONTAINMENT=sweep

# tree NAME MARKER: $T_TMP/NAME.sh ROLE, a bash tool whose first develop
# run (of the test section: a loop runs develop again) leaves MARKER-tool
# (the tool itself), MARKER-child (its child) and MARKER-gc (the child's
# child, setsid).  With $SLOW set, every other role but init sleeps, so
# that a loop (run, batch) goes on after that worker's death and only
# the sweep at that death can end the tree in time, not the loop's end.
# Markers live in the script, never in a supervisor's argv.
tree() {
	cat >"$T_TMP/$1.sh" <<EOF
#!/bin/bash
if [ "\$1" = develop ] && mkdir "$T_TMP/$1.once" 2>/dev/null; then
	( setsid bash -c 'exec -a "\$0" sleep 300' "$2-gc" &
	  exec -a "$2-child" sleep 300 ) &
	exec -a "$2-tool" sleep 300
fi
[ -n "\${SLOW:-}" ] && [ "\$1" != init ] && exec sleep 300
printf 'WORKER_RESULT:\n- status: success\n- summary: done\n'
EOF
	chmod +x "$T_TMP/$1.sh"
}

# roles NAME ROOT: ROOT's configuration, each role running NAME.sh ROLE.
roles() {
	t_run_config "$2" "bash $T_TMP/$1.sh init" "bash $T_TMP/$1.sh develop" \
	    "bash $T_TMP/$1.sh debug" "bash $T_TMP/$1.sh validate" \
	    "bash $T_TMP/$1.sh complete" '{"grace_ms": 300}'
}

# kill_worker MARKER WHAT: wait for the three processes of the tree, then
# SIGKILL the worker (the parent of MARKER-tool); $WPID.
kill_worker() {
	local tool
	WPID=
	if ! t_wait_count "$1" 3 "$(t_ms 15000)"; then
		ok 1 "$2: the tool tree started"
		return 1
	fi
	tool=$(pgrep -f -- "$1-tool" | head -n 1)
	WPID=$(awk '{ sub(/.*\) /, ""); print $2 }' "/proc/$tool/stat")
	like "$(cat "/proc/$WPID/comm")" 'ccw-worker|vg-worker|memcheck' \
	    "$2: the tool's parent is its worker ($WPID)"
	kill -KILL "$WPID"
}

# gone MARKER WHAT [LOG HOST]: nothing of the tree left within 2 s (judged
# by t_within, with the slack a loaded machine needs; the wait itself is
# a deadline).  On failure: what is left, who holds it, and the worker
# (a zombie nobody reaped?), whether the HOST process still runs (one
# that died hands the tree to init, and nobody sweeps it), and the tail
# of its LOG.
gone() {
	local t0=$(t_now_ms) p
	t_wait_gone "$1" "$(t_ms 10000)"
	ok $? "$2: worker SIGKILLed: tool, child and setsid grandchild gone"
	t_within $(( $(t_now_ms) - t0 )) 2000 "$2: gone within 2 s"
	[ -z "$(t_marked "$1")" ] && return
	for p in $(t_marked "$1") $WPID; do
		echo "#   left: $p $(awk '{ sub(/.*\) /, ""); print "state", $1, "ppid", $2, "sid", $4 }' "/proc/$p/stat" 2>/dev/null)"
	done
	[ -n "${4:-}" ] && echo "#   host $4: $(kill -0 "$4" 2>/dev/null && echo alive || echo gone)"
	[ -n "${3:-}" ] && tail -n 8 "$3" | sed 's/^/#   log: /'
	return 0
}

# warned FILE WHAT: FILE has the sweep's warning naming an agent.
warned() {
	srv_wait_grep "$1" 'agent-[0-9]+: [0-9]+ process(es)? outlived the worker' 5000
	ok $? "$2: a warning names the agent ($(grep -o -m 1 'agent-[0-9]*: [0-9]* process[a-z]* outlived' "$1"))"
}

# section NAME: a TAP comment with how long the last section took.
T_SEC=$(t_now_ms)
section() {
	echo "# $1 ($(( $(t_now_ms) - T_SEC )) ms since the last)"
	T_SEC=$(t_now_ms)
}

# --- serve: /api/agents
t_marker MS leak-serve
tree srv "$MS"
R=$T_TMP/srv
mkdir -p "$R"
srv_start "$T_TMP/serve" -C "$R" "${CONTAIN[@]}"
ok $? "serve: started"
srv_events "$T_TMP/ev"
# a bystander: another agent's tree (its tool, a setsid child), alive
t_marker MO leak-other
cat >"$T_TMP/other.sh" <<EOF
#!/bin/bash
setsid bash -c 'exec -a "\$0" sleep 300' "$MO-gc" &
exec -a "$MO-tool" sleep 300
EOF
req POST /api/agents "{\"role\": \"develop\", \"tool\": \"bash\", \"command\": \"bash $T_TMP/other.sh\"}"
t_wait_count "$MO" 2 "$(t_ms 15000)"
ok $? "serve: a bystander agent's tree runs"
req POST /api/agents "{\"role\": \"develop\", \"tool\": \"bash\", \"command\": \"bash $T_TMP/srv.sh develop\"}"
AG=$(jr 'd["body"].get("agent_id")')
kill_worker "$MS" serve
gone "$MS" serve "$T_TMP/serve.err" "$SRV_PID"
is "$(t_marked "$MO" | wc -l)" 2 "serve: the bystander's tree is untouched"
end=$(t_until 5000)
while :; do
	req GET /metrics
	n=$(jr 'd["body"]' | awk '$1 == "ccw_processes_leaked_total" { print $2 }')
	[ "${n:-0}" -ge 2 ] || [ "$(t_now_ms)" -ge "$end" ] && break
	sleep 0.05
done
ok $(( ${n:-0} < 2 )) "serve: /metrics ccw_processes_leaked_total counts them (${n:-none})"
srv_wait_grep "$T_TMP/ev" "processes_leaked.*\"$AG\"|\"$AG\".*processes_leaked" 5000
ok $? "serve: a processes_leaked event names $AG"
like "$(grep -A 3 -m 1 processes_leaked "$T_TMP/ev" | grep -m 1 '^data:')" '"level": *"warning"' \
    "serve: the event is a warning"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
kill "$EVPID" 2>/dev/null

section "control"
# --- control: the verb table on stdin
t_marker MC leak-control
tree ctl "$MC"
C=$T_TMP/ctl
ctl_start "$C" --state-dir "$T_TMP/ctl-state" --loop-id LC "${CONTAIN[@]}"
ctl_send "{\"id\":1,\"verb\":\"spawn\",\"role\":\"develop\",\"message\":\"go\",\"tool\":\"bash\",\"command\":\"bash $T_TMP/ctl.sh develop\",\"model\":null}"
kill_worker "$MC" control
gone "$MC" control
warned "$C.err" control
ctl_stop

section "run"
# --- run: a parallel loop whose develop worker leaves the tree while
# debug and validate go on
t_marker MR leak-run
tree run "$MR"
R=$T_TMP/run
roles run "$R"
SLOW=1 t_loop_start "$R" LR -m parallel -n 1 "${CONTAIN[@]}" task
kill_worker "$MR" run
gone "$MR" run "$R.err" "$PID"
warned "$R.err" run
kill -TERM "$PID" 2>/dev/null
t_wait_pid "$PID" 15000
echo "# run ended: exit $T_RC"

section "batch"
# --- batch: two items at once; the second goes on
t_marker MB leak-batch
tree bat "$MB"
R=$T_TMP/bat
roles bat "$R"
t_batch_items "$R/items.jsonl" 2
SLOW=1 $WRAP "$SUP" batch "$R/items.jsonl" -C "$R" --jobs 2 "${CONTAIN[@]}" \
    >"$R.out" 2>"$R.err" &
BP=$!
kill_worker "$MB" batch
gone "$MB" batch "$R.err" "$BP"
warned "$R.err" batch
kill -TERM "$BP" 2>/dev/null
t_wait_pid "$BP" 15000

section "the fork window"
# --- the fork window: the worker dies between the tool's fork and its
# PR_SET_PDEATHSIG.  The supervisor is stopped meanwhile, so that only the
# worker's child can save the day: it must see its parent gone and exit
# instead of running the tool.
t_marker MW leak-window
cat >"$T_TMP/win.sh" <<EOF
#!/bin/bash
exec -a "$MW-tool" sleep 300
EOF
if [ -n "$WRAP" ]; then
	t_skip "fork window: the worker's comm is not ccw-worker under a wrapper"
else
	CCW_TEST_TOOL_FORK_DELAY_MS=$(t_ms 1500) $WRAP "$SUP" agent --json \
	    develop --tool bash --command "bash $T_TMP/win.sh" \
	    --state-dir "$T_TMP/win-state" "${CONTAIN[@]}" "go" \
	    >"$T_TMP/win.out" 2>"$T_TMP/win.err" &
	AP=$!
	# the worker, then its child still in the window (not yet exec'd)
	end=$(t_until 10000)
	W= K=
	while [ -z "$K" ] && [ "$(t_now_ms)" -lt "$end" ]; do
		W=$(pgrep -P "$AP" '^ccw-worker' | head -n 1)
		[ -n "$W" ] && K=$(pgrep -P "$W" '^ccw-worker' | head -n 1)
		sleep 0.02
	done
	[ -n "$K" ]
	ok $? "fork window: the worker's child is in the window"
	kill -STOP "$AP"
	kill -KILL "$W"
	# the child leaves the window: it exits, or it becomes the tool
	end=$(t_until 10000)
	while [ -n "$K" ] && [ "$(t_now_ms)" -lt "$end" ]; do
		t_pstate "$K"
		[ -z "$T_PST" ] || [ "$T_PST" = Z ] && break
		case $(cat "/proc/$K/comm" 2>/dev/null) in ccw-worker*) ;; *) break ;; esac
		sleep 0.02
	done
	left=$(t_marked "$MW")
	[ -z "$left" ]
	ok $? "fork window: a worker killed in it leaves no tool${left:+ (left: $left)}"
	kill -CONT "$AP"
	t_wait_pid "$AP" 15000
	t_wait_gone "$MW" 2000
	ok $? "fork window: nothing left once the supervisor runs"
fi

section "close"
# --- close: a SIGSTOPped grandchild in a session of its own
t_marker MT leak-stopped
cat >"$T_TMP/stop.sh" <<EOF
#!/bin/bash
( setsid bash -c 'kill -STOP \$\$; exec -a "\$0" sleep 300' "$MT-gc" &
  exec -a "$MT-child" sleep 300 ) &
exec -a "$MT-tool" sleep 300
EOF
C=$T_TMP/ctl2
ctl_start "$C" --state-dir "$T_TMP/ctl2-state" --loop-id LS "${CONTAIN[@]}"
ctl_send "{\"id\":1,\"verb\":\"spawn\",\"role\":\"develop\",\"message\":\"go\",\"tool\":\"bash\",\"command\":\"bash $T_TMP/stop.sh\",\"model\":null}"
r=$(ctl_recv 1)
A=$(jget - 'd["agent_id"]' <<<"$r")
# the grandchild stops itself before its exec: found by its parent
end=$(t_until 10000)
gc=
while [ -z "$gc" ] && [ "$(t_now_ms)" -lt "$end" ]; do
	for p in $(pgrep -P "$(pgrep -f -- "$MT-child" | head -n 1)" 2>/dev/null); do
		t_pstate "$p"
		[ "$T_PST" = T ] && gc=$p
	done
	sleep 0.02
done
[ -n "$gc" ]
ok $? "stopped grandchild: in state T (${gc:-none})"
ctl_send "{\"id\":2,\"verb\":\"close\",\"target\":\"$A\",\"grace_ms\":300}"
r=$(ctl_recv 2 10000)
is "$(jget - 'd["ok"]' <<<"$r")" true "stopped grandchild: close ok"
t_wait_gone "$MT" 2000
ok $? "stopped grandchild: the tree is gone after close"
left=
[ -n "$gc" ] && [ -e "/proc/$gc" ] && { t_pstate "$gc"; left=$T_PST; }
[ -z "$left" ] || [ "$left" = Z ]
ok $? "stopped grandchild: not left stopped (${left:-gone})"
ctl_stop

section end
t_done
