/*
 * spool.c: the file the tool's stdout goes to.  An unlinked regular file
 * next to the log, opened O_APPEND: the tool sees a regular file as
 * before (Node-based CLIs truncate output on pipes); the worker reads it
 * at its own offset (pread) and gives back to the disk, a hole punched
 * every SPOOL_FREE_EVERY bytes, what it has read.  The spool's disk use
 * is what the worker has not read yet, and logcap.c alone writes the log.
 *
 * Why not the other ways of capping the log:
 * - compacting the log the tool writes to: its truncation races with
 *   the tool's appends (bytes written between our last read and the
 *   ftruncate are lost), and FALLOC_FL_COLLAPSE_RANGE, which would not
 *   race, exists on ext4 and XFS only (not tmpfs, btrfs, NFS) and cannot
 *   insert the marker;
 * - a pipe for stdout, copied by the worker: Node CLIs lose the end of
 *   their output when they exit with a full pipe, and a slow worker
 *   would stall the tool;
 * - punching holes in the log itself: its size stays 100 MiB of zeros
 *   for every reader.
 * The cost is one more copy of the output (ours into the log, like cat's
 * into its file): `make bench`'s capture figure.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "worker.h"
#include "xmalloc.h"

#define SPOOL_ALIGN	(64u * 1024)	/* holes are whole blocks */
#define SPOOL_FREE_EVERY (8u * 1024 * 1024)	/* read bytes left on the disk */

/* Can holes be punched in fd's filesystem? */
static int
spool_can_free(int fd)
{
	return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
	    SPOOL_ALIGN) == 0;
}

/*
 * A new unlinked file in dir, read-write and O_APPEND: O_TMPFILE, else
 * (a filesystem without it) a named file unlinked at once.
 */
static int
spool_create(const char *dir)
{
	char	*tmpl;
	int	 fd;

	fd = open(dir, O_TMPFILE | O_RDWR | O_APPEND | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR &&
	    errno != EINVAL))
		return fd;
	xasprintf(&tmpl, "%s/.ccw-spool-XXXXXX", dir);
	if ((fd = mkostemp(tmpl, O_APPEND | O_CLOEXEC)) >= 0)
		(void)unlink(tmpl);
	free(tmpl);
	return fd;
}

/*
 * The spool for the log at log_path, in the log's directory; in $TMPDIR
 * (else /tmp) when holes cannot be punched there.  *no_free: nowhere
 * could (the spool then grows with the output, said on our stderr).
 */
int
spool_open(const char *log_path, int *no_free, char **err)
{
	char		*copy = xstrdup(log_path), *dir;
	const char	*tmp;
	int		 fd, alt;

	dir = dirname(copy);
	fd = spool_create(dir);
	if (fd < 0) {
		xasprintf(err, "cannot create a spool in %s: %s", dir,
		    strerror(errno));
		free(copy);
		return -1;
	}
	*no_free = !spool_can_free(fd);
	if (*no_free) {
		if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
			tmp = "/tmp";
		if ((alt = spool_create(tmp)) >= 0 && spool_can_free(alt)) {
			close(fd);
			fd = alt;
			*no_free = 0;
		} else {
			if (alt >= 0)
				close(alt);
			log_warnx("%s: holes cannot be punched there: the "
			    "tool's output is spooled whole", dir);
		}
	}
	free(copy);
	return fd;
}

/*
 * Give back to the disk the spool's bytes below upto, from *freed on, in
 * whole SPOOL_ALIGN blocks, once SPOOL_FREE_EVERY of them have been read
 * (a punch costs a system call and a journal entry).  -1 when the
 * filesystem refused (the caller stops asking).
 */
int
spool_free(int fd, uint64_t *freed, uint64_t upto)
{
	uint64_t	end = upto / SPOOL_ALIGN * SPOOL_ALIGN;

	if (end < *freed + SPOOL_FREE_EVERY)
		return 0;
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	    (off_t)*freed, (off_t)(end - *freed)) != 0)
		return -1;
	*freed = end;
	return 0;
}
