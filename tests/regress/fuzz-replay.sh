#!/bin/bash
# fuzz-replay.sh: the fuzz target runs over the seed corpus (one valid
# frame per type), the invalid corpus and any saved fuzzer finds, so it is
# exercised in every build, not only in the libFuzzer one.
. "$(dirname "$0")/lib.sh"
t_watchdog 120

mkdir -p "$T_TMP/corpus"
$WRAP "$top_builddir/tests/fuzz/mkcorpus" "$T_TMP/corpus"; ok $? "seed corpus written"
n=$(ls "$T_TMP/corpus" | wc -l)
# the message types: proto/proto.h's enum, its last one the count
types=$(sed -n 's/^[[:space:]]*MSG_[A-Z_]* = \([0-9]*\),.*/\1/p' \
    "$srcdir/proto/proto.h" | sort -n | tail -n 1)
is "$n" "${types:-?}" "one seed frame per message type ($n)"
out=$($WRAP "$top_builddir/tests/fuzz/replay" "$T_TMP"/corpus/* \
    "$srcdir"/tests/proto/invalid/*.bin); rc=$?
ok $rc "fuzz target survives every seed and invalid frame"
like "$out" "replayed [0-9]+ inputs" "replay reports its count"
t_done
