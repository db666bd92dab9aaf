# cases.sh: the cases every agent CLI must pass, sourced by lib.sh.  Each
# e2e_case_* runs the real CLI through ccw-supervisor against the stand-in
# and reports TAP points; what a case expects is issue 9's behaviour.

E2E_TASK="Fix the subtraction in calc.sh; the suite is tests/run.sh."
E2E_DEV_MSG="You are the develop worker. $E2E_TASK"

# e2e_result_text FILE: the result's own words (reason, failure_reason,
# summary, detailed_output), not the raw log tail.
e2e_result_text() {
	jget "$1" '" | ".join(str(d.get(k)) for k in ("reason", "failure_reason", "summary", "detailed_output"))'
}

# e2e_case_agent: `agent --tool CLI` edits the project for real.
e2e_case_agent() {
	local p=$T_TMP/agent-p o=$T_TMP/agent.json
	e2e_project "$p"
	mock_start
	e2e_agent "$o" develop -C "$p" --timeout-ms 240000 "$E2E_DEV_MSG"
	is "$?" 0 "agent: exits 0"
	echo "# agent: ${E2E_MS} ms"
	e2e_fixed "$p"
	ok $? "agent: calc.sh really changed and its tests pass"
	is "$(jget "$o" '[d.get("agent_status"), d.get("status")]')" \
	    '["completed","success"]' "agent: the result says success"
	like "$(jget "$o" 'd.get("files_changed")')" 'calc\.sh' \
	    "agent: files_changed names calc.sh"
	ok $(( $(mock_count 'r["role"] == "develop" and r["decision"]["kind"] == "tool"') < 1 )) \
	    "agent: the CLI ran the stand-in's shell tool call"
	[ "$(jget "$o" 'd.get("status")')" = success ] ||
	    sed 's/^/#   /' "$o" "$o.err" | tail -n 20
}

# e2e_case_run MODE: `run -m MODE --tool CLI` to completed, bug fixed.
e2e_case_run() {
	local m=$1 p=$T_TMP/run-$1 o=$T_TMP/run-$1.json t0 rc st
	e2e_project "$p"
	mock_start
	t0=$(t_now_ms)
	# parallel: each writer in its own worktree, merged, then landed
	timeout -k 5 600 $WRAP "$SUP" run -m "$m" -n 3 -C "$p" --tool "$E2E_CLI" \
	    --timeout-ms 240000 $( [ "$m" = parallel ] && echo --land ) \
	    --json "$E2E_TASK" >"$o" 2>"$o.err"
	rc=$?
	echo "# run -m $m: $(( $(t_now_ms) - t0 )) ms"
	is "$rc" 0 "run -m $m: exits 0"
	st=$(ls "$p"/.loop/loop-v2-*.json 2>/dev/null | head -n 1)
	is "$( [ -n "$st" ] && jget "$st" 'd.get("status")')" completed \
	    "run -m $m: the loop is completed"
	e2e_fixed "$p"
	ok $? "run -m $m: the bug is fixed and the suite passes"
	is "$(mock_count 'r["role"] == "validate" and r["decision"]["kind"] == "text"' | awk '{print ($1 > 0)}')" 1 \
	    "run -m $m: validate answered through the CLI"
	[ "$m" = parallel ] && e2e_isolated "$p" "$o" "$st"
	[ "$rc" -eq 0 ] || { sed 's/^/#   /' "$o" | tail -n 5; tail -n 5 "$o.err" | sed 's/^/#   /'; }
}

