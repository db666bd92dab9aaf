#!/bin/bash
# questions.sh: the queue of questions (issue 29), engine side.  A bash
# role that asks (CLARIFICATION_NEEDED) with roles.ROLE.question_timeout_ms
# set: answered through {id}.answers.jsonl (the file contract, appended
# from the shell), nobody answering under each on_question_timeout
# (recommended, fail, pause then an answer taken on resume), a driver
# killed while asking, resumed with the answer waiting, and a flood of
# the answers file with the answer at its end.
. "$(dirname "$0")/lib.sh"
t_watchdog 90
t_marker M questions

OK="exec '$FAKE' --marker $M result success"

# cfg ROOT TIMEOUT_MS POLICY: develop asks unless its prompt has an answer
# (then it says which it used); every prompt kept in ROOT.prompts.
cfg() {
	local ask="p=\$(timeout 0.5 cat); printf '%s\n' \"\$p\" >>'$1.prompts'; \
case \"\$p\" in *'CLARIFICATION ANSWERS'*'Which database? -> '*) \
a=\${p##*Which database? -> }; $OK \"used \${a%%\$'\\n'*}\";; \
*) exec '$FAKE' --marker $M clarify;; esac"
	t_run_config "$1" "$OK" "$ask" "$OK" "$OK" "$OK" \
	    "{\"question_timeout_ms\": $2, \"on_question_timeout\": \"$3\"}"
}

# open_q STATE MS: wait for an open question in the state file; print its id.
open_q() {
	local end q
	end=$(t_until "$2")
	while :; do
		q=$(jget "$1" '[x["id"] for x in d["skill_state"].get("questions", []) if x["status"] == "open"][0]' 2>/dev/null)
		case "$q" in q-*) echo "$q"; return 0 ;; esac
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# answer ROOT ID QID TEXT VIA: a front end's line, as the file contract says.
answer() {
	printf '{"question_id":"%s","answer":"%s","by":"alice","via":"%s","at":"2026-11-28T11:00:00Z"}\n' \
	    "$3" "$4" "$5" >>"$1/.loop/$2.answers.jsonl"
}

Q='[(q["status"], q["answer"], q["answered_by"], q["via"]) for q in d["skill_state"]["questions"]]'
HIST='[(e.get("question_id") is not None, e.get("via"), e.get("delivery")) for e in map(json.loads, open(sys.argv[1])) if e["event"].startswith("question_")]'
hist() {
	python3 -c "import json, sys; print(json.dumps($HIST, separators=(',', ':')))" "$1"
}

# --- (a) answered through the answers file while the loop waits
R=$T_TMP/file
cfg "$R" 60000 fail
t_loop_start "$R" file-1 --json "Store the users"
QID=$(open_q "$F" 20000)
ok $? "file: the question is open in the state"
like "$QID" '^q-[0-9a-f]{12}$' "file: its id is q- and 12 hex"
is "$(jget "$F" '[(q["role"], q["question"], q["options"], q["recommended"], q["deadline"] is not None, q["loop_id"]) for q in d["skill_state"]["questions"]]')" \
    '[["develop","Which database?",["sqlite","postgres"],"sqlite",true,"file-1"]]' \
    "file: the record (role, question, options, recommended, deadline)"
answer "$R" file-1 "$QID" postgres http
t_wait_pid "$PID" 30000
is "$T_RC" 0 "file: the loop completes"
is "$(jget "$R/.loop/file-1.workers/develop.output.json" 'd["summary"]')" \
    "used postgres" "file: develop ran again with the answer"
is "$(jget "$F" "$Q")" '[["answered","postgres","alice","http"]]' \
    "file: the state shows it answered, by, via"
$WRAP "$SUP" state -C "$R" validate file-1 >/dev/null 2>&1
ok $? "file: the state file is valid (state validate)"
is "$(hist "$R/.loop/file-1.history.jsonl")" \
    '[[true,null,null],[true,"http",null],[false,null,"fresh"]]' \
    "file: the history: asked, answered via http, re-run fresh (no session)"
is "$(python3 -c '
import json, sys
for e in map(json.loads, open(sys.argv[1])):
    if e["event"] == "question_asked":
        print(e["event"], e["loop_id"], e["question"]["id"] == sys.argv[2], e["question"]["status"])
    elif e["event"].startswith("question_"):
        print(e["event"], e["loop_id"], e["question_id"] == sys.argv[2], e["answer"], e["by"], e["via"])' "$R.out" "$QID")" \
    "question_asked file-1 True open
question_answered file-1 True postgres alice http" \
    "file: --json: question_asked with the record, question_answered with by and via"

