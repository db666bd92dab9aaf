# sshd-lib.sh: sourced (after lib.sh) by the tests that reach a worker over
# ssh.  Owns one private sshd on 127.0.0.1 per test shell: its keys, config,
# log and pid under the test's DIR, and every process it starts; sshd_up
# brings it up (or sets SSHD_SKIP), sshd_down (also run on exit) stops it.

. "$(dirname "${BASH_SOURCE[0]}")/daemon-lib.sh"

SSHD_SKIP=
SSHD_PID=
SSHD_PORT=
SSHD_DIR=
SSH_ARGV=

# _sshd_orphans PORT: remote commands of this sshd that its session ended
# without (ssh -T closes only their stdin; one that does not read it is
# reparented to init and is no longer in the tree): sshd puts
# "client cport 127.0.0.1 PORT" in their SSH_CONNECTION.
_sshd_orphans() {
	local f p
	# grep -z: one NUL-separated variable a line, one process for all
	for f in $(grep -lsxz "SSH_CONNECTION=.* 127\.0\.0\.1 $1" \
	    /proc/[0-9]*/environ); do
		p=${f#/proc/}
		p=${p%/environ}
		[ "$p" != "$$" ] && [ "$p" != "$BASHPID" ] && echo "$p"
	done
}

# sshd_up DIR: a private sshd accepting root with a key made here.  Sets
# SSHD_PID, SSHD_PORT, SSHD_DIR and exports SSH_ARGV (the client command
# prefix, to be word-split: DIR must hold no blanks).  Returns 1 with a
# reason in SSHD_SKIP when this machine cannot run one (not root, not
# installed), 2 (reason in SSHD_SKIP too) if sshd did not come up.
sshd_up() {
	local dir=$1 sshd try port end
	SSHD_SKIP=
	if [ "$(id -u)" != 0 ]; then
		# PermitRootLogin and a daemon of our own on a port: root only
		SSHD_SKIP="sshd tests need root"
		return 1
	fi
	sshd=$(command -v sshd || echo /usr/sbin/sshd)
	if [ ! -x "$sshd" ] || ! command -v ssh >/dev/null ||
	    ! command -v ssh-keygen >/dev/null; then
		SSHD_SKIP="openssh-server/openssh-client not installed"
		return 1
	fi
	case "$dir" in
	/*) ;;
	*) dir=$PWD/$dir ;;	# sshd re-execs itself and chdirs to /
	esac
	# one sshd a shell: the globals hold the one to stop
	sshd_down
	mkdir -p "$dir" /run/sshd || { SSHD_SKIP="cannot create $dir"; return 2; }
	SSHD_DIR=$dir
	rm -f "$dir/host" "$dir/host.pub" "$dir/id" "$dir/id.pub"
	timeout 20 ssh-keygen -q -t ed25519 -N '' -C ccw-test-host \
	    -f "$dir/host" </dev/null &&
	timeout 20 ssh-keygen -q -t ed25519 -N '' -C ccw-test-user \
	    -f "$dir/id" </dev/null ||
	    { SSHD_SKIP="ssh-keygen failed"; return 2; }
	cp "$dir/id.pub" "$dir/authorized_keys"
	daemon_on_exit sshd_down
	for try in 1 2 3 4 5; do
		port=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
		daemon_port_free "$port" || continue
		# StrictModes no: DIR is under /tmp (world-writable).
		# SetEnv SHLVL=1: Debian's root .bashrc is then skipped,
		# a session costs 260 ms instead of 700.  No AcceptEnv: the
		# client's environment never leaks into the remote one.
		# MaxStartups/MaxSessions: a test opens many sessions at
		# once, the defaults (10:30:100) drop some of them.
		cat >"$dir/sshd_config" <<-EOF
		ListenAddress 127.0.0.1
		Port $port
		HostKey $dir/host
		PidFile $dir/sshd.pid
		AuthorizedKeysFile $dir/authorized_keys
		PermitRootLogin prohibit-password
		PubkeyAuthentication yes
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		UsePAM no
		StrictModes no
		SetEnv SHLVL=1
		MaxStartups 100:30:200
		MaxSessions 100
		PrintMotd no
		LogLevel INFO
		EOF
		: >"$dir/sshd.log"
		# -D: no fork, so $! is the listener itself
		"$sshd" -f "$dir/sshd_config" -D -E "$dir/sshd.log" \
		    </dev/null >/dev/null 2>&1 &
		SSHD_PID=$!
		SSHD_PORT=$port
		# -F none: the user's and the system's ssh_config (a
		# ControlMaster, a ProxyJump) must not change the client
		SSH_ARGV="ssh -F none -T -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=$dir/known_hosts -o LogLevel=ERROR -i $dir/id -p $port root@127.0.0.1"
		export SSH_ARGV
		end=$(( $(t_now_ms) + 10000 ))
		while :; do
			t_pstate "$SSHD_PID"
			if [ -z "$T_PST" ] || [ "$T_PST" = Z ]; then
				# it exited: the port was taken (or a bad
				# config, then every try fails the same way)
				wait "$SSHD_PID" 2>/dev/null
				SSHD_PID=
				break
			fi
			# no ssh before sshd has the port: one to a port
			# some other listener holds would hang.  (-E log
			# lines end in \r\n: the "." ends the port.)
			if grep -qF "Server listening on 127.0.0.1 port $port." \
			    "$dir/sshd.log"; then
				timeout 5 $SSH_ARGV true </dev/null \
				    2>/dev/null && return 0
			fi
			[ "$(t_now_ms)" -ge "$end" ] && break 2
			sleep 0.05
		done
	done
	SSHD_SKIP="sshd did not come up: $(tail -n 3 "$dir/sshd.log" |
	    tr '\n' ' ')"
	sshd_down
	return 2
}

# sshd_down: stop the sshd of sshd_up and everything it started (sessions
# still open, the commands they run, orphans of closed ones).  The tree
# is read before the listener goes: its session children are reparented
# then.  Idempotent.
sshd_down() {
	local pids=
	if [ -n "$SSHD_PID" ]; then
		pids=$(daemon_tree "$SSHD_PID")
		[ -n "$SSHD_PORT" ] && pids="$pids $(_sshd_orphans "$SSHD_PORT")"
		# the listener first: no new session starts meanwhile
		daemon_kill 2000 "$SSHD_PID"
		wait "$SSHD_PID" 2>/dev/null
		daemon_kill 2000 $(printf '%s\n' $pids | grep -vx "$SSHD_PID" |
		    sort -u)
	fi
	SSHD_PID=
	return 0
}
