#!/bin/bash
# run.sh: `make bench`.  Owns the figures of DESIGN.md section 9: each one
# measured against its baseline in the same run, ours and the baseline
# alternated, the median of BENCH_RUNS (>= 5) runs; prints one table and
# writes tests/bench/results.json in the build directory.  Never timed asserts.
set -u
export LC_ALL=C

top_builddir=${top_builddir:-$PWD}
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
bench=$srcdir/tests/bench
RUNS=${BENCH_RUNS:-5}
[ "$RUNS" -ge 5 ] 2>/dev/null || RUNS=5

SUP=$top_builddir/ccw-supervisor
WRK=$top_builddir/ccw-worker
FAKE=$top_builddir/tests/fake-agent
HAMMER=$top_builddir/tests/state-hammer
export CCW_WORKER=$WRK

LIFE_N=${BENCH_LIFECYCLES:-1000}
LIFE_J=16
RTT_N=2000
RTT_SIZE=64
IDLE_N=${BENCH_IDLE_AGENTS:-1000}
IDLE_S=${BENCH_IDLE_S:-10}
FLOOD_MIB=${BENCH_FLOOD_MIB:-1024}
COMMIT_N=200
SERVE_N=${BENCH_SERVE_LOOPS:-200}
SERVE_BIG=${BENCH_SERVE_BIG:-2000}
BATCH_N=${BENCH_BATCH_ITEMS:-1000}
BATCH_J=8
SOAK_S=${BENCH_SOAK_S:-1200}

marker=ccwbench-$$-$RANDOM
tmp=

# Say what went wrong and where, on stderr, without stopping the bench.
warn() {
	echo "bench: $*" >&2
}

# Whatever happens, nothing of ours survives and the temp dir (with the
# 1 GiB files) goes.  Ours are the processes with our unique marker in
# their command line: the temp dir's name carries it, so every supervisor
# (-C under it), driver and tool of the run does.
cleanup() {
	local p
	for p in $(pgrep -f -- "$marker" 2>/dev/null); do
		[ "$p" != $$ ] && kill -KILL "$p" 2>/dev/null
	done
	[ -n "$tmp" ] && rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The median of the numbers on stdin, or nothing when there are none.
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) exit
		if (NR % 2) printf "%.6g\n", v[(NR + 1) / 2]
		else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# a / b, or "n/a" when either is missing or b is zero.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "" || b == "" || a == "n/a" || b == "n/a" || b + 0 == 0)
			print "n/a"
		else printf "%.2f\n", a / b }'
}

# Wall seconds of a command; its output is discarded, its errors kept.
timed() {
	local t0 t1
	t0=$EPOCHREALTIME
	"$@" >/dev/null 2>>"$tmp/errors" || return 1
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }'
}

# One member of a flat JSON object given on stdin.
jget() {
	python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}

# Rows of the table, tab-separated: figure ours baseline unit ratio target meets.
ROWS=()

# DESIGN.md section 11's targets, the one place the bench writes them:
# KEY -> "OP LIMIT SHOWN".  A row names its key (trow) and never a number
# of its own, so a missed target shows as missed.
declare -A TARGET=(
	[life_parallel]=">= 2 >= 2x"
	[life_raw]=">= 0.8 >= 0.8x"
	[rtt_relay]="<= 1.2 <= 1.2x"
	[commits]=">= 0.9 >= 0.9x"
	[burst]="<= 5 <= 5"
	[idle_rss]="<= 20 <= 20 MiB"
	[idle_cpu]="<= 0.5 ~0% (<= 0.5)"
	[left]="<= 0 0"
	[capture]=">= 0.8 >= 0.8x"
	[flat]="<= 4 flat (+<= 4 MiB)"
	[prompts]="<= 0.3 <= 0.3x"
	[serve]=">= 2 >= 2x"
	[serve_p99]="<= 50 <= 50 ms"
	[serve_rss]="<= 64 <= 64 MiB"
	[serve2k_rss]="<= 256 <= 256 MiB"
	[batch]=">= 1 >= 1x"
	[soak]="<= 1 <= 1 MiB/h"
	[gitwt]="<= 1.2 <= 1.2x"
)

# trow KEY FIGURE OURS BASELINE UNIT RATIO VALUE: a row judged by
# TARGET[KEY] on VALUE (its ratio, or the figure itself).
trow() {
	local op lim shown
	read -r op lim shown <<<"${TARGET[$1]}"
	row "$2" "$3" "$4" "$5" "$6" "$shown" "$(meets "$7" "$op" "$lim")"
}

# Record a row; meets is yes, no or n/a.
row() {
	ROWS+=("$1"$'\t'"$2"$'\t'"$3"$'\t'"$4"$'\t'"$5"$'\t'"$6"$'\t'"$7")
}

# yes when the comparison holds, n/a when a number is missing.
meets() {
	awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN {
		if (v == "" || v == "n/a") { print "n/a"; exit }
		if (op == ">=") ok = (v + 0 >= t + 0); else ok = (v + 0 <= t + 0)
		print ok ? "yes" : "no" }'
}

