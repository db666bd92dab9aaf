#!/bin/bash
# batch-worktree.sh: batch items in git worktrees of their own, and the
# conflict forecast.  Items with "worktree": true (or `batch --worktree`)
# each see only their own edits and leave a branch ccw/<batch>/<agent>
# with exactly their files (the item's record, --json, JUnit); --worktree
# outside a git repository and a dirty tree are refused before anything
# runs.  Items whose "files" hints overlap never run at the same time
# (start and end times the items' commands record), disjoint ones do.
. "$(dirname "$0")/lib.sh"
t_watchdog 90
t_valgrind_worker
t_slack
# temp dirs are never taken as part of the build's clone
export GIT_CEILING_DIRECTORIES=${TMPDIR:-/tmp}
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@localhost \
    GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@localhost

# item.sh: one worker item: its tag (TAG=name in the task text), start
# and end times in ms in $LOG; with MEET=a,b it waits (up to 30 s) until
# the items named have started; with HOLD=name it waits up to 1 s for
# that item to start (an old batch started it beside this one).
cat >"$T_TMP/item.sh" <<'EOF'
#!/bin/bash
tag=
while read -r line; do
	case $line in *TAG=*) tag=$(grep -o 'TAG=[a-z0-9]*' <<<"$line" | head -n 1); tag=${tag#TAG=}; break ;; esac
done
ms() { echo $(( $(date +%s%N) / 1000000 )); }
echo "s $tag $(ms)" >>"$LOG"
started() { grep -q "^s $1 " "$LOG"; }
meet=${tag}_MEET; meet=${!meet:-}
end=$((SECONDS + 30))
for m in ${meet//,/ }; do
	while ! started "$m" && [ $SECONDS -lt $end ]; do sleep 0.02; done
done
hold=${tag}_HOLD; hold=${!hold:-}
if [ -n "$hold" ]; then
	end=$(( $(ms) + 1000 ))
	while ! started "$hold" && [ "$(ms)" -lt $end ]; do sleep 0.02; done
fi
echo "cwd $tag $PWD" >>"$LOG"
edit=${tag}_EDIT; edit=${!edit:-}
for f in $edit; do echo "$tag" >>"$f"; done
rm=${tag}_RM; rm=${!rm:-}
for f in $rm; do rm -f "$f"; done
echo "w $tag" >>"$LOG"
# SEE=name: once that item wrote, which files here hold its writing
see=${tag}_SEE; see=${!see:-}
if [ -n "$see" ]; then
	end=$((SECONDS + 30))
	while ! grep -q "^w $see\$" "$LOG" && [ $SECONDS -lt $end ]; do sleep 0.02; done
	echo "saw $tag $(grep -rlx "$see" . --exclude-dir=.git | tr '\n' ' ')" >>"$LOG"
fi
echo "e $tag $(ms)" >>"$LOG"
printf 'WORKER_RESULT:\n- status: success\n- summary: %s done\n' "$tag"
EOF
cfg() {
	t_run_config "$1" "bash $T_TMP/item.sh" "bash $T_TMP/item.sh" \
	    "bash $T_TMP/item.sh" "bash $T_TMP/item.sh" "bash $T_TMP/item.sh" \
	    '{"grace_ms": 500}'
}
# batch ROOT ARGS...: a batch in the foreground (60 s at most); stdout
# ROOT.out, stderr ROOT.err, the exit status in $RC, the state in $S
batch() {
	local root=$1
	shift
	(cd "$root" && timeout -k 2 60 $WRAP "$SUP" batch -C "$root" "$@" \
	    >"$root.out" 2>"$root.err")
	RC=$?
	S=$root/.workflow/.batch/$(t_batch_id "$root.err")/state.json
	[ "$RC" -lt 124 ] || tail -n 5 "$root.err" | sed 's/^/# /'
}
# times TAG: its start and end from the log
t_of() { awk -v t="$2" -v k="$1" '$1 == k && $2 == t { print $3 }' "$LOG"; }

# --- the forecast: a and b name one file, c another: a and b never at
# once, a and c do (each waits until the other started)
R=$T_TMP/fc
mkdir -p "$R"
cfg "$R"
export LOG=$R.log a_MEET=c c_MEET=a a_HOLD=b
: >"$LOG"
cat >"$R/items.jsonl" <<'EOF'
{"title": "a", "description": "TAG=a", "kind": "worker", "files": ["src/x.c", "README"]}
{"title": "b", "description": "TAG=b", "kind": "worker", "files": ["./src//x.c"]}
{"title": "c", "description": "TAG=c", "kind": "worker", "files": ["src/y.c"]}
{"title": "d", "description": "TAG=d", "kind": "worker", "files": ["src"]}
EOF
batch "$R" "$R/items.jsonl" --json --jobs 4
is "$RC" 0 "forecast: the batch completed"
for t in a b c d; do
	eval "S_$t=\$(t_of s $t) E_$t=\$(t_of e $t)"
done
[ -n "$S_a" ] && [ -n "$E_c" ] && [ "$S_a" -lt "$E_c" ] && [ "$S_c" -lt "$E_a" ]
ok $? "forecast: disjoint items a and c ran at the same time"
[ -n "$S_b" ] && [ "$E_a" -le "$S_b" ]
ok $? "forecast: a and b (both name src/x.c) never ran at once (a ended $E_a, b started $S_b)"
[ -n "$S_d" ] && { [ "$E_a" -le "$S_d" ] || [ "$E_d" -le "$S_a" ]; } &&
    { [ "$E_b" -le "$S_d" ] || [ "$E_d" -le "$S_b" ]; } &&
    { [ "$E_c" -le "$S_d" ] || [ "$E_d" -le "$S_c" ]; }
ok $? "forecast: d (the directory src) ran beside none of them"
is "$(python3 - "$R.out" <<'EOF'
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("event") == "conflict_forecast":
        print(json.dumps([[p["items"], p["files"]] for p in e["serialized"]]))
EOF
)" '[[["item-001", "item-002"], ["src/x.c"]], [["item-001", "item-004"], ["src"]], [["item-002", "item-004"], ["src"]], [["item-003", "item-004"], ["src"]]]' \
    "forecast: the conflict_forecast event names each pair and its files"
is "$(jget "$S" 'len(d["context"]["forecast"])')" 4 "forecast: kept in the state's context"
like "$(cat "$R.err")" "forecast: item-001 and item-002 both name src/x.c: never at once" \
    "forecast: said on stderr"
unset a_MEET c_MEET a_HOLD

# --- items in worktrees of their own: p and q at once, each editing,
# neither seeing the other's edits; r (no "worktree") in the root
mkrepo() {
	mkdir -p "$1"
	git -C "$1" init -q -b main
	printf 'a\n' >"$1/a.txt"
	printf 'b\n' >"$1/b.txt"
	printf 'c\n' >"$1/c.txt"
	git -C "$1" add a.txt b.txt c.txt
	git -C "$1" commit -q -m start
	cfg "$1"
}
R=$T_TMP/wt
mkrepo "$R"
HEAD0=$(git -C "$R" rev-parse HEAD)
export LOG=$R.log p_MEET=q q_MEET=p p_SEE=q q_SEE=p p_EDIT="a.txt new-p.txt" \
    p_RM=c.txt q_EDIT=b.txt
: >"$LOG"
cat >"$R/items.jsonl" <<'EOF'
{"title": "p", "description": "TAG=p", "kind": "worker", "worktree": true}
{"title": "q", "description": "TAG=q", "kind": "worker", "worktree": true}
{"title": "r", "description": "TAG=r", "kind": "worker"}
EOF
batch "$R" "$R/items.jsonl" --json
is "$RC" 0 "worktree: the batch completed"
ID=$(t_batch_id "$R.err")
like "$(awk '$1 == "cwd" && $2 == "p" { print $3 }' "$LOG")" \
    "^$R/.workflow/.batch/$ID/wt/item-001/[^/]+\$" \
    "worktree: p's tool ran in its worktree (PWD)"
is "$(awk '$1 == "cwd" && $2 == "r" { print $3 }' "$LOG")" "$R" \
    "worktree: r (no \"worktree\") ran in the root"
is "$(grep '^saw ' "$LOG" | sort | sed 's/ *$//')" "$(printf 'saw p\nsaw q')" \
    "worktree: p and q ran at once and neither saw the other's edits"
is "$(git -C "$R" rev-parse HEAD) $(git -C "$R" rev-parse --abbrev-ref HEAD) $(git -C "$R" status --porcelain --untracked-files=no | wc -l) $(cat "$R/a.txt")" \
    "$HEAD0 main 0 a" "worktree: the user's checkout untouched (head, branch, clean)"
BP=$(jget "$S" 'd["queue"][0]["worktree"]["branch"]')
BQ=$(jget "$S" 'd["queue"][1]["worktree"]["branch"]')
like "$BP" "^ccw/$ID/item-001/" "worktree: p's branch is ccw/ID/item-001/AGENT"
is "$(git -C "$R" diff --name-status "$HEAD0" "$BP" -- 2>&1 | tr '\t' ' ')" \
    "$(printf 'M a.txt\nD c.txt\nA new-p.txt')" "worktree: p's branch holds exactly p's edits"
is "$(git -C "$R" diff --name-status "$HEAD0" "$BQ" -- 2>&1 | tr '\t' ' ')" "M b.txt" \
    "worktree: q's branch holds exactly q's edit"
is "$(jget "$S" '[[f["status"], f["path"]] for f in d["queue"][0]["worktree"]["files"]]')" \
    '[["M","a.txt"],["D","c.txt"],["A","new-p.txt"]]' "worktree: p's record has its exact files"
is "$(jget "$S" '[d["queue"][0]["worktree"]["stat"]["files"], d["queue"][0]["worktree"]["head"] != d["queue"][0]["worktree"]["base"], "worktree" in d["queue"][2]]')" \
    '[3,true,false]' "worktree: p's diff stat and head; r has no worktree"
is "$(python3 - "$R.out" <<'EOF'
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("event") == "item_done" and e["item_id"] == "item-002":
        print((e.get("worktree") or {}).get("branch"))
EOF
)" "$BQ" "worktree: item_done (--json) names q's branch"
is "$(git -C "$R" worktree list --porcelain | grep -c '^worktree ') $(ls "$R/.workflow/.batch/$ID/wt" 2>/dev/null | wc -l)" "1 0" \
    "worktree: no worktree left at the end, the branches kept"
