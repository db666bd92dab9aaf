#!/bin/bash
# run-attempts.sh: best-of-N (issue 27) with real git in a small temp
# repository and bash roles: run --attempts 3 in auto mode runs develop
# three times at once, each in a worktree of its own; one attempt fails
# the check (merge.check), the passing one with the smallest diff is
# picked and merged onto the loop's branch, never into the user's
# checkout; all three are recorded in skill_state.develop.attempts; the
# losers' branches are there until the loop ends and gone after; none
# passing: the smallest diff still picked, none_passed said; every
# attempt is a worker of its own (started and ended through the gate);
# in the parallel step, develop's attempts beside debug and validate;
# usage sums every attempt and a tool's max_workers gate holds them;
# --attempts 0, 99, abc and roles.develop.attempts 9 are refused.
. "$(dirname "$0")/lib.sh"
t_watchdog 120
command -v git >/dev/null 2>&1 || { echo "1..0 # SKIP no git"; exit 77; }
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
    GIT_COMMITTER_EMAIL=t@t
t_valgrind_worker
t_marker M att

OK="exec '$FAKE' --marker $M result success"
A='d["skill_state"]["develop"]["attempts"]'

# repo ROOT: a git repository on main with a README.
repo() {
	git init -q -b main "$1" && echo r >"$1/README" &&
	    git -C "$1" add -A && git -C "$1" commit -qm base
}

# cfg ROOT DEVELOP DEBUG VALIDATE JSON: bash roles, JSON's sections laid
# over the configuration's (merge, tools, a role's members).
cfg() {
	t_run_config "$1" "$OK init" "$2" "$3" "$4" "$OK bye" '{"grace_ms": 500}' &&
	python3 - "$1/.loop/config.json" "$5" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
for k, v in json.loads(sys.argv[2]).items():
    if isinstance(v, dict) and isinstance(c.get(k), dict):
        for kk, vv in v.items():
            c[k].setdefault(kk, {}).update(vv) if isinstance(vv, dict) else c[k].__setitem__(kk, vv)
    else:
        c[k] = v
json.dump(c, open(sys.argv[1], "w"))
PYEOF
}
CHECK='{"merge": {"check": "test ! -e bad.txt"}}'

R=$T_TMP/best
repo "$R"
head0=$(git -C "$R" rev-parse HEAD)

# develop differs by the attempt's agent number (its worktree is
# .../wt/agent-N): N%3 0 fails the check with the smallest diff (an
# empty bad.txt), 1 passes with 5 lines, 2 passes with 1 line.
DEV='case $(( ${PWD##*-} % 3 )) in 0) : >bad.txt ;; 1) printf "g\nx\ny\nz\nw\n" >out.txt ;; 2) echo g >out.txt ;; esac; '"$OK dev"
VAL="git -C '$R' branch --list 'ccw/*' --format='%(refname:short)' >'$T_TMP/during'; $OK val"
cfg "$R" "$DEV" "$OK dbg" "$VAL" "$CHECK"

t_loop_run "$R" best-1 --attempts 3 --json "Best of three"
is "$RC" 0 "best-of-3: exit 0"
is "$(jget "$F" "[$A['n'], len($A['list']), $A['passed'], $A['none_passed']]")" \
    '[3,3,2,false]' "best-of-3: all three recorded, two passed"
is "$(jget "$F" "sorted((int(a['agent'].split('-')[-1]) % 3, a['check'], a['passed'], a['picked']) for a in $A['list'])")" \
    '[[0,"failed",false,false],[1,"passed",true,false],[2,"passed",true,true]]' \
    "best-of-3: the failing attempt lost, the passing one with the smallest diff picked"
is "$(jget "$F" "sorted((a['stat']['insertions'] + a['stat']['deletions'], a['why'].split(' ')[0]) for a in $A['list'])")" \
    '[[0,"tests"],[1,"picked:"],[5,"a"]]' "best-of-3: each attempt's diff and why"
is "$(jget "$F" "$A['picked'] == [a['agent'] for a in $A['list'] if a['picked']][0]")" \
    true "best-of-3: the picked agent named"
is "$(jget "$F" "all(a['branch'] == 'ccw/best-1/' + a['agent'] and a['check_rc']['rc'] is not None for a in $A['list'])")" \
    true "best-of-3: each attempt's branch and check rc"
LB=$(jget "$F" "d['skill_state']['worktree']['loop_branch']")
is "$(git -C "$R" show "$LB:out.txt")" g "best-of-3: the winner merged onto $LB"
git -C "$R" cat-file -e "$LB:bad.txt" 2>/dev/null
is "$?" 128 "best-of-3: the failing attempt not merged"
for b in $(jget "$F" "' '.join(a['branch'] for a in $A['list'])"); do
	grep -qx "$b" "$T_TMP/during" || echo "# $b missing while the loop ran"
done >"$T_TMP/missing"
is "$(cat "$T_TMP/missing")" "" "best-of-3: the losers' branches there until the loop ends"
is "$(git -C "$R" branch --list 'ccw/*' --format='%(refname:short)')" "$LB" \
    "best-of-3: the attempts' branches gone at the end, the loop's left"
is "$(git -C "$R" worktree list --porcelain | grep -c '^worktree .*/best-1/wt/')" 0 \
    "best-of-3: no worktree left"
is "$(git -C "$R" rev-parse HEAD):$(ls "$R")" "$head0:README" \
    "best-of-3: the user's checkout untouched"
