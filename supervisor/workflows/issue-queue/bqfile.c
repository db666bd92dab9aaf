/*
 * bqfile.c: the batch's file chores (bqfile.h): bounded reads, the
 * crash-safe replace of a queue file or a report, JSON text as CCW's
 * JSON.stringify(v, null, 2) writes it, CCW's timestamps; a path's
 * directory and the check of a word (a tool, role or id) the readers use.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bqfile.h"
#include "fdio.h"
#include "xmalloc.h"

/* Every byte of fd, refused past cap: a hostile file never fills memory. */
int
bqfile_read_fd(int fd, const char *name, size_t cap, char **bufp,
    size_t *lenp, char **err)
{
	char	*buf = NULL;
	size_t	 len = 0, size = 0;
	ssize_t	 n;

	for (;;) {
		if (len == size) {
			if (size > cap) {
				free(buf);
				xasprintf(err, "%s: larger than %zu bytes", name,
				    cap);
				return -1;
			}
			size = size == 0 ? 8192 : size * 2;
			buf = xreallocarray(buf, size + 1, 1);
		}
		n = read(fd, buf + len, size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			xasprintf(err, "%s: %s", name, strerror(errno));
			free(buf);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > cap) {
		free(buf);
		xasprintf(err, "%s: larger than %zu bytes", name, cap);
		return -1;
	}
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;
}

/* A regular file whole (its stat too, when asked): inputs and queues. */
int
bqfile_read(const char *path, size_t cap, char **bufp, size_t *lenp,
    struct stat *stp, char **err)
{
	struct stat	 st;
	int		 fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		xasprintf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		xasprintf(err, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	if ((size_t)st.st_size > cap) {
		xasprintf(err, "%s: larger than %zu bytes", path, cap);
		close(fd);
		return -1;
	}
	rc = bqfile_read_fd(fd, path, cap, bufp, lenp, err);
	close(fd);
	if (rc == 0 && stp != NULL)
		*stp = st;
	return rc;
}

/* The file is still the one stat'ed before (inode, size, mtime). */
static int
bqfile_same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	    a->st_size == b->st_size &&
	    a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	    a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/*
 * path replaced by data so that a crash at any moment leaves the old
 * file or the new one: a fresh temp file beside it (same filesystem),
 * fsync, rename over, fsync of the directory.  The mode of the old file
 * is kept (0644 for a new one).  With expect, the file must still be the
 * one stat'ed then, checked right before the rename (CCW's tools write
 * in place and take no lock: that is all a reader can check): 1 and
 * nothing replaced when it changed.
 */
int
bqfile_write_atomic(const char *path, const char *data, size_t len,
    const struct stat *expect, char **err)
{
	struct stat	 st;
	char		*dir, *tmp, *slash;
	mode_t		 mode = 0644;
	int		 fd, dfd, rc = -1;

	if (stat(path, &st) == 0)
		mode = st.st_mode & 07777;
	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) == NULL) {
		free(dir);
		dir = xstrdup(".");
	} else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	xasprintf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    mode);
	if (fd < 0) {
		xasprintf(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	if (fchmod(fd, mode) != 0 || fd_write_all(fd, data, len) != 0 ||
	    fsync(fd) != 0) {
		xasprintf(err, "write %s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		goto out;
	}
	if (close(fd) != 0) {
		xasprintf(err, "close %s: %s", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (expect != NULL && (stat(path, &st) != 0 ||
	    !bqfile_same(expect, &st))) {
		unlink(tmp);
		rc = 1;
		goto out;
	}
	if (rename(tmp, path) != 0) {
		xasprintf(err, "rename %s: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    fsync(dfd) != 0) {
		xasprintf(err, "fsync of %s: %s", dir, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		goto out;
	}
	close(dfd);
	rc = 0;
out:
	free(tmp);
	free(dir);
	return rc;
}

/*
 * Our writers one at a time: an exclusive flock on the file itself, taken
 * again when a rename replaced the inode while we waited.  CCW takes no
 * lock (writeFileSync in place); bqfile_write_atomic's check covers it.
 * Returns the locked descriptor, -2 when the file does not exist.
 */
int
bqfile_lock(const char *path, char **err)
{
	struct stat	 a, b;
	int		 fd, i;

	for (i = 0; i < 100; i++) {
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			if (errno == ENOENT)
				return -2;
			xasprintf(err, "%s: %s", path, strerror(errno));
			return -1;
		}
		if (flock(fd, LOCK_EX) != 0) {
			xasprintf(err, "lock %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		if (fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return fd;
		close(fd);
	}
	xasprintf(err, "%s keeps being replaced", path);
	return -1;
}

/*
 * path edited under bqfile_lock: edit reads it (exists says whether it
 * does; it fills st when it reads) and returns the new text (0), or 1
 * when there is nothing to write, or -1; the text replaces the file only
 * if the file is still what edit read, else edit runs again on what is
 * there now.
 */
int
bqfile_edit(const char *path, bqfile_edit_fn edit, void *arg, char **err)
{
	struct stat	 st;
	char		*text;
	int		 lfd, round, rc = -1, w;

	if ((lfd = bqfile_lock(path, err)) == -1)
		return -1;
	for (round = 0; round < BQFILE_ROUNDS; round++) {
		text = NULL;
		if ((w = edit(path, lfd != -2, &st, arg, &text, err)) != 0) {
			rc = w == 1 ? 0 : -1;
			goto out;
		}
		w = bqfile_write_atomic(path, text, strlen(text),
		    lfd == -2 ? NULL : &st, err);
		free(text);
		if (w <= 0) {
			rc = w;
			goto out;
		}
	}
	xasprintf(err, "%s keeps changing under us", path);
out:
	if (lfd >= 0)
		close(lfd);
	return rc;
}

/* The fewest digits that read back as v (JavaScript prints those). */
static int
bqfile_real_digits(double v)
{
	char	 buf[64];
	int	 p;

	for (p = 1; p < 17; p++) {
		snprintf(buf, sizeof(buf), "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			return p;
	}
	return 17;
}

/* The most digits any real of j needs. */
static int
bqfile_max_digits(const json_t *j)
{
	const char	*k;
	json_t		*v;
	size_t		 i;
	int		 m = 1, d;

	switch (json_typeof(j)) {
	case JSON_REAL:
		return bqfile_real_digits(json_real_value(j));
	case JSON_ARRAY:
		json_array_foreach(j, i, v)
			if ((d = bqfile_max_digits(v)) > m)
				m = d;
		return m;
	case JSON_OBJECT:
		json_object_foreach((json_t *)j, k, v)
			if ((d = bqfile_max_digits(v)) > m)
				m = d;
		return m;
	default:
		return m;
	}
}

/*
 * j as CCW writes its queue and index files: JSON.stringify(j, null, 2)
 * (ccw/src/commands/issue.ts writeQueue, writeQueueIndex), members in
 * their order, no trailing newline.  Reals use the fewest digits that
 * read back exactly (jansson's default 17 would turn CCW's
 * semantic_priority 0.8 into 0.80000000000000004).  NULL: out of memory.
 */
char *
bqfile_json_text(const json_t *j)
{
	return json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
	    JSON_REAL_PRECISION(bqfile_max_digits(j)));
}

/* j as one JSONL line (JSON.stringify(j), issue.ts writeIssues), no LF. */
char *
bqfile_json_line(const json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER |
	    JSON_REAL_PRECISION(bqfile_max_digits(j)));
}

/* Now as JavaScript's new Date().toISOString(): UTC, milliseconds, Z. */
void
bqfile_iso_now(char *buf, size_t size)
{
	struct timespec	 ts;
	struct tm	 tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000L);
}

/* A tool, role or id word: no spaces, quotes or path tricks. */
int
bq_word(const char *s)
{
	size_t	 i;

	if (s[0] == '\0' || strlen(s) > 128)
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		    strchr("._-", s[i]) != NULL))
			return 0;
	return 1;
}

/* The directory part of an absolute path ("/" for "/x"). */
char *
bq_dirname(const char *path)
{
	const char	*slash = strrchr(path, '/');

	if (slash == NULL)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}
