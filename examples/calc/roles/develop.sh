#!/bin/sh
# develop.sh: the develop role.  Really fixes the bug: subtraction computed
# b - a.  The new file is written aside and renamed over calc.sh, so that a
# validate running at the same time (parallel mode) sees the old file or
# the new one, never half of it.
. ./roles/result.sh
echo "== develop: looking for the subtraction in calc.sh"
if grep -q "expr='b - a'" calc.sh; then
	sed "s/expr='b - a'/expr='a - b'/" calc.sh >calc.sh.new &&
	    chmod 755 calc.sh.new && mv calc.sh.new calc.sh || {
		rm -f calc.sh.new
		result develop failed "could not rewrite calc.sh" '[]' debug
		exit 1
	}
	echo "== develop: calc.sh: expr='b - a' -> expr='a - b'"
	result develop success "fixed subtraction in calc.sh (it computed b - a)" \
	    '["calc.sh"]' validate "The '-' branch of calc.sh swapped its
operands; it now computes a - b."
elif grep -q "expr='a - b'" calc.sh; then
	result develop success "subtraction is already right; nothing to change" \
	    '[]' validate
else
	result develop failed "no subtraction branch found in calc.sh" '[]' debug
	exit 1
fi
