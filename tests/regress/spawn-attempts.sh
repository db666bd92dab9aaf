#!/bin/bash
# spawn-attempts.sh: best-of-N through a front end (issue 27): control's
# spawn with "attempts": 3 and a "check" starts three agents of one
# request, each in a git worktree of its own (ccw/<group>/<agent>);
# wait on the group's id waits for all three, tries them and picks by
# run --attempts's rule: the passing one with the smallest diff, all
# three recorded; the losers' branches stay until close of the group,
# which removes them; the user's checkout is untouched.  attempts 0, 99
# and "x" are refused with a typed error; outside git, refused.
. "$(dirname "$0")/lib.sh"
t_watchdog 90
command -v git >/dev/null 2>&1 || { echo "1..0 # SKIP no git"; exit 77; }
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
    GIT_COMMITTER_EMAIL=t@t
t_valgrind_worker
t_marker M spa

R=$T_TMP/repo
git init -q -b main "$R" && echo r >"$R/README" && git -C "$R" add -A &&
    git -C "$R" commit -qm base
head0=$(git -C "$R" rev-parse HEAD)
S=$T_TMP/state

# The attempt's agent number (its worktree is .../wt/agent-N): N%3 0
# fails the check with the smallest diff (an empty bad.txt), 1 passes
# with 5 lines, 2 passes with 1 line.
DEV='case $(( ${PWD##*-} % 3 )) in 0) : >bad.txt ;; 1) printf "g\nx\ny\nz\nw\n" >out.txt ;; 2) echo g >out.txt ;; esac; exec '"'$FAKE'"' --marker '"$M"' result success'
spawn() {	# spawn ID ATTEMPTS CWD [CHECK]: the request line
	python3 -c 'import json, sys
r = {"id": int(sys.argv[1]), "verb": "spawn", "role": "develop",
     "message": "go", "tool": "bash", "command": sys.argv[4],
     "cwd": sys.argv[3]}
r["attempts"] = json.loads(sys.argv[2])
if len(sys.argv) > 5: r["check"] = sys.argv[5]
print(json.dumps(r))' "$@"
}

C=$T_TMP/ctl
ctl_start "$C" --state-dir "$S" --loop-id SA
ctl_send "$(spawn 1 3 "$R" "$DEV" 'test ! -e bad.txt')"
r=$(ctl_recv 1 20000)
is "$(jget - '[d["ok"], len(d["attempts"]), d["agent_id"] == d["attempts"][0]]' <<<"$r")" \
    '[true,3,true]' "spawn attempts 3: three agents, the first's id"
G=$(jget - 'd["group"]' <<<"$r")
ctl_send "{\"id\":2,\"verb\":\"wait\",\"targets\":[\"$G\"],\"timeout_ms\":30000}"
r=$(ctl_recv 2 40000)
printf '%s\n' "$r" >"$T_TMP/waited"
is "$(jget "$T_TMP/waited" '[d["ok"], d["timed_out"], len(d["attempts"]), d["passed"]]')" \
    '[true,false,3,2]' "wait on the group: all three tried, two passed"
is "$(jget "$T_TMP/waited" "sorted((int(a['agent'].split('-')[-1]) % 3, a['check'], a['passed'], a['picked']) for a in d['attempts'])")" \
    '[[0,"failed",false,false],[1,"passed",true,false],[2,"passed",true,true]]' \
    "wait: the failing attempt lost, the passing one with the smallest diff picked"
is "$(jget "$T_TMP/waited" "sorted((a['stat']['insertions'] + a['stat']['deletions'], a['why'].split(' ')[0]) for a in d['attempts'])")" \
    '[[0,"tests"],[1,"picked:"],[5,"a"]]' "wait: each attempt's diff and why"
is "$(jget "$T_TMP/waited" "[d['picked'] == d['result']['agent_id'] == [a['agent'] for a in d['attempts'] if a['picked']][0], all(a['branch'] == 'ccw/$G/' + a['agent'] and a['check_rc']['rc'] is not None and a['duration_ms'] >= 0 for a in d['attempts'])]")" \
    '[true,true]' "wait: the picked agent's result, each attempt's branch and check rc"
PB=$(jget "$T_TMP/waited" 'd["branch"]')
is "$(git -C "$R" show "$PB:out.txt")" g "the picked branch holds its work"
is "$(git -C "$R" branch --list "ccw/$G/agent-*" | wc -l)" 3 \
    "the three attempts' branches stay until close"
is "$(git -C "$R" worktree list --porcelain | grep -c "^worktree .*/$G/wt/")" 0 \
    "the attempts' worktree directories removed"
