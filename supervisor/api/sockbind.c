/*
 * sockbind.c: the control socket's path: a listening socket that is 0600
 * from the first instant, a stale one replaced, a live one never stolen,
 * and on the way out the path removed only while it is still ours.
 */
#include <config.h>

#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sock.h"
#include "xmalloc.h"

/* Fill a unix address; -1 when the path does not fit sun_path. */
static int
sockbind_addr(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof *sun);
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun->sun_path)
		return -1;
	memcpy(sun->sun_path, path, strlen(path));
	return 0;
}

/*
 * Is something listening at path?  1 live (*pid its pid via SO_PEERCRED,
 * 0 if unknown), 0 stale or absent, -1 and *err when the path is no
 * socket or cannot be probed (it is then never replaced).
 */
static int
sockbind_probe(const char *path, pid_t *pid, char **err)
{
	struct sockaddr_un	sun;
	struct ucred		cr;
	socklen_t		crlen = sizeof cr;
	struct stat		st;
	int			fd, rc;

	*pid = 0;
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		xasprintf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		xasprintf(err, "%s exists and is not a socket; not replaced",
		    path);
		return -1;
	}
	(void)sockbind_addr(&sun, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		xasprintf(err, "socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0) {
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == 0)
			*pid = cr.pid;
		rc = 1;
	} else if (errno == ECONNREFUSED) {
		rc = 0;
	} else {
		xasprintf(err, "%s: cannot tell whether a server listens "
		    "there: %s; not replaced", path, strerror(errno));
		rc = -1;
	}
	close(fd);
	return rc;
}

/* The refusal for a live server, naming its pid when we know it. */
static void
sockbind_live(const char *path, pid_t pid, char **err)
{
	if (pid > 0)
		xasprintf(err, "%s: a live server (pid %ld) listens there; "
		    "not replaced", path, (long)pid);
	else
		xasprintf(err, "%s: a live server listens there; not replaced",
		    path);
}

/*
 * PATH.lock, held for the server's life: two servers starting at once
 * cannot both judge the same stale socket and replace each other's.
 * The file is never removed: unlinking a lock file while another
 * process waits on it would let a third take a different one.
 */
static int
sockbind_lock(const char *path, char **err)
{
	char	*lk;
	pid_t	 pid;
	int	 fd;

	xasprintf(&lk, "%s.lock", path);
	fd = open(lk, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		xasprintf(err, "%s: %s", lk, strerror(errno));
		free(lk);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		switch (sockbind_probe(path, &pid, err)) {
		case 1:
			sockbind_live(path, pid, err);
			break;
		case 0:
			xasprintf(err, "%s: another server is starting there "
			    "(it holds %s)", path, lk);
			break;
		}
		close(fd);
		free(lk);
		return -1;
	}
	free(lk);
	return fd;
}

/*
 * Bind and listen in a fresh 0700 directory next to path, chmod the
 * socket to 0600, then rename it into place (atomically replacing a
 * stale one).  Why not a umask around bind(2): the umask is the whole
 * process's, and the committer threads create state files meanwhile;
 * they would get the socket's mode.  Why not chmod after binding in
 * place: between the two another user could connect.  In the private
 * directory nobody but us can reach the socket before it is 0600.
 */
static int
sockbind_private(const char *path, int *fdp, char **err)
{
	struct sockaddr_un	 sun;
	char			*copy, *dir, *tmpl, *tmp;
	int			 fd = -1, rc = -1;

	copy = xstrdup(path);
	dir = dirname(copy);
	xasprintf(&tmpl, "%s/.ccw-sock.XXXXXX", dir);
	xasprintf(&tmp, "%s/s", tmpl);	/* the X's are filled in place */
	if (sockbind_addr(&sun, tmp) != 0 || sockbind_addr(&sun, path) != 0) {
		xasprintf(err, "%s: the path is too long for a unix socket "
		    "(at most %zu bytes, %zu with its private directory)",
		    path, sizeof sun.sun_path - 1,
		    sizeof sun.sun_path - 1 - (strlen(tmp) - strlen(path)));
		goto out;
	}
	if (mkdtemp(tmpl) == NULL) {
		xasprintf(err, "%s: cannot create a private directory: %s",
		    dir, strerror(errno));
		goto out;
	}
	snprintf(tmp, strlen(tmpl) + 3, "%s/s", tmpl);
	(void)sockbind_addr(&sun, tmp);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof sun) != 0 ||
	    listen(fd, 64) != 0 || chmod(tmp, 0600) != 0 ||
	    rename(tmp, path) != 0) {
		xasprintf(err, "%s: cannot listen: %s", path, strerror(errno));
		(void)unlink(tmp);
		if (fd >= 0)
			close(fd);
		fd = -1;
	} else {
		rc = 0;
	}
	(void)rmdir(tmpl);
out:
	*fdp = fd;
	free(tmp);
	free(tmpl);
	free(copy);
	return rc;
}

/*
 * The listening socket at path: 0 with *fd, *lockfd and the socket's
 * identity (dev, ino) for sockbind_close; -1 and *err otherwise.
 */
int
sockbind_open(const char *path, int *fd, int *lockfd, dev_t *dev, ino_t *ino,
    char **err)
{
	struct stat	st;
	pid_t		pid;
	int		live;

	*fd = *lockfd = -1;
	if ((*lockfd = sockbind_lock(path, err)) < 0)
		return -1;
	if ((live = sockbind_probe(path, &pid, err)) != 0) {
		if (live == 1)
			sockbind_live(path, pid, err);
		goto fail;
	}
	if (sockbind_private(path, fd, err) != 0)
		goto fail;
	if (fstat(*fd, &st) == 0 && lstat(path, &st) == 0) {
		*dev = st.st_dev;
		*ino = st.st_ino;
	}
	return 0;
fail:
	close(*lockfd);
	*lockfd = -1;
	return -1;
}

/* Remove the path if it is still the socket we made, then let go. */
void
sockbind_close(const char *path, int lockfd, dev_t dev, ino_t ino)
{
	struct stat	st;

	if (lstat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino)
		(void)unlink(path);
	if (lockfd >= 0)
		close(lockfd);
}

/*
 * Where a socket goes when the command line names none: the user's
 * runtime directory (private to them, cleared at logout; the caller
 * makes its ccw-supervisor/), else the state directory.  A new string.
 */
char *
sock_default_path(const char *runtime_dir, const char *state_dir)
{
	char	*p;

	if (runtime_dir != NULL && runtime_dir[0] == '/')
		xasprintf(&p, "%s/ccw-supervisor/serve.sock", runtime_dir);
	else
		xasprintf(&p, "%s/serve.sock", state_dir != NULL ? state_dir :
		    ".");
	return p;
}
