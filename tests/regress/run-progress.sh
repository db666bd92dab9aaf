#!/bin/bash
# run-progress.sh: what `run` says on stderr where it is not a terminal
# (a file, as in a CI log) or on a terminal with TERM=dumb or no TERM:
# one plain line per worker start and end (role, agent, status, reason),
# per retry (with its reason), never an escape sequence; --quiet and
# --json keep the first and last lines only; a real terminal keeps the
# live status lines.
. "$(dirname "$0")/lib.sh"
t_watchdog 150
t_valgrind_worker
t_marker M prog

OK="exec '$FAKE' --marker $M result success"
NO="exec '$FAKE' --marker $M result failed 'no luck'"
SLOW="exec '$FAKE' --marker $M sleep 2500 result success"
RETRY='{"grace_ms": 500, "retry": {"attempts": 2, "initial_interval_ms": 100}}'

# count FILE ERE: how many lines of FILE match.
count() { grep -Ec -- "$2" "$1"; }

# ours FILE: FILE's lines but valgrind's own (a test under valgrind).
ours() { grep -Ev -- '^(==|--)[0-9]+(==|--)' "$1"; }

# noesc FILE: 0 when FILE holds no ESC byte.
noesc() { ! grep -q "$(printf '\033')" "$1"; }

# ontty ROOT ID TERM ARGS...: `run` with stderr (only) on a pseudo
# terminal, TERM set to TERM ("-": unset); what it wrote in ROOT.tty.
ontty() {
	local root=$1 id=$2 term=$3
	shift 3
	python3 - "$root.tty" "$term" timeout -k 2 60 $WRAP "$SUP" run \
	    -C "$root" --loop-id "$id" "$@" <<'PYEOF'
import os, subprocess, sys
out, term, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
env = dict(os.environ)
env.pop("TERM", None)
if term != "-":
    env["TERM"] = term
m, s = os.openpty()
p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
    stdout=subprocess.DEVNULL, stderr=s, env=env)
os.close(s)
data = b""
while True:
    try:
        b = os.read(m, 4096)
    except OSError:
        break
    if not b:
        break
    data += b
p.wait()
open(out, "wb").write(data.replace(b"\r\n", b"\n"))
PYEOF
}

STARTED='^\[(init|develop|debug|validate)\] agent-[0-9]+ started \(bash\)$'
ENDED='^\[(init|develop|debug|validate)\] agent-[0-9]+: (success|failed)( - .*)?$'

# --- stderr to a file: a line per worker start, end and retry
R=$T_TMP/file
t_run_config "$R" "$OK" "$NO" "$NO" "$NO" "$OK" "$RETRY"
t_loop_run "$R" file-1 -m parallel "Never works"
is "$RC" 1 "file: exit 1 (every role failed twice)"
is "$(count "$R.err" "$STARTED")" 7 \
    "file: one line per worker start, with role, agent and tool"
is "$(count "$R.err" "$ENDED")" 7 \
    "file: one line per worker end, with role and status"
is "$(count "$R.err" '^\[develop\] agent-[0-9]+: failed - no luck$')" 2 \
    "file: an end line says why the worker failed"
is "$(count "$R.err" '^\[parallel\] retry 2 of 2 in 100 ms: every role failed$')" 1 \
    "file: a retry line, with its try, wait and reason"
noesc "$R.err"
ok $? "file: no escape sequence"
is "$(ours "$R.err" | sed -n '$p')" \
    "ccw-supervisor run: loop file-1 failed: the parallel step failed in every role 2 times in a row (retry policy: 2 attempts) (exit 1)" \
    "file: the last line says how the loop ended"

# --- a timed-out worker: its end line names the timeout
R=$T_TMP/late
TM=$(t_ms 400)
t_run_config "$R" "$OK" "exec '$FAKE' --marker $M hang" "$OK" "$OK" "$OK" \
    "{\"timeout_ms\": $TM, \"nudge_ms\": $TM, \"grace_ms\": 300}"
t_loop_run "$R" late-1 "Hangs"
is "$RC" 5 "timeout: exit 5"
is "$(count "$R.err" '^\[develop\] agent-2: failed - Worker timeout \(timeout: deadline of [0-9.]+ s passed')" 1 \
    "timeout: the end line says the worker timed out, and after how long"

# --- --quiet, --json: the first and last lines only
R=$T_TMP/quiet
t_run_config "$R" "$OK" "$NO" "$NO" "$NO" "$OK" "$RETRY"
t_loop_run "$R" quiet-1 -m parallel --quiet "Never works"
is "$RC" 1 "quiet: exit 1"
is "$(ours "$R.err" | wc -l | tr -d ' ')" 2 "quiet: two lines on stderr"
like "$(ours "$R.err" | sed -n 1p)" '^ccw-supervisor run: loop quiet-1 \(parallel mode\)' \
    "quiet: the first says which loop"
like "$(ours "$R.err" | sed -n 2p)" '^ccw-supervisor run: loop quiet-1 failed: ' \
    "quiet: the last says how it ended"
t_loop_run "$R" quiet-2 -m parallel --json "Never works"
is "$(ours "$R.err" | wc -l | tr -d ' ')" 2 "json: two lines on stderr"
is "$(grep -c '"event":"worker_started"' "$R.out")" 7 \
    "json: the events are on stdout"

# --- a terminal with TERM=dumb, or none: plain lines, no escape
R=$T_TMP/dumb
t_run_config "$R" "$OK" "$SLOW" "$OK" "$OK" "$OK"
for term in dumb -; do
	ontty "$R" "dumb$term" "$term" -n 1 "Slowly"
	is "$(count "$R.tty" '^\[develop\] agent-2 started \(bash\)$')" 1 \
	    "TERM=$term: a line when develop starts"
	is "$(count "$R.tty" '^\[develop\] agent-2: success')" 1 \
	    "TERM=$term: a line when develop ends"
	noesc "$R.tty"
	ok $? "TERM=$term: no escape sequence"
done

# --- a real terminal keeps the live status lines
ontty "$R" live xterm -n 1 "Slowly"
sed "s/$(printf '\033')\[[0-9]*[A-Z]//g" "$R.tty" >"$R.seen"
is "$(count "$R.seen" '^\[develop\] agent-2: success')" 1 \
    "TERM=xterm: the event lines"
noesc "$R.tty"
ok $(( $? == 0 )) "TERM=xterm: the status lines are redrawn in place"

t_wait_gone "$M" 2000
ok $? "no fake agent left"
t_done
