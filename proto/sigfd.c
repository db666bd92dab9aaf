/*
 * sigfd.c: descriptors and signals around fork and exec, shared by the
 * supervisor (a worker's start, the start-up signal deferral) and the
 * worker (a tool's start, git).  Everything a child calls between fork
 * and exec is async-signal-safe: raw syscalls, no malloc, no stdio.
 */
#include <config.h>

#include <sys/syscall.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sigfd.h"

/* The signals that end a command; deferred until its handlers exist. */
static const int sigfd_term[] = { SIGTERM, SIGINT, SIGHUP };

/* The deferred signals as a set. */
static void
sigfd_term_set(sigset_t *set)
{
	size_t	i;

	sigemptyset(set);
	for (i = 0; i < sizeof sigfd_term / sizeof sigfd_term[0]; i++)
		sigaddset(set, sigfd_term[i]);
}

/*
 * Close from lowfd up but keep by reading /proc/self/fd with getdents64
 * (no malloc, unlike opendir).  Returns -1 when /proc cannot be read.
 */
static int
sigfd_close_proc(int lowfd, int keep)
{
	/* struct linux_dirent64: ino, off, reclen, type, name */
	char		buf[4096] __attribute__((aligned(8)));
	long		n, off;
	unsigned short	reclen;
	int		dfd, fd, closed;
	const char	*name;

	dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	do {
		closed = 0;
		while ((n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0)
			for (off = 0; off < n; off += reclen) {
				memcpy(&reclen, buf + off + 16, sizeof reclen);
				name = buf + off + 19;
				if (*name < '0' || *name > '9')
					continue;
				for (fd = 0; *name >= '0' && *name <= '9';
				    name++)
					fd = fd * 10 + (*name - '0');
				if (fd >= lowfd && fd != dfd && fd != keep) {
					close(fd);
					closed = 1;
				}
			}
		/* Closing while reading may skip entries: read it again. */
	} while (closed && lseek(dfd, 0, SEEK_SET) == 0);
	close(dfd);
	return 0;
}

/*
 * In a child before exec: close every descriptor from lowfd up except
 * keep (-1: none; the close-on-exec pipe that reports a failed exec), so
 * that nothing the parent holds (a worker's channel, a log, a lock)
 * reaches the program.  close_range(2) when the kernel has it, else
 * /proc, else a bounded loop.
 */
void
sigfd_close_from(int lowfd, int keep)
{
	long	max;
	int	fd;

	if (keep < lowfd)
		keep = -1;
#ifdef SYS_close_range
	if ((keep < 0 || keep == lowfd || syscall(SYS_close_range,
	    (unsigned)lowfd, (unsigned)keep - 1, 0) == 0) &&
	    syscall(SYS_close_range, (unsigned)(keep < 0 ? lowfd : keep + 1),
	    ~0U, 0) == 0)
		return;
#endif
	if (sigfd_close_proc(lowfd, keep) == 0)
		return;
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = lowfd; fd < max; fd++)
		if (fd != keep)
			close(fd);
}

/*
 * In a child before exec: an empty signal mask and every disposition at
 * its default, whatever the parent blocked or ignored (SIGPIPE, SIGXFSZ,
 * the deferred SIGTERM): ignored signals and the mask survive exec.
 */
void
sigfd_child_reset(void)
{
	sigset_t	none;
	int		sig;

	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * At start-up: hold SIGTERM, SIGINT and SIGHUP pending, so that one sent
 * before a command has its handlers cannot kill it half-way (a state file
 * set running, a worker just forked) with the default action.
 */
void
sigfd_defer(void)
{
	sigset_t	set;

	sigfd_term_set(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/*
 * Once the handlers are in place (or for a command that has none): let
 * the deferred signals in; one that arrived meanwhile is delivered now.
 */
void
sigfd_release(void)
{
	sigset_t	set;

	sigfd_term_set(&set);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}
