#!/bin/bash
# cli-qwen.sh: the e2e cases with the real opencode CLI (tests/e2e/lib.sh).
. "$(dirname "$0")/lib.sh"
e2e_begin opencode
e2e_cases_all
e2e_end
