#!/bin/bash
# cloexec.sh: a descriptor the supervisor, the worker or proto copies
# keeps close-on-exec.  dup() drops FD_CLOEXEC, so a worker another
# thread spawns meanwhile would inherit the copy (a state or workers
# directory); fcntl(fd, F_DUPFD_CLOEXEC, 0) keeps it.  dup2 in a child
# before exec (spawn.c) is meant to be inherited and not looked at.
. "$(dirname "$0")/lib.sh"
t_watchdog 30
cd "$srcdir" || exit 99
if ! command -v perl >/dev/null; then
	echo "1..0 # SKIP perl not installed"
	exit 0
fi

# FILE:LINE of each bare dup( in the C files given, comments and string
# literals left out.
DUPS='for my $f (@ARGV) {
	open(my $fh, "<", $f) or next;
	local $/;
	my $s = <$fh>;
	$s =~ s{/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"}{
	    my $m = $&; $m =~ /^"/ ? q("") : "\n" x ($m =~ tr/\n//) }gse;
	while ($s =~ /(?<![A-Za-z0-9_])dup\s*\(/g) {
		printf "%s:%d\n", $f, 1 + (substr($s, 0, $-[0]) =~ tr/\n//);
	}
}'

# The check must be able to fail: a planted dup(), none found in a
# comment, a string, dup2 or a name that ends in dup.
cat >"$T_TMP/planted.c" <<'EOC'
/* dup(fd) in a comment */
static const char *s = "dup(fd)";
int
planted(int fd)
{
	int	n = my_dup(fd);

	(void)dup2(fd, 3);
	return dup (fd) + n;
}
EOC
is "$(perl -e "$DUPS" "$T_TMP/planted.c")" "$T_TMP/planted.c:9" \
    "a planted dup() is found, and only it"

is "$(perl -e "$DUPS" $(find supervisor worker proto -name '*.[ch]' \
    -type f | sort) | tr '\n' ' ')" "" \
    "no dup() in supervisor/, worker/, proto/ (fcntl F_DUPFD_CLOEXEC)"
t_done
