#!/bin/bash
# batch-exit.sh: host processes exit when their work is done and on
# SIGTERM, in every state (issue 26).  Rounds of batches at once, each of
# many tiny items with as many jobs (every item's loop opens at once;
# three in four are for a tool that does not exist and fail as soon as
# they opened), each of which must exit; batches and a serve sent SIGTERM
# while loops open and while they run, each of which must exit.  One that
# does not exit in a generous bound has its stacks printed (gdb) and fails.
# The cause found: a loop's state store was set up on its opener thread,
# whose event_active/event_del on the event base (not thread-safe)
# corrupted it when opens came together: batch spun at 100 % CPU or slept
# for ever after its last item, deaf to SIGTERM.  Knobs for a big run:
# CCW_EXIT_ROUNDS, CCW_EXIT_BATCHES, CCW_EXIT_ITEMS, CCW_EXIT_JOBS,
# CCW_EXIT_LOOPS (e.g. 30, 1, 128, 128, 200).
. "$(dirname "$0")/lib.sh"
t_watchdog 150
t_slack

# under a wrapper (valgrind) one round of smaller batches
ROUNDS=${CCW_EXIT_ROUNDS:-$([ -n "$WRAP" ] && echo 1 || echo 2)}
NB=${CCW_EXIT_BATCHES:-2}
NI=${CCW_EXIT_ITEMS:-$([ -n "$WRAP" ] && echo 12 || echo 32)}
JOBS=${CCW_EXIT_JOBS:-$NI}
NL=${CCW_EXIT_LOOPS:-16}
BOUND=$(t_ms $((${CCW_EXIT_BOUND_S:-120} * 1000)))
export CCW_WORKER=$WRK

# stacks PID WHAT: where a process that should have exited waits: its
# state, its children, its threads' stacks (the main thread first).
stacks() {
	echo "# $2: pid $1 did not exit; state $(awk '/^State:/ { print $2 }' \
	    "/proc/$1/status" 2>/dev/null), cpu $(ps -o pcpu= -p "$1")%"
	ps -e -o pid=,ppid=,stat=,wchan:24=,args= | awk -v p="$1" \
	    '$1 == p || $2 == p' | cut -c1-160 | sed 's/^/#   ps: /'
	if command -v gdb >/dev/null 2>&1; then
		timeout 30 gdb -batch -p "$1" -ex 'thread 1' -ex 'bt' \
		    -ex 'thread apply all bt 12' 2>/dev/null |
		    grep -E '^(#|Thread|\[Switching)' | head -n 120 |
		    sed 's/^/#   gdb: /'
	else
		echo "#   (no gdb: no stacks)"
	fi
}

# await PID WHAT: $RC, PID's exit status once it exits; 255 (its stacks
# printed, then killed) if it is still there at the bound.
await() {
	local end
	end=$(( $(t_now_ms) + BOUND ))
	while kill -0 "$1" 2>/dev/null && [ "$(t_now_ms)" -lt "$end" ]; do
		sleep 0.1
	done
	if kill -0 "$1" 2>/dev/null; then
		stacks "$1" "$2"
		kill -KILL "$1"
		wait "$1"
		RC=255
		return
	fi
	wait "$1"
	RC=$?
}

# root DIR: a project whose roles print their result at once, as the
# bench's batch figure has them.
root() {
	local cmd="printf 'WORKER_RESULT:\n- status: success\n- summary: ok\n'"
	t_run_config "$1" "$cmd" "$cmd" "$cmd" "$cmd" "$cmd"
}

# items FILE N: N items, three in four for a tool that does not exist
# (its loop opens, then fails at once: more opens, fewer processes).
items() {
	local i
	: >"$1"
	for i in $(seq 1 "$2"); do
		if [ $((i % 4)) -ne 1 ]; then
			printf '{"title": "item %d", "tool": "nosuch"}\n' "$i"
		else
			printf '{"title": "item %d", "max_iterations": 3}\n' "$i"
		fi >>"$1"
	done
}

# start_batch DIR: a project at DIR with $NI items, its batch started in
# the background (--jobs $JOBS, --json to DIR.out); its pid added to pids.
start_batch() {
	mkdir -p "$1"
	root "$1"
	items "$1/items.jsonl" "$NI"
	$WRAP "$SUP" batch "$1/items.jsonl" -C "$1" --jobs "$JOBS" \
	    --json >"$1.out" 2>"$1.err" &
	pids+=($!)
}

# counted FILE EVENT: how many EVENT lines batch --json wrote so far.
counted() {
	grep -c "\"event\": *\"$2\"" "$1" 2>/dev/null
}

