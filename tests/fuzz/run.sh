#!/bin/bash
# run.sh SECONDS [BUILDDIR [NAME...]]: runs each fuzz target (default:
# every tests/fuzz/fuzz-NAME.c) under libFuzzer, ASan and UBSan for
# SECONDS.  Needs a build configured with --enable-fuzzing CC=clang.
# Each target starts from its committed seeds (frame: one valid frame
# per type and tests/proto/invalid) in BUILDDIR/tests/fuzz/corpus-NAME,
# which keeps what the fuzzer found for the next run.  Prints
# "PASS: fuzz-NAME" or "FAIL: fuzz-NAME" per target; a crash (or hang,
# leak, runaway memory) is left in BUILDDIR/tests/fuzz/found-NAME/ (copy
# it into tests/fuzz/NAME/ as a regression seed once fixed).  Exit 0 when no target failed.
set -u
secs=${1:-600}
build=$(cd "${2:-.}" && pwd)
shift $(($# > 2 ? 2 : $#))
src=$(cd "$(dirname "$0")/../.." && pwd)
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for f in "$src"/tests/fuzz/fuzz-*.c; do
		f=$(basename "$f" .c)
		names+=("${f#fuzz-}")
	done
fi

# UBSan only prints by default: a finding must stop the run.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

fail=0
for name in "${names[@]}"; do
	bin=$build/tests/fuzz/fuzz-$name
	corpus=$build/tests/fuzz/corpus-$name
	log=$build/tests/fuzz/fuzz-$name.log
	found=$build/tests/fuzz/found-$name
	mkdir -p "$corpus" "$found"
	if [ ! -x "$bin" ]; then
		echo "FAIL: fuzz-$name: $bin not built (configure --enable-fuzzing CC=clang; make $bin)"
		fail=1
		continue
	elif [ "$name" = frame ]; then
		max_len=65536
		seeded=$("$build/tests/fuzz/mkcorpus" "$corpus" &&
		    cp -f "$src"/tests/proto/invalid/*.bin "$corpus"/ && echo yes)
	else
		max_len=16384
		seeded=$(cp -f "$src/tests/fuzz/$name"/* "$corpus"/ && echo yes)
	fi
	chmod -R u+w "$corpus"	# the seeds of a read-only source tree
	if [ "$seeded" != yes ]; then
		echo "FAIL: fuzz-$name: no seeds (frame's: make tests/fuzz/mkcorpus)"
		fail=1
		continue
	fi
	# -timeout: one input slower than 10 s is a hang, reported as a crash.
	"$bin" -max_total_time="$secs" -max_len=$max_len -timeout=10 \
	    -print_final_stats=1 -artifact_prefix="$found/" \
	    "$corpus" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	if [ $rc -eq 0 ]; then
		echo "PASS: fuzz-$name ($secs s, ${runs:-?} inputs, corpus $(ls "$corpus" | wc -l))"
	else
		echo "FAIL: fuzz-$name (exit $rc); its log $log ends:"
		grep -E -A12 '^==[0-9]+==ERROR|runtime error|^artifact_prefix|Test unit written' \
		    "$log" | head -n 40
		fail=1
	fi
done
exit $fail
