#!/bin/bash
# serve-loop-page.sh: serve's page of one loop (GET /loops/:id,
# servepageloop.c) in a real browser: Debian's chromium, headless, driven
# by playwright-core from npm (page-npm.sh: installed into the build
# tree's tests/page-npm) through serve-loop-page.mjs: a
# running loop's tasks shown, one added, one edited and one moved from
# the page (the API agrees); its develop worker's log lines arriving live
# (one written after the page opened, read across a stale token cookie);
# a finished parallel loop's workers with a crashed one's outcome kind
# and reason, each writer's branch and diff, the merge record, the
# capsule, the raw state and the replay link; a 300 KiB log shown as its
# last 256 KiB; an open question's form (the recommended option chosen)
# answered from the page; axe-core (npm @axe-core/playwright: its check SKIPs if
# it cannot be installed) finds no serious or critical violation.
# Screenshots at 1280x800 and 800x600 are kept in the build tree
# (tests/regress/serve-loop-page-{1280,800}.png).  Without node, chromium
# or the npm registry the whole test is one SKIP.
# CCW_PAGE_NPM_DIR: playwright-core's install elsewhere (CI keeps one);
# CCW_CHROMIUM: another browser binary.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
. "$(dirname "$0")/page-npm.sh"

PNG=$top_builddir/tests/regress/serve-loop-page

page_browser	# $CHROMIUM, node, playwright-core and axe; else SKIP

t_watchdog 90
t_valgrind_worker
t_marker M srvlp
t_slack

OK="exec '$FAKE' --marker $M result success"
# a running loop: develop writes a line, then a second once $R.go exists
R=$T_TMP/proj
DEV="touch '$R.dev'; exec '$FAKE' --marker $M print 'dev: line one' wait-file '$R.go' print 'dev: line two' hang"
t_run_config "$R" "$OK init" "$DEV" "$OK dbg" "$OK 'all good'" "$OK done" \
    '{"grace_ms": 500}'

# a finished parallel loop in a git project (issue 27), run before serve
# starts: develop's branch merged, debug's worker crashed (SIGSEGV)
G=$T_TMP/gitproj
mkdir -p "$G" && echo base >"$G/a.txt" &&
    git -C "$G" init -q && git -C "$G" add a.txt &&
    git -C "$G" -c user.name=t -c user.email=t@localhost commit -q -m base
t_run_config "$G" "$OK init" \
    "echo merged >new.txt; '$FAKE' --marker $M print 'dev: merged'; $OK dev" \
    "exec '$FAKE' --marker $M print debugging crash" "$OK 'all good'" \
    "$OK done" '{"grace_ms": 500}'
timeout -k 2 60 $WRAP "$SUP" run -m parallel -C "$G" --loop-id merge-1 \
    --max-iterations 1 "Merged" >"$G.out" 2>&1
is "$?" 0 "a parallel loop in a git project completes"
# a log of 300 KiB (agent-9, by hand): the page shows its last 256 KiB
python3 - "$G/.loop/merge-1.workers/agent-9.log" <<'PYEOF'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(30000):
        f.write("big log line %05d\n" % i)
    f.write("the last line of the big log\n")
PYEOF
# an open question left in its file (the queue of questions): the page
# shows its form and answers it (POST, via page) to its answers file
python3 - "$G/.loop/merge-1.json" <<'PYEOF'
import json, sys
st = json.load(open(sys.argv[1]))
st["skill_state"]["questions"] = [{"id": "q-0123456789ab",
    "loop_id": "merge-1", "agent_id": "agent-2", "role": "develop",
    "question": "Which database?", "options": ["sqlite", "postgres"],
    "recommended": "sqlite", "asked_at": st["updated_at"], "deadline": None,
    "status": "open", "answer": None, "answered_by": None, "via": None}]
json.dump(st, open(sys.argv[1], "w"))
PYEOF

srv_start "$T_TMP/srv" -C "$R" -C "$G"
ok $? "serve listens ($SRV_PORT)"

noauth GET /loops/merge-1
is "$(jr '[d["status"], d["type"]]')" '[200,"text/html; charset=utf-8"]' \
    "GET /loops/ID without a token: 200 text/html"
noauth POST /loops/merge-1 '{}'
is "$(jr '[d["status"], d["allow"]]')" '[405,"GET"]' "POST /loops/ID: 405"

# the running loop, with two tasks (one holding markup) before it starts
req POST /api/loops/v2 '{"title": "Live loop", "max_iterations": 3}'
ID=$(jr 'd["body"]["data"]["loop_id"]')
for t in 'First task' '<img src=x onerror="window.__pwned=1">Second task'; do
	req POST "/api/loops/v2/$ID/tasks" "$(python3 -c 'import json,sys; print(json.dumps({"description": sys.argv[1], "tool": "bash", "mode": "write", "prompt_template": "do it"}))' "$t")"
	is "$(jr 'd["status"]')" 200 "a task: $t"
done
req POST "/api/loops/v2/$ID/start"
is "$(jr 'd["status"]')" 200 "the loop started"
t_wait_file "$R.dev" 10000
ok $? "its develop worker runs"

# --- the browser
T0=$(t_now_ms)
rm -f "$PNG-1280.png" "$PNG-800.png"
node "$srcdir/tests/regress/serve-loop-page.mjs" "$PW_DIR" "$CHROMIUM" \
    "$SRV_PORT" "$SRV_TOKEN" "$ID" merge-1 "$R.go" "$PNG" \
    "$(t_ms 10000)" >"$T_TMP/page.out" 2>&1
rc=$?
EL=$(( $(t_now_ms) - T0 ))
while IFS= read -r line; do
	case $line in
	"ok "*) ok 0 "page: ${line#ok }" ;;
	"not ok "*) ok 1 "page: ${line#not ok }" ;;
	*) printf '#   %s\n' "$line" ;;
	esac
done <"$T_TMP/page.out"
is "$rc" 0 "the browser script ran to its end"
grep -q '^ok no console error' "$T_TMP/page.out"
ok $? "every browser step ran"
for w in 1280 800; do
	[ -s "$PNG-$w.png" ] && [ "$(head -c 4 "$PNG-$w.png" | tail -c 3)" = PNG ]
	ok $? "a screenshot at $w px is kept: $PNG-$w.png"
done
echo "# the browser part took $EL ms (a figure, not a check)"
is "$(jget "$G/.loop/merge-1.answers.jsonl" '[d["question_id"], d["answer"], d["via"]]')" \
    '["q-0123456789ab","sqlite","page"]' "the page's answer is in the loop's answers file"

req POST "/api/loops/v2/$ID/stop"
is "$(jr 'd["status"]')" 200 "the loop stops"
t_wait_gone "$M" 10000
ok $? "the stop closed the workers"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 10000
is "$T_RC" 4 "serve exits 4 on SIGTERM (no leak, no error under a wrapper)"
t_done
