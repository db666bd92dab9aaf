#!/bin/bash
# serve-rebind.sh: serve against DNS rebinding and cross-site requests
# (issue 23), by raw sockets (rebind-probe.py): every route of serve's
# table with a foreign Host, a foreign Origin, Origin null, our name on
# another port and two Host fields; the two-step attack (the token, then
# POST /api/agents running `touch MARKER`) never runs the command and
# never shows the token; the same on --http 0.0.0.0 --token-file; the
# token's cookie (attributes, it authorizes, not from another site), the
# 401's WWW-Authenticate, --allowed-host for a reverse proxy.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 120
t_slack

P="$srcdir/tests/regress/rebind-probe.py"
SERVE_C="$srcdir/supervisor/api/serve.c"
R=$T_TMP/proj
mkdir -p "$R"
t_run_config "$R" true true true true true
BAD=$T_TMP/pwned
GOOD=$T_TMP/legit

# probe CASE ARGS: one probe against the serve running; its lines checks
probe() {
	python3 "$P" "$SRV_PORT" "$SRV_TOKEN" "$SERVE_C" "$@" \
	    >"$T_TMP/probe.out" 2>"$T_TMP/probe.err"
	ok $? "probe $1 ran" || sed 's/^/#   /' "$T_TMP/probe.err"
	t_probe_out "$T_TMP/probe.out" "$TAG $1: "
}

# nothing_ran: no loop created, no agent spawned, no marker; then a
# legitimate spawn of `touch $GOOD` runs (so a refused one queued
# before it would have run too), and still no $BAD
nothing_ran() {
	req GET /api/loops/v2
	is "$(jr '[d["status"], d["body"]["total"]]')" '[200,0]' \
	    "$TAG: no loop was created by a refused request"
	req GET /api/agents
	is "$(jr '[d["status"], d["body"]["agents"]]')" '[200,{}]' \
	    "$TAG: no agent was spawned by a refused request"
	rm -f "$GOOD"
	req POST /api/agents "{\"role\": \"develop\", \"tool\": \"bash\", \"command\": \"touch '$GOOD'\"}"
	AG=$(jr 'd["body"].get("agent_id")')
	is "$(jr 'd["status"]')" 200 "$TAG: a legitimate spawn is accepted"
	req POST /api/agents/wait "{\"targets\": [\"$AG\"], \"timeout_ms\": $(t_ms 20000)}"
	t_wait_file "$GOOD" 10000
	ok $? "$TAG: the legitimate command ran"
	ok "$([ ! -e "$BAD" ]; echo $?)" "$TAG: the attacker's command never ran"
}

# --- on loopback
TAG=loopback
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens on loopback ($SRV_PORT)" || { t_done; exit 1; }
like "$SRV_TOKEN" '^[0-9a-f]{32}$' "the token from our own Host"
probe routes "$BAD"
probe attack "$BAD"
nothing_ran
probe legit
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
is "$T_RC" 4 "SIGTERM: exit 4"

# --- on every interface with a token file: the same names only
TAG=0.0.0.0
printf 'file-token-%s\n' "$RANDOM" >"$T_TMP/tok"
chmod 0600 "$T_TMP/tok"
SRV_ADDR=0.0.0.0 srv_start "$T_TMP/srv0" -C "$R" --token-file "$T_TMP/tok"
ok $? "serve listens on 0.0.0.0 ($SRV_PORT)" || { t_done; exit 1; }
like "$(cat "$T_TMP/srv0")" "listening on http://0.0.0.0:" "it says 0.0.0.0"
is "$SRV_TOKEN" "$(head -n 1 "$T_TMP/tok")" "the file's token from our own Host"
probe routes "$BAD"
probe attack "$BAD"
nothing_ran
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
is "$T_RC" 4 "SIGTERM: exit 4"

# --- behind a reverse proxy: --allowed-host
TAG=proxy
timeout 10 $WRAP "$SUP" serve -C "$R" --no-socket --http 127.0.0.1:0 \
    --allowed-host 'https://x/' >/dev/null 2>"$T_TMP/ah.err"
is "$?" 2 "--allowed-host with a scheme: exit 2"
like "$(cat "$T_TMP/ah.err")" "allowed-host" "says which option"
srv_start "$T_TMP/srvp" -C "$R" --allowed-host proxy.example \
    --allowed-host 'PROXY2.example:8443'
ok $? "serve listens with --allowed-host ($SRV_PORT)" || { t_done; exit 1; }
probe proxy proxy.example
python3 "$P" "$SRV_PORT" "$SRV_TOKEN" "$SERVE_C" attack "$BAD" \
    >"$T_TMP/probe.out" 2>&1
t_probe_out "$T_TMP/probe.out" "proxy attack: "
RES=$(python3 - "$SRV_PORT" "$SRV_TOKEN" <<'PYEOF'
import http.client, json, sys
out = []
for host in ("proxy2.example:8443", "proxy2.example:9999"):
    c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
    c.putrequest("GET", "/api/loops/v2", skip_host=True)
    c.putheader("Host", host)
    c.putheader("Authorization", "Bearer " + sys.argv[2])
    c.endheaders()
    out.append(c.getresponse().status)
print(json.dumps(out, separators=(",", ":")))
PYEOF
)
is "$RES" '[200,421]' "--allowed-host NAME:PORT: that port only"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 15000
is "$T_RC" 4 "SIGTERM: exit 4"
ok "$([ ! -e "$BAD" ]; echo $?)" "the attacker's command never ran"
t_done
