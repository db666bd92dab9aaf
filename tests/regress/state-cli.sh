#!/bin/bash
# state-cli.sh: `ccw-supervisor state` as a user drives it: create, list,
# show with derived figures, validate reporting every error, rebuild from
# side files, hostile ids refused with nothing created outside the state
# directory, a corrupt file quarantined, CCW's .workflow/.loop fallback, a
# write refused while a run drives the loop (its run lock).
. "$(dirname "$0")/lib.sh"
t_watchdog 60
R=$T_TMP/root
mkdir -p "$R"
st() { $WRAP "$SUP" state -C "$R" "$@"; }

id=$(st create "Implement auth" --description "login" --max-iterations 5)
is "$?" 0 "create exits 0"
like "$id" '^loop-v2-[0-9]{8}T[0-9]{6}-[0-9a-f]{8}$' "create prints a generated id"
ok $([ -f "$R/.loop/$id.json" ]; echo $?) "the state file is in ROOT/.loop"
is "$(jget "$R/.loop/$id.json" '[d["title"], d["status"], d["max_iterations"]]')" \
    '["Implement auth","created",5]' "the file holds title, status, max_iterations"

out=$(st list); is "$?" 0 "list exits 0"
like "$out" "^$id +created +0/5 +Implement auth$" "list shows the loop"
st list --json >"$T_TMP/list.json"
is "$(jget "$T_TMP/list.json" '[x["loop_id"] for x in d]')" "[\"$id\"]" "list --json"

out=$(st show "$id"); is "$?" 0 "show exits 0"
like "$out" "overall: +0\.0%" "show prints the derived overall progress"
st show "$id" --json >"$T_TMP/show.json"
is "$(jget "$T_TMP/show.json" 'sorted(d["derived"].keys())')" \
    '["debug_completed","develop_progress","has_pending_develop","overall_progress","validation_passed"]' \
    "show --json adds the derived fields"

out=$(st validate "$id"); is "$?" 0 "validate of a fresh loop exits 0"
like "$out" ": valid$" "and says valid"
printf '{"status":"bogus","skill_state":{"validate":{"pass_rate":140}}}\n' \
    >"$T_TMP/bad.json"
out=$(st validate "$T_TMP/bad.json"); rc=$?
is "$rc" 1 "validate of a bad file exits 1"
like "$out" "status: 'bogus' is not one of" "names the bad status"
like "$out" "pass_rate: 140 is not within 0-100" "and the bad pass rate"
ok $(( $(wc -l <<<"$out") < 10 )) "reports every error, not just the first ($(wc -l <<<"$out"))"
printf '{"trunc' >"$T_TMP/trunc.json"
err=$(st validate "$T_TMP/trunc.json" 2>&1); is "$?" 1 "validate of truncated JSON exits 1"
like "$err" "line 1" "with the position"

# hostile ids: refused, nothing created anywhere
before=$(cd "$T_TMP" && find . | sort)
for bad in '..' 'a/b' '../x' "$(printf 'a%.0s' $(seq 300))" '-rf' '.hidden'; do
	st create t --loop-id "$bad" >/dev/null 2>&1
	is "$?" 2 "create refuses the id '${bad:0:20}'"
	st show "$bad" >/dev/null 2>&1
	is "$?" 2 "show refuses the id '${bad:0:20}'"
done
after=$(cd "$T_TMP" && find . | sort)
is "$after" "$before" "hostile ids created nothing"

# a corrupt file is quarantined, not fatal
printf '{"loop_id": "x", "title": ' >"$R/.loop/broken.json"
touch -d '1 minute ago' "$R/.loop/broken.json"
err=$(st show broken 2>&1); rc=$?
is "$rc" 1 "show of a corrupt file exits 1"
ls "$R/.loop" | grep -q '^broken\.json\.corrupt-' 
ok $? "the corrupt file was moved aside as broken.json.corrupt-<time>"
ok $([ ! -e "$R/.loop/broken.json" ]; echo $?) "and no longer stands as the state"
out=$(st list); is "$?" 0 "list still works"

# rebuild after losing the state file
mkdir -p "$R/.loop/$id.workers"
printf '{"status":"success","summary":"did it","action":"develop"}\n' \
    >"$R/.loop/$id.workers/develop.output.json"
printf '{"id":"task-1","description":"a","status":"completed"}\n' \
    >"$R/.loop/$id.tasks.jsonl"
rm "$R/.loop/$id.json"
out=$(st rebuild "$id"); rc=$?
is "$rc" 0 "rebuild without a state file exits 0"
like "$out" "could not recover title" "and names the API fields it lost"
is "$(jget "$R/.loop/$id.json" 'len(d["skill_state"]["develop"]["tasks"])')" 1 \
    "the tasks came back from tasks.jsonl"
st validate "$id" >/dev/null; is "$?" 0 "the rebuilt file is valid"

# CCW's dashboard directory is used when only it exists
R2=$T_TMP/root2
mkdir -p "$R2/.workflow/.loop"
id2=$($WRAP "$SUP" state -C "$R2" create "ccw" 2>&1)
ok $([ -f "$R2/.workflow/.loop/$id2.json" ]; echo $?) \
    "with only .workflow/.loop present, the loop goes there"

# a write while a run drives the loop: refused with the run's pid, exit 1;
# a read goes on; once the run ended the write goes through
R3=$T_TMP/root3
GO=$T_TMP/go3
t_marker M statecli
OKC="exec '$FAKE' --marker $M result success"
t_run_config "$R3" "$OKC" "exec '$FAKE' --marker $M wait-file $GO result success" \
    "$OKC" "$OKC" "$OKC"
t_loop_start "$R3" held3 "Held at develop"
t_wait_file "$R3/.loop/held3.workers/agent-2.log" 20000
ok $? "a run of held3 reached develop"
err=$($WRAP "$SUP" state -C "$R3" rebuild held3 2>&1); rc=$?
is "$rc" 1 "rebuild while a run drives the loop exits 1"
like "$err" "pid $PID" "and names the run's pid"
ok $(grep -q rebuilt <<<"$err"; [ $? = 1 ]; echo $?) "nothing was rebuilt"
err=$($WRAP "$SUP" state -C "$R3" create t --loop-id held3 2>&1); rc=$?
is "$rc" 1 "create on a loop a run drives exits 1"
like "$err" "pid $PID" "naming the run's pid"
$WRAP "$SUP" state -C "$R3" show held3 >/dev/null; is "$?" 0 \
    "show (a read) needs no lock"
: >"$GO"
t_wait_pid "$PID" 30000
is "$T_RC" 0 "the run completes"
out=$($WRAP "$SUP" state -C "$R3" rebuild held3); is "$?" 0 \
    "after the run, rebuild goes through"
like "$out" "skill_state rebuilt" "and says so"

st frob x >/dev/null 2>&1; is "$?" 2 "unknown verb exits 2"
st >/dev/null 2>&1; is "$?" 2 "no verb exits 2"
t_done
