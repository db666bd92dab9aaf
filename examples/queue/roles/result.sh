# result.sh: sourced by the role scripts.  Prints the block ccw-worker
# parses from the end of a role's output (DESIGN.md section 5):
#   result ACTION STATUS SUMMARY FILES_JSON NEXT [DETAIL]
result() {
	printf 'WORKER_RESULT:\n'
	printf '%s action: %s\n' - "$1"
	printf '%s status: %s\n' - "$2"
	printf '%s summary: %s\n' - "$3"
	printf '%s files_changed: %s\n' - "$4"
	printf '%s next_suggestion: %s\n' - "$5"
	printf '%s loop_back_to: null\n' -
	printf 'DETAILED_OUTPUT:\n%s\n' "${6:-}"
}

# The issue this loop works on: the task text batch builds for a queue
# item starts "Execute solution SOL-... for issue ISS-... (queue ...".
# The prompt arrives on stdin, which stays open: read only up to that line.
issue_of_prompt() {
	ISSUE=
	while IFS= read -r -t 10 line; do
		case $line in
		"Execute "*" for issue "*)
			ISSUE=${line#* for issue }
			ISSUE=${ISSUE%% *}
			return 0 ;;
		esac
	done
	return 1
}
