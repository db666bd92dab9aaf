#!/bin/bash
# run.sh: the suite, as TAP: one test per library file present (the items
# of the queue add them one by one).  Exits 1 when a test fails.
n=0 fail=0
check() {	# check NAME GOT WANT
	n=$((n + 1))
	if [ "$2" = "$3" ]; then echo "ok $n - $1"
	else echo "not ok $n - $1"; echo "# got '$2', want '$3'"; fail=1; fi
}
[ -f lib/upper.sh ] && check upper "$(. ./lib/upper.sh; upper abc)" ABC
[ -f lib/lower.sh ] && check lower "$(. ./lib/lower.sh; lower ABC)" abc
[ -f lib/title.sh ] && check title "$(. ./lib/title.sh; title queue)" Queue
[ -f docs/functions.md ] && check docs "$(grep -c '^- ' docs/functions.md)" "$(ls lib/*.sh | wc -l)"
check "lib/ exists" "$([ -d lib ] && echo yes)" yes
echo "1..$n"
exit $fail
