#!/bin/bash
# git-worktree.sh: issue 27's git work in ccw-worker, with real git on
# small temp repositories: `ccw-worker --git prepare|merge|cleanup|land`
# (clean merges, a conflict recorded and aborted, a failing check undone,
# the dirty-tree rule, a non-git root, a kill -9 in the middle of a merge
# then a re-run, create/remove cycles leaving nothing stale, land) and a
# worker's own worktree from options.worktree (cwd, exact files_changed
# with a deletion and a rename, keep false, merge_from, a bad spec).
. "$(dirname "$0")/lib.sh"
t_watchdog 90
command -v git >/dev/null || { echo "1..0 # SKIP git is not installed"; exit 77; }
t_marker M gitwt
t_valgrind_worker

# Temp repos may live under the build tree's clone: git must never climb
# out of them, and no global or system setting (identity, hooks) leaks in.
export GIT_CEILING_DIRECTORIES=$T_TMP
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
CYCLES=${CCW_GIT_CYCLES:-50}
[ -n "$WRAP" ] && CYCLES=3

# gw VERB OUT REQUEST: the reply in OUT, the exit status in $rc.
gw() {
	$WRAP "$WRK" --git "$1" >"$2" 2>"$2.err" <<<"$3"
	rc=$?
}

# mkrepo DIR: a repository with one commit (a.txt b.txt c.txt), on main,
# with an identity of its own, ignoring .loop.
mkrepo() {
	mkdir -p "$1"
	git -C "$1" init -q -b main
	git -C "$1" config user.name tester
	git -C "$1" config user.email tester@localhost
	printf 'one\ntwo\nthree\n' >"$1/a.txt"
	printf 'b\n' >"$1/b.txt"
	printf 'c\n' >"$1/c.txt"
	printf '.loop/\n' >"$1/.gitignore"
	git -C "$1" add -A
	git -C "$1" commit -qm init
}

