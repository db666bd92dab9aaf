#!/bin/bash
# recipe-docs.sh: HACKING.md's recipes end with a man page line and a
# test; this holds them to it from the tables themselves, so a row added
# without them fails here: every metric family servemetrics.c writes, every
# MCP tool of mcp_tools, every socket verb of sock_verbs and every path of
# serve's route table is named in ccw-supervisor(1), and every MCP tool is
# called by an MCP test.
. "$(dirname "$0")/lib.sh"
t_watchdog 60

cd "$srcdir" || exit 99
MAN=man/ccw-supervisor.1

# rows FILE TABLE: the first string of each row of the C table TABLE.
rows() {
	perl -0777 -ne 'if (/\b\Q'"$2"'\E\[\]\s*=\s*\{(.*?)\n\};/s) {
	    my $t = $1; print "$1\n" while $t =~ /^\s*\{\s*(?:[A-Z_]+,\s*)?"([^"]+)"/mg }' "$1"
}

# named WHAT FILE NAMES...: one check that FILE names each of NAMES.
named() {
	local what=$1 file=$2 miss="" n
	shift 2
	for n in "$@"; do
		grep -qF -- "$n" "$file" || miss="$miss $n"
	done
	is "$miss" "" "$what: each named in $file ($# read from the table)"
}

METRICS=$(grep -o '"ccw_[a-z_]*"' supervisor/api/servemetrics.c | tr -d '"' | sort -u)
TOOLS=$(rows supervisor/api/mcptools.c mcp_tools)
VERBS=$(rows supervisor/api/sock.c sock_verbs)
# a route's path up to its first parameter (the page writes :id as ID)
ROUTES=$(rows supervisor/api/serve.c serve_routes | sed 's|/:.*||' | sort -u)

ok "$([ -n "$METRICS" ] && [ -n "$TOOLS" ] && [ -n "$VERBS" ] && [ -n "$ROUTES" ]; echo $?)" \
    "the tables were read (metrics, MCP tools, socket verbs, routes)"
# shellcheck disable=SC2086
named "metric families" "$MAN" $METRICS
# shellcheck disable=SC2086
named "MCP tools" "$MAN" $TOOLS
# shellcheck disable=SC2086
named "socket verbs" "$MAN" $VERBS
# A route is named by its path, or by the rest of it under an item of
# the page that names a prefix (".It Li /api/loops/v2" names its tasks).
miss=""
for r in $ROUTES; do
	grep -qF -- "$r" "$MAN" && continue
	found=""
	for pre in $(sed -n 's/^\.It Li \(\/[^ ]*\).*/\1/p' "$MAN"); do
		case $r in "$pre"/*) grep -qF -- "${r#"$pre"/}" "$MAN" && found=1 ;; esac
	done
	[ -n "$found" ] || miss="$miss $r"
done
is "$miss" "" "HTTP routes: each named in $MAN (read from the table)"
cat tests/node/mcp-stdio.mjs tests/regress/mcp-stdio.sh \
    tests/regress/serve-mcp.sh tests/regress/mcp-probe.py >"$T_TMP/mcptests" 2>/dev/null
# shellcheck disable=SC2086
named "MCP tools called by a test" "$T_TMP/mcptests" $TOOLS

# The check can fail: a row the page lacks is found.
miss=$(named "planted" "$MAN" ccw_no_such_family 2>&1 | grep -c '^not ok')
is "$miss" 1 "a metric the page lacks is reported"
t_done
