#!/bin/sh
# memory.sh: the memory diagnosis role of ccw-supervisor tune.  Looks for
# facts the skill keeps only in the conversation (MEM-001: high when no
# phase writes a state file, medium otherwise) or only "in memory" (MEM-002).
. ./roles/lib.sh
skill_enter memory

META='{
 "MEM-001": {"description": "user input is remembered from the conversation instead of a state file",
  "root_cause": "the phase relies on the conversation to carry the user constraints to later phases",
  "impact": "after a compaction or a resumed session the constraints are lost and later phases ignore them",
  "suggested_fix": "write the constraints to state.json and read them back in every later phase (structured_state)",
  "recommendation": "persist user input in state.json (structured_state, checkpoint_restore)"},
 "MEM-002": {"description": "phase results are held in memory only",
  "root_cause": "results are kept in the context window, not written down",
  "impact": "a resumed run cannot find them",
  "suggested_fix": "write results to a file in the work dir and pass its path",
  "recommendation": "write intermediate results to files (checkpoint_restore)"}
}'

# "Only in the conversation": worse when no phase writes any state file.
if scan STATE none '(write|save|persist|store)[^.]*state\.json' | grep -q .; then
	sev=medium
else
	sev=high
fi
json=$({
	scan MEM-001 "$sev" '(remember|recall|keep in mind|memori[sz]e)[^.]*(conversation|chat|earlier|above)'
	scan MEM-002 medium '(keep|hold)[^.]* in (your )?(memory|context window)'
} | diagnose memory_loss "$META" '["MEM-001", "MEM-002"]') ||
    fail memory "the scan failed"
finish "$json"
