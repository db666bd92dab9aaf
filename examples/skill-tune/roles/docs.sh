#!/bin/sh
# docs.sh: the docs diagnosis role of ccw-supervisor tune.  Reads every
# `interface NAME { field: type; }` block of the skill's markdown; a field
# typed differently in two files is a conflict (DOC-CON-001, an issue of
# type dataflow_break), an interface copied unchanged is a redundancy
# (DOC-RED-001, type token_consumption).  A conflict subsumes a redundancy.
. ./roles/lib.sh
skill_enter docs

# fields: one record per top-level field: name US field US type US file US line US text
fields() {
	md_files | while IFS= read -r f; do
		F=$f awk '
		!d && match($0, /^[ \t]*(export[ \t]+)?interface[ \t]+[A-Za-z_][A-Za-z0-9_]*/) {
			s = substr($0, RSTART, RLENGTH); sub(/.*[ \t]/, "", s)
			name = s; d = 0
		}
		name != "" {
			if (d == 1 && match($0, /^[ \t]*[A-Za-z_][A-Za-z0-9_]*\??[ \t]*:/)) {
				k = substr($0, RSTART, RLENGTH); gsub(/[ \t?:]/, "", k)
				t = substr($0, RSTART + RLENGTH); sub(/\/\/.*/, "", t)
				printf "%s\037%s\037%s\037%s\037%s\037%s\n", name, k, t, ENVIRON["F"], FNR, $0
			}
			o = gsub(/\{/, "{"); c = gsub(/\}/, "}"); d += o - c
			if (d <= 0 && (o || c)) name = ""
		}' "$f"
	done
}

recs=$(fields) || fail docs "could not read the specs"
json=$(printf '%s\n' "$recs" | jq -R -s -c --argjson t0 "$START_MS" '
	def norm: gsub("[\\s;]"; "") | split("|") | map(select(length > 0)) | sort | join("|");
	[split("\n")[] | select(length > 0) | split("\u001f") |
	 {name: .[0], field: .[1], type: (.[2] | sub("^\\s+"; "") | sub("[\\s;]+$"; "")),
	  norm: (.[2] | norm), file: .[3], line: (.[4] | tonumber),
	  text: (.[5] | sub("^\\s+"; ""))}] as $f
	# conflicts: the same name.field in two files with different types
	| [$f | group_by([.name, .field])[] | select((map(.file) | unique | length) > 1
	     and (map(.norm) | unique | length) > 1) | sort_by(.file)] as $cg
	| ($cg | to_entries | map(.value as $g | {
	     id: "DOC-CON-\(.key + 1 | tostring | ("00" + .)[-3:])",
	     type: "definition", files: ($g | map(.file) | unique),
	     key: "\($g[0].name).\($g[0].field)",
	     definitions: ($g | map({file, value: .type, location: "line \(.line)"})),
	     resolution_suggestion: "define \($g[0].name) once, in one spec, and reference it from the others"})) as $conf
	# redundancies: an interface in two files with no conflicting field
	| ($cg | map(.[0].name) | unique) as $bad
	| [$f | group_by(.name)[] | select((map(.file) | unique | length) > 1
	     and ((.[0].name) as $n | $bad | index([$n]) | not))] as $rg
	| ($rg | to_entries | map(.value as $g | {
	     id: "DOC-RED-\(.key + 1 | tostring | ("00" + .)[-3:])", type: "type_definition",
	     files: ($g | map(.file) | unique),
	     description: "interface \($g[0].name) is copied in \($g | map(.file) | unique | join(" and "))",
	     severity: "low", merge_suggestion: "keep one copy and link to it"})) as $red
	| (($cg | map(map({file, line, pattern: "DOC-CON-001", context: .text, severity: "medium"})) | add // [])
	  + ($rg | map(map({file, line, pattern: "DOC-RED-001", context: .text, severity: "low"})) | add // [])) as $ev
	| (($cg | map({type: "dataflow_break", severity: "medium",
	     location: {file: .[0].file, line_start: .[0].line},
	     description: "\(.[0].name).\(.[0].field) is defined differently in \(map(.file) | unique | join(" and "))",
	     evidence: map("\(.file):\(.line): \(.text)"),
	     root_cause: "the schema is written out in more than one spec and the copies drifted apart",
	     impact: "a phase that follows one spec writes values the other spec rejects",
	     suggested_fix: "keep one definition of \(.[0].name) and reference it from the other spec (state_centralization)"}))
	  + ($rg | map(sort_by(.file, .line) | {type: "token_consumption", severity: "low",
	     location: {file: .[0].file, line_start: .[0].line},
	     description: "interface \(.[0].name) is copied in \(map(.file) | unique | join(" and "))",
	     evidence: (group_by(.file) | map(.[0] | "\(.file):\(.line): \(.text)")),
	     root_cause: "the same definition is copied", impact: "every copy is loaded into the context",
	     suggested_fix: "keep one copy and link to it (state_field_reduction)"}))) as $is
	| {ev: $ev, is: $is, conf: $conf, red: $red}') || fail docs "could not compare the definitions"

rec='[]'
[ "$(printf '%s' "$json" | jq '.is | length')" -gt 0 ] &&
    rec='["define each schema once and reference it (state_centralization)"]'
env=$(envelope "$(printf '%s' "$json" | jq -c .ev)" "$(printf '%s' "$json" | jq -c .is)" \
    "$rec" '["DOC-CON-001", "DOC-RED-001"]') || fail docs "could not build the result"
out=$(printf '%s' "$json" | jq -c --argjson e "$env" '$e + {redundancies: .red, conflicts: .conf}') ||
    fail docs "could not build the result"
finish "$out"
