#!/bin/bash
# questions-front.sh: the queue of questions through every front end but
# ACP (acp.sh) and the terminal.  develop (bash) asks CLARIFICATION_NEEDED
# until its prompt carries an answer (ANSWERED-...), with
# question_timeout_ms large so that the question waits for a person:
# - serve's HTTP: GET /api/questions lists it (?loop, ?status), no token
#   401, a foreign Origin 403, a garbage body 400, an unknown id 404, the
#   answer 200 with the record and the loop completes, again 409;
# - serve's socket (control --connect): list_questions, answer_question;
# - MCP (`mcp` on stdio): the tools list_questions and answer_question;
# - the CLI: `answer LOOP QID TEXT` to a loop `run` drives in another
#   process (exit 0), and its refusals (1, 2);
# - serve killed -9 while a question is open: the next serve lists it
#   and the answer lets the loop complete.
# The history of each says who answered, through what (via).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"
t_watchdog 150
t_valgrind_worker
t_marker M qfront
t_slack

OK="exec '$FAKE' --marker $M result success"
R=$T_TMP/proj
RT=$(( $(t_ms 10000) / 1000 ))
# develop: its prompt (stdin, kept open: no EOF) read line by line, the
# first awaited, the rest in the pipe already (one write); an answer in it
# ends the step, else the question
DEV="t=$RT; while IFS= read -r -t \$t line; do t=0.5; case \$line in \
*ANSWERED-*) $OK dev;; esac; done; exec '$FAKE' --marker $M clarify"
t_run_config "$R" "$OK init" "$DEV" "$OK dbg" "$OK 'all good'" "$OK done" \
    '{"grace_ms": 500, "question_timeout_ms": 600000}'

# qwait LIST_CMD MS: run LIST_CMD (prints a JSON array of records) until
# it lists an open question; its record in $Q, its id in $QID
qwait() {
	local end
	end=$(t_until "$2")
	while :; do
		Q=$(eval "$1" | jget - '[q for q in d if q["status"] == "open"][0]' \
		    2>/dev/null)
		case "$Q" in "{"*) QID=$(jget - 'd["id"]' <<<"$Q"); return 0 ;; esac
		[ "$(t_now_ms)" -ge "$end" ] && { QID=; return 1; }
		sleep 0.05
	done
}

# raw METHOD PATH BODY HEADER=VALUE...: one request with these headers
# (and the token); prints the status
raw() {
	python3 - "$SRV_PORT" "$SRV_TOKEN" "$@" <<'PYEOF'
import http.client, sys
port, tok, method, path, body = sys.argv[1:6]
hdr = {"Authorization": "Bearer " + tok, "Content-Type": "application/json"}
for h in sys.argv[6:]:
    k, v = h.split("=", 1)
    hdr[k] = v
c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=30)
c.request(method, path, body=body, headers=hdr)
print(c.getresponse().status)
PYEOF
}

# loop_new TITLE: a loop created and started over HTTP: its id in $LID,
# the start's reply in $RES
loop_new() {
	req POST /api/loops/v2 "{\"title\": \"$1\"}"
	LID=$(jr 'd["body"]["data"]["loop_id"]')
	req POST "/api/loops/v2/$LID/start"
}

# --- serve's HTTP
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens"
SRV=$SRV_PID
req GET /api/questions
is "$(jr '[d["status"], d["body"]["data"]]')" '[200,[]]' "GET /api/questions: none yet"
loop_new "Ask me"
ID=$LID
is "$(jr 'd["status"]')" 200 "a loop started"
qwait 'req GET /api/questions; jr "d[\"body\"][\"data\"]"' 30000
ok $? "GET /api/questions lists develop's question"
is "$(jget - '[d["loop_id"], d["role"], d["question"], d["options"], d["recommended"], d["status"]]' <<<"$Q")" \
    "[\"$ID\",\"develop\",\"Which database?\",[\"sqlite\",\"postgres\"],\"sqlite\",\"open\"]" \
    "the record: loop, role, question, options, recommended, open"
like "$QID" '^q-[0-9a-f]{12}$' "its id is q- and 12 hex digits"
req GET "/api/questions?loop=other-loop"
is "$(jr 'd["body"]["data"]')" '[]' "?loop= another loop: none"
req GET "/api/questions?loop=$ID&status=open"
is "$(jr '[q["id"] for q in d["body"]["data"]]')" "[\"$QID\"]" "?loop=ID&status=open: it"
req GET "/api/questions?status=maybe"
is "$(jr 'd["status"]')" 400 "?status= neither open nor all: 400"
noauth GET /api/questions
is "$(jr 'd["status"]')" 401 "GET without the token: 401"
noauth POST "/api/questions/$QID/answer" '{"answer": "x"}'
is "$(jr 'd["status"]')" 401 "POST without the token: 401"
is "$(raw POST "/api/questions/$QID/answer" '{"answer": "x"}' \
    Origin=http://evil.example)" 403 "POST with a foreign Origin: 403"
