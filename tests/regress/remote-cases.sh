# remote-cases.sh: the cases every launcher must pass, sourced by
# remote-relay.sh (a relay that behaves as ssh does, no daemon needed),
# remote-ssh.sh (a real sshd on 127.0.0.1) and remote-slurm.sh (a real
# one-node Slurm).  The caller sets, before remote_cases:
#   LAUNCH       the launcher's words, as --launcher takes them
#   LAUNCH_BAD   a launcher that cannot reach its host
#   REMOTE_VAR   a variable set only on the far side (SSH_CONNECTION ...)
# and may define remote_extra, run last with the control session open.

# remote_config ROOT EXTRA_JSON: a bash-only configuration whose
# top-level launcher is LAUNCH with a fast heartbeat (lost after 5 missed
# PINGs of 300 ms, stretched under a wrapper), roles as t_run_config.
remote_config() {
	local root=$1
	shift
	t_run_config "$root" "$@"
	python3 - "$root/.loop/config.json" "$LAUNCH" "$(t_ms 300)" <<'PYEOF'
import json, sys
p, words, ping = sys.argv[1], sys.argv[2].split(), int(sys.argv[3])
c = json.load(open(p))
c["launcher"] = {"argv": words, "ping_ms": ping, "misses": 5}
json.dump(c, open(p, "w"), indent=1)
PYEOF
}

# remote_seen ROOT ROLE: a command line that writes REMOTE_VAR, as the
# tool sees it, to ROOT/seen/ROLE.
remote_seen() {
	echo "echo \"\${$REMOTE_VAR:-}\" > '$1/seen/$2'"
}

# remote_lpid: the launcher, the control session's child.
remote_lpid() {
	pgrep -P "$CTL_PID" | head -n 1
}

remote_kill9() { kill -KILL "$1"; }
remote_stop() { kill -STOP "$1"; }

# remote_lose LABEL ID ACTION REASON: in the open control session, spawn
# a hanging far tool (requests ID, ID+1, ID+2), run ACTION LAUNCHER_PID
# to lose it, and check that the agent errors for REASON (a regex) and
# that nothing is left on the far side; the ms from ACTION to the
# answer in REMOTE_EL.
remote_lose() {
	local label=$1 id=$2 action=$3 reason=$4 a r t0
	t_marker RL lose
	ctl_send "{\"id\":$id,\"verb\":\"spawn\",\"role\":\"develop\",\"tool\":\"bash\",\"message\":\"go\",\
\"command\":\"exec '$FAKE' --marker $RL hang\"}"
	a=$(ctl_recv "$id" "$(t_ms 20000)" | jget - 'd.get("agent_id")')
	t_wait_count "$RL" 1 "$(t_ms 20000)"
	ok $? "$label: the far tool runs"
	t0=$(t_now_ms)
	"$action" "$(remote_lpid)"
	ctl_send "{\"id\":$((id + 1)),\"verb\":\"wait\",\"targets\":[\"$a\"],\"timeout_ms\":$(t_ms 20000)}"
	r=$(ctl_recv $((id + 1)) "$(t_ms 25000)")
	REMOTE_EL=$(( $(t_now_ms) - t0 ))
	like "$r" '"errored"' "$label: the agent is errored"
	ctl_send "{\"id\":$((id + 2)),\"verb\":\"result\",\"target\":\"$a\"}"
	r=$(ctl_recv $((id + 2)) | jget - 'd["result"]["reason"]')
	like "$r" "$reason" "$label: $r"
	t_wait_gone "$RL" "$(t_ms 10000)"
	ok $? "$label: nothing left on the far side"
}

