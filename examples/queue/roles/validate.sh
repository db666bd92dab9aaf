#!/bin/bash
# validate.sh: the validate role.  Runs the suite (TAP, which the
# supervisor reads into the loop's test results); success when it passes.
. ./roles/result.sh
issue_of_prompt
if bash tests/run.sh; then
	result validate success "$ISSUE: the suite passes" '[]' complete
else
	result validate failed "$ISSUE: a test fails" '[]' develop
	exit 1
fi
