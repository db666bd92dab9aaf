# slurm-lib.sh: sourced (after lib.sh) by the tests that run a worker as a
# Slurm step.  Owns one private one-node cluster per test shell: its munged,
# slurmctld, slurmd, the slurmstepds they fork, config, state and logs under
# the test's DIR; slurm_up starts it (or sets SLURM_SKIP), slurm_down stops it.

. "$(dirname "${BASH_SOURCE[0]}")/daemon-lib.sh"

SLURM_SKIP=
SLURM_DIR=
SLURM_MUNGE=
SLURM_MUNGED_PID=
SLURM_CTLD_PID=
SLURM_SLURMD_PID=
SLURM_CTLD_PORT=
SLURM_SLURMD_PORT=
# SRUN_ARGV: the client prefix that runs one command as a job of its own,
# outside any allocation (to be word-split).  -u: unbuffered, else srun
# forwards stdout only at a newline or EOF.  --overlap: 22.05 accepts it
# outside an allocation and it changes nothing there (plain srun works the
# same); inside an salloc it lets steps share the allocation's CPUs.
# Concurrency: each srun is a job of its own; the node has 8 CPUs or more
# and the partition OverSubscribe=FORCE:4, so 4 jobs share a core and 32
# run at once (12 checked; with OverSubscribe=YES it was 8, the 9th
# pending until one ended).
SRUN_ARGV=