remote_cases() {
	local name=$1 R S r a lost
	lost=$(( $(t_ms 300) * 5 ))

	# -- a parallel loop whose develop, debug and validate workers run
	# behind the launcher: completed, the state file valid, each worker
	# on the far side (its tool saw REMOTE_VAR)
	R=$T_TMP/$name-par
	mkdir -p "$R/seen"
	remote_config "$R" "exec '$FAKE' result success init" \
	    "$(remote_seen "$R" develop); exec '$FAKE' result success dev '[\"a.c\"]'" \
	    "$(remote_seen "$R" debug); exec '$FAKE' result success dbg" \
	    "$(remote_seen "$R" validate); exec '$FAKE' result success tests" \
	    "exec '$FAKE' result success bye" '{"grace_ms": 500}'
	timeout -k 2 120 $WRAP "$SUP" run -m parallel -C "$R" --loop-id \
	    par-1 --json "Do it elsewhere" >"$R.out" 2>"$R.err"
	is "$?" 0 "$name: parallel loop: exit 0"
	is "$(jget "$R/.loop/par-1.json" '[d["status"], d["skill_state"]["mode"]]')" \
	    '["completed","parallel"]' "$name: parallel loop: completed, parallel"
	$WRAP "$SUP" state -C "$R" validate par-1 >/dev/null 2>&1
	ok $? "$name: parallel loop: the state file is valid"
	is "$(jget "$R/.loop/par-1.json" '[d["skill_state"]["parallel_results"][r]["summary"] for r in ("develop", "debug", "validate")]')" \
	    '["dev","dbg","tests"]' "$name: parallel loop: each result merged from the channel"
	for r in develop debug validate; do
		[ -s "$R/seen/$r" ]
		ok $? "$name: parallel loop: $r ran behind the launcher ($REMOTE_VAR=$(head -c 40 "$R/seen/$r" 2>/dev/null))"
	done
	[ -s "$R.err" ] && sed 's/^/# stderr: /' "$R.err" | tail -n 5

	# -- a control session: spawn, send_input answered by the far tool,
	# then close of a hanging one; nothing left on either side
	S=$T_TMP/$name-ctl
	remote_config "$S" true true true true true
	t_marker RM "$name-tool"
	ctl_start "$T_TMP/$name-ctl.out" -C "$S"
	ctl_send "{\"id\":1,\"verb\":\"spawn\",\"role\":\"develop\",\"tool\":\"bash\",\"message\":\"go\",\
\"command\":\"exec '$FAKE' --marker $RM on-input-result success\"}"
	a=$(ctl_recv 1 "$(t_ms 20000)" | jget - 'd.get("agent_id")')
	like "$a" '^agent-[0-9]+$' "$name: control: spawned $a"
	t_wait_count "$RM" 1 "$(t_ms 20000)"
	ok $? "$name: control: the far tool runs"
	ctl_send "{\"id\":2,\"verb\":\"send_input\",\"target\":\"$a\",\"message\":\"## TIMEOUT converge\"}"
	r=$(ctl_recv 2 "$(t_ms 10000)")
	like "$r" '"submission_id"' "$name: control: send_input acknowledged: $r"
	ctl_send "{\"id\":3,\"verb\":\"wait\",\"targets\":[\"$a\"],\"timeout_ms\":$(t_ms 15000)}"
	r=$(ctl_recv 3 "$(t_ms 20000)")
	like "$r" '"completed"' "$name: control: the input reached the tool, which answered"
	ctl_send "{\"id\":4,\"verb\":\"result\",\"target\":\"$a\"}"
	r=$(ctl_recv 4 "$(t_ms 10000)")
	like "$r" 'converged after nudge' "$name: control: its result came back on the channel"
	echo "# control: $(jget - '[d["result"]["agent_status"], d["result"]["reason"]]' <<<"$r")"

	t_marker RH "$name-hang"
	ctl_send "{\"id\":5,\"verb\":\"spawn\",\"role\":\"develop\",\"tool\":\"bash\",\"message\":\"go\",\
\"command\":\"exec '$FAKE' --marker $RH ignore-term hang\"}"
	a=$(ctl_recv 5 "$(t_ms 20000)" | jget - 'd.get("agent_id")')
	t_wait_count "$RH" 1 "$(t_ms 20000)"
	ok $? "$name: close: the far tool runs"
	ctl_send "{\"id\":6,\"verb\":\"close\",\"target\":\"$a\",\"grace_ms\":300}"
	r=$(ctl_recv 6 "$(t_ms 20000)")
	like "$r" '"previous_status" *: *"running"' "$name: close: answered: $r"
	t_wait_gone "$RH" "$(t_ms 10000)"
	ok $? "$name: close: the far tool (ignoring TERM) is gone"

	# -- the launcher killed -9 mid-task: errored "worker lost", the far
	# worker sees its stdin end and sweeps its tool
	remote_lose "$name: kill -9" 7 remote_kill9 '^worker lost'
	t_within "$REMOTE_EL" "$lost" \
	    "$name: kill -9: known within the heartbeat deadline ($REMOTE_EL ms)"

	# -- a silent host (the launcher stopped: a cut network shows no EOF):
	# lost after the heartbeat's misses, the far worker gives up too
	remote_lose "$name: silent" 10 remote_stop '^worker lost: no frame for'
	# (counted from the last frame heard, up to a PING before the stop)
	ok $(( REMOTE_EL < lost - 2 * $(t_ms 300) )) \
	    "$name: silent: not before the heartbeat deadline ($REMOTE_EL ms, $lost)"
	t_within "$REMOTE_EL" $((lost + $(t_ms 300) * 2)) \
	    "$name: silent: within the deadline and a PING ($REMOTE_EL ms)"

	declare -F remote_extra >/dev/null && remote_extra "$name"
	ctl_stop "$(t_ms 20000)"
	is "$T_RC" 0 "$name: control: EOF, exit 0"

	# -- the supervisor killed -9: its launchers die with it (their
	# parent-death signal), and the far workers, their stdin ended, sweep
	# their tools
	t_marker RD "$name-orphan"
	ctl_start "$T_TMP/$name-ctl9.out" -C "$S"
	ctl_send "{\"id\":1,\"verb\":\"spawn\",\"role\":\"develop\",\"tool\":\"bash\",\"message\":\"go\",\
\"command\":\"exec '$FAKE' --marker $RD hang\"}" \
	    "{\"id\":2,\"verb\":\"spawn\",\"role\":\"debug\",\"tool\":\"bash\",\"message\":\"go\",\
\"command\":\"exec '$FAKE' --marker $RD hang\"}"
	t_wait_count "$RD" 2 "$(t_ms 20000)"
	ok $? "$name: kill -9 of the supervisor: two far tools run"
	kill -KILL "$CTL_PID"
	exec {CTL_FD}>&-
	t_wait_pid "$CTL_PID" 5000
	t_wait_gone "$RD" "$(t_ms 10000)"
	ok $? "$name: kill -9 of the supervisor: nothing left on the far side"

	# -- a launcher that cannot reach its host: errored, the reason names
	# the command, its exit status and what it said
	r=$(timeout -k 2 60 $WRAP "$SUP" agent develop --tool bash --command true \
	    --state-dir "$T_TMP/$name-bad" --launcher "$LAUNCH_BAD" --json go)
	is "$?" 1 "$name: bad launcher: exit 1"
	like "$(jget - 'd["reason"]' <<<"$r")" \
	    "^launcher '.*' exited with status [0-9]+ before the worker said HELLO" \
	    "$name: bad launcher: $(jget - 'd["reason"]' <<<"$r")"
}
