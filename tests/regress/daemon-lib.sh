# daemon-lib.sh: sourced (after lib.sh) by sshd-lib.sh and slurm-lib.sh.
# Owns what a test needs to run real daemons of its own and leave none
# behind: a free port, the tree of a process, a TERM-then-KILL stop, and
# a stop that runs on exit before lib.sh's cleanup removes T_TMP.

# daemon_port_free PORT: no TCP socket of this machine (v4 or v6, any
# state) has PORT as its local port.  Only a first filter: the daemon's
# own bind is the test that counts.  A client sent to a port another
# listener holds may hang instead of failing, so the filter pays.
daemon_port_free() {
	! awk -v p="$(printf ':%04X$' "$1")" '$2 ~ p { f = 1 }
	    END { exit !f }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# daemon_tree PIDS...: the PIDS and all their descendants, from one
# snapshot of the ppid links.
daemon_tree() {
	ps -e -o pid= -o ppid= 2>/dev/null | awk -v roots="$*" '
		{ kids[$2] = kids[$2] " " $1 }
		END {
			n = split(roots, q, " ")
			for (i = 1; i <= n; i++) {
				print q[i]
				m = split(kids[q[i]], k, " ")
				for (j = 1; j <= m; j++) q[++n] = k[j]
			}
		}'
}

# daemon_kill MS PIDS...: TERM, up to MS ms for them to go, then KILL.
daemon_kill() {
	local ms=$1 p left end
	shift
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null
	end=$(( $(t_now_ms) + ms ))
	while :; do
		left=
		for p in "$@"; do
			t_pstate "$p"
			[ -n "$T_PST" ] && [ "$T_PST" != Z ] && left="$left $p"
		done
		[ -z "$left" ] && return 0
		[ "$(t_now_ms)" -ge "$end" ] && break
		sleep 0.05
	done
	kill -KILL $left 2>/dev/null
	return 0
}

# daemon_on_exit CMD: run CMD first on exit (once), before whatever the
# EXIT trap ran so far: a test that fails or is killed by its watchdog
# leaves no daemon behind.
daemon_on_exit() {
	local cur
	cur=$(trap -p EXIT)
	case "$cur" in *"$1"*) return 0 ;; esac
	cur=${cur#"trap -- '"}
	cur=${cur%"' EXIT"}
	trap "$1; $cur" EXIT
}
