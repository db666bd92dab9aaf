#!/bin/bash
# serve-metrics-prom.sh: the figures a user alerts on, in serve's
# /metrics.  Two loops run whose develop is claude (a stand-in replaying
# claude's real stream: tokens and cost) and whose debug and validate
# are a bash command that exits 1; then the scrape holds worker durations and
# outcomes by role, tool and outcome, tokens and cost by tool, loop
# durations and ends by final status, an MCP session opened, process_*
# and ccw_build_info, and `promtool check metrics` passes it.  A real
# Prometheus (Debian's) scrapes serve on loopback every second and
# answers "what failed in the last hour" and "p95 worker duration by
# tool".  Without promtool or prometheus those checks print SKIP.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 240
t_valgrind_worker
t_marker M srvmet

STREAMS=$(cd "$srcdir/tests/streams" && pwd)
OK="exec '$FAKE' --marker $M result success"
R=$T_TMP/proj
mkdir -p "$R/.loop"
cat >"$T_TMP/claude" <<EOF
#!/bin/bash
cat >/dev/null
exec '$FAKE' --marker $M replay "$STREAMS/claude-success.jsonl"
EOF
chmod +x "$T_TMP/claude"
python3 - "$R" "$T_TMP/claude" "$OK" <<'PYEOF'
import json, sys
root, claude, ok = sys.argv[1:4]
roles = {r: {"command": ok + " " + r, "grace_ms": 500} for r in
    ("init", "complete")}
roles["develop"] = {"tool": "claude", "grace_ms": 500}
roles["debug"] = roles["validate"] = {"command": "exit 1", "grace_ms": 500}
json.dump({"default_tool": "bash", "roles": roles,
    "tools": {"claude": {"path": claude}}},
    open(root + "/.loop/config.json", "w"), indent=1)
PYEOF

PROM_PID=
# prometheus and serve stopped by pid (and waited for) before the cleanup
T_STOP_VARS="PROM_PID SRV_PID"

srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens ($SRV_PORT)" || { t_done; exit 1; }

# scrape: /metrics' body into $T_TMP/metrics.txt
scrape() {
	python3 "$HTTPC" "$SRV_PORT" GET /metrics | jget - 'd["body"]' \
	    >"$T_TMP/metrics.txt"
}
# metric NAME{LABELS}: its value in the last scrape
metric() {
	awk -v k="$1" '$1 == k { print $2 }' "$T_TMP/metrics.txt"
}
# loop_run N: a loop created and started; waits until it is no longer
# running; prints its final status
loop_run() {
	local id st end
	req POST /api/loops/v2 "{\"title\": \"m$1\", \"max_iterations\": 2}"
	id=$(jr 'd["body"]["data"]["loop_id"]')
	echo "$id" >"$T_TMP/lid"
	req POST "/api/loops/v2/$id/start"
	end=$(t_until "$(t_ms 60000)")
	while :; do
		req GET "/api/loops/v2/$id"
		st=$(jr 'd["body"].get("data", {}).get("status")')
		case $st in created|running) ;; *) break ;; esac
		[ "$(t_now_ms)" -ge "$end" ] && break
		sleep 0.1
	done
	srv_wait_hosted 0 "$(t_ms 10000)"
	echo "$st"
}

# --- before any loop: the families are there, empty
scrape
like "$(cat "$T_TMP/metrics.txt")" '# TYPE ccw_worker_duration_seconds histogram' \
    "ccw_worker_duration_seconds is a histogram"
