/*
 * loopguard.c: what keeps one loop's drivers and workers apart: the run
 * lock ({id}.run.lock, one driver per loop), the {id}.workers directory
 * never reached through a link, and agent ids never reused in a loop,
 * each new agent's log created empty by us before its worker opens it.
 */
#include <config.h>

#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "loopguard.h"
#include "progress.h"
#include "state.h"
#include "xmalloc.h"

#define GUARD_MAX_SKIP	100000	/* agent-N.log names tried at one spawn */
#define GUARD_LOCK_TRIES	5	/* flocks of a run lock a reader probes */
#define GUARD_LOCK_US	2000	/* between them */
#define GUARD_DEAD_MS	2000	/* a dead holder's fd copies close within */

/* Raise *next past an "agent-N" id or file name (agent-N, agent-N.*). */
static void
guard_seen(const char *name, unsigned *next)
{
	unsigned long	 n;
	char		*end;

	if (name == NULL || strncmp(name, "agent-", 6) != 0 ||
	    name[6] < '0' || name[6] > '9')
		return;
	errno = 0;
	n = strtoul(name + 6, &end, 10);
	if (errno != 0 || (*end != '\0' && *end != '.') || n >= 0xfffffffUL)
		return;
	if (n + 1 > *next)
		*next = (unsigned)n + 1;
}

/* Every "agent_id" the state recorded (worker results, parallel ones). */
static void
guard_scan_json(const json_t *j, unsigned *next)
{
	const char	*k;
	const json_t	*v;
	size_t		 i;

	if (json_is_object(j)) {
		json_object_foreach((json_t *)j, k, v) {
			if (strcmp(k, "agent_id") == 0)
				guard_seen(json_string_value(v), next);
			else
				guard_scan_json(v, next);
		}
	} else if (json_is_array(j))
		json_array_foreach(j, i, v)
			guard_scan_json(v, next);
}

/*
 * Every agent-N.* file an earlier driver of the loop left.  The copy of
 * the directory's fd keeps close-on-exec (dup would drop it): a worker
 * another thread spawns meanwhile must not inherit it.
 */
static void
guard_scan_dir(int wfd, unsigned *next)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd;

	if ((fd = fcntl(wfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL)
		guard_seen(de->d_name, next);
	closedir(d);
}

/*
 * flock the run lock, without waiting for a driver; a reader's probe
 * (loopdriver_probe) holds it shared for microseconds: tried again then.
 */
static int
guard_flock(int fd)
{
	int	tries;

	for (tries = 0; tries < GUARD_LOCK_TRIES; tries++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK)
			return -1;
		usleep(GUARD_LOCK_US);
	}
	errno = EWOULDBLOCK;
	return -1;
}

/*
 * The pid a run lock names is gone: its holder is a copy of the dead
 * driver's fd in a child caught between fork and exec (the fd is
 * close-on-exec, but a child writes its cgroup first), or one still
 * exiting.  Either lets go within moments, so wait for it, bounded:
 * without this a run restarted right after a kill -9 is refused.
 */
