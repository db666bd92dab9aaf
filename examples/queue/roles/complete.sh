#!/bin/bash
# complete.sh: the complete role.  Sums up.
. ./roles/result.sh
issue_of_prompt
result complete success "$ISSUE done" '[]' complete
