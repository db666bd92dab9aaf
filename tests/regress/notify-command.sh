#!/bin/bash
# notify-command.sh: the config's `notify` through real `run`s of bash
# loops: a command sink gets the completed and the failed bodies on its
# stdin; stuck told once while a worker is silent, the second stuck of
# the same loop debounced; a sink that hangs is killed at its deadline and
# dead-lettered while the loop completes; bad configs refused naming the
# key; the desktop sink without a session bus fails saying so, and with
# one (dbus-daemon, notify-send, a notification server) is delivered.
. "$(dirname "$0")/lib.sh"
t_watchdog 60
t_marker M notify

OK="exec '$FAKE' --marker $M result success"
SINK=$(cd "$srcdir" && pwd)/tests/regress/sink-append.sh

# ncfg ROOT INIT DEVELOP DEBUG VALIDATE COMPLETE NOTIFY: every role's bash
# command and the config's notify (JSON).
ncfg() {
	mkdir -p "$1/.loop"
	python3 - "$@" <<'PYEOF'
import json, sys
root, cmds, notify = sys.argv[1], sys.argv[2:7], json.loads(sys.argv[7])
roles = {n: {"command": c, "grace_ms": 500} for n, c in
    zip(["init", "develop", "debug", "validate", "complete"], cmds)}
json.dump({"default_tool": "bash", "roles": roles, "notify": notify},
    open(root + "/.loop/config.json", "w"), indent=1)
PYEOF
}

# rules ON SINK_JSON: a notify object of one sink "s" for the kinds ON.
rules() {
	printf '{"sinks": {"s": %s}, "rules": [{"on": %s, "sink": "s"}]}' \
	    "$2" "$1"
}

# --- completed and failed: the body on the command's stdin
R=$T_TMP/done
ncfg "$R" "$OK" "$OK" "$OK" "$OK" "$OK" \
    "$(rules '["failed", "completed"]' "{\"type\": \"command\", \"argv\": [\"$SINK\", \"$R.got\"]}")"
t_loop_run "$R" done-1 "Finish"
is "$RC" 0 "completed: exit 0"
is "$(jget "$R.got" '[d["kind"], d["loop_id"], d["event"]["final_status"], "loop done-1 completed" in d["text"], bool(d["at"])]' 2>&1)" \
    '["completed","done-1","completed",true,true]' \
    "completed: the sink got the body (kind, loop_id, event, text, at)"

R=$T_TMP/fail
ncfg "$R" "$OK" "$OK" "exec '$FAKE' --marker $M result failed 'cannot reproduce'" \
    "$OK" "$OK" \
    "$(rules '["failed", "completed"]' "{\"type\": \"command\", \"argv\": [\"$SINK\", \"$R.got\"]}")"
t_loop_run "$R" fail-1 "Fail in debug"
is "$RC" 1 "failed: exit 1"
is "$(jget "$R.got" '[d["kind"], d["loop_id"], d["event"]["reason"]]' 2>&1)" \
    '["failed","fail-1","debug failed: cannot reproduce"]' \
    "failed: the sink got the failed body with the reason"

# --- stuck: develop and debug each silent until the test lets them go;
# the first stuck is delivered, the second (same loop, same kind) is
# debounced; nothing is timed, the files and the log are polled
R=$T_TMP/stuck
WAIT="while [ ! -e '$R.go1' ]; do sleep 0.05; done; $OK"
WAIT2="while [ ! -e '$R.go2' ]; do sleep 0.05; done; $OK"
ncfg "$R" "$OK" "$WAIT" "$WAIT2" "$OK" "$OK" \
    "{\"stuck_ms\": 300, \"sinks\": {\"s\": {\"type\": \"command\", \"argv\": [\"$SINK\", \"$R.got\"]}}, \"rules\": [{\"on\": [\"stuck\"], \"sink\": \"s\"}]}"
