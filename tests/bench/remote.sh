#!/bin/bash
# remote.sh: `make bench`'s launcher figure, for the record (no target):
# one whole agent lifecycle (spawn, a bash tool's result, close) through
# ssh and through srun against the same lifecycle local, and against the
# launcher's own bare round trip (`ssh HOST true`, `srun true`), each the
# median of RUNS runs, alternated.  The daemons are the tests' private
# sshd and one-node Slurm on loopback; without root or them, no row.
# Prints rows as run.sh's row() takes them, tab-separated, on stdout.
. "$(dirname "$0")/../regress/lib.sh"
. "$(dirname "$0")/../regress/sshd-lib.sh"
. "$(dirname "$0")/../regress/slurm-lib.sh"
RUNS=${BENCH_RUNS:-5}
[ "$RUNS" -ge 5 ] 2>/dev/null || RUNS=5

# ms COMMAND...: wall milliseconds of a command that must succeed.
ms() {
	local t0=$EPOCHREALTIME
	"$@" >/dev/null 2>>"$T_TMP/errors" || return 1
	awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }'
}

med() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# life [LAUNCHER]: one lifecycle, through LAUNCHER when given.
life() {
	"$SUP" agent develop --tool bash --state-dir "$T_TMP/s" --json \
	    --command "exec '$FAKE' result success ok" \
	    ${1:+--launcher "$1"} go
}

# figure NAME LAUNCHER: rows for one launcher.
figure() {
	local i l=() r=() b=() ml mr mb
	for i in $(seq "$RUNS"); do
		l+=("$(ms life)")
		r+=("$(ms life "$2")")
		b+=("$(ms $2 true)")
	done
	ml=$(printf '%s\n' "${l[@]}" | med)
	mr=$(printf '%s\n' "${r[@]}" | med)
	mb=$(printf '%s\n' "${b[@]}" | med)
	printf '%s\t%s\t%s\tms\t%s\t-\tn/a\n' \
	    "one lifecycle through $1 vs local" "${mr:-n/a}" "${ml:-n/a}" \
	    "$(awk -v a="$mr" -v b="$ml" 'BEGIN { if (a == "" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }')"
	printf '%s\t%s\t%s\tms\t%s\t-\tn/a\n' \
	    "one lifecycle through $1 vs bare $1 true" "${mr:-n/a}" "${mb:-n/a}" \
	    "$(awk -v a="$mr" -v b="$mb" 'BEGIN { if (a == "" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }')"
}

if sshd_up "$T_TMP/sshd" >/dev/null 2>&1; then
	figure ssh "$SSH_ARGV"
	sshd_down
else
	echo "bench: remote: ssh: ${SSHD_SKIP:-not up}" >&2
fi
if slurm_up "$T_TMP/slurm" >/dev/null 2>&1; then
	figure srun "$SRUN_ARGV"
	slurm_down
else
	echo "bench: remote: srun: ${SLURM_SKIP:-not up}" >&2
fi
[ -s "$T_TMP/errors" ] && head -n 5 "$T_TMP/errors" >&2
exit 0
