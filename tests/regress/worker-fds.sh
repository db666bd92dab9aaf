#!/bin/bash
# worker-fds.sh: what a worker and its tool inherit (issue 10 items 5 and
# 12): a tool sees fds 0, 1, 2 only and cannot write frames on the
# channel; git (the files fallback) sees no socket or pipe either; a
# worker killed while its tool's child lives on still ends its agent; a
# worker's stdout is not ours (control's JSON stream stays JSON); a clean
# signal mask and dispositions in tools; over `ulimit -f` a commit fails
# with EFBIG instead of killing us; a SIGTERM sent just after start stops
# a run (exit 4), never kills it by its default action.
. "$(dirname "$0")/lib.sh"
t_watchdog 120
t_valgrind_worker
t_marker M wfd
S=$T_TMP/state
R=$T_TMP/r

# -- item 5: the tool's descriptors are 0, 1 and 2, nothing else
W=$T_TMP/work
mkdir -p "$W"
# (ls alone lists the shell's fds: in a pipeline or $(...) the shell
# itself would hold pipes)
agent "$R" develop --tool bash -C "$W" --state-dir "$S" --command '
ls /proc/$$/fd >fds.txt
sort -n fds.txt | { tr "\n" " "; echo; } | sed "s/^/fds: /"
if printf "CW\001\000\000\011\000\000\000\001\200" >&3; then echo wrote-fd3
else echo no-fd3; fi
grep -E "^Sig(Blk|Ign)" /proc/self/status | { tr -s "\t\n" "  "; echo; } |
    sed "s/^/self: /"
grep -E "^SigBlk" /proc/$PPID/status | { tr -s "\t\n" "  "; echo; } |
    sed "s/^/worker: /"
: '"$M" "go"
rc=$?
log=$(jget "$R" 'd["log_path"]')
is "$rc" 0 "fds: the agent completes"
is "$(sed -n 's/^fds: //p' "$log")" "0 1 2 " \
    "fds: the tool has fds 0 1 2 only (ls /proc/\$\$/fd)"
is "$(grep -c -E '^(wrote|no)-fd3' "$log"):$(grep -E '^(wrote|no)-fd3' "$log")" \
    "1:no-fd3" "fds: a frame forged on fd 3 cannot be written"
like "$(jget "$R" 'd["stderr_tail"]')" '3: Bad file descriptor' \
    "fds: the shell says fd 3 is no descriptor"
# (SigIgn may hold what our own caller ignored and glibc keeps, 32 and 33)
set -- $(sed -n 's/^self: //p' "$log")
is "${1:-}:${2:-}:$(( 0x${4:-0} & (1 << (13 - 1) | 1 << (25 - 1) | 1 << (15 - 1)) ))" \
    "SigBlk::0000000000000000:0" \
    "signals: the tool's children start with nothing blocked, SIGPIPE, SIGXFSZ, SIGTERM not ignored"
is "$(sed -n 's/^worker: //p' "$log")" "SigBlk: 0000000000000000 " \
    "signals: the worker starts with nothing blocked"

# -- item 5: git, run by the worker for the files fallback, sees no
# socket or pipe past fd 2 (a stand-in git on PATH looks, then execs git)
G=$T_TMP/repo
B=$T_TMP/bin
mkdir -p "$G" "$B"
git -C "$G" init -q && printf 'a\n' >"$G/a.txt" && git -C "$G" add . &&
    git -C "$G" -c user.name=t -c user.email=t@t commit -qm init
REALGIT=$(command -v git)
cat >"$B/git" <<EOF
#!/bin/bash
ls -l /proc/\$\$/fd >>"$T_TMP/git-fds"
exec "$REALGIT" "\$@"
EOF
cat >"$T_TMP/claude" <<EOF
#!/bin/bash
# $M
cat >/dev/null
echo new >new.txt
printf '%s\n' '{"type":"system","subtype":"init","session_id":"c-1"}'
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"Added new.txt.","session_id":"c-1"}'
EOF
chmod +x "$B/git" "$T_TMP/claude"
printf '{"tools":{"claude":{"path":"%s"}}}\n' "$T_TMP/claude" \
    >"$T_TMP/cfg-claude.json"
