#!/bin/sh
# init.sh: the init role.  Looks at the project (the sources, the test
# suite and how many of its tests fail now) and says what it found.  The
# prompt arrives on stdin; this script does not need it and leaves it.
. ./roles/result.sh
echo "== init: inspecting $(pwd)"
ls -l calc.sh tests/run.sh
tap=$(sh tests/run.sh 2>&1)
total=$(printf '%s\n' "$tap" | sed -n 's/^1\.\.//p')
failing=$(printf '%s\n' "$tap" | grep -c '^not ok')
echo "== the test suite has $total tests, $failing failing"
result init success "calc.sh and a suite of $total tests, $failing failing" \
    '[]' develop "Project: calc.sh (a four-function calculator) and
tests/run.sh (TAP).  Failing now: $failing of $total.
$(printf '%s\n' "$tap" | grep '^not ok')"
