#!/bin/bash
# remote-ssh.sh: workers behind a real OpenSSH (Debian's sshd on
# 127.0.0.1 with a generated key, started and stopped by this test): a
# parallel loop, send_input and close, the ssh client killed -9 and
# stopped (a silent network), and an unreachable host, as remote-cases.sh
# has them.  Without root or sshd: one SKIP, never a pass.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/remote-cases.sh"
. "$(dirname "$0")/sshd-lib.sh"
t_watchdog 300
t_valgrind_worker
t_slack

sshd_up "$T_TMP/sshd"
case $? in
0)	;;
1)	t_skip "remote-ssh: $SSHD_SKIP"; t_done; exit ;;	# not root, not installed
*)	ok 1 "remote-ssh: installed, but it did not come up: $SSHD_SKIP"; t_done; exit ;;
esac
LAUNCH=$SSH_ARGV
# the same client, a port nobody listens on
LAUNCH_BAD=$(sed 's/ -p [0-9]* / -p 1 /' <<<"$SSH_ARGV")
REMOTE_VAR=SSH_CONNECTION
remote_cases ssh

# ssh's own words reach the reason
r=$($WRAP "$SUP" agent develop --tool bash --command true --json \
    --state-dir "$T_TMP/bad" --launcher "$LAUNCH_BAD" go)
like "$(jget - 'd["reason"]' <<<"$r")" 'status 255 .*Connection refused' \
    "ssh: the refused connection is named"
sshd_down
t_done
