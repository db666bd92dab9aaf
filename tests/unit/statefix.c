/*
 * statefix.c: the fixture the state tests share: a private state
 * directory, files written and read in it, commits through the real
 * paths with the last error kept in t_err.
 */
#include <config.h>

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ccw-loop.h"
#include "state.h"
#include "statefix.h"
#include "tap.h"
#include "xmalloc.h"

/* The state file of ccw-loop (its sections and rules). */
#define WS	(&ccw_loop_state)

char	 t_top[64];	/* the private temp directory */
char	 t_path[128];	/* the state directory, in it */
int	 t_dirfd;
char	*t_err;		/* the last error of a t_* helper, owned here */

/* The last error, for diagnostics. */
const char *
t_e(void)
{
	return t_err != NULL ? t_err : "(none)";
}

/* Forget the last error. */
void
t_clear(void)
{
	free(t_err);
	t_err = NULL;
}

/* Write a whole file in the state directory. */
void
t_write(const char *name, const char *buf, size_t len)
{
	int	fd;

	fd = openat(t_dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		tap_diag("cannot write %s: %s", name, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* A file's bytes (NUL-terminated), or NULL. */
char *
t_read(int dirfd, const char *name)
{
	struct stat	 sb;
	char		*buf = NULL;
	int		 fd;

	if ((fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (fstat(fd, &sb) == 0) {
		buf = xmalloc((size_t)sb.st_size + 1);
		if (read(fd, buf, (size_t)sb.st_size) == sb.st_size)
			buf[sb.st_size] = '\0';
		else {
			free(buf);
			buf = NULL;
		}
	}
	close(fd);
	return buf;
}

/* Make a file look old, so a parse failure is corruption, not a writer. */
void
t_age(const char *name)
{
	struct timespec	ts[2];

	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= 10;
	ts[1] = ts[0];
	utimensat(t_dirfd, name, ts, AT_SYMLINK_NOFOLLOW);
}

/* A fixture from tests/state/ copied into the state directory. */
void
t_fixture(const char *fixture, const char *name)
{
	char	*path, *buf;
	int	 fd;

	xasprintf(&path, "%s/tests/state", getenv("srcdir") ? getenv("srcdir") : ".");
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if ((buf = fd >= 0 ? t_read(fd, fixture) : NULL) == NULL)
		tap_diag("fixture %s/%s missing", path, fixture);
	else
		t_write(name, buf, strlen(buf));
	if (fd >= 0)
		close(fd);
	free(buf);
	free(path);
}

/* The names in a directory, sorted, as one string (to compare listings). */
char *
t_listing(const char *path)
{
	struct dirent	**nl;
	char		 *s = xstrdup(""), *t;
	int		  n, i;

	if ((n = scandir(path, &nl, NULL, alphasort)) < 0)
		return s;
	for (i = 0; i < n; i++) {
		xasprintf(&t, "%s%s/", s, nl[i]->d_name);
		free(s);
		s = t;
		free(nl[i]);
	}
	free(nl);
	return s;
}

/* Whether any error line contains the text. */
int
t_has(const struct strv *sv, const char *text)
{
	size_t	i;

	for (i = 0; i < sv->n; i++)
		if (strstr(sv->v[i], text) != NULL)
			return 1;
	return 0;
}

/* Load or NULL. */
json_t *
t_load(const char *id)
{
	json_t	*j = NULL;

	t_clear();
	if (state_load(t_dirfd, id, &j, &t_err) != STATE_OK)
		tap_diag("load %s: %s", id, t_e());
	return j;
}

/* A front end's write of one member (taken), by temp file and rename, no lock. */
void
t_fe_set(const char *id, const char *key, json_t *value)
{
	json_t	*j = t_load(id);
	char	*text, *name, *tmp;

	json_object_set_new(j, key, value);
	text = json_dumps(j, JSON_INDENT(2));
	xasprintf(&name, "%s.json", id);
	xasprintf(&tmp, "%s.json.fe", id);
	t_write(tmp, text, strlen(text));
	renameat(t_dirfd, tmp, t_dirfd, name);
	json_decref(j);
	free(text);
	free(name);
	free(tmp);
}

/* The status on disk now. */
const char *
t_status(const char *id)
{
	static char	 buf[32];
	json_t		*j = t_load(id);

	snprintf(buf, sizeof buf, "%s", json_string_value(json_object_get(j,
	    "status")) ? json_string_value(json_object_get(j, "status")) : "?");
	json_decref(j);
	return buf;
}

/* A skill_state member of a state. */
json_t *
t_ss(const json_t *st, const char *key)
{
	return json_object_get(json_object_get(st, "skill_state"), key);
}

/* {"skill_state": {"hammer": v}} */
json_t *
t_hammer(int v)
{
	return json_pack("{s:{s:i}}", "skill_state", "hammer", v);
}

/* state_commit with the patch taken and the error kept in t_err. */
int
t_commit(const char *id, json_t *patch, const char *to, const char *reason,
    json_t **merged)
{
	int	rc;

	t_clear();
	rc = state_commit(WS, t_dirfd, id, patch, to, reason, merged, NULL,
	    &t_err);
	json_decref(patch);
	return rc;
}

/* The store: one update of our counter, committed now. */
int
t_store_commit(struct state_store *s, int v)
{
	json_t	*p = t_hammer(v);

	state_store_update(s, p);
	json_decref(p);
	t_clear();
	return state_store_flush(s, &t_err);
}

/* A new loop file through the real path. */
int
t_create(const char *id)
{
	json_t	*st = state_new(WS, id, "t", "d", 10);
	int	 rc;

	t_clear();
	if ((rc = state_create(WS, t_dirfd, id, st, NULL, &t_err)) != 0)
		tap_diag("create %s: %s", id, t_e());
	json_decref(st);
	return rc;
}

static int
t_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* A private state directory, a/b/.loop in a fresh temp directory. */
void
t_setup(void)
{
	snprintf(t_top, sizeof t_top, "/tmp/ccw-state.XXXXXX");
	if (mkdtemp(t_top) == NULL)
		exit(1);
	snprintf(t_path, sizeof t_path, "%s/a/b/.loop", t_top);
	t_dirfd = state_dir_open(t_path, 1, &t_err);
	tap_ok(t_dirfd >= 0, "state_dir_open creates the path (%s)", t_e());
}

/* Remove everything t_setup made. */
void
t_teardown(void)
{
	close(t_dirfd);
	nftw(t_top, t_rm, 16, FTW_DEPTH | FTW_PHYS);
	t_clear();
}
