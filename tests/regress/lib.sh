# lib.sh: sourced by every regression test.  Gives a private temp dir that
# is removed on exit, a watchdog that kills the test (and only its own
# process group) if it hangs, and TAP output helpers.
set -u

: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
SUP="$top_builddir/ccw-supervisor"
WRK="$top_builddir/ccw-worker"
WRAP=${TESTS_WRAPPER:-}

T_N=0
T_FAILED=0
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ccw-test.XXXXXX")
# git looks no higher than the test's own directory: a project root made
# under it is no git repository (isolation none, as before worktrees)
# even when TMPDIR lies inside a git clone of this repository; a test
# that wants one runs git init in its root.
GIT_CEILING_DIRECTORIES=$(dirname "$T_TMP")
export GIT_CEILING_DIRECTORIES

t_cleanup() {
	t_watchdog_end
	rm -rf "$T_TMP"
}
trap t_cleanup EXIT

# python3 as the interpreter itself, first on PATH for the test and all it
# starts: a version manager's shim (pyenv's is a shell script) costs half
# a second a call, and a test calls python3 for every request and check.
t_python() {
	local py
	py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
	[ -x "$py" ] || return 0
	mkdir -p "$T_TMP/.bin"
	ln -sf "$py" "$T_TMP/.bin/python3"
	PATH=$T_TMP/.bin:$PATH
	export PATH
}
t_python

# t_watchdog SECONDS: abort the whole test if it runs longer.  It only
# guards against a hang, so it is generous: SECONDS is what the test takes
# on a quiet machine at worst, and a loaded CI machine (or valgrind) gets
# CCW_WATCHDOG_SCALE times that (default 3).  Its sleep holds no copy of
# the test's stdout and dies with it: the TAP driver reads that pipe to
# its end, so a sleep left holding it (orphaned when the watchdog was
# killed) kept a finished test "running" until the full watchdog time,
# 720 s for serve-metrics-prom.sh in every make check (2026-11-28).
t_watchdog() {
	local me=$$ s=$(( $1 * ${CCW_WATCHDOG_SCALE:-3} ))
	(
		trap 'kill "$sp" 2>/dev/null; exit 0' TERM
		sleep "$s" </dev/null >/dev/null 2>&1 &
		sp=$!
		wait "$sp" || exit 0
		echo "not ok - watchdog: test exceeded $s s"
		kill -TERM "$me"
	) &
	T_WATCHDOG=$!
}

# t_watchdog_end: the watchdog told to go (SIGTERM: its trap ends its
# sleep) and waited for, before anything SIGKILLs the test's jobs (it is
# one: killed so, its sleep would be orphaned).
t_watchdog_end() {
	[ -n "${T_WATCHDOG:-}" ] && kill "$T_WATCHDOG" 2>/dev/null &&
	    wait "$T_WATCHDOG" 2>/dev/null
	T_WATCHDOG=
}

# ok COND_STATUS DESCRIPTION: one TAP line; returns 1 when it failed
ok() {
	T_N=$((T_N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $T_N - $2"
	else
		echo "not ok $T_N - $2"
		T_FAILED=$((T_FAILED + 1))
		return 1
	fi
}

# is GOT WANT DESCRIPTION
is() {
	if [ "$1" = "$2" ]; then
		ok 0 "$3"
	else
		ok 1 "$3"
		echo "#   got '$1', want '$2'"
	fi
}

# like TEXT REGEX DESCRIPTION
like() {
	if printf '%s' "$1" | grep -Eq -- "$2"; then
		ok 0 "$3"
	else
		ok 1 "$3"
		printf '#   %s\n' "got: $(printf '%s' "$1" | head -c 300)"
	fi
}

t_done() {
	t_check_worker_logs
	echo "1..$T_N"
	[ "$T_FAILED" -eq 0 ]
}

# t_fake_tool PATH: start a fake agent CLI at PATH (made executable)
# whose every run counts itself in $dir/n and keeps its argv in
# $dir/argv.N; the caller appends the rest of its body (cat >>PATH),
# where $dir and $n are set.
t_fake_tool() {
	cat >"$1" <<'FAKEHEAD'
#!/bin/bash
dir=$(dirname "$0")
n=$(( $(cat "$dir/n" 2>/dev/null || echo 0) + 1 ))
echo $n >"$dir/n"
printf '%s\n' "$@" >"$dir/argv.$n"
FAKEHEAD
	chmod +x "$1"
}

# t_valgrind_worker: when the suite runs under valgrind (make
# check-valgrind), run every worker this test spawns under valgrind too,
# each writing its own log; t_done fails the test if any log has an error.
t_valgrind_worker() {
	case "$WRAP" in
	*valgrind*) ;;
	*) return 0 ;;
	esac
	cat >"$T_TMP/vg-worker" <<VGEOF
#!/bin/sh
exec valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --log-file="$T_TMP/vg-worker.%p.log" "$WRK" "\$@"
VGEOF
	chmod +x "$T_TMP/vg-worker"
	export CCW_WORKER="$T_TMP/vg-worker"
	T_VG_WORKER=1
}

