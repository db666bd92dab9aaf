#!/bin/bash
# gaveup.sh: a CLI that gave up on an overload, a server error or a used-up
# quota (issue 25): the turn ends at the CLI's final event, with the
# outcome kind of that error and the CLI's own words as the reason, not at
# the role's deadline.  Stand-in CLIs print the real streams of
# tests/streams (the real CLIs against the stand-in API's faults) and then
# never exit, the worst case; the deadline is an hour, so a worker that
# waited for it would be cut by agent's 60 s and report nothing.
. "$(dirname "$0")/lib.sh"
t_watchdog 300
t_valgrind_worker
t_marker M wrk
S=$T_TMP/state
R=$T_TMP/r

# gaveup TOOL STREAM KIND REGEX [BODY]: the stand-in TOOL prints STREAM,
# then sleeps (or runs BODY); the result must be failed with KIND, reason
# matching REGEX.
gaveup() {
	printf '#!/bin/bash\n# %s\n%s\n' "$M" "exec </dev/null
${5:-cat '$srcdir/tests/streams/$2'
exec sleep 1000}" >"$T_TMP/$1"
	chmod +x "$T_TMP/$1"
	printf '{"tools":{"%s":{"path":"%s"}}}\n' "$1" "$T_TMP/$1" \
	    >"$T_TMP/cfg-$1.json"
	agent "$R" develop --tool "$1" --config "$T_TMP/cfg-$1.json" \
	    --state-dir "$S" --timeout-ms 3600000 "go"
	is "$(jget "$R" '[d.get("status"), d.get("error_kind"), d.get("timed_out")]')" \
	    "[\"failed\",\"$3\",false]" "$2: failed, $3, not timed out"
	like "$(jget "$R" 'd.get("reason")')" "$4" "$2: the reason is the CLI's words"
	t_wait_gone "$M" 5000
	ok $? "$2: nothing left"
}

gaveup claude claude-529.jsonl overloaded 'API Error: 529 Overloaded'
gaveup claude claude-503.jsonl overloaded '503 mock service unavailable: overloaded'
gaveup claude claude-500.jsonl server_error 'API Error: 500 mock internal server error'
gaveup codex codex-529.jsonl overloaded 'unexpected status 529.*Overloaded'
gaveup codex codex-500.jsonl overloaded 'currently experiencing high demand'
gaveup gemini gemini-500.jsonl server_error 'mock internal server error'
gaveup codex codex-quota.jsonl quota_exhausted '^Quota exceeded'
gaveup opencode opencode-quota.jsonl quota_exhausted 'exceeded your current quota'
gaveup gemini gemini-quota.jsonl quota_exhausted 'exhausted your daily quota'
# a CLI that exits after its retries without a final event: the last
# retry it reported is why
gaveup claude claude-529.jsonl overloaded 'HTTP 529: overloaded, attempt 2/2' \
    "head -n 3 '$srcdir/tests/streams/claude-529.jsonl'; exit 1"

# a CLI still retrying when the deadline comes: the deadline is the kind,
# and the reason names the retry it was in (the overloaded API), not null
printf '#!/bin/bash\n# %s\nexec </dev/null\nhead -n 3 %q\nexec sleep 1000\n' \
    "$M" "$srcdir/tests/streams/claude-529.jsonl" >"$T_TMP/claude"
agent "$R" develop --tool claude --config "$T_TMP/cfg-claude.json" \
    --state-dir "$S" --timeout-ms 2000 --nudge-ms 500 "go"
is "$(jget "$R" '[d.get("error_kind"), d.get("timed_out")]')" \
    '["timeout",true]' "still retrying at the deadline: timeout"
like "$(jget "$R" 'd.get("reason")')" \
    '^deadline of 2 s passed.*; still retrying: API error HTTP 529: overloaded' \
    "still retrying at the deadline: the reason names the retry"
t_wait_gone "$M" 5000
ok $? "still retrying: nothing left"
t_done
