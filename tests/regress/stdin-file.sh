#!/bin/bash
# stdin-file.sh: `mcp` and `control` read stdin from a regular file or
# /dev/null (which epoll refuses) just as from a pipe: the same replies,
# a file bigger than one read chunk included, then end of input handled
# as a pipe's (the same exit status), with no libevent warning; and an
# agent spawned from a file is answered and closed at its end.
. "$(dirname "$0")/lib.sh"
t_watchdog 120
t_valgrind_worker
t_marker M stdin

HANG="exec '$FAKE' --marker $M print working hang"
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
R=$T_TMP/proj
t_run_config "$R" "$HANG" "$HANG" "$HANG" "$HANG" "$HANG" '{"grace_ms": 500}'

# feed CMD IN OUT: CMD's stdin from IN (a file; pipe:FILE for a pipe of
# FILE's bytes); replies sorted in OUT, stderr in OUT.err, the exit
# status printed.
feed() {
	local rc
	if [ "$2" = "${2#pipe:}" ]; then
		$WRAP "$SUP" "$1" -C "$R" <"$2" >"$3.raw" 2>"$3.err"
		rc=$?
	else
		cat "${2#pipe:}" | $WRAP "$SUP" "$1" -C "$R" >"$3.raw" 2>"$3.err"
		rc=$?
	fi
	sort "$3.raw" >"$3"
	echo "$rc"
}

# --- mcp: a file of requests, bigger than linein's 64 KiB read chunk
{
	printf '%s\n' "$INIT"
	printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
	printf '%s\n' 'not json'
	for i in $(seq 2 3001); do
		printf '{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' "$i"
	done
	printf '%s' '{"jsonrpc":"2.0","id":3002,"method":"ping"}'	# no LF
} >"$T_TMP/mcp.in"
ok $(( $(wc -c <"$T_TMP/mcp.in") <= 65536 )) "the request file is over 64 KiB"
prc=$(feed mcp "pipe:$T_TMP/mcp.in" "$T_TMP/mcp.pipe")
frc=$(feed mcp "$T_TMP/mcp.in" "$T_TMP/mcp.file")
is "$prc" 0 "mcp, a pipe: exit 0 at its end"
is "$frc" "$prc" "mcp, a file: the same exit status as a pipe"
is "$(wc -l <"$T_TMP/mcp.file")" 3004 "mcp, a file: every request answered"
ok $(cmp -s "$T_TMP/mcp.pipe" "$T_TMP/mcp.file"; echo $?) \
    "mcp, a file: the same replies as a pipe"
ok $(grep -q 'warn\|internal' "$T_TMP/mcp.file.err"; echo $(( ! $? ))) \
    "mcp, a file: no warning"

# --- mcp and control: /dev/null is a pipe closed at once
for cmd in mcp control; do
	: >"$T_TMP/empty"
	prc=$(feed $cmd "pipe:$T_TMP/empty" "$T_TMP/$cmd.epipe")
	nrc=$(feed $cmd /dev/null "$T_TMP/$cmd.null")
	is "$nrc" "$prc" "$cmd < /dev/null: the exit status of an empty pipe ($prc)"
	is "$(cat "$T_TMP/$cmd.null" "$T_TMP/$cmd.null.err")" "" \
	    "$cmd < /dev/null: nothing said"
done

# --- control: a file of requests, the last without its LF
{
	printf '%s\n' '{"id":1,"verb":"list"}' 'not json at all' '[1,2]'
	printf '%s\n' '{"id":2,"verb":"no_such_verb"}' ''
	printf '%s' '{"id":3,"verb":"list"}'
} >"$T_TMP/ctl.in"
prc=$(feed control "pipe:$T_TMP/ctl.in" "$T_TMP/ctl.pipe")
frc=$(feed control "$T_TMP/ctl.in" "$T_TMP/ctl.file")
is "$frc" "$prc" "control, a file: the same exit status as a pipe ($prc)"
is "$(wc -l <"$T_TMP/ctl.file")" 5 "control, a file: every line answered"
ok $(cmp -s "$T_TMP/ctl.pipe" "$T_TMP/ctl.file"; echo $?) \
    "control, a file: the same replies as a pipe"

# --- an agent spawned from a file; the file's end closes it
printf '%s\n%s\n' "$INIT" \
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"spawn_agent","arguments":{"role":"develop"}}}' \
    >"$T_TMP/spawn.in"
rc=$(feed mcp "$T_TMP/spawn.in" "$T_TMP/spawn.out")
is "$rc" 0 "mcp, a file that spawns: exit 0 at its end"
r=$(grep '"id":1,' "$T_TMP/spawn.out")
is "$(jget - 'd["result"]["structuredContent"]["agent_id"]' <<<"$r")" agent-1 \
    "mcp, a file: spawn_agent answered"
t_wait_gone "$M" 5000
ok $? "mcp, a file: no agent left"

t_done