# t_check_worker_logs: one test point for the valgrind logs of workers.
t_check_worker_logs() {
	local f bad= n=0
	[ -n "${T_VG_WORKER:-}" ] || return 0
	for f in "$T_TMP"/vg-worker.*.log; do
		[ -e "$f" ] && n=$((n + 1))
		[ -s "$f" ] && bad="$bad $f"
	done
	ok $(( n == 0 )) "workers ran under valgrind ($n)"
	if [ -z "$bad" ]; then
		ok 0 "workers under valgrind: no error, no leak"
	else
		ok 1 "workers under valgrind: no error, no leak"
		cat $bad | sed 's/^/#   /' | head -n 40
	fi
}

# --- helpers for the agent tests (fake agent, JSON, control sessions,
# processes).  Every wait below is bounded.
FAKE="$top_builddir/tests/fake-agent"
T_MARKERS=

# jget FILE EXPR: print the Python expression EXPR over the JSON object d
# read from FILE ("-": stdin).  Strings print raw, null/true/false as in
# JSON, anything else as compact JSON.  Exit 1 if the input is not JSON.
jget() {
	python3 -c '
import json, sys
src = sys.argv[1]
try:
    d = json.load(sys.stdin if src == "-" else open(src))
    v = eval("(" + sys.argv[2] + ")", {"d": d})
except Exception as e:
    print("<jget: %s>" % e)
    sys.exit(1)
if isinstance(v, str):
    print(v)
else:
    print(json.dumps(v, separators=(",", ":")))
' "$1" "$2"
}

# t_skip DESCRIPTION: a TAP skip line.
t_skip() {
	T_N=$((T_N + 1))
	echo "ok $T_N # SKIP $1"
}

# t_within EL BOUND DESCRIPTION: an upper timing bound, EL ms at most
# BOUND + $SLACK.  Under a wrapper or the sanitizers it is not judged:
# valgrind slows each step 20-50 times, ASan 2-3 times, and by how much
# depends on the machine's load (a CI run saw 6.2 s against 3 + 3 s), so
# a bound there says nothing about the code; the figure is kept in a
# SKIP.  Lower bounds ("not before") are judged everywhere with plain ok.
t_within() {
	if [ -n "$WRAP" ] || [ "${CCW_SANITIZERS:-no}" = yes ]; then
		t_skip "$3: timing not judged under a wrapper ($1 ms)"
		return 0
	fi
	ok $(( $1 > $2 + SLACK )) "$3"
}

