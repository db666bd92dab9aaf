/*
 * rotate.c: an append-only side file (a loop's {id}.history.jsonl, its
 * {id}.progress/ NDJSON logs) rotated by size: past ROTATE_BYTES it
 * becomes NAME.1, NAME.1 becomes NAME.2, ... and NAME.ROTATE_KEEP goes.
 */
#include <config.h>

#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "rotate.h"

/*
 * A positive count from the environment, else dflt: the test seams of
 * the bounds on disk ($CCW_ROTATE_BYTES here, $CCW_WORKER_LOGS_KEEP in
 * retire.c), so that a test reaches them with a few records.
 */
long long
rotate_env(const char *name, long long dflt)
{
	const char	*e = getenv(name);
	char		*end;
	long long	 n;

	if (e != NULL && *e != '\0') {
		n = strtoll(e, &end, 10);
		if (*end == '\0' && n > 0)
			return n;
	}
	return dflt;
}

/*
 * Called by an appender after its write (fd is NAME in dfd): a loop that runs for weeks keeps at most ROTATE_KEEP + 1
 * files of about ROTATE_BYTES each.  An appender that opened NAME
 * before the rename writes to NAME.1: its record is kept, in order.
 * Returns 1 when it rotated, 0 when not, -1 when a rename failed (the
 * file goes on growing; the caller's record is written either way).
 */
int
rotate_maybe(int dfd, const char *name, int fd)
{
	struct stat	 st, now;
	char		 from[512], to[512];
	int		 i;

	if (fstat(fd, &st) == -1 ||
	    st.st_size < rotate_env("CCW_ROTATE_BYTES", ROTATE_BYTES))
		return 0;
	/* another appender rotated it already: fd is NAME.1 now */
	if (fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) == -1 ||
	    now.st_ino != st.st_ino || now.st_dev != st.st_dev)
		return 0;
	for (i = ROTATE_KEEP; i > 1; i--) {
		snprintf(from, sizeof from, "%s.%d", name, i - 1);
		snprintf(to, sizeof to, "%s.%d", name, i);
		(void)renameat(dfd, from, dfd, to);	/* absent: nothing */
	}
	snprintf(to, sizeof to, "%s.1", name);
	return renameat(dfd, name, dfd, to) == 0 ? 1 : -1;
}
