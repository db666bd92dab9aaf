#!/bin/bash
# serve-page.sh: serve's status page (GET /) in a real browser: Debian's
# chromium, headless, driven by playwright-core from npm (installed into
# the build tree, tests/page-npm, never committed) through
# serve-page.mjs: a loop of slow fake agents shows with its worker's live
# progress line, pause/resume/stop clicks change the status (the API
# agrees), a title holding <script> stays text, the running loop says
# the pid that drives it and one whose `run` was killed -9 shows
# interrupted, a crashed worker's kind is shown, a parallel loop's
# merge record (each writer's branch, diff stat, outcome) is shown; the
# loop list of issue 28 (a failed loop's reason, iteration of max, times,
# buttons named with their loop, start, the create form, filters,
# delete, axe-core, focus, 800 px) and serve restarted on its port under
# the open page (restart.sh below).  Screenshots at 1280x800 and 800x600
# are kept as tests/regress/serve-page{,-800}.png in the build tree.
# Without node, chromium or the npm registry the whole test is one SKIP;
# without @axe-core/playwright only the axe checks SKIP.
# CCW_PAGE_NPM_DIR: page-npm.sh's install elsewhere (CI keeps one);
# CCW_CHROMIUM: another browser binary.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"

. "$(dirname "$0")/page-npm.sh"	# $PW_DIR: playwright-core, axe
PNG=$top_builddir/tests/regress/serve-page.png
PNG800=$top_builddir/tests/regress/serve-page-800.png

page_browser	# $CHROMIUM, node, playwright-core and axe; else SKIP
t_watchdog 60
t_valgrind_worker
t_marker M srvp
t_slack

OK="exec '$FAKE' --marker $M result success"
R=$T_TMP/proj
# develop prints one line, then works until stopped
DEV="touch '$R.dev'; exec '$FAKE' --marker $M print 'dev: compiling step 1' hang"
t_run_config "$R" "$OK init" "$DEV" "$OK dbg" "$OK 'all good'" "$OK done" \
    '{"grace_ms": 500}'

# a parallel loop in a git project (issue 27), run to its end before
# serve starts: the page shows each writer's branch, diff stat and merge
G=$T_TMP/gitproj
mkdir -p "$G" && echo base >"$G/a.txt" &&
    git -C "$G" init -q && git -C "$G" add a.txt &&
    git -C "$G" -c user.name=t -c user.email=t@localhost commit -q -m base
t_run_config "$G" "$OK init" "echo merged >new.txt; $OK dev" "$OK dbg" \
    "$OK 'all good'" "$OK done" '{"grace_ms": 500}'
timeout -k 2 60 $WRAP "$SUP" run -m parallel -C "$G" --loop-id merge-1 \
    "Merge" >"$G.out" 2>&1
is "$?" 0 "a parallel loop in a git project completes"

srv_start "$T_TMP/srv" -C "$R" -C "$G"
ok $? "serve listens ($SRV_PORT)"

# --- the page's HTTP side: no token, HEAD, other methods
noauth GET /
is "$(jr '[d["status"], d["type"]]')" '[200,"text/html; charset=utf-8"]' \
    "GET / without a token: 200 text/html"
like "$(jr 'd["body"]')" '<title>ccw-supervisor serve</title>' "it is the page"
RES=$(python3 - "$SRV_PORT" <<'PYEOF'
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
c.request("HEAD", "/")
r = c.getresponse()
print(json.dumps({"status": r.status, "len": r.getheader("Content-Length"),
    "body": len(r.read()), "csp": r.getheader("Content-Security-Policy")}))
PYEOF
)
is "$(jr '[d["status"], d["body"], int(d["len"]) > 1000]')" '[200,0,true]' \
    "HEAD /: 200, the length, no body"
like "$(jr 'd["csp"]')" "^default-src 'none'; script-src 'sha256-" \
    "a Content-Security-Policy by hash"
noauth POST / '{}'
is "$(jr '[d["status"], d["allow"], d["body"]["success"]]')" \
    '[405,"GET",false]' "POST /: 405, Allow: GET, a JSON error"

# --- a running loop of a slow worker, and a hostile title never started
TITLE="Page loop"
req POST /api/loops/v2 "{\"title\": \"$TITLE\"}"
ID=$(jr 'd["body"]["data"]["loop_id"]')
req POST "/api/loops/v2/$ID/start"
is "$(jr 'd["status"]')" 200 "the loop started"
req POST /api/loops/v2 '{"title": "Nowhere", "root": "/no/such/root"}'
is "$(jr '[d["status"], d["body"]["error"]]')" \
    '[400,"root must be one of serve'"'"'s roots"]' \
    "create naming a root serve does not hold: 400"
