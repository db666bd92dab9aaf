#!/bin/bash
# agent-faults.sh: workers that break the protocol (garbage, an oversized
# frame, half a frame) are errored one by one while a good agent beside
# them keeps running, with the supervisor's memory bounded; and a
# SIGKILLed supervisor takes every worker and tool with it.
. "$(dirname "$0")/lib.sh"
t_watchdog 55
t_marker MT faults-tool
t_marker MW faults-worker
S=$T_TMP/state
GO=$T_TMP/go
LIMIT_KB=$((20 * 1024))

# The fake workers run from a private copy: executable whatever the
# source tree's modes are.
mkdir -p "$T_TMP/workers"
cp "$srcdir"/tests/regress/workers/*.sh "$T_TMP/workers/"
chmod +x "$T_TMP"/workers/*.sh
export CCW_REAL_WORKER=$WRK CCW_FAKE_AGENT=$FAKE CCW_FAULT_MARKER=$MW

# spawn_req ID COMMAND: a spawn request for a bash tool.
spawn_req() {
	printf '{"id":%s,"verb":"spawn","role":"develop","message":"go",'\
'"tool":"bash","command":"%s","model":null}' "$1" "$2"
}

# fault KIND: one control session whose even-indexed workers are the fake
# worker KIND, with two agents in it; exactly one must be errored, the
# other must run on and complete.
fault() {
	local kind=$1 r a b bad good hwm
	rm -f "$GO"
	CCW_FAULT=$kind CCW_WORKER=$T_TMP/workers/faulty.sh ctl_start "$T_TMP/ctl-$kind" \
	    --state-dir "$S" --loop-id "$kind"
	ctl_send "$(spawn_req 1 "exec '$FAKE' --marker $MT wait-file $GO \
result success")" "$(spawn_req 2 "exec '$FAKE' --marker $MT wait-file $GO \
result success")"
	a=$(ctl_recv 1 | jget - 'd["agent_id"]')
	b=$(ctl_recv 2 | jget - 'd["agent_id"]')
	like "$a $b" '^agent-[0-9]+ agent-[0-9]+$' "$kind: both spawns answered"
	ctl_send "{\"id\":3,\"verb\":\"wait\",\"targets\":[\"$a\",\"$b\"],\
\"timeout_ms\":5000,\"mode\":\"any\"}"
	r=$(ctl_recv 3 8000)
	is "$(jget - 'd["timed_out"]' <<<"$r")" false \
	    "$kind: one agent ends without a timeout"
	is "$(jget - 'sorted(d["status"].values())' <<<"$r")" \
	    '["errored","running"]' "$kind: one errored, the other running"
	bad=$(jget - '[k for k, v in d["status"].items() if v == "errored"][0]' \
	    <<<"$r")
	good=$a
	[ "$bad" = "$a" ] && good=$b
	ctl_send "{\"id\":4,\"verb\":\"result\",\"target\":\"$bad\"}"
	r=$(ctl_recv 4)
	is "$(jget - '[d["ok"], d["result"]["agent_status"]]' <<<"$r")" \
	    '[true,"errored"]' "$kind: the result says errored"
	like "$(jget - 'd["result"]["reason"]' <<<"$r")" 'protocol violation' \
	    "$kind: the reason is a protocol violation"
	t_wait_gone "$MW" 2000
	ok $? "$kind: the faulty worker is gone"
	touch "$GO"
	ctl_send "{\"id\":5,\"verb\":\"wait\",\"targets\":[\"$good\"],\
\"timeout_ms\":5000,\"mode\":\"all\"}"
	r=$(ctl_recv 5 8000)
	is "$(jget - 'd["status"]["'"$good"'"]' <<<"$r")" completed \
	    "$kind: the good agent completes"
	ctl_send "{\"id\":6,\"verb\":\"result\",\"target\":\"$good\"}"
	r=$(ctl_recv 6)
	is "$(jget - 'd["result"]["status"]' <<<"$r")" success \
	    "$kind: with its result"
	hwm=$(t_vm "$CTL_PID" VmHWM)
	echo "# memory: $kind: supervisor VmHWM ${hwm:-?} kB"
	if t_measure_rss; then
		ok $(( ${hwm:-999999} >= LIMIT_KB )) \
		    "$kind: supervisor VmHWM under 20 MiB"
	else
		t_skip "$kind: memory not measured (sanitizers or a wrapper)"
	fi
	ctl_stop 10000
	is "$T_RC" 0 "$kind: the supervisor exits 0 on EOF"
	t_wait_gone "$MT" 2000
	ok $? "$kind: no tool left"
}

fault garbage
fault oversized
fault half-frame

# -- the supervisor SIGKILLed: its workers and their tools go too
ctl_start "$T_TMP/ctl-kill" --state-dir "$S" --loop-id kill
ctl_send "$(spawn_req 1 "exec '$FAKE' --marker $MT hang")" \
    "$(spawn_req 2 "exec '$FAKE' --marker $MT ignore-term hang")" \
    "$(spawn_req 3 "exec '$FAKE' --marker $MT fork-grandchild hang")"
t_wait_count "$MT" 4 8000
ok $? "kill: three tools and a grandchild are running" ||
    ps -o pid,ppid,stat,etimes,args -g "$(ps -o sid= $$)" | sed 's/^/# /'
workers=$(pgrep -P "$CTL_PID")
is "$(echo $workers | wc -w)" 3 "kill: three workers"
t0=$(t_now_ms)
kill -KILL "$CTL_PID"
t_wait_pid "$CTL_PID" 2000
exec {CTL_FD}>&-
t_wait_gone "$MT" 2000
ok $? "kill: every tool is gone within 2 s"
# (a dead worker may stay a zombie: whoever inherited it need not reap)
while :; do
	left=
	for p in $workers; do
		st=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' \
		    "/proc/$p/status" 2>/dev/null)
		[ -n "$st" ] && [ "$st" != Z ] && left="$left $p"
	done
	[ -z "$left" ] || [ "$(t_now_ms)" -ge $((t0 + 2000)) ] && break
	sleep 0.05
done
echo "# timing: workers and tools gone $(( $(t_now_ms) - t0 )) ms after SIGKILL"
is "$left" "" "kill: every worker is gone within 2 s"

t_done
