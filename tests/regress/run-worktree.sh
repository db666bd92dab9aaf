#!/bin/bash
# run-worktree.sh: a parallel step's writers in git worktrees of their own
# (issue 27), with real git in small temp repositories and bash roles:
# two writers merged onto ccw/<loop>/loop (files_changed exact, a deletion
# included; the user's checkout untouched; the branch left, or landed
# with --land); validate never sees develop's half-written file; two
# writers of the same lines: the conflict recorded with its hunks and
# resolved by develop in a worktree holding the markers, or the loop
# failed after max_resolve with its worktrees listed by state show;
# kill -9 during the merge, then a resume; a non-git project; a dirty
# tree refused, --from-worktree accepted; --isolation none; a loop deleted
# while it runs; a stop during the merge; the configuration's keys
# checked.
. "$(dirname "$0")/lib.sh"
t_watchdog 240
t_valgrind_worker
t_marker M wt
if ! command -v git >/dev/null 2>&1; then echo "1..0 # SKIP git is not installed"; exit 77; fi
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
    GIT_COMMITTER_EMAIL=t@t

OK="exec '$FAKE' --marker $M result success"
PR='d["skill_state"]["parallel_results"]'

# repo ROOT: a git repository on main with a.txt, b.txt, gone.txt.
repo() {
	git init -q -b main "$1"
	printf 'a\n' >"$1/a.txt"
	printf 'b\n' >"$1/b.txt"
	printf 'g\n' >"$1/gone.txt"
	git -C "$1" add -A
	git -C "$1" commit -qm base
}

# cfg ROOT DEVELOP DEBUG VALIDATE [TOP_JSON]: bash roles, TOP_JSON's
# members (isolation, merge, ...) at the top of the configuration.
cfg() {
	t_run_config "$1" "$OK init" "$2" "$3" "$4" "$OK bye" '{"grace_ms": 500}'
	python3 - "$1/.loop/config.json" "${5-}" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c.update(json.loads(sys.argv[2] or "{}"))
json.dump(c, open(sys.argv[1], "w"))
PYEOF
}

# run ROOT ID ARGS...: a parallel loop in the foreground; $RC, $F.
run() {
	local root=$1 id=$2
	shift 2
	t_loop_run "$root" "$id" -m parallel "$@"
}

# wts ROOT ID: the worktrees git lists under the loop's side directory.
wts() {
	git -C "$1" worktree list --porcelain | grep -c "^worktree .*/\.loop/$2/wt/"
}

# sorted FILE ROLE: the role's files_changed, sorted.
files_of() {
	jget "$1" "sorted(d['skill_state']['parallel_results']['$2']['files_changed'])"
}

# wait_for PATH: a shell loop for a role's command, 20 s at most.
wait_for() {
	echo "i=0; while [ ! -e '$1' ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i+1)); done"
}

# --- two writers of different files, merged; validate sees the base tree
R=$T_TMP/clean
repo "$R"
head0=$(git -C "$R" rev-parse HEAD)
DEV="printf half >half.txt; touch '$T_TMP/hw'; $(wait_for "$T_TMP/listed"); echo dev >>a.txt; rm gone.txt; $OK dev '[]'"
DBG="echo dbg >>b.txt; $OK dbg '[]'"
VAL="$(wait_for "$T_TMP/hw"); ls >'$T_TMP/listing'; touch '$T_TMP/listed'; $OK val"
cfg "$R" "$DEV" "$DBG" "$VAL" '{"merge": {"check": null}}'
run "$R" wt-1 --json "Two writers"
is "$RC" 0 "clean: exit 0"
is "$(files_of "$F" develop)" '["a.txt","gone.txt","half.txt"]' \
    "clean: develop's files_changed exact, the deletion included"
is "$(files_of "$F" debug)" '["b.txt"]' "clean: debug's files_changed exact"
is "$(jget "$F" "[$PR[r]['merge'] for r in ('develop', 'debug', 'validate')]")" \
    '["merged","merged","empty"]' "clean: merge outcomes in role order"
is "$(jget "$F" "$PR['develop']['branch'].startswith('ccw/wt-1/agent')")" true \
    "clean: develop's branch recorded"
is "$(git -C "$R" show ccw/wt-1/loop:a.txt)" "$(printf 'a\ndev')" "clean: develop's edit on ccw/wt-1"
is "$(git -C "$R" show ccw/wt-1/loop:b.txt)" "$(printf 'b\ndbg')" "clean: debug's edit on ccw/wt-1"
git -C "$R" cat-file -e ccw/wt-1/loop:gone.txt 2>/dev/null
is "$?" 128 "clean: the deletion merged"
grep -qx 'half.txt' "$T_TMP/listing"
is "$?" 1 "clean: validate never saw develop's half-written file"
grep -qx 'gone.txt' "$T_TMP/listing"
ok $? "clean: validate listed the base tree"
is "$(git -C "$R" rev-parse HEAD)" "$head0" "clean: the user's branch did not move"
is "$(git -C "$R" status --porcelain --untracked-files=no)" "" \
    "clean: the user's checkout untouched"