# e2e_isolated DIR OUT STATE: a parallel run in a git project (issue 27):
# develop's edit reached the loop branch from its own worktree through
# the merge queue; validate, in a clean tree of the base, never saw it
# before that merge (its first run fails, the next one passes); a later
# develop that changed nothing reports no files whatever it claims; and
# --land left the fix in the checkout with no worktree or branch behind.
e2e_isolated() {
	local p=$1 o=$2 st=$3
	is "$(python3 -c '
import json, sys
ev = []
for l in open(sys.argv[1]):
    try:
        ev.append(json.loads(l))
    except ValueError:
        pass
m = [e for e in ev if e.get("event") == "merge_result" and e["role"] == "develop"]
v = [e["status"] for e in ev if e.get("event") == "worker_result" and e["role"] == "validate"]
print(m[0]["outcome"], m[0]["files"], m[0]["branch"].startswith("ccw/loop-v2-"), v[0], v[-1])' "$o")" \
	    "merged [{'status': 'M', 'path': 'calc.sh'}] True failed success" \
	    "run -m parallel: develop's branch merged with its exact files; validate saw the base, then the merge"
	is "$(jget "$st" '[d["skill_state"]["parallel_results"]["develop"][k] for k in ("files_changed", "files_claimed")]')" \
	    '[[],["calc.sh"]]' \
	    "run -m parallel: files_changed is the worktree's diff, the claim kept apart"
	is "$(git -C "$p" worktree list | wc -l) $(git -C "$p" branch --list 'ccw/*' | wc -l) $(jget "$st" 'd["skill_state"]["worktree"]["summary"]')" \
	    "1 0 landed on $(git -C "$p" symbolic-ref --short HEAD)" \
	    "run -m parallel: landed; no worktree or ccw branch left"
}

