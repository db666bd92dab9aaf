#!/bin/bash
# budget-clis.sh: a claude and a codex turn frozen at a budget, then
# resumed, complete their task (issue 29).  Each CLI runs `run
# --max-time` on the e2e project against its own stand-in, at the same
# time (CI pays one hold, not two); develop's shell call counts to 120
# in 30 s, so the wall budget is reached while a turn runs.  The loop is
# paused with pause_reason, its worker frozen: for the hold
# (CCW_E2E_HOLD_S, default 60 s) no request reaches the stand-in and the
# counter stands still; status running with a raised budget (one
# front-end write) thaws it, and the loop completes with the bug fixed
# (claude's command counts on to its end; codex's, see below).
. "$(dirname "$0")/lib.sh"
E2E_HOLD_S=${CCW_E2E_HOLD_S:-60}
E2E_BUDGET_MS=${CCW_E2E_BUDGET_MS:-25000}
for c in claude codex; do
	if [ -z "${CCW_E2E_CLI_DIR:-}" ] && [ -f "$top_builddir/tests/e2e/cli/SKIP" ] ||
	    [ ! -x "$E2E_CLI_DIR/node_modules/.bin/$c" ]; then
		echo "1..0 # SKIP $c is not installed under $E2E_CLI_DIR"
		exit 0
	fi
done
# E2E_CASES: unset, "all" or a list naming "budget" run it; "none" (the
# valgrind and sanitizer builds) or another list skip it.
case " ${E2E_CASES:-budget} " in
*" budget "* | " all ") ;;
*)	echo "1..0 # SKIP E2E_CASES=${E2E_CASES} does not name budget"
	exit 0 ;;
esac
e2e_begin claude $(( 600 + E2E_HOLD_S ))

# The script: develop (a writing role) makes its fix, then counts to
# 120, 0.25 s a step: init and develop's start take some 5 (codex) to 20
# s (claude) of the budget's 25, so the budget is reached while the count
# runs (on a slower machine earlier, in another turn: the counter is then
# not yet there, and the checks on it hold trivially).  Claude's Bash
# waits 120 s for a command: the hold and the count stay well within.
SCRIPT=$T_TMP/budget-script.json
python3 - "$SCRIPT" "$E2E_SRC/mockapi" <<'PYEOF'
import json, sys
sys.path.insert(0, sys.argv[2])
import scenario
fix = scenario.DEFAULT_SCRIPT["develop"]["command"]
count = "; i=0; while [ $i -lt 120 ]; do i=$((i + 1)); echo $i >count.txt; sleep 0.25; done"
json.dump({"develop": {"command": fix + count}}, open(sys.argv[1], "w"))
PYEOF

# front FILE: a front end's one write: status running, a raised budget.
front() {
	python3 - "$1" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["status"] = "running"
d["budget"] = {"max_wall_ms": 3600000}
with open(sys.argv[1], "w") as f:
    f.write(json.dumps(d, indent=2))
PYEOF
}

