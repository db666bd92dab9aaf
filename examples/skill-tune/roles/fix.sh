#!/bin/sh
# fix.sh: the fix role of ccw-supervisor tune.  Reads the open issues
# ($CCW_TUNE_ISSUES) and proposes fixes for the ones it knows; the engine
# applies them, re-runs the diagnosis and keeps or rolls back each fix.
# Two fixes are real, the docs one is deliberately naive (see below).
# shellcheck disable=SC2046  # set -- $(pick ...) splits "ID LINE" on purpose
. ./roles/lib.sh
case ${CCW_TUNE_ISSUES:-} in
'') fail fix "CCW_TUNE_ISSUES is not set" ;;
/*) issues=$CCW_TUNE_ISSUES ;;
*) issues=$PWD/$CCW_TUNE_ISSUES ;;
esac
skill_enter fix
jq -e 'type == "array"' "$issues" >/dev/null 2>&1 ||
    fail fix "$CCW_TUNE_ISSUES is not a JSON array"

# pick TYPE FILE TAG: the id and first line of the first open issue of
# TYPE in FILE whose description contains TAG ("ID LINE"; nothing if none).
pick() {
	jq -r --arg t "$1" --arg f "$2" --arg d "$3" 'map(select(.type == $t and
	    .location.file == $f and (.description | contains($d)))) | first |
	    select(.) | "\(.id) \(.location.line_start // 0)"' "$issues"
}
# line FILE N ERE: line N of FILE if it matches ERE, else FILE's first match.
line() {
	l=''
	[ "$2" -gt 0 ] 2>/dev/null && l=$(sed -n "${2}p" "$1")
	printf '%s\n' "$l" | grep -q -i -E -e "$3" ||
	    l=$(grep -i -E -e "$3" "$1" | head -n 1)
	printf '%s' "$l"
}
# marker LINE: its list marker ("2. ", "- "), kept by the replacement.
marker() {
	printf '%s\n' "$1" | awk 'match($0, /^[ \t]*([0-9]+\.|[-*])[ \t]+/) {
	    printf "%s", substr($0, 1, RLENGTH) }'
}
# fix ID ISSUE STRATEGY FILE OLD NEW DESCRIPTION RATIONALE RISK IMPACT VERIFY
fix() {
	jq -n -c --arg id "$1" --arg is "$2" --arg st "$3" --arg f "$4" \
	    --arg old "$5" --arg new "$6" --arg d "$7" --arg r "$8" \
	    --arg risk "$9" --arg im "${10}" --arg v "${11}" '{id: $id,
	    issue_ids: [$is], strategy: $st, description: $d, rationale: $r,
	    changes: [{file: $f, action: "modify", old_content: $old,
	    new_content: $new}], risk: $risk, estimated_impact: $im,
	    verification_steps: [$v]}'
}

fixes=''
n=0
add() { n=$((n + 1)); fixes="$fixes$(fix "$(printf 'FIX-%03d' $n)" "$@")
"; }

# context explosion (lazy_loading): the inlining line becomes paths + Read.
f=phases/02-analyze.md
set -- $(pick context_explosion "$f" '(CTX-001)')  # split: ID LINE
if [ $# -eq 2 ] && old=$(line "$f" "$2" '\$\(cat |full content of') && [ -n "$old" ]; then
	add "$1" lazy_loading $f "$old" \
	    "$(marker "$old")Give each agent only the paths listed in \`collected.json\`, not the files' contents; the agent reads a file on demand (Read tool) when it needs it." \
	    "pass file paths to the analysis agents instead of the files' contents" \
	    "the prompt stays the same size whatever the project's size" low \
	    "prompt size no longer grows with the collected files" \
	    "re-run the context diagnosis"
fi

# memory loss (structured_state): the constraints go through state.json.
f=phases/01-collect.md
set -- $(pick memory_loss "$f" '(MEM-001)')
if [ $# -eq 2 ] && old=$(line "$f" "$2" 'remember[^.]*conversation') && [ -n "$old" ]; then
	add "$1" structured_state $f "$old" \
	    "$(marker "$old")Write the user's constraints (audience, length, tone) to \`state.json\` under \`constraints\`; every later phase reads them back from \`state.json\`, not from the conversation." \
	    "keep the user's constraints in state.json instead of the conversation" \
	    "a file survives a compaction or a resumed session; the conversation does not" low \
	    "later phases always see the constraints" \
	    "re-run the memory diagnosis"
fi

# docs conflict: NAIVE on purpose.  It only relabels output-schema.md's
# heading as a "copy"; both specs still define TaskRecord.status with
# different enum values, so re-running docs finds the same conflict and the
# engine rolls this fix back.  (The real fix: one definition, referenced.)
f=specs/output-schema.md
set -- $(pick dataflow_break "$f" 'is defined differently')
if [ $# -eq 2 ] && grep -q -x "## TaskRecord" "$f"; then
	add "$1" custom $f '## TaskRecord' \
	    '## TaskRecord (output copy, see specs/state-schema.md)' \
	    "mark output-schema.md's TaskRecord as a copy of the state schema's" \
	    "readers are sent to the state schema for TaskRecord" low \
	    "none: the enum values still differ" \
	    "re-run the docs diagnosis"
fi
# agent failure: no fix proposed (writing an output contract needs to know
# what phase 04 expects back; left to a person).

out=$(printf '%s' "$fixes" | jq -s -c '{fixes: .}') || fail fix "could not build the fixes"
known=$(jq -r '[.[] | select(.type == "agent_failure") | .id] | join(", ")' "$issues")
result fix success "proposed $n fix(es)${known:+; none for $known (agent_failure)}" '[]' "$out"