grep -q 'left on branch ccw/wt-1/loop' "$R.err"
ok $? "clean: run says the work is left on branch ccw/wt-1/loop"
is "$(git -C "$R" branch --list 'ccw/*' --format='%(refname:short)')" "ccw/wt-1/loop" \
    "clean: only the loop's branch is left"
is "$(wts "$R" wt-1)" 0 "clean: no worktree left"
is "$(python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
print(sum(e["event"] == "merge_started" for e in ev), sum(e["event"] == "merge_result" for e in ev))' "$R.out")" \
    "1 3" "clean: --json: merge_started, a merge_result per writer"

# --- --land: fast-forwarded onto main
R=$T_TMP/land
repo "$R"
cfg "$R" "echo dev >>a.txt; $OK dev" "echo dbg >>b.txt; $OK dbg" "$OK val" \
    '{"merge": {"check": null}}'
run "$R" wt-2 --land "Land it"
is "$RC" 0 "land: exit 0"
is "$(cat "$R/a.txt")" "$(printf 'a\ndev')" "land: main fast-forwarded in the user's checkout"
grep -q 'landed on main' "$R.err"
ok $? "land: run says landed on main"
is "$(git -C "$R" branch --list 'ccw/*')" "" "land: the loop's branches removed"

# --- two writers of the same lines: the conflict resolved by develop
R=$T_TMP/conflict
repo "$R"
DEV="if grep -q '^<<<<<<<' a.txt; then cp a.txt '$T_TMP/seen'; echo resolved >a.txt; else echo dev >a.txt; fi; $OK dev"
cfg "$R" "$DEV" "echo dbg >a.txt; $OK dbg" "$OK val" '{"merge": {"check": null}}'
run "$R" wt-3 "Same lines"
is "$RC" 0 "conflict: resolved, exit 0"
is "$(jget "$F" "[(c['source'], c['files'], c['workers'], 'dbg' in c['hunks'] and '<<<<<<<' in c['hunks']) for c in $PR['conflicts']]")" \
    '[["git",["a.txt"],["debug"],true]]' "conflict: recorded with its files and hunks"
grep -q '^<<<<<<<' "$T_TMP/seen"
ok $? "conflict: the resolve step's worktree held the markers"
is "$(git -C "$R" show ccw/wt-3/loop:a.txt)" resolved "conflict: the resolution merged"
is "$(jget "$F" "[r['merge'] for r in $PR['resolves']]")" '["merged"]' \
    "conflict: the resolve step recorded"
[ ! -e "$R/.git/MERGE_HEAD" ] && [ -z "$(git -C "$R" status --porcelain --untracked-files=no)" ]
ok $? "conflict: the user's checkout never mid-merge"

# --- unresolvable after max_resolve: failed, worktrees kept and listed
R=$T_TMP/stuck
repo "$R"
DEV="if grep -q '^<<<<<<<' a.txt; then exit 1; fi; echo dev >a.txt; $OK dev"
cfg "$R" "$DEV" "echo dbg >a.txt; $OK dbg" "$OK val" \
    '{"merge": {"check": null, "max_resolve": 1}}'
run "$R" wt-4 "Cannot resolve"
is "$RC" 1 "stuck: exit 1"
is "$(jget "$F" "[d['status'], 'a.txt' in d['failure_reason'], 'not resolved' in d['failure_reason']]")" \
    '["failed",true,true]' "stuck: failed, the reason names the file"
$WRAP "$SUP" state -C "$R" show wt-4 >"$R.show" 2>&1
grep -q "^worktree: .*/wt-4/wt/loop \[ccw/wt-4/loop\]" "$R.show"
ok $? "stuck: state show lists the loop's worktree"
[ "$(git -C "$R" branch --list 'ccw/wt-4/*' | wc -l)" -ge 2 ]
ok $? "stuck: the agents' branches kept"

# --- kill -9 during the merge (a slow check), then resume
R=$T_TMP/crash
repo "$R"
cfg "$R" "echo dev >>a.txt; $OK dev" "echo dbg >>b.txt; $OK dbg" "$OK val" \
    "{\"merge\": {\"check\": \"touch '$T_TMP/checking'; $(wait_for "$T_TMP/go")\"}}"
t_loop_start "$R" wt-5 -m parallel "Crash in the merge"
t_wait_file "$T_TMP/checking" 20000
ok $? "crash: the merge's check runs"
kill -9 "$PID"
wait "$PID" 2>/dev/null
touch "$T_TMP/go"
run "$R" wt-5
is "$RC" 0 "crash: the resume completes"
is "$(git -C "$R" show ccw/wt-5/loop:a.txt) $(git -C "$R" show ccw/wt-5/loop:b.txt)" \
    "$(printf 'a\ndev') $(printf 'b\ndbg')" "crash: both edits on ccw/wt-5"
