#!/bin/bash
# sock-limits.sh: the control socket against bad clients: garbage, an
# oversized header and a worker's message each close only their own
# connection; a subscriber that never reads is dropped past the unsent
# bound while another still gets every event; a client killed while its
# wait is pending leaves the server healthy (the late reply let go).
# shellcheck disable=SC1091
. "${srcdir:-.}/tests/regress/lib.sh"
t_watchdog 120
t_valgrind_worker
t_marker M sockl
t_slack
. "${srcdir:-.}/tests/regress/sock-lib.sh"
S=$T_TMP/l.sock

$WRAP "$SS" "$S" -C "$R" -o 131072 >"$T_TMP/ss.out" 2>"$T_TMP/ss.err" &
SPID=$!
end=$(t_until 10000)
until grep -q '^ready' "$T_TMP/ss.out" || [ "$(t_now_ms)" -ge "$end" ]; do
	sleep 0.02
done

# cc LINE...: the lines through `control --connect`, replies printed
cc() {
	printf '%s\n' "$@" | timeout -k 2 60 $WRAP "$SUP" control \
	    --connect "$S" 2>>"$T_TMP/cc.err"
}
# stat_of NAME...: sock_stats figures, "[A,B]" for two (no python: polled)
stat_of() {
	local r n out=
	r=$(cc '{"id":0,"verb":"sock_stats"}')
	for n in "$@"; do
		out="$out${out:+,}$(grep -o "\"$n\":[0-9]*" <<<"$r" | cut -d: -f2)"
	done
	[ $# -gt 1 ] && out="[$out]"
	printf '%s\n' "$out"
}

# --- a subscriber reading (B) in the background for the whole test
mkfifo "$T_TMP/b.in"
$WRAP "$SUP" control --connect "$S" <"$T_TMP/b.in" >"$T_TMP/b.out" \
    2>"$T_TMP/b.err" &
BPID=$!
exec {BFD}>"$T_TMP/b.in"
echo '{"id":1,"verb":"subscribe"}' >&"$BFD"

# --- bad frames close their own connection only
is "$(python3 "$P" raw "$S" 474152424147450a)" closed "garbage is closed at once"
is "$(python3 "$P" raw "$S" 435701000009ffffffff)" closed \
    "a header claiming 4 GiB is closed at once"
is "$(python3 "$P" raw "$S" 43570100000900000001c0)" closed \
    "a worker's message (BYE) on the socket is closed"
is "$(stat_of bad_frames subscribers)" '[3,1]' \
    "three bad frames counted; the subscriber is still there"

# --- a stalled subscriber (A) is dropped, B gets every event
python3 "$P" stall "$S" >"$T_TMP/a.out" &
APID=$!
t_wait_file "$T_TMP/a.out" 10000
end=$(t_until 10000)
until [ "$(stat_of subscribers)" = 2 ] || [ "$(t_now_ms)" -ge "$end" ]; do
	sleep 0.02
done
last=0
for i in $(seq 1 60); do
	last=$(cc '{"id":2,"verb":"publish","n":8,"bytes":4096}' | \
	    grep -o '"last":[0-9]*' | cut -d: -f2)
	# B keeps up: wait until it has seen the burst
	end=$(t_until 10000)
	until grep -q "\"seq\":$last," "$T_TMP/b.out" ||
	    [ "$(t_now_ms)" -ge "$end" ]; do
		sleep 0.02
	done
	[ "$(stat_of dropped_slow)" = 1 ] && break
done
is "$(stat_of dropped_slow subscribers)" '[1,1]' \
    "the stalled subscriber is dropped (after $last events of 4 KiB), B stays"
is "$(grep -c '"event":"tick"' "$T_TMP/b.out")" "$last" \
    "B got every event, in order up to $last"
like "$(cat "$T_TMP/ss.err")" "a client fell [0-9]* bytes behind; dropped" \
    "the drop is logged"
kill "$APID"
wait "$APID" 2>/dev/null

# --- a client killed while its wait is pending
mkfifo "$T_TMP/k.in"
$WRAP "$SUP" control --connect "$S" <"$T_TMP/k.in" >"$T_TMP/k.out" 2>&1 &
KPID=$!
exec {KFD}>"$T_TMP/k.in"
echo "{\"id\":1,\"verb\":\"spawn\",\"role\":\"develop\",\
\"command\":\"exec '$FAKE' --marker $M hang\"}" >&"$KFD"
t_wait_count "$M" 1 10000
ok $? "the hanging agent runs"
echo '{"id":2,"verb":"wait","targets":["agent-1"],"timeout_ms":60000}' >&"$KFD"
end=$(t_until 10000)
until [ "$(stat_of pending)" = 1 ] || [ "$(t_now_ms)" -ge "$end" ]; do
	sleep 0.02
done
is "$(stat_of pending)" 1 "the wait is pending"
kill -KILL "$KPID"
t_wait_pid "$KPID" 10000
exec {KFD}>&-
is "$(cc '{"id":3,"verb":"close","target":"agent-1","grace_ms":500}' | \
    jget - 'd["ok"]')" true "another client closes the agent"
end=$(t_until 10000)
until [ "$(stat_of orphaned)" = 1 ] || [ "$(t_now_ms)" -ge "$end" ]; do
	sleep 0.02
done
is "$(stat_of orphaned pending)" '[1,0]' \
    "the killed client's wait ended; its reply was let go"
is "$(cc '{"id":4,"verb":"list"}' | jget - 'd["agents"]["agent-1"]["status"]' | \
    grep -c .)" 1 "the server still answers"
t_wait_gone "$M" 5000
ok $? "no agent left"

# --- the end: B sees the server close; the server frees everything
exec {BFD}>&-
kill -TERM "$SPID"
t_wait_pid "$SPID" 20000
is "$T_RC" 0 "the server exits 0 on SIGTERM, everything freed"
t_wait_pid "$BPID" 10000
is "$T_RC" 0 "the subscriber's client ends when the server closes"
t_check_worker_logs
t_done
