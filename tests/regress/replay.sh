#!/bin/bash
# replay.sh: replay of a finished loop (issue 28).  A real small loop of
# fake agents runs to its end; `state export ID --html -o FILE` writes
# one self-contained document (its own CSP meta tag; data in a JSON
# block where "</script>" and "<!--" cannot end it); a missing or
# invalid loop is a clear error and a non-zero exit; serve answers GET
# /loops/:id/replay (token or cookie; 404, 400).  replay.mjs drives
# headless Chromium (playwright-core, as serve-page.sh) through the file
# from file:// and through the served page: next/previous and keys, each
# step's prompt, result, state change, time and cost, hostile data as
# text, usable at 800 px with a visible focus, axe-core
# (@axe-core/playwright, SKIP when absent); screenshots at 1280x800 and
# 800x600 kept as tests/regress/replay-SIZE.png.  Without node,
# chromium or the npm registry the browser part is one SKIP.
# playwright-core and @axe-core/playwright: page-npm.sh's; CCW_CHROMIUM.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"

. "$(dirname "$0")/page-npm.sh"	# $PW_DIR: playwright-core, axe
CHROMIUM=${CCW_CHROMIUM:-$(command -v chromium || true)}
PNG=$top_builddir/tests/regress/replay
rm -f "$PNG"-*.png

t_watchdog 60
t_marker M replay

# --- a small loop to its end: a hostile title and summary
R=$T_TMP/proj
TITLE='Replay </script><img src=x onerror="window.__pwned=1"><!-- t'
SUMMARY='dev </script><script>window.__pwned=2</script><!-- & done'
OK="exec '$FAKE' --marker $M result success"
t_run_config "$R" "$OK init" "echo hi >x.txt; $OK '$SUMMARY'" "$OK dbg" \
    "$OK 'all good'" "$OK done"
t_loop_run "$R" rp-1 "$TITLE"
is "$RC" 0 "the loop runs to its end"
H=$R/.loop/rp-1.history.jsonl
is "$(python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) if "prompt" in json.loads(l) and
    "changes" in json.loads(l)))' "$H")" 5 \
    "the history keeps each action's prompt and state change"

# --- export
OUT=$T_TMP/rp-1.html
$WRAP "$SUP" state -C "$R" export rp-1 --html -o "$OUT" 2>"$T_TMP/exp.err"
is "$?" 0 "state export --html -o FILE"
python3 - "$OUT" "$SUMMARY" <<'PYEOF' >"$T_TMP/doc.out"
import re, sys
d = open(sys.argv[1]).read()
print(d.count("</script>"), d.count("<!--"), d.count("<img"),
    '<meta http-equiv="Content-Security-Policy"' in d,
    "\\u003c/script\\u003e" in d)
PYEOF
is "$(cat "$T_TMP/doc.out")" "2 0 0 True True" \
    "the data cannot end its block: 2 </script>, no <!--, no <img; a CSP meta tag"
$WRAP "$SUP" state -C "$R" export rp-1 >"$T_TMP/rp-1.json"
is "$?" 0 "state export without --html: the JSON"
is "$(jget "$T_TMP/rp-1.json" '[d["loop"]["status"], [e["event"] for e in d["history"]].count("action")]')" \
    '["completed",5]' "... the loop and its five actions"
$WRAP "$SUP" state -C "$R" export nope --html -o "$T_TMP/nope.html" 2>"$T_TMP/nope.err"
is "$?" 1 "an unknown loop: exit 1"
like "$(cat "$T_TMP/nope.err")" "state export: no loop 'nope'" "... saying so"
[ ! -e "$T_TMP/nope.html" ]
ok $? "... and no file"
$WRAP "$SUP" state -C "$R" export ../x --html 2>"$T_TMP/bad.err"
is "$?" 2 "an invalid id: exit 2"
like "$(cat "$T_TMP/bad.err")" "invalid loop id" "... saying so"
$WRAP "$SUP" state -C "$T_TMP/none" export rp-1 --html 2>"$T_TMP/none.err"
is "$?" 1 "no state directory: exit 1"
like "$(cat "$T_TMP/none.err")" "state export" "... with a message"
$WRAP "$SUP" state --help | grep -q 'state export ID \[--html\] \[-o FILE\]'
ok $? "--help names state export"

# --- a loop whose history is from before replay, its worker with usage
$WRAP "$SUP" state -C "$R" create "Old loop" --loop-id old-1 >/dev/null
printf '%s\n' '{"event":"loop_started","mode":"auto","timestamp":"2026-01-01T00:00:00.000Z"}' \
    'not json' \
    '{"event":"action","action":"develop","agent_id":"agent-1","status":"success","summary":"old <b>x</b>","iteration":1,"usage":{"input_tokens":1000,"output_tokens":200,"cost_usd":0.0123},"duration_ms":1500,"timestamp":"2026-01-01T00:00:02.000Z"}' \
    >"$R/.loop/old-1.history.jsonl"
$WRAP "$SUP" state -C "$R" export old-1 --html -o "$T_TMP/old-1.html"
is "$?" 0 "an old history exports"
grep -q '1 unreadable history lines skipped' "$T_TMP/old-1.html"
ok $? "... noting the line it skipped"

# --- serve's route
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens ($SRV_PORT)"
req GET /loops/rp-1/replay
is "$(jr '[d["status"], d["type"]]')" '[200,"text/html; charset=utf-8"]' \
    "GET /loops/ID/replay: 200 text/html"
noauth GET /loops/rp-1/replay
is "$(jr 'd["status"]')" 401 "... 401 without the token"
req GET /loops/nope/replay
is "$(jr '[d["status"], d["body"]["success"]]')" '[404,false]' \
    "... 404 for an unknown loop"
req GET '/loops/..x/replay'
is "$(jr 'd["status"]')" 400 "... 400 for an invalid id"

# --- the browser
skip_browser() {
	t_skip "the browser part: $1"
}
browser() {
	command -v node >/dev/null 2>&1 || { skip_browser "no node"; return; }
	[ -n "$CHROMIUM" ] && [ -x "$CHROMIUM" ] ||
	    { skip_browser "no chromium"; return; }
	page_npm || { skip_browser "$PAGE_NPM_WHY"; return; }
	T0=$(t_now_ms)
	node "$srcdir/tests/regress/replay.mjs" "$PW_DIR" "$CHROMIUM" "$OUT" \
	    "$T_TMP/old-1.html" "$SRV_PORT" rp-1 5 "$SUMMARY" "$TITLE" \
	    "$(t_ms 10000)" "$PNG" >"$T_TMP/page.out" 2>&1
	is "$?" 0 "the browser script ran to its end"
	echo "# the browser part took $(( $(t_now_ms) - T0 )) ms (a figure, not a check)"
	while IFS= read -r line; do
		case $line in
		"ok "*"# SKIP"*) t_skip "page: ${line#ok }" ;;
		"ok "*) ok 0 "page: ${line#ok }" ;;
		"not ok "*) ok 1 "page: ${line#not ok }" ;;
		*) printf '#   %s\n' "$line" ;;
		esac
	done <"$T_TMP/page.out"
	grep -q '^ok all steps ran' "$T_TMP/page.out"
	ok $? "every browser step ran"
	for size in 1280x800 800x600; do
		[ "$(head -c 4 "$PNG-$size.png" 2>/dev/null | tail -c 3)" = PNG ]
		ok $? "a screenshot at $size is kept: $PNG-$size.png"
	done
}
browser

kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 10000
ok $? "serve exits on SIGTERM"
t_done