# The prerequisites: our binaries, GNU parallel (installed if missing),
# the C baselines compiled into the temp dir.
setup() {
	local f cflags
	for f in "$SUP" "$WRK" "$FAKE"; do
		if [ ! -x "$f" ]; then
			warn "$f not built (run make bench from the build dir)"
			exit 1
		fi
	done
	if ! command -v parallel >/dev/null 2>&1; then
		apt-get install -y parallel >/dev/null 2>&1 ||
		    warn "GNU parallel is missing and could not be installed"
	fi
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$marker.XXXXXX") || exit 1
	mkdir -p "$tmp/bin"
	: >"$tmp/errors"
	cflags=$(pkg-config --cflags --libs msgpack-c 2>/dev/null ||
	    pkg-config --cflags --libs msgpack 2>/dev/null || echo -lmsgpackc)
	cflags="$cflags $(pkg-config --cflags --libs jansson 2>/dev/null ||
	    echo -ljansson)"
	for f in forkexec pingpong ctlbench; do
		# shellcheck disable=SC2086
		${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -Wall -o "$tmp/bin/$f" \
		    "$bench/$f.c" $cflags || { warn "cannot compile $f.c"; exit 1; }
	done
	ulimit -n "$(ulimit -Hn)" 2>/dev/null
	if [ "$(ulimit -n)" -lt $((IDLE_N * 2 + 64)) ] 2>/dev/null; then
		warn "ulimit -n is $(ulimit -n); the idle figure may fail"
	fi
}

# Figure 1: lifecycles per second, ours / GNU parallel / raw fork+exec,
# alternated in each run.  Ours is driven by ctlbench.c, a C client like
# the raw baseline (control.py's Python cost 6-7% of the CPU of a run).  Every run of ours gets a fresh project dir;
# the logs stay until the end (deleting thousands of inodes right before
# the next run makes ext4 inode allocation crawl, which is not ours).
fig_lifecycles() {
	local i s o=() p=() r=() mo mp mr
	echo "bench: lifecycles: $RUNS x ($LIFE_N jobs, $LIFE_J in flight)" >&2
	for i in $(seq "$RUNS"); do
		mkdir -p "$tmp/life$i"
		if s=$("$tmp/bin/ctlbench" lifecycles "$SUP" \
		    "$tmp/life$i" "$LIFE_N" "$LIFE_J" true 2>>"$tmp/errors" |
		    jget seconds); then
			o+=("$(awk -v n="$LIFE_N" -v s="$s" 'BEGIN { print n / s }')")
		else
			warn "lifecycles: our run $i failed"
		fi
		if command -v parallel >/dev/null &&
		    s=$(seq "$LIFE_N" | SHELL=/bin/bash timed parallel \
		    --will-cite -j"$LIFE_J" -N0 true); then
			p+=("$(awk -v n="$LIFE_N" -v s="$s" 'BEGIN { print n / s }')")
		fi
		if s=$(timed "$tmp/bin/forkexec" "$LIFE_N" "$LIFE_J" true); then
			r+=("$(awk -v n="$LIFE_N" -v s="$s" 'BEGIN { print n / s }')")
		fi
	done
	mo=$(printf '%s\n' "${o[@]}" | median)
	mp=$(printf '%s\n' "${p[@]}" | median)
	mr=$(printf '%s\n' "${r[@]}" | median)
	trow life_parallel "lifecycles vs GNU parallel" "${mo:-n/a}" \
	    "${mp:-n/a}" "lifecycles/s" "$(ratio "$mo" "$mp")" \
	    "$(ratio "$mo" "$mp")"
	trow life_raw "lifecycles vs raw fork+exec" "${mo:-n/a}" "${mr:-n/a}" \
	    "lifecycles/s" "$(ratio "$mo" "$mr")" "$(ratio "$mo" "$mr")"
}

# Figure 2: send_input round trips through supervisor and worker against
# a raw msgpack ping-pong.  Measured twice: with every process on one CPU
# (stable: each hop is a plain context switch) and free on all CPUs (what
# a user gets, but cross-CPU wake-ups on a small VM swing it by 2-5x).
# The control front end's own round trip (a `list`, answered from the
# table) and a raw ping-pong through a relay process are measured too.
# The client is ctlbench.c, C like the relay's pinger: with control.py,
# Python took 35% of the CPU of a round trip, which the relay never pays.
fig_roundtrip() {
	local i out pin o=() f=() d=() r=() y=() o2=() r2=()
	local mo mf md mr my mo2 mr2
	pin=
	if command -v taskset >/dev/null 2>&1; then
		pin="taskset -c 0"
	else
		warn "send_input: no taskset, the one-CPU rows are unpinned"
	fi
	echo "bench: send_input: $RUNS x $RTT_N round trips, 1 CPU and all" >&2
	for i in $(seq "$RUNS"); do
		mkdir -p "$tmp/rtt$i" "$tmp/rtt$i-free"
		# shellcheck disable=SC2086
		if out=$($pin "$tmp/bin/ctlbench" roundtrip "$SUP" \
		    "$tmp/rtt$i" "$RTT_N" "$RTT_SIZE" cat 2>>"$tmp/errors"); then
			o+=("$(jget send_input_us <<<"$out")")
			f+=("$(jget list_us <<<"$out")")
			d+=("$(awk -v a="${o[-1]}" -v b="${f[-1]}" \
			    'BEGIN { print a - b }')")
		else
			warn "send_input: our run $i failed"
		fi
		# shellcheck disable=SC2086
		out=$($pin "$tmp/bin/pingpong" "$RTT_N" "$RTT_SIZE" \
		    2>>"$tmp/errors") && r+=("$out")
		# shellcheck disable=SC2086
		out=$($pin "$tmp/bin/pingpong" "$RTT_N" "$RTT_SIZE" relay \
		    2>>"$tmp/errors") && y+=("$out")
		if out=$("$tmp/bin/ctlbench" roundtrip "$SUP" \
		    "$tmp/rtt$i-free" "$RTT_N" "$RTT_SIZE" cat \
		    2>>"$tmp/errors"); then
			o2+=("$(jget send_input_us <<<"$out")")
		fi
		out=$("$tmp/bin/pingpong" "$RTT_N" "$RTT_SIZE" \
		    2>>"$tmp/errors") && r2+=("$out")
	done
	mo=$(printf '%s\n' "${o[@]}" | median)
	mf=$(printf '%s\n' "${f[@]}" | median)
	md=$(printf '%s\n' "${d[@]}" | median)
	mr=$(printf '%s\n' "${r[@]}" | median)
	my=$(printf '%s\n' "${y[@]}" | median)
	mo2=$(printf '%s\n' "${o2[@]}" | median)
	mr2=$(printf '%s\n' "${r2[@]}" | median)
	# section 11's baseline is the relay: the same hops as ours
	trow rtt_relay "send_input round trip vs relay, 1 CPU" "${mo:-n/a}" \
	    "${my:-n/a}" "us" "$(ratio "$mo" "$my")" "$(ratio "$mo" "$my")"
	row "  vs raw direct ping-pong" "${mo:-n/a}" "${mr:-n/a}" "us" \
	    "$(ratio "$mo" "$mr")" "-" "n/a"
	row "  minus control front end" "${md:-n/a}" "${mr:-n/a}" "us" \
	    "$(ratio "$md" "$mr")" "-" "n/a"
	row "  control front end alone" "${mf:-n/a}" "-" "us" "-" "-" "n/a"
	row "  2 CPUs, vs raw direct" "${mo2:-n/a}" "${mr2:-n/a}" "us" \
	    "$(ratio "$mo2" "$mr2")" "-" "n/a"
}

