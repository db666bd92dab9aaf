# lib.sh: sourced by every regression test.  Gives a private temp dir that
# is removed on exit, a watchdog that kills the test (and only its own
# process group) if it hangs, and TAP output helpers.
set -u

: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
SUP="$top_builddir/ccw-supervisor"
WRK="$top_builddir/ccw-worker"
WRAP=${TESTS_WRAPPER:-}

T_N=0
T_FAILED=0
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ccw-test.XXXXXX")

t_cleanup() {
	[ -n "${T_WATCHDOG:-}" ] && kill "$T_WATCHDOG" 2>/dev/null
	rm -rf "$T_TMP"
}
trap t_cleanup EXIT

# t_watchdog SECONDS: abort the whole test if it runs longer.
t_watchdog() {
	local me=$$
	( sleep "$1"; echo "not ok - watchdog: test exceeded $1 s"; kill -TERM "$me" ) &
	T_WATCHDOG=$!
}

# ok COND_STATUS DESCRIPTION
ok() {
	T_N=$((T_N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $T_N - $2"
	else
		echo "not ok $T_N - $2"
		T_FAILED=$((T_FAILED + 1))
	fi
}

# is GOT WANT DESCRIPTION
is() {
	if [ "$1" = "$2" ]; then
		ok 0 "$3"
	else
		ok 1 "$3"
		echo "#   got '$1', want '$2'"
	fi
}

# like TEXT REGEX DESCRIPTION
like() {
	if printf '%s' "$1" | grep -Eq -- "$2"; then
		ok 0 "$3"
	else
		ok 1 "$3"
		printf '#   %s\n' "got: $(printf '%s' "$1" | head -c 300)"
	fi
}

t_done() {
	echo "1..$T_N"
	[ "$T_FAILED" -eq 0 ]
}
