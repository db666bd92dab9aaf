#!/bin/bash
# state-files.sh: concurrent appenders of a loop's NDJSON log.  Ten
# processes append 200 lines each to changes.log through progress_log
# (test-progress's append-log mode): exactly 2000 lines, each one whole
# JSON object.  Then a torn last line and a mix of our appender and other
# writers (python, O_APPEND, one write each): nothing is glued.
. "$(dirname "$0")/lib.sh"
t_watchdog 240
TP="$top_builddir/tests/unit/test-progress"
S=$T_TMP/state
ID=loop-v2-20260122T100000-files000
LOG=$S/$ID.progress/changes.log
mkdir -p "$S"

# check_log FILE: prints "LINES BAD UNTERMINATED WRITERS-COMPLETE", where
# a writer is complete when its seq numbers are 0..N-1, each once.
check_log() {
	python3 - "$1" <<'PYEOF'
import json, sys, collections
data = open(sys.argv[1], "rb").read()
lines = data.split(b"\n")
unterminated = 0 if data.endswith(b"\n") else 1
if lines and lines[-1] == b"":
    lines.pop()
bad = 0
seqs = collections.defaultdict(list)
for l in lines:
    try:
        o = json.loads(l)
    except Exception:
        bad += 1
        continue
    if not isinstance(o, dict):
        bad += 1
    elif "pid" in o:
        seqs[o["pid"]].append(o["seq"])
complete = sum(1 for v in seqs.values() if sorted(v) == list(range(len(v))))
print(len(lines), bad, unterminated, "%d/%d" % (complete, len(seqs)))
PYEOF
}

# Round 1: ten of our appenders at once.
pids=
for i in 1 2 3 4 5 6 7 8 9 10; do
	$WRAP "$TP" append-log "$S" "$ID" 200 2>"$T_TMP/w$i.err" &
	pids="$pids $!"
done
fails=0
for p in $pids; do
	t_wait_pid "$p" 120000
	[ "$T_RC" -eq 0 ] || fails=$((fails + 1))
done
is "$fails" 0 "ten appenders of 200 lines each exited 0"
set -- $(check_log "$LOG")
is "$1" 2000 "exactly 2000 lines"
is "$2" 0 "every line is one JSON object"
is "$3" 0 "the log ends with a newline"
is "$4" "10/10" "every writer's 200 lines present, each once"
errs=$(cat "$T_TMP"/w*.err)
is "$errs" "" "no appender reported an error"

# Round 2: a writer died mid-line; our next append closes it (the other
# writers below do not check); then ours and others append together.
printf '{"torn":true}' >>"$LOG"
$WRAP "$TP" append-log "$S" "$ID" 1
ok $? "one append after the torn line"
set -- $(check_log "$LOG")
is "$1 $2 $3" "2002 0 0" "the torn line was closed, not glued: 2002 lines parse"
pids=
for i in 1 2 3 4 5; do
	$WRAP "$TP" append-log "$S" "$ID" 100 2>>"$T_TMP/w$i.err" &
	pids="$pids $!"
	python3 -c '
import json, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
for i in range(100):
    line = json.dumps({"pid": -os.getpid(), "seq": i, "pad": "y" * 300},
                      separators=(",", ":")) + "\n"
    os.write(fd, line.encode())
' "$LOG" &
	pids="$pids $!"
done
fails=0
for p in $pids; do
	t_wait_pid "$p" 120000
	[ "$T_RC" -eq 0 ] || fails=$((fails + 1))
done
is "$fails" 0 "five of ours and five other writers exited 0"
set -- $(check_log "$LOG")
is "$1" 3002 "then 1000 more lines from ten writers"
is "$2 $3" "0 0" "every line parses, the last one is terminated"
is "$4" "21/21" "every writer's lines present, each once"

# The file names a loop id can reach: nothing outside the state directory.
: >"$T_TMP/esc.err"
before=$(ls -a "$T_TMP" | tr '\n' ' ')
$WRAP "$TP" append-log "$S" "../escape" 1 2>"$T_TMP/esc.err"
rc=$?
after=$(ls -a "$T_TMP" | tr '\n' ' ')
ok $((rc == 0)) "append-log with id ../escape fails"
like "$(cat "$T_TMP/esc.err")" "invalid loop id" "and says why"
is "$after" "$before" "nothing created next to the state directory"
t_done
