#!/bin/bash
# fake-agent.sh: every command of tests/fake-agent, run directly (no
# supervisor), so that the agent tests can trust the tool they drive.
. "$(dirname "$0")/lib.sh"
t_watchdog 30
t_marker M fake
D=$T_TMP

out=$("$FAKE" print hello print "two words"); rc=$?
is "$rc" 0 "print exits 0"
is "$out" "hello
two words" "print prints each text on its own line"

out=$("$FAKE" stderr oops print fine 2>"$D/err")
is "$out" "fine" "stderr writes nothing on stdout"
is "$(cat "$D/err")" "oops" "stderr writes the text on stderr"

"$FAKE" result success "did the thing" '["a.c", "b.c"]' >"$D/res"
is "$(cat "$D/res")" 'WORKER_RESULT:
- action: develop
- status: success
- summary: did the thing
- files_changed: ["a.c", "b.c"]
- next_suggestion: validate
- loop_back_to: null
DETAILED_OUTPUT:
fake output' "result prints the canonical block"

out=$("$FAKE" result failed print after)
like "$out" '- status: failed' "result takes the status"
like "$out" '- summary: fake agent done' "a command after result is not its summary"
like "$out" '- files_changed: \[\]' "files_changed defaults to []"
is "$(printf '%s\n' "$out" | tail -n 1)" "after" "the next command still runs"

t0=$(t_now_ms)
"$FAKE" sleep 300; rc=$?
el=$(( $(t_now_ms) - t0 ))
is "$rc" 0 "sleep exits 0"
t_slack
ok $(( el < 300 )) "sleep 300 takes at least 300 ms (took $el)"
t_within "$el" 2000 "sleep 300 takes about 300 ms (took $el)"

"$FAKE" --marker "$M" hang >"$D/hang" &
pid=$!
sleep 0.3
kill -0 "$pid" 2>/dev/null; ok $? "hang is still running after 300 ms"
like "$(tr '\0' ' ' <"/proc/$pid/cmdline")" "--marker $M hang" \
    "the marker is in the command line"
kill -TERM "$pid"
t_wait_pid "$pid" 2000
is "$T_RC" 143 "hang dies of SIGTERM"

"$FAKE" wait-file "$D/go" print woke >"$D/wf" &
pid=$!
sleep 0.2
is "$(cat "$D/wf")" "" "wait-file waits while the file is missing"
touch "$D/go"
t_wait_pid "$pid" 2000
is "$T_RC" 0 "wait-file returns once the file exists"
is "$(cat "$D/wf")" "woke" "the commands after wait-file run"

out=$(printf 'first line\nsecond\n' | "$FAKE" read-line read-line read-line)
is "$out" "got: first line
got: second
got EOF" "read-line reads one line each, then reports EOF"

out=$(printf 'go\nnot yet\n## TIMEOUT\nPlease converge\n' |
    "$FAKE" on-input-result partial print after); rc=$?
is "$rc" 0 "on-input-result exits 0 after TIMEOUT"
like "$out" 'input: not yet' "on-input-result shows the lines before"
like "$out" '- status: partial' "on-input-result prints the status asked for"
is "$(printf '%s\n' "$out" | tail -n 1)" "after" \
    "on-input-result returns after the block"
out=$(printf 'go\n' | "$FAKE" on-input-result success 2>/dev/null); rc=$?
is "$rc" 66 "on-input-result exits 66 when input ends without TIMEOUT"
ok $(printf '%s' "$out" | grep -q WORKER_RESULT; echo $((! $?))) \
    "and prints no block then"

out=$(printf 'a\nb c\n' | "$FAKE" echo-stdin print done)
is "$out" "a
b c
done" "echo-stdin copies stdin until EOF"

out=$("$FAKE" print before crash print after 2>/dev/null); rc=$?
is "$rc" 139 "crash dies of SIGSEGV"
is "$out" "before" "crash flushes what came before and nothing after runs"

"$FAKE" exit 7 print never >"$D/ex"; rc=$?
is "$rc" 7 "exit N exits N"
is "$(cat "$D/ex")" "" "nothing runs after exit"

