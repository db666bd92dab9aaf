#!/bin/bash
# batch-queue.sh: `ccw-supervisor batch` over CCW's issue queue, on copies
# of examples/queue (P1: S-1, S-2 parallel; S2: S-3 after S-1, then S-4):
# group order and depends_on in the events; the queue file, index.json,
# issues.jsonl and issue-history.jsonl as CCW's tools leave them; a
# failed dependency blocks; a completed item is not run again; kill -9
# then --resume runs no completed item again; malformed queues refused
# before anything starts.
. "$(dirname "$0")/lib.sh"
t_watchdog 90
t_valgrind_worker
t_slack
t_marker MARK queue

Q=.workflow/issues/queues/QUE-20260201-120000.json
RUNLOG=$T_TMP/runs.log
export RUNLOG
: >"$RUNLOG"

# copy NAME: a fresh copy of the example in $T_TMP/NAME ($C): every
# role's command carries $MARK (its processes can be waited for) and
# logs "ROLE.sh ISSUE" to $RUNLOG once it knows its issue, then sleeps
# $ROLE_SLEEP; the queue and one item gain members CCW does not know.
copy() {
	C=$T_TMP/$1
	cp -R "$srcdir/examples/queue" "$C"
	sed -i "s|\(bash roles/[a-z]*\.sh\)\"|\1 $MARK\"|" "$C/.loop/config.json"
	sed -i 's|^\(\t*\)return 0 ;;$|\1echo "${0##*/} $ISSUE" >>"$RUNLOG"; sleep "${ROLE_SLEEP:-0}"\n&|' \
	    "$C/roles/result.sh"
	python3 - "$C/$Q" <<'EOF'
import json, sys
q = json.load(open(sys.argv[1]))
q["x_unknown"] = {"kept": [1, 2.5, "three"]}
q["solutions"][1]["x_note"] = "kept too"
open(sys.argv[1], "w").write(json.dumps(q, indent=2, ensure_ascii=False))
EOF
}
# runs ISSUE: how many role scripts ran for it so far
runs() { grep -c " $1\$" "$RUNLOG"; }
bid() { sed -n 's/.*batch: \(started\|resuming\) \(batch-[0-9T]*-[0-9a-f]*\):.*/\2/p' "$1" | head -n 1; }
# order OUT: "S-1<S-2" style facts from the --json events: for items A, B
# "A.s<B.e" means A started before B ended.
order() {
	python3 - "$1" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
s, e = {}, {}
for n, x in enumerate(ev):
    if x["event"] == "item_started": s.setdefault(x["item_id"], n)
    if x["event"] == "item_done": e.setdefault(x["item_id"], n)
def lt(a, b): return a is not None and b is not None and a < b
print(" ".join([
    "par" if lt(s.get("S-1"), e.get("S-2")) and lt(s.get("S-2"), e.get("S-1")) else "notpar",
    "s3after" if lt(e.get("S-1"), s.get("S-3")) and lt(e.get("S-2"), s.get("S-3")) else "s3early",
    "s4after" if lt(e.get("S-3"), s.get("S-4")) else "s4early",
    ",".join(sorted(s))]))
EOF
}
# pyq CODE: python over the copy $C: q the queue, ix index.json, text
# the queue file's text, ixt index.json's, iss/hist the JSONL lines
# (raw), orig/orig_iss the example's queue and issues
pyq() {
	python3 - "$C" "$srcdir/examples/queue" "$1" <<'EOF'
import json, re, sys
c, ex, code = sys.argv[1:4]
qp = c + "/.workflow/issues/queues/QUE-20260201-120000.json"
text = open(qp).read(); q = json.loads(text)
ixt = open(c + "/.workflow/issues/queues/index.json").read(); ix = json.loads(ixt)
def lines(p):
    try: return [l for l in open(p).read().split("\n") if l]
    except FileNotFoundError: return None
iss = lines(c + "/.workflow/issues/issues.jsonl")
hist = lines(c + "/.workflow/issues/issue-history.jsonl")
orig = json.load(open(ex + "/.workflow/issues/queues/QUE-20260201-120000.json"))
orig_iss = {json.loads(l)["id"]: json.loads(l) for l in lines(ex + "/.workflow/issues/issues.jsonl")}
it = {s["item_id"]: s for s in q["solutions"]}
iso = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
js = lambda o: json.dumps(o, indent=2, ensure_ascii=False)
line = lambda o: json.dumps(o, separators=(",", ":"), ensure_ascii=False)
print(eval(code))
EOF
}