is "$(wts "$R" wt-5) $(git -C "$R" worktree prune -n -v 2>&1 | wc -l)" "0 0" \
    "crash: no worktree left, none stale"
is "$(git -C "$R" branch --list 'ccw/*' --format='%(refname:short)')" "ccw/wt-5/loop" \
    "crash: no duplicated branch"

# --- stopped (SIGTERM) during the merge: the helper killed, then resumed
R=$T_TMP/stop
repo "$R"
rm -f "$T_TMP/checking"
cfg "$R" "echo dev >>a.txt; $OK dev" "echo dbg >>b.txt; $OK dbg" "$OK val" \
    "{\"merge\": {\"check\": \"touch '$T_TMP/checking'; $(wait_for "$T_TMP/go2")\"}}"
t_loop_start "$R" wt-12 -m parallel "Stop in the merge"
t_wait_file "$T_TMP/checking" 20000
kill -TERM "$PID"
t_wait_pid "$PID" 20000
is "$T_RC" 4 "stop: exit 4 during the merge"
touch "$T_TMP/go2"
run "$R" wt-12
is "$RC $(git -C "$R" show ccw/wt-12/loop:a.txt | tr '\n' ' ')$(wts "$R" wt-12)" \
    "0 a dev 0" "stop: the resume merges, no worktree left"

# --- not a git repository: today's behaviour
R=$T_TMP/plain
mkdir -p "$R"
cfg "$R" "echo dev >>a.txt; $OK dev" "echo dbg >>b.txt; $OK dbg" "$OK val"
run "$R" wt-6 "No git"
is "$RC" 0 "plain: exit 0"
is "$(cat "$R/a.txt") $(cat "$R/b.txt")" "dev dbg" "plain: the workers wrote the project"
is "$(jget "$F" "'worktree' in d['skill_state']") $([ -e "$R/.loop/wt-6/wt" ]; echo $?)" \
    "false 1" "plain: no worktree"

# --- --isolation none in a git repository: one shared checkout
R=$T_TMP/shared
repo "$R"
cfg "$R" "echo dev >>a.txt; $OK dev" "$OK dbg" "$OK val"
run "$R" wt-11 --isolation none "Shared"
is "$RC $(cat "$R/a.txt" | tr '\n' ' ')" "0 a dev " \
    "isolation none: the worker wrote the user's checkout"
is "$(git -C "$R" branch --list 'ccw/*')$(jget "$F" "'worktree' in d['skill_state']")" \
    "false" "isolation none: no branch, no worktree"

# --- a dirty tree: refused, then accepted with --from-worktree
R=$T_TMP/dirty
repo "$R"
echo mine >>"$R/b.txt"
cfg "$R" "echo dev >>a.txt; $OK dev" "$OK dbg" "$OK val" '{"merge": {"check": null}}'
run "$R" wt-7 "Dirty"
is "$RC" 1 "dirty: refused, exit 1"
grep -q 'uncommitted changes.*--from-worktree' "$R.err"
ok $? "dirty: the message names --from-worktree"
is "$(cat "$R/b.txt")" "$(printf 'b\nmine')" "dirty: the user's change untouched"
run "$R" wt-8 --from-worktree "Dirty, from the work tree"
is "$RC" 0 "dirty: --from-worktree completes"
is "$(git -C "$R" show ccw/wt-8/loop:b.txt)" "$(printf 'b\nmine')" \
    "dirty: the loop started from the user's changes"

# --- deleted while its workers run: worktrees and branches removed
R=$T_TMP/deleted
repo "$R"
cfg "$R" "touch '$T_TMP/dev-up'; $(wait_for "$T_TMP/never"); $OK dev" "$OK dbg" \
    "$OK val" '{"merge": {"check": null}}'
t_loop_start "$R" wt-10 -m parallel "Deleted"
t_wait_file "$T_TMP/dev-up" 20000
ok $? "deleted: develop works in its worktree"
rm -f "$F"
t_wait_pid "$PID" 20000
is "$T_RC" 4 "deleted: the loop ends, exit 4"
is "$(git -C "$R" branch --list 'ccw/*') $(wts "$R" wt-10)" " 0" \
    "deleted: its branches and worktrees removed"
[ ! -e "$R/.loop/wt-10" ]
ok $? "deleted: its side directory removed"

# --- the configuration's keys are checked
R=$T_TMP/badcfg
repo "$R"
cfg "$R" "$OK dev" "$OK dbg" "$OK val" '{"merge": {"strategy": "squash"}}'
run "$R" wt-9 "Bad strategy"
is "$RC" 2 "config: a bad merge.strategy is a usage error"
grep -q 'merge.strategy: expected "merge" or "rebase"' "$R.err"
ok $? "config: the message names merge.strategy and its words"
cfg "$R" "$OK dev" "$OK dbg" "$OK val" '{"worktree": {"copy": ["../x"]}}'
run "$R" wt-9 "Bad copy"
grep -q 'worktree.copy\[0\]: expected a relative path' "$R.err"
ok $? "config: a worktree.copy entry with .. is refused"

t_done
