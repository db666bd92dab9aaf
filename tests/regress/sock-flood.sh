#!/bin/bash
# sock-flood.sh: serve's control socket against a flood of its own user's
# clients (supervisor/api/sock.c).  300 clients, half silent and half
# stuck mid-frame, never lock out a real `control --connect`: past 64
# connections of one uid the least recently active idle one is closed.
# 64 subscribers (none idle) and the next one is refused, logged and
# counted.  With short deadlines (CCW_SOCK_IDLE_MS, CCW_SOCK_FRAME_MS) a
# silent client is closed after the idle deadline and one stuck mid-frame
# after the frame deadline, timed from its first byte, while a
# subscriber, idle as long, stays.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 120
t_slack

FP="$srcdir/tests/regress/flood-probe.py"
R=$T_TMP/proj
mkdir -p "$R/.loop"
echo '{"default_tool": "bash"}' >"$R/.loop/config.json"

# cc SOCKET LINE...: the lines through `control --connect`, replies printed
cc() {
	local s=$1
	shift
	printf '%s\n' "$@" | timeout -k 2 60 $WRAP "$SUP" control \
	    --connect "$s" 2>>"$T_TMP/cc.err"
}
# hold NAME ARGS...: flood-probe.py ARGS in the background until `drop
# NAME`; true once it holds its connections ($HP_NAME its pid)
hold() {
	local n=$1 end
	shift
	mkfifo "$T_TMP/$n.in"
	python3 "$FP" "$@" <"$T_TMP/$n.in" >"$T_TMP/$n.out" &
	eval "HP_$n=\$!"
	eval "exec {HF_$n}>\"\$T_TMP/\$n.in\""
	end=$(t_until "$(t_ms 20000)")
	until grep -q held "$T_TMP/$n.out"; do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.02
	done
}
# drop NAME: the held connections close
drop() {
	local fd pid
	eval "fd=\$HF_$1 pid=\$HP_$1"
	exec {fd}>&-
	t_wait_pid "$pid" "$(t_ms 10000)"
}

# --- serve with the default deadlines (60 s idle): 300 bad clients
srv_start "$T_TMP/a" -C "$R"
ok $? "serve listens"
S=$T_TMP/a.sock
hold flood unix "$S" 300
ok $? "300 clients connected: 150 silent, 150 half a frame"
r=$(cc "$S" '{"id":1,"verb":"list"}')
is "$(jget - '[d["id"], d["ok"]]' <<<"$r")" '[1,true]' \
    "a real control --connect request is answered"
r=$(cc "$S" '{"id":2,"verb":"sock_stats"}')
is "$(jget - '[d["evicted"] >= 237, d["open"] <= 64, d["refused_full"]]' \
    <<<"$r")" '[true,true,0]' \
    "the flood was closed oldest first past 64 connections (evicted $(jget - \
    'd["evicted"]' <<<"$r")), nothing refused"
drop flood

# --- 64 subscribers: none is idle, the next connection is refused
hold subs sub "$S" 64
ok $? "64 subscribers"
# subs_all: true once serve counts the 64 subscriptions
subs_all() {
	python3 "$HTTPC" "$SRV_PORT" GET /metrics | jget - 'd["body"]' |
	    grep '^ccw_event_subscribers{via="socket"} 64$' >/dev/null
}
end=$(t_until "$(t_ms 10000)")
until subs_all || [ "$(t_now_ms)" -ge "$end" ]; do
	sleep 0.05
done
subs_all
ok $? "... each subscribed"
r=$(cc "$S" '{"id":3,"verb":"list"}')
is "$r" "" "the 65th connection is refused: no reply"
like "$(python3 "$HTTPC" "$SRV_PORT" GET /metrics | jget - 'd["body"]')" \
    'ccw_socket_refused_total\{reason="full"\} 1' "... counted as full"
like "$(cat "$T_TMP/a.err")" \
    "refused a connection from uid $(id -u): its 64 connections all wait" \
    "... and logged with its reason"
drop subs
r=$(cc "$S" '{"id":4,"verb":"list"}')
is "$(jget - 'd["id"]' <<<"$r")" 4 "the subscribers gone, a client is served"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" "$(t_ms 20000)"
is "$T_RC" 4 "serve exits 4 on SIGTERM"

# --- short deadlines: idle 2 s, a frame 1 s
export CCW_SOCK_IDLE_MS=2000 CCW_SOCK_FRAME_MS=1000
srv_start "$T_TMP/b" -C "$R"
ok $? "serve listens with short socket deadlines"
unset CCW_SOCK_IDLE_MS CCW_SOCK_FRAME_MS
S=$T_TMP/b.sock
ctl_start "$T_TMP/sub" --connect "$S"
ctl_send '{"id":1,"verb":"subscribe"}'
like "$(ctl_recv 1 "$(t_ms 10000)")" '"ok":true' "a subscriber"
r=$(python3 "$FP" unix "$S" 40 "$(t_ms 20000)" | tail -n 1)
read -r _ n _ smin smax _ hmin hmax <<<"$r"
is "$n" 40 "40 clients, 20 silent and 20 half a frame, all closed by serve"
ok $(( smin < 2000 )) "no silent one before the idle deadline (first after $smin ms)"
ok $(( hmin < 1000 )) "no half-framed one before the frame deadline (first after $hmin ms)"
t_within "$smax" 2000 "every silent one at the idle deadline (last after $smax ms)"
t_within "$hmax" 1000 "every half-framed one at the frame deadline (last after $hmax ms)"
r=$(cc "$S" '{"id":2,"verb":"sock_stats"}')
is "$(jget - '[d["closed_idle"], d["closed_slow"], d["subscribers"]]' \
    <<<"$r")" '[20,20,1]' "... counted; the subscriber, idle as long, stays"
m=$(python3 "$HTTPC" "$SRV_PORT" GET /metrics | jget - 'd["body"]')
is "$(grep -c -e '^ccw_socket_closed_total{reason="idle"} 20$' \
    -e '^ccw_socket_closed_total{reason="slow"} 20$' \
    -e '^ccw_socket_closed_total{reason="evicted"} 0$' <<<"$m")" 3 \
    "... and in /metrics: ccw_socket_closed_total by reason"
like "$(cat "$T_TMP/b.err")" "a frame not whole 1000 ms after its first byte" \
    "a slow frame is logged"
exec {CTL_FD}>&-		# its input ends: it waits for serve's close
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" "$(t_ms 20000)"
is "$T_RC" 4 "serve exits 4 on SIGTERM"
t_wait_pid "$CTL_PID" "$(t_ms 10000)"
is "$T_RC" 0 "the subscriber's client ends when serve closes"
t_done
