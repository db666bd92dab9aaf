# serve-lib.sh: sourced by the serve-*.sh tests after lib.sh: start a
# `ccw-supervisor serve` on a free loopback port and wait until it
# listens, send requests (tests/regress/serve-http.py), poll a loop's
# status.  Every wait is bounded (t_until).
HTTPC="$srcdir/tests/regress/serve-http.py"

# srv_start OUT ARGS...: serve ARGS --http ${SRV_ADDR:-127.0.0.1}:0 in the
# background;
# stdout OUT, stderr OUT.err; $SRV_PID, $SRV_PORT, $SRV_TOKEN (from
# /api/auth/token).  Its control socket is OUT.sock unless ARGS name one
# (or --no-socket): two serves on one root each get their own.  Fails if
# it does not listen within 10 s.
srv_start() {
	local out=$1 end sock
	shift
	sock=(--socket "$out.sock")
	case " $* " in *" --socket "*|*" --no-socket "*) sock=() ;; esac
	: >"$out"
	$WRAP "$SUP" -v serve "$@" "${sock[@]}" --http "${SRV_ADDR:-127.0.0.1}:0" \
	    >"$out" 2>"$out.err" &
	SRV_PID=$!
	SRV_PORT=
	end=$(t_until 10000)
	while [ -z "$SRV_PORT" ]; do
		SRV_PORT=$(sed -n 's/.*listening on http:.*:\([0-9]*\)$/\1/p' \
		    "$out")
		[ -n "$SRV_PORT" ] && break
		kill -0 "$SRV_PID" 2>/dev/null || return 1
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.02
	done
	SRV_TOKEN=$(python3 "$HTTPC" "$SRV_PORT" GET /api/auth/token |
	    jget - 'd["body"]["token"]')
}

# req METHOD PATH [BODY]: one request with the token; $RES is the JSON
# line {"status", "allow", "type", "body"}.
req() {
	RES=$(python3 "$HTTPC" "$SRV_PORT" "$@" -t "$SRV_TOKEN")
}

# noauth METHOD PATH [BODY]: the same without a token.
noauth() {
	RES=$(python3 "$HTTPC" "$SRV_PORT" "$@")
}

# jr EXPR: EXPR over the last reply (d = {"status", "allow", "body"}).
jr() {
	printf '%s\n' "$RES" | jget - "$1"
}

# srv_wait_status ID STATUS MS: poll GET /api/loops/v2/ID until its status
# is STATUS; fails (status printed) at the deadline.
srv_wait_status() {
	local end st
	end=$(t_until "$3")
	while :; do
		req GET "/api/loops/v2/$1"
		st=$(jr 'd["body"].get("data", {}).get("status")')
		[ "$st" = "$2" ] && return 0
		if [ "$(t_now_ms)" -ge "$end" ]; then
			echo "#   loop $1: status $st, want $2"
			return 1
		fi
		sleep 0.05
	done
}

# srv_wait_hosted N MS: poll /health until the server drives N loops.
srv_wait_hosted() {
	local end
	end=$(t_until "$2")
	until [ "$(python3 "$HTTPC" "$SRV_PORT" GET /health |
	    jget - 'd["body"]["loops_running"]')" = "$1" ]; do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# srv_wait_grep FILE REGEX MS: wait until FILE holds a line matching REGEX.
srv_wait_grep() {
	local end
	end=$(t_until "$3")
	until grep -Eq -- "$2" "$1" 2>/dev/null; do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# srv_events FILE: stream /api/events into FILE in the background ($EVPID)
# and wait (5 s at most) until the server counts the subscriber, so that
# no event published after this returns is missed.
srv_events() {
	local end
	python3 "$HTTPC" "$SRV_PORT" GET /api/events -t "$SRV_TOKEN" -s "$1" &
	EVPID=$!
	end=$(t_until 5000)
	until grep -q 'ccw_sse_subscribers 1' <(python3 "$HTTPC" "$SRV_PORT" \
	    GET /metrics | jget - 'd["body"]'); do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.05
	done
}