PATH="$B:$PATH" agent "$R" develop --tool claude \
    --config "$T_TMP/cfg-claude.json" -C "$G" --state-dir "$S" "go"
is "$(jget "$R" '[d["files_changed"], d["files_source"]]')" \
    '[["new.txt"],"git"]' "git: the files fallback ran"
ok $([ -s "$T_TMP/git-fds" ]; echo $?) "git: the stand-in git was run"
is "$(awk '$(NF-2) > 2 && $NF ~ /^(socket|pipe):/' "$T_TMP/git-fds")" "" \
    "git: no socket or pipe past fd 2 (not the channel)"

# -- item 12: a worker's stdout is not control's stdout.  The tool writes
# to its worker's fd 1 through /proc; control's stdout (a file here, so
# open it through the pipe a front end would read) must stay JSON lines.
C=$T_TMP/ctl
rm -f "$C.pipe"
mkfifo "$C.pipe"
cat "$C.pipe" >"$C.json" &
CAT=$!
CTL_OUT=$C
mkfifo "$C.in"
$WRAP "$SUP" control --state-dir "$S" --loop-id LC <"$C.in" >"$C.pipe" \
    2>"$C.err" &
CTL_PID=$!
exec {CTL_FD}>"$C.in"
CTL_OUT=$C.json
CTL_LINES=0
trap '' PIPE
ctl_send "{\"id\":1,\"verb\":\"spawn\",\"role\":\"develop\",\"message\":\"go\",\
\"tool\":\"bash\",\"command\":\"echo NOT-JSON >/proc/\$PPID/fd/1; : $M\"}"
r=$(ctl_recv 1)
A=$(jget - 'd["agent_id"]' <<<"$r")
ctl_send "{\"id\":2,\"verb\":\"wait\",\"targets\":[\"$A\"],\"timeout_ms\":$(t_ms 10000),\
\"mode\":\"all\"}"
r=$(ctl_recv 2 15000)
is "$(jget - 'd["status"]["'"$A"'"]' <<<"$r")" completed \
    "stdout: the agent completed"
ctl_stop
is "$T_RC" 0 "stdout: control exits 0"
t_wait_pid "$CAT" 5000
is "$(grep -c NOT-JSON "$C.json")" 0 "stdout: nothing the worker's fd 1 got reached control's stdout"
is "$(python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    json.loads(line)
    n += 1
print(n)' "$C.json" 2>&1)" 2 "stdout: control's stdout is two JSON lines"

# -- item 5: a worker SIGKILLed while a descendant of its tool lives on:
# that descendant no longer holds the channel, so the supervisor sees the
# end of it and the agent ends (before: wait never answered)
C=$T_TMP/ctl-orphan
ctl_start "$C" --state-dir "$S" --loop-id LO
ctl_send "{\"id\":1,\"verb\":\"spawn\",\"role\":\"develop\",\"message\":\"go\",\
\"tool\":\"bash\",\"command\":\"'$FAKE' --marker $M hang & exec '$FAKE' \
--marker $M hang\"}"
r=$(ctl_recv 1)
A=$(jget - 'd["agent_id"]' <<<"$r")
t_wait_count "$M" 2 5000
ok $? "orphan: the tool and its background child run"
wpid=$(pgrep -P "$CTL_PID")
kill -KILL $wpid
ctl_send "{\"id\":2,\"verb\":\"wait\",\"targets\":[\"$A\"],\"timeout_ms\":$(t_ms 3000),\
\"mode\":\"all\"}"
r=$(ctl_recv 2 8000)
is "$(jget - '[d["timed_out"], d["status"]["'"$A"'"] in ("failed", "errored", "completed")]' <<<"$r")" \
    '[false,true]' "orphan: the agent ends once its worker is killed"
