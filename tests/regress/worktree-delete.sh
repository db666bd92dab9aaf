#!/bin/bash
# worktree-delete.sh: what a loop's isolation left goes with the loop
# (issue 27): a failed parallel loop (an unresolvable conflict, its
# worktrees and ccw/<loop>/* branches kept for inspection) deleted
# through serve's DELETE loses them, `git worktree list` back to the
# user's checkout alone (a cleanup that fails: the delete succeeds and
# says so; serve stopped while one runs: killed, no crash); a role
# behind a launcher (a local wrapper standing for ssh) gets no worktree
# and the loop says so once.  Real git, bash roles.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 120
t_valgrind_worker
if ! command -v git >/dev/null 2>&1; then echo "1..0 # SKIP git is not installed"; exit 77; fi
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
    GIT_COMMITTER_EMAIL=t@t

OK="exec '$FAKE' result success"

# repo ROOT: a git repository on main with a.txt.
repo() {
	git init -q -b main "$1"
	printf 'a\n' >"$1/a.txt"
	git -C "$1" add -A
	git -C "$1" commit -qm base
}

# cfg ROOT DEVELOP DEBUG TOP_JSON [DEBUG_LAUNCHER_JSON]: bash roles,
# TOP_JSON's members at the top, the debug role's launcher if given.
cfg() {
	t_run_config "$1" "$OK init" "$2" "$3" "$OK val" "$OK bye" \
	    '{"grace_ms": 500}'
	python3 - "$1/.loop/config.json" "$4" "${5-}" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c.update(json.loads(sys.argv[2]))
if sys.argv[3]:
    c["roles"]["debug"]["launcher"] = json.loads(sys.argv[3])
json.dump(c, open(sys.argv[1], "w"))
PYEOF
}

# branches ROOT ID: the loop's ccw/ID/* branches, counted.
branches() {
	git -C "$1" branch --list "ccw/$2/*" | wc -l
}

# --- a failed loop (a conflict, max_resolve 0) deleted through serve
R=$T_TMP/stuck
repo "$R"
cfg "$R" "echo dev >a.txt; $OK dev" "echo dbg >a.txt; $OK dbg" \
    '{"merge": {"check": null, "max_resolve": 0}}'
t_loop_run "$R" wd-1 -m parallel "Cannot merge"
is "$RC" 1 "stuck: the loop failed"
is "$(jget "$F" "'worktree' in d['skill_state']")" true \
    "stuck: its worktree recorded"
[ "$(git -C "$R" worktree list | wc -l)" -ge 2 ] && [ "$(branches "$R" wd-1)" -ge 2 ]
ok $? "stuck: worktrees and branches kept for inspection"
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens"
req DELETE /api/loops/v2/wd-1
is "$(jr 'd["status"]')" 200 "delete: 200"
is "$(jr 'd["body"]["message"]')" "Loop deleted" "delete: the loop deleted"
is "$(git -C "$R" worktree list | wc -l)" 1 \
    "delete: git worktree list holds the user's checkout alone"
is "$(branches "$R" wd-1)" 0 "delete: the ccw/wd-1/* branches removed"
[ ! -e "$F" ] && [ ! -e "$R/.loop/wd-1" ]
ok $? "delete: the loop's files and side directory gone"
is "$(git -C "$R" rev-parse --abbrev-ref HEAD) $(git -C "$R" status --porcelain --untracked-files=no)" \
    "main " "delete: the user's checkout untouched"
srv_wait_grep "$T_TMP/srv.err" "loop wd-1 deleted: [0-9]+ worktrees" 5000
ok $? "delete: serve says what went"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" "$(t_ms 20000)"
is "$T_RC" 4 "serve: SIGTERM, exit 4"

# --- a cleanup that fails (its helper refuses): the delete succeeds, said
R=$T_TMP/refused
repo "$R"
cfg "$R" "echo dev >a.txt; $OK dev" "echo dbg >a.txt; $OK dbg" \
    '{"merge": {"check": null, "max_resolve": 0}}'
