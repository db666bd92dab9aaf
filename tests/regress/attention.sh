#!/bin/bash
# attention.sh: issue 29's parts together, through real `run`s of bash
# loops with a command sink.  needs_input: the sink's body carries the
# loop and the question (id, text), and `ccw-supervisor answer` of that
# id lets the loop complete.  A wall budget with rules on budget_warning
# and budget_reached: 50 %, 80 % (not debounced by the 50 %) and reached,
# once each.  A loop held by its budget is not told stuck while held.
# A budget reached while the loop asks, answered while held: no crash,
# no deadlock, the raised budget lets it complete with the answer.  Held
# past the question's deadline: the deadline stands still while held.
. "$(dirname "$0")/lib.sh"
t_watchdog 90
t_valgrind_worker
t_marker M attention
t_slack

OK="exec '$FAKE' --marker $M result success"
SINK=$(cd "$srcdir" && pwd)/tests/regress/sink-append.sh

# acfg ROOT DEVELOP DEV_EXTRA NOTIFY: every role OK but develop; develop's
# extra members (JSON) and the config's notify (JSON, one sink s: the
# command sink appending to ROOT.got).
acfg() {
	mkdir -p "$1/.loop"
	python3 - "$@" "$OK" "$SINK" <<'PYEOF'
import json, sys
root, dev, extra, notify, ok, sink = sys.argv[1:7]
roles = {n: {"command": ok, "grace_ms": 500} for n in
    ["init", "develop", "debug", "validate", "complete"]}
roles["develop"] = dict(command=dev, grace_ms=500, **json.loads(extra))
notify = json.loads(notify)
notify["sinks"] = {"s": {"type": "command", "argv": [sink, root + ".got"]}}
json.dump({"default_tool": "bash", "roles": roles, "notify": notify},
    open(root + "/.loop/config.json", "w"), indent=1)
PYEOF
}

# asking ROOT: develop asks unless its prompt has the answer (then it
# says which it used).
asking() {
	echo "p=\$(timeout 0.5 cat); \
case \"\$p\" in *'CLARIFICATION ANSWERS'*'Which database? -> '*) \
a=\${p##*Which database? -> }; $OK \"used \${a%%\$'\\n'*}\";; \
*) exec '$FAKE' --marker $M clarify;; esac"
}

# asker ROOT ID TIMEOUT KINDS ARGS...: a loop whose develop asks (its
# question_timeout_ms TIMEOUT, on_question_timeout fail), told to the
# sink for KINDS (JSON words), started with ARGS; $PID, $F.
asker() {
	local root=$1 id=$2 tmo=$3 kinds=$4
	shift 4
	acfg "$root" "$(asking)" \
	    "{\"question_timeout_ms\": $tmo, \"on_question_timeout\": \"fail\"}" \
	    "{\"rules\": [{\"on\": [$kinds], \"sink\": \"s\"}]}"
	t_loop_start "$root" "$id" "$@" "Store the users"
}

# counting FILE: count into FILE every 50 ms until FILE.stop, succeed.
counting() {
	echo "i=0; while [ ! -e '$1.stop' ] && [ \$i -lt 2400 ]; do i=\$((i + 1)); echo \$i >'$1'; sleep 0.05; done; exec '$FAKE' --marker $M result success counted"
}

# kinds GOT: the sink's bodies, "kind[ percent]" each, in order.
kinds() {
	python3 - "$1" <<'PYEOF' 2>/dev/null
import json, sys
out = []
for l in open(sys.argv[1]):
    if l.strip():
        d = json.loads(l)
        p = d["event"].get("percent")
        out.append(d["kind"] + ("" if p is None else " %d" % p))
print(", ".join(out))
PYEOF
}
has() { case "$(kinds "$1")" in *"$2"*) return 0 ;; esac; return 1; }
status_is() { [ "$(jget "$1" 'd["status"]' 2>/dev/null)" = "$2" ]; }
open_q() {
	jget "$1" '[x["id"] for x in d["skill_state"].get("questions", []) if x["status"] == "open"][0]' 2>/dev/null
}
has_q() { case "$(open_q "$1")" in q-*) return 0 ;; esac; return 1; }

B=$(t_ms 3000)
STUCK=300

# The four loops run side by side (each its own root).
# --- (2) budget_warning 50, 80 and budget_reached, the default debounce
R2=$T_TMP/warn
acfg "$R2" "$(counting "$R2.count")" '{}' \
    '{"rules": [{"on": ["budget_warning", "budget_reached"], "sink": "s"}]}'
t_loop_start "$R2" warn-1 --max-time "$B" "Count"
P2=$PID F2=$F
# --- (3) held by its budget: not stuck while held (stuck_ms small)
R3=$T_TMP/held
acfg "$R3" "$(counting "$R3.count")" '{}' \
    "{\"stuck_ms\": $STUCK, \"debounce_ms\": 0, \"rules\": [{\"on\": [\"stuck\", \"budget_reached\"], \"sink\": \"s\"}]}"
t_loop_start "$R3" held-1 --max-time "$B" "Count"
P3=$PID F3=$F
# --- (4) the budget reached while the loop asks, answered while held
R4=$T_TMP/both
asker "$R4" both-1 60000 '"needs_input", "budget_reached"' \
    --max-time "$(t_ms 1500)"
P4=$PID F4=$F
# --- (5) held past the question's deadline: it stands still while held
R5=$T_TMP/late
B5=$(t_ms 4000)
asker "$R5" late-1 "$B5" '"budget_reached"' --max-time "$B5"
P5=$PID F5=$F
# --- (1) needs_input to the sink, answered by the CLI
R1=$T_TMP/ask
asker "$R1" ask-1 60000 '"needs_input"'
P1=$PID F1=$F