# --- 1. the whole queue on a clean copy
copy one
timeout -k 2 60 $WRAP "$SUP" batch "$C/$Q" -C "$C" --json >"$C.out" 2>"$C.err"
is "$?" 0 "queue: exit 0"
ID=$(bid "$C.err")
like "$ID" '^batch-[0-9]{8}T[0-9]{6}-[0-9a-f]{8}$' "queue: the batch id printed ($ID)"
is "$(order "$C.out")" "par s3after s4after S-1,S-2,S-3,S-4" \
    "events: S-1 and S-2 both started before either ended; S-3 after both; S-4 after S-3"
is "$(pyq '[q["status"], sorted(set(s["status"] for s in q["solutions"])), all(iso.match(s.get("started_at", "")) and iso.match(s.get("completed_at", "")) for s in q["solutions"])]')" \
    "['completed', ['completed'], True]" "queue file: every item completed (started_at, completed_at), the queue completed"
is "$(pyq '[q["_metadata"][k] for k in ("version", "queue_type", "total_tasks", "pending_count", "executing_count", "completed_count", "failed_count")] + [bool(iso.match(q["_metadata"]["updated_at"])), q["_metadata"]["updated_at"] >= max(s["completed_at"] for s in q["solutions"])]')" \
    "['2.1', 'solution', 4, 0, 0, 4, 0, True, True]" "queue file: _metadata counts and updated_at as writeQueue sets them, the rest kept"
is "$(pyq '[q["x_unknown"], it["S-2"]["x_note"], text == js(q), {k: v for k, v in q.items() if k not in ("status", "solutions", "_metadata")} == dict({k: v for k, v in orig.items() if k not in ("status", "solutions", "_metadata")}, x_unknown=q["x_unknown"]), [{k: v for k, v in s.items() if k not in ("status", "started_at", "completed_at")} for s in q["solutions"]] == [dict(s, **({"x_note": "kept too"} if s["item_id"] == "S-2" else {})) for s in [{k: v for k, v in s.items() if k != "status"} for s in orig["solutions"]]]]')" \
    "[{'kept': [1, 2.5, 'three']}, 'kept too', True, True, True]" \
    "queue file: unknown members kept, nothing else changed, JSON.stringify(q, null, 2)'s text"
is "$(pyq '[ix["active_queue_id"], len(ix["queues"]), ix["queues"][0]["status"], ix["queues"][0]["total_solutions"], ix["queues"][0]["completed_solutions"], bool(iso.match(ix["queues"][0].get("completed_at", ""))), ix["queues"][0]["issue_ids"] == q["issue_ids"], ixt == js(ix)]')" \
    "['QUE-20260201-120000', 1, 'completed', 4, 4, True, True, True]" "index.json in step: completed, 4 of 4, completed_at"
is "$(pyq '[iss, len(hist), sorted(json.loads(l)["id"] for l in hist) == sorted(orig_iss), all(l == line(json.loads(l)) for l in hist)]')" \
    "[[], 4, True, True]" "issues.jsonl emptied, each issue moved to issue-history.jsonl (one JSON.stringify line)"
is "$(pyq 'all(list(h) == list(orig_iss[h["id"]]) + ["completed_at"] and h["status"] == "completed" and h["completed_at"] == h["updated_at"] and iso.match(h["updated_at"]) and {k: v for k, v in h.items() if k not in ("status", "updated_at", "completed_at")} == {k: v for k, v in orig_iss[h["id"]].items() if k not in ("status", "updated_at")} for h in map(json.loads, hist))')" \
    True "issue-history.jsonl: updateIssue's {...issue, status, completed_at, updated_at}, the rest kept"
S=$C/.workflow/.batch/$ID/state.json
is "$(jget "$S" '[d["status"], d["phase"], sorted(d["issues"]), sorted(set((v["status"], v["executed_at"] is not None) for v in d["issues"].values())), [e["solution_id"] for e in d["queue"]], d["context"]["total_issues"], d["context"]["completed_count"], d["context"]["failed_count"]]')" \
    '["completed","complete",["ISS-20260201-001","ISS-20260201-002","ISS-20260201-003","ISS-20260201-004"],[["completed",true]],["SOL-ISS-20260201-001-1","SOL-ISS-20260201-002-1","SOL-ISS-20260201-003-1","SOL-ISS-20260201-004-1"],4,4,0]' \
    "state.json (seed 001): issues{} by issue id completed with executed_at, queue[] the solutions"