"$FAKE" flood 2 print end >"$D/flood"; rc=$?
is "$rc" 0 "flood exits 0"
is "$(wc -c <"$D/flood")" $((2 * 1024 * 1024 + 4)) \
    "flood 2 writes exactly 2 MiB"
is "$(wc -l <"$D/flood")" 32769 "in 64-byte lines"
like "$(tail -n 2 "$D/flood" | head -n 1)" '^flood 0000032768 ' \
    "the last line is numbered 32768"

"$FAKE" --marker "$M" fork-grandchild print parent-done >"$D/gc"; rc=$?
is "$rc" 0 "fork-grandchild: the parent goes on and exits"
gc=$(sed -n 's/^grandchild: //p' "$D/gc")
like "$gc" '^[0-9]+$' "the grandchild pid is printed"
like "$(cat "$D/gc")" 'parent-done' "the parent runs the next command"
t_wait_count "$M" 1 2000
like "$(tr '\0' ' ' <"/proc/$gc/cmdline" 2>/dev/null)" "--marker $M hang" \
    "the grandchild re-execs itself with the marker"
is "$(ps -o sid= -p "$gc" | tr -d ' ')" "$gc" \
    "the grandchild leads its own session"
is "$(readlink "/proc/$gc/fd/1")" "$D/gc" "the grandchild keeps stdout open"
kill -KILL "$gc"
t_wait_gone "$M" 2000; ok $? "the grandchild is gone after SIGKILL"

t_marker MI ignore
"$FAKE" --marker "$MI" ignore-term hang &
pid=$!
t_wait_ignoring "$MI" 5000; ok $? "ignore-term: SIGTERM shows in SigIgn"
kill -TERM "$pid"; kill -INT "$pid"
# (a death would show within the window; its absence needs one)
! t_wait_gone "$MI" 300 >/dev/null
ok $? "ignore-term survives SIGTERM and SIGINT"
kill -KILL "$pid"
t_wait_pid "$pid" 2000
is "$T_RC" 137 "and dies of SIGKILL"

out=$("$FAKE" bad-block)
like "$out" '^WORKER_RESULT:' "bad-block starts like a block"
like "$out" '- action develop' "bad-block has a line without a colon"
like "$out" 'files_changed: \["a.c", "b.c$' "bad-block leaves the list open"

is "$("$FAKE" clarify)" 'CLARIFICATION_NEEDED:
Q1: Which database? | Options: [sqlite, postgres] | Recommended: [sqlite]' \
    "clarify prints the question block"

printf 'line one\n\nline three\n' >"$D/transcript"
is "$("$FAKE" replay "$D/transcript" print end)" 'line one

line three
end' "replay prints the file"

cat >"$D/script" <<EOF
# a comment
print hello   world, spaces kept
stderr to stderr
result partial
exit 4
print never
EOF
out=$("$FAKE" script "$D/script" 2>"$D/err"); rc=$?
is "$rc" 4 "script runs the commands of the file, exit included"
like "$out" '^hello   world, spaces kept' "print takes the rest of the line"
like "$out" '- status: partial' "a script line can take arguments"
ok $(printf '%s' "$out" | grep -q never; echo $((! $?))) \
    "nothing after exit runs"
is "$(cat "$D/err")" "to stderr" "stderr in a script"

"$FAKE" print ok frobnicate print never >"$D/out" 2>"$D/err"; rc=$?
is "$rc" 64 "an unknown command exits 64"
like "$(cat "$D/err")" "unknown command 'frobnicate'" "and is named on stderr"
is "$(cat "$D/out")" "ok" "the commands before it ran"
"$FAKE" sleep 2>/dev/null; is $? 64 "a missing argument exits 64"
"$FAKE" sleep soon 2>/dev/null; is $? 64 "a bad number exits 64"
"$FAKE" 2>/dev/null; is $? 64 "no command exits 64"

t_wait_gone "$M" 1000; ok $? "no fake agent is left running"
t_done
