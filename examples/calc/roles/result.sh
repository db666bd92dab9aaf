# result.sh: sourced by the role scripts.  Prints the block ccw-worker
# parses from the end of a role's output (DESIGN.md section 5):
#   result ACTION STATUS SUMMARY FILES_JSON NEXT [DETAIL]
# FILES_JSON is a JSON array of paths relative to the project root.
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
