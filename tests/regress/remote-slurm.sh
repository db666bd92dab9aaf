#!/bin/bash
# remote-slurm.sh: workers behind a real Slurm (Debian's slurm-wlm and
# munge: slurmctld and slurmd on localhost, proctrack/linuxproc, started
# and stopped by this test), each worker a job step of its own through
# `srun -u`: the cases of remote-cases.sh, and scancel of a running step
# (the agent errored "worker lost", nothing left).  Without root or
# Slurm: one SKIP, never a pass.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/remote-cases.sh"
. "$(dirname "$0")/slurm-lib.sh"
t_watchdog 400
t_valgrind_worker
t_slack

slurm_up "$T_TMP/slurm"
case $? in
0)	;;
1)	t_skip "remote-slurm: $SLURM_SKIP"; t_done; exit ;;	# not root, not installed
*)	ok 1 "remote-slurm: installed, but it did not come up: $SLURM_SKIP"; t_done; exit ;;
esac
LAUNCH=$SRUN_ARGV
LAUNCH_BAD="$SRUN_ARGV --partition no-such-partition"
REMOTE_VAR=SLURM_JOB_ID

# scancel of the step a worker runs in
remote_scancel() {
	local ids
	ids=$(slurm_steps | sort -u)
	[ -n "$ids" ] && timeout 10 scancel $ids
}
remote_extra() {
	remote_lose "$1: scancel" 40 remote_scancel '^worker lost'
}
remote_cases slurm
slurm_down
t_done
