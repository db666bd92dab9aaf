#!/bin/bash
# init.sh: the init role.  Says which issue the loop works on and what
# the library holds now.
. ./roles/result.sh
issue_of_prompt || { result init failed "no issue in the task" '[]' complete; exit 1; }
echo "== init: issue $ISSUE; lib/ holds: $(ls lib | tr '\n' ' ')"
result init success "issue $ISSUE; $(ls lib | wc -l) library files" '[]' develop
