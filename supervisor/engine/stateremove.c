/*
 * stateremove.c: removing every file of a loop but its state file (whose
 * owner deleted it): the side directories one level deep, the side
 * files, the locks.  No link is followed; a link is removed as a name.
 */
#include <config.h>

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state.h"
#include "xmalloc.h"

/* The loop's side directories ({id}SUFFIX); they hold files only. */
static const char *const remove_dirs[] = {
	".progress", ".workers", "", NULL
};

/* The loop's side files and locks next to its state file. */
static const char *const remove_files[] = {
	".history.jsonl", ".tasks.jsonl", ".json.tmp", ".lock", ".run.lock",
	NULL
};

/* Every entry of DIR (opened without following a link), then DIR. */
static int
remove_dir(int dirfd, const char *name, char **err)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd, rc = 0;

	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		/* a link or a file under a directory's name: the name goes */
		if ((errno == ELOOP || errno == ENOTDIR) &&
		    unlinkat(dirfd, name, 0) == 0)
			return 0;
		xasprintf(err, "%s: %s", name, strerror(errno));
		return -1;
	}
	if ((d = fdopendir(fd)) == NULL) {
		xasprintf(err, "%s: %s", name, strerror(errno));
		close(fd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(fd, de->d_name, 0) != 0 && errno != ENOENT &&
		    rc == 0) {
			xasprintf(err, "%s/%s: %s", name, de->d_name,
			    strerror(errno));
			rc = -1;
		}
	}
	closedir(d);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT &&
	    rc == 0) {
		xasprintf(err, "%s: %s", name, strerror(errno));
		rc = -1;
	}
	return rc;
}

/*
 * Remove ID's side files, directories and locks in DIRFD, as when its
 * owner deleted the loop.  Refused (-1) while {id}.json exists: then the
 * loop is someone's again.  Goes on past a failure; the first is told.
 */
int
state_remove_files(int dirfd, const char *id, char **err)
{
	struct stat	 sb;
	char		*name, *e = NULL;
	size_t		 i;
	int		 rc = 0;

	xasprintf(&name, "%s.json", id);
	if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
		xasprintf(err, "%s exists again: its files are kept", name);
		free(name);
		return -1;
	}
	free(name);
	for (i = 0; remove_dirs[i] != NULL; i++) {
		xasprintf(&name, "%s%s", id, remove_dirs[i]);
		if (remove_dir(dirfd, name, rc == 0 ? err : &e) != 0)
			rc = -1;
		free(e);
		e = NULL;
		free(name);
	}
	for (i = 0; remove_files[i] != NULL; i++) {
		xasprintf(&name, "%s%s", id, remove_files[i]);
		if (unlinkat(dirfd, name, 0) != 0 && errno != ENOENT &&
		    rc == 0) {
			xasprintf(err, "%s: %s", name, strerror(errno));
			rc = -1;
		}
		free(name);
	}
	return rc;
}
