#!/bin/bash
# cli-permission.sh: a CLI's permission request becomes a question (issue
# 29), with the real claude.  develop (ask_permissions, a long
# question_timeout_ms) runs a command acceptEdits does not let through
# unasked (sh -c ...): claude asks the permission relay, the loop's
# question of kind permission appears in the queue (the list_questions
# verb of every front end), `ccw-supervisor answer` says allow and the
# command ran; a second loop says deny and it did not, the turn went on
# and the loop completed.
. "$(dirname "$0")/lib.sh"
e2e_begin claude 600

# p_case VERDICT: one loop through develop's permission question.
p_case() {
	local v=$1 p=$T_TMP/perm-$1 id=perm-$1-1 f qid end pid t0
	t0=$(t_now_ms)
	e2e_project "$p"
	mkdir -p "$p/.loop"
	python3 - "$p/.loop/config.json" "$FAKE" <<'PYEOF'
import json, sys
ok = {"command": "exec '%s' result success" % sys.argv[2]}
json.dump({"default_tool": "bash", "roles": {
    "init": ok, "debug": ok, "validate": ok, "complete": ok,
    "develop": {"tool": "claude", "ask_permissions": True,
                "question_timeout_ms": 400000,
                "on_question_timeout": "fail"}}}, open(sys.argv[1], "w"))
PYEOF
	python3 - "$T_TMP/p-script.json" <<'PYEOF'
import json, sys
json.dump({"develop": {"command": "sh -c 'echo asked > perm-made.txt'",
    "failed_if": None,
    "answer": "The shell said: {output}\n\nWORKER_RESULT:\n"
              "- action: develop\n- status: success\n- summary: ran it\n"
              "- files_changed: []\n- next_suggestion: validate\n"
              "- loop_back_to: null\n"}}, open(sys.argv[1], "w"))
PYEOF
	mock_start --script "$T_TMP/p-script.json"
	f=$p/.loop/$id.json
	timeout -k 5 400 $WRAP "$SUP" run -C "$p" --loop-id "$id" -n 3 \
	    --timeout-ms 240000 "$E2E_TASK" >"$p.out" 2>"$p.err" &
	pid=$!
	end=$(t_until 200000)
	qid=
	while [ "$(t_now_ms)" -lt "$end" ] && kill -0 "$pid" 2>/dev/null; do
		qid=$(jget "$f" '[q["id"] for q in d["skill_state"].get("questions", []) if q["status"] == "open" and q.get("kind") == "permission"][0]' 2>/dev/null)
		case "$qid" in q-*) break ;; esac
		qid=
		sleep 0.2
	done
	like "$qid" '^q-[0-9a-f]{12}$' "$v: develop's permission question is open"
	# the queue as every front end sees it: the list_questions verb
	printf '{"verb":"list_questions","loop_id":"%s","id":1}\n' "$id" |
	    timeout -k 2 30 "$SUP" control -C "$p" >"$p.list" 2>&1
	is "$(jget "$p.list" "[[q['id'] == '$qid', q['kind'], q['tool_name'], q['options'], q['recommended'], q['input']['command'], q['role']] for q in d['questions']]")" \
	    "[[true,\"permission\",\"Bash\",[\"allow\",\"deny\"],\"allow\",\"sh -c 'echo asked > perm-made.txt'\",\"develop\"]]" \
	    "$v: list_questions: kind permission, Bash, allow or deny, the command"
	[ ! -e "$p/perm-made.txt" ]
	ok $? "$v: the command waits for the answer"
	"$SUP" answer -C "$p" --by e2e "$id" "$qid" "$v" >"$p.answer" 2>&1
	is "$?" 0 "$v: ccw-supervisor answer takes it"
	t_wait_pid "$pid" 300000
	is "$T_RC" 0 "$v: the loop completes"
	is "$(jget "$f" "[[q['status'], q['answer'], q['via']] for q in d['skill_state']['questions'] if q['id'] == '$qid'][0]")" \
	    "[\"answered\",\"$v\",\"cli\"]" "$v: the question answered from the CLI"
	if [ "$v" = allow ]; then
		is "$(cat "$p/perm-made.txt" 2>/dev/null)" asked \
		    "allow: the command ran"
	else
		[ ! -e "$p/perm-made.txt" ]
		ok $? "deny: the command did not run"
		is "$(mock_count 'r["role"] == "develop" and isinstance(r["decision"], dict) and "denied by the operator" in str(r["decision"].get("text"))' |
		    awk '{print ($1 > 0)}')" 1 \
		    "deny: the model was told, and answered after it"
	fi
	echo "# $v: asked, answered, completed in $(( $(t_now_ms) - t0 )) ms"
	[ "$T_RC" -eq 0 ] || { tail -n 8 "$p.err" | sed 's/^/#   /'; }
	mock_stop
}

if [ "${E2E_CASES:-}" = none ]; then
	t_skip "E2E_CASES=none"
	e2e_end
	exit 0
fi
p_case allow
p_case deny
e2e_end