is "$(raw POST "/api/questions/$QID/answer" '{"answer": "x"}' \
    Host=evil.example)" 421 "POST with a foreign Host: 421"
req POST "/api/questions/$QID/answer" 'not json'
is "$(jr 'd["status"]')" 400 "a garbage body: 400"
req POST "/api/questions/$QID/answer" '{"answer": 3}'
is "$(jr 'd["status"]')" 400 "an answer that is no string: 400"
req POST "/api/questions/$QID/answer" '{"answer": ""}'
is "$(jr 'd["status"]')" 400 "an empty answer: 400"
req POST /api/questions/q-000000000000/answer '{"answer": "sqlite"}'
is "$(jr '[d["status"], d["body"]["success"]]')" '[404,false]' "an unknown question: 404"
req POST "/api/questions/$QID/answer" '{"answer": "postgres ANSWERED-http", "by": "alice"}'
is "$(jr '[d["status"], d["body"]["data"]["id"], d["body"]["data"]["status"], d["body"]["data"]["answered_by"], d["body"]["data"]["via"]]')" \
    "[200,\"$QID\",\"answered\",\"alice\",\"http\"]" "the answer: 200 with the record (by alice, via http)"
srv_wait_status "$ID" completed 30000
ok $? "the loop goes on and completes"
req POST "/api/questions/$QID/answer" '{"answer": "sqlite"}'
is "$(jr '[d["status"], d["body"]["success"]]')" '[409,false]' "answered again: 409"
is "$(jget "$R/.loop/$ID.json" "[[q['status'], q['answered_by'], q['via']] for q in d['skill_state']['questions'] if q['id'] == '$QID']")" \
    '[["answered","alice","http"]]' "the state keeps who answered, through what"
req GET "/api/questions?status=all&loop=$ID"
is "$(jr '[[q["id"], q["status"]] for q in d["body"]["data"]]')" "[[\"$QID\",\"answered\"]]" \
    "?status=all: the answered one too"
req GET /api/questions
is "$(jr 'd["body"]["data"]')" '[]' "no open question left"

# --- serve's socket: the verbs
cc() {
	printf '%s\n' "$@" | timeout -k 2 60 $WRAP "$SUP" control \
	    --connect "$T_TMP/srv.sock" 2>"$T_TMP/cc.err"
}
loop_new "Ask the socket"
ID2=$LID
qwait "cc '{\"verb\": \"list_questions\", \"loop_id\": \"$ID2\"}' | jget - 'd[\"questions\"]'" 30000
ok $? "socket: list_questions lists the new loop's question"
r=$(cc '{"verb": "answer_question", "question_id": "q-000000000000", "answer": "x"}')
is "$(jget - '[d["ok"], d["code"]]' <<<"$r")" '[false,"not_found"]' "socket: an unknown question is not_found"
r=$(cc "{\"verb\": \"answer_question\", \"question_id\": \"$QID\", \"answer\": \"ANSWERED-sock\", \"by\": \"bob\"}")
is "$(jget - '[d["ok"], d["question"]["via"], d["question"]["answered_by"]]' <<<"$r")" \
    '[true,"socket","bob"]' "socket: answer_question answers it (via socket)"
srv_wait_status "$ID2" completed 30000
ok $? "socket: the loop completes"
r=$(cc "{\"verb\": \"answer_question\", \"question_id\": \"$QID\", \"answer\": \"x\"}")
is "$(jget - '[d["ok"], d["code"]]' <<<"$r")" '[false,"conflict"]' "socket: answered again is a conflict"

# --- serve killed -9 with a question open; the next serve lists it
loop_new "Survive"
ID3=$LID
qwait "req GET '/api/questions?loop=$ID3'; jr 'd[\"body\"][\"data\"]'" 30000
ok $? "a third loop asks"
Q3=$QID
kill -KILL "$SRV"
t_wait_pid "$SRV" 5000
t_wait_gone "$M" 10000
ok $? "serve killed -9: its workers went with it"
srv_start "$T_TMP/srv2" -C "$R"
ok $? "serve starts again"
SRV=$SRV_PID
qwait "req GET /api/questions; jr 'd[\"body\"][\"data\"]'" 30000
is "$QID" "$Q3" "after the restart, the same question is listed"
req POST "/api/questions/$Q3/answer" '{"answer": "ANSWERED-restart"}'
is "$(jr 'd["status"]')" 200 "answered after the restart"
srv_wait_status "$ID3" completed 30000
ok $? "the loop completes"
kill -TERM "$SRV"
t_wait_pid "$SRV" 15000
is "$T_RC" 4 "serve exits 4 on SIGTERM (no leak, no error under a wrapper)"
grep -E "AddressSanitizer|runtime error|LeakSanitizer" "$T_TMP"/srv*.err
ok $(( $? == 0 )) "serve's stderr has no sanitizer report"