t_loop_run "$R" wd-4 -m parallel "Cannot merge, cannot clean"
is "$RC" 1 "refused: the loop failed"
printf '#!/bin/sh\necho "refused by the test" >&2\nexit 1\n' >"$T_TMP/no-worker"
chmod +x "$T_TMP/no-worker"
CCW_WORKER=$T_TMP/no-worker srv_start "$T_TMP/srv4" -C "$R"
ok $? "refused: serve listens"
req DELETE /api/loops/v2/wd-4
is "$(jr 'd["status"]') $([ -e "$R/.loop/wd-4.json" ]; echo $?)" "200 1" \
    "refused: the delete succeeds all the same"
grep -q "loop wd-4 deleted, but its worktrees and branches were not removed: .*refused by the test" \
    "$T_TMP/srv4.err"
ok $? "refused: serve says why they were not removed"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" "$(t_ms 20000)"
is "$T_RC" 4 "refused: serve exit 4"

# --- serve stopped while a delete's cleanup runs: killed, no crash, no leak
# (git's `worktree remove` held by a wrapper until the test lets it go)
R=$T_TMP/held
repo "$R"
cfg "$R" "echo dev >a.txt; $OK dev" "echo dbg >a.txt; $OK dbg" \
    '{"merge": {"check": null, "max_resolve": 0}}'
t_loop_run "$R" wd-3 -m parallel "Cannot merge either"
is "$RC" 1 "held: the loop failed"
mkdir -p "$T_TMP/bin"
cat >"$T_TMP/bin/git" <<GITEOF
#!/bin/bash
case " \$* " in *" remove "*)
	touch '$T_TMP/held.in'
	i=0; while [ ! -e '$T_TMP/held.go' ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i+1)); done ;;
esac
exec $(command -v git) "\$@"
GITEOF
chmod +x "$T_TMP/bin/git"
PATH=$T_TMP/bin:$PATH srv_start "$T_TMP/srv3" -C "$R"
ok $? "held: serve listens"
python3 "$HTTPC" "$SRV_PORT" DELETE /api/loops/v2/wd-3 -t "$SRV_TOKEN" \
    >"$T_TMP/held.res" 2>&1 &
HPID=$!
t_wait_file "$T_TMP/held.in" "$(t_ms 20000)"
ok $? "held: the cleanup runs"
kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" "$(t_ms 20000)"
is "$T_RC" 4 "held: serve stops during the cleanup (exit 4, no crash)"
touch "$T_TMP/held.go"
wait "$HPID" 2>/dev/null
[ ! -e "$R/.loop/wd-3.json" ]
ok $? "held: the loop's file is gone all the same"

# --- a role behind a launcher: no worktree for it, said once
R=$T_TMP/far
repo "$R"
cfg "$R" "pwd >'$T_TMP/dev.pwd'; echo dev >>a.txt; $OK dev" \
    "pwd >'$T_TMP/dbg.pwd'; echo \"\${CCW_FAR:-}\" >'$T_TMP/dbg.far'; $OK dbg" \
    '{"merge": {"check": null}}' '["env", "CCW_FAR=yes"]'
t_loop_run "$R" wd-2 -m parallel --json "Far debug"
is "$RC" 0 "far: exit 0"
is "$(cat "$T_TMP/dbg.far")" yes "far: debug ran behind its launcher"
is "$(cat "$T_TMP/dbg.pwd")" "$(cd "$R" && pwd -P)" \
    "far: debug worked in the project, not a worktree"
case $(cat "$T_TMP/dev.pwd") in */.loop/wd-2/wt/*) r=0 ;; *) r=1 ;; esac
ok $r "far: develop still in its worktree"
is "$(grep -c '"isolation_skipped"' "$R.out")" 1 "far: the loop says so once (event)"
is "$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("event") == "isolation_skipped":
        print(e["data"]["role"] if "data" in e else e["role"])' "$R.out")" debug \
    "far: the event names the role"
grep -q 'role debug runs behind a launcher' "$R.err"
ok $? "far: the warning names the role"
is "$(git -C "$R" branch --list 'ccw/wd-2/*' --format='%(refname:short)')" \
    "ccw/wd-2/loop" "far: no branch made for the far role"

t_done