$WRAP "$SUP" -v run -C "$R" --loop-id stuck-1 "Be slow" >"$R.out" \
    2>"$R.err" &
PID=$!
t_wait_file "$R.got" 20000
ok $? "stuck: told while develop is silent"
touch "$R.go1"
end=$(t_until 20000)
until grep -q 'notify: stuck of stuck-1 debounced' "$R.err" ||
    [ "$(t_now_ms)" -ge "$end" ]; do
	sleep 0.05
done
like "$(cat "$R.err")" 'notify: stuck of stuck-1 debounced' \
    "stuck: the second, debug's, debounced (said with -v)"
touch "$R.go2"
wait "$PID"
is "$?" 0 "stuck: the loop completes"
is "$(jget "$R.got" '[d["kind"], d["loop_id"], d["event"]["silent_ms"] >= 300]' 2>&1)" \
    '["stuck","stuck-1",true]' "stuck: one delivery, the body says how long"

# --- a sink that hangs: killed at its deadline, dead-lettered; the loop
# completes all the same
R=$T_TMP/hang
ncfg "$R" "$OK" "$OK" "$OK" "$OK" "$OK" \
    "$(rules '["completed"]' "{\"type\": \"command\", \"timeout_ms\": 300, \"argv\": [\"/bin/sh\", \"-c\", \"cat >/dev/null; sleep 60; :\", \"$M\"]}")"
t_loop_run "$R" hang-1 "Hang the sink"
is "$RC" 0 "hang: the loop completes (exit 0)"
D=$R/.loop/notify.dead.jsonl
is "$(jget "$D" '[d["sink"], d["kind"], d["loop_id"], d["attempts"], "killed" in d["error"], d["body"]["loop_id"]]' 2>&1)" \
    '["s","completed","hang-1",1,true,"hang-1"]' \
    "hang: one dead letter (sink, kind, loop, attempts, error, body)"
like "$(cat "$R.err")" 'notify: completed of hang-1 to sink s failed: .*killed' \
    "hang: a warning on stderr"
t_wait_gone "$M" 5000
ok $? "hang: the sink's processes are gone"
is "$(stat -c %a "$D")" 600 "hang: the dead-letter log is mode 0600"

# --- batch (its loops on a host): the item's completed and the batch's
# batch_completed, both delivered before batch exits
R=$T_TMP/batch
ncfg "$R" "$OK" "$OK" "$OK" "$OK" "$OK" \
    "$(rules '["completed", "batch_completed"]' "{\"type\": \"command\", \"argv\": [\"$SINK\", \"$R.got\"]}")"
t_batch_items "$R.items" 1
timeout -k 2 60 $WRAP "$SUP" batch "$R.items" -C "$R" >"$R.out" 2>"$R.err"
is "$?" 0 "batch: exit 0"
BID=$(t_batch_id "$R.err")
is "$(python3 -c '
import json, sys
print(sorted((d["kind"], bool(d["loop_id"]), d["batch_id"] or "") for d in
    (json.loads(l) for l in open(sys.argv[1]) if l.strip())))' "$R.got" 2>&1)" \
    "[('batch_completed', False, '$BID'), ('completed', True, '')]" \
    "batch: the loop's completed and the batch's batch_completed"

# --- bad configs: refused, the key named, non-zero exit
bad() {
	R=$T_TMP/bad
	rm -rf "$R"
	ncfg "$R" "$OK" "$OK" "$OK" "$OK" "$OK" "$1"
	t_loop_run "$R" bad-1 "Never"
	ok $(( RC == 0 )) "bad config ($3): exit $RC"
	like "$(cat "$R.err")" "$2" "bad config ($3): the error names the key"
	ok $([ ! -e "$R/.loop/bad-1.json" ]; echo $?) \
	    "bad config ($3): no loop made"
}
bad "$(rules '["failed", "finished"]' '{"type": "command", "argv": ["true"]}')" \
    "notify\\.rules\\[0\\]\\.on\\[1\\]: unknown kind 'finished'" "unknown kind"
