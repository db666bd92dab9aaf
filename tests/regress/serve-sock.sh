#!/bin/bash
# serve-sock.sh: serve's own control socket (--socket) beside its HTTP
# side: `control --connect` opens and starts a loop and sees its events
# (a subscription), HTTP sees the same loop; the socket is 0600; a second
# serve on the same socket is refused (exit 1, naming the first's pid);
# /metrics in valid Prometheus text whose counts move while the loop
# runs; 1000 idle TCP connections and /health still answers within 1 s
# (serve started with a soft limit of 256 open files: it raises it); a
# serve killed with SIGKILL leaves a stale socket the next one replaces,
# resuming the loop, which completes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 180
t_valgrind_worker
t_marker M srvs
t_slack

OK="exec '$FAKE' --marker $M result success"
R=$T_TMP/proj
S=$T_TMP/ctl.sock
# develop hangs until $R.go exists
DEV="touch '$R.dev'; if [ -e '$R.go' ]; then $OK dev; fi; \
exec '$FAKE' --marker $M hang"
t_run_config "$R" "$OK init" "$DEV" "$OK dbg" "$OK 'all good'" "$OK done" \
    '{"grace_ms": 500}'

# cc LINE...: the lines through `control --connect $S`, replies printed
cc() {
	printf '%s\n' "$@" | timeout -k 2 60 $WRAP "$SUP" control \
	    --connect "$S" 2>"$T_TMP/cc.err"
}

# metrics_check FILE: every line of /metrics' body in FILE is a comment
# or a sample of the text format, HELP and TYPE once per family and
# before its samples, every family typed; prints "ok" or what is wrong
metrics_check() {
	python3 - "$1" <<'PYEOF'
import json, re, sys
body = json.load(open(sys.argv[1]))["body"]
name = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
lab = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
sample = re.compile(r"^(%s)(\{%s(?:,%s)*\})? -?[0-9]+(\.[0-9]+)?$" %
    (name, lab, lab))
helps, types, bad = set(), {}, []
for ln in body.splitlines():
    m = re.match(r"^# (HELP|TYPE) (%s) (.*)$" % name, ln)
    if m:
        seen = helps if m.group(1) == "HELP" else types
        if m.group(2) in seen:
            bad.append("twice: " + ln)
        if m.group(1) == "HELP":
            helps.add(m.group(2))
        elif m.group(3) not in ("counter", "gauge", "histogram", "untyped"):
            bad.append("type: " + ln)
        else:
            types[m.group(2)] = m.group(3)
        continue
    m = sample.match(ln)
    fam = m and re.sub(r"_(bucket|sum|count)$", "", m.group(1))
    if m and types.get(fam) == "histogram":
        continue
    if not m:
        bad.append("not a sample: " + ln)
    elif m.group(1) not in types:
        bad.append("untyped family: " + ln)
    elif types[m.group(1)] == "counter" and not m.group(1).endswith("_total"):
        bad.append("a counter not named _total: " + ln)
print("ok" if not bad and body.endswith("\n") else "; ".join(bad[:3]))
PYEOF
}

# metric NAME{LABELS}: its value in the last /metrics scrape
metric() {
	jget "$T_TMP/metrics" 'd["body"]' | awk -v k="$1" '$1 == k { print $2 }'
}

# --- serve with a control socket beside HTTP, under a soft limit of 256
OLD_NOFILE=$(ulimit -Sn)
[ -z "$WRAP" ] && ulimit -Sn 256
srv_start "$T_TMP/a" -C "$R" --socket "$S"
ok $? "serve listens on HTTP ($SRV_PORT) and on --socket"
ulimit -Sn "$OLD_NOFILE"
A_PID=$SRV_PID
like "$(cat "$T_TMP/a")" "control socket $S" "it names its socket on stdout"
is "$(stat -c %a "$S")" 600 "the socket is 0600"

# --- a subscriber on the socket, then a loop opened and started through it
mkfifo "$T_TMP/sub.in"
timeout -k 2 120 $WRAP "$SUP" control --connect "$S" <"$T_TMP/sub.in" \
    >"$T_TMP/sub.out" 2>"$T_TMP/sub.err" &
SUB_PID=$!
exec 7>"$T_TMP/sub.in"
echo '{"id":1,"verb":"subscribe"}' >&7
srv_wait_grep "$T_TMP/sub.out" '"id":1' 10000
is "$(grep '"id":1' "$T_TMP/sub.out" | jget - 'd["ok"]')" true \
    "subscribe through serve's socket"
r=$(cc '{"id":2,"verb":"loop_open","title":"Via the socket","start":true}')
is "$(jget - '[d["ok"], d["status"], d["started"]]' <<<"$r")" \
    '[true,"running",true]' "loop_open with start through the socket"
ID=$(jget - 'd["loop_id"]' <<<"$r")
t_wait_file "$R.dev" 10000
ok $? "the loop's develop runs"
is "$(cc "{\"id\":3,\"verb\":\"loop_status\",\"loop_id\":\"$ID\"}" |
    jget - '[d["ok"], d["status"]]')" '[true,"running"]' \
    "loop_status through the socket: running"