# Figure 3: durable commits, from tests/state-hammer when it is built:
# `bench N` alternates state_commit with a raw write + fsync + rename +
# fsync(dir) of the same bytes (4 rounds); `burst 100` counts the fsyncs
# of 100 updates made in one event-loop turn.
fig_commits() {
	local i out o=() r=() b=() mo mr mb
	if [ ! -x "$HAMMER" ]; then
		echo "bench: commits: n/a (state store not built)" >&2
		trow commits "durable commits" "n/a (state store not built)" \
		    "n/a" "commits/s" "n/a" "n/a"
		trow burst "fsyncs for 100 results" \
		    "n/a (state store not built)" "n/a" "fsyncs" "n/a" "n/a"
		return
	fi
	echo "bench: commits: $RUNS x $COMMIT_N commits" >&2
	for i in $(seq "$RUNS"); do
		mkdir -p "$tmp/commit$i"
		"$HAMMER" "$tmp/commit$i" bench create bench >/dev/null \
		    2>>"$tmp/errors" || { warn "commits: create failed"; continue; }
		# "bench ours R raw R ratio X"
		if out=$("$HAMMER" "$tmp/commit$i" bench bench "$COMMIT_N" \
		    2>>"$tmp/errors"); then
			read -r _ _ "o[i]" _ "r[i]" _ <<<"$out"
		else
			warn "commits: run $i failed"
		fi
		# "commits C fsyncs F"
		if out=$("$HAMMER" "$tmp/commit$i" bench burst 100 \
		    2>>"$tmp/errors"); then
			read -r _ _ _ "b[i]" <<<"$out"
		fi
	done
	mo=$(printf '%s\n' "${o[@]}" | median)
	mr=$(printf '%s\n' "${r[@]}" | median)
	mb=$(printf '%s\n' "${b[@]}" | sort -g | tail -n 1)
	trow commits "durable commits" "${mo:-n/a}" "${mr:-n/a}" "commits/s" \
	    "$(ratio "$mo" "$mr")" "$(ratio "$mo" "$mr")"
	trow burst "fsyncs for 100 results" "${mb:-n/a}" "200" "fsyncs" \
	    "$(ratio "$mb" 200)" "${mb:-n/a}"
}

# Figure 4: IDLE_N agents whose tool hangs, in one control session; the
# supervisor's RSS and CPU over IDLE_S seconds; then all closed, and no
# worker or tool of ours may be left.
fig_idle() {
	local i out rss=() cpu=() wcpu=() left=() pids p n mr mc mw ml
	echo "bench: idle: $RUNS x $IDLE_N agents, ${IDLE_S}s idle" >&2
	for i in $(seq "$RUNS"); do
		mkdir -p "$tmp/idle$i"
		if ! out=$(python3 "$bench/control.py" idle "$SUP" \
		    "$tmp/idle$i" "$IDLE_N" "$IDLE_S" \
		    "exec $FAKE --marker $marker-idle hang" 2>>"$tmp/errors")
		then
			warn "idle: run $i failed"
			continue
		fi
		rss+=("$(awk -v k="$(jget rss_kib <<<"$out")" \
		    'BEGIN { printf "%.1f\n", k / 1024 }')")
		cpu+=("$(jget cpu_pct <<<"$out")")
		echo "bench: idle run $i: supervisor $(jget cpu_pct_ns \
		    <<<"$out")% of a core by schedstat, up in $(jget \
		    startup_s <<<"$out") s, closed in $(jget close_s \
		    <<<"$out") s" >&2
		wcpu+=("$(jget workers_cpu_pct <<<"$out")")
		n=0
		pids=$(jget worker_pids <<<"$out" | tr -d '[],')
		for p in $pids; do
			if [ -r "/proc/$p/cmdline" ] &&
			    tr '\0' ' ' <"/proc/$p/cmdline" | grep -q ccw-worker; then
				n=$((n + 1))
			fi
		done
		n=$((n + $(pgrep -f -- "$marker-idle" | wc -l)))
		left+=("$n")
	done
	mr=$(printf '%s\n' "${rss[@]}" | median)
	mc=$(printf '%s\n' "${cpu[@]}" | median)
	mw=$(printf '%s\n' "${wcpu[@]}" | median)
	ml=$(printf '%s\n' "${left[@]}" | sort -g | tail -n 1)
	trow idle_rss "idle $IDLE_N: supervisor RSS" "${mr:-n/a}" "-" "MiB" \
	    "-" "${mr:-n/a}"
	trow idle_cpu "idle $IDLE_N: supervisor CPU" "${mc:-n/a}" "-" \
	    "% of a core" "-" "${mc:-n/a}"
	row "idle $IDLE_N: all workers' CPU" "${mw:-n/a}" "-" "% of a core" \
	    "-" "-" "n/a"
	trow left "idle $IDLE_N: left after close" "${ml:-n/a}" "-" \
	    "processes" "-" "${ml:-n/a}"
}

