/*
 * spawn.c: fork and exec of one ccw-worker with its channel on fd 3 (or
 * of its launcher, the channel on the launcher's stdin and stdout), and
 * every signal the supervisor sends to a worker or a tool: only to what it
 * can prove is its own (the worker through a pidfd, a tool's group after
 * /proc shows it is the same process, a group leader and our descendant),
 * and at a worker's death the sweep of what its tool left to us.
 * What runs between vfork and exec is kept to async-signal-safe calls
 * that write no memory of ours but their own stack frames.
 */
#include <config.h>

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "children.h"
#include "log.h"
#include "reap.h"
#include "sigfd.h"
#include "xmalloc.h"

/* A launcher's stderr file: trimmed past MAX to its last KEEP bytes. */
#define SPAWN_ERR_MAX	(256 * 1024)
#define SPAWN_ERR_KEEP	4096

/* How far up a tool's ppid chain we look for its worker (or us). */
#define SPAWN_MAX_DEPTH	64

/*
 * Where the worker lives: $CCW_WORKER (tests), next to a supervisor run
 * from the build tree, else the installed libexec path.
 */
char *
spawn_worker_path(const char *argv0)
{
	const char	*env = getenv("CCW_WORKER");
	char		 self[PATH_MAX], *slash, *p;
	ssize_t		 n;

	if (env != NULL && *env != '\0')
		return xstrdup(env);
	(void)argv0;
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			*slash = '\0';
			xasprintf(&p, "%s/ccw-worker", self);
			if (access(p, X_OK) == 0)
				return p;
			free(p);
		}
	}
	return xstrdup(LIBEXECDIR "/ccw-worker");
}

/*
 * In the child: everything between fork and exec.  Never returns.  A
 * local worker gets the channel on fd 3 and /dev/null on 0 and 1; a
 * launcher (outfd >= 0) gets the channel on 0 and 1, which it relays to
 * ccw-worker --stdio over there, and outfd as its stderr.  cgfd >= 0: the
 * procs file of the worker's cgroup, which the child enters first.
 */
static void
spawn_child(int chfd, int errfd, int outfd, int cgfd, pid_t parent,
    const char *path, char *const argv[])
{
	int	e, nullfd;

	sigfd_child_reset();
	setsid();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(126);
	/*
	 * Into the worker's cgroup before anything of it runs.  A move the
	 * kernel refuses (a delegation without write access to our own
	 * cgroup.procs) leaves the worker uncontained, its own sweep still
	 * in force: containment never fails a worker.
	 */
	if (cgfd >= 0)
		(void)!write(cgfd, "0", 1);
	/* Lift the descriptors above 4 so the dup2s cannot clobber them. */
	if (errfd <= 4)
		errfd = fcntl(errfd, F_DUPFD_CLOEXEC, 5);
	if (chfd <= 4)
		chfd = fcntl(chfd, F_DUPFD, 5);
	if (outfd >= 0 && outfd <= 4)
		outfd = fcntl(outfd, F_DUPFD, 5);
	if (errfd < 0 || chfd < 0 || dup2(errfd, 4) < 0 ||
	    (outfd < 0 && dup2(chfd, 3) < 0) ||
	    (outfd >= 0 && (dup2(chfd, 0) < 0 || dup2(chfd, 1) < 0 ||
	    dup2(outfd, 2) < 0))) {
		e = errno;
		(void)!write(errfd >= 0 ? errfd : 4, &e, sizeof e);
		_exit(127);
	}
	fcntl(4, F_SETFD, FD_CLOEXEC);
	errfd = 4;
	if (outfd >= 0) {
		close(3);
		sigfd_close_from(5, -1);
		execvp(path, argv);
		e = errno;
		(void)!write(errfd, &e, sizeof e);
		_exit(127);
	}
	/*
	 * stdin and stdout on /dev/null: our stdout may be a JSON stream
	 * (control, run --json) no worker may write into.  stderr stays
	 * ours for the worker's diagnostics (and a sanitizer's report).
	 */
	if ((nullfd = open("/dev/null", O_RDWR)) >= 0) {
		dup2(nullfd, 0);
		dup2(nullfd, 1);
		if (fcntl(2, F_GETFD) < 0)
			dup2(nullfd, 2);
	}
	sigfd_close_from(5, -1);
	execv(path, argv);
	e = errno;
	(void)!write(errfd, &e, sizeof e);
	_exit(127);
}

