#!/bin/sh
# context.sh: the context diagnosis role of ccw-supervisor tune.  Looks in
# the skill's markdown for prompts that grow without bound: whole files
# inlined into an agent's prompt (CTX-001), the whole history passed on (CTX-002).
. ./roles/lib.sh
skill_enter context

META='{
 "CTX-001": {"description": "agent prompts inline the full content of files instead of passing their paths",
  "root_cause": "the phase pastes every collected file into each prompt",
  "impact": "each prompt grows with the project; agents hit the context limit and lose instructions",
  "suggested_fix": "pass the file paths and let the agent read a file on demand (lazy_loading)",
  "recommendation": "pass paths, not contents"},
 "CTX-002": {"description": "prompts carry the whole conversation or every earlier output",
  "root_cause": "history is appended to each prompt instead of being summarized",
  "impact": "prompt size grows every step",
  "suggested_fix": "keep a short summary or a sliding window of recent results",
  "recommendation": "summarize history (context_summarization, sliding_window)"}
}'

json=$({
	scan CTX-001 high '\$\(cat |(full|entire|whole|complete) (content|contents|text) of (every|each|all)|paste (the )?(whole|entire|full) (file|files|content|contents)'
	scan CTX-002 medium '(entire|full|whole|complete) (conversation|chat) history|all (the )?previous (agent )?(outputs|results|responses)'
} | diagnose context_explosion "$META" '["CTX-001", "CTX-002"]') ||
    fail context "the scan failed"
finish "$json"
