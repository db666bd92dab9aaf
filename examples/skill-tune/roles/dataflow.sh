#!/bin/sh
# dataflow.sh: the dataflow diagnosis role of ccw-supervisor tune.  Looks
# for phase hand-offs with no format (DF-001) and for a .json file that a
# phase reads but no phase writes (DF-002).
. ./roles/lib.sh
skill_enter dataflow

META='{
 "DF-001": {"description": "a phase hands its results on in free form",
  "root_cause": "no format is stated for what the next phase reads",
  "impact": "the next phase parses guesses; fields get lost between phases",
  "suggested_fix": "state a JSON schema for the hand-off and validate it (schema_enforcement)",
  "recommendation": "give every hand-off a schema (schema_enforcement)"},
 "DF-002": {"description": "a phase reads a .json file that no phase writes",
  "root_cause": "the producer of the file was renamed, removed or never written",
  "impact": "the reading phase fails or works on stale data",
  "suggested_fix": "make an earlier phase write the file, or read the file that is written",
  "recommendation": "check every read file has a writer (state_centralization)"}
}'

# DF-002: the .json names on lines that read (R) or write (W) them.
io() {
	md_files | while IFS= read -r f; do
		F=$f awk '{ l = tolower($0); s = $0
		    r = l ~ /(^|[^a-z])(read|reads|load|loads)([^a-z]|$)/
		    w = l ~ /(^|[^a-z])(write|writes|save|saves|store|stores|persist)([^a-z]|$)/
		    while (match(s, /[A-Za-z0-9_.\/-]+\.json/)) {
			n = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
			if (r) printf "R\037%s\037%s\037%s\037%s\n", n, ENVIRON["F"], FNR, $0
			if (w) printf "W\037%s\n", n
		    } }' "$f"
	done
}
unwritten() {
	io | awk -F '\037' '$1 == "W" { w[$2] = 1; next }
	    { n++; name[n] = $2; rec[n] = $3 "\037" $4 "\037DF-002\037high\037" $5 }
	    END { for (i = 1; i <= n; i++) if (!(name[i] in w)) print rec[i] }'
}
json=$({
	scan DF-001 medium '(free[- ]form|free text|any format|unstructured) (text|output|answer|result)'
	unwritten
} | diagnose dataflow_break "$META" '["DF-001", "DF-002"]') ||
    fail dataflow "the scan failed"
finish "$json"
