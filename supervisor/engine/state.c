/*
 * state.c: the loop state file's ids and directory, reading it (with the
 * quarantine of a corrupt file), a new state (the workflow's table
 * gives skill_state's sections; the derived figures are the table's).
 * Checking it against the schema is statevalid.c's.
 */
#include <config.h>

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "flowdef.h"
#include "state.h"
#include "xmalloc.h"

#define STATE_RECENT_NS	(2LL * 1000000000LL)	/* younger: a writer may be busy */

/* Ids become file names: one safe alphabet, bounded, never "..". */
int
state_id_valid(const char *id)
{
	size_t	i;

	if (id == NULL || !((id[0] >= 'A' && id[0] <= 'Z') ||
	    (id[0] >= 'a' && id[0] <= 'z') || (id[0] >= '0' && id[0] <= '9')))
		return 0;
	for (i = 1; id[i] != '\0'; i++) {
		if (i >= STATE_ID_MAX)
			return 0;
		if (!((id[i] >= 'A' && id[i] <= 'Z') ||
		    (id[i] >= 'a' && id[i] <= 'z') ||
		    (id[i] >= '0' && id[i] <= '9') ||
		    id[i] == '.' || id[i] == '_' || id[i] == '-'))
			return 0;
	}
	return strstr(id, "..") == NULL;
}

/*
 * A directory stream of dirfd on a descriptor of its own (dirfd's
 * offset is not moved), or NULL.
 */