# _slurm_listens PID PORT: PID holds the socket listening on PORT.
_slurm_listens() {
	local ino f
	ino=$(awk -v p="$(printf ':%04X$' "$2")" '$2 ~ p && $4 == "0A" {
	    print "socket:[" $10 "]" }' /proc/net/tcp /proc/net/tcp6 2>/dev/null)
	[ -n "$ino" ] || return 1
	for f in /proc/"$1"/fd/*; do
		case " $(echo $ino) " in
		*" $(readlink "$f" 2>/dev/null) "*) return 0 ;;
		esac
	done
	return 1
}

# _slurm_alive PID: PID runs (a zombie child of ours has ended).
_slurm_alive() {
	[ -n "$1" ] || return 1
	t_pstate "$1"
	[ -n "$T_PST" ] && [ "$T_PST" != Z ]
}

# _slurm_stepds: the slurmstepds of this cluster.  They daemonize (ppid 1)
# and outlive slurmd; their argv ("slurmstepd: [1.0]") names no path,
# their working directory is the job's (srun's), setproctitle blanks their
# environment: what tells them apart is SlurmdLogFile, which they keep open.
_slurm_stepds() {
	local p f
	[ -n "$SLURM_DIR" ] || return 0
	for p in $(pgrep -x slurmstepd); do
		for f in /proc/"$p"/fd/*; do
			if [ "$(readlink "$f" 2>/dev/null)" = \
			    "$SLURM_DIR/slurmd.log" ]; then
				echo "$p"
				break
			fi
		done
	done
}

# _slurm_conf PORT PORT: write $SLURM_DIR/slurm.conf.
_slurm_conf() {
	local d=$SLURM_DIR cpus
	cpus=$(nproc 2>/dev/null || echo 1)
	[ "$cpus" -lt 8 ] && cpus=8
	# config_overrides: the node's CPUs and memory as written here, not
	# as detected (8 CPUs on a 2-core machine: 8 one-CPU jobs at once).
	# cons_tres/CR_Core: a job takes one core of them, not the node;
	# FORCE:4, up to 4 jobs on each core.
	# linuxproc and task/none: no cgroup needed.  The Clustername is
	# unique: each cluster keeps its own state and ids.
	cat >"$d/slurm.conf" <<-EOF
	ClusterName=ccw$$x$RANDOM
	SlurmctldHost=localhost
	SlurmctldPort=$1
	SlurmdPort=$2
	SlurmUser=root
	SlurmdUser=root
	AuthType=auth/munge
	AuthInfo=socket=$SLURM_MUNGE/sock
	CredType=cred/munge
	StateSaveLocation=$d/state
	SlurmdSpoolDir=$d/spool
	SlurmctldPidFile=$d/slurmctld.pid
	SlurmdPidFile=$d/slurmd.pid
	SlurmctldLogFile=$d/slurmctld.log
	SlurmdLogFile=$d/slurmd.log
	ProctrackType=proctrack/linuxproc
	TaskPlugin=task/none
	JobAcctGatherType=jobacct_gather/none
	AccountingStorageType=accounting_storage/none
	JobCompType=jobcomp/none
	SelectType=select/cons_tres
	SelectTypeParameters=CR_Core
	SlurmdParameters=config_overrides
	MailProg=/bin/true
	KillWait=2
	ReturnToService=2
	NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 State=UNKNOWN
	PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
	EOF
}

# slurm_up DIR: a private one-node cluster.  Sets the SLURM_* pids and
# ports, exports SLURM_CONF (every client needs it) and SRUN_ARGV.
# Returns 1 with a reason in SLURM_SKIP when this machine cannot run one
# (not root, not installed), 2 (reason in SLURM_SKIP too) if it did not
# come up.
slurm_up() {
	local dir=$1 c try end st
	SLURM_SKIP=
	if [ "$(id -u)" != 0 ]; then
		# SlurmdUser=root: slurmd runs tasks as their users
		SLURM_SKIP="slurm tests need root"
		return 1
	fi
	for c in slurmctld slurmd srun sinfo squeue scancel munged mungekey; do
		if ! command -v "$c" >/dev/null; then
			SLURM_SKIP="$c not installed (slurm-wlm, munge)"
			return 1
		fi
	done
	case "$dir" in
	/*) ;;
	*) dir=$PWD/$dir ;;
	esac
	# one cluster a shell: the globals hold the one to stop
	slurm_down
	mkdir -p "$dir" || { SLURM_SKIP="cannot create $dir"; return 2; }
	SLURM_DIR=$dir
	daemon_on_exit slurm_down

	# munged wants o+x on every directory above its socket, and a test's
	# DIR is under a mode 700 T_TMP: its socket, key and pid go to a
	# directory of their own in /tmp (short, too: a socket path has 108
	# bytes at most), which slurm_down removes.
	SLURM_MUNGE=$(mktemp -d /tmp/ccw-munge.XXXXXX) &&
	    chmod 755 "$SLURM_MUNGE" &&
	    ln -sfn "$SLURM_MUNGE" "$dir/munge" &&
	    timeout 10 mungekey -c -k "$SLURM_MUNGE/munge.key" &&
	    chmod 600 "$SLURM_MUNGE/munge.key" ||
	    { SLURM_SKIP="cannot make a munge key"; slurm_down; return 2; }
	# -F: no fork, $! is munged; it then logs to stderr, not --log-file
	munged -F --socket="$SLURM_MUNGE/sock" \
	    --key-file="$SLURM_MUNGE/munge.key" \
	    --pid-file="$SLURM_MUNGE/munged.pid" \
	    --log-file="$dir/munged.log" --seed-file="$SLURM_MUNGE/seed" \
	    </dev/null >/dev/null 2>>"$dir/munged.log" &
	SLURM_MUNGED_PID=$!
	end=$(( $(t_now_ms) + 10000 ))
	until [ -S "$SLURM_MUNGE/sock" ]; do
		if ! _slurm_alive "$SLURM_MUNGED_PID" ||
		    [ "$(t_now_ms)" -ge "$end" ]; then
			SLURM_SKIP="munged did not start: $(tail -n 2 \
			    "$dir/munged.log" | tr '\n' ' ')"
			slurm_down
			return 2
		fi
		sleep 0.02
	done

	# a test run under Slurm (CI in a job) inherits SLURM_JOB_ID and the
	# like: srun would look for that job in this cluster
	unset $(compgen -e | grep '^SLURM_')
	export SLURM_CONF=$dir/slurm.conf
	SRUN_ARGV="srun -u -N1 -n1 --overlap"
	export SRUN_ARGV
	for try in 1 2 3 4 5; do
		# two random ports; a taken one makes a daemon exit at once,
		# then the next try has two others
		SLURM_CTLD_PORT=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
		SLURM_SLURMD_PORT=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
		[ "$SLURM_CTLD_PORT" = "$SLURM_SLURMD_PORT" ] && continue
		daemon_port_free "$SLURM_CTLD_PORT" &&
		    daemon_port_free "$SLURM_SLURMD_PORT" || continue
		rm -rf "$dir/state" "$dir/spool"
		mkdir -p "$dir/state" "$dir/spool"
		_slurm_conf "$SLURM_CTLD_PORT" "$SLURM_SLURMD_PORT"
		# -D: no fork, $! is the daemon; its stdout copies its log
		slurmctld -D -f "$SLURM_CONF" </dev/null \
		    >>"$dir/slurmctld.out" 2>&1 &
		SLURM_CTLD_PID=$!
		slurmd -D -f "$SLURM_CONF" -N localhost \
		    </dev/null >>"$dir/slurmd.out" 2>&1 &
		SLURM_SLURMD_PID=$!
		end=$(( $(t_now_ms) + 30000 ))
		while :; do
			# sinfo only once slurmctld has its port: it would
			# hang on another listener's, and it retries ~10 s
			# while the controller is down
			if _slurm_listens "$SLURM_CTLD_PID" "$SLURM_CTLD_PORT"
			then
				st=$(timeout 3 sinfo -h -N -o %T 2>/dev/null)
				case "$st" in
				idle*) return 0 ;;
				esac
			fi
			if ! _slurm_alive "$SLURM_CTLD_PID" ||
			    ! _slurm_alive "$SLURM_SLURMD_PID"; then
				# (a failed try: no grace needed, and a
				# slurmd without its controller sits out
				# SIGTERM; slurmctld's slurmscriptd too)
				kill -KILL $(daemon_tree $SLURM_CTLD_PID \
				    $SLURM_SLURMD_PID) 2>/dev/null
				wait $SLURM_CTLD_PID $SLURM_SLURMD_PID \
				    2>/dev/null
				SLURM_CTLD_PID= SLURM_SLURMD_PID=
				break
			fi
			[ "$(t_now_ms)" -ge "$end" ] && break 2
			sleep 0.1
		done
	done
	SLURM_SKIP="slurm did not come up (node ${st:-unknown}): $(tail -n 2 \
	    "$dir/slurmctld.log" "$dir/slurmd.log" 2>/dev/null | tr '\n' ' ')"
	slurm_down
	return 2
}

# slurm_steps: the ids of the jobs running now and of their steps, one a
# line (1, then 1.0): what a test gives scancel to end one.  A step of a
# job already ending (its srun killed) is left out.
slurm_steps() {
	local jobs
	[ -n "$SLURM_CTLD_PID" ] || return 0
	jobs=$(timeout 5 squeue -h -t running -o %i 2>/dev/null)
	[ -n "$jobs" ] || return 0
	echo "$jobs"
	timeout 5 squeue -h -s -o %i 2>/dev/null |
	    grep -E "^($(echo $jobs | tr ' ' '|'))\\."
}

# _slurm_wait_stepds MS: wait up to MS ms until this cluster has no stepd.
_slurm_wait_stepds() {
	local end=$(( $(t_now_ms) + $1 ))
	while [ -n "$(_slurm_stepds)" ]; do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# _slurm_sweep: SIGKILL the slurmstepds of this cluster and the tasks they
# run, for what outlived slurmd.  The tree is read first: a stepd killed
# leaves its tasks to init.
_slurm_sweep() {
	local left
	left=$(_slurm_stepds)
	[ -n "$left" ] || return 0
	kill -KILL $(daemon_tree $left | sort -u) 2>/dev/null
}

# slurm_down: cancel every job, stop slurmd, slurmctld and munged, then
# the slurmstepds that outlived them and whatever tasks they still run.
# Idempotent.
slurm_down() {
	local j p st tasks pids tree=
	if _slurm_alive "$SLURM_CTLD_PID"; then
		j=$(timeout 5 squeue -h -o %i 2>/dev/null)
		[ -n "$j" ] && timeout 5 scancel $j 2>/dev/null
		# a task that heeds SIGTERM is gone in 0.1 s.  One that does
		# not would cost KillWait and more (7 s in all, measured):
		# its task tree gets SIGKILL from here, and its stepd then
		# reports to srun and exits.  A stepd itself killed would
		# leave its srun client waiting forever.
		if ! _slurm_wait_stepds 500; then
			st=$(_slurm_stepds)
			tasks=$(daemon_tree $st | grep -vxF "$st")
			[ -n "$tasks" ] && kill -KILL $tasks 2>/dev/null
			_slurm_wait_stepds 3000
		fi
	fi
	# (slurmd, given SIGTERM, would sit out a stepd still there)
	_slurm_sweep
	pids="$SLURM_SLURMD_PID $SLURM_CTLD_PID $SLURM_MUNGED_PID"
	[ -n "${pids// }" ] && tree=$(daemon_tree $pids)
	# one by one: slurmd tells slurmctld it goes (0.6 s; 3 s and a
	# SIGKILL if slurmctld is gone already), both sign with munged
	daemon_kill 3000 $SLURM_SLURMD_PID
	daemon_kill 3000 $SLURM_CTLD_PID
	daemon_kill 3000 $SLURM_MUNGED_PID
	# (no bare `wait`: it would wait for lib.sh's watchdog too)
	[ -n "${pids// }" ] && wait $pids 2>/dev/null
	# their children, slurmctld's slurmscriptd, should they outlive them
	for p in $tree; do
		_slurm_alive "$p" && kill -KILL "$p" 2>/dev/null
	done
	SLURM_SLURMD_PID= SLURM_CTLD_PID= SLURM_MUNGED_PID=
	# a stepd slurmd forked meanwhile
	_slurm_sweep
	case "$SLURM_MUNGE" in
	/tmp/ccw-munge.?*) rm -rf "$SLURM_MUNGE" ;;
	esac
	SLURM_MUNGE=
	return 0
}
