# lib.sh: sourced by the skill-tune role scripts (POSIX sh, grep/awk/jq).
# The WORKER_RESULT printer (as examples/calc/roles/result.sh), the scanner
# of the skill's markdown, and the jq that turns evidence into the
# DiagnosisResult + issues object of /work/notes/tune-contract.md.

# result ACTION STATUS SUMMARY FILES_JSON DETAIL_JSON
result() {
	printf 'WORKER_RESULT:\n'
	printf '%s action: %s\n' - "$1"
	printf '%s status: %s\n' - "$2"
	printf '%s summary: %s\n' - "$3"
	printf '%s files_changed: %s\n' - "$4"
	printf '%s next_suggestion: null\n' -
	printf '%s loop_back_to: null\n' -
	printf 'DETAILED_OUTPUT:\n%s\n' "$5"
}

# now_ms: wall clock in milliseconds (GNU date; whole seconds elsewhere).
now_ms() {
	t=$(date +%s%3N 2>/dev/null)
	case $t in *[!0-9]*|'') t=$(($(date +%s) * 1000)) ;; esac
	echo "$t"
}

# fail ROLE MESSAGE: an internal error; the detail is still one JSON object
# (no fixes for the fix role, a failed DiagnosisResult for the others).
fail() {
	if [ "$1" = fix ]; then
		d=$(jq -n -c --arg m "$2" '{fixes: [], error: $m}' 2>/dev/null)
	else
		d=$(jq -n -c --arg m "$2" '{status: "failed", issues_found: 0,
		    severity: "none", execution_time_ms: 0, error: $m,
		    details: {patterns_checked: [], patterns_matched: [],
		    evidence: [], recommendations: []}, issues: []}' 2>/dev/null)
	fi || d='{"status": "failed", "error": "jq failed"}'
	result "$1" failed "$1: $2" '[]' "$d"
	exit 1
}

# skill_enter ROLE: check the environment, cd into the skill folder.
skill_enter() {
	ROLE=$1
	START_MS=$(now_ms)
	command -v jq >/dev/null 2>&1 || fail "$ROLE" "jq is not installed"
	[ -n "${CCW_TUNE_SKILL_DIR:-}" ] || fail "$ROLE" "CCW_TUNE_SKILL_DIR is not set"
	cd "$CCW_TUNE_SKILL_DIR" 2>/dev/null || fail "$ROLE" "no skill folder: $CCW_TUNE_SKILL_DIR"
}

# md_files: the skill's markdown, relative and sorted; dot folders such as
# .tune (the engine's work dir and backups) are not part of the skill.
md_files() {
	find . -name '.?*' -prune -o -type f -name '*.md' -print |
	    sed 's|^\./||' | LC_ALL=C sort
}

# scan PATTERN_ID SEVERITY ERE: one record per matching line (grep -i -E):
# file US line US pattern US severity US text (US = \037).
scan() {
	md_files | while IFS= read -r f; do
		grep -n -i -E -e "$3" -- "$f" |
		    F=$f P=$1 S=$2 awk '{ n = index($0, ":")
			printf "%s\037%s\037%s\037%s\037%s\n", ENVIRON["F"],
			    substr($0, 1, n - 1), ENVIRON["P"], ENVIRON["S"],
			    substr($0, n + 1) }'
	done
}

# evidence_json: scan's records on stdin -> a JSON array of Evidence.
evidence_json() {
	jq -R -s -c '[split("\n")[] | select(length > 0) | split("\u001f") |
	    {file: .[0], line: (.[1] | tonumber), pattern: .[2],
	     context: (.[4] | sub("^\\s+"; "") | .[0:240]), severity: .[3]}]'
}

JQ_RANK='def rank: {"critical": 4, "high": 3, "medium": 2, "low": 1, "none": 0}[.];'

# envelope EVIDENCE ISSUES RECOMMENDATIONS CHECKED: the DiagnosisResult.
envelope() {
	jq -n -c --argjson ev "$1" --argjson is "$2" --argjson rec "$3" \
	    --argjson ck "$4" --argjson t0 "$START_MS" --argjson t1 "$(now_ms)" \
	    "$JQ_RANK"'{status: "completed", issues_found: ($is | length),
	    severity: (["none"] + ($is | map(.severity)) | max_by(rank)),
	    execution_time_ms: ($t1 - $t0),
	    details: {patterns_checked: $ck,
	        patterns_matched: ($ev | map(.pattern) | unique),
	        evidence: $ev, recommendations: $rec}, issues: $is}'
}

# diagnose TYPE META CHECKED: evidence on stdin (scan records) -> the
# result.  One issue per (file, pattern); its description comes from META
# (pattern id -> description, root_cause, impact, suggested_fix,
# recommendation), so the same problem gives the same text on every run.
diagnose() {
	ev=$(evidence_json) || fail "$ROLE" "could not read the evidence"
	is=$(jq -n -c --arg type "$1" --argjson m "$2" --argjson ev "$ev" \
	    "$JQ_RANK"'$ev | group_by([.file, .pattern]) | map(
	    . as $g | $m[$g[0].pattern] as $p | {type: $type,
	    severity: (map(.severity) | max_by(rank)),
	    location: {file: $g[0].file, line_start: $g[0].line,
	        line_end: $g[-1].line},
	    description: "\($p.description) (\($g[0].pattern))",
	    evidence: map("\(.file):\(.line): \(.context)"),
	    root_cause: $p.root_cause, impact: $p.impact,
	    suggested_fix: $p.suggested_fix})') ||
	    fail "$ROLE" "could not build the issues"
	rec=$(jq -n -c --argjson m "$2" --argjson ev "$ev" \
	    '$ev | map(.pattern) | unique | map($m[.].recommendation)')
	envelope "$ev" "$is" "$rec" "$3" || fail "$ROLE" "could not build the result"
}

# finish JSON: print the WORKER_RESULT of a diagnosis role.
finish() {
	s=$(printf '%s' "$1" | jq -r '"\(.issues_found) issue(s), severity \(.severity)"') ||
	    fail "$ROLE" "bad result JSON"
	result "$ROLE" success "$ROLE diagnosis: $s" '[]' "$1"
}