DIR *
state_opendir(int dirfd)
{
	DIR	*d;
	int	 fd;

	if ((fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return NULL;
	if ((d = fdopendir(fd)) == NULL)
		close(fd);
	return d;
}

/*
 * Every loop file of a directory ({id}.json with a valid id, not the
 * configuration): fn(arg, dirfd, id) in readdir's order until it returns
 * nonzero.  The one walk of a state directory's loops (serve's list, the
 * queue of questions).
 */
void
state_dir_each(int dirfd, state_each_fn fn, void *arg)
{
	struct dirent	*de;
	DIR		*d;
	char		 id[STATE_ID_MAX + 8];
	size_t		 n;

	if ((d = state_opendir(dirfd)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (n <= 5 || n - 5 > STATE_ID_MAX ||
		    strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		memcpy(id, de->d_name, n - 5);
		id[n - 5] = '\0';
		if (state_id_valid(id) && strcmp(id, "config") != 0 &&
		    fn(arg, dirfd, id) != 0)
			break;
	}
	closedir(d);
}

/* CCW's id shape, so the dashboard lists our loops like its own. */
char *
state_id_generate(void)
{
	return state_id_make("loop-v2");
}

/* PREFIX-YYYYMMDDTHHMMSS-xxxxxxxx: a loop's, or a batch's (batch-...). */
char *
state_id_make(const char *prefix)
{
	struct tm	 tm;
	time_t		 now = time(NULL);
	uint32_t	 r = 0;
	char		*id;
	int		 fd;

	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) >= 0) {
		if (read(fd, &r, sizeof r) != (ssize_t)sizeof r)
			r = 0;
		close(fd);
	}
	if (r == 0)
		r = (uint32_t)getpid() * 2654435761u ^ (uint32_t)now;
	gmtime_r(&now, &tm);
	xasprintf(&id, "%s-%04d%02d%02dT%02d%02d%02d-%08x", prefix,
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, r);
	return id;
}

/* Is PATH (relative to AT, a directory) a directory, else a file? */
static int
state_git_is(const char *at, const char *path, int want_dir)
{
	struct stat	 sb;
	char		*p;
	int		 yes;

	if (*path == '/')
		p = xstrdup(path);
	else
		xasprintf(&p, "%s/%s", at, path);
	yes = stat(p, &sb) == 0 && (want_dir ? S_ISDIR(sb.st_mode) :
	    S_ISREG(sb.st_mode));
	free(p);
	return yes;
}

/*
 * git's is_git_directory: HEAD in it, objects/ and refs/ in it or in
 * the directory its commondir names (a linked worktree's gitdir).  An
 * empty directory named .git is not a repository.
 */
static int
state_git_dir(const char *gd)
{
	char	 buf[PATH_MAX], *common;
	ssize_t	 n;
	int	 fd, yes;

	if (!state_git_is(gd, "HEAD", 0))
		return 0;
	xasprintf(&common, "%s/commondir", gd);
	fd = open(common, O_RDONLY | O_CLOEXEC);
	free(common);
	common = NULL;
	if (fd >= 0) {
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			return 0;
		buf[n] = '\0';
		buf[strcspn(buf, "\r\n")] = '\0';
		if (buf[0] == '/')
			common = xstrdup(buf);
		else
			xasprintf(&common, "%s/%s", gd, buf);
	}
	yes = state_git_is(common != NULL ? common : gd, "objects", 1) &&
	    state_git_is(common != NULL ? common : gd, "refs", 1);
	free(common);
	return yes;
}

/*
 * DIR/.git as git reads it: a repository directory, or a file
 * "gitdir: PATH" (a linked worktree, a submodule) naming one, PATH
 * relative to DIR.
 */
static int
state_git_at(const char *dir)
{
	struct stat	 sb;
	char		*git, *gd = NULL, buf[PATH_MAX + 16];
	ssize_t		 n;
	int		 fd, yes = 0;

	xasprintf(&git, "%s/.git", dir);
	if (stat(git, &sb) != 0)
		;
	else if (S_ISDIR(sb.st_mode))
		yes = state_git_dir(git);
	else if (S_ISREG(sb.st_mode) &&
	    (fd = open(git, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\r\n")] = '\0';
		if (strncmp(buf, "gitdir: ", 8) == 0 && buf[8] != '\0') {
			if (buf[8] == '/')
				gd = xstrdup(buf + 8);
			else
				xasprintf(&gd, "%s/%s", dir, buf + 8);
			yes = state_git_dir(gd);
		}
	}
	free(gd);
	free(git);
	return yes;
}

/* Is DIR one of GIT_CEILING_DIRECTORIES (git does not climb into it)? */
static int
state_git_ceiling(const char *dir)
{
	const char	*env = getenv("GIT_CEILING_DIRECTORIES");
	char		*list, *s, *save = NULL, buf[PATH_MAX];
	int		 yes = 0;

	if (env == NULL || *env == '\0')
		return 0;
	list = xstrdup(env);
	for (s = strtok_r(list, ":", &save); s != NULL && !yes;
	    s = strtok_r(NULL, ":", &save))
		yes = *s == '/' && realpath(s, buf) != NULL &&
		    strcmp(buf, *dir != '\0' ? dir : "/") == 0;
	free(list);
	return yes;
}

/*
 * Is dir inside a git work tree, as git means it: a .git (a repository
 * directory, or a gitdir: file naming one) in it or above it, not
 * climbing into a GIT_CEILING_DIRECTORIES entry.  git is not run.
 */
static int
state_in_git(const char *dir)
{
	char	*p, *slash, buf[PATH_MAX];
	int	 found = 0;

	if (realpath(dir, buf) == NULL)
		return 0;
	p = xstrdup(buf);
	while (!found) {
		found = state_git_at(p);
		if ((slash = strrchr(p, '/')) == NULL || p[0] == '\0')
			break;
		*slash = '\0';
		if (state_git_ceiling(p))
			break;
	}
	free(p);
	return found;
}

/*
 * A state directory we have just created: inside a git work tree it gets
 * a .gitignore of "*", so an agent's `git add -A` does not commit the
 * loop's files.  One that exists already is never overwritten.
 */
void
state_dir_made(const char *path)
{
	char	*gi;
	int	 fd;

	if (!state_in_git(path))
		return;
	xasprintf(&gi, "%s/.gitignore", path);
	fd = open(gi, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, "*\n", 2) != 2)
			log_warnx("%s: short write", gi);
		close(fd);
	}
	free(gi);
}

/* Every file is opened relative to this descriptor, so it is opened once. */
int
state_dir_open(const char *path, int create, char **err)
{
	char	*p, *s;
	int	 fd, end;

	if (path == NULL || *path == '\0') {
		xasprintf(err, "empty state directory path");
		return -1;
	}
	if (create) {
		p = xstrdup(path);
		for (s = p + 1; ; s++) {
			if (*s != '/' && *s != '\0')
				continue;
			end = *s == '\0';
			*s = '\0';
			if (mkdir(p, 0755) == 0) {
				if (end)	/* the state directory itself */
					state_dir_made(p);
			} else if (errno != EEXIST) {
				xasprintf(err, "mkdir %s: %s", p, strerror(errno));
				free(p);
				return -1;
			}
			if (end)
				break;
			*s = '/';
		}
		free(p);
	}
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		xasprintf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	return fd;
}

/* Is PATH a directory (a link to one counts: the user chose it)? */
static int
state_is_dir(const char *path)
{
	struct stat	sb;

	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/*
 * Where a new loop goes: CCW's dashboard reads ROOT/.workflow/.loop, so
 * in a CCW project (ROOT/.workflow exists) that is ours too; elsewhere
 * ROOT/.loop.  ROOT/.loop keeps config.json and roles/ either way.
 */
char *
state_dir_default(const char *root)
{
	char	*dir, *wf;

	xasprintf(&wf, "%s/.workflow", root);
	if (state_is_dir(wf)) {
		xasprintf(&dir, "%s/.loop", wf);
		free(wf);
		return dir;
	}
	free(wf);
	xasprintf(&dir, "%s/.loop", root);
	return dir;
}

/*
 * The directory holding loop ID's state file, or NULL: CCW's
 * ROOT/.workflow/.loop first, then ROOT/.loop (loops of older runs), so
 * a loop given by id is found wherever CCW or we made it.
 */
char *
state_dir_find(const char *root, const char *id)
{
	static const char *const dirs[] = { ".workflow/.loop", ".loop" };
	struct stat	 sb;
	char		*dir, *file;
	size_t		 i;
	int		 found;

	for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		xasprintf(&dir, "%s/%s", root, dirs[i]);
		xasprintf(&file, "%s/%s.json", dir, id);
		found = lstat(file, &sb) == 0;
		free(file);
		if (found)
			return dir;
		free(dir);
	}
	return NULL;
}

/* Loop ID's directory: where its state file is, else where it would go. */
char *
state_dir_for(const char *root, const char *id)
{
	char	*dir;

	if (id != NULL && (dir = state_dir_find(root, id)) != NULL)
		return dir;
	return state_dir_default(root);
}

/* Slurp a regular file, refusing more than the cap (that is corruption). */
static int
state_read_all(int fd, char **bufp, size_t *lenp, int *toobig, char **err)
{
	size_t	 cap = 65536, len = 0;
	char	*buf = xmalloc(cap);
	ssize_t	 n;

	*toobig = 0;
	for (;;) {
		if (len > STATE_MAX_SIZE) {
			*toobig = 1;
			break;
		}
		if (len == cap) {
			cap = cap * 2 > (size_t)STATE_MAX_SIZE + 1 ?
			    (size_t)STATE_MAX_SIZE + 1 : cap * 2;
			buf = xreallocarray(buf, cap, 1);
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			xasprintf(err, "read: %s", strerror(errno));
			free(buf);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

/*
 * A JavaScript writer puts integers up to 1e21 without exponent, beyond
 * what jansson's int64 takes: turn such tokens into reals (same value for
 * JavaScript) instead of calling the whole file corrupt.
 */
static char *
state_fix_bigints(const char *in, size_t len, size_t *outlen)
{
	char	*out = xmalloc(len * 2 + 1);
	size_t	 i = 0, o = 0, j, digits;
	int	 plain;

	while (i < len) {
		if (in[i] == '"') {
			out[o++] = in[i++];
			while (i < len && in[i] != '"') {
				if (in[i] == '\\' && i + 1 < len)
					out[o++] = in[i++];
				out[o++] = in[i++];
			}
			if (i < len)
				out[o++] = in[i++];
			continue;
		}
		if (in[i] != '-' && !(in[i] >= '0' && in[i] <= '9')) {
			out[o++] = in[i++];
			continue;
		}
		plain = 1;
		digits = 0;
		for (j = i; j < len && strchr("+-0123456789.eE", in[j]) != NULL &&
		    in[j] != '\0'; j++) {
			if (in[j] == '.' || in[j] == 'e' || in[j] == 'E')
				plain = 0;
			else if (in[j] >= '0' && in[j] <= '9')
				digits++;
		}
		memcpy(out + o, in + i, j - i);
		o += j - i;
		if (plain && (digits > 19 || (digits == 19 &&
		    memcmp(in + i + (in[i] == '-'), in[i] == '-' ?
		    "9223372036854775808" : "9223372036854775807", 19) > 0))) {
			out[o++] = '.';
			out[o++] = '0';
		}
		i = j;
	}
	*outlen = o;
	return out;
}

/* Parse the bytes: an object, or NULL with the reason. */
static json_t *
state_parse(const char *buf, size_t len, char **why)
{
	json_error_t	 jerr;
	json_t		*j;
	char		*fixed;
	size_t		 flen;

	if (len == 0) {
		*why = xstrdup("empty file");
		return NULL;
	}
	if (memchr(buf, '\0', len) != NULL) {
		*why = xstrdup("holds a NUL byte");
		return NULL;
	}
	j = json_loadb(buf, len, 0, &jerr);
	if (j == NULL && strstr(jerr.text, "too big") != NULL) {
		fixed = state_fix_bigints(buf, len, &flen);
		j = json_loadb(fixed, flen, 0, &jerr);
		free(fixed);
	}
	if (j == NULL) {
		xasprintf(why, "line %d column %d: %s", jerr.line, jerr.column,
		    jerr.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		*why = xstrdup("not a JSON object");
		return NULL;
	}
	return j;
}

/* Move a bad file aside under a name that is never reused. */
static int
state_quarantine(int dirfd, const char *name, const struct stat *read_st,
    char **qname)
{
	struct stat	 sb;
	struct timespec	 ts;
	struct tm	 tm;
	char		*q = NULL;
	int		 i;

	/* It may have been replaced since it was read: then it is not ours to move. */
	if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
	    sb.st_dev != read_st->st_dev || sb.st_ino != read_st->st_ino)
		return -1;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	for (i = 1; i < 100; i++) {
		xasprintf(&q, "%s.corrupt-%04d%02d%02dT%02d%02d%02d.%03ldZ%s%.0d",
		    name, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		    tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
		    i > 1 ? "-" : "", i > 1 ? i : 0);
		if (fstatat(dirfd, q, &sb, AT_SYMLINK_NOFOLLOW) != 0 &&
		    errno == ENOENT)
			break;
		free(q);
		q = NULL;
	}
	if (q == NULL || renameat(dirfd, name, dirfd, q) != 0) {
		free(q);
		return -1;
	}
	*qname = q;
	return 0;
}

/*
 * The one reader.  A file that does not parse may be a writer's work in
 * progress (empty, or touched in the last 2 s): try again later; an old
 * one is corrupt and moved aside so that the loop can go on.
 */
enum state_load_rc
state_load_at(int dirfd, const char *id, const char *suffix, int flags,
    json_t **out, struct stat *stp, char **err)
{
	struct stat		 st;
	struct timespec		 now;
	enum state_load_rc	 rc;
	char			*name, *buf = NULL, *why = NULL, *q = NULL;
	size_t			 len = 0;
	long long		 age;
	int			 fd, toobig;

	*out = NULL;
	if (!state_id_valid(id) || suffix == NULL || suffix[0] != '.' ||
	    strchr(suffix, '/') != NULL || strstr(suffix, "..") != NULL) {
		xasprintf(err, "invalid loop id or file name");
		return STATE_EINVAL;
	}
	xasprintf(&name, "%s%s", id, suffix);
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = errno == ENOENT ? STATE_ENOENT : STATE_EIO;
		xasprintf(err, "%s: %s", name, errno == ELOOP ?
		    "a symbolic link, refused" : strerror(errno));
		free(name);
		return rc;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		xasprintf(err, "%s: not a regular file", name);
		close(fd);
		free(name);
		return STATE_EIO;
	}
	if (state_read_all(fd, &buf, &len, &toobig, err) != 0) {
		close(fd);
		free(name);
		return STATE_EIO;
	}
	fstat(fd, &st);		/* the writer may have gone on meanwhile */
	if (toobig)
		xasprintf(&why, "larger than %d MiB", STATE_MAX_SIZE >> 20);
	else if ((*out = state_parse(buf, len, &why)) != NULL) {
		if (stp != NULL)
			*stp = st;
		rc = STATE_OK;
		goto done;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	age = (long long)(now.tv_sec - st.st_mtim.tv_sec) * 1000000000LL +
	    (now.tv_nsec - st.st_mtim.tv_nsec);
	if ((flags & STATE_LOAD_NOQUARANTINE) || (!(flags & STATE_LOAD_FORCE) &&
	    !toobig && (len == 0 || age < STATE_RECENT_NS))) {
		xasprintf(err, "%s: not parseable yet: %s", name, why);
		rc = STATE_EAGAIN;
	} else if (state_quarantine(dirfd, name, &st, &q) != 0) {
		xasprintf(err, "%s: %s (replaced meanwhile, or cannot be "
		    "moved aside)", name, why);
		rc = STATE_EAGAIN;
	} else {
		xasprintf(err, "%s: %s: quarantined as %s", name, why, q);
		log_warnx("state: %s", *err);
		rc = STATE_CORRUPT;
	}
done:
	free(q);
	free(why);
	free(buf);
	close(fd);
	free(name);
	return rc;
}

/* {id}.json, quarantined when corrupt; the caller retries STATE_EAGAIN. */
enum state_load_rc
state_load(int dirfd, const char *id, json_t **out, char **err)
{
	return state_load_at(dirfd, id, ".json", 0, out, NULL, err);
}

/* --- creating, deriving */

/*
 * skill_state as it is before the first action (mode auto): the
 * engine's members, the workflow's sections between mode and errors
 * (the order CCW writes them in).
 */
json_t *
state_skeleton(const struct workflow_state *ws)
{
	json_t	*ss, *sec;

	ss = json_pack("{s:n, s:n, s:[], s:s}", "current_action",
	    "last_action", "completed_actions", "mode", "auto");
	if (ws != NULL && ws->sections != NULL &&
	    (sec = ws->sections()) != NULL) {
		json_object_update(ss, sec);
		json_decref(sec);
	}
	json_object_set_new(ss, "errors", json_array());
	return ss;
}

/*
 * An entry appended to skill_state.errors, the oldest dropped past
 * STATE_ERRORS_MAX: a loop failing step after step (a crash loop under
 * a generous retry policy) would otherwise grow its state file, and the
 * memory holding it, for as long as it runs.  What is dropped is counted
 * in errors_dropped (absent until the first drop), so that a reader
 * knows the list is the tail; each entry keeps CCW's shape.
 */
void
state_error_push(json_t *ss, json_t *e)
{
	json_t		*errs = json_object_get(ss, "errors");
	json_int_t	 dropped, n = 0;

	if (!json_is_array(errs)) {
		errs = json_array();
		json_object_set_new(ss, "errors", errs);
	}
	json_array_append_new(errs, e);
	while (json_array_size(errs) > STATE_ERRORS_MAX) {
		json_array_remove(errs, 0);
		n++;
	}
	if (n == 0)
		return;
	dropped = json_integer_value(json_object_get(ss, "errors_dropped"));
	json_object_set_new(ss, "errors_dropped", json_integer(
	    (dropped > 0 ? dropped : 0) + n));
}

/* The seed's initial state; NULL for an invalid id, title or bound. */
json_t *
state_new(const struct workflow_state *ws, const char *id, const char *title,
    const char *description, int64_t max_iterations)
{
	char	now[40];
	json_t	*st;

	if (!state_id_valid(id) || title == NULL || max_iterations < 1)
		return NULL;
	clock_iso(NULL, 1, now, sizeof now);
	st = json_pack("{s:s, s:s?, s:s?, s:I, s:s, s:i, s:s, s:s, s:o}",
	    "loop_id", id, "title", title, "description",
	    description != NULL ? description : "",
	    "max_iterations", (json_int_t)max_iterations, "status", "created",
	    "current_iteration", 0, "created_at", now, "updated_at", now,
	    "skill_state", state_skeleton(ws));
	return st;
}