# --- many batches at once, each must exit when its items are done
for r in $(seq "$ROUNDS"); do
	pids=()
	for b in $(seq "$NB"); do
		start_batch "$T_TMP/b$r-$b"
	done
	hung=0 bad=
	for b in $(seq "$NB"); do
		await "${pids[$((b - 1))]}" "batch $b of round $r"
		[ "$RC" -eq 255 ] && hung=$((hung + 1))
		# some items failed: exit 1, every item done
		[ "$RC" -eq 1 ] && [ "$(counted "$T_TMP/b$r-$b.out" item_done)" -eq "$NI" ] ||
		    bad="$bad b$b:rc=$RC,done=$(counted "$T_TMP/b$r-$b.out" item_done)"
	done
	is "$hung" 0 "round $r: $NB batches of $NI items (--jobs $JOBS) at once: every one exited"
	is "${bad:-none}" none "round $r: each ended every item and exited 1 (some fail)"
done

# --- SIGTERM while loops open (at the first item started) and while they
# run (once a few items are done): batch exits 4, stopped by a signal
pids=() names=()
for when in 1 4; do
	for ev in item_started item_done; do
		start_batch "$T_TMP/term-$ev-$when"
		names+=("$ev-$when")
	done
done
# each gets its signal once it reached its point (or has exited)
left=${#pids[@]} end=$(( $(t_now_ms) + BOUND ))
declare -A sent
while [ "$left" -gt 0 ] && [ "$(t_now_ms)" -lt "$end" ]; do
	left=0
	for k in "${!pids[@]}"; do
		[ -n "${sent[$k]:-}" ] && continue
		n=${names[$k]} ev=${n%-*} when=${n##*-}
		if [ "$(counted "$T_TMP/term-$n.out" "$ev")" -ge "$when" ] ||
		    ! kill -0 "${pids[$k]}" 2>/dev/null; then
			kill -TERM "${pids[$k]}" 2>/dev/null
			sent[$k]=1
		else
			left=$((left + 1))
		fi
	done
	sleep 0.02
done
bad=
for k in "${!pids[@]}"; do
	await "${pids[$k]}" "batch after SIGTERM at ${names[$k]}"
	# 4: stopped; 1: its items ended before the signal came; 143: the
	# signal came as it was exiting, its handlers gone: exited all the same
	case $RC in 4|1|143) ;; *) bad="$bad ${names[$k]}:rc=$RC" ;; esac
done
is "${bad:-none}" none "SIGTERM to batch while loops open and while they run: each exited"

# --- serve: SIGTERM while its loops open, and while they run
cat >"$T_TMP/drive.py" <<'EOF'
# drive.py PORT N WAIT: N loops created and started at once; then, with
# WAIT, until half of them completed (60 s at most).  Prints "started".
import http.client, json, sys, time
port, n, wait = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "wait"
def call(method, path, body=None, token=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    h = {"Content-Type": "application/json"}
    if token:
        h["Authorization"] = "Bearer " + token
    c.request(method, path, json.dumps(body) if body is not None else None, h)
    r = c.getresponse()
    d = json.loads(r.read() or b"{}")
    c.close()
    return d
tok = call("GET", "/api/auth/token")["token"]
ids = [call("POST", "/api/loops/v2", {"title": "t %d" % i}, tok)["data"]["loop_id"]
       for i in range(n)]
for i in ids:
    call("POST", "/api/loops/v2/%s/start" % i, None, tok)
print("started", flush=True)
end = time.monotonic() + 60
while wait and time.monotonic() < end:
    done = sum(call("GET", "/api/loops/v2/" + i, None, tok).get("data", {})
               .get("status") == "completed" for i in ids)
    if done * 2 >= n:
        break
    time.sleep(0.2)
EOF
for how in open wait; do
	R=$T_TMP/serve-$how
	mkdir -p "$R"
	root "$R"
	$WRAP "$SUP" serve -C "$R" --no-socket --http 127.0.0.1:0 --jobs "$NL" \
	    >"$R.out" 2>"$R.err" &
	SP=$!
	end=$(t_until 20000)
	until grep -q 'listening on' "$R.out" || [ "$(t_now_ms)" -ge "$end" ]; do
		sleep 0.05
	done
	PORT=$(sed -n 's/.*listening on http:.*:\([0-9]*\)$/\1/p' "$R.out")
	if [ -n "$PORT" ]; then
		python3 "$T_TMP/drive.py" "$PORT" "$NL" "$how" >"$R.drive" 2>&1
	fi
	kill -TERM "$SP" 2>/dev/null
	await "$SP" "serve after SIGTERM ($how)"
	[ "$how" = open ] && what="opening" || what="running, half done"
	is "$RC" 4 "SIGTERM to serve with $NL loops $what: it exits 4"
done

t_done
