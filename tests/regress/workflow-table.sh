#!/bin/bash
# workflow-table.sh: workflows are reached through one table
# (supervisor/workflows/workflows.c): no file of supervisor/cmd or
# supervisor/api names a symbol a workflow's folder exports (its table,
# state table, driver), every row is a folder, and `state` checks,
# shows and rebuilds a loop with the table of the workflow its file
# names in "workflow" (CCW's files name none: the first row, ccw-loop).
. "$(dirname "$0")/lib.sh"
t_watchdog 60
cd "$srcdir" || exit 99

# What the folders export as tables, from their headers (none is spelled
# here: a new folder's are checked as soon as it exists).
syms=$(sed -n 's/^extern const struct workflow[a-z_]* \([A-Za-z0-9_]*\);.*/\1/p' \
    supervisor/workflows/*/*.h | sort -u)
ok $([ "$(wc -w <<<"$syms")" -ge 3 ]; echo $?) \
    "the folders export their tables ($(echo $syms))"
hits=""
for s in $syms; do
	h=$(grep -lw -- "$s" supervisor/cmd/*.[ch] supervisor/api/*.[ch] \
	    2>/dev/null | tr '\n' ' ')
	[ -n "$h" ] && hits="$hits $s: $h;"
done
is "$hits" "" "cmd/ and api/ name no workflow's table (they look it up)"

# Every row of the one table is a folder named as the row.
rows=$(sed -n '/workflow_table\[\] = {/,/};/s/^[[:space:]]*&\([A-Za-z0-9_]*\),.*/\1/p' \
    supervisor/workflows/workflows.c 2>/dev/null)
ok $([ -n "$rows" ]; echo $?) "workflows.c has the table ($(echo $rows))"
bad=""
for r in $rows; do
	name=$(grep -h -A2 "^const struct workflow $r = {" \
	    supervisor/workflows/*/*.c | sed -n 's/.*\.name = "\([^"]*\)".*/\1/p')
	[ -n "$name" ] && [ -d "supervisor/workflows/$name" ] ||
	    bad="$bad $r(${name:-no name})"
done
is "$bad" "" "each row's name is its folder"

# A state file is read with the table of the workflow it names.
R=$T_TMP/root
mkdir -p "$R"
st() { $WRAP "$SUP" state -C "$R" "$@"; }
id=$(st create "named" --loop-id wf-1)
is "$?" 0 "create exits 0"
is "$(jget "$R/.loop/wf-1.json" '"workflow" in d')" "false" \
    "a new loop's file is CCW's: no workflow member"
out=$(st validate wf-1); is "$?" 0 "a file naming no workflow is ccw-loop's"
python3 - "$R/.loop/wf-1.json" "$T_TMP/named.json" "$T_TMP/other.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["workflow"] = "ccw-loop"
json.dump(d, open(sys.argv[2], "w"), indent=2)
d["workflow"] = "no-such-flow"
json.dump(d, open(sys.argv[3], "w"), indent=2)
EOF
out=$(st validate "$T_TMP/named.json"); rc=$?
is "$rc" 0 "a file naming ccw-loop validates with its table"
out=$(st validate "$T_TMP/other.json" 2>&1); rc=$?
is "$rc" 1 "a file naming a workflow this build lacks is refused"
like "$out" "unknown workflow 'no-such-flow'" "and the message names it"
cp "$T_TMP/other.json" "$R/.loop/wf-1.json"
out=$(st show wf-1 2>&1); rc=$?
is "$rc" 1 "show refuses it too"
like "$out" "unknown workflow 'no-such-flow'" "naming it"
out=$(st rebuild wf-1 2>&1); rc=$?
is "$rc" 1 "rebuild refuses to rewrite it with another workflow's table"
cmp -s "$T_TMP/other.json" "$R/.loop/wf-1.json"
ok $? "the file is untouched"
t_done
