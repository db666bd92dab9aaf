#!/bin/bash
# pwd-bash.sh: the tool started with -C sees PWD equal to that directory,
# not the caller's (issue 9 item 1), here with --tool bash, which needs no
# npm.  cli-opencode.sh checks the same with a CLI that trusts $PWD.
. "$(dirname "$0")/../regress/lib.sh"
t_watchdog 120
t_valgrind_worker
SUP=$(cd "$(dirname "$SUP")" && pwd)/ccw-supervisor
p=$T_TMP/project
mkdir -p "$p" "$T_TMP/caller"
p=$(cd "$p" && pwd -P)
out=$T_TMP/pwd.json
(cd "$T_TMP/caller" && agent "$out" develop --tool bash -C "$p" \
    --command 'tr "\0" "\n" </proc/$$/environ | grep "^PWD="; pwd' hi)
is "$?" 0 "agent --tool bash -C DIR exits 0"
# The tool's stdout is in its log (stderr_tail holds stderr only).
tail=$(cat "$(jget "$out" 'd.get("log_path")')")
is "$(printf '%s\n' "$tail" | grep '^PWD=')" "PWD=$p" "the tool's environment has PWD=DIR, not the caller's"
is "$(printf '%s\n' "$tail" | tail -n 1)" "$p" "the tool runs in DIR"
t_done