# --- MCP on stdio: the tools over the same verbs
CTL_CMD=mcp ctl_start "$T_TMP/m" -C "$R"
ctl_send '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
r=$(ctl_recv 1)
is "$(jget - '[[t["name"], t["inputSchema"]["properties"].get("status", {}).get("enum")] for t in d["result"]["tools"] if "question" in t["name"]]' <<<"$r")" \
    '[["list_questions",["open","all"]],["answer_question",null]]' \
    "mcp: tools/list has list_questions (status from the verb table) and answer_question"
ctl_send '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"loop_start","arguments":{"task":"Ask MCP"}}}'
ID4=$(ctl_recv 2 | jget - 'd["result"]["structuredContent"]["loop_id"]')
echo 10 >"$T_TMP/mn"
# mcp_list: list_questions of the loop (qwait runs it in a subshell: the
# request's id counts in a file)
mcp_list() {
	local MN=$(( $(cat "$T_TMP/mn") + 1 ))
	echo "$MN" >"$T_TMP/mn"
	ctl_send "{\"jsonrpc\":\"2.0\",\"id\":$MN,\"method\":\"tools/call\",\"params\":{\"name\":\"list_questions\",\"arguments\":{\"loop_id\":\"$ID4\"}}}"
	ctl_recv "$MN" | jget - 'd["result"]["structuredContent"]["questions"]'
}
qwait mcp_list 30000
ok $? "mcp: list_questions lists the loop's question"
ctl_send "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"answer_question\",\"arguments\":{\"question_id\":\"$QID\",\"answer\":\"ANSWERED-mcp\"}}}"
is "$(ctl_recv 3 | jget - '[d["result"].get("isError", False), d["result"]["structuredContent"]["question"]["via"]]')" \
    '[false,"mcp"]' "mcp: answer_question answers it (via mcp)"
end=$(t_until 30000)
until [ "$(jget "$R/.loop/$ID4.json" 'd["status"]' 2>/dev/null)" = completed ]; do
	[ "$(t_now_ms)" -ge "$end" ] && break
	sleep 0.05
done
is "$(jget "$R/.loop/$ID4.json" 'd["status"]')" completed "mcp: the loop completes"
ctl_stop
is "$T_RC" 0 "mcp: exits 0 at end of input"

# --- the CLI, to a loop `run` drives in another process
t_loop_start "$R" cli-1 "Ask the shell"
R5=$PID
qwait "jget '$R/.loop/cli-1.json' 'd[\"skill_state\"].get(\"questions\", [])' 2>/dev/null" 30000
ok $? "run: the question is in the state file"
"$SUP" answer -C "$R" cli-1 >/dev/null 2>&1
is $? 2 "answer without TEXT: exit 2"
"$SUP" answer -C "$R" 'bad/id' "$QID" x >/dev/null 2>&1
is $? 2 "answer to a bad loop id: exit 2"
"$SUP" answer -C "$R" no-such-loop "$QID" x 2>"$T_TMP/a.err"
is $? 1 "answer to no such loop: exit 1"
like "$(cat "$T_TMP/a.err")" "no loop no-such-loop" "it says so"
"$SUP" answer -C "$R" cli-1 q-000000000000 x 2>"$T_TMP/a.err"
is $? 1 "answer to no such question: exit 1"
out=$("$SUP" answer -C "$R" cli-1 "$QID" "ANSWERED-cli" --by carol)
is "$?:$out" "0:answered $QID of loop cli-1" "answer LOOP QID TEXT: exit 0"
t_wait_pid "$R5" 30000
is "$T_RC" 0 "run takes the answer and the loop completes"
is "$(jget "$R/.loop/cli-1.json" "[[q['status'], q['answered_by'], q['via']] for q in d['skill_state']['questions'] if q['id'] == '$QID']")" \
    '[["answered","carol","cli"]]' "the state says carol answered via cli"
"$SUP" answer -C "$R" cli-1 "$QID" again 2>"$T_TMP/a.err"
is $? 1 "answered again: exit 1"
like "$(cat "$T_TMP/a.err")" "not open" "it says the question is not open"

t_wait_gone "$M" 10000
ok $? "no tool left"
t_done
