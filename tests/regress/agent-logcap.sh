#!/bin/bash
# agent-logcap.sh: a worker's log stays under its cap (--log-max, config
# log_max_bytes) however much the tool prints, stdout and stderr together:
# it keeps its head, a marker line counting the bytes dropped, and the
# latest output, where the WORKER_RESULT block and a validate's TAP are
# still read.  A flood that never ends is closed at its deadline with the
# log (and the spool behind it) bounded all along.
. "$(dirname "$0")/lib.sh"
t_watchdog 150
t_valgrind_worker
t_marker M logcap
S=$T_TMP/state
CAP=$((4 * 1024 * 1024))
SMALL_CAP=$((1024 * 1024))
MIB=100
[ -n "$WRAP" ] && MIB=24	# valgrind reads some 10 MiB/s

# logcheck LOG TOTAL: "SIZE HEAD_OK MARKERS DROPPED KEPT_OK", where KEPT_OK
# says that the dropped bytes and the bytes kept add up to TOTAL.
logcheck() {
	python3 - "$1" "$2" <<'PYEOF'
import re, sys
data = open(sys.argv[1], "rb").read()
# (the head ends a line here: no newline was added before the marker)
marks = list(re.finditer(rb"^\[ccw-worker: ([0-9]+) bytes dropped here;"
    rb"[^\n]*\n", data, re.M))
dropped = int(marks[0].group(1)) if marks else 0
kept = len(data) - sum(len(m.group(0)) for m in marks)
head_ok = int(marks[0].start() <= 1024 * 1024) if marks else 0
print(len(data), head_ok, len(marks), dropped,
    int(dropped + kept == int(sys.argv[2])))
PYEOF
}

# --- a 100 MiB flood on stdout, 8 MiB on stderr, then the answer
CMD="echo HEAD-FIRST-LINE; echo STDERR-FIRST >&2;
head -c ${MIB}M /dev/zero | tr '\\0' x | fold -w 99;
head -c 8M /dev/zero | tr '\\0' e | fold -w 79 >&2; echo; echo >&2;
echo STDERR-LAST >&2;
printf 'WORKER_RESULT:\\n- status: success\\n- summary: flooded and answered\\n'
: $M"
TOTAL=$(bash -c "$CMD" 2>&1 | wc -c)
R=$T_TMP/flood
agent "$R" --state-dir "$S" --loop-id cap --tool bash --log-max 4M \
    --timeout-ms 120000 --command "$CMD" develop go
is "$?" 0 "flood: exit 0"
is "$(jget "$R" '[d["agent_status"], d["status"], d["summary"]]')" \
    '["completed","success","flooded and answered"]' \
    "flood: the answer after $MIB MiB of noise is read"
like "$(jget "$R" 'd["stderr_tail"]')" 'STDERR-LAST' \
    "flood: stderr_tail is stderr's end"
L=$(jget "$R" 'd["log_path"]')
read -r size head marks dropped sum <<<"$(logcheck "$L" "$TOTAL")"
echo "# log: $size bytes of $TOTAL, $dropped dropped"
ok $(( size > CAP )) "flood: the log is within its cap ($size <= $CAP)"
is "$(head -n 1 "$L")" HEAD-FIRST-LINE "flood: the head is kept"
is "$marks" 1 "flood: one marker line"
ok $(( head != 1 )) "flood: the marker follows a head of at most 1 MiB"
ok $(( sum != 1 )) "flood: the marker counts every byte dropped"
# (stdout and stderr are in the order the worker read them: the pipe's
# last 64 KiB of stderr may come after the answer)
is "$(tail -c 131072 "$L" | grep -A 2 '^WORKER_RESULT:$' | tr '\n' '|')" \
    'WORKER_RESULT:|- status: success|- summary: flooded and answered|' \
    "flood: the log ends with the answer"
tail -c 131072 "$L" | grep -q '^STDERR-LAST$'
ok $? "flood: stderr's last line is in the log's tail"

# --- the same behind a launcher (relay.py, as ssh): the cap travels in
# ASSIGN's options, the answer still comes from the stream's end
R=$T_TMP/remote
RCMD="head -c 20M /dev/zero | tr '\\0' r | fold -w 99; echo;
printf 'WORKER_RESULT:\\n- status: success\\n- summary: far flood\\n'; : $M"
agent "$R" --state-dir "$S" --loop-id far --tool bash --log-max 1M \
    --launcher "python3 $srcdir/tests/regress/workers/relay.py $M" \
    --timeout-ms 120000 --command "$RCMD" develop go
is "$?" 0 "remote: exit 0"
is "$(jget "$R" '[d["status"], d["summary"]]')" '["success","far flood"]' \
    "remote: the answer after the noise is read"