bad "$(rules '["failed"]' '{"type": "command"}')" \
    'notify\.sinks\.s\.argv: expected a non-empty array' "missing argv"
bad '{"sinks": {}, "rules": [{"on": ["failed"], "sink": "ops"}]}' \
    "notify\\.rules\\[0\\]\\.sink: unknown sink 'ops'" "unknown sink"

# --- desktop without a session bus: the delivery fails, saying why
R=$T_TMP/desk
ncfg "$R" "$OK" "$OK" "$OK" "$OK" "$OK" "$(rules '["completed"]' '{"type": "desktop"}')"
DBUS_SESSION_BUS_ADDRESS= t_loop_run "$R" desk-1 "No bus"
is "$RC" 0 "desktop, no bus: the loop completes"
is "$(jget "$R/.loop/notify.dead.jsonl" '[d["sink"], d["error"]]' 2>&1)" \
    '["s","no session bus (DBUS_SESSION_BUS_ADDRESS unset)"]' \
    "desktop, no bus: dead-lettered, saying no session bus"

# --- desktop with a private session bus: a notification server of the
# test's own (python3-dbus) on it gets notify-send's Notify
SYSPY=/usr/bin/python3
if ! command -v notify-send >/dev/null || ! command -v dbus-daemon \
    >/dev/null || ! "$SYSPY" -c 'import dbus, gi' 2>/dev/null; then
	t_skip "desktop: needs notify-send (libnotify-bin), dbus-daemon, python3-dbus, python3-gi"
else
	BUS_OUT=$T_TMP/bus
	dbus-daemon --session --fork --print-address=1 --print-pid=1 \
	    >"$BUS_OUT" 2>/dev/null
	BUS_ADDR=$(sed -n 1p "$BUS_OUT")
	BUS_PID=$(sed -n 2p "$BUS_OUT")
	DBUS_SESSION_BUS_ADDRESS=$BUS_ADDR "$SYSPY" - "$T_TMP/notes" <<'PYEOF' &
import sys, dbus, dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib
DBusGMainLoop(set_as_default=True)
I = "org.freedesktop.Notifications"
class S(dbus.service.Object):
    @dbus.service.method(I, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("test", "ccw", "1", "1.2")
    @dbus.service.method(I, in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["body"]
    @dbus.service.method(I, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app, rid, icon, summary, body, actions, hints, t):
        with open(sys.argv[1], "a") as f:
            f.write("%s|%s|%s\n" % (app, summary, body))
        return 1
    @dbus.service.method(I, in_signature="u", out_signature="")
    def CloseNotification(self, i):
        pass
name = dbus.service.BusName(I, dbus.SessionBus())
S(dbus.SessionBus(), "/org/freedesktop/Notifications")
open(sys.argv[1] + ".up", "w").close()
GLib.MainLoop().run()
PYEOF
	SRV_PID=$!
	T_STOP_VARS="SRV_PID BUS_PID"
	t_wait_file "$T_TMP/notes.up" 10000
	ok $? "desktop: a notification server on a private session bus"
	R=$T_TMP/desk2
	ncfg "$R" "$OK" "$OK" "$OK" "$OK" "$OK" \
	    "$(rules '["completed"]' '{"type": "desktop", "timeout_ms": 5000}')"
	DBUS_SESSION_BUS_ADDRESS=$BUS_ADDR t_loop_run "$R" desk-2 "A bus"
	is "$RC" 0 "desktop: the loop completes"
	is "$(cat "$T_TMP/notes" 2>&1)" \
	    "ccw-supervisor|ccw-supervisor: completed|ccw-supervisor: loop desk-2 completed" \
	    "desktop: notify-send's Notify (app, summary, the body's text)"
	ok $([ ! -e "$R/.loop/notify.dead.jsonl" ]; echo $?) \
	    "desktop: no dead letter"
fi

t_done