# e2e_case_tune: `tune --tool CLI --focus context` on a skill with a
# phase that inlines whole files: the CLI runs the stand-in's grep, the
# context finding becomes ISS-001, the fix role's fix is applied, context
# runs again through the CLI and no longer finds it: gate pass.
e2e_case_tune() {
	local p=$T_TMP/tune-p o=$T_TMP/tune.json rc st t0
	e2e_project "$p"
	mkdir -p "$p/skill/phases"
	printf -- '---\nname: mini\n---\n# Mini\n' >"$p/skill/SKILL.md"
	printf 'paste $(cat src/*) into every prompt\n' >"$p/skill/phases/01-a.md"
	mock_start
	t0=$(t_now_ms)
	timeout -k 5 600 $WRAP "$SUP" tune -C "$p" "$p/skill" "prompts are huge" \
	    --focus context --tool "$E2E_CLI" --timeout-ms 240000 --json \
	    >"$o" 2>"$o.err"
	rc=$?
	echo "# tune: $(( $(t_now_ms) - t0 )) ms"
	is "$rc" 0 "tune: exits 0"
	st=$(ls "$p"/skill/.tune/*/state.json 2>/dev/null | head -n 1)
	is "$( [ -n "$st" ] && jget "$st" '[d["status"], d["quality_gate"], [a["verification_result"] for a in d["applied_fixes"]]]')" \
	    '["completed","pass",["pass"]]' "tune: the fix verified, the gate passes"
	is "$(cat "$p/skill/phases/01-a.md")" "pass the paths of src/ files" \
	    "tune: the skill really changed"
	ok $(( $(mock_count 'r["role"] == "tune-context_explosion" and r["decision"]["kind"] == "tool"') < 2 )) \
	    "tune: the CLI ran context's grep (diagnosis and verification)"
	ok $(( $(mock_count 'r["role"] == "tune-fix" and r["decision"]["kind"] == "text"') < 1 )) \
	    "tune: the fix role answered through the CLI"
	[ "$rc" -eq 0 ] || { tail -n 5 "$o" | sed 's/^/#   /'; tail -n 15 "$o.err" | sed 's/^/#   /'; }
}

# e2e_ctl_start MARK ROOT: a control session (regress lib's ctl_start) on
# ROOT whose whole process tree carries CCW_E2E_MARK=MARK.
e2e_ctl_start() {
	CCW_E2E_MARK=$1 ctl_start "$T_TMP/ctl-$1" -C "$2"
}

# e2e_case_followup: a second message through control after the agent's
# turn ended is answered by resuming the CLI's session.
e2e_case_followup() {
	local p=$T_TMP/fu-p r a i mark=fu-$$
	e2e_project "$p"
	mock_start
	e2e_ctl_start "$mark" "$p"
	ctl_send "{\"id\":1,\"verb\":\"spawn\",\"role\":\"develop\",\"tool\":\"$E2E_CLI\",\"message\":\"$E2E_DEV_MSG\"}"
	r=$(ctl_recv 1 30000)
	a=$(jget - 'd.get("agent_id")' <<<"$r")
	ctl_send "{\"id\":2,\"verb\":\"wait\",\"targets\":[\"$a\"],\"timeout_ms\":240000,\"mode\":\"all\"}"
	r=$(ctl_recv 2 250000)
	is "$(jget - 'd["status"]["'"$a"'"]' <<<"$r")" completed \
	    "follow-up: the first turn completed"
	ctl_send "{\"id\":3,\"verb\":\"send_input\",\"target\":\"$a\",\"message\":\"Thanks. One more thing.\\nMOCK-ANSWER: Follow-up done.\\\\n\\\\nWORKER_RESULT:\\\\n- action: develop\\\\n- status: success\\\\n- summary: follow-up answered\\\\n- files_changed: []\\\\n- next_suggestion: validate\\\\n- loop_back_to: null\\\\nDETAILED_OUTPUT:\\\\nnothing more\"}"
	r=$(ctl_recv 3 30000)
	is "$(jget - 'd.get("ok")' <<<"$r")" true \
	    "follow-up: send_input after the turn ended is accepted"
	[ "$(jget - 'd.get("ok")' <<<"$r")" = true ] || echo "#   $r"
	[ "$(jget - 'd.get("ok")' <<<"$r")" = true ] && for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
		ctl_send "{\"id\":$((10 + i)),\"verb\":\"wait\",\"targets\":[\"$a\"],\"timeout_ms\":20000,\"mode\":\"all\"}"
		ctl_recv $((10 + i)) 30000 >/dev/null
		ctl_send "{\"id\":$((30 + i)),\"verb\":\"result\",\"target\":\"$a\"}"
		r=$(ctl_recv $((30 + i)) 30000)
		case $r in *"follow-up answered"*) break ;; esac
	done
	like "$(jget - 'd["result"].get("summary")' <<<"$r")" "follow-up answered" \
	    "follow-up: the result is the second turn's answer"
	# gemini may ask a side question on the same conversation (next
	# speaker): at least one request, each carrying the first prompt.
	ok $(( $(mock_count 'r["role"] == "develop" and "Follow-up done" in str(r["decision"])') < 1 )) \
	    "follow-up: the CLI resumed its session (the stand-in saw the first prompt)"
	ctl_stop 30000
	e2e_kill_marked "$mark"
}

# e2e_case_close: close while the CLI waits on a request the stand-in
# never answers; nothing of the tool's tree may survive.
e2e_case_close() {
	local p=$T_TMP/close-p r a mark=close-$$ left n t0
	e2e_project "$p"
	mock_start --fault stall
	e2e_ctl_start "$mark" "$p"
	ctl_send "{\"id\":1,\"verb\":\"spawn\",\"role\":\"develop\",\"tool\":\"$E2E_CLI\",\"message\":\"$E2E_DEV_MSG\"}"
	r=$(ctl_recv 1 30000)
	a=$(jget - 'd.get("agent_id")' <<<"$r")
	mock_wait 'r["decision"] == "stall"' 120000
	ok $? "close: the CLI's request reached the stand-in and stalls"
	n=$(e2e_tree_marked "$mark" | grep -vx "$CTL_PID" | wc -l)
	ok $(( n < 2 )) "close: worker and CLI are running ($n processes)"
	t0=$(t_now_ms)
	ctl_send "{\"id\":2,\"verb\":\"close\",\"target\":\"$a\",\"grace_ms\":1000}"
	r=$(ctl_recv 2 $((20000 + SLACK)))
	is "$(jget - '[d.get("ok"), d.get("previous_status")]' <<<"$r")" \
	    '[true,"running"]' "close: answered, the agent was running"
	echo "# close: $(( $(t_now_ms) - t0 )) ms"
	left=
	end=$(( $(t_now_ms) + 5000 + SLACK ))
	while :; do
		left=$(e2e_tree_marked "$mark" | grep -vx "$CTL_PID")
		[ -z "$left" ] && break
		[ "$(t_now_ms)" -ge "$end" ] && break
		sleep 0.1
	done
	is "$left" "" "close: no process of the tool's tree is left"
	for n in $left; do
		echo "#   survivor $n: $(tr '\0' ' ' <"/proc/$n/cmdline" 2>/dev/null | head -c 200)"
	done
	ctl_stop 30000
	e2e_kill_marked "$mark"
}

# e2e_case_fatal FAULT REGEX: a rejected key (http401) or a missing model
# (badmodel) fails fast, well before the deadline, with the CLI's message.
# The deadline is 120 s and "fast" is under half of it: opencode alone
# takes 11-16 s to give up on a quiet machine and 45 s on a loaded one; a
# CLI that retried the error would run into the deadline.
e2e_case_fatal() {
	local f=$1 p=$T_TMP/$1-p o=$T_TMP/$1.json
	e2e_project "$p"
	mock_start --fault "$f"
	e2e_agent "$o" develop -C "$p" --timeout-ms 120000 --nudge-ms 5000 \
	    --grace-ms 2000 "$E2E_DEV_MSG"
	ok $(( $? == 0 )) "$f: the agent fails"
	echo "# $f: ${E2E_MS} ms"
	ok $(( E2E_MS > 60000 )) "$f: fails fast (${E2E_MS} ms, deadline 120 s)"
	is "$(jget "$o" 'd.get("status")')" failed "$f: status failed"
	like "$(e2e_result_text "$o")" "$2" "$f: the result carries the CLI's message"
}

# e2e_case_retry FAULT: two HTTP 500 (or 429 with retry-after) answers,
# then success: the CLI retries, and the retries show as PROGRESS.
e2e_case_retry() {
	local f=$1 p=$T_TMP/$1-p o=$T_TMP/$1.json
	e2e_project "$p"
	mock_start --fault "$f" --fault-count 2
	e2e_agent "$o" develop -C "$p" --timeout-ms 240000 "$E2E_DEV_MSG"
	is "$?" 0 "$f: the agent succeeds after the retries"
	echo "# $f: ${E2E_MS} ms"
	e2e_fixed "$p"
	ok $? "$f: and the bug is fixed"
	ok $(( $(mock_count "r['decision'] == '$f'") < 2 )) "$f: the stand-in failed two requests"
	# Only what a CLI prints can be shown: qwen's and opencode's SDKs
	# retry without a word, and so does codex on a 500 (tests/e2e/README.md).
	case "$E2E_CLI:$f" in
	qwen:* | opencode:* | codex:http500)
		echo "ok $((T_N += 1)) - $f: the retries show as progress # SKIP $E2E_CLI prints nothing while it retries"
		return ;;
	esac
	grep -Eiq 'agent-[0-9]+: [a-z_.]+: .*(retry|retrying|reconnect|429|500|rate.?limit|overloaded)' "$o.err"
	ok $? "$f: the retries show as progress"
}

# e2e_few_retries: cut the CLI's own retries to one or two (its own
# setting: tests/streams/README.md), so that it gives up within seconds.
e2e_few_retries() {
	case $E2E_CLI in
	claude) export CLAUDE_CODE_MAX_RETRIES=1 ;;
	codex)
		sed -i 's/^request_max_retries = .*/request_max_retries = 1/; s/^stream_max_retries = .*/stream_max_retries = 1/' \
		    "$CODEX_HOME/config.toml" ;;
	gemini)
		python3 -c 'import json, sys; p = sys.argv[1]; s = json.load(open(p)); s["general"]["maxAttempts"] = 2; json.dump(s, open(p, "w"))' \
		    "$HOME/.gemini/settings.json" ;;
	esac
}

