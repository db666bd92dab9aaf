#!/bin/bash
# bench-soak.sh: `make bench`'s soak figure (tests/bench/soak.py) run for a
# few seconds, so that it cannot rot: it exits 0, prints every row it names
# (`soak.py --rows`) once, in order, each with run.sh's seven fields, and
# writes its samples; serve churned (loops, agents, clients) and workers
# really ran; each verdict is said on stderr as PASS or MISS; the cgroup
# it made for itself (as root) is gone.  Figures and verdicts are not
# judged: a few seconds say nothing about a leak.
. "$(dirname "$0")/lib.sh"
t_watchdog 60
t_marker M soak
SOAK=$srcdir/tests/bench/soak.py

# 4 s of churn on a plain build; the sanitizers slow each loop 2-3
# times, and a loaded machine more: the churn must still see a loop end
SECS=$(( $(t_ms 4000) / 1000 ))
python3 "$SOAK" "$SUP" "$FAKE" "$T_TMP/$M" "$M" "$SECS" \
    "$T_TMP/samples.json" >"$T_TMP/rows" 2>"$T_TMP/err"
rc=$?
is "$rc" 0 "soak.py ran $SECS s of churn and exited 0"
[ "$rc" -eq 0 ] || sed 's/^/#   /' "$T_TMP/err" | tail -n 20

is "$(cut -f 1 "$T_TMP/rows")" "$(python3 "$SOAK" --rows)" \
    "every row it names, once, in order"
is "$(awk -F '\t' 'NF != 7 || $7 !~ /^(yes|no|n\/a)$/' "$T_TMP/rows")" "" \
    "each row has seven fields and a yes, no or n/a"
like "$(head -n 1 "$T_TMP/rows" | cut -f 2)" '^(-?[0-9.]+|n/a)$' \
    "the RSS slope is a number"
is "$(jget "$T_TMP/samples.json" '[len(d["samples"]) >= 2,
    all(s["rss_kib"] > 0 and s["fds"] > 0 and s["threads"] > 0
        for s in d["samples"])]')" '[true,true]' \
    "samples of serve's RSS, fds and threads were taken"
is "$(jget "$T_TMP/samples.json" '[d["churn"][k] > 0
    for k in ("loops", "agents", "sock")]')" '[true,true,true]' \
    "churn: loops, agents and socket clients came and went"
is "$(jget "$T_TMP/samples.json" 'any(s["workers"] for s in d["samples"])')" \
    true "workers ran: a sample saw one live"
is "$(grep -cE '^bench: soak: (PASS|MISS): ' "$T_TMP/err")" \
    "$(grep -cE '	(yes|no)$' "$T_TMP/rows")" \
    "a PASS or MISS on stderr for each verdict in the rows"
is "$(python3 "$SOAK" --report "$T_TMP/samples.json")" "$(cat "$T_TMP/rows")" \
    "--report prints the same rows from the saved samples"
CG=$(jget "$T_TMP/samples.json" 'd["cgroup"]')
case "$CG" in
*/ccw-soak-*) [ ! -e "$CG" ]; ok $? "its own cgroup ($CG) is removed" ;;
*) ok 0 "no cgroup of its own here ($CG)" ;;
esac
t_wait_gone "$M" 10000
ok $? "nothing of the soak is left"
t_done