static int
guard_dead_holder(int fd)
{
	char	buf[32];
	ssize_t	n;
	long	pid;
	int	waited;

	for (waited = 0; waited < GUARD_DEAD_MS; waited += 5) {
		n = pread(fd, buf, sizeof buf - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		pid = strtol(buf, NULL, 10);
		if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			break;		/* alive, or unknown: really held */
		usleep(5000);
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
	}
	errno = EWOULDBLOCK;
	return -1;
}

/*
 * Take the run lock: held (flock) until we exit, so a kill -9 frees it
 * and a stale pid in the file never blocks.  1: another process holds
 * it, and the message names its pid.
 */
static int
guard_lock(struct loop_guard *g, char **err)
{
	struct stat	 sb;
	char		*name, buf[32];
	ssize_t		 n;
	int		 fd;

	xasprintf(&name, "%s.run.lock", g->id);
	fd = openat(g->dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		xasprintf(err, "%s: %s", name, fd < 0 && errno == ELOOP ?
		    "is a symbolic link, refusing to follow it" : fd < 0 ?
		    strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		free(name);
		return -1;
	}
	if (guard_flock(fd) != 0 && (errno != EWOULDBLOCK ||
	    guard_dead_holder(fd) != 0)) {
		n = errno == EWOULDBLOCK ? pread(fd, buf, sizeof buf - 1, 0) :
		    -1;
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\r\n")] = '\0';
		if (n >= 0)
			xasprintf(err, "loop %s is already driven by another "
			    "process (pid %s, holding %s): one driver per "
			    "loop", g->id, *buf != '\0' ? buf : "unknown",
			    name);
		else
			xasprintf(err, "%s: flock: %s", name, strerror(errno));
		close(fd);
		free(name);
		return n >= 0 ? 1 : -1;
	}
	n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
		xasprintf(err, "%s: cannot write our pid: %s", name,
		    strerror(errno));
		close(fd);
		free(name);
		return -1;
	}
	free(name);
	g->lock_fd = fd;
	return 0;
}

/*
 * Before a driver touches a loop: the state directory (made if need
 * be) and the run lock.  0, 1 locked by another driver, -1.
 */
int
loopguard_open(struct loop_guard *g, const char *state_dir, const char *id,
    char **err)
{
	memset(g, 0, sizeof *g);
	g->dirfd = g->lock_fd = g->workers_fd = -1;
	g->id = xstrdup(id);
	g->next = 1;
	if ((g->dirfd = state_dir_open(state_dir, 1, err)) < 0)
		return -1;
	return guard_lock(g, err);
}

/*
 * Once the loop is ours: {id}.workers (made; a link refused) and the
 * first free agent index.  state: the loop's state if the caller has
 * it, else it is read here if it exists.
 */
int
loopguard_workers(struct loop_guard *g, const json_t *state, char **err)
{
	struct stat	 sb;
	json_t		*st = NULL;
	char		*name, *e = NULL;
	int		 rc;

	xasprintf(&name, "%s.workers", g->id);
	rc = progress_open_dir(g->dirfd, name, 1, &g->workers_fd, err);
	free(name);
	if (rc != 0 || fstat(g->workers_fd, &sb) != 0) {
		if (rc == 0)
			xasprintf(err, "%s.workers: %s", g->id,
			    strerror(errno));
		return -1;
	}
	g->workers_dev = sb.st_dev;
	g->workers_ino = sb.st_ino;
	guard_scan_dir(g->workers_fd, &g->next);
	if (state == NULL && state_load(g->dirfd, g->id, &st, &e) ==
	    STATE_OK)
		state = st;
	free(e);
	guard_scan_json(state, &g->next);
	json_decref(st);
	return 0;
}

/*
 * Right before agent_spawn: {id}.workers is still the directory we
 * opened (no link put in its place since), and the next agent's log is
 * created empty here (O_EXCL): its worker appends to our file, never to
 * an older agent's.  Sets the table's next index to that agent's.
 */
int
loopguard_reserve(struct loop_guard *g, struct sup *s, char **err)
{
	struct stat	 sb;
	char		*name, log[40];
	unsigned	 n, tries;
	int		 fd;

	memset(&sb, 0, sizeof sb);
	xasprintf(&name, "%s.workers", g->id);
	if (fstatat(g->dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !S_ISDIR(sb.st_mode) || sb.st_dev != g->workers_dev ||
	    sb.st_ino != g->workers_ino) {
		xasprintf(err, "%s: %s", name, S_ISLNK(sb.st_mode) ?
		    "became a symbolic link, refusing to follow it" :
		    "was replaced since the loop opened it, refusing to "
		    "write worker logs into it");
		free(name);
		return -1;
	}
	free(name);
	n = s->next_index > g->next ? s->next_index : g->next;
	for (tries = 0; tries < GUARD_MAX_SKIP; tries++, n++) {
		snprintf(log, sizeof log, "agent-%u.log", n);
		fd = openat(g->workers_fd, log, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0) {
			close(fd);
			s->next_index = n;
			g->next = n + 1;
			return 0;
		}
		if (errno != EEXIST)
			break;
	}
	xasprintf(err, "%s.workers/%s: %s", g->id, log, errno == EEXIST ?
	    "no free agent id" : strerror(errno));
	return -1;
}

/*
 * The lock goes with its descriptor; the file stays (unlinking it would
 * let a waiter lock a file nobody else can see).  A zeroed guard is a
 * no-op.
 */
void
loopguard_close(struct loop_guard *g)
{
	if (g->id == NULL)
		return;		/* zeroed, never opened */
	if (g->lock_fd >= 0)
		close(g->lock_fd);
	if (g->workers_fd >= 0)
		close(g->workers_fd);
	if (g->dirfd >= 0)
		close(g->dirfd);
	free(g->id);
	memset(g, 0, sizeof *g);
	g->dirfd = g->lock_fd = g->workers_fd = -1;
}
