#!/bin/sh
# token_consumption.sh: the token_consumption diagnosis role of ccw-supervisor
# tune.  Looks for agents told to return whole documents (TKN-001) and for
# prompts that repeat the whole skill or its specs (TKN-002).
. ./roles/lib.sh
skill_enter token_consumption

META='{
 "TKN-001": {"description": "an agent returns a whole document instead of a short structured answer",
  "root_cause": "the prompt asks for the full text back",
  "impact": "every answer is as long as the document and lands in the orchestrator context",
  "suggested_fix": "let the agent write the document to a file and return its path and a short summary (output_minimization)",
  "recommendation": "return minimal JSON (output_minimization)"},
 "TKN-002": {"description": "a prompt repeats the whole skill or its specs",
  "root_cause": "static instructions are copied into every prompt",
  "impact": "the same text is paid for on every call",
  "suggested_fix": "keep static text in one template and pass only what changes (prompt_compression)",
  "recommendation": "extract static text into templates (prompt_compression)"}
}'

json=$({
	scan TKN-001 medium 'return (the |its )?(full|entire|complete|whole) (text|content|contents|output|file|document|report)'
	scan TKN-002 medium '(repeat|restate|copy|include) (the )?(whole|entire|full|complete) (skill\.md|skill|instructions|spec|specs)'
} | diagnose token_consumption "$META" '["TKN-001", "TKN-002"]') ||
    fail token_consumption "the scan failed"
finish "$json"
