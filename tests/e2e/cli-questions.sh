#!/bin/bash
# cli-questions.sh: the queue of questions (issue 29) with the real CLIs
# (claude, codex; E2E_QUESTION_CLIS to choose): the stand-in's develop
# asks (CLARIFICATION_NEEDED) in its first turn, the loop waits
# (roles.develop.question_timeout_ms), the answer is appended to the
# loop's answers file, and the re-run resumes the same session: the
# stand-in sees the answer as the next user turn of the conversation that
# holds the question, and develop goes on to fix the bug.
. "$(dirname "$0")/lib.sh"
e2e_begin claude 900

E2E_Q_ASK='CLARIFICATION_NEEDED:\nQ1: Which database? | Options: [sqlite, postgres] | Recommended: [sqlite]'

# q_case: one CLI through the whole loop, asked and answered.
q_case() {
	local p=$T_TMP/q-$E2E_CLI id=q-$E2E_CLI-1 f qid end rc sid t0
	t0=$(t_now_ms)
	e2e_project "$p"
	mkdir -p "$p/.loop"
	# only develop is the real CLI (two turns); the other roles say
	# success through the fake agent, which keeps the case cheap
	python3 - "$p/.loop/config.json" "$E2E_CLI" "$FAKE" <<'PYEOF'
import json, sys
ok = {"command": "exec '%s' result success" % sys.argv[3]}
json.dump({"default_tool": "bash", "roles": {
    "init": ok, "debug": ok, "validate": ok, "complete": ok,
    "develop": {"tool": sys.argv[2], "question_timeout_ms": 400000,
                "on_question_timeout": "fail"}}}, open(sys.argv[1], "w"))
PYEOF
	printf '{"develop": {"ask": "%s"}}\n' "$E2E_Q_ASK" >"$T_TMP/q-script.json"
	mock_start --script "$T_TMP/q-script.json"
	f=$p/.loop/$id.json
	timeout -k 5 600 $WRAP "$SUP" run -C "$p" --loop-id "$id" -n 3 \
	    --timeout-ms 240000 "$E2E_TASK" \
	    >"$p.out" 2>"$p.err" &
	local pid=$!
	end=$(t_until 300000)
	qid=
	while [ "$(t_now_ms)" -lt "$end" ] && kill -0 "$pid" 2>/dev/null; do
		qid=$(jget "$f" '[q["id"] for q in d["skill_state"].get("questions", []) if q["status"] == "open"][0]' 2>/dev/null)
		case "$qid" in q-*) break ;; esac
		qid=
		sleep 0.2
	done
	like "$qid" '^q-[0-9a-f]{12}$' "$E2E_CLI: develop's question is open in the queue"
	printf '{"question_id":"%s","answer":"postgres","by":"e2e","via":"cli","at":"2026-11-28T12:00:00Z"}\n' \
	    "$qid" >>"$p/.loop/$id.answers.jsonl"
	t_wait_pid "$pid" 480000
	rc=$T_RC
	is "$rc" 0 "$E2E_CLI: the loop completes"
	is "$(jget "$f" '[d["status"]] + [(q["status"], q["answer"], q["via"]) for q in d["skill_state"]["questions"]]')" \
	    '["completed",["answered","postgres","cli"]]' \
	    "$E2E_CLI: the question answered from the answers file"
	e2e_fixed "$p"
	ok $? "$E2E_CLI: develop went on and fixed the bug"
	sid=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["event"] == "question_rerun":
        print(e["delivery"], e.get("session_id"))' "$p/.loop/$id.history.jsonl")
	like "$sid" '^resume_session [^ ]+$' \
	    "$E2E_CLI: the history says the answer resumed the session"
	is "$(jget "$p/.loop/$id.workers/develop.output.json" 'd.get("session_id")')" \
	    "${sid#resume_session }" \
	    "$E2E_CLI: the answered turn reported the session that asked"
	# the stand-in: the answer is a user turn after the question's turn
	is "$(mock_count 'r["role"] == "develop" and "postgres" in (r.get("last_user") or "") and "CLARIFICATION ANSWERS" in r["last_user"] and "assistant" in r.get("turns", [])' |
	    awk '{print ($1 > 0)}')" 1 \
	    "$E2E_CLI: the stand-in saw the answer in the conversation that asked"
	is "$(mock_count 'r["role"] == "develop" and isinstance(r["decision"], dict) and "CLARIFICATION_NEEDED" in str(r["decision"].get("text"))')" 1 \
	    "$E2E_CLI: develop asked once, not again after the answer"
	echo "# $E2E_CLI: asked, answered, completed in $(( $(t_now_ms) - t0 )) ms"
	[ "$rc" -eq 0 ] || { tail -n 8 "$p.err" | sed 's/^/#   /'; }
	mock_stop
}

if [ "${E2E_CASES:-}" = none ]; then
	t_skip "E2E_CASES=none"
	e2e_end
	exit 0
fi
for c in ${E2E_QUESTION_CLIS:-claude codex}; do
	if [ ! -x "$E2E_CLI_DIR/node_modules/.bin/$c" ]; then
		t_skip "$c is not installed"
		continue
	fi
	E2E_CLI=$c
	q_case
done
e2e_end
