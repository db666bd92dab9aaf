#!/bin/sh
# agent.sh: the agent diagnosis role of ccw-supervisor tune.  Finds every
# agent call (a Task( call, or "spawn/launch ... agent") whose next lines
# state no output contract (AGT-001), and unbounded retries (AGT-002).
. ./roles/lib.sh
skill_enter agent

META='{
 "AGT-001": {"description": "an agent call states no output contract",
  "root_cause": "the prompt says what to do but not what to return",
  "impact": "each agent answers in its own shape; the orchestrator cannot parse or check the results",
  "suggested_fix": "end the prompt with the exact return format (a JSON schema) and validate the answer",
  "recommendation": "give every agent call a return format (schema_enforcement, output_minimization)"},
 "AGT-002": {"description": "an agent call is retried without a bound",
  "root_cause": "the failure path retries forever",
  "impact": "a failing agent loops and burns tokens",
  "suggested_fix": "retry at most N times, then record the error in the state",
  "recommendation": "bound retries and record failures (orchestrator_refactor)"}
}'

# AGT-001: a call opens a window of W lines (a call line inside it extends
# it; a heading ends it).  No contract word in the window: report the call.
uncontracted() {
	md_files | while IFS= read -r f; do
		F=$f awk -v W=6 '
		function flush() {
			if (open && !ok)
				printf "%s\037%s\037AGT-001\037medium\037%s\n", ENVIRON["F"], start, text
			open = 0
		}
		{ l = tolower($0) }
		open && ($0 ~ /^#/ || FNR > last + W) { flush() }
		l ~ /task\(|subagent_type|(spawn|launch) (an?|one|the)( [a-z-]+)? agent/ {
			if (!open) { open = 1; ok = 0; start = FNR; text = $0 }
			last = FNR
		}
		open && l ~ /returns?[ :]|respond(s)? with|reply with|output (format|contract|schema)|must (output|print)/ { ok = 1 }
		END { flush() }' "$f"
	done
}
json=$({
	uncontracted
	scan AGT-002 high 'retry (forever|indefinitely|until it (succeeds|works))|until (it|the agent) succeeds'
} | diagnose agent_failure "$META" '["AGT-001", "AGT-002"]') ||
    fail agent "the scan failed"
finish "$json"
