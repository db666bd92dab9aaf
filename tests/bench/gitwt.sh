#!/bin/bash
# gitwt.sh: `make bench`'s worktree figure (issue 27; DESIGN.md section
# 11): on a repository of GITWT_FILES (10,000) files, what a worker's own
# worktree costs, and the loop's worktree through `ccw-worker --git
# prepare` + `cleanup`, each against `git worktree add` + `git worktree
# remove` alone, alternated, the median of RUNS runs; then GITWT_CYCLES
# (1000) create/remove cycles of the loop worktree and the stale entries
# `git worktree list` keeps after them.  The worker's cost is an `agent`
# run with options.worktree (keep false: add, copy nothing, commit one
# file, diff, remove) minus the same run without it: the agent's own
# start and end are paid either way.  Prints rows as run.sh's row()
# takes them, tab-separated, on stdout.
. "$(dirname "$0")/../regress/lib.sh"
RUNS=${BENCH_RUNS:-5}
[ "$RUNS" -ge 5 ] 2>/dev/null || RUNS=5
FILES=${GITWT_FILES:-10000}
CYCLES=${GITWT_CYCLES:-1000}
export GIT_CEILING_DIRECTORIES=$T_TMP
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1

# ms COMMAND...: wall milliseconds of a command that must succeed.
ms() {
	local t0=$EPOCHREALTIME
	"$@" >/dev/null 2>>"$T_TMP/errors" || return 1
	awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }'
}

med() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0)
		print "n/a"; else printf "%.2f\n", a / b }'
}

meets() {
	awk -v v="$1" -v t="$2" 'BEGIN { if (v == "n/a") print "n/a";
		else print (v + 0 <= t + 0) ? "yes" : "no" }'
}

# The repository: FILES small files in 100 directories, one commit.
R=$T_TMP/repo
mkdir -p "$R"
git -C "$R" init -q -b main
git -C "$R" config user.name bench
git -C "$R" config user.email bench@localhost
python3 - "$R" "$FILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%02d" % (i % 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.c" % i), "w") as f:
        f.write("int f%d(void) { return %d; }\n" % (i, i))
PY
printf '.loop/\n' >"$R/.gitignore"
git -C "$R" add -A && git -C "$R" commit -qm files || exit 1
base=$(git -C "$R" rev-parse HEAD)

# The baseline: one worktree added and removed by git alone.
plain() {
	git -C "$R" worktree add -q --detach "$T_TMP/plain" "$base" &&
	    git -C "$R" worktree remove "$T_TMP/plain"
}

# The loop's worktree through the helper: prepare, then cleanup.
loopwt() {
	"$WRK" --git prepare <<<"{\"root\":\"$R\",\"side\":\"$R/.loop/B\",\"loop\":\"B\",\"start\":true}" &&
	    "$WRK" --git cleanup <<<"{\"repo\":\"$R\",\"side\":\"$R/.loop/B\",\"loop_branch\":\"ccw/B/loop\",\"remove_branches\":true}"
}

# One agent (bash, one file edited) with options.worktree $1 (or none).
agent1() {
	printf '{"tools":{"bash":{"options":{%s}}}}' "$1" >"$T_TMP/cfg.json"
	(cd "$R" && "$SUP" agent develop --tool bash --config "$T_TMP/cfg.json" \
	    --state-dir "$T_TMP/state" --json \
	    --command 'echo edited >>d00/f00000.c' go) || return 1
	git -C "$R" checkout -q -- d00/f00000.c
}
WT="\"worktree\":{\"repo\":\"$R\",\"base\":\"$base\",\"dir\":\"$R/.loop/W/wt\",\"branch_prefix\":\"ccw/W\",\"keep\":false}"
worker_wt() { agent1 "$WT"; }
worker_plain() { agent1 ""; }

p=() l=() a=() n=()
for i in $(seq "$RUNS"); do
	p+=("$(ms plain)")
	l+=("$(ms loopwt)")
	a+=("$(ms worker_wt)")
	n+=("$(ms worker_plain)")
	git -C "$R" branch -q -D ccw/W/agent-1 >/dev/null 2>&1
done
mp=$(printf '%s\n' "${p[@]}" | med)
ml=$(printf '%s\n' "${l[@]}" | med)
ma=$(printf '%s\n' "${a[@]}" | med)
mn=$(printf '%s\n' "${n[@]}" | med)
mw=$(awk -v a="$ma" -v b="$mn" 'BEGIN { if (a != "" && b != "") printf "%.1f\n", a - b }')
r=$(ratio "$mw" "$mp")
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
    "worktree per worker, $FILES files" "${mw:-n/a}" "${mp:-n/a}" "ms" \
    "$r" "<= 1.2x" "$(meets "$r" 1.2)"
r=$(ratio "$ml" "$mp")
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
    "  loop worktree: --git prepare + cleanup" "${ml:-n/a}" "${mp:-n/a}" \
    "ms" "$r" "<= 1.2x" "$(meets "$r" 1.2)"

# Create/remove cycles on a small repository: nothing stale after them.
S=$T_TMP/small
mkdir -p "$S"
git -C "$S" init -q -b main
echo x >"$S/x"
git -C "$S" add x
git -C "$S" -c user.name=b -c user.email=b@l commit -qm x
t0=$EPOCHREALTIME
for i in $(seq "$CYCLES"); do
	"$WRK" --git prepare >/dev/null 2>>"$T_TMP/errors" \
	    <<<"{\"root\":\"$S\",\"side\":\"$S/.loop/C\",\"loop\":\"C\"}" || break
	"$WRK" --git cleanup >/dev/null 2>>"$T_TMP/errors" \
	    <<<"{\"repo\":\"$S\",\"side\":\"$S/.loop/C\",\"loop_branch\":\"ccw/C/loop\",\"remove_branches\":true}" || break
done
stale=$(( $(git -C "$S" worktree list | wc -l) - 1 +
    $(git -C "$S" worktree prune -n -v | wc -l) ))
per=$(awk -v a="$t0" -v b="$EPOCHREALTIME" -v n="$CYCLES" \
    'BEGIN { printf "%.1f\n", (b - a) * 1000 / n }')
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
    "  $CYCLES create/remove cycles: stale entries" "$stale" "-" \
    "entries" "-" "0" "$([ "$stale" = 0 ] && echo yes || echo no)"
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
    "  one create/remove cycle" "$per" "-" "ms" "-" "-" "n/a"
[ -s "$T_TMP/errors" ] && sed 's/^/bench: gitwt: /' "$T_TMP/errors" | head -5 >&2
exit 0
