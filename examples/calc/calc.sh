#!/bin/sh
# calc.sh: a four-function calculator, the project of ccw-supervisor's
# example.  usage: calc.sh A OP B, OP one of + - x /; prints the result.
# It has one bug on purpose: the example's loop finds and fixes it.
if [ $# -ne 3 ]; then
	echo "usage: calc.sh A OP B   (OP: + - x /)" >&2
	exit 2
fi
a=$1 op=$2 b=$3
for n in "$a" "$b"; do
	case $n in
	'' | - | . | -. | *[!0-9.-]* | *-*-* | ?*-* | *.*.*)
		echo "calc.sh: '$n' is not a number" >&2
		exit 2 ;;
	esac
done
case $op in
+) expr='a + b' ;;
-) expr='b - a' ;;
x | '*') expr='a * b' ;;
/)
	if awk -v b="$b" 'BEGIN { exit !(b + 0 == 0) }'; then
		echo "calc.sh: division by zero" >&2
		exit 1
	fi
	expr='a / b' ;;
*)
	echo "calc.sh: unknown operator '$op' (use + - x /)" >&2
	exit 2 ;;
esac
awk -v a="$a" -v b="$b" "BEGIN { print $expr }"
