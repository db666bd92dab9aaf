#!/bin/bash
# bench-flame.sh: tests/bench/flame.py, the flame graphs of the closing
# notes: perf script's text folded into stacks (one command's samples
# only, offsets and unknown symbols named by their object), widths in
# proportion to the samples, a well-formed SVG; no samples is an error.
. "$(dirname "$0")/lib.sh"
t_watchdog 30
FLAME=$srcdir/tests/bench/flame.py

# Three samples of a (two under main -> work, one under main -> idle) and
# one of b; a frame of an unknown symbol in libx.so.
cat >"$T_TMP/script" <<'PERF'
a  101 [000]   1.000001:   1000 cpu-clock:
	    55aa work+0x10 (/usr/bin/a)
	    55bb main+0x20 (/usr/bin/a)

a  101 [000]   1.000002:   1000 cpu-clock:
	    55aa work+0x1c (/usr/bin/a)
	    55bb main+0x20 (/usr/bin/a)

a  101 [001]   1.000003:   1000 cpu-clock:
	    7f00 [unknown] (/usr/lib/libx.so.1)
	    55cc idle+0x4 (/usr/bin/a)
	    55bb main+0x20 (/usr/bin/a)

b  202 [001]   1.000004:   1000 cpu-clock:
	    66aa other+0x1 (/usr/bin/b)
PERF
python3 "$FLAME" --comm a "test graph" <"$T_TMP/script" >"$T_TMP/a.svg"
is "$?" 0 "flame.py drew a graph"
is "$(python3 - "$T_TMP/a.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
g = ET.parse(sys.argv[1]).getroot()
w = {t.text.split(" (")[0]: float(r.get("width"))
     for t, r in ((e.find(ns + "title"), e.find(ns + "rect"))
                  for e in g.iter(ns + "g"))}
print(sorted(w), round(w["work"] / w["main"], 2), round(w["idle"] / w["a"], 2))
PY
)" "['[libx.so.1]', 'a', 'idle', 'main', 'work'] 0.67 0.33" \
    "parsed as SVG: only a's frames, offsets dropped, widths by samples"
python3 "$FLAME" --comm nobody "empty" <"$T_TMP/script" >/dev/null \
    2>"$T_TMP/err"
is "$?" 1 "no samples: exit 1"
like "$(cat "$T_TMP/err")" "no samples" "no samples: said on stderr"
t_done