# branch REPO NAME FROM SCRIPT: a branch made from FROM with SCRIPT run
# in a scratch worktree and committed, the worktree gone again.
branch() {
	local wt=$T_TMP/scratch-${2//\//-}
	git -C "$1" worktree add -q -b "$2" "$wt" "$3"
	(cd "$wt" && eval "$4")
	git -C "$wt" add -A
	git -C "$wt" commit -qm "$2"
	git -C "$1" worktree remove "$wt"
}

# prepare REPO LOOP [EXTRA JSON]: prepare's reply in $T_TMP/prep.json
prepare() {
	gw prepare "$T_TMP/prep.json" "$(printf '{"root":"%s","side":"%s/.loop/%s","loop":"%s","start":true%s}' \
	    "$1" "$1" "$2" "$2" "${3:-}")"
}

# merge REPO LOOP CHECK ITEMS: merge's reply in $T_TMP/merge.json
merge() {
	gw merge "$T_TMP/merge.json" "$(printf '{"repo":"%s","loop_path":"%s/.loop/%s/wt/loop","loop_branch":"ccw/%s/loop","strategy":"merge","check":%s,"check_ms":20000,"items":[%s]}' \
	    "$1" "$1" "$2" "$2" "$3" "$4")"
}

# item LOOP AGENT ROLE: one merge item (no worktree path)
item() {
	printf '{"agent":"%s","role":"%s","branch":"ccw/%s/%s"}' "$2" "$3" \
	    "$1" "$2"
}

# -- not a git repository: isolation none, nothing made
mkdir -p "$T_TMP/plain"
prepare "$T_TMP/plain" L0
is "$rc $(jget "$T_TMP/prep.json" '[d["isolation"], d["reason"]]')" \
    '0 ["none","not a git repository"]' "not a git repository: isolation none"
ok $([ ! -e "$T_TMP/plain/.loop" ]; echo $?) "... and nothing is made there"

# -- a bad request: exit 2 and a message
gw prepare "$T_TMP/bad.json" '{"root":"relative","side":"/x","loop":"L"}'
is "$rc" 2 "a relative root: a bad request (exit 2)"
like "$(cat "$T_TMP/bad.json.err")" 'absolute path' "... saying why"
gw prepare "$T_TMP/bad.json" '{"root":"/tmp","side":"/x","loop":"../x"}'
is "$rc" 2 "a loop id with '..': a bad request"

# -- two branches editing different files merge cleanly, in role order
R=$T_TMP/r1
mkrepo "$R"
start=$(git -C "$R" rev-parse HEAD)
prepare "$R" L1
is "$rc $(jget "$T_TMP/prep.json" '[d["isolation"], d["loop_branch"], d["start_branch"], d["base"] == d["start_head"]]')" \
    '0 ["worktree","ccw/L1/loop","main",true]' "prepare: the loop branch and worktree"
LW=$R/.loop/L1/wt/loop
branch "$R" ccw/L1/dev1 ccw/L1/loop 'echo B >>b.txt'
branch "$R" ccw/L1/dev2 ccw/L1/loop 'echo C >>c.txt'
merge "$R" L1 null "$(item L1 dev1 develop),$(item L1 dev2 debug)"
is "$rc $(jget "$T_TMP/merge.json" '[i["outcome"] for i in d["items"]]')" \
    '0 ["merged","merged"]' "different files: both merged"
is "$(jget "$T_TMP/merge.json" '[i["files"] for i in d["items"]]')" \
    '[[{"status":"M","path":"b.txt"}],[{"status":"M","path":"c.txt"}]]' \
    "... each with its exact files"
is "$(git -C "$LW" show HEAD:b.txt HEAD:c.txt | tr '\n' ' ')" \
    'b B c C ' "... the loop branch has both"
is "$(git -C "$R" rev-parse HEAD) $(git -C "$R" status --porcelain)" \
    "$start " "... the user's checkout untouched"

# -- the same lines: a conflict, recorded and aborted
branch "$R" ccw/L1/dev3 ccw/L1/loop 'printf "ONE\ntwo\nthree\n" >a.txt'
branch "$R" ccw/L1/dev4 ccw/L1/loop 'printf "uno\ntwo\nthree\n" >a.txt'
before=$(git -C "$LW" rev-parse HEAD)
merge "$R" L1 null "$(item L1 dev3 develop),$(item L1 dev4 debug)"
is "$rc $(jget "$T_TMP/merge.json" '[i["outcome"] for i in d["items"]]')" \
    '0 ["merged","conflict"]' "the same lines: the second is a conflict"
is "$(jget "$T_TMP/merge.json" 'd["items"][1]["conflict"]["files"]')" \
    '["a.txt"]' "... naming the file"
like "$(jget "$T_TMP/merge.json" 'd["items"][1]["conflict"]["hunks"]' | tr '\n' ' ')" \
    '<<<<<<<.*ONE.*=======.*uno' "... with both sides' hunks"
ok $([ ! -e "$(git -C "$LW" rev-parse --git-path MERGE_HEAD)" ] &&
    [ -z "$(git -C "$LW" status --porcelain)" ]; echo $?) \
    "... the loop worktree left clean (no MERGE_HEAD, status clean)"
is "$(git -C "$LW" rev-parse HEAD~1)" "$before" \
    "... holding only the merge that worked"
is "$(git -C "$R" rev-parse HEAD) $(git -C "$R" status --porcelain)" \
    "$start " "... the user's checkout untouched"

# -- a failing check undoes its merge
branch "$R" ccw/L1/dev5 ccw/L1/loop 'git rm -q c.txt'
before=$(git -C "$LW" rev-parse HEAD)
merge "$R" L1 '"echo checking; test -f c.txt"' "$(item L1 dev5 validate)"
is "$rc $(jget "$T_TMP/merge.json" '[d["items"][0]["outcome"], d["items"][0]["check"]["rc"], d["items"][0]["check"]["tail"]]')" \
    '0 ["check_failed",1,"checking"]' "a failing check: check_failed, its output"
is "$(git -C "$LW" rev-parse HEAD):$(git -C "$LW" status --porcelain)" \
    "$before:" "... the merge undone"

# -- kill -9 in the middle of a merge (its check blocks), then a re-run
branch "$R" ccw/L1/dev6 ccw/L1/loop 'echo six >six.txt'
before=$(git -C "$LW" rev-parse HEAD)
printf '{"repo":"%s","loop_path":"%s","loop_branch":"ccw/L1/loop","check":"touch %s/in-check; exec %s --marker %s hang","items":[%s]}' \
    "$R" "$LW" "$T_TMP" "$FAKE" "$M" "$(item L1 dev6 develop)" >"$T_TMP/slow.json"
"$WRK" --git merge <"$T_TMP/slow.json" >/dev/null 2>&1 &
HP=$!
t_wait_file "$T_TMP/in-check" 10000
ok $? "kill -9: the helper is in its check"
{ kill -9 $HP; wait $HP; } 2>/dev/null
t_wait_gone "$M" 5000
ok $? "... the check died with the helper"
merge "$R" L1 '"true"' "$(item L1 dev6 develop)"
is "$rc $(jget "$T_TMP/merge.json" '[d["items"][0]["outcome"], d["items"][0]["check"]["rc"]]')" \
    '0 ["merged",0]' "... the re-run merges again and runs the check"
is "$(git -C "$LW" rev-parse HEAD~1) $(git -C "$LW" status --porcelain)" \
    "$before " "... one merge, on the head before the killed one"
merge "$R" L1 '"true"' "$(item L1 dev6 develop)"
is "$(jget "$T_TMP/merge.json" '[d["items"][0]["outcome"], d["items"][0]["files"]]')" \
    '["merged",[{"status":"A","path":"six.txt"}]]' "... a third run: merged already (idempotent)"

# -- killed with a conflicted merge in the loop worktree: recovered
branch "$R" ccw/L1/dev7 "$start" 'printf "siete\n" >a.txt'
git -C "$LW" merge -q ccw/L1/dev7 >/dev/null 2>&1
ok $([ -e "$(git -C "$LW" rev-parse --git-path MERGE_HEAD)" ]; echo $?) \
    "a merge left half done in the loop worktree"
merge "$R" L1 null "$(item L1 dev2 debug)"
is "$rc $(jget "$T_TMP/merge.json" 'd["items"][0]["outcome"]')" '0 merged' \
    "... the next merge recovers it"
ok $([ ! -e "$(git -C "$LW" rev-parse --git-path MERGE_HEAD)" ] &&
    [ -z "$(git -C "$LW" status --porcelain)" ]; echo $?) \
    "... no MERGE_HEAD, status clean"

# -- an item's path that is no worktree of ours is never removed
mkdir -p "$T_TMP/userdir" && echo mine >"$T_TMP/userdir/keep.txt"
merge "$R" L1 null "$(printf '{"agent":"dev2","role":"debug","branch":"ccw/L1/dev2","path":"%s/userdir"}' "$T_TMP")"
is "$rc $(cat "$T_TMP/userdir/keep.txt")" "0 mine" \
    "an item's path naming a directory of the user's: left alone"

# -- land: only the start branch, clean, fast-forward
landreq() {
	gw land "$T_TMP/land.json" "$(printf '{"repo":"%s","root":"%s","loop_branch":"ccw/L1/loop","start_branch":"main","start_head":"%s"}' \
	    "$R" "$R" "$start")"
}
git -C "$R" checkout -q -b other
landreq
is "$(jget "$T_TMP/land.json" 'd["landed"]')" false "land: another branch checked out: not landed"
git -C "$R" checkout -q main
echo dirty >>"$R/a.txt"
landreq
is "$(jget "$T_TMP/land.json" '[d["landed"], d["reason"]]')" \
    '[false,"the work tree has uncommitted changes"]' "... a dirty tree: not landed"
git -C "$R" checkout -q -- a.txt
landreq
is "$rc $(jget "$T_TMP/land.json" 'd["landed"]') $(git -C "$R" rev-parse HEAD)" \
    "0 true $(git -C "$LW" rev-parse HEAD)" "... clean, on main: fast-forwarded"

# -- cleanup: worktrees and branches gone
gw cleanup "$T_TMP/clean.json" "$(printf '{"repo":"%s","side":"%s/.loop/L1","loop_branch":"ccw/L1/loop","remove_branches":true}' \
    "$R" "$R")"
is "$rc $(git -C "$R" worktree list | wc -l) $(git -C "$R" branch --list 'ccw/*' | wc -l)" \
    "0 1 0" "cleanup: no worktree, no ccw/ branch left"

# -- strategy rebase: each branch rebased onto the loop's, fast-forwarded
prepare "$R" L9
branch "$R" ccw/L9/r1 ccw/L9/loop 'echo R1 >>b.txt'
branch "$R" ccw/L9/r2 ccw/L9/loop 'echo R2 >>c.txt'
branch "$R" ccw/L9/r3 ccw/L9/loop 'echo R3 >>c.txt'
gw merge "$T_TMP/merge.json" "$(printf '{"repo":"%s","loop_path":"%s/.loop/L9/wt/loop","loop_branch":"ccw/L9/loop","strategy":"rebase","check":null,"items":[%s]}' \
    "$R" "$R" "$(item L9 r1 develop),$(item L9 r2 debug),$(item L9 r3 validate)")"
is "$rc $(jget "$T_TMP/merge.json" '[i["outcome"] for i in d["items"]]')" \
    '0 ["merged","merged","conflict"]' "strategy rebase: two merged, the third a conflict"
is "$(git -C "$R/.loop/L9/wt/loop" rev-list --count --merges main..HEAD) $(git -C "$R/.loop/L9/wt/loop" rev-list --count main..HEAD) $(git -C "$R/.loop/L9/wt/loop" status --porcelain)" \
    "0 2 " "... a straight history (two commits), the loop worktree clean"

# -- a dirty tracked tree at the start
D=$T_TMP/r2
mkrepo "$D"
echo changed >>"$D/a.txt"
echo new >"$D/untracked.txt"
prepare "$D" L2
is "$rc $(jget "$T_TMP/prep.json" '[d["kind"], d["error"]]')" \
    '1 ["dirty","the work tree has uncommitted changes (1 file): commit or stash them, or pass --from-worktree to start from them"]' \
    "a dirty tree: refused with the message"
prepare "$D" L2 ',"from_worktree":true'
is "$rc $(git -C "$D/.loop/L2/wt/loop" show HEAD:a.txt | tail -n 1)" \
    "0 changed" "--from-worktree: the loop starts from the changes"
like "$(jget "$T_TMP/prep.json" 'd["warning"]')" 'untracked file is not carried' \
    "... and says untracked files are not carried"
is "$(git -C "$D" status --porcelain | tr '\n' ' ')$(git -C "$D" stash list)" \
    ' M a.txt ?? untracked.txt ' "... the user's checkout untouched"

# -- create/remove cycles leave nothing stale (the bench runs 1000)
C=$T_TMP/r3
mkrepo "$C"
for i in $(seq 1 "$CYCLES"); do
	prepare "$C" L3
	[ "$rc" = 0 ] || { sed 's/^/#   /' "$T_TMP/prep.json"*; break; }
	[ $((i % 5)) = 0 ] && rm -rf "$C/.loop/L3/wt/loop"
	gw cleanup "$T_TMP/clean.json" "$(printf '{"repo":"%s","side":"%s/.loop/L3","loop_branch":"ccw/L3/loop","remove_branches":%s}' \
	    "$C" "$C" "$([ $((i % 2)) = 0 ] && echo true || echo false)")"
	[ "$rc" = 0 ] || { sed 's/^/#   /' "$T_TMP/clean.json"*; break; }
done
is "$i $rc $(git -C "$C" worktree list | wc -l) $(git -C "$C" worktree prune -n -v | wc -l)" \
    "$CYCLES 0 1 0" "$CYCLES create/remove cycles: no stale worktree entry"

# -- the worker's own worktree (options.worktree) through `agent`
A=$T_TMP/r4
mkrepo "$A"
git -C "$A" config --unset user.name
git -C "$A" config --unset user.email
echo SECRET >"$A/.env"
base=$(git -C "$A" rev-parse HEAD)
# wtcfg KEEP [EXTRA JSON]: $T_TMP/wt.json, bash's options.worktree
wtcfg() {
	printf '{"tools":{"bash":{"options":{"worktree":{"repo":"%s","base":"%s","dir":"%s/.loop/L4/wt","branch_prefix":"ccw/L4","copy":[".env","absent"],"keep":%s%s}}}}}' \
	    "$A" "$base" "$A" "$1" "${2:-}" >"$T_TMP/wt.json"
}
wtcfg true ',"setup":"echo set >>setup.log"'
(cd "$A" && agent "$T_TMP/ag.json" develop --tool bash --config "$T_TMP/wt.json" \
    --state-dir "$A/.loop" \
    --command 'echo "$PWD" >pwd.txt; cat .env >>pwd.txt; git rm -q b.txt; git mv c.txt d.txt; echo more >>a.txt' go)
is "$?" 0 "options.worktree: the worker ran"
id=$(jget "$T_TMP/ag.json" 'd["agent_id"]')
WT=$A/.loop/L4/wt/$id
is "$(jget "$T_TMP/ag.json" '[d["cwd"], d["files_source"]]')" \
    "[\"$WT\",\"worktree\"]" "... STARTED.cwd is the worktree"
is "$(jget "$T_TMP/ag.json" 'd["files_changed"]')" \
    '["a.txt","b.txt","d.txt","pwd.txt","setup.log"]' \
    "... files_changed exact: the deletion and the rename's new name (not the copied .env)"
is "$(git -C "$A" diff --name-status -M "$base" "ccw/L4/$id" | grep -E '^(D|R)' | tr '\t\n' '  ')" \
    'D b.txt R100 c.txt d.txt ' "... committed on its branch: D and R"
is "$(git -C "$A" show "ccw/L4/$id:pwd.txt" | tr '\n' ' ')" "$WT SECRET " \
    "... PWD the worktree, .env copied in"
is "$(git -C "$A" log -1 --format='%s|%an' "ccw/L4/$id")" \
    "ccw: $id (develop)|ccw-supervisor" \
    "... the commit names agent and role (our identity: the repo has none)"
is "$(git -C "$A" status --porcelain)" '?? .env' "... the user's checkout untouched"
# a worktree whose `git worktree add` was killed halfway: made again
echo initializing >"$(git -C "$WT" rev-parse --git-path locked)"
rm "$WT/a.txt"
(cd "$A" && agent "$T_TMP/ag5.json" develop --tool bash --config "$T_TMP/wt.json" \
    --state-dir "$A/.loop" --command 'true' go)
is "$? $(git -C "$A" diff --name-status "$base" "ccw/L4/$id" -- a.txt)" \
    "0 M	a.txt" "a worktree killed while being made is made again, not adopted"
prepare "$A" L4
merge "$A" L4 null "$(item L4 "$id" develop)"
is "$rc $(jget "$T_TMP/merge.json" '[f for f in d["items"][0]["files"] if f["status"] in "DR"]')" \
    '0 [{"status":"D","path":"b.txt"},{"status":"R","from":"c.txt","path":"d.txt"}]' \
    "... its merge lists the deletion (D) and the rename (R, from)"

wtcfg false ',"merge_from":"ccw/L4/'"$id"'"'
sed -i 's|/L4/wt"|/L4b/wt"|; s|"ccw/L4"|"ccw/L4b"|' "$T_TMP/wt.json"
(cd "$A" && agent "$T_TMP/ag2.json" debug --tool bash --config "$T_TMP/wt.json" \
    --state-dir "$A/.loop" --command 'test -f d.txt && echo resolved >r.txt' go)
id2=$(jget "$T_TMP/ag2.json" 'd["agent_id"]')
is "$(jget "$T_TMP/ag2.json" '[d["agent_status"], d["files_changed"]]')" \
    '["completed",["a.txt","b.txt","d.txt","pwd.txt","r.txt","setup.log"]]' \
    "keep false, merge_from: started from the merged branch"
ok $([ ! -e "$A/.loop/L4b/wt/$id2" ] &&
    git -C "$A" rev-parse -q --verify "ccw/L4b/$id2" >/dev/null; echo $?) \
    "... the directory removed, the branch kept"

# -- writers that make their worktrees at the same moment (a parallel
# step): git reads every worktree's admin directory, half made by another
# `worktree add`, unless they take turns (about 1 in 8 failed before)
for r in 1 2; do
	pids=
	for k in 1 2 3 4; do
		printf '{"tools":{"bash":{"options":{"worktree":{"repo":"%s","base":"%s","dir":"%s/.loop/P%s-%s/wt","branch_prefix":"ccw/P%s-%s","keep":false}}}}}' \
		    "$A" "$base" "$A" "$r" "$k" "$r" "$k" >"$T_TMP/par-$k.json"
		(cd "$A" && agent "$T_TMP/par-$r-$k.json" develop --tool bash \
		    --config "$T_TMP/par-$k.json" --state-dir "$T_TMP/par-state-$k" \
		    --command "echo $k >k$k.txt" go) &
		pids="$pids $!"
	done
	wait $pids
done
n=0
for f in "$T_TMP"/par-[12]-*.json; do
	[ "$(jget "$f" 'd["agent_status"]')" = completed ] && n=$((n + 1))
done
is "$n" 8 "8 writers making worktrees at once: all completed"

wtcfg true ',"copy":["../etc/passwd"]'
sed -i 's/"copy":\[".env","absent"\],//' "$T_TMP/wt.json"
(cd "$A" && agent "$T_TMP/ag3.json" develop --tool bash --config "$T_TMP/wt.json" \
    --state-dir "$A/.loop" --command 'echo ran >ran.txt' go)
is "$?" 1 "a copy entry with '..': the run fails"
like "$(jget "$T_TMP/ag3.json" 'd["reason"]')" 'copy: "../etc/passwd" must be a relative path' \
    "... with a clear reason"
printf '{"tools":{"bash":{"options":{"worktree":{"repo":"%s","base":"%s","dir":"%s/wt","branch_prefix":"ccw/L5"}}}}}' \
    "$T_TMP/plain" "$base" "$T_TMP" >"$T_TMP/bad-wt.json"
(cd "$A" && agent "$T_TMP/ag3.json" develop --tool bash --config "$T_TMP/bad-wt.json" \
    --state-dir "$A/.loop" --command 'echo ran >ran.txt' go)
is "$? $(jget "$T_TMP/ag3.json" '[d["reason"], d["error_kind"]]')" \
    "1 [\"options.worktree: $T_TMP/plain is not a git repository\",\"tool_error\"]" \
    "a repo that is not git: a clear failure"
wtcfg true ',"setup":"echo broken; exit 3"'
(cd "$A" && agent "$T_TMP/ag4.json" develop --tool bash --config "$T_TMP/wt.json" \
    --state-dir "$A/.loop" --command 'echo ran >ran.txt' go)
is "$? $(jget "$T_TMP/ag4.json" '[d["reason"], d["error_kind"]]')" \
    '1 ["worktree setup failed: exit 3: broken","tool_error"]' \
    "a failing setup: worktree setup failed, tool_error"

# a setup that takes longer than the heartbeat's and the idle check's
# limits (a worker making its worktree answers no ping until STARTED):
# neither lost nor idle, it runs once the setup is done
wtcfg true ',"setup":"sleep 3; echo slow >slow.txt"'
sed -i 's/^{/{"launcher":{"argv":["env"],"ping_ms":250,"misses":4},/' "$T_TMP/wt.json"
(cd "$A" && agent "$T_TMP/ag6.json" develop --tool bash --config "$T_TMP/wt.json" \
    --state-dir "$A/.loop" --idle-ms 1000 --command 'cat slow.txt' go)
is "$? $(jget "$T_TMP/ag6.json" '[d["agent_status"], d.get("error_kind"), "slow.txt" in d["files_changed"]]')" \
    '0 ["completed",null,true]' \
    "a 3 s setup beyond a 1 s heartbeat limit and a 1 s idle limit: not lost, not idle"

t_done