/*
 * vfork: no copy of our page tables and no copy-on-write faults after,
 * and we are suspended only until the child's exec (fork cost the event
 * loop 3-50 ms a worker in test-hostlock, and its wait for the exec as
 * much again).  The child shares our memory until then: every signal is
 * held off so that none of our handlers runs in it; it resets them
 * before it lets signals in.  A function of its own, so that no variable
 * of the caller's lives across the vfork.  *errp: errno of a failure.
 */
static pid_t
spawn_vfork(int chfd, int errfd, int outfd, int cgfd, const char *path,
    char *const argv[], int *errp)
{
	sigset_t	all, old;
	pid_t		pid, parent = getpid();

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = vfork();
	if (pid == 0)
		spawn_child(chfd, errfd, outfd, cgfd, parent, path, argv);
	*errp = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return pid;
}

/*
 * A file for a launcher's stderr (ssh's "Connection refused", a remote
 * shell's "not found"), read back when the agent fails: unlinked from
 * the start, so nothing is left behind.
 */
static int
spawn_err_file(void)
{
	const char	*tmp = getenv("TMPDIR");
	char		 path[PATH_MAX];
	int		 fd;

	if (tmp == NULL || *tmp != '/')
		tmp = "/tmp";
	/* O_APPEND: after spawn_launcher_trim the writer goes on at the end */
	fd = open(tmp, O_TMPFILE | O_RDWR | O_APPEND | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof path, "%s/ccw-launcher.XXXXXX", tmp);
	if ((fd = mkostemp(path, O_CLOEXEC | O_APPEND)) >= 0)
		unlink(path);
	return fd;
}

/* A launcher's argv as launch_argv made it (NULL: none). */
static void
spawn_argv_free(char **largv)
{
	size_t	i;

	if (largv == NULL)
		return;
	for (i = 0; largv[i] != NULL; i++)
		free(largv[i]);
	free(largv);
}

/* Why exec failed, naming what we tried to run (a launcher or ours). */
static void
spawn_exec_error(const struct sup *s, struct agent *a, int launched, int e,
    char **err)
{
	char	*how;

	if (launched) {
		how = launch_describe(&a->launch);
		xasprintf(err, "cannot execute launcher '%s': %s", how,
		    strerror(e));
		free(how);
	} else
		xasprintf(err, "cannot execute worker %s: %s", s->worker_path,
		    strerror(e));
}

/*
 * The worker runs as pid: unreaped, so pid is still our child and the
 * pidfd names it for good.  Its start time dates its session for the
 * sweep of what it leaves (spawn_sweep).
 */
static void
spawn_adopt_worker(struct agent *a, pid_t pid)
{
	struct reap_stat	ps;

	a->pid = pid;
	a->start = reap_stat(pid, &ps) == 0 ? ps.start : 0;
#ifdef SYS_pidfd_open
	a->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (a->pidfd >= 0)
		(void)fcntl(a->pidfd, F_SETFD, FD_CLOEXEC);
#else
	a->pidfd = -1;
#endif
}

/*
 * Start the worker for agent a.  On success *chfd is the supervisor's end
 * of the channel and a->pid is set.  On failure nothing is left running
 * and *err says what failed.
 */
