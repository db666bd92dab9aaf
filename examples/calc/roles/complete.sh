#!/bin/sh
# complete.sh: the complete role.  Checks once more that the suite passes
# and sums up what the loop did.
. ./roles/result.sh
if sh tests/run.sh >/dev/null 2>&1; then
	result complete success "calculator fixed: subtraction computes a - b; the suite passes" \
	    '[]' null "calc.sh's '-' branch swapped its operands.  develop
rewrote it, validate ran the suite (tests/run.sh) and every test passed."
else
	result complete failed "the suite does not pass; not complete" '[]' develop
	exit 1
fi
