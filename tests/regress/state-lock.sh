#!/bin/bash
# state-lock.sh: commits run off the event loop.  A front end holding
# {id}.lock does not stop `run`: the next worker starts while it is held
# and a SIGTERM is honoured at once (exit 4, the file consistent).  With
# every fsync slowed (strace inject), a deadline armed after a slow write
# still counts from the spawn: validate is not cut off early.  The same
# for the side files' locks (history, progress): they are written off the
# loop, the run goes on while they are held, and a stop drops what waits
# for them with a warning.
. "$(dirname "$0")/lib.sh"
t_watchdog 120
t_valgrind_worker
t_slack

OK="exec '$FAKE' result success"

# exists FILE MS: poll until FILE exists (at most MS ms).
exists() {
	local end=$(( $(t_now_ms) + $2 ))
	until [ -e "$1" ]; do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.02
	done
}

# --- a front end holds the lock while run goes on, then SIGTERM
R=$T_TMP/held
ID=held-1
HOLD=$((3000 + SLACK))	# longer than any bound below, on any build
t_run_config "$R" \
    "touch '$R.init'; until [ -e '$R.locked' ]; do sleep 0.02; done; $OK" \
    "t_now=\$(date +%s%N); echo \$((t_now / 1000000)) >'$R.develop'; sleep 30; $OK" \
    "$OK" "$OK" "$OK"
$WRAP "$SUP" run -C "$R" --loop-id "$ID" --json "Hold" >"$R.out" 2>"$R.err" &
RUN=$!
exists "$R.init" "$(t_ms 10000)"
ok $? "held: init started (run is past its first commit)"
python3 - "$R/.loop/$ID.lock" "$R.locked" "$R.released" "$HOLD" <<'PYEOF' &
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(int(sys.argv[4]) / 1000.0)
open(sys.argv[3], "w").write("%d\n" % int(time.time() * 1000))
fcntl.flock(fd, fcntl.LOCK_UN)
PYEOF
HOLDER=$!
# init's result is in: its commit now waits for the lock
end=$(( $(t_now_ms) + $(t_ms 10000) ))
until grep -q '"worker_result"' "$R.out" 2>/dev/null; do
	[ "$(t_now_ms)" -ge "$end" ] && break
	sleep 0.02
done
exists "$R.develop" $(( HOLD / 3 ))
ok $? "held: the next worker starts while the lock is held (the commit waits aside)"
t0=$(t_now_ms)
kill -TERM "$RUN"
t_wait_pid "$RUN" 10000
el=$(( $(t_now_ms) - t0 ))
is "$T_RC" 4 "held: SIGTERM: exit 4"
t_within "$el" 1000 "held: SIGTERM honoured within 1 s + slack ($el ms, lock held $HOLD ms)"
ok $([ ! -e "$R.released" ]; echo $?) "held: ... while the lock was still held"
wait "$HOLDER"
$WRAP "$SUP" state -C "$R" validate "$ID" >/dev/null 2>&1
ok $? "held: the state file is valid afterwards"
is "$(jget "$R/.loop/$ID.json" 'd["status"]')" running \
    "held: a stop leaves the status alone"
ok $([ ! -e "$R/.loop/$ID.json.tmp" ]; echo $?) "held: no temp file left"

# --- a front end holds the side files' locks: run goes on, then SIGTERM
R=$T_TMP/side
ID=side-1
t_run_config "$R" \
    "touch '$R.init'; until [ -e '$R.locked' ]; do sleep 0.02; done; $OK" \
    "t_now=\$(date +%s%N); echo \$((t_now / 1000000)) >'$R.develop'; sleep 30; $OK" \
    "$OK" "$OK" "$OK"