L=$(jget "$R" 'd["log_path"]')
size=$(stat -c %s "$L" 2>/dev/null || echo 0)
ok $(( size == 0 || size > SMALL_CAP )) \
    "remote: the far log is within its cap ($size)"

# --- a validate command's TAP after the noise, through `run` and the
# configuration's top-level log_max_bytes
R=$T_TMP/tap
OK="exec '$FAKE' --marker $M result success"
TAP="head -c ${MIB}M /dev/zero | tr '\\0' y | fold -w 99; echo;
printf '1..3\\nok 1 - adds\\nok 2 - subtracts\\nok 3 - multiplies\\n'"
t_run_config "$R" "$OK" "$OK" "$OK" "$TAP" "$OK"
python3 - "$R/.loop/config.json" "$CAP" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["log_max_bytes"] = int(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
PYEOF
t_loop_run "$R" tap-1 "Check the tests"
is "$RC" 0 "tap: the loop completes"
V='d["skill_state"]["validate"]'
is "$(jget "$F" "[$V[\"pass_rate\"], $V[\"passed\"],
    [t[\"test_name\"] for t in $V[\"test_results\"]]]")" \
    '[100.0,true,["adds","subtracts","multiplies"]]' \
    "tap: the TAP after the noise is read"
big=0
for l in "$R"/.loop/tap-1.workers/*.log; do
	s=$(stat -c %s "$l")
	[ "$s" -gt "$big" ] && big=$s
done
ok $(( big > CAP )) "tap: every worker's log within the configured cap ($big)"
grep -l -q '^\[ccw-worker: [0-9]* bytes dropped here' \
    "$R"/.loop/tap-1.workers/*.log
ok $? "tap: the validate log says what it dropped"

# --- a flood that never ends: closed at its deadline; the log and the
# spool (the tool's stdout, unlinked) stay bounded all along
R=$T_TMP/endless
SMALL=$((1024 * 1024))
$WRAP "$SUP" agent --json --state-dir "$S" --loop-id endless --tool bash \
    --log-max 1M --timeout-ms "$(t_ms 3000)" --nudge-ms 500 --grace-ms 500 \
    --command "echo begin; exec yes $M-endless-yyyyyyyyyyyyyyyy" \
    develop go >"$R" 2>"$R.err" &
pid=$!
L=$S/endless.workers/agent-1.log
wrk=$(t_wait_child "$pid" "$(t_ms 10000)")
tool=
[ -n "$wrk" ] && tool=$(t_wait_tool "$wrk" "$M-endless" "$(t_ms 10000)")
lmax=0
smax=0
n=0
end=$(t_until 60000)
while t_pstate "$pid"; [ -n "$T_PST" ] && [ "$T_PST" != Z ]; do
	s=$(stat -c %s "$L" 2>/dev/null || echo 0)
	[ "$s" -gt "$lmax" ] && lmax=$s
	# blocks the spool holds on the disk (its size is only apparent)
	b=$(stat -L -c '%b*%B' "/proc/$tool/fd/1" 2>/dev/null)
	if [ -n "$b" ]; then
		n=$((n + 1))
		[ $((b)) -gt "$smax" ] && smax=$((b))
	fi
	# an uncapped log grows by GiBs a minute: stop before the disk fills
	if [ "$s" -gt $((64 * SMALL)) ] || [ "$(t_now_ms)" -ge "$end" ]; then
		kill -TERM "$pid"
		break
	fi
	sleep 0.05
done
t_wait_pid "$pid" "$(t_ms 20000)"
echo "# endless: log at most $lmax bytes, spool at most $smax bytes on" \
    "the disk, $n samples"
is "$T_RC" 5 "endless: timed out (exit 5)"
is "$(jget "$R" 'd["timed_out"]')" true "endless: the deadline closed it"
ok $(( n < 3 )) "endless: sampled while the tool ran ($n)"
ok $(( lmax > SMALL )) "endless: the log never passed its cap ($lmax)"
# (16 MiB unread stop the tool; add what it writes while the worker reads
# 64 KiB, which on a loaded machine or under valgrind is a lot of `yes`)
ok $(( smax > 256 * SMALL )) \
    "endless: the spool never held more than 256 MiB on the disk ($smax)"
read -r size head marks dropped sum <<<"$(logcheck "$L" 0)"
ok $(( size > SMALL || marks != 1 )) "endless: the log ends capped, marked"
is "$(head -n 1 "$L")" begin "endless: its head is kept"
t_wait_gone "$M" "$(t_ms 5000)"
ok $? "no tool left"
t_done