(cd "$C" && sh tests/run.sh) >"$C.suite" 2>&1
is "$?:$(grep -c '^ok' "$C.suite")" "0:5" "the project's own suite passes (5 tests)"

# --- 2. S-1's develop always fails: S-3 blocked, S-2 and S-4 still run
copy fail
sed -i 's|^ISS-20260201-001)$|&\n\tresult develop failed "upper is broken on purpose" "[]" debug; exit 1|' \
    "$C/roles/develop.sh"
: >"$RUNLOG"
timeout -k 2 60 $WRAP "$SUP" batch "$C/$Q" -C "$C" --json --junit "$C.xml" \
    >"$C.out" 2>"$C.err"
is "$?" 1 "a failed dependency: exit 1"
is "$(order "$C.out" | cut -d' ' -f4)" "S-1,S-2,S-4" "S-3 never started; S-2 and S-4 did"
is "$(runs ISS-20260201-003):$(jget "$C/$Q" '[s["depends_on"] for s in d["solutions"] if s["item_id"] == "S-4"][0]')" \
    "0:[]" "S-3's roles never ran (S-4 depends on nothing, so it ran)"
is "$(pyq '[it[i]["status"] for i in ("S-1", "S-2", "S-3", "S-4")] + [q["status"], q["_metadata"]["completed_count"], q["_metadata"]["failed_count"], q["_metadata"]["pending_count"]]')" \
    "['failed', 'completed', 'blocked', 'completed', 'active', 2, 1, 0]" \
    "queue file: S-1 failed, S-3 blocked, S-2 and S-4 completed; counts"
is "$(pyq '[set(it["S-1"]["failure_details"]) <= {"task_id", "error_type", "message", "timestamp"}, it["S-1"]["failure_details"]["error_type"], "broken on purpose" in it["S-1"]["failure_details"]["message"], it["S-1"]["failure_reason"] == it["S-1"]["failure_details"]["message"], bool(iso.match(it["S-1"]["failure_details"]["timestamp"]))]')" \
    "[True, 'execution_error', True, True, True]" \
    "queue file: S-1's failure_details {task_id?, error_type, message, timestamp}, failure_reason its message"
is "$(pyq '[it["S-3"]["failure_details"]["error_type"], "S-1" in it["S-3"]["failure_reason"], "started_at" in it["S-3"], "completed_at" in it["S-3"]]')" \
    "['dependency', True, False, False]" "queue file: S-3 blocked says why (S-1), never started"
is "$(pyq '[json.loads(l)["status"] for l in iss]')" "['failed', 'queued']" \
    "issues.jsonl: ISS-001 failed, ISS-003 still queued (the completed two moved)"
is "$(python3 -c '
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot()
s = s if s.tag == "testsuite" else s.find("testsuite")
tc = {t.get("name").split(":")[0]: t for t in s.findall("testcase")}
f = tc["S-1"].find("failure")
print(f is not None and "broken on purpose" in (f.get("message") or "") + (f.text or ""),
    tc["S-3"].find("failure") is not None or tc["S-3"].find("skipped") is not None,
    len(tc["S-2"]) == 0 and len(tc["S-4"]) == 0)' "$C.xml")" \
    "True True True" "--junit: S-1 a failure with its reason, S-3 not passed, S-2 and S-4 passed"

# --- 3. an item already completed in the queue file is not run again
copy done
python3 - "$C/$Q" <<'EOF'
import json, sys
q = json.load(open(sys.argv[1]))
q["solutions"][1]["status"] = "completed"
open(sys.argv[1], "w").write(json.dumps(q, indent=2))
EOF
: >"$RUNLOG"
timeout -k 2 60 $WRAP "$SUP" batch "$C/$Q" -C "$C" --json >"$C.out" 2>"$C.err"
is "$?" 0 "S-2 completed beforehand: exit 0"
is "$(runs ISS-20260201-002):$(order "$C.out" | cut -d' ' -f4)" "0:S-1,S-3,S-4" \
    "S-2 was not started and none of its roles ran"
is "$(jget "$C/.workflow/.batch/$(bid "$C.err")/state.json" '[e["status"] for e in d["queue"]]')" \
    '["completed","completed","completed","completed"]' "the batch counts it completed"