# e2e_case_ratelimit: every request gets HTTP 429 with Retry-After: 7.
# With the CLI's own retries cut to one, the agent fails within seconds
# and the report says rate_limited, with the stand-in's 7 s where the CLI
# prints it (claude's retry_delay_ms, gemini's "Suggested retry after";
# codex prints none: null).  tests/streams/README.md has the streams.
# Run by default for claude and codex (10 s each); gemini's took 102 s
# through ccw-supervisor (its model router), so only with E2E_CASES.
e2e_case_ratelimit() {
	local p=$T_TMP/rl-p o=$T_TMP/ratelimit.json want=7000
	e2e_project "$p"
	mock_start --fault http429 --retry-after 7
	e2e_few_retries
	case $E2E_CLI in
	claude | gemini) ;;
	*)	want=null ;;
	esac
	e2e_agent "$o" develop -C "$p" --timeout-ms 120000 --nudge-ms 5000 \
	    --grace-ms 2000 "$E2E_DEV_MSG"
	ok $(( $? == 0 )) "ratelimit: the agent reports"
	unset CLAUDE_CODE_MAX_RETRIES
	echo "# ratelimit: ${E2E_MS} ms"
	is "$(jget "$o" 'd.get("status")')" failed "ratelimit: status failed"
	is "$(jget "$o" 'd.get("error_kind")')" rate_limited "ratelimit: error_kind rate_limited"
	is "$(jget "$o" 'd.get("retry_after_ms")')" "$want" "ratelimit: retry_after_ms $want"
}

