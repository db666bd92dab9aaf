#!/bin/bash
# fuzz-replay.sh: every fuzz target (tests/fuzz/fuzz-NAME.c) runs over its
# seed corpus in every build, not only in the libFuzzer one: frame over
# one valid frame per type and the invalid corpus, every other target
# over tests/fuzz/NAME/ (real inputs and the fuzzers' finds).  Under ASan
# or valgrind a read past a buffer fails here.
. "$(dirname "$0")/lib.sh"
t_watchdog 300

mkdir -p "$T_TMP/corpus"
$WRAP "$top_builddir/tests/fuzz/mkcorpus" "$T_TMP/corpus"; ok $? "seed corpus written"
n=$(ls "$T_TMP/corpus" | wc -l)
# the message types: proto/proto.h's enum, its last one the count
types=$(sed -n 's/^[[:space:]]*MSG_[A-Z_]* = \([0-9]*\),.*/\1/p' \
    "$srcdir/proto/proto.h" | sort -n | tail -n 1)
is "$n" "${types:-?}" "one seed frame per message type ($n)"
out=$($WRAP "$top_builddir/tests/fuzz/replay-frame" "$T_TMP"/corpus/* \
    "$srcdir"/tests/proto/invalid/*.bin); rc=$?
ok $rc "frame: the target survives every seed and invalid frame"
like "$out" "replayed [0-9]+ inputs" "frame: replay reports its count"

# The other targets: the target files are the list.
for f in "$srcdir"/tests/fuzz/fuzz-*.c; do
	name=$(basename "$f" .c)
	name=${name#fuzz-}
	[ "$name" = frame ] && continue
	seeds=("$srcdir/tests/fuzz/$name"/*)
	ok $([ -f "${seeds[0]}" ]; echo $?) "$name: a seed corpus in tests/fuzz/$name/"
	out=$($WRAP "$top_builddir/tests/fuzz/replay-$name" "${seeds[@]}"); rc=$?
	ok $rc "$name: the target survives every seed"
	is "$out" "replayed ${#seeds[@]} inputs" "$name: every seed replayed"
done
t_done