# VmHWM of a process in KiB, or nothing once it is gone.
hwm() {
	local k v _
	[ -n "$1" ] || return
	while read -r k v _; do
		if [ "$k" = VmHWM: ]; then
			echo "$v"
			return
		fi
	done <"/proc/$1/status" 2>/dev/null
}

# One capture through `ccw-supervisor agent` in DIR; prints "SECONDS
# SUP_EARLY SUP_END WRK_EARLY WRK_END" (VmHWM in KiB once an eighth of the
# output is in the log, and at the end), sampled every 0.1 s.
capture_once() {
	local dir=$1 t0 t1 sup w="" v log size early=$((FLOOD_MIB * 1024 * 128))
	local se="" ss="" we="" ws=""
	t0=$EPOCHREALTIME
	# --log-max 0: the whole output in the file, as cat's (the default
	# cap would keep 64 MiB of it, and the log never reach its 1/8 mark)
	"$SUP" agent develop -C "$dir" --tool bash --json --log-max 0 \
	    --command "exec $FAKE --marker $marker-flood flood $FLOOD_MIB" \
	    bench >"$dir/result.json" 2>>"$tmp/errors" &
	sup=$!
	while [ -r "/proc/$sup/status" ] && v=$(hwm "$sup") && [ -n "$v" ]; do
		ss=$v
		[ -z "$w" ] && read -r w _ <"/proc/$sup/task/$sup/children" \
		    2>/dev/null
		v=$(hwm "$w")
		[ -n "$v" ] && ws=$v
		if [ -z "$se" ]; then
			log=$(echo "$dir"/.loop/*.workers/agent-1.log)
			size=$(stat -c %s "$log" 2>/dev/null || echo 0)
			if [ "$size" -ge "$early" ]; then
				se=$ss
				we=$ws
			fi
		fi
		sleep 0.1
	done
	wait "$sup" || return 1
	t1=$EPOCHREALTIME
	grep -q '"agent_status":"completed"' "$dir/result.json" || return 1
	rm -f "$dir"/.loop/*.workers/agent-1.log
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f ", b - a }'
	echo "${se:-$ss} ${ss:-0} ${we:-$ws} ${ws:-0}"
}

# Figure 5: FLOOD_MIB of tool output captured, against the same stream
# piped through cat to a file; peak RSS of supervisor and worker, early
# and late in the run (flat = no growth with the volume).
fig_capture() {
	local i out s o=() r=() se=() ss=() we=() ws=() avail mo mr
	avail=$(df -Pm "$tmp" | awk 'NR == 2 { print $4 }')
	if [ "${avail:-0}" -lt $((FLOOD_MIB * 3)) ]; then
		warn "capture: only ${avail} MiB free in $tmp, skipped"
		trow capture "capture ${FLOOD_MIB} MiB" "n/a (disk full)" "n/a" \
		    "MiB/s" "n/a" "n/a"
		return
	fi
	echo "bench: capture: $RUNS x $FLOOD_MIB MiB" >&2
	for i in $(seq "$RUNS"); do
		mkdir -p "$tmp/cap$i"
		if out=$(capture_once "$tmp/cap$i"); then
			read -r s "se[i]" "ss[i]" "we[i]" "ws[i]" <<<"$out"
			o+=("$(awk -v m="$FLOOD_MIB" -v s="$s" 'BEGIN { print m / s }')")
		else
			warn "capture: our run $i failed"
		fi
		rm -rf "$tmp/cap$i"
		if s=$(timed bash -c "exec \"\$0\" flood \"\$1\" | cat >\"\$2\"" \
		    "$FAKE" "$FLOOD_MIB" "$tmp/cat.out"); then
			r+=("$(awk -v m="$FLOOD_MIB" -v s="$s" 'BEGIN { print m / s }')")
		fi
		rm -f "$tmp/cat.out"
	done
	mo=$(printf '%s\n' "${o[@]}" | median)
	mr=$(printf '%s\n' "${r[@]}" | median)
	trow capture "capture ${FLOOD_MIB} MiB vs cat" "${mo:-n/a}" \
	    "${mr:-n/a}" "MiB/s" "$(ratio "$mo" "$mr")" "$(ratio "$mo" "$mr")"
	hwm_row "capture: supervisor peak RSS" se ss
	hwm_row "capture: worker peak RSS" we ws
}

# A peak-RSS row: the largest VmHWM at the end, against the same process's
# VmHWM an eighth of the way in; flat means it grew by at most 4 MiB.
hwm_row() {
	local -n early=$2 late=$3
	local e l
	e=$(printf '%s\n' "${early[@]}" | sort -g | tail -n 1)
	l=$(printf '%s\n' "${late[@]}" | sort -g | tail -n 1)
	if [ -z "$l" ]; then
		trow flat "$1" "n/a" "n/a" "MiB" "n/a" "n/a"
		return
	fi
	e=$(awk -v k="$e" 'BEGIN { printf "%.1f\n", k / 1024 }')
	l=$(awk -v k="$l" 'BEGIN { printf "%.1f\n", k / 1024 }')
	trow flat "$1" "$l" "$e" "MiB (end vs 1/8)" "$(ratio "$l" "$e")" \
	    "$(awk -v a="$l" -v b="$e" 'BEGIN { print a - b }')"
}

# The table on stdout and results.json next to the build's tests/.
report() {
	local r
	mkdir -p "$top_builddir/tests/bench"
	printf '%s\n' "${ROWS[@]}" | python3 -c '
import json, sys
rows = [l.rstrip("\n").split("\t") for l in sys.stdin if l.strip()]
head = ["figure", "ours", "baseline", "unit", "ratio", "target", "meets"]
def show(s):
    try:
        v = float(s)
    except ValueError:
        return s
    if s.lstrip("-").isdigit():
        return s
    return "%.0f" % v if abs(v) >= 100 else "%.1f" % v if abs(v) >= 10 \
        else "%.2f" % v
shown = [[r[0], show(r[1]), show(r[2])] + r[3:] for r in rows]
w = [max(len(x) for x in col) for col in zip(head, *shown)]
fmt = "  ".join("%%-%ds" % n for n in w)
print(fmt % tuple(head))
print(fmt % tuple("-" * n for n in w))
for r in shown:
    print(fmt % tuple(r))
def num(s):
    try:
        return float(s)
    except ValueError:
        return None if s in ("n/a", "-") else s
out = [{"figure": r[0].strip(), "ours": num(r[1]), "baseline": num(r[2]),
        "unit": r[3], "ratio": num(r[4]), "target": r[5],
        "meets_target": {"yes": True, "no": False}.get(r[6])}
       for r in rows]
with open(sys.argv[1], "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
' "$top_builddir/tests/bench/results.json"
	echo "results: $top_builddir/tests/bench/results.json"
	if [ -s "$tmp/errors" ]; then
		echo "bench: errors seen (first lines):" >&2
		head -n 20 "$tmp/errors" >&2
	fi
}

# Figure 6: prompt bytes per develop worker at the first iteration and the
# last (10), against what CCW's template sends at the same moment (the
# task plus the whole state JSON).  Sizes, not times: one run is enough.
fig_prompts() {
	local out first last
	out=$(bash "$bench/prompts.sh" "$SUP" "$tmp/prompts" 10 2>>"$tmp/errors")
	first=$(printf '%s\n' "$out" | head -n 1)
	last=$(printf '%s\n' "$out" | tail -n 1)
	if [ -z "$first" ]; then
		row "prompt bytes, develop, iter 1" "n/a" "n/a" "bytes" "n/a" "-" "n/a"
		trow prompts "prompt bytes, develop, iter 10" "n/a" "n/a" \
		    "bytes" "n/a" "n/a"
		return
	fi
	set -- $first
	row "prompt bytes, develop, iter $1" "$2" "$3" "bytes" \
	    "$(ratio "$2" "$3")" "-" "n/a"
	set -- $last
	trow prompts "prompt bytes, develop, iter $1" "$2" "$3" "bytes" \
	    "$(ratio "$2" "$3")" "$(ratio "$2" "$3")"
}

# serve_runs N J: RUNS x (N loops in one serve, J started at a time,
# against the same N loops as `run` processes, J at a time), alternated;
# sets sv_o sv_r (loops/s), sv_l (p99 ms), sv_m (peak MiB, the largest),
# sv_k (KiB of RSS per hosted loop, the largest), medians of RUNS.  The
# loops' files stay until the end: thousands of inodes deleted right
# before the next run make ext4's inode allocation crawl for whichever
# side comes next (recently_deleted, ~15% of serve's CPU), not ours.
serve_runs() {
	local n=$1 j=$2 i out o=() r=() l=() m=()
	for i in $(seq "$RUNS"); do
		if out=$(python3 "$bench/servebench.py" serve "$SUP" "$FAKE" \
		    "$tmp/serve$n-$i" "$n" "$j" 2>>"$tmp/errors"); then
			o+=("$(jget loops_per_s <<<"$out")")
			l+=("$(jget lag_p99_ms <<<"$out")")
			m+=("$(jget rss_kib <<<"$out")")
		else
			warn "serve: our run $i ($n loops) failed"
		fi
		if out=$(python3 "$bench/servebench.py" run "$SUP" "$FAKE" \
		    "$tmp/run$n-$i" "$n" "$j" 2>>"$tmp/errors"); then
			r+=("$(jget loops_per_s <<<"$out")")
		fi
	done
	sv_o=$(printf '%s\n' "${o[@]}" | median)
	sv_r=$(printf '%s\n' "${r[@]}" | median)
	sv_l=$(printf '%s\n' "${l[@]}" | median)
	sv_m=$(printf '%s\n' "${m[@]}" | sort -g | tail -n 1)
	sv_k=$(awk -v k="$sv_m" -v n="$n" 'BEGIN { if (k != "")
	    printf "%.1f\n", k / n }')
	[ -n "$sv_m" ] && sv_m=$(awk -v k="$sv_m" 'BEGIN { printf "%.1f\n", k / 1024 }')
}

# Figure 7: SERVE_N loops of fake agents (init, develop, validate,
# complete) hosted at once by one serve, against the same loops as
# SERVE_N `run` processes at once; the lag from each LOOP_STATE_UPDATE's
# updated_at (set before its commit's fsync) to its arrival on a client
# of /api/events; serve's peak RSS, and that over the loops.
fig_serve() {
	echo "bench: serve: $RUNS x $SERVE_N loops, serve and run" >&2
	serve_runs "$SERVE_N" "$SERVE_N"
	trow serve "$SERVE_N loops: serve vs run processes" "${sv_o:-n/a}" \
	    "${sv_r:-n/a}" "loops/s" "$(ratio "$sv_o" "$sv_r")" \
	    "$(ratio "$sv_o" "$sv_r")"
	trow serve_p99 "  state change to SSE, p99" "${sv_l:-n/a}" "-" "ms" "-" \
	    "${sv_l:-n/a}"
	trow serve_rss "  serve's peak RSS" "${sv_m:-n/a}" "-" "MiB" "-" \
	    "${sv_m:-n/a}"
	row "  serve's RSS per loop" "${sv_k:-n/a}" "-" "KiB" "-" "-" "n/a"
}

# Figure 7b: the scale of it, SERVE_BIG (2000) loops hosted at once by
# one serve against as many `run` processes at once: does the ratio
# hold, are memory per loop and p99 linear and small?
fig_serve2k() {
	echo "bench: serve2k: $RUNS x $SERVE_BIG loops, serve and run" >&2
	serve_runs "$SERVE_BIG" "$SERVE_BIG"
	trow serve "$SERVE_BIG loops: serve vs run processes" "${sv_o:-n/a}" \
	    "${sv_r:-n/a}" "loops/s" "$(ratio "$sv_o" "$sv_r")" \
	    "$(ratio "$sv_o" "$sv_r")"
	row "  state change to SSE, p99" "${sv_l:-n/a}" "-" "ms" "-" "-" "n/a"
	trow serve2k_rss "  serve's peak RSS" "${sv_m:-n/a}" "-" "MiB" "-" \
	    "${sv_m:-n/a}"
	row "  serve's RSS per loop" "${sv_k:-n/a}" "-" "KiB" "-" "-" "n/a"
}

# Figure 8 (issue 30): `batch --jobs BATCH_J` against GNU parallel -j
# BATCH_J doing the same work, items per second, the median of RUNS:
#  - BATCH_N worker items (kind worker: one bash worker each, printing its
#    WORKER_RESULT at once) against parallel running that tool, `bash -c
#    CMD`, once per item;
#  - BATCH_N loop items (a loop of five bash workers, max_iterations 3 as
#    develop, debug and validate each count one, and five commits of its
#    state) against parallel running tests/bench/loopitem.c per item: the
#    same five `bash -c CMD` and five write+fsync+rename+fsync(dir) of a
#    state-sized file;
#  - BATCH_BIG worker items, once each (a median of 10,000-item runs
#    would take the bench's hour).
# What the engine costs per item over bare processes doing the same.
BATCH_CMD="printf 'WORKER_RESULT:\n- status: success\n- summary: ok\n'"
BATCH_BIG=${BENCH_BATCH_BIG:-10000}
BATCH_STATE_BYTES=2900	# a finished trivial loop's state file

# batch_items DIR N KIND: a root whose roles all run BATCH_CMD with bash,
# and DIR/items.jsonl of N items of KIND (loop or worker).
batch_items() {
	mkdir -p "$1/.loop"
	python3 - "$1" "$2" "$3" "$BATCH_CMD" <<'PYEOF'
import json, sys
d, n, kind, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
roles = {r: {"command": cmd} for r in ("init", "develop", "debug", "validate", "complete")}
json.dump({"default_tool": "bash", "roles": roles}, open(d + "/.loop/config.json", "w"))
with open(d + "/items.jsonl", "w") as f:
    for k in range(n):
        o = {"title": "item %d" % k}
        if kind == "worker":
            o["kind"] = "worker"
        else:
            o["max_iterations"] = 3
        f.write(json.dumps(o) + "\n")
PYEOF
}

# batch_pair N KIND DIR: one run of ours and one of the baseline, each
# "items/s" on its own line (empty when it failed).
batch_pair() {
	local n=$1 kind=$2 d=$3 t
	batch_items "$d" "$n" "$kind"
	if t=$(timed "$SUP" batch "$d/items.jsonl" -C "$d" --jobs "$BATCH_J"); then
		awk -v n="$n" -v t="$t" 'BEGIN { printf "%.2f\n", n / t }'
	else
		warn "batch: our $kind run of $n failed"
		echo
	fi
	mkdir -p "$d/base"
	if [ "$kind" = worker ]; then
		# -q: the command's words passed as they are (the item's
		# number parallel appends is bash's $0)
		t=$(timed parallel -q -j "$BATCH_J" --will-cite bash -c \
		    "$BATCH_CMD" ::: $(seq "$n"))
	else
		t=$(timed parallel -q -j "$BATCH_J" --will-cite \
		    "$tmp/bin/loopitem" "$d/base" '{}' "$BATCH_STATE_BYTES" \
		    "$BATCH_CMD" ::: $(seq "$n"))
	fi
	if [ -n "$t" ]; then
		awk -v n="$n" -v t="$t" 'BEGIN { printf "%.2f\n", n / t }'
	else
		warn "batch: GNU parallel's $kind run of $n failed"
		echo
	fi
	rm -rf "$d"
}

fig_batch() {
	local i k r w=() pw=() l=() pl=() mo mp
	echo "bench: batch: $RUNS x $BATCH_N worker and loop items, batch and GNU parallel; $BATCH_BIG worker items once" >&2
	if ! command -v parallel >/dev/null 2>&1; then
		warn "batch: GNU parallel missing"
		return
	fi
	${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -Wall -o "$tmp/bin/loopitem" \
	    "$bench/loopitem.c" || { warn "cannot compile loopitem.c"; return; }
	for i in $(seq "$RUNS"); do
		for k in worker loop; do
			mapfile -t r < <(batch_pair "$BATCH_N" "$k" "$tmp/batch$i$k")
			if [ "$k" = worker ]; then
				[ -n "${r[0]:-}" ] && w+=("${r[0]}")
				[ -n "${r[1]:-}" ] && pw+=("${r[1]}")
			else
				[ -n "${r[0]:-}" ] && l+=("${r[0]}")
				[ -n "${r[1]:-}" ] && pl+=("${r[1]}")
			fi
		done
	done
	mo=$(printf '%s\n' "${w[@]}" | median)
	mp=$(printf '%s\n' "${pw[@]}" | median)
	trow batch "$BATCH_N worker items: batch vs GNU parallel -j $BATCH_J" \
	    "${mo:-n/a}" "${mp:-n/a}" "items/s" "$(ratio "$mo" "$mp")" \
	    "$(ratio "$mo" "$mp")"
	mo=$(printf '%s\n' "${l[@]}" | median)
	mp=$(printf '%s\n' "${pl[@]}" | median)
	trow batch "$BATCH_N loop items (5 workers, 5 commits) vs parallel" \
	    "${mo:-n/a}" "${mp:-n/a}" "items/s" "$(ratio "$mo" "$mp")" \
	    "$(ratio "$mo" "$mp")"
	mapfile -t r < <(batch_pair "$BATCH_BIG" worker "$tmp/batchbig")
	trow batch "$BATCH_BIG worker items, one run each" "${r[0]:-n/a}" \
	    "${r[1]:-n/a}" "items/s" "$(ratio "${r[0]:-}" "${r[1]:-}")" \
	    "$(ratio "${r[0]:-}" "${r[1]:-}")"
}

# Figure 9: a lifecycle through ssh and srun against local, for the
# record (tests/bench/remote.sh; no row without root or the daemons).
fig_remote() {
	local l
	echo "bench: remote: $RUNS x (local, through ssh, through srun)" >&2
	while IFS= read -r l; do
		[ -n "$l" ] && ROWS+=("$l")
	done < <(top_builddir=$top_builddir BENCH_RUNS=$RUNS \
	    bash "$bench/remote.sh")
}

# Figure 10: one serve under churn for SOAK_S seconds (tests/bench/soak.py:
# loops started, paused, stopped; crashing roles, retries, killed workers;
# agents, SSE readers and socket clients that come and go): the slope of
# its RSS after the warm-up, and fds, threads, zombies, cgroups, leftover
# processes and state bytes, each flat or not.  One long run, no median;
# every sample in tests/bench/soak-samples.json in the build directory.
fig_soak() {
	local l n=0
	echo "bench: soak: ${SOAK_S}s of churn in one serve" >&2
	mkdir -p "$top_builddir/tests/bench"
	while IFS= read -r l; do
		[ -n "$l" ] && ROWS+=("$l") && n=$((n + 1))
	done < <(python3 "$bench/soak.py" "$SUP" "$FAKE" "$tmp/soak" \
	    "$marker-soak" "$SOAK_S" "$top_builddir/tests/bench/soak-samples.json")
	if [ "$n" -eq 0 ]; then
		warn "soak: no figure"
		trow soak "soak: serve RSS slope after warm-up" "n/a" "-" \
		    "MiB/hour" "-" "n/a"
	fi
}

# Figure 11 (issue 27): a worktree per worker on a GITWT_FILES (10,000)
# file repository, and the loop's worktree through `ccw-worker --git
# prepare` + `cleanup`, each against `git worktree add` + `remove` alone,
# alternated; then GITWT_CYCLES (1000) create/remove cycles and the stale
# entries left.  The worker's cost is an `agent` run with
# options.worktree (keep false: add, commit, name-status, remove) minus
# the same run without it: the agent's own start and end are paid either
# way.  No row without git.
GITWT_FILES=${GITWT_FILES:-10000}
GITWT_CYCLES=${GITWT_CYCLES:-1000}

# The repository $1: GITWT_FILES small files in 100 directories.
gitwt_repo() {
	mkdir -p "$1"
	git -C "$1" init -q -b main
	python3 - "$1" "$GITWT_FILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%02d" % (i % 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.c" % i), "w") as f:
        f.write("int f%d(void) { return %d; }\n" % (i, i))
PY
	printf '.loop/\n' >"$1/.gitignore"
	git -C "$1" add -A &&
	    git -C "$1" -c user.name=b -c user.email=b@l commit -qm files
}

# Baseline: one worktree added and removed by git alone, where ours go.
gitwt_plain() {
	mkdir -p "$1/.loop/P/wt"
	git -C "$1" worktree add -q --detach "$1/.loop/P/wt/plain" HEAD &&
	    git -C "$1" worktree remove "$1/.loop/P/wt/plain"
}

# The loop's worktree in repo $1 through the helper: prepare, cleanup.
gitwt_loop() {
	"$WRK" --git prepare <<<"{\"root\":\"$1\",\"side\":\"$1/.loop/B\",\"loop\":\"B\",\"start\":true}" &&
	    "$WRK" --git cleanup <<<"{\"repo\":\"$1\",\"side\":\"$1/.loop/B\",\"loop_branch\":\"ccw/B/loop\",\"remove_branches\":true}"
}

# One agent in repo $1 (bash, one file edited), bash's options $2.
gitwt_agent() {
	printf '{"tools":{"bash":{"options":{%s}}}}' "$2" >"$tmp/gitwt.json"
	(cd "$1" && "$SUP" agent develop --tool bash --config "$tmp/gitwt.json" \
	    --state-dir "$tmp/gitwt-state" --json \
	    --command 'echo edited >>d00/f00000.c' go) || return 1
	git -C "$1" checkout -q -- d00/f00000.c
	git -C "$1" branch -q -D ccw/W/agent-1 2>/dev/null
	return 0
}

# prepare + cleanup cycles in a one-file repository: "STALE MS-A-CYCLE".
gitwt_cycles() {
	local s=$tmp/gitwt-small i t
	mkdir -p "$s" && git -C "$s" init -q -b main && echo x >"$s/x" &&
	    git -C "$s" add x &&
	    git -C "$s" -c user.name=b -c user.email=b@l commit -qm x
	t=$(timed bash -c 'for i in $(seq "$1"); do
		"$2" --git prepare <<<"{\"root\":\"$3\",\"side\":\"$3/.loop/C\",\"loop\":\"C\"}" &&
		"$2" --git cleanup <<<"{\"repo\":\"$3\",\"side\":\"$3/.loop/C\",\"loop_branch\":\"ccw/C/loop\",\"remove_branches\":true}" ||
		exit 1; done' - "$GITWT_CYCLES" "$WRK" "$s") || {
		warn "gitwt: a create/remove cycle failed"
		echo "n/a n/a"
		return 0
	}
	echo "$(( $(git -C "$s" worktree list | wc -l) - 1 + $(git -C "$s" \
	    worktree prune -n -v | wc -l) )) $(awk -v t="$t" \
	    -v n="$GITWT_CYCLES" 'BEGIN { if (t != "") printf "%.1f", t * 1000 / n }')"
}

fig_gitwt() {
	local r=$tmp/gitwt i s p=() l=() a=() n=() mp ml mw c wt
	command -v git >/dev/null || { warn "gitwt: no git"; return 0; }
	echo "bench: worktrees: $RUNS x (worker, loop, git alone) on" \
	    "$GITWT_FILES files; $GITWT_CYCLES cycles" >&2
	export GIT_CONFIG_NOSYSTEM=1 GIT_CEILING_DIRECTORIES=$tmp
	gitwt_repo "$r" >/dev/null || { warn "gitwt: no repository"; return 0; }
	wt="\"worktree\":{\"repo\":\"$r\",\"base\":\"$(git -C "$r" rev-parse HEAD)\",\"dir\":\"$r/.loop/W/wt\",\"branch_prefix\":\"ccw/W\",\"keep\":false}"
	# Each step after a sync: the last one's writeback (10,000 files
	# written, then deleted) is not billed to the next.
	for i in $(seq "$RUNS"); do
		sync; s=$(timed gitwt_plain "$r") && p+=("$s")
		sync; s=$(timed gitwt_loop "$r") && l+=("$s")
		sync; s=$(timed gitwt_agent "$r" "$wt") && a+=("$s")
		sync; s=$(timed gitwt_agent "$r" "") && n+=("$s")
	done
	mp=$(printf '%s\n' "${p[@]}" | median)
	ml=$(printf '%s\n' "${l[@]}" | median)
	mw=$(awk -v a="$(printf '%s\n' "${a[@]}" | median)" \
	    -v b="$(printf '%s\n' "${n[@]}" | median)" \
	    'BEGIN { if (a != "" && b != "") printf "%.4f\n", a - b }')
	trow gitwt "worktree per worker, $GITWT_FILES files" "${mw:-n/a}" \
	    "${mp:-n/a}" "s" "$(ratio "$mw" "$mp")" "$(ratio "$mw" "$mp")"
	trow gitwt "  loop worktree: --git prepare + cleanup" "${ml:-n/a}" \
	    "${mp:-n/a}" "s" "$(ratio "$ml" "$mp")" \
	    "$(ratio "$ml" "$mp")"
	read -r c s <<<"$(gitwt_cycles)"
	trow left "  $GITWT_CYCLES create/remove cycles: stale entries" \
	    "${c:-n/a}" "-" "entries" "-" "${c:-n/a}"
	row "  one create/remove cycle" "${s:-n/a}" "-" "ms" "-" "-" "n/a"
}

setup
for f in ${BENCH_FIGURES:-lifecycles roundtrip commits idle capture prompts serve serve2k batch remote gitwt soak}; do
	"fig_$f"
done
report