# e2e_case_gaveup NAME FAULT KIND REGEX: every request gets FAULT (an
# overload, HTTP 529 or 503; a server error, HTTP 500); the CLI retries,
# gives up, and the turn ends at once with error_kind KIND and the CLI's
# words (REGEX) as the reason, not at the deadline: that is an hour here,
# so a run that waited for it would be killed by e2e_agent's 300 s and
# would say "timeout" (issue 25).  Never a timed assertion.
e2e_case_gaveup() {
	local n=$1 p=$T_TMP/$1-p o=$T_TMP/$1.json
	e2e_project "$p"
	mock_start --fault "$2"
	e2e_few_retries
	e2e_agent "$o" develop -C "$p" --timeout-ms 3600000 "$E2E_DEV_MSG"
	ok $(( $? == 0 )) "$n: the agent fails"
	unset CLAUDE_CODE_MAX_RETRIES
	echo "# $n: ${E2E_MS} ms"
	is "$(jget "$o" '[d.get("status"), d.get("error_kind")]')" \
	    "[\"failed\",\"$3\"]" "$n: status failed, error_kind $3 (not timeout)"
	like "$(jget "$o" 'd.get("reason")')" "$4" \
	    "$n: the reason is the CLI's own words"
	ok $(( $(mock_count "r['decision'] == '$2'") < 2 )) \
	    "$n: the CLI retried before it gave up"
}

# e2e_case_pwd: started from another directory with -C, the CLI works in
# the -C directory (PWD says so), not in the caller's.
e2e_case_pwd() {
	local p=$T_TMP/pwd-p d=$T_TMP/pwd-decoy o=$T_TMP/pwd.json
	e2e_project "$p"
	e2e_project "$d"
	mock_start
	(cd "$d" && e2e_agent "$o" develop -C "$p" --timeout-ms 240000 "$E2E_DEV_MSG")
	e2e_fixed "$p"
	ok $? "pwd: the -C project was fixed"
	grep -q "expr='b - a'" "$d/calc.sh"
	ok $? "pwd: the caller's directory was not touched"
}

# e2e_tree_sum DIR: every entry of DIR but .git and .loop (the
# supervisor's own state and logs), a file with the hash of its content:
# what a change to the project changes.
e2e_tree_sum() {
	(cd "$1" && find . \( -path ./.git -o -path ./.loop \) -prune -o \
	    -type f -exec sha256sum {} + -o -print) | LC_ALL=C sort
}