# t_now_ms: wall clock in milliseconds.  bash's own clock
# ($EPOCHREALTIME, bash 5): the waits below call this every 20-50 ms, and
# a `date` process each time is load on a busy 2-core machine.
t_now_ms() {
	local us
	if [ -n "${EPOCHREALTIME:-}" ]; then
		us=${EPOCHREALTIME/[.,]/}
		echo $((10#$us / 1000))
	else
		us=$(date +%s%N)
		echo $((us / 1000000))
	fi
}

# t_pstate PID: $T_PST, the state letter of /proc/PID/status (R, S, Z...),
# empty if the process is gone; read by the shell itself, no process
# started: t_marked asks it of every process it finds (200 at once in
# agent-many.sh), on every poll.
t_pstate() {
	local k v
	T_PST=
	{ while read -r k v; do
		[ "$k" = State: ] && { T_PST=${v%% *}; break; }
	done <"/proc/$1/status"; } 2>/dev/null
	return 0
}

# t_measure_rss: true when memory figures of the supervisor mean something
# (not under ASan, not under a wrapper such as valgrind).
t_measure_rss() {
	[ "${CCW_SANITIZERS:-no}" != yes ] && [ -z "$WRAP" ]
}

# t_vm PID FIELD: a /proc/PID/status figure (VmRSS, VmHWM) in KiB, or
# nothing if the process is gone.
t_vm() {
	sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status" \
	    2>/dev/null
}

# t_marker VAR NAME: set VAR to a string unique to this test run, to be put
# in the argv of every tool the test starts so that its processes can be
# found, and killed on exit if anything survived.
t_marker() {
	printf -v "$1" 'ccwtest-%s-%s-%s' "$2" "$$" "$RANDOM"
	T_MARKERS="$T_MARKERS ${!1}"
}

# t_until MS: the wall-clock deadline MS ms from now, MS stretched as
# t_ms stretches it: the waiting helpers below give a slow build that
# long to reach a state (a bound a test judges is t_within's, not theirs).
t_until() {
	echo $(( $(t_now_ms) + $(t_ms "$1") ))
}

# t_marked MARKER: PIDs of the live processes whose command line holds
# MARKER (zombies do not count: they are dead, their parent just has not
# reaped them yet).
t_marked() {
	local p
	for p in $(pgrep -f -- "$1"); do
		[ "$p" = "$$" ] && continue
		t_pstate "$p"
		[ -n "$T_PST" ] && [ "$T_PST" != Z ] && echo "$p"
	done
}

# t_wait_gone MARKER MS: wait up to MS ms (t_until) until no process holds MARKER;
# prints the survivors and fails if some are left.
t_wait_gone() {
	local left end
	end=$(t_until "$2")
	while :; do
		left=$(t_marked "$1")
		[ -z "$left" ] && return 0
		[ "$(t_now_ms)" -ge "$end" ] && break
		sleep 0.05
	done
	for p in $left; do
		echo "#   survivor: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
	done
	return 1
}

# t_wait_count MARKER N MS: wait up to MS ms (t_until) until at least N live
# processes hold MARKER.
t_wait_count() {
	local end
	end=$(t_until "$3")
	while [ "$(t_marked "$1" | wc -l)" -lt "$2" ]; do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# t_wait_ignoring MARKER MS: wait up to MS ms (t_until) until a live
# process holding MARKER ignores SIGTERM (bit 15 of SigIgn in its
# /proc status): a tool is visible from its exec on, but under a sanitizer
# it takes a while to reach the signal(2) call a grace test relies on.
t_wait_ignoring() {
	local end p ign
	end=$(t_until "$2")
	while :; do
		for p in $(t_marked "$1"); do
			ign=$(awk '/^SigIgn:/ { print $2 }' "/proc/$p/status" \
			    2>/dev/null)
			[ -n "$ign" ] && (( (0x$ign >> 14) & 1 )) && return 0
		done
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# t_wait_child PID MS: wait up to MS ms (t_until) until PID has a child;
# prints the first.  A marker passed in a supervisor's own argv (agent
# --command) matches the supervisor itself, so t_wait_count cannot say
# that its worker or the worker's tool exists yet.
t_wait_child() {
	local end c
	end=$(t_until "$2")
	while :; do
		c=$(pgrep -P "$1" | head -n 1)
		[ -n "$c" ] && { echo "$c"; return 0; }
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# t_wait_tool PID PATTERN MS: wait up to MS ms (t_until) until PID has a
# child whose command line matches PATTERN; print its pid.  A worker's
# first child may be git (the files it observes before a turn), so its
# tool is found by its own argv, not as the first child.
t_wait_tool() {
	local end c
	end=$(t_until "$3")
	while :; do
		c=$(pgrep -P "$1" -f -- "$2" | head -n 1)
		[ -n "$c" ] && { echo "$c"; return 0; }
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# t_wait_pid PID MS: wait up to MS ms (t_until) for a background child of this
# shell to end, then reap it; its exit status goes to $T_RC (124 if it
# had to be killed).
t_wait_pid() {
	# (bash reports a job killed by a signal on stderr: not news here)
	t_wait_pid_ "$@" 2>/dev/null
}

# t_wait_pid_ PID MS: the body of t_wait_pid.
t_wait_pid_() {
	local end
	end=$(t_until "$2")
	while :; do
		t_pstate "$1"
		[ -z "$T_PST" ] || [ "$T_PST" = Z ] && break
		if [ "$(t_now_ms)" -ge "$end" ]; then
			kill -KILL "$1"
			wait "$1"
			T_RC=124
			return 1
		fi
		sleep 0.02
	done
	wait "$1"
	T_RC=$?
	return 0
}

# The exit trap (replaces t_cleanup's): first the daemons a test names
# in T_STOP_VARS (variables holding pids: SIGTERM, then waited for, so
# they stop cleanly), then kill what a failed test left behind (only its
# own jobs and the processes it marked), the watchdog ended before; then
# the lib's cleanup.  A test adds to this trap rather than replacing it.
T_STOP_VARS=
t_cleanup_agents() {
	local m p v
	t_watchdog_end
	for v in $T_STOP_VARS; do
		p=${!v:-}
		[ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	for p in $(jobs -p); do
		kill -KILL "$p" 2>/dev/null
	done
	for m in $T_MARKERS; do
		for p in $(t_marked "$m"); do
			kill -KILL "$p" 2>/dev/null
		done
	done
	t_cleanup
}
trap t_cleanup_agents EXIT

# agent OUT ARGS...: run `ccw-supervisor agent --json ARGS` (at most 60 s);
# stdout to OUT, stderr to OUT.err; the exit status is returned.
agent() {
	local out=$1
	shift
	timeout -k 2 60 $WRAP "$SUP" agent --json "$@" >"$out" 2>"$out.err"
}

# ctl_start OUTFILE ARGS...: start `ccw-supervisor control ARGS` in the
# background.  Requests go in through a FIFO held open on $CTL_FD;
# responses collect in OUTFILE, stderr in OUTFILE.err.  $CTL_PID is the
# supervisor, $CTL_LINES counts the lines sent.  CTL_CMD=mcp starts
# `ccw-supervisor mcp ARGS` the same way.
ctl_start() {
	CTL_OUT=$1
	shift
	rm -f "$CTL_OUT.in"
	mkfifo "$CTL_OUT.in"
	: >"$CTL_OUT"
	$WRAP "$SUP" "${CTL_CMD:-control}" "$@" <"$CTL_OUT.in" >"$CTL_OUT" \
	    2>"$CTL_OUT.err" &
	CTL_PID=$!
	exec {CTL_FD}>"$CTL_OUT.in"
	CTL_LINES=0
	# A supervisor that died must fail the test's checks, not kill it.
	trap '' PIPE
}

# ctl_send LINE...: write request lines to the control session.
ctl_send() {
	local l
	for l in "$@"; do
		printf '%s\n' "$l" >&"$CTL_FD"
		CTL_LINES=$((CTL_LINES + 1))
	done
}

# ctl_recv ID [MS]: wait (default 10 s, t_until) for the response carrying "id": ID
# (a number, or null) and print it; fails with nothing printed on timeout.
ctl_recv() {
	local end line dead=0
	end=$(t_until "${2:-10000}")
	while :; do
		line=$(grep -E -m 1 "\"id\" *: *$1 *[,}]" "$CTL_OUT")
		[ -n "$line" ] && { printf '%s\n' "$line"; return 0; }
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		[ "$dead" = 1 ] && return 1
		kill -0 "$CTL_PID" 2>/dev/null || dead=1
		sleep 0.02
	done
}

# ctl_stop [MS]: end the session with EOF on its stdin and wait (default
# 15 s) for the supervisor to exit; its exit status goes to $T_RC.
ctl_stop() {
	exec {CTL_FD}>&-
	t_wait_pid "$CTL_PID" "${1:-15000}"
}

# t_run_config ROOT INIT DEVELOP DEBUG VALIDATE COMPLETE [EXTRA_JSON]: write
# ROOT/.loop/config.json giving each role its bash command (and EXTRA_JSON's
# members, e.g. {"grace_ms": 500}); for the run-*.sh tests.
t_run_config() {
	mkdir -p "$1/.loop"
	python3 - "$@" <<'PYEOF'
import json, sys
root, cmds = sys.argv[1], sys.argv[2:7]
extra = json.loads(sys.argv[7]) if len(sys.argv) > 7 else {}
roles = {}
for name, cmd in zip(["init", "develop", "debug", "validate", "complete"], cmds):
    roles[name] = dict(command=cmd, **extra)
json.dump({"default_tool": "bash", "roles": roles},
    open(root + "/.loop/config.json", "w"), indent=1)
PYEOF
}

# t_ms MS: a deadline a test waits for something that must happen, scaled
# for how much slower everything runs under the sanitizers (2x) and
# valgrind (6x): a deadline, not a bound the test asserts.
t_ms() {
	local k=1
	[ "${CCW_SANITIZERS:-no}" = yes ] && k=2
	[ -n "$WRAP" ] && k=6
	echo $(( $1 * k ))
}

# t_slack: $SLACK, the one allowance added to every upper timing bound.
# A loaded 2-core CI machine delays a wake-up by hundreds of milliseconds,
# so even a plain build gets some (CCW_TEST_SLACK overrides that base);
# valgrind and the sanitizers slow every step, so they get more.
t_slack() {
	SLACK=${CCW_TEST_SLACK:-1500}
	[ "${CCW_SANITIZERS:-no}" = yes ] && SLACK=$((SLACK + 1500))
	[ -n "$WRAP" ] && SLACK=$((SLACK + 4000))
}

# t_loop_run ROOT ID ARGS...: `run` of loop ID in ROOT in the foreground
# (60 s at most); stdout ROOT.out, stderr ROOT.err; the exit status in
# $RC, the state file in $F; a timed-out run shows its last words.
t_loop_run() {
	local root=$1 id=$2
	shift 2
	timeout -k 2 60 $WRAP "$SUP" run -C "$root" --loop-id "$id" "$@" \
	    >"$root.out" 2>"$root.err"
	RC=$?
	F=$root/.loop/$id.json
	[ "$RC" -eq 124 ] && sed 's/^/#   /' "$root.err" | tail -n 5
	return 0
}

# t_loop_start ROOT ID ARGS...: the same in the background; $PID, $F.
t_loop_start() {
	local root=$1 id=$2
	shift 2
	$WRAP "$SUP" run -C "$root" --loop-id "$id" "$@" >"$root.out" \
	    2>"$root.err" &
	PID=$!
	F=$root/.loop/$id.json
}

# t_poll MS CMD...: run CMD every 20 ms until it succeeds (0) or MS ms
# (t_until) pass (1): the one generic wait, for conditions no t_wait_*
# names.
t_poll() {
	local end
	end=$(t_until "$1")
	shift
	until "$@"; do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.02
	done
}

# t_frozen PID: PID (alive) and its children frozen: stopped (T, the
# freeze's SIGSTOP sweep) or in a frozen cgroup of the v2 hierarchy
t_frozen() {
	local p cg v2
	v2=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") {
	    if ($(i + 1) == "cgroup2") { print $5; exit } ; break } }' \
	    /proc/self/mountinfo)
	for p in "$1" $(pgrep -P "$1"); do
		t_pstate "$p"
		[ -n "$T_PST" ] || return 1
		cg=$(sed -n 's/^0:://p' "/proc/$p/cgroup" 2>/dev/null)
		[ "$T_PST" = T ] || grep -qx 'frozen 1' \
		    "$v2$cg/cgroup.events" 2>/dev/null || return 1
	done
}

# t_wait_file PATH MS: wait up to MS ms (t_until) until PATH exists.
t_wait_file() {
	local end
	end=$(t_until "$2")
	while [ ! -e "$1" ]; do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.02
	done
}

# t_batch_items FILE N: a batch's JSONL input of N items, the task of
# each naming it (ITEM-1 .. ITEM-N) so that a tool can log whose it is.
t_batch_items() {
	local i
	: >"$1"
	for i in $(seq 1 "$2"); do
		printf '{"title": "item %d", "description": "ITEM-%d: do thing %d", "max_iterations": 3}\n' \
		    "$i" "$i" "$i" >>"$1"
	done
}

# t_claude_cfg ROOT CLAUDE OK: ROOT/.loop/config.json with develop on
# the claude stand-in CLAUDE, the other roles bash running OK ROLE (a
# budget's tests: batch-limits.sh, batch-hold.sh)
t_claude_cfg() {
	mkdir -p "$1/.loop"
	python3 - "$@" <<'PYEOF'
import json, sys
root, claude, ok = sys.argv[1:4]
roles = {r: {"command": ok + " " + r, "grace_ms": 500} for r in
    ("init", "develop", "debug", "validate", "complete")}
roles["develop"] = {"tool": "claude", "grace_ms": 500}
json.dump({"default_tool": "bash", "roles": roles,
    "tools": {"claude": {"path": claude}}},
    open(root + "/.loop/config.json", "w"), indent=1)
PYEOF
}

# t_batch_id ERRFILE: the batch id `batch` printed on stderr.
t_batch_id() {
	sed -n 's/.*batch: \(started\|resuming\) \(batch-[0-9T]*-[0-9a-f]*\):.*/\2/p' \
	    "$1" | head -n 1
}

# t_probe_out FILE [PREFIX]: a probe script's output as checks: each
# "ok 0 DESC" (passed) or "ok 1 DESC" line one check named PREFIX DESC,
# each "ms TEXT" line a diagnostic (http-limits', serve-mcp's probes).
t_probe_out() {
	local line good desc
	while IFS= read -r line; do
		case "$line" in
		"ok "*)
			good=${line#ok }
			desc=${good#? }
			good=${good%% *}
			ok $(( ! good )) "${2:-}$desc"
			;;
		"ms "*) echo "# ${line#ms }" ;;
		esac
	done <"$1"
}