ctl_send "{\"id\":3,\"verb\":\"close\",\"target\":\"$G\"}"
r=$(ctl_recv 3 20000)
is "$(jget - 'd["ok"]' <<<"$r")" true "close of the group"
is "$(git -C "$R" branch --list "ccw/$G/*" | wc -l)" 0 \
    "close: the group's branches gone"
is "$(git -C "$R" rev-parse HEAD):$(git -C "$R" branch --show-current):$(ls "$R")" \
    "$head0:main:README" "the user's checkout untouched"

# --- bad counts: the usual typed error
i=10
for n in 0 99 '"x"'; do
	ctl_send "$(spawn $i "$n" "$R" "$DEV")"
	r=$(ctl_recv $i)
	is "$(jget - '[d["ok"], d["code"], d["detail"]]' <<<"$r")" \
	    '[false,"invalid_argument","\"attempts\" must be an integer from 1 to 8"]' \
	    "attempts $n: refused"
	i=$((i + 1))
done

# --- not a git repository: refused (the user asked for isolation)
mkdir "$T_TMP/plain"
ctl_send "$(spawn 20 2 "$T_TMP/plain" "$DEV")"
r=$(ctl_recv 20 20000)
like "$(jget - '[d["ok"], d["code"], d["error"]]' <<<"$r")" \
    'false.*invalid_argument.*needs a git repository.*not a git repository' \
    "not a git repository: refused"
ctl_send '{"id":21,"verb":"list"}'
is "$(jget - 'len(d["agents"])' <<<"$(ctl_recv 21)")" 3 "not a git repository: no agent started"

# --- a group never closed: its branches removed at the session's end;
# no check: the smaller diff picked, unchecked
ctl_send "$(spawn 30 2 "$R" "$DEV")"
G2=$(jget - 'd["group"]' <<<"$(ctl_recv 30 20000)")
ctl_send "{\"id\":31,\"verb\":\"wait\",\"targets\":[\"$G2\"],\"timeout_ms\":30000}"
r=$(ctl_recv 31 40000)
is "$(jget - "sorted((int(a['agent'].split('-')[-1]) % 3, a['check'], a['picked']) for a in d['attempts'])" <<<"$r")" \
    '[[1,"unchecked",false],[2,"unchecked",true]]' "no check: the smaller diff picked"
is "$(git -C "$R" branch --list "ccw/$G2/agent-*" | wc -l)" 2 "no close: the branches there"
ctl_stop
is "$T_RC:$(git -C "$R" branch --list "ccw/*" | wc -l):$(test -e "$S/spawn" && echo left)" \
    "0:0:" \
    "the session's end: the group's branches removed, no directory left"

# --- the same through mcp's tools: spawn_agent with attempts 2 and a
# check in a checkout with a tracked change, wait_agent and close_agent
# on the group
R2=$T_TMP/mrepo
git init -q -b main "$R2" && echo r >"$R2/README" && git -C "$R2" add -A &&
    git -C "$R2" commit -qm base
t_run_config "$R2" true true true true true '{"grace_ms": 500}'
echo more >>"$R2/README"	# a tracked change: carried into the attempts
call() {	# call ID TOOL ARGS_JSON: a tools/call line
	ctl_send "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\
\"params\":{\"name\":\"$2\",\"arguments\":$3}}"
}
CTL_CMD=mcp ctl_start "$T_TMP/mcp" -C "$R2"
ctl_send '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}'
ctl_recv 0 >/dev/null
call 1 spawn_agent "$(python3 -c 'import json, sys
print(json.dumps({"role": "develop", "tool": "bash", "command": sys.argv[1],
    "attempts": 2, "check": "test ! -e bad.txt"}))' "$DEV")"
r=$(ctl_recv 1 20000)
is "$(jget - '[d["result"]["isError"], len(d["result"]["structuredContent"]["attempts"])]' <<<"$r")" \
    '[false,2]' "mcp spawn_agent attempts 2: two agents"
G=$(jget - 'd["result"]["structuredContent"]["group"]' <<<"$r")
call 2 wait_agent "{\"targets\":[\"$G\"],\"timeout_ms\":30000}"
r=$(ctl_recv 2 40000)
is "$(jget - "sorted((int(a['agent'].split('-')[-1]) % 3, a['check'], a['picked']) for a in d['result']['structuredContent']['attempts'])" <<<"$r")" \
    '[[1,"passed",false],[2,"passed",true]]' \
    "mcp wait_agent on the group: the smaller diff picked"
is "$(git -C "$R2" show "$(jget - 'd["result"]["structuredContent"]["branch"]' <<<"$r"):README" | tr '\n' ' ')" \
    'r more ' "the checkout's tracked change carried into the attempts"
call 3 close_agent "{\"target\":\"$G\"}"
r=$(ctl_recv 3 20000)
is "$(jget - 'd["result"]["isError"]' <<<"$r"):$(git -C "$R2" branch --list "ccw/$G/*" | wc -l)" \
    'false:0' "mcp close_agent on the group: its branches gone"
ctl_stop
t_done
