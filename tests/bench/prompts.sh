#!/bin/bash
# prompts.sh: the prompt-size figure of `make bench` (DESIGN.md section 11).
# Runs one auto loop of bash roles that record the prompt each worker got
# on stdin, and prints "ITERATION OURS CCW" for every develop worker, where
# CCW is what CCW's template would send at the same moment: the task plus
# the whole state file pretty-printed (JSON.stringify(state, null, 2)).
# usage: prompts.sh SUPERVISOR DIR MAX_ITERATIONS
sup=$1 d=$2 max=${3:-10}
mkdir -p "$d/.loop" "$d/prompts" || exit 1
cd "$d" || exit 1

# Each role saves its prompt and the state file it was started against,
# then answers like a busy project: validate fails two of twenty tests
# until the last iteration, debug brings three hypotheses.
cat >role.sh <<'ROLE'
role=$1
n=$(ls prompts | grep -c txt)
# A bash tool's stdin stays open for live input: the prompt is what
# arrives before the first quiet 300 ms.
while IFS= read -r -t 0.3 line; do printf '%s\n' "$line"; done >"prompts/$n.$role.txt"
cp .loop/loop-*.json "prompts/$n.$role.state" 2>/dev/null
case $role in
validate)
	echo "WORKER_RESULT:"
	echo "- action: validate"
	echo "- status: failed"
	echo "- summary: 2 of 20 tests fail"
	echo "- files_changed: []"
	echo "- next_suggestion: develop"
	echo "- loop_back_to: develop"
	echo "DETAILED_OUTPUT:"
	echo "1..20"
	i=1
	while [ $i -le 20 ]; do
		if [ $i -gt 18 ]; then echo "not ok $i - case number $i of the parser"
		else echo "ok $i - case number $i of the parser"; fi
		i=$((i + 1))
	done ;;
debug)
	echo "WORKER_RESULT:"
	echo "- action: debug"
	echo "- status: success"
	echo "- summary: the tokenizer drops the last character of a quoted string"
	echo "- files_changed: []"
	echo "- next_suggestion: validate"
	echo "- loop_back_to: null"
	echo "DETAILED_OUTPUT:"
	echo '[{"description":"off-by-one in the quoted-string scanner","testable_condition":"a string ending in an escaped quote","logging_point":"src/lex.c:120","evidence_criteria":{"confirm":"last byte missing","reject":"all bytes kept"},"likelihood":1,"status":"confirmed"},{"description":"buffer too small for long strings","testable_condition":"strings over 4 KiB","logging_point":"src/buf.c:40","evidence_criteria":{"confirm":"truncation at 4096","reject":"no truncation"},"likelihood":2,"status":"rejected"},{"description":"locale-dependent isalpha","testable_condition":"LANG=tr_TR","logging_point":"src/lex.c:88","evidence_criteria":{"confirm":"differs by locale","reject":"same output"},"likelihood":3,"status":"pending"}]' ;;
*)
	echo "WORKER_RESULT:"
	echo "- action: $role"
	echo "- status: success"
	echo "- summary: $role step done on the parser"
	echo '- files_changed: ["src/lex.c", "src/parse.c", "tests/parser.t"]'
	echo "- next_suggestion: validate"
	echo "- loop_back_to: null"
	echo "DETAILED_OUTPUT:"
	echo "Reworked the scanner of quoted strings and added cases to tests/parser.t." ;;
esac
ROLE
python3 - "$max" <<'PY'
import json, sys
roles = {r: {"tool": "bash", "command": "bash role.sh " + r, "timeout_ms": 60000}
         for r in ["init", "develop", "debug", "validate", "complete"]}
json.dump({"default_tool": "bash", "roles": roles},
          open(".loop/config.json", "w"), indent=1)
PY
"$sup" run -m auto -n "$max" -C "$d" \
    "Fix the parser: quoted strings that end in an escaped quote lose their last character, and long strings are cut at 4 KiB. Keep the public API unchanged and add tests for both cases." \
    >/dev/null 2>&1
python3 - <<'PY'
import glob, json, os, re
task_re = re.compile(r"Fix the parser:.*?both cases\.", re.S)
for p in sorted(glob.glob("prompts/*.develop.txt"),
                key=lambda s: int(os.path.basename(s).split(".")[0])):
    text = open(p, encoding="utf-8", errors="replace").read()
    m = re.search(r"iteration (\d+)", text)
    st = p[:-len(".txt")] + ".state"
    if not m or not os.path.exists(st):
        continue
    state = json.load(open(st))
    task = task_re.search(text)
    ccw = len(json.dumps(state, indent=2, ensure_ascii=False).encode()) + \
        (len(task.group(0).encode()) if task else 0)
    print(m.group(1), len(text.encode()), ccw)
PY
