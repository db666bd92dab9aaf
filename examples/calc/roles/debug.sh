#!/bin/sh
# debug.sh: the debug role.  Reproduces the failure and states a testable
# hypothesis as the JSON list ccw-supervisor reads into
# skill_state.debug.hypotheses.  It may run after develop (auto mode) or
# beside it (parallel mode): a fixed '-' branch that makes 5 - 3 give 2
# confirms the hypothesis as well as the bug itself does.
. ./roles/result.sh
got=$(sh calc.sh 5 - 3 2>&1)
echo "== debug: calc.sh 5 - 3 -> $got"
if grep -q "expr='b - a'" calc.sh; then
	verdict="calc.sh 5 - 3 gives $got and the '-' branch reads expr='b - a'"
	summary="H1 confirmed: subtraction swaps its operands (5 - 3 gave $got)"
	next=develop
else
	verdict="the '-' branch now computes a - b and 5 - 3 gives $got: swapping the operands back is the fix"
	summary="H1 confirmed by the fix: subtraction had its operands swapped"
	next=validate
fi
result debug success "$summary" '[]' "$next" \
"{\"hypotheses\": [{\"description\": \"subtraction swaps its operands (computes b - a)\", \
\"testable_condition\": \"calc.sh 5 - 3 prints -2 instead of 2\", \
\"logging_point\": \"calc.sh, the '-' branch of the case\", \
\"evidence_criteria\": {\"confirm\": \"5 - 3 gives -2, or gives 2 once the branch computes a - b\", \
\"reject\": \"5 - 3 gives 2 with the branch still reading b - a\"}, \
\"likelihood\": 1, \"status\": \"confirmed\", \
\"evidence\": {\"calc.sh 5 - 3\": \"$got\"}, \"verdict_reason\": \"$verdict\"}]}"