unset p_MEET q_MEET p_SEE q_SEE p_EDIT p_RM q_EDIT

# --- --worktree outside a git repository: an error, nothing runs
N=$T_TMP/nogit
mkdir -p "$N"
cfg "$N"
export LOG=$N.log
: >"$LOG"
printf '{"title": "n", "description": "TAG=n", "kind": "worker"}\n' >"$N/items.jsonl"
batch "$N" "$N/items.jsonl" --worktree
is "$RC" 2 "not a git repository: --worktree exits 2"
like "$(cat "$N.err")" "worktree.*not a git repository" "not a git repository: said"
is "$(wc -c <"$LOG")" 0 "not a git repository: no item ran"

# --- a dirty tree: refused with the helper's message; --from-worktree
# starts the items from it
R=$T_TMP/dirty
mkrepo "$R"
export LOG=$R.log
: >"$LOG"
echo dirty >>"$R/a.txt"
printf '{"title": "d", "description": "TAG=d", "kind": "worker"}\n' >"$R/items.jsonl"
batch "$R" "$R/items.jsonl" --worktree
is "$RC" 2 "a dirty tree: --worktree exits 2"
like "$(cat "$R.err")" "uncommitted changes" "a dirty tree: the helper's message"
is "$(wc -c <"$LOG")" 0 "a dirty tree: no item ran"
export d_EDIT=b.txt
batch "$R" "$R/items.jsonl" --worktree --from-worktree
is "$RC" 0 "a dirty tree, --from-worktree: completed"
B=$(jget "$S" 'd["queue"][0]["worktree"]["branch"]')
is "$(git -C "$R" show "$B:a.txt" 2>&1 | tail -n 1) $(tail -n 1 "$R/a.txt") $(git -C "$R" diff --name-only "$(jget "$S" 'd["queue"][0]["worktree"]["base"]')" "$B" -- 2>&1)" \
    "dirty dirty b.txt" "a dirty tree, --from-worktree: the item started from the changes, the checkout kept them"
unset d_EDIT
t_done
