/*
 * fuzzdir.c: a fuzz target's one state directory for the process: its
 * decoder reads files by a directory descriptor, as the supervisor's
 * readers do, so the input is written there first.
 */
#include <config.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzzdir.h"

/* The directory, for the cleanup at exit (one per process). */
static char	fuzzdir_path[64];
static int	fuzzdir_fd = -1;

/* Every file the inputs left, then the directory. */
static void
fuzzdir_cleanup(void)
{
	struct dirent	*de;
	DIR		*d;

	if ((d = opendir(fuzzdir_path)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] != '.')
				unlinkat(fuzzdir_fd, de->d_name, 0);
		closedir(d);
	}
	close(fuzzdir_fd);
	rmdir(fuzzdir_path);
}

/* The directory, made on the first input under $TMPDIR (or /tmp). */
int
fuzzdir_open(void)
{
	const char	*tmp = getenv("TMPDIR");

	if (fuzzdir_fd >= 0)
		return fuzzdir_fd;
	snprintf(fuzzdir_path, sizeof fuzzdir_path, "%s/fuzz-dir.XXXXXX",
	    tmp != NULL && strlen(tmp) < 40 ? tmp : "/tmp");
	if (mkdtemp(fuzzdir_path) == NULL || (fuzzdir_fd =
	    open(fuzzdir_path, O_RDONLY | O_DIRECTORY)) < 0) {
		perror(fuzzdir_path);
		abort();
	}
	atexit(fuzzdir_cleanup);
	return fuzzdir_fd;
}

/* NAME in the directory holds exactly the bytes (no writer is left). */
void
fuzzdir_write(int dirfd, const char *name, const uint8_t *data, size_t len)
{
	int	fd;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || (len > 0 && write(fd, data, len) != (ssize_t)len)) {
		perror(name);
		abort();
	}
	close(fd);
}