int
spawn_worker(struct sup *s, struct agent *a, int *chfd, char **err)
{
	char	 idx[16], *argv[6], **largv = NULL;
	const char *path = s->worker_path;
	char *const *av = argv;
	int	 sv[2], ep[2], e, outfd = -1, cgfd;
	pid_t	 pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    sv) != 0) {
		xasprintf(err, "socketpair: %s", strerror(errno));
		return -1;
	}
	if (pipe2(ep, O_CLOEXEC) != 0) {
		xasprintf(err, "pipe: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	snprintf(idx, sizeof idx, "%u", a->index);
	argv[0] = (char *)"ccw-worker";
	argv[1] = (char *)"-R";
	argv[2] = a->role;
	argv[3] = (char *)"-I";
	argv[4] = idx;
	argv[5] = NULL;
	if (a->launch.argv.n > 0) {
		/* the launcher reads and writes a blocking descriptor */
		(void)fcntl(sv[1], F_SETFL, fcntl(sv[1], F_GETFL) & ~O_NONBLOCK);
		largv = launch_argv(&a->launch, s->worker_path, a->role,
		    a->index);
		path = largv[0];
		av = largv;
		if ((outfd = spawn_err_file()) < 0)
			outfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	}

	cgfd = a->cg_path != NULL ? cgroup_procs_open(a->cg_path) : -1;
	pid = spawn_vfork(sv[1], ep[1], outfd, cgfd, path, av, &e);
	close(sv[1]);
	close(ep[1]);
	if (cgfd >= 0)
		close(cgfd);
	if (pid < 0) {
		xasprintf(err, "fork: %s", strerror(e));
		close(sv[0]);
		close(ep[0]);
	} else if ((e = reap_exec_status(ep[0], pid)) != 0) {
		spawn_exec_error(s, a, largv != NULL, e, err);
		close(sv[0]);
	}
	spawn_argv_free(largv);
	if (pid < 0 || e != 0) {
		if (outfd >= 0)
			close(outfd);
		return -1;
	}
	a->launch_err_fd = outfd;
	spawn_adopt_worker(a, pid);
	*chfd = sv[0];
	return 0;
}

/*
 * Keep a launcher's stderr file small: past SPAWN_ERR_MAX bytes only its
 * last SPAWN_ERR_KEEP stay (a chatty far side must not fill the disk
 * while its agent runs).  Called on every heartbeat; what the launcher
 * writes between the read and the truncation is lost, and it is only
 * diagnostics.
 */
void
spawn_launcher_trim(const struct agent *a)
{
	char	 buf[SPAWN_ERR_KEEP];
	off_t	 size;
	ssize_t	 n;

	if (a->launch_err_fd < 0 ||
	    (size = lseek(a->launch_err_fd, 0, SEEK_END)) <= SPAWN_ERR_MAX)
		return;
	n = pread(a->launch_err_fd, buf, sizeof buf, size - (off_t)sizeof buf);
	if (ftruncate(a->launch_err_fd, 0) != 0 || n <= 0)
		return;
	(void)!write(a->launch_err_fd, buf, (size_t)n);
}

/*
 * The last line a launcher wrote to its stderr ("ssh: connect to host
 * ... refused", "bash: ccw-worker: command not found"), for the reason of
 * an agent that failed; NULL when it wrote nothing.
 */
char *
spawn_launcher_said(const struct agent *a)
{
	char	 buf[512], *end, *start;
	off_t	 size;
	ssize_t	 n;

	if (a->launch_err_fd < 0 ||
	    (size = lseek(a->launch_err_fd, 0, SEEK_END)) <= 0)
		return NULL;
	n = pread(a->launch_err_fd, buf, sizeof buf - 1,
	    size > (off_t)sizeof buf - 1 ? size - (off_t)sizeof buf + 1 : 0);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	for (end = buf + n; end > buf && (end[-1] == '\n' || end[-1] == '\r' ||
	    end[-1] == ' '); end--)
		*(end - 1) = '\0';
	if (end == buf)
		return NULL;
	start = memrchr(buf, '\n', (size_t)(end - buf));
	start = start != NULL ? start + 1 : buf;
	for (end = start; *end != '\0'; end++)
		if ((unsigned char)*end < 0x20 && *end != '\t')
			*end = '?';
	return xstrdup(start);
}

/*
 * Signal the worker.  Through its pidfd, which can never reach another
 * process; without one, kill() only while the pid is known unreaped (we
 * are its parent and reap it ourselves, so it cannot have been reused).
 */
void
spawn_signal_worker(struct agent *a, int sig)
{
#ifdef SYS_pidfd_send_signal
	if (a->pidfd >= 0 &&
	    syscall(SYS_pidfd_send_signal, a->pidfd, sig, NULL, 0) == 0)
		return;
#endif
	if (a->pid > 0 && !a->reaped)
		kill(a->pid, sig);
}

/* The worker's own group (its session leader's): only while unreaped. */
void
spawn_signal_worker_group(struct agent *a, int sig)
{
	if (a->pid > 1 && !a->reaped)
		kill(-a->pid, sig);
}

/*
 * Is pid a process group leader that descends from worker (when worker >
 * 0) or, when anyone_ours, from us at all (adopted by us as a subreaper)?
 * start, when not 0, must match: the same process, not a reused pid.
 * *startp gets its start time.
 */
static int
spawn_tool_proven(pid_t pid, pid_t worker, int anyone_ours,
    unsigned long long start, unsigned long long *startp)
{
	struct reap_stat	ps;
	pid_t			self = getpid(), p;
	int			depth;

	if (pid <= 1 || pid == self || pid == worker ||
	    reap_stat(pid, &ps) != 0)
		return 0;
	if (ps.pgrp != pid || (start != 0 && ps.start != start))
		return 0;
	if (startp != NULL)
		*startp = ps.start;
	for (p = ps.ppid, depth = 0; depth < SPAWN_MAX_DEPTH; depth++) {
		if ((worker > 0 && p == worker) || (anyone_ours && p == self))
			return 1;
		if (p <= 1 || p == self || reap_stat(p, &ps) != 0)
			return 0;
		p = ps.ppid;
	}
	return 0;
}

/*
 * The tool_pid a worker's STARTED reported: kept only if it is a group
 * leader under this worker now (a worker, or whatever holds its channel,
 * may say anything).  Its start time pins the identity for later.
 */
void
spawn_tool_adopt(struct agent *a, pid_t tool_pid)
{
	unsigned long long	start = 0;

	a->tool_pid = 0;
	a->tool_start = 0;
	/* a remote tool's pid names nothing here: never adopted */
	if (a->pid <= 0 || a->reaped || a->launch.argv.n > 0)
		return;
	if (!spawn_tool_proven(tool_pid, a->pid, 0, 0, &start)) {
		if (tool_pid > 0)
			log_info("%s: tool_pid %ld is not a process group under "
			    "worker %ld; it will not be signalled", a->id,
			    (long)tool_pid, (long)a->pid);
		return;
	}
	a->tool_pid = tool_pid;
	a->tool_start = start;
}

/*
 * Signal the tool's process group, if /proc still shows the very process
 * STARTED named (same start time), leading its group, under the worker or
 * adopted by us.  A tool that is gone, or a pid reused by anyone, is left
 * alone.  (Between the check and the kill a process leading its own group
 * would have to die, be reaped by its parent and its pid be reused as a
 * group id: microseconds, the least this interface allows.)
 */
void
spawn_signal_tool(struct agent *a, int sig)
{
	pid_t	worker = a->pid > 0 && !a->reaped ? a->pid : 0;

	if (a->tool_pid <= 1)
		return;
	if (!spawn_tool_proven(a->tool_pid, worker, 1, a->tool_start, NULL)) {
		a->tool_pid = 0;	/* gone for good: never try again */
		return;
	}
	kill(-a->tool_pid, sig);
}

/*
 * The worker is dead (just reaped): end what it left of its tool's tree,
 * which came to us as orphans (we are a subreaper): every process of its
 * session (it was the session's leader; setsid in spawn_child) and all
 * under them, proven by /proc (reap_orphans); never anything else.  How
 * many were ended; how names them.  A remote worker's tree is not here.
 */
unsigned
spawn_sweep(struct agent *a, pid_t pid, char *how, size_t len)
{
	if (how != NULL && len > 0)
		how[0] = '\0';
	if (pid <= 1 || a->start == 0)
		return 0;
	/* our live workers lead sessions of their own: not read */
	return reap_orphans(pid, a->start, children_watched,
	    a->sup->children, how, len);
}