srv_wait_grep "$T_TMP/sub.out" "\"event\":\"worker_started\".*\"$ID\"" 10000
ok $? "the subscriber sees the loop's worker_started event"
req GET "/api/loops/v2/$ID"
is "$(jr '[d["status"], d["body"]["data"]["status"], d["body"]["data"]["title"]]')" \
    '[200,"running","Via the socket"]' "HTTP sees the same loop, running"
req GET /api/loops/v2
is "$(jr 'd["body"]["total"]')" 1 "HTTP lists it"

# --- /metrics: valid text, and the counts of a running loop
noauth GET /metrics
printf '%s\n' "$RES" >"$T_TMP/metrics"
is "$(jr '[d["status"], d["type"]]')" \
    '[200,"text/plain; version=0.0.4; charset=utf-8"]' "/metrics: 200, text 0.0.4"
is "$(metrics_check "$T_TMP/metrics")" ok \
    "/metrics: every line a sample or HELP/TYPE, once per family, all typed"
is "$(metric 'ccw_loops{status="running"}') $(metric 'ccw_loops{status="created"}')" \
    "1 0" "ccw_loops: the loop counted running"
is "$(metric ccw_loops_hosted)" 1 "ccw_loops_hosted 1"
is "$(metric 'ccw_workers{source="loop",state="running"}')" 1 \
    "ccw_workers: the loop's develop is running"
is "$(metric 'ccw_event_subscribers{via="socket"}')" 1 \
    "ccw_event_subscribers: the socket's subscriber"
E1=$(metric 'ccw_state_commits_total{by="engine"}')
ok $(( ! (E1 > 0) )) "the engine's state commits counted ($E1)"

# --- a second serve on the same socket: refused, the first untouched
srv_start "$T_TMP/b" -C "$R" --socket "$S"
is "$?" 1 "a second serve on the same socket does not start"
t_wait_pid "$SRV_PID" 10000
is "$T_RC" 1 "... exit 1"
like "$(cat "$T_TMP/b.err")" \
    "$S: a live server \\(pid $A_PID\\) listens there; not replaced" \
    "... naming the socket and the live serve's pid"
SRV_PID=$A_PID
SRV_PORT=$(sed -n 's/.*listening on http:.*:\([0-9]*\)$/\1/p' "$T_TMP/a")
is "$(cc '{"id":4,"verb":"list"}' | jget - 'd["ok"]')" true \
    "the first still answers on the socket"

# --- 1000 idle connections beside serve itself
python3 "$srcdir/tests/regress/http-probe.py" "$SRV_PORT" idle 1000 \
    >"$T_TMP/idle.out" 2>"$T_TMP/idle.err"
ok $? "the idle probe ran" || sed 's/^/#   /' "$T_TMP/idle.err"
grep '^ok ' "$T_TMP/idle.out" | while read -r _ good desc; do
	echo "# probe: $good $desc"
done
is "$(grep -c '^ok 0' "$T_TMP/idle.out")" 0 \
    "/health answers and serve holds 1000 idle connections open"
el=$(sed -n 's/^ms \([0-9]*\) \/health beside.*/\1/p' "$T_TMP/idle.out")
t_within "${el:-99999}" 1000 \
    "/health beside 1000 idle connections within 1 s (${el:-?} ms)"

# --- kill -9: the stale socket replaced, the loop resumed to its end
kill -KILL "$A_PID"
t_wait_pid "$A_PID" 5000
t_wait_gone "$M" 10000
ok $? "SIGKILL of serve: its workers went with it"
ok $([ -S "$S" ]; echo $?) "a stale socket is left behind"
exec 7>&-
t_wait_pid "$SUB_PID" 10000
touch "$R.go"
srv_start "$T_TMP/c" -C "$R" --socket "$S"
ok $? "a new serve starts over the stale socket"
C_PID=$SRV_PID
srv_wait_status "$ID" completed 20000
ok $? "it resumed the loop and the loop completed"
is "$(cc "{\"id\":5,\"verb\":\"loop_status\",\"loop_id\":\"$ID\"}" |
    jget - 'd["status"]')" completed "the new socket answers: completed"
noauth GET /metrics
printf '%s\n' "$RES" >"$T_TMP/metrics"
is "$(metric 'ccw_loops{status="completed"}') $(metric 'ccw_loops{status="running"}') $(metric ccw_loops_hosted)" \
    "1 0 0" "ccw_loops moved: completed 1, running 0, hosted 0"
E2=$(metric 'ccw_state_commits_total{by="engine"}')
ok $(( ! (E2 > 0) )) "this serve's engine commits counted ($E2)"
is "$(metric 'ccw_workers{source="loop",state="running"}')" 0 \
    "no worker running any more"
kill -TERM "$C_PID"
t_wait_pid "$C_PID" 15000
is "$T_RC" 4 "SIGTERM: exit 4"
ok $([ ! -e "$S" ]; echo $?) "the socket is removed on exit"
t_wait_gone "$M" 5000
ok $? "no agent left"
t_done