# flow CLI N: one CLI's loop, its findings in $T_TMP/CLI.res (KEY=VALUE).
flow() {
	local p=$T_TMP/budget-$1 o=$T_TMP/budget-$1.json res=$T_TMP/$1.res
	local pid st end n0 n1 c0 c1 rc
	E2E_CLI=$1 E2E_N=$2 E2E_MOCK_PID=
	e2e_project "$p"
	mock_start --script "$SCRIPT" || { echo "started=0" >"$res"; return; }
	timeout -k 5 $(( 600 + E2E_HOLD_S )) $WRAP "$SUP" run -C "$p" \
	    --loop-id budget-1 --tool "$1" --timeout-ms 240000 \
	    --max-time "$E2E_BUDGET_MS" --json "$E2E_TASK" >"$o" 2>"$o.err" &
	pid=$!
	st=$p/.loop/budget-1.json
	end=$(( $(t_now_ms) + 120000 ))
	until [ "$(jget "$st" 'd["status"]' 2>/dev/null)" = paused ]; do
		if [ "$(t_now_ms)" -ge "$end" ] || ! kill -0 "$pid" 2>/dev/null; then
			echo "paused=0" >"$res"
			kill -TERM "$pid" 2>/dev/null
			mock_stop
			return
		fi
		sleep 0.1
	done
	{
		echo "paused=1"
		echo "reason=$(jget "$st" 'd.get("pause_reason")')"
		echo "frozen=$(grep '"event":"loop_held"' "$o" | tail -n 1 |
		    jget - 'd.get("frozen", 0)')"
	} >"$res"
	n0=$(wc -l <"$E2E_LOG")
	c0=$(cat "$p/count.txt" 2>/dev/null)
	sleep "$E2E_HOLD_S"	# the hold itself: the point of the test
	n1=$(wc -l <"$E2E_LOG")
	c1=$(cat "$p/count.txt" 2>/dev/null)
	{
		echo "requests=$n0 $n1"
		echo "count=$c0 $c1"
		echo "alive=$(kill -0 "$pid" 2>/dev/null && echo 1 || echo 0)"
	} >>"$res"
	front "$st"
	wait "$pid"
	rc=$?
	{
		echo "rc=$rc"
		echo "status=$(jget "$st" 'd["status"]')"
		echo "counted=$(cat "$p/count.txt" 2>/dev/null)"
		echo "fixed=$(e2e_fixed "$p" && echo 1 || echo 0)"
		echo "events=$(grep -c '"budget_reached"' "$o")"
	} >>"$res"
	[ "$rc" -eq 0 ] || tail -n 5 "$o.err" | sed "s/^/#   $1: /"
	mock_stop
}

t0=$(t_now_ms)
flow claude 10 &
FC=$!
flow codex 20 &
FX=$!
wait "$FC" "$FX"
echo "# both: $(( $(t_now_ms) - t0 )) ms (a hold of $E2E_HOLD_S s)"

# get CLI KEY: a finding of CLI's flow.
get() { sed -n "s/^$2=//p" "$T_TMP/$1.res" 2>/dev/null; }

for c in claude codex; do
	is "$(get $c paused)" 1 "$c: the loop is paused at its wall budget"
	like "$(get $c reason)" "^budget: [0-9]+ ms of running time reached --max-time $E2E_BUDGET_MS\$" \
	    "$c: pause_reason says which budget"
	ok $(( $(get $c frozen) < 1 )) "$c: a turn was running and is frozen ($(get $c frozen))"
	r=$(get $c requests)
	ok $([ -n "$r" ] && [ "${r% *}" = "${r#* }" ]; echo $?) \
	    "$c: no request reached the stand-in for $E2E_HOLD_S s ($r)"
	n=$(get $c count)
	ok $([ "${n% *}" = "${n#* }" ]; echo $?) \
	    "$c: the turn's shell command stood still ($n)"
	is "$(get $c alive)" 1 "$c: run stayed up while held"
	is "$(get $c rc)" 0 "$c: resumed with a raised budget, run exits 0"
	is "$(get $c status)" completed "$c: the loop completed"
	n=$(get $c count)
	if [ "$c" = claude ]; then
		is "$(get $c counted)" 120 "$c: the frozen command went on to its end"
		echo "# claude: held at count ${n#* }"
	else
		# codex's own 30 s cap on waiting for a command counts the time
		# frozen (its monotonic clock runs on while stopped): a command
		# in flight is handed back to the model at the thaw.  The task
		# was done before the count, so the turn completes it anyway.
		echo "# codex: the count went from ${n#* } (held) to $(get $c counted)"
	fi
	is "$(get $c fixed)" 1 "$c: the bug is fixed and the suite passes"
	is "$(get $c events)" 1 "$c: budget_reached once"
done
E2E_CLI=claude
e2e_end
