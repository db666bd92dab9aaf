#!/bin/bash
# run.sh SECONDS [BUILDDIR]: fuzz frame and body decoding with libFuzzer.
# Needs a build configured with --enable-fuzzing CC=clang.  Seeds the
# corpus with one valid frame per type and the invalid corpus; any crash
# is left as crash-* in the current directory, to be copied into
# tests/proto/invalid/ with a .err file saying ANY or the expected error.
set -eu
secs=${1:-600}
build=${2:-.}
src=$(cd "$(dirname "$0")/../.." && pwd)
corpus=$build/tests/fuzz/corpus
mkdir -p "$corpus"
"$build/tests/fuzz/mkcorpus" "$corpus"
cp "$src"/tests/proto/invalid/*.bin "$corpus"/
exec "$build/tests/fuzz/fuzz-frame" -max_total_time="$secs" -max_len=65536 \
    -print_final_stats=1 "$corpus"