# --- (b) nobody answers: the recommended option, via policy
R=$T_TMP/rec
cfg "$R" 300 recommended
t_loop_run "$R" rec-1 "Store the users"
is "$RC" 0 "recommended: exit 0"
is "$(jget "$R/.loop/rec-1.workers/develop.output.json" 'd["summary"]')" \
    "used sqlite" "recommended: develop ran again with the recommended option"
is "$(jget "$F" "$Q")" '[["answered","sqlite",null,"policy"]]' \
    "recommended: answered via policy"

# --- (c) nobody answers: the step and the loop fail
R=$T_TMP/fail
cfg "$R" 300 fail
t_loop_run "$R" fail-1 "Store the users"
is "$RC" 1 "fail: exit 1"
like "$(jget "$F" '[d["status"], d["failure_reason"]]')" \
    '\["failed","develop: clarification needed: nobody answered by the deadline' \
    "fail: failed, the reason says nobody answered"
is "$(jget "$F" '[q["status"] for q in d["skill_state"]["questions"]]')" \
    '["expired"]' "fail: the question expired"

# --- (d) nobody answers: the loop pauses; an answer taken on resume
R=$T_TMP/pause
cfg "$R" 300 pause
t_loop_run "$R" pause-1 "Store the users"
is "$RC" 3 "pause: exit 3 (paused)"
is "$(jget "$F" '[d["status"], [q["status"] for q in d["skill_state"]["questions"]]]')" \
    '["paused",["open"]]' "pause: paused, the question open in the state"
QID=$(open_q "$F" 1000)
answer "$R" pause-1 "$QID" postgres cli
t_loop_run "$R" pause-1
is "$RC" 0 "pause: resumed with the answer, completes"
is "$(jget "$R/.loop/pause-1.workers/develop.output.json" 'd["summary"]')" \
    "used postgres" "pause: develop went on with the answer"
is "$(jget "$F" "$Q")" '[["answered","postgres","alice","cli"]]' \
    "pause: one question, answered via cli (not asked again)"
is "$(grep -c 'TASK ASSIGNMENT' "$R.prompts")" 2 \
    "pause: two develop prompts: the asking one, the answered one"

# --- (e) the driver killed while asking; resumed with the answer waiting
R=$T_TMP/kill
cfg "$R" 60000 fail
t_loop_start "$R" kill-1 "Store the users"
QID=$(open_q "$F" 20000)
ok $? "kill: the question is open"
kill -KILL "$PID"
t_wait_pid "$PID" 5000
is "$(jget "$F" '[d["status"], [q["status"] for q in d["skill_state"]["questions"]]]')" \
    '["running",["open"]]' "kill: the question still open in the state"
answer "$R" kill-1 "$QID" postgres socket
t_loop_run "$R" kill-1
is "$RC" 0 "kill: resumed with the answer waiting, completes"
is "$(jget "$F" "$Q")" '[["answered","postgres","alice","socket"]]' \
    "kill: answered via socket"
is "$(jget "$R/.loop/kill-1.workers/develop.output.json" 'd["summary"]')" \
    "used postgres" "kill: develop went on with the answer"

# --- (f) a flood of the answers file: 3 MiB of lines that are no answer
# (text, a JSON array, a line over 64 KiB) and the answer, in one write.
# The answer is still taken (the file is read a window at a time), and
# the junk is said: a question_junk event, a warning on stderr.
R=$T_TMP/flood
cfg "$R" 60000 fail
t_loop_start "$R" flood-1 --json "Store the users"
QID=$(open_q "$F" 20000)
ok $? "flood: the question is open"
python3 - "$R/.loop/flood-1.answers.jsonl" "$QID" <<'EOF'
import json, os, sys
junk = b"".join(b"not json %d\n" % i for i in range(200000))
junk += b"[1, 2]\n" + b"x" * (70 * 1024) + b"\n"
line = json.dumps({"question_id": sys.argv[2], "answer": "postgres",
    "by": "alice", "via": "http", "at": "2026-11-28T11:00:00Z"}).encode()
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
buf = junk + line + b"\n"
while buf:
    buf = buf[os.write(fd, buf):]
os.close(fd)
EOF
t_wait_pid "$PID" 30000
is "$T_RC" 0 "flood: the loop completes"
is "$(jget "$F" "$Q")" '[["answered","postgres","alice","http"]]' \
    "flood: the answer after the flood was taken"
ok $([ "$(grep -c '"question_junk"' "$R.out")" -ge 1 ]; echo $?) \
    "flood: a question_junk event"
like "$(cat "$R.err")" "flood-1: [0-9]+ line\\(s\\) of its answers file were no answer" \
    "flood: a warning says how many lines were skipped"

t_done