$WRAP "$SUP" run -C "$R" --loop-id "$ID" --json "Side" >"$R.out" 2>"$R.err" &
RUN=$!
exists "$R.init" "$(t_ms 10000)"
ok $? "side: init started"
python3 - "$R/.loop" "$ID" "$R.locked" "$R.released" "$HOLD" <<'PYEOF' &
import fcntl, os, sys, time
d, i = sys.argv[1], sys.argv[2]
os.makedirs(os.path.join(d, i + ".progress"), exist_ok=True)
fds = []
for n in [i + ".history.jsonl", i + ".progress/develop.md",
          i + ".progress/changes.log"]:
    fd = os.open(os.path.join(d, n), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    fds.append(fd)
open(sys.argv[3], "w").close()
time.sleep(int(sys.argv[5]) / 1000.0)
open(sys.argv[4], "w").write("%d\n" % int(time.time() * 1000))
for fd in fds:
    fcntl.flock(fd, fcntl.LOCK_UN)
PYEOF
HOLDER=$!
exists "$R.locked" "$(t_ms 10000)"
exists "$R.develop" $(( HOLD / 2 )) && [ ! -e "$R.released" ]
ok $? "side: the next worker starts while the side files are locked"
t0=$(t_now_ms)
kill -TERM "$RUN"
t_wait_pid "$RUN" 10000
el=$(( $(t_now_ms) - t0 ))
is "$T_RC" 4 "side: SIGTERM: exit 4"
t_within "$el" 1000 "side: SIGTERM honoured within 1 s + slack ($el ms, locks held $HOLD ms)"
ok $([ ! -e "$R.released" ]; echo $?) "side: ... while the locks were still held"
grep -q 'history.jsonl: locked by another program; record dropped (stopping)' "$R.err"
ok $? "side: the records that waited are not lost silently (a warning each)"
wait "$HOLDER"
$WRAP "$SUP" state -C "$R" validate "$ID" >/dev/null 2>&1
ok $? "side: the state file is valid afterwards"
is "$(jget "$R/.loop/$ID.json" 'd["skill_state"]["completed_actions"]')" \
    '["init"]' "side: init's commit landed while its side files waited"

# --- every fsync takes 1 s: a deadline armed right after one counts from then
if ! command -v strace >/dev/null 2>&1 || ! strace -o /dev/null true 2>/dev/null; then
	t_skip "slow fsync: strace is missing or cannot trace here"
	t_skip "slow fsync: strace is missing or cannot trace here"
elif [ "${CCW_SANITIZERS:-no}" = yes ] || [ -n "$WRAP" ]; then
	# strace -f over ASan or valgrind slows every syscall by far more than
	# the deadline's slack: the plain build judges this case
	t_skip "slow fsync: not under the sanitizers or a wrapper"
	t_skip "slow fsync: not under the sanitizers or a wrapper"
else
	R=$T_TMP/slow
	mkdir -p "$R/.loop"
	python3 - "$R/.loop/config.json" "$OK" $((2500 + SLACK)) <<'PYEOF'
import json, sys
ok, budget = sys.argv[2], int(sys.argv[3])
roles = {r: dict(command=ok) for r in
    ["init", "develop", "debug", "validate", "complete"]}
roles["validate"] = dict(command="sleep 2.5; " + ok, timeout_ms=budget,
    nudge_ms=300, grace_ms=300)
json.dump({"default_tool": "bash", "roles": roles}, open(sys.argv[1], "w"))
PYEOF
	timeout -k 2 $(( $(t_ms 90000) / 1000 )) strace -f -o /dev/null \
	    -e trace=fsync -e inject=fsync:delay_exit=1000000 \
	    $WRAP "$SUP" run -C "$R" --loop-id slow-1 "Slow" \
	    >"$R.out" 2>"$R.err"
	RC=$?
	is "$RC" 0 "slow fsync: the loop completes" ||
	    tail -n 20 "$R.err" | sed 's/^/#   /'
	is "$(jget "$R/.loop/slow-1.json" '[d["status"], d.get("failure_reason")]')" \
	    '["completed",null]' "slow fsync: validate (2.5 s of its budget) was not cut off"
	[ "$RC" -ne 0 ] && sed 's/^/#   /' "$R.err" | tail -n 5
fi
t_done
