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
edit=${tag}_EDIT; edit=${!edit:-}
for f in $edit; do echo "$tag" >>"$f"; done
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
unset a_MEET c_MEET a_HOLD
t_done