# e2e_case_readonly: the stand-in asks the CLI to write with its own
# file-writing tool (a new file) and through its shell tool (append to
# calc.sh, create a file).  In init, a read-only role, the project must
# stay as it was; in develop, a writing role, the same requests must
# change it, which proves the CLI carries them out when it may.  Issue 23.
# The answer claims never-written.sh: files_changed is what the worker
# observed, the claim is files_claimed (issue 25).
e2e_case_readonly() {
	local role p o before msg want d
	for role in init develop; do
		p=$T_TMP/ro-$role
		o=$T_TMP/ro-$role.json
		e2e_project "$p"
		mock_start
		msg="You are the $role worker. Change the project as follows.
MOCK-WRITE: $p/ro-write.txt :: written by the write tool
MOCK-RUN: echo ro-shell >> calc.sh
MOCK-RUN: touch ro-shell.txt
MOCK-ANSWER: Tried to write.\n\nWORKER_RESULT:\n- action: $role\n- status: success\n- summary: tried to write\n- files_changed: [\"never-written.sh\"]\n- next_suggestion: null\n- loop_back_to: null\nDETAILED_OUTPUT:\n{output}"
		before=$(e2e_tree_sum "$p" | sha256sum)
		e2e_agent "$o" "$role" -C "$p" --timeout-ms 240000 "$msg"
		is "$?" 0 "readonly: $role: exits 0"
		echo "# readonly $role: ${E2E_MS} ms"
		want=workspace-write
		[ "$role" = init ] && want=read-only
		is "$(jget "$o" 'd.get("permission")')" "$want" \
		    "readonly: $role runs $want"
		d='r["role"] == "'"$role"'" and isinstance(r["decision"], dict) and r["decision"]["kind"]'
		ok $(( $(mock_count "$d == 'write'") < 1 ||
		    $(mock_count "$d == 'tool'") < 2 )) \
		    "readonly: $role: the stand-in asked for the write tool and two shell writes"
		ok $(( $(mock_count "$d == 'text' and 'Tried to write' in r['decision']['text']") < 1 )) \
		    "readonly: $role: the CLI answered all three calls"
		is "$(jget "$o" '[d.get("files_claimed"), "never-written.sh" in d.get("files_changed")]')" \
		    '[["never-written.sh"],false]' \
		    "readonly: $role: the claim is files_claimed, not files_changed"
		if [ "$role" = init ]; then
			is "$(e2e_tree_sum "$p" | sha256sum)" "$before" \
			    "readonly: init: the project is unchanged"
			[ "$(e2e_tree_sum "$p" | sha256sum)" = "$before" ] ||
			    (cd "$p" && git status --porcelain --untracked-files=all |
			    sed 's/^/#   /')
			continue
		fi
		is "$(cat "$p/ro-write.txt" 2>/dev/null)" "written by the write tool" \
		    "readonly: develop: the write tool wrote its file"
		is "$(tail -n 1 "$p/calc.sh")" ro-shell \
		    "readonly: develop: the shell appended to calc.sh"
		[ -f "$p/ro-shell.txt" ]
		ok $? "readonly: develop: the shell created a file"
		is "$(jget "$o" '[f in d.get("files_changed") for f in ("calc.sh", "ro-shell.txt", "ro-write.txt")] + [d.get("files_source")]')" \
		    '[true,true,true,"git"]' \
		    "readonly: develop: files_changed is what git saw change"
	done
}

# e2e_cases_all: the cases, in the order of issue 9's list.  Every CLI
# runs what depends on the CLI itself: a turn, -C, a follow-up turn,
# close, a fatal API error, a read-only role that tries to write (issue
# 23; two turns).  The cases whose CLI side repeats one already
# run (a parallel loop is the auto loop's roles at once; a bad model is
# another fatal error; the retries of qwen and opencode print nothing we
# could check) run for the CLIs quick enough to afford them: claude,
# codex and gemini (retries only: gemini prints them).  The auto loop
# (five turns, each role with its permissions) runs for claude, codex
# and gemini: qwen's took 94 s and opencode's 130 s on a loaded CI
# machine, their roles' argv is checked by test-adapters, and the turn
# itself by "agent".  That keeps the suite's wall time within CI's
# budget: opencode's turn alone takes 15-30 s.  E2E_CASES=all
# runs every case for every CLI; E2E_CASES="agent http401" (names,
# space-separated) a subset; E2E_CASES=none none (CI's valgrind run).
e2e_cases_all() {
	local c cases=${E2E_CASES:-}
	if [ "$cases" = none ]; then
		t_skip "E2E_CASES=none"
		return
	fi
	if [ "$cases" = all ] || { [ -z "$cases" ] &&
	    case $E2E_CLI in claude | codex) true ;; *) false ;; esac; }; then
		cases="agent pwd run-auto run-parallel followup close http401 badmodel http500 http429 ratelimit overload servererror readonly"
		[ "$E2E_CLI" = claude ] && cases="$cases tune"
	elif [ -z "$cases" ] && [ "$E2E_CLI" = gemini ]; then
		cases="agent pwd run-auto followup close http401 http500 http429 readonly"
	elif [ -z "$cases" ]; then
		cases="agent pwd followup close http401 readonly"
	fi
	for c in $cases; do
		case $c in
		run-*) e2e_case_run "${c#run-}" ;;
		http500 | http429) e2e_case_retry "$c" ;;
		# codex says "high demand" for a 500 (tests/streams/codex-500.jsonl)
		overload) e2e_case_gaveup "$c" http529 overloaded \
		    '529|[Oo]verloaded' ;;
		servererror) if [ "$E2E_CLI" = codex ]; then
			e2e_case_gaveup "$c" http500 overloaded 'high demand'
		    else
			e2e_case_gaveup "$c" http500 server_error \
			    '500|[Ii]nternal|server error'
		    fi ;;
		http401) e2e_case_fatal "$c" \
		    '401|[Ii]nvalid API key|[Uu]nauthori[sz]ed|[Aa]uthentication' ;;
		badmodel) e2e_case_fatal "$c" \
		    '404|not exist|[Nn]ot found' ;;
		*) "e2e_case_$c" ;;
		esac
	done
}
