#!/bin/sh
# run.sh: the calculator's test suite.  Prints TAP (the validate role's
# output, parsed by ccw-supervisor into skill_state.validate.test_results)
# and exits 1 when a test fails.
cd "$(dirname "$0")/.." || exit 2
n=0
failed=0

# check DESCRIPTION WANT A OP B: one test point.
check() {
	n=$((n + 1))
	got=$(sh ./calc.sh "$3" "$4" "$5" 2>&1)
	if [ "$got" = "$2" ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		echo "#   calc.sh $3 $4 $5: got '$got', want '$2'"
		failed=$((failed + 1))
	fi
}

echo "1..7"
check "addition" 5 2 + 3
check "subtraction" 2 5 - 3
check "subtraction below zero" -4 3 - 7
check "multiplication" 12 3 x 4
check "division" 2.5 5 / 2
check "division by zero is refused" "calc.sh: division by zero" 1 / 0
check "a word is not a number" "calc.sh: 'two' is not a number" two + 2
[ "$failed" -eq 0 ]