req POST /api/loops/v2 '{"title": "Odd mode", "mode": "sideways"}'
is "$(jr 'd["status"]')" 400 "create with a mode loop_open does not take: 400"
like "$(jr 'd["body"]["error"]')" 'auto parallel' "... naming the modes it takes"
noauth GET /
like "$(jr 'd["body"]')" '<select id="c-mode" name="mode"><option value="">default</option><option>auto</option><option>parallel</option></select>' \
    "the form offers loop_open's modes"
XTITLE='<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
req POST /api/loops/v2 "$(python3 -c 'import json,sys; print(json.dumps({"title": sys.argv[1]}))' "$XTITLE")"
XID=$(jr 'd["body"]["data"]["loop_id"]')
is "$(jr 'd["status"]')" 200 "a loop whose title holds <script>"
t_wait_file "$R.dev" 10000
ok $? "its develop worker runs"
# a loop driven by another process, killed -9: nobody drives it now
t_loop_start "$R" orphan-1 "Orphan"
end=$(t_until 20000)
until timeout -k 2 60 $WRAP "$SUP" state -C "$R" list 2>/dev/null |
    grep -Eq "^orphan-1 +running .*driven by pid $PID"; do
	[ "$(t_now_ms)" -ge "$end" ] && break
	sleep 0.1
done
kill -KILL "$PID"
t_wait_pid "$PID" 10000

# serve's restart for the browser script: "stop" ends this serve
# (SIGTERM, waited for), "start" starts a new one on the same port and
# roots (a new token) and waits until it listens; its pid in srv.pid.
# Its socket's name holds the marker M2: a test cut short kills it too.
t_marker M2 srvr
echo "$SRV_PID" >"$T_TMP/srv.pid"
cat >"$T_TMP/restart.sh" <<EOF
#!/bin/bash
# gone PID: it exited (a zombie counts: its parent reaps it later)
gone() { case \$(ps -o stat= -p "\$1" 2>/dev/null) in ""|Z*) return 0 ;; esac; return 1; }
n=\$(( $(t_ms 10000) / 20 ))
if [ "\$1" = stop ]; then
	p=\$(cat $(printf %q "$T_TMP/srv.pid"))
	kill -TERM "\$p" || exit 1
	while ! gone "\$p"; do
		n=\$((n - 1)); [ \$n -gt 0 ] || exit 1; sleep 0.02
	done
	exit 0
fi
o=$(printf %q "$T_TMP/srv2-$M2")
: >"\$o"
$WRAP $(printf %q "$SUP") -v serve -C $(printf %q "$R") -C $(printf %q "$G") \\
    --socket "\$o.sock" --http 127.0.0.1:$SRV_PORT >"\$o" 2>"\$o.err" &
echo \$! >$(printf %q "$T_TMP/srv.pid")
until grep -q 'listening on http:' "\$o"; do
	n=\$((n - 1)); [ \$n -gt 0 ] || exit 1; sleep 0.02
done
EOF

# --- the browser
T0=$(t_now_ms)
rm -f "$PNG" "$PNG800"
node "$srcdir/tests/regress/serve-page.mjs" "$PW_DIR" "$CHROMIUM" \
    "$SRV_PORT" "$SRV_TOKEN" "$ID" "$XID" "$TITLE" "$XTITLE" "$PNG" \
    "$(t_ms 10000)" orphan-1 "$M" merge-1 "$PNG800" \
    "$T_TMP/restart.sh" >"$T_TMP/page.out" 2>&1
rc=$?
SRV_PID=$(cat "$T_TMP/srv.pid")
EL=$(( $(t_now_ms) - T0 ))
while IFS= read -r line; do
	case $line in
	"ok "*) ok 0 "page: ${line#ok }" ;;
	"not ok "*) ok 1 "page: ${line#not ok }" ;;
	*) printf '#   %s\n' "$line" ;;
	esac
done <"$T_TMP/page.out"
is "$rc" 0 "the browser script ran to its end"
grep -q '^ok after the restart' "$T_TMP/page.out"
ok $? "every browser step ran"
for f in "$PNG" "$PNG800"; do
	[ -s "$f" ] && [ "$(head -c 4 "$f" | tail -c 3)" = PNG ]
	ok $? "a screenshot is kept: $f"
done
echo "# the browser part took $EL ms (a figure, not a check)"

t_wait_gone "$M" 10000
ok $? "the stop closed the workers"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 10000
ok $? "serve exits on SIGTERM"
t_done