VER=$("$SUP" --version | awk '{ print $2 }')
is "$(metric "ccw_build_info{version=\"$VER\"}")" 1 "ccw_build_info{version=\"$VER\"} 1"
NOW=$(date +%s)
is "$(metric process_start_time_seconds | awk -v n="$NOW" \
    '{ print ($1 > n - 3600 && $1 <= n + 1) }')" 1 \
    "process_start_time_seconds: within the last hour"
is "$(awk '$1 == "process_open_fds" { o = $2 } $1 == "process_max_fds" { m = $2 }
    $1 == "process_resident_memory_bytes" { r = $2 }
    END { print (o > 2 && m >= o && r > 1000000) }' "$T_TMP/metrics.txt")" 1 \
    "process_open_fds, process_max_fds, process_resident_memory_bytes: plausible"
like "$(metric process_cpu_seconds_total)" '^[0-9]+\.[0-9]+$' "process_cpu_seconds_total"

# --- a real Prometheus scraping serve every second, if there is one
# prom_start: prometheus on a free loopback port ($PP, $PROM_PID), ready
# (its /-/ready answers 200); a port taken meanwhile: another, 3 tries
prom_start() {
	local try end
	mkdir -p "$T_TMP/tsdb"
	for try in 1 2 3; do
		PP=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		cat >"$T_TMP/prom.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: ccw
    static_configs:
      - targets: ['127.0.0.1:$SRV_PORT']
EOF
		"$PROM" --config.file="$T_TMP/prom.yml" \
		    --storage.tsdb.path="$T_TMP/tsdb" \
		    --web.listen-address="127.0.0.1:$PP" --log.level=warn \
		    >"$T_TMP/prom.log" 2>&1 &
		PROM_PID=$!
		end=$(t_until "$(t_ms 60000)")
		while kill -0 "$PROM_PID" 2>/dev/null; do
			[ "$(promget /-/ready)" = 200 ] && return 0
			[ "$(t_now_ms)" -ge "$end" ] && return 1
			sleep 0.2
		done
		wait "$PROM_PID"
		PROM_PID=
	done
	return 1
}
# promget PATH: the status of a GET of prometheus's PATH (no proxy)
promget() {
	python3 - "$PP" "$1" <<'PYEOF'
import sys, urllib.request
o = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    print(o.open("http://127.0.0.1:%s%s" % (sys.argv[1], sys.argv[2]),
        timeout=5).status)
except Exception:
    print(0)
PYEOF
}
PROM=$(command -v prometheus)
if [ -n "$PROM" ]; then
	prom_start
	ok $? "prometheus runs on 127.0.0.1:$PP" ||
	    sed 's/^/#   /' "$T_TMP/prom.log" | head -n 20
fi

# promql EXPR: the query's result vector as [[labels, value], ...]
promql() {
	python3 - "$PP" "$1" <<'PYEOF'
import json, sys, urllib.parse, urllib.request
port, q = sys.argv[1], sys.argv[2]
try:
    u = "http://127.0.0.1:%s/api/v1/query?%s" % (port,
        urllib.parse.urlencode({"query": q}))
    o = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    d = json.load(o.open(u, timeout=5))
    print(json.dumps([[r["metric"], float(r["value"][1])]
        for r in d["data"]["result"]], sort_keys=True))
except Exception:
    print("[]")
PYEOF
}
# prom_until EXPR PYCOND MS: poll the query until PYCOND holds over its
# result r (a list of [labels, value]); the last result in $PR
prom_until() {
	local end
	end=$(t_until "$3")
	while :; do
		PR=$(promql "$1")
		[ "$(jget - "$2" <<<"{\"r\": $PR}")" = true ] && return 0
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		kill -0 "$PROM_PID" 2>/dev/null || return 1
		sleep 0.5
	done
}
if [ -n "$PROM_PID" ]; then
	prom_until 'up{job="ccw"}' \
	    'bool(d["r"]) and d["r"][0][1] == 1' "$(t_ms 60000)"
	ok $? "prometheus scrapes serve (up 1)" || sed 's/^/#   /' "$T_TMP/prom.log"
else
	t_skip "prometheus is not installed (Debian's package prometheus)"
fi

# --- a first loop: develop on claude succeeds, the next role exits 1
ST1=$(loop_run 1)
like "$ST1" '^(failed|completed)$' "the first loop ended ($ST1)"
scrape
is "$(metric 'ccw_worker_outcomes_total{role="develop",tool="claude",outcome="success"}')" 1 \
    "ccw_worker_outcomes_total: develop on claude, success"
FAILED=$(awk '/^ccw_worker_outcomes_total\{role="[a-z]*",tool="bash",outcome="/ &&
    !/outcome="success"/ { n += $2 } END { print n + 0 }' "$T_TMP/metrics.txt")
ok $(( FAILED < 1 )) "ccw_worker_outcomes_total: a bash role's exit 1 is counted as a failure ($FAILED)" ||
    grep '^ccw_worker_outcomes_total' "$T_TMP/metrics.txt" | sed 's/^/#   /'

is "$(metric 'ccw_worker_duration_seconds_count{role="develop",tool="claude",outcome="success"}') $(metric 'ccw_worker_duration_seconds_bucket{role="develop",tool="claude",outcome="success",le="+Inf"}')" \
    "1 1" "ccw_worker_duration_seconds: the develop run in _count and le=+Inf"
# the loop's usage as its state file sums it: claude's alone
U=$(jget "$R/.loop/$(cat "$T_TMP/lid").json" \
    'd["skill_state"]["usage"]["input_tokens"], d["skill_state"]["usage"]["output_tokens"], d["skill_state"]["usage"]["cost_usd"]' |
    tr -d '[]' | awk -F, '{ printf "%d %d %.6f", $1, $2, $3 }')
like "$U" '^[1-9][0-9]* [1-9][0-9]* 0\.0[0-9]*[1-9]' "the loop's state holds claude's usage ($U)"
is "$(metric 'ccw_worker_tokens_total{tool="claude",direction="in"}') $(metric 'ccw_worker_tokens_total{tool="claude",direction="out"}') $(metric 'ccw_worker_cost_usd_total{tool="claude"}')" \
    "$U" "ccw_worker_tokens_total{tool,direction} and ccw_worker_cost_usd_total{tool}: claude's usage"
is "$(metric "ccw_loops_ended_total{status=\"$ST1\"}") $(metric "ccw_loop_duration_seconds_count{status=\"$ST1\"}")" \
    "1 1" "ccw_loops_ended_total and ccw_loop_duration_seconds by final status ($ST1)"
# le NAME{FIRST: the le values of the family's first row
le() {
	grep -F "$1" "$T_TMP/metrics.txt" | sed -n 's/.*,le="\([^"]*\)".*/\1/p' |
	    tr '\n' ' '
}
is "$(le 'ccw_loop_duration_seconds_bucket{')" \
    "60 300 900 1800 3600 7200 14400 43200 86400 +Inf " "the loop histogram's buckets"
is "$(le 'ccw_worker_duration_seconds_bucket{role="develop",tool="claude",outcome="success",')" \
    "1 5 15 60 300 900 3600 +Inf " "the worker histogram's buckets"

# --- an MCP session opened and ended
python3 - "$SRV_PORT" "$SRV_TOKEN" <<'PYEOF'
import http.client, json, sys
port, tok = int(sys.argv[1]), sys.argv[2]
h = {"Authorization": "Bearer " + tok, "Content-Type": "application/json",
     "Accept": "application/json, text/event-stream"}
c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
c.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 1,
    "method": "initialize", "params": {"protocolVersion": "2025-06-18",
    "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}), h)
r = c.getresponse(); r.read()
sid = r.getheader("Mcp-Session-Id")
h["Mcp-Session-Id"] = sid
c.request("DELETE", "/mcp", headers=h)
c.getresponse().read()
PYEOF
scrape
is "$(metric ccw_mcp_sessions_opened_total) $(metric 'ccw_mcp_sessions_ended_total{reason="deleted"}') $(metric ccw_mcp_sessions)" \
    "1 1 0" "ccw_mcp_sessions_opened_total 1, ended by DELETE 1, open 0"

# --- promtool on the scrape
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$T_TMP/metrics.txt" >"$T_TMP/promtool.out" 2>&1
	ok $? "promtool check metrics: the scrape passes" ||
	    sed 's/^/#   /' "$T_TMP/promtool.out" | head -n 20
else
	t_skip "promtool is not installed (Debian's package prometheus)"
fi

# --- Prometheus: the first loop's series seen, a second loop, the answers
if [ -n "$PROM_PID" ]; then
	prom_until 'ccw_worker_outcomes_total{outcome!="success"}' \
	    'bool(d["r"])' "$(t_ms 30000)"
	ok $? "prometheus has the failed outcome's series"
	ST2=$(loop_run 2)
	like "$ST2" '^(failed|completed)$' "the second loop ended ($ST2)"
	prom_until 'sum by (outcome) (increase(ccw_worker_outcomes_total{outcome!="success"}[1h]))' \
	    'bool(d["r"]) and all(v > 0 for m, v in d["r"])' "$(t_ms 30000)"
	ok $? "PromQL: what failed in the last hour: $PR"
	is "$(jget - '[m.get("outcome") != "success" for m, v in d["r"]] == [True] * len(d["r"])' <<<"{\"r\": $PR}")" \
	    true "PromQL: failures by outcome, no success among them"
	prom_until 'histogram_quantile(0.95, sum by (le, tool) (rate(ccw_worker_duration_seconds_bucket[1h])))' \
	    'sorted(m["tool"] for m, v in d["r"] if 0 < v <= 3600) == ["bash", "claude"]' \
	    "$(t_ms 30000)"
	ok $? "PromQL: p95 worker duration by tool (bash, claude; seconds): $PR"
else
	t_skip "prometheus is not installed: no PromQL checks"
fi

# --- serve stops cleanly (under valgrind: no error, no leak of the meters)
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" "$(t_ms 15000)"
like "$T_RC" '^(0|4)$' "serve stops on SIGTERM (exit $T_RC)"
SRV_PID=
t_done
