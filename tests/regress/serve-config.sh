#!/bin/bash
# serve-config.sh: serve's configuration is live.  A loop started after
# .loop/config.json changed runs with the new file; a file that does not
# parse leaves the one in force, with a CONFIG_WARNING event on
# /api/events and a log line; SIGHUP reads every root's configuration
# again and serve goes on answering; SIGTERM exits 4 (the shipped unit's
# SuccessExitStatus).  Under systemd's NOTIFY_SOCKET (a path, then an
# abstract name) serve sends READY=1 once it listens, RELOADING=1 with
# MONOTONIC_USEC and READY=1 on SIGHUP, STOPPING=1 on SIGTERM.  The
# shipped unit passes `systemd-analyze verify` where that is installed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 120
t_valgrind_worker
t_marker M srvc
t_slack

export HOME=$T_TMP/home
unset CCW_DATA_DIR
mkdir -p "$HOME/.claude"
echo '{"version": "3.4.0", "tools": {"codex": {"enabled": true}, "gemini": {"enabled": true}}}' \
    >"$HOME/.claude/cli-tools.json"
OK="exec '$FAKE' --marker $M result success"
R=$T_TMP/proj

# cfg VERSION [TOOLS_JSON]: the roles' config; init appends VERSION to
# $R.seen, so each loop tells which configuration it ran with
cfg() {
	t_run_config "$R" "echo $1 >>'$R.seen'; $OK init" "$OK dev" "$OK dbg" \
	    "$OK 'all good'" "$OK done" '{"grace_ms": 500}'
	[ -n "${2:-}" ] && python3 - "$R/.loop/config.json" "$2" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["tools"] = json.loads(sys.argv[2])
json.dump(c, open(sys.argv[1] + ".new", "w"))
EOF
	[ -n "${2:-}" ] && mv "$R/.loop/config.json.new" "$R/.loop/config.json"
	return 0
}

# loop_run TITLE: create and start a loop, wait until it completed; the
# last version its init saw is $SEEN
loop_run() {
	req POST /api/loops/v2 "{\"title\": \"$1\"}"
	LID=$(jr 'd["body"]["data"]["loop_id"]')
	req POST "/api/loops/v2/$LID/start"
	srv_wait_status "$LID" completed 20000
	SEEN=$(tail -n 1 "$R.seen" 2>/dev/null)
}

# notify_listen ADDR OUT SRVOUT: a datagram socket at ADDR (@: abstract)
# as systemd's, each message a JSON line in OUT with whether SRVOUT (serve's
# stdout) said it listens when the message came; ends after STOPPING=1
cat >"$T_TMP/listen.py" <<'EOF'
import json, os, socket, sys
addr, out, srvout = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
f = open(out, "a")
f.write('{"bound": true}\n')
f.flush()
while True:
    m = s.recv(4096).decode()
    try:
        said = "listening on http" in open(srvout).read()
    except OSError:
        said = False
    f.write(json.dumps({"msg": m, "listening": said}) + "\n")
    f.flush()
    if m.startswith("STOPPING=1"):
        break
EOF
notify_listen() {
	: >"$2"
	python3 "$T_TMP/listen.py" "$@" &
	NPID=$!
	srv_wait_grep "$2" bound 5000
}

# nmsgs OUT PREFIX: the messages in OUT that start with PREFIX, as JSON
nmsgs() {
	python3 -c '
import json, sys
print(json.dumps([e for e in map(json.loads, open(sys.argv[1]))
    if "msg" in e and e["msg"].startswith(sys.argv[2])]))' "$1" "$2"
}

cfg v1
N=$T_TMP/notify.sock
notify_listen "$N" "$T_TMP/n1" "$T_TMP/srv"
ok $? "a notify socket listens at a path"
export NOTIFY_SOCKET=$N
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens" || { t_done; exit 1; }
unset NOTIFY_SOCKET
srv_wait_grep "$T_TMP/n1" 'READY=1' 10000
ok $? "NOTIFY_SOCKET (a path): READY=1"
is "$(nmsgs "$T_TMP/n1" READY=1)" '[{"msg": "READY=1", "listening": true}]' \
    "READY=1 once, after serve said it listens"
srv_events "$T_TMP/ev"
ok $? "/api/events: subscribed"

# --- a loop starts: the configuration as it is now
loop_run "one"
is "$SEEN" v1 "the first loop ran with the configuration serve started with"
cfg v2
loop_run "two"
is "$SEEN" v2 "config.json changed: the next loop runs with the new one"

# --- a file that does not parse: the one in force stays, said
printf '{"roles": {"init": ' >"$R/.loop/config.json"
loop_run "three"
srv_wait_grep "$T_TMP/ev" '^event: CONFIG_WARNING' 5000
ok $? "a broken config.json: CONFIG_WARNING on /api/events"
like "$(grep '^data: .*CONFIG_WARNING' "$T_TMP/ev" | head -n 1)" \
    "\"root\": ?\"$R\".*config.json.*a loop starts.*stays" \
    "CONFIG_WARNING names the root, the file, when, and that the old one stays"