# --- 4. kill -9 while S-3 runs, then --resume
copy kill
: >"$RUNLOG"
export ROLE_SLEEP=0.2
$WRAP "$SUP" batch "$C/$Q" -C "$C" --json >"$C.out" 2>"$C.err" &
pid=$!
end=$(t_until 30000)
# S-1's and S-2's ends are saved asynchronously too: on a loaded
# machine S-3 can start before that save lands (the resume would then
# find their loops completed and run nothing of them); wait for it, so
# that the kill tests one state: S-1 and S-2 saved, S-3 running.
done12() {
	local id=$(bid "$C.err")
	[ -n "$id" ] && [ "$(jget "$C/.workflow/.batch/$id/state.json" \
	    '[e["status"] for e in d["queue"]][:2]' 2>/dev/null)" = \
	    '["completed","completed"]' ]
}
while { [ "$(grep -c '^init.sh ISS-20260201-003$' "$RUNLOG")" = 0 ] ||
    ! done12; } && [ "$(t_now_ms)" -lt "$end" ]; do sleep 0.05; done
kill -KILL "$pid"
t_wait_pid "$pid" 10000
t_wait_gone "$MARK" 10000
ok $? "kill -9 while S-3 runs: its tools went down"
ID=$(bid "$C.err")
S=$C/.workflow/.batch/$ID/state.json
# S-3's start is saved asynchronously (its loop id was chosen when the
# batch was made, so a kill before that save loses nothing): pending or
# executing in the state, executing in the queue file
is "$(jget "$S" '[e["status"] for e in d["queue"]][:2] + [d["queue"][2]["status"] in ("pending", "executing"), d["queue"][3]["status"]]'):$(pyq 'it["S-3"]["status"]')" \
    '["completed","completed",true,"pending"]:executing' \
    "killed: S-1, S-2 completed, S-3 started (state and queue file)"
n1=$(runs ISS-20260201-001) n2=$(runs ISS-20260201-002)
timeout -k 2 60 $WRAP "$SUP" batch --resume "$ID" -C "$C" --json >"$C.out2" 2>>"$C.err"
is "$?" 0 "--resume: exit 0"
is "$(runs ISS-20260201-001):$(runs ISS-20260201-002)" "$n1:$n2" \
    "--resume: no role of S-1 or S-2 ran again ($n1, $n2 runs)"
is "$(order "$C.out2" | cut -d' ' -f4)" "S-3,S-4" "--resume started only S-3 and S-4"
is "$(pyq '[q["status"], [s["status"] for s in q["solutions"]], q["_metadata"]["completed_count"]]')" \
    "['completed', ['completed', 'completed', 'completed', 'completed'], 4]" \
    "the queue file ends completed"
(cd "$C" && sh tests/run.sh) >"$C.suite" 2>&1
is "$?:$(grep -c '^ok' "$C.suite")" "0:5" "the project's suite passes after the resume"
unset ROLE_SLEEP

# --- 5. malformed queues: exit 2, the problem named, nothing started
# bad NAME REGEX PYTHON: PYTHON edits q (the queue) of a fresh copy
bad() {
	copy "bad-$1"
	python3 - "$C/$Q" "$3" <<'EOF'
import json, sys
q = json.load(open(sys.argv[1]))
it = {s["item_id"]: s for s in q["solutions"]}
exec(sys.argv[2])
open(sys.argv[1], "w").write(json.dumps(q, indent=2))
EOF
	: >"$RUNLOG"
	timeout -k 2 20 $WRAP "$SUP" batch "$C/$Q" -C "$C" >"$C.out" 2>"$C.err"
	is "$?" 2 "$1: exit 2"
	like "$(cat "$C.err")" "$2" "$1: named ($(head -c 160 "$C.err"))"
	[ ! -e "$C/.workflow/.batch" ] && [ ! -e "$C/.workflow/.loop" ] &&
	    [ ! -s "$RUNLOG" ]
	ok $? "$1: no batch, no loop, no role started"
}
bad cycle 'QUE-20260201-120000.json: dependency cycle: S-1 -> S-3 -> S-1' \
    'it["S-1"]["depends_on"] = ["S-3"]'
bad unknown-dep 'item S-3: depends on "S-9", which is no item' \
    'it["S-3"]["depends_on"] = ["S-9"]'
bad later-group 'item S-2 \(group P1\) depends on S-4, which is in a later execution group \(S2\)' \
    'it["S-2"]["depends_on"] = ["S-4"]'
bad later-in-sequence 'item S-3 depends on S-4, which comes after it in sequential group S2' \
    'it["S-3"]["depends_on"] = ["S-1", "S-4"]'
bad no-solutions 'solutions/ISS-20260201-004\.jsonl: No such file' \
    'import os; os.remove(sys.argv[1].rsplit("/queues/", 1)[0] + "/solutions/ISS-20260201-004.jsonl")'

t_done