ctl_stop
is "$T_RC" 0 "orphan: control exits 0"
t_wait_gone "$M" 5000
ok $? "orphan: nothing left running"

# -- item 12: over `ulimit -f` a commit fails with EFBIG and leaves no temp
# file; before, SIGXFSZ killed the process (exit 153) half-way.  (Not
# under $WRAP: valgrind's own files would cross the limit first.)
U=$T_TMP/ulim
mkdir -p "$U"
D=$(head -c 6000 /dev/zero | tr '\0' x)
(ulimit -f 2; exec "$SUP" state -C "$U" create T --description "$D" \
    --loop-id big-1 >"$U.out" 2>"$U.err")
rc=$?
is "$rc" 1 "ulimit: state create fails with exit 1 (not killed by SIGXFSZ)"
like "$(cat "$U.err")" 'File too large' "ulimit: the error names EFBIG"
is "$(ls "$U/.loop" | grep -c -E '\.tmp$|^big-1\.json$')" 0 \
    "ulimit: no temp file and no state file left"
t_run_config "$U" "exec '$FAKE' --marker $M result success" \
    "exec '$FAKE' --marker $M result success" \
    "exec '$FAKE' --marker $M result success" \
    "exec '$FAKE' --marker $M result success" \
    "exec '$FAKE' --marker $M result success"
(ulimit -f 2; exec timeout -k 2 60 "$SUP" run -C "$U" --loop-id big-2 \
    "$D" >"$U.out" 2>"$U.err")
rc=$?
ok $(( rc == 153 || rc == 0 )) "ulimit: run fails with an error, not SIGXFSZ ($rc)"
like "$(cat "$U.err")" 'File too large' "ulimit: run names EFBIG"
is "$(ls "$U/.loop" | grep -c '\.tmp$')" 0 "ulimit: run leaves no temp file"

# -- item 12: SIGTERM just after start.  Each round resumes a loop a front
# end created with a 1 MB description, so that loading and committing it
# keeps run busy before its handlers exist, and sends SIGTERM as soon as
# run has taken the loop's lock (before: death by signal 15).  Every round
# must stop as a signal later does (exit 4) and leave a valid state file.
T=$T_TMP/term
t_run_config "$T" "exec '$FAKE' --marker $M hang" \
    "exec '$FAKE' --marker $M hang" "exec '$FAKE' --marker $M hang" \
    "exec '$FAKE' --marker $M hang" "exec '$FAKE' --marker $M hang"
bad=
for i in 1 2 3 4 5 6; do
	f=$T/.loop/term-$i.lock
	"$SUP" state -C "$T" create "task $i" --loop-id "term-$i" >/dev/null
	python3 -c '
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["description"] = "x" * (1 << 20)
json.dump(d, open(p, "w"))' "$T/.loop/term-$i.json"
	rm -f "$f"
	$WRAP "$SUP" run -C "$T" --loop-id "term-$i" >/dev/null \
	    2>"$T.err.$i" &
	pid=$!
	end=$(( $(t_now_ms) + $(t_ms 10000) ))
	n=0
	# a tight poll: the clock only now and then, to stay in the window
	until [ -e "$f" ]; do
		n=$((n + 1))
		[ $((n % 2000)) -eq 0 ] || continue
		[ "$(t_now_ms)" -lt "$end" ] && kill -0 "$pid" 2>/dev/null ||
		    break
	done
	kill -TERM "$pid"
	t_wait_pid "$pid" 15000
	"$SUP" state -C "$T" validate "term-$i" >/dev/null 2>&1
	st=$?
	[ "$T_RC" = 4 ] && [ "$st" = 0 ] || bad="$bad $i:$T_RC:$st"
done
is "$bad" "" "SIGTERM at start: 6 rounds, each stopped (exit 4, not 143) with a valid state file"
t_wait_gone "$M" 5000
ok $? "nothing left running"
t_done
