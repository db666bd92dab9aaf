#!/bin/bash
# files-observed.sh: files_changed is what the worker observed, not what
# the answer claims (issue 25): in a git work tree the diff of the work
# tree (untracked files in, ignored ones out), elsewhere a walk of mtimes;
# the answer's own list is files_claimed.  Both in `agent` JSON, in the
# state file's develop task, and in the worker_result event.
. "$(dirname "$0")/lib.sh"
t_watchdog 120
t_valgrind_worker
t_marker M fobs
S=$T_TMP/state
R=$T_TMP/r

# The answer claims claimed.sh; the command touches other files.
CLAIM='printf "WORKER_RESULT:\n- status: success\n- summary: did it\n- files_changed: [\"claimed.sh\"]\n"'

# -- git: a tracked file modified, an untracked one made, an ignored one
# made; claimed.sh is tracked and left alone.
G=$T_TMP/repo
mkdir -p "$G"
git -C "$G" init -q && printf 'a\n' >"$G/t.txt" && printf 'c\n' >"$G/claimed.sh" &&
    printf '*.tmp\n' >"$G/.gitignore" && printf 'x\n' >"$G/dirty.txt" &&
    git -C "$G" add . && git -C "$G" -c user.name=t -c user.email=t@t \
    commit -qm init && printf 'y\n' >>"$G/dirty.txt"
agent "$R" develop --tool bash -C "$G" --state-dir "$S" --command "
echo more >>t.txt; echo new >new.txt; echo junk >junk.tmp; $CLAIM" go
is "$(jget "$R" '[d["status"], sorted(d["files_changed"]), d["files_claimed"], d["files_source"]]')" \
    '["success",["new.txt","t.txt"],["claimed.sh"],"git"]' \
    "git: files_changed observed (untracked in, ignored and dirty-before out), the claim apart"

# -- git: a turn that changes nothing but claims a file
agent "$R" develop --tool bash -C "$G" --state-dir "$S" --command "$CLAIM" go
is "$(jget "$R" '[d["files_changed"], d["files_claimed"]]')" \
    '[[],["claimed.sh"]]' "git: nothing changed, nothing recorded as changed"

# -- a plain directory: the mtime walk (a file modified, one made deeper)
P=$T_TMP/plain
mkdir -p "$P/.loop" "$P/sub"
printf 'a\n' >"$P/old.txt"
printf 'c\n' >"$P/claimed.sh"
agent "$R" develop --tool bash -C "$P" --state-dir "$S" --command "
echo more >>old.txt; echo new >sub/new.txt; echo own >.loop/x.json; $CLAIM" go
is "$(jget "$R" '[sorted(d["files_changed"]), d["files_claimed"], d["files_source"]]')" \
    '[["old.txt","sub/new.txt"],["claimed.sh"],"mtime"]' \
    "plain dir: files_changed from the mtime walk (.loop skipped), the claim apart"

# -- no claim: files_claimed is empty
agent "$R" develop --tool bash -C "$P" --state-dir "$S" --command \
    'rm old.txt; echo ok' go
is "$(jget "$R" '[d["files_changed"], d["files_claimed"]]')" \
    '[["old.txt"],[]]' "plain dir: a removed file is a change; no claim, none kept"

# -- a state directory inside the project: the worker's own log is no change
Q=$T_TMP/inproj
mkdir -p "$Q"
agent "$R" develop --tool bash -C "$Q" --state-dir "$Q/st" --command \
    'echo z >z.txt' go
is "$(jget "$R" '[d["files_changed"], "/inproj/st/" in d["log_path"]]')" \
    '[["z.txt"],true]' "plain dir: the worker's log in the project is not listed"

# -- a loop: the develop task and the worker_result event carry both
OK="exec '$FAKE' --marker $M result success"
for L in "$G" "$P"; do
	t_run_config "$L" "$OK init-done" \
	    "echo dev >>made.txt; $OK 'added add.sh' '[\"add.sh\"]'" \
	    "$OK dbg" "$OK 'all good'" "$OK done"
	t_loop_run "$L" fobs-1 --json "Add add.sh"
	is "$RC" 0 "loop in $(basename "$L"): exit 0"
	is "$(jget "$F" '[d["skill_state"]["develop"]["tasks"][0].get(k) for k in ("files_changed", "files_claimed")]')" \
	    '[["made.txt"],["add.sh"]]' \
	    "loop in $(basename "$L"): the develop task has observed and claimed files"
	is "$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["event"] == "worker_result" and e["role"] == "develop":
        print(json.dumps([e["files_changed"], e["files_claimed"]]))' "$L.out")" \
	    '[["made.txt"], ["add.sh"]]' \
	    "loop in $(basename "$L"): worker_result carries both"
done
t_done
