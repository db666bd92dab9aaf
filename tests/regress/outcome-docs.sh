#!/bin/bash
# outcome-docs.sh: ccw-supervisor(1)'s OUTCOME KINDS table holds every row
# of the outcome table (proto/outcome.c), read from the table itself: each
# kind's word as an item, followed by its `what` text, so that a kind
# added without its line in the man page fails here.
. "$(dirname "$0")/lib.sh"
t_watchdog 30

cd "$srcdir" || exit 99
MAN=man/ccw-supervisor.1

# kinds: "NAME<TAB>WHAT" for each row of outcome_table but the empty one
# (success): its first string is the word, the strings after the flags,
# joined, the what.
kinds() {
	perl -0777 -ne '
	    /\boutcome_table\[[A-Z_]*\]\s*=\s*\{(.*?)\n\};/s or exit 1;
	    my $t = $1;
	    while ($t =~ /\[OUTCOME_[A-Z_]+\]\s*=\s*\{(.*?)\},\s*(?=\[|$)/sg) {
		my @s = ($1 =~ /"((?:[^"\\]|\\.)*)"/g);
		next if !@s || $s[0] eq "";
		my $name = shift(@s);
		print $name, "\t", join("", @s), "\n";
	    }' proto/outcome.c
}

# the section: from .Sh OUTCOME KINDS to the next .Sh
sect() {
	sed -n '/^\.Sh OUTCOME KINDS$/,/^\.Sh /p' "$MAN"
}

# missing FILE: the rows FILE's section lacks (an item ".It Li NAME" with
# WHAT on the line after it), one per line.
missing() {
	local name what
	while IFS=$'\t' read -r name what; do
		grep -A1 -x -F -- ".It Li $name" "$1" | tail -n 1 |
		    grep -q -x -F -- "$what" || echo "$name"
	done < <(kinds)
}

n=$(kinds | wc -l)
ok $(( n < 10 )) "the table was read ($n kinds)"
sect >"$T_TMP/sect"
ok "$([ -s "$T_TMP/sect" ]; echo $?)" "$MAN has an OUTCOME KINDS section"
is "$(missing "$T_TMP/sect" | tr '\n' ' ')" "" \
    "every kind of the table is an item of OUTCOME KINDS with its what text"
is "$(grep -c '^\.It Li ' "$T_TMP/sect")" "$n" \
    "OUTCOME KINDS has no item the table lacks"

# The check can fail: a kind the page lacks is found.
sed '/^\.It Li idle$/,+1d' "$T_TMP/sect" >"$T_TMP/planted"
is "$(missing "$T_TMP/planted")" idle "a kind the page lacks is reported"
t_done
