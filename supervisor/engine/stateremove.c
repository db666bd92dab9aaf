/*
 * stateremove.c: removing every file of a loop but its state file (whose
 * owner deleted it): the side directories one level deep, the side
 * files, the locks; and, on recovery, the temp files (NAME.PID.tmp) of
 * writers that died.  No link is followed; a link is removed as a name.
 */
#include <config.h>

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "rotate.h"
#include "state.h"
#include "xmalloc.h"

/*
 * The loop's side directories ({id}SUFFIX); they hold files only, and
 * {id}/ the empty wt/ its worktrees leave once removed (a worktree left
 * in it is kept: its files are the user's to look at).
 */
static const char *const remove_dirs[] = {
	".progress", ".workers", "", NULL
};

/* The loop's side files and locks next to its state file. */
static const char *const remove_files[] = {
	".history.jsonl", ".tasks.jsonl", ".json.tmp", ".lock", ".run.lock",
	".answers.jsonl", NULL
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
		/* an empty directory goes too (wt/, its worktrees removed) */
		if (unlinkat(fd, de->d_name, 0) != 0 && (errno != EISDIR ||
		    unlinkat(fd, de->d_name, AT_REMOVEDIR) != 0) &&
		    errno != ENOENT && rc == 0) {
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
	/* the history's rotated files (rotate.c): NAME.1 .. NAME.KEEP */
	for (i = 1; i <= ROTATE_KEEP; i++) {
		xasprintf(&name, "%s.history.jsonl.%zu", id, i);
		(void)unlinkat(dirfd, name, 0);
		free(name);
	}
	return rc;
}

/*
 * NAME.PID.tmp (progress_replace's temp) of a process that is gone: a
 * writer killed between its write and its rename.  A live pid's is
 * kept (it may be writing now, or its pid was reused: harmless).
 */
static int
clean_is_stale(const char *name)
{
	size_t	 len = strlen(name), i;
	long	 pid = 0;

	if (len < 6 || strcmp(name + len - 4, ".tmp") != 0)
		return 0;
	for (i = len - 4; i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9';
	    i--)
		;
	if (i == 0 || i == len - 4 || name[i - 1] != '.' || len - 4 - i > 9)
		return 0;
	pid = strtol(name + i, NULL, 10);
	return pid > 0 && kill((pid_t)pid, 0) == -1 && errno == ESRCH;
}

/*
 * The stale temps in DIRFD's NAME (NULL: DIRFD itself) whose names start
 * with PFX; with DEEP, in its directories too (one level down).
 */
static void
clean_stale_in(int dirfd, const char *name, const char *pfx, int deep)
{
	struct dirent	*de;
	DIR		*d = NULL;
	int		 fd;

	fd = openat(dirfd, name != NULL ? name : ".", O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && (d = fdopendir(fd)) == NULL)
		close(fd);
	while (d != NULL && (de = readdir(d)) != NULL) {
		if (deep && de->d_type == DT_DIR && de->d_name[0] != '.')
			clean_stale_in(fd, de->d_name, "", 0);
		else if (strncmp(de->d_name, pfx, strlen(pfx)) == 0 &&
		    clean_is_stale(de->d_name) &&
		    unlinkat(fd, de->d_name, 0) == 0)
			log_info("state: removed %s%s%s left by a writer that "
			    "died", name != NULL ? name : "",
			    name != NULL ? "/" : "", de->d_name);
	}
	if (d != NULL)
		closedir(d);
}

/*
 * Recovery: ID's temp files of dead writers, next to its state file
 * ({id}.NAME.PID.tmp) and in its side directories, are removed, so none
 * outlives a resume.  NULL id: every one in DIRFD and the directories
 * in it.
 */
void
state_clean_stale(int dirfd, const char *id)
{
	char	*name, *pfx;
	size_t	 i;

	if (id == NULL) {
		clean_stale_in(dirfd, NULL, "", 1);
		return;
	}
	xasprintf(&pfx, "%s.", id);
	clean_stale_in(dirfd, NULL, pfx, 0);
	free(pfx);
	for (i = 0; remove_dirs[i] != NULL; i++) {
		xasprintf(&name, "%s%s", id, remove_dirs[i]);
		clean_stale_in(dirfd, name, "", 0);
		free(name);
	}
}