is "$SEEN" v2 "the loop ran with the configuration in force (v2)"
like "$(cat "$T_TMP/srv.err")" "$R: configuration: .*config.json" \
    "a log line says it"

# --- SIGHUP: read again, serve goes on
kill -HUP "$SRV_PID"
srv_wait_grep "$T_TMP/ev" '^data: .*CONFIG_WARNING.*SIGHUP' 5000
ok $? "SIGHUP reads the (still broken) file again: CONFIG_WARNING"
noauth GET /health
is "$(jr 'd["status"]')" 200 "SIGHUP: serve still answers"
kill -0 "$SRV_PID" 2>/dev/null
ok $? "SIGHUP: serve still runs"
srv_wait_grep "$T_TMP/n1" 'RELOADING=1' 5000
is "$(nmsgs "$T_TMP/n1" RELOADING=1 | jget - '[e["msg"].split("\n")[1].split("=")[0] for e in d]')" \
    '["MONOTONIC_USEC"]' "SIGHUP: RELOADING=1 with MONOTONIC_USEC"
ready_twice() {
	local end
	end=$(t_until 5000)
	until [ "$(nmsgs "$T_TMP/n1" READY=1 | jget - 'len(d)')" = 2 ]; do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.05
	done
}
ready_twice
ok $? "SIGHUP: READY=1 again after the reload"

req POST /api/loops/v2 '{"title": "tasks"}'
TL=$(jr 'd["body"]["data"]["loop_id"]')
req POST "/api/loops/v2/$TL/tasks" '{"description": "G", "tool": "gemini", "mode": "write", "prompt_template": "p"}'
is "$(jr 'd["status"]')" 200 "gemini enabled: a task with it is taken"
cfg v3 '{"gemini": {"enabled": false}}'
kill -HUP "$SRV_PID"
end=$(t_until 5000)
while :; do
	req POST "/api/loops/v2/$TL/tasks" '{"description": "G", "tool": "gemini", "mode": "write", "prompt_template": "p"}'
	[ "$(jr 'd["status"]')" = 400 ] && break
	[ "$(t_now_ms)" -ge "$end" ] && break
	sleep 0.05
done
is "$(jr 'd["status"]')" 400 "SIGHUP read the file again: gemini disabled there, refused (400)"
is "$(grep -c '^event: CONFIG_WARNING' "$T_TMP/ev")" 2 \
    "a config that loads sends no warning"

# --- SIGTERM: exit 4, STOPPING=1
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
is "$T_RC" 4 "SIGTERM: exit 4 (the unit's SuccessExitStatus)"
t_wait_pid "$NPID" 5000
is "$(nmsgs "$T_TMP/n1" STOPPING=1 | jget - 'len(d)')" 1 "SIGTERM: STOPPING=1"
t_wait_pid "$EVPID" 5000

# --- an abstract socket name
A="@ccw-test-notify-$$-$RANDOM"
notify_listen "$A" "$T_TMP/n2" "$T_TMP/srv2"
ok $? "a notify socket listens at an abstract name"
export NOTIFY_SOCKET=$A
srv_start "$T_TMP/srv2" -C "$R"
ok $? "serve listens"
unset NOTIFY_SOCKET
srv_wait_grep "$T_TMP/n2" 'READY=1' 10000
ok $? "NOTIFY_SOCKET (@abstract): READY=1"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
is "$T_RC" 4 "SIGTERM: exit 4"
t_wait_pid "$NPID" 5000
is "$(nmsgs "$T_TMP/n2" '' | jget - '[e["msg"] for e in d]')" \
    '["READY=1","STOPPING=1"]' "@abstract: READY=1, then STOPPING=1"

# --- the shipped unit
UNIT=$srcdir/examples/systemd/ccw-supervisor.service.in
like "$(grep -E '^(Type|SuccessExitStatus|ExecReload)=' "$UNIT" | tr '\n' ' ')" \
    '^Type=notify ExecReload=.*SuccessExitStatus=4 $' \
    "the unit: Type=notify, SIGHUP to reload, exit 4 a success"
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$T_TMP/unit"
	sed "s|@bindir[@]|$top_builddir|g" "$UNIT" \
	    >"$T_TMP/unit/ccw-supervisor.service"
	out=$(systemd-analyze verify --man=no \
	    "$T_TMP/unit/ccw-supervisor.service" 2>&1)
	ok $? "systemd-analyze verify: the unit is valid"
	[ -n "$out" ] && printf '#   %s\n' "$out"
else
	t_skip "systemd-analyze is not installed: the unit is not verified"
fi
t_done
