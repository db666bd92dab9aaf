#!/bin/bash
# serve-ws.sh: serve's /ws, the event bus as an RFC 6455 WebSocket
# (supervisor/api/ws.c, wsframe.c), with a raw-socket client
# (tests/regress/ws-probe.py): the handshake (accept key, 400 and 426,
# the token or its cookie, a foreign Origin refused), a loop's event
# reaching 20 clients as CCW's JSON, ping and pong, fragments, a flood,
# the close handshake, every frame a server must refuse (1002, 1007,
# 1009), Chromium's own WebSocket with the cookie (serve-ws.mjs,
# playwright-core from page-npm.sh), the close on SIGTERM
# (1001); then behind tests/http-serve with small bounds: a reader that
# stalls dropped while another is served, a client that never answers a
# ping dropped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 40
t_slack

P="$srcdir/tests/regress/ws-probe.py"
export WS_PROBE_TIMEOUT=$(( $(t_ms 10000) / 1000 ))

# probe CASE ARGS: one probe; its "ok" lines become checks here
probe() {
	python3 "$P" "$PORT" "$@" >"$T_TMP/probe.out" 2>"$T_TMP/probe.err"
	ok $? "probe $1 ran" || sed 's/^/#   /' "$T_TMP/probe.err"
	t_probe_out "$T_TMP/probe.out" "$1: "
}

R=$T_TMP/proj
OK="exec '$FAKE' result success"
t_run_config "$R" "$OK init" "$OK dev" "$OK dbg" "$OK 'all good'" "$OK done"
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens ($SRV_PORT)"
PORT=$SRV_PORT
export WS_TOKEN=$SRV_TOKEN
probe handshake
probe events
probe protocol 65536

# /metrics counts what the probes did: 20 and more handshakes accepted,
# the bad ones refused, each client's copy of an event, the 13 refused
# frames closed for a protocol error
noauth GET /metrics
jr 'd["body"]' >"$T_TMP/metrics"
metric() {
	awk -v k="$1" '$1 == k { print $2 }' "$T_TMP/metrics"
}
for m in ccw_ws_opened_total:20 ccw_ws_refused_total:1 \
    ccw_ws_events_sent_total:20 'ccw_ws_closed_total{reason="protocol"}:13'; do
	n=$(metric "${m%:*}")
	ok $(( ${n:-0} < ${m##*:} )) "/metrics: ${m%:*} at least ${m##*:} (${n:-none})"
done
like "$(cat "$T_TMP/metrics")" 'ccw_event_subscribers\{via="ws"\} [0-9]+' \
    "/metrics: /ws among the event subscribers"

# Chromium's own WebSocket, as CCW's dashboard opens it (the cookie
# alone): playwright-core from page-npm.sh (installed if need be)
. "$(dirname "$0")/page-npm.sh"
CHROMIUM=${CCW_CHROMIUM:-$(command -v chromium || true)}
if ! command -v node >/dev/null || [ -z "$CHROMIUM" ]; then
	t_skip "chromium's WebSocket: no node or no chromium"
elif ! page_npm && [ ! -f "$PW_DIR/node_modules/playwright-core/package.json" ]; then
	t_skip "chromium's WebSocket: $PAGE_NPM_WHY"
else
	PW_DIR=$PW_DIR CHROMIUM=$CHROMIUM timeout 60 node \
	    "$srcdir/tests/regress/serve-ws.mjs" "$PORT" "$(t_ms 10000)" \
	    >"$T_TMP/br.out" 2>"$T_TMP/br.err"
	ok $? "serve-ws.mjs ran" || sed 's/^/#   /' "$T_TMP/br.err"
	t_probe_out "$T_TMP/br.out" "chromium: "
fi

# a client held open while serve stops: told 1001, serve exits cleanly
python3 "$P" "$PORT" hold >"$T_TMP/hold.out" 2>"$T_TMP/hold.err" &
HOLD=$!
end=$(t_until "$(t_ms 10000)")
until grep -q '^ms ready' "$T_TMP/hold.out" || [ "$(t_now_ms)" -ge "$end" ]; do
	sleep 0.02
done
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" "$(t_ms 15000)"
is "$T_RC" 4 "SIGTERM with a WebSocket open: exit 4 (nothing running)"
wait "$HOLD"
t_probe_out "$T_TMP/hold.out" "hold: "

# hs_start ARGS: tests/http-serve ARGS in the background; $HPID, $PORT
HS="$top_builddir/tests/http-serve"
hs_start() {
	rm -f "$T_TMP/port"
	$WRAP "$HS" "$T_TMP/port" "$@" 2>"$T_TMP/hs.err" &
	HPID=$!
	local end
	end=$(t_until "$(t_ms 10000)")
	# the file is made, then its line written: wait for the line
	until [ -n "$(cat "$T_TMP/port" 2>/dev/null)" ] ||
	    [ "$(t_now_ms)" -ge "$end" ]; do
		sleep 0.02
	done
	PORT=$(cat "$T_TMP/port" 2>/dev/null)
	[ -n "$PORT" ]
	ok $? "tests/http-serve $* listens (${PORT:-none})"
}

# hs_stop: SIGTERM; it must exit 0 (valgrind: no leak, no error)
hs_stop() {
	kill -TERM "$HPID"
	wait "$HPID"
	is "$?" 0 "http-serve exits 0 on SIGTERM, everything freed"
}

export WS_TOKEN=
# 64 KiB of unsent bytes at most: the stalled reader falls behind
hs_start -s 65536
probe slow
hs_stop
# a ping every 300 ms: two unanswered and the client is dropped
hs_start -w 300
probe silent 300
hs_stop
t_done
