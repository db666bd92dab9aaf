#!/bin/bash
# cli.sh: the command lines answer --version and --help, and refuse what
# they do not know with exit status 2 and a message naming it.
. "$(dirname "$0")/lib.sh"
t_watchdog 60

out=$($WRAP "$SUP" --version); rc=$?
ok $rc "ccw-supervisor --version exits 0"
like "$out" '^ccw-supervisor [0-9]+\.[0-9]+\.[0-9]+ \(protocol 2\)$' "version line"

out=$($WRAP "$SUP" version); ok $? "version subcommand exits 0"

out=$($WRAP "$SUP" --help); rc=$?
ok $rc "--help exits 0"
like "$out" 'usage: ccw-supervisor' "--help prints usage on stdout"

err=$($WRAP "$SUP" --bogus 2>&1 >/dev/null); rc=$?
is $rc 2 "unknown option exits 2"
like "$err" "unknown option '--bogus'" "unknown option is named"

err=$($WRAP "$SUP" frobnicate 2>&1 >/dev/null); rc=$?
is $rc 2 "unknown command exits 2"
like "$err" "unknown command 'frobnicate'" "unknown command is named"

$WRAP "$SUP" >/dev/null 2>&1; is $? 2 "no command exits 2"

out=$($WRAP "$WRK" --version); rc=$?
ok $rc "ccw-worker --version exits 0"
like "$out" '^ccw-worker [0-9.]+ \(protocol 2\)$' "worker version line"
$WRAP "$WRK" >/dev/null 2>&1; is $? 2 "worker without arguments exits 2"

t_done