is "$(python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
print(sum(e["event"] == "worker_started" and e.get("role") == "develop" for e in ev),
    sum(e["event"] == "worker_result" and e.get("role") == "develop" for e in ev),
    sum(e["event"] == "attempts_picked" for e in ev))' "$R.out")" \
    "3 3 1" "best-of-3: three develop workers started and ended, one pick"

# --- no attempt passes: the rule still picks (the smallest diff), the
# state says none passed
R4=$T_TMP/none
repo "$R4"
DEV='case $(( ${PWD##*-} % 2 )) in 0) : >bad.txt ;; 1) printf "a\nb\n" >bad.txt ;; esac; '"$OK dev"
cfg "$R4" "$DEV" "$OK dbg" "$OK val" "$CHECK"
t_loop_run "$R4" none-1 --attempts 2 "None passes"
is "$(jget "$F" "[$A['passed'], $A['none_passed'], [(a['stat']['insertions'], a['why'].startswith('picked: none passed')) for a in $A['list'] if a['picked']]]")" \
    '[0,true,[[0,true]]]' "none passed: said, the smallest diff picked"

# --- the parallel step: develop's two attempts beside debug and validate
R3=$T_TMP/par
repo "$R3"
DEV='case $(( ${PWD##*-} % 2 )) in 0) : >bad.txt ;; 1) echo g >out.txt ;; esac; '"$OK dev"
cfg "$R3" "$DEV" "echo d >dbg.txt; $OK dbg" "$OK val" "$CHECK"
t_loop_run "$R3" par-1 -m parallel --attempts 2 "Two in the group"
is "$RC" 0 "parallel: exit 0"
is "$(jget "$F" "sorted((int(a['agent'].split('-')[-1]) % 2, a['check'], a['picked']) for a in $A['list'])")" \
    '[[0,"failed",false],[1,"passed",true]]' "parallel: develop's passing attempt picked"
is "$(jget "$F" "[d['skill_state']['parallel_results']['develop']['branch'] == [a['branch'] for a in $A['list'] if a['picked']][0], d['skill_state']['parallel_results']['develop']['merge']]")" \
    '[true,"merged"]' "parallel: the winner's branch through the merge queue"
LB=$(jget "$F" "d['skill_state']['worktree']['loop_branch']")
is "$(git -C "$R3" show "$LB:out.txt"):$(git -C "$R3" show "$LB:dbg.txt")" "g:d" \
    "parallel: the winner and debug merged onto $LB"
git -C "$R3" cat-file -e "$LB:bad.txt" 2>/dev/null
is "$?" 128 "parallel: the losing attempt not merged"

# --- budgets and the gate count every attempt: develop on a claude
# stand-in (its real success stream, with usage), tools.claude.max_workers
# 1, roles.develop.attempts 2 from the configuration
S=$(cd "$srcdir/tests/streams" && pwd)
cat >"$T_TMP/claude" <<EOF
#!/bin/bash
cat >/dev/null
echo "start \$\$" >>"$T_TMP/claude.log"
trap 'echo "end \$\$" >>"$T_TMP/claude.log"' EXIT
'$FAKE' --marker $M replay "$S/claude-success.jsonl"
EOF
chmod +x "$T_TMP/claude"
R2=$T_TMP/gate
repo "$R2"
cfg "$R2" "$OK dev" "$OK dbg" "$OK val" '{"roles": {"develop": {"tool": "claude",
    "attempts": 2}}, "tools": {"claude": {"path": "'"$T_TMP/claude"'", "max_workers": 1}}}'
t_loop_run "$R2" gate-1 --json "Two through the gate"
is "$RC" 0 "gate: exit 0"
is "$(jget "$F" "[$A['n'], sum(a['outcome'] == 'success' for a in $A['list'])]")" \
    '[2,2]' "gate: roles.develop.attempts 2 ran two attempts"
is "$(python3 - "$R2.out" "$F" <<'PYEOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
res = [e for e in ev if e["event"] == "worker_result"]
dev = [e["usage"]["output_tokens"] for e in res if e.get("role") == "develop"]
tot = sum((e.get("usage") or {}).get("output_tokens", 0) for e in res)
u = json.load(open(sys.argv[2]))["skill_state"]["usage"]
print(len(dev), all(t > 0 for t in dev), u["output_tokens"] == tot)
PYEOF
)" "2 True True" "gate: skill_state.usage sums both attempts"
is "$(awk '$1 == "start" { n++; if (n > m) m = n } $1 == "end" { n-- } END { print m }' "$T_TMP/claude.log")" \
    1 "gate: max_workers 1 holds the second attempt at the gate"

# --- bad counts: refused with a clear message, exit 2
for n in 0 99 abc; do
	$WRAP "$SUP" run -C "$R" --attempts "$n" "Bad" >/dev/null 2>"$T_TMP/bad.err"
	rc=$?
	grep -q 'attempts.*from 1 to 8' "$T_TMP/bad.err"
	is "$rc:$?" "2:0" "--attempts $n: refused, exit 2"
done
cfg "$R" "$OK dev" "$OK dbg" "$OK val" '{"roles": {"develop": {"attempts": 9}}}'
$WRAP "$SUP" run -C "$R" "Bad" >/dev/null 2>"$T_TMP/bad.err"
rc=$?
grep -q 'roles.develop.attempts: expected an integer from 1 to 8' "$T_TMP/bad.err"
is "$rc:$?" "2:0" "roles.develop.attempts 9: refused, exit 2"
t_done
