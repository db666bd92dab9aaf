#!/bin/bash
# sock-basic.sh: the control socket (supervisor/api/sock.c, mounted by
# tests/sock-serve on a control session's host): requests and replies
# through `control --connect` (spawn a fake agent, wait, close), the
# socket 0600 as soon as it exists (under umask 000), a stale socket
# replaced, a live one never stolen (the second server names the first's
# pid; the first still answers), another uid's connection refused by
# SO_PEERCRED even past a widened mode, and by the mode itself.
# shellcheck disable=SC1091
. "${srcdir:-.}/tests/regress/lib.sh"
t_watchdog 90
t_valgrind_worker
t_marker M sockb
t_slack
. "${srcdir:-.}/tests/regress/sock-lib.sh"

# ss_start NAME SOCKET ARGS: the harness in the background ($SPID); its
# stdout NAME.out, stderr NAME.err; true once it said "ready".
ss_start() {
	local n=$1 s=$2 end
	shift 2
	$WRAP "$SS" "$s" -C "$R" "$@" >"$T_TMP/$n.out" 2>"$T_TMP/$n.err" &
	SPID=$!
	end=$(t_until 10000)
	until grep -q '^ready' "$T_TMP/$n.out"; do
		kill -0 "$SPID" 2>/dev/null || return 1
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.02
	done
}

# ss_stop NAME PID: SIGTERM; exit 0 (under valgrind: no error, no leak)
ss_stop() {
	kill -TERM "$2"
	t_wait_pid "$2" 20000
	is "$T_RC" 0 "$1: the server exits 0 on SIGTERM, everything freed"
}

# cc SOCKET LINE...: the lines through `control --connect`, replies printed
cc() {
	local s=$1
	shift
	printf '%s\n' "$@" | timeout -k 2 60 $WRAP "$SUP" control \
	    --connect "$s" 2>"$T_TMP/cc.err"
}

S=$T_TMP/a.sock
# --- 0600 from the start, even under umask 000; nothing left behind
OLD_UMASK=$(umask)
umask 000
ss_start a "$S"
ok $? "the server listens"
umask "$OLD_UMASK"
SP=$SPID
is "$(stat -c %a "$S")" 600 "the socket is 0600 right after start (umask 000)"
is "$(find "$T_TMP" -name '.ccw-sock.*' | wc -l)" 0 \
    "its private directory is gone"

# --- requests and replies: spawn, wait, close, list
r=$(cc "$S" "{\"id\":1,\"verb\":\"spawn\",\"role\":\"develop\",\
\"command\":\"exec '$FAKE' --marker $M result success\"}" \
    '{"id":2,"verb":"wait","targets":["agent-1"],"timeout_ms":20000}' \
    '{"id":3,"verb":"close","target":"agent-1"}' \
    '{"id":4,"verb":"list"}' 'not json')
rc=$?
is "$rc" 0 "control --connect exits 0 once every reply came"
is "$(grep '"id":1}' <<<"$r" | jget - '[d["ok"], d["agent_id"], d["id"]]')" \
    '[true,"agent-1",1]' "spawn through the socket"
is "$(grep '"id":2}' <<<"$r" | jget - '[d["ok"], d["timed_out"], list(d["status"])]')" \
    '[true,false,["agent-1"]]' "wait through the socket: the agent ended"
is "$(grep '"id":3}' <<<"$r" | jget - 'd["ok"]')" true "close through the socket"
is "$(grep '"id":4}' <<<"$r" | jget - 'list(d["agents"])')" '["agent-1"]' \
    "list through the socket"
like "$(grep '"id":null' <<<"$r")" 'line 5: ' \
    "a line that is no JSON is answered by the client, naming the line"
is "$(cc "$S" '{"id":5,"verb":"nope"}' | jget - 'd["error"][:19]')" \
    "unknown verb 'nope'" "the verb table's own errors come back"

# --- a live server is never stolen
ss_start b "$S"
is "$?" 1 "a second server on the same path fails"
t_wait_pid "$SPID" 10000
is "$T_RC" 1 "... exit 1"
like "$(cat "$T_TMP/b.err")" \
    "$S: a live server \\(pid $SP\\) listens there; not replaced" \
    "... naming the path and the live server's pid"
is "$(cc "$S" '{"id":6,"verb":"list"}' | jget - 'd["ok"]')" true \
    "the first still answers"

# --- another user: refused by the mode, and by SO_PEERCRED past it.
# nobody runs its copy of the probe from our temp dir (0711, under /tmp
# or $TMPDIR), in that dir: never from the checkout, which nobody may not
# reach (a clone in /root, mode 0700).
NOBODY="setpriv --reuid nobody --regid nogroup --clear-groups"
PY=/usr/bin/python3
NB=$T_TMP/nobody
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
    [ -x "$PY" ]; then
	chmod 711 "$T_TMP"
	mkdir -m 755 "$NB"
	cp "$P" "$NB/probe.py"
	chmod 644 "$NB/probe.py"
fi
# as_nobody ARGS...: the probe as nobody, in its own directory
as_nobody() {
	(cd "$NB" && $NOBODY $PY "$NB/probe.py" "$@")
}
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null ||
    [ ! -x "$PY" ]; then
	t_skip "another uid's connection: needs root, setpriv, $PY"
	t_skip "another uid's connection refused by SO_PEERCRED"
elif ! $NOBODY test -r "$NB/probe.py"; then
	t_skip "another uid's connection: nobody cannot reach $T_TMP (TMPDIR)"
	t_skip "another uid's connection refused by SO_PEERCRED"
else
	is "$(as_nobody request "$S" '{"id":1,"verb":"list"}')" \
	    "refused: Permission denied" "nobody cannot connect to the 0600 socket"
	S2=$T_TMP/w.sock
	ss_start w "$S2" -m 0666
	WP=$SPID
	is "$(as_nobody request "$S2" '{"id":1,"verb":"list"}')" \
	    closed "nobody's connection to a 0666 socket is closed at once"
	is "$(cc "$S2" '{"id":1,"verb":"sock_stats"}' | \
	    jget - '[d["refused_uid"], d["accepted"]]')" '[1,1]' \
	    "... counted as refused_uid; ours is served"
	like "$(cat "$T_TMP/w.err")" "refused a connection from uid $(id -u nobody)" \
	    "... and logged with the uid"
	ss_stop "widened" "$WP"
fi
ss_stop "first" "$SP"
ok $([ ! -e "$S" ]; echo $?) "the socket is removed on exit"

# --- a stale socket (its server killed) is replaced
ss_start c "$S"
kill -KILL "$SPID"
t_wait_pid "$SPID" 10000
ok $([ -S "$S" ]; echo $?) "a killed server leaves a stale socket"
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
    "$T_TMP/py.sock"
for stale in "$S" "$T_TMP/py.sock"; do
	ss_start d "$stale"
	ok $? "a server starts over the stale $(basename "$stale")"
	is "$(cc "$stale" '{"id":1,"verb":"list"}' | jget - 'd["ok"]')" true \
	    "... and answers there"
	ss_stop "stale $(basename "$stale")" "$SPID"
done

# --- a path that is no socket is never replaced
echo keep >"$T_TMP/file"
ss_start e "$T_TMP/file"
is "$?" 1 "a server refuses a path that is a regular file"
t_wait_pid "$SPID" 10000
like "$(cat "$T_TMP/e.err")" "exists and is not a socket; not replaced" "... saying so"
is "$(cat "$T_TMP/file")" keep "... and leaves it alone"
t_wait_gone "$M" 5000
ok $? "no agent left"
t_check_worker_logs
t_done