t_poll "$(t_ms 20000)" has "$R1.got" needs_input
ok $? "needs_input: the sink got a body"
QID=$(open_q "$F1")
like "$QID" '^q-[0-9a-f]{12}$' "needs_input: the question open in the state"
is "$(jget "$R1.got" '[d["kind"], d["loop_id"], d["event"]["question"]["id"], d["event"]["question"]["question"], d["event"]["question"]["options"], "Which database?" in d["text"]]' 2>&1)" \
    "[\"needs_input\",\"ask-1\",\"$QID\",\"Which database?\",[\"sqlite\",\"postgres\"],true]" \
    "needs_input: the body has the loop, the question's id, text, options"
$WRAP "$SUP" answer -C "$R1" ask-1 "$QID" postgres --by alice >/dev/null 2>"$R1.aerr"
is "$?" 0 "needs_input: answer LOOP QID TEXT exits 0"
t_wait_pid "$P1" "$(t_ms 30000)"
is "$T_RC" 0 "needs_input: the loop completes"
is "$(jget "$R1/.loop/ask-1.workers/develop.output.json" 'd["summary"]')" \
    "used postgres" "needs_input: develop ran again with the answer"

t_poll "$(t_ms 20000)" has "$R2.got" budget_reached
ok $? "budget: budget_reached told"
is "$(kinds "$R2.got")" "budget_warning 50, budget_warning 80, budget_reached" \
    "budget: 50 % and 80 % (not debounced), then reached, once each"
like "$(grep '"kind":"budget_reached"' "$R2.got" | jget - 'd["event"]["reason"]' 2>&1)" \
    "reached --max-time $B" "budget: budget_reached's body has the reason"

t_poll "$(t_ms 20000)" has "$R3.got" budget_reached
ok $? "held: budget_reached told"
t_poll "$(t_ms 5000)" status_is "$F3" paused
ok $? "held: the loop is paused (held)"
# the hold lasts several stuck_ms: a held loop is not stuck, nothing comes
t_poll $((STUCK * 4)) has "$R3.got" "budget_reached, stuck"
ok $(( $? == 0 )) "held: not told stuck while held (stuck_ms $STUCK)"
$WRAP "$SUP" run -C "$R3" --loop-id held-1 --max-time 600000 >/dev/null 2>&1
touch "$R3.count.stop"
t_wait_pid "$P3" "$(t_ms 30000)"
is "$T_RC" 0 "held: raised, the loop completes"

$WRAP "$SUP" run -C "$R2" --loop-id warn-1 --max-time 600000 >/dev/null 2>&1
touch "$R2.count.stop"
t_wait_pid "$P2" "$(t_ms 30000)"
is "$T_RC" 0 "budget: raised, the loop completes"

t_poll "$(t_ms 20000)" has "$R4.got" "needs_input, budget_reached"
ok $? "asking, then held: needs_input then budget_reached told"
t_poll "$(t_ms 5000)" status_is "$F4" paused
ok $? "asking, then held: paused"
QID=$(open_q "$F4")
$WRAP "$SUP" answer -C "$R4" both-1 "$QID" postgres >/dev/null 2>"$R4.aerr"
is "$?" 0 "asking, held: answered while held"
t_poll "$(t_ms 10000)" eval "[ \"\$(jget '$F4' '[q[\"status\"] for q in d[\"skill_state\"][\"questions\"]]' 2>/dev/null)\" = '[\"answered\"]' ]"
ok $? "asking, held: the held loop took the answer"
ok $(kill -0 "$P4" 2>/dev/null; echo $?) "asking, held: run is still up"
status_is "$F4" paused
ok $? "asking, held: still paused (the budget holds it)"
$WRAP "$SUP" run -C "$R4" --loop-id both-1 --max-time 600000 >/dev/null 2>&1
is "$?" 0 "asking, held: the budget raised"
t_wait_pid "$P4" "$(t_ms 30000)"
is "$T_RC" 0 "asking, held: the loop completes"
is "$(jget "$R4/.loop/both-1.workers/develop.output.json" 'd["summary"]')" \
    "used postgres" "asking, held: develop ran again with the answer"

# the question asked before the budget's hold (asked within B5, the
# deadline B5 after it); held, then polled past the deadline
t_poll "$(t_ms 20000)" has "$R5.got" budget_reached
ok $? "late: held by the budget"
QID=$(open_q "$F5")
like "$QID" '^q-' "late: asked before the hold"
DL=$(jget "$F5" '[q["deadline"] for q in d["skill_state"]["questions"] if q["status"] == "open"][0]' 2>/dev/null)
past() { python3 -c 'import sys, datetime as t; print(t.datetime.now(t.timezone.utc) > t.datetime.fromisoformat(sys.argv[1].replace("Z", "+00:00")) + t.timedelta(seconds=1))' "$1"; }
t_poll "$(t_ms 20000)" eval "[ \"\$(past '$DL')\" = True ]"
ok $? "late: a second past the question's deadline ($DL)"
[ -n "$QID" ] && status_is "$F5" paused && [ "$(open_q "$F5")" = "$QID" ]
ok $? "late: still paused, the question still open (its deadline stood still)"
$WRAP "$SUP" answer -C "$R5" late-1 "$QID" postgres >/dev/null 2>"$R5.aerr"
is "$?" 0 "late: answered while held"
$WRAP "$SUP" run -C "$R5" --loop-id late-1 --max-time 600000 >/dev/null 2>&1
t_wait_pid "$P5" "$(t_ms 30000)"
is "$T_RC" 0 "late: raised, the loop completes (not failed at the deadline)"
is "$(jget "$R5/.loop/late-1.workers/develop.output.json" 'd["summary"]')" \
    "used postgres" "late: develop ran again with the answer"

t_done
