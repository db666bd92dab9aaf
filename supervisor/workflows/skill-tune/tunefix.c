/*
 * tunefix.c: a proposed fix on the skill's files: each file it touches
 * copied to backup_dir/FIX-ID/ first (with a manifest written last, so a
 * backup without one is incomplete), the changes made one file at a time
 * by atomic replace, and the rollback from that backup.  Paths are
 * relative to the skill folder; no link is followed, no ".." is taken.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "progress.h"
#include "tuneint.h"
#include "xmalloc.h"

/* A relative path with no empty, "." or ".." part, not in .tune/. */
static int
tunefix_path_ok(const char *p)
{
	const char	*s = p, *e;
	size_t		 n;

	if (p == NULL || *p == '\0' || *p == '/' || strlen(p) > 1024)
		return 0;
	for (; *s != '\0'; s = *e != '\0' ? e + 1 : e) {
		e = s + strcspn(s, "/");
		n = (size_t)(e - s);
		if (n == 0 || (n == 1 && s[0] == '.') ||
		    (n == 2 && s[0] == '.' && s[1] == '.'))
			return 0;
		if (s == p && n == 5 && strncmp(s, ".tune", 5) == 0)
			return 0;
	}
	return 1;
}

/*
 * The directory holding path's last part, opened from dfd without
 * following a link (made when mk); *base points into path.  -2: a
 * directory on the way does not exist (not made), -1: *err.
 */
static int
tunefix_parent(int dfd, const char *path, int mk, const char **base,
    char **err)
{
	const char	*s = path, *e;
	char		*part;
	int		 fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0), nfd;

	while (fd != -1 && (e = strchr(s, '/')) != NULL) {
		part = xstrndup(s, (size_t)(e - s));
		if (mk && mkdirat(fd, part, 0755) == -1 && errno != EEXIST) {
			xasprintf(err, "%s: mkdir %s: %s", path, part,
			    strerror(errno));
			free(part);
			close(fd);
			return -1;
		}
		nfd = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (nfd == -1 && errno == ENOENT && !mk) {
			free(part);
			close(fd);
			return -2;	/* absent: for a reader, no error */
		}
		if (nfd == -1)
			xasprintf(err, "%s: %s: %s", path, part,
			    errno == ELOOP || errno == ENOTDIR ? "not a "
			    "directory (links are not followed)" :
			    strerror(errno));
		free(part);
		close(fd);
		fd = nfd;
		s = e + 1;
	}
	if (fd == -1 && *err == NULL)
		xasprintf(err, "%s: %s", path, strerror(errno));
	*base = s;
	return fd;
}

/* A file's text (0), absent (1), or -1; never through a link. */
static int
tunefix_read(int dfd, const char *path, char **text, size_t *len,
    mode_t *mode, char **err)
{
	struct stat	 sb;
	const char	*base;
	int		 pfd, fd, rc;

	*text = NULL;
	if ((pfd = tunefix_parent(dfd, path, 0, &base, err)) < 0)
		return pfd == -2 ? 1 : -1;
	fd = openat(pfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(pfd);
	if (fd == -1) {
		if (errno == ENOENT)
			return 1;
		xasprintf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		xasprintf(err, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	if (mode != NULL)
		*mode = sb.st_mode & 07777;
	rc = progress_read_fd(fd, path, text, len, err);
	close(fd);
	return rc;
}

/* path's text replaced (made, with its parents, when absent). */
static int
tunefix_write(int dfd, const char *path, const char *text, size_t len,
    mode_t mode, char **err)
{
	const char	*base;
	int		 pfd, rc;

	if ((pfd = tunefix_parent(dfd, path, 1, &base, err)) == -1)
		return -1;
	rc = progress_replace(pfd, base, path, text, len, err);
	if (rc == 0 && mode != 0)
		(void)fchmodat(pfd, base, mode, 0);
	close(pfd);
	return rc;
}

/* The backup of one fix: BACKUP_DIR/ID, made. */
static int
tunefix_dir(const char *backup_dir, const char *id, int mk, char **err)
{
	char	*p;
	int	 fd;

	if (mk && mkdir(backup_dir, 0755) == -1 && errno != EEXIST) {
		xasprintf(err, "%s: %s", backup_dir, strerror(errno));
		return -1;
	}
	xasprintf(&p, "%s/%s", backup_dir, id);
	if (mk && mkdir(p, 0755) == -1 && errno != EEXIST) {
		xasprintf(err, "%s: %s", p, strerror(errno));
		free(p);
		return -1;
	}
	fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		xasprintf(err, "%s: %s", p, strerror(errno));
	free(p);
	return fd;
}

/*
 * Before a fix touches anything: every file it names copied under
 * BACKUP_DIR/ID/files/ (its mode kept), then manifest.json listing each
 * with whether it existed.  A path the fix may not touch fails here.
 */
int
tunefix_backup(int sfd, const char *backup_dir, const json_t *fix,
    char **err)
{
	json_t		*man = json_array(), *c;
	const char	*file, *id = json_string_value(json_object_get(fix,
	    "id"));
	char		*text, *dump, *bpath;
	size_t		 i, len;
	mode_t		 mode = 0;
	int		 bfd, rc;

	*err = NULL;
	if ((bfd = tunefix_dir(backup_dir, id, 1, err)) == -1) {
		json_decref(man);
		return -1;
	}
	json_array_foreach(json_object_get(fix, "changes"), i, c) {
		file = json_string_value(json_object_get(c, "file"));
		if (!tunefix_path_ok(file)) {
			xasprintf(err, "changes[%zu].file: '%.80s' is not a "
			    "path inside the skill", i, file != NULL ? file :
			    "");
			goto fail;
		}
		if (tunefix_read(sfd, file, &text, &len, &mode, err) == -1)
			goto fail;
		json_array_append_new(man, json_pack("{s:s, s:b, s:i}",
		    "file", file, "existed", text != NULL, "mode",
		    (int)mode));
		if (text == NULL)
			continue;
		xasprintf(&bpath, "files/%s", file);
		rc = tunefix_write(bfd, bpath, text, len, 0, err);
		free(bpath);
		free(text);
		if (rc != 0)
			goto fail;
	}
	dump = json_dumps(man, JSON_INDENT(2));
	rc = progress_replace(bfd, "manifest.json", "manifest.json", dump,
	    strlen(dump), err);
	free(dump);
	json_decref(man);
	close(bfd);
	return rc;
fail:
	json_decref(man);
	close(bfd);
	return -1;
}

/* old_content's first occurrence in text replaced by new_content. */
static char *
tunefix_splice(const char *text, const char *old, const char *new,
    size_t *len)
{
	const char	*at = strstr(text, old);
	char		*out;
	size_t		 a, o = strlen(old), n = strlen(new);

	if (at == NULL || o == 0)
		return NULL;
	a = (size_t)(at - text);
	*len = strlen(text) - o + n;
	out = xmalloc(*len + 1);
	memcpy(out, text, a);
	memcpy(out + a, new, n);
	strcpy(out + a + n, at + o);
	return out;
}

/* One change (the backup exists). */
static int
tunefix_change(int sfd, const json_t *c, char **err)
{
	const char	*file = json_string_value(json_object_get(c, "file"));
	const char	*act = json_string_value(json_object_get(c, "action"));
	const char	*oldc = json_string_value(json_object_get(c,
	    "old_content"));
	const char	*newc = json_string_value(json_object_get(c,
	    "new_content"));
	const char	*base;
	char		*text = NULL, *out;
	size_t		 len;
	mode_t		 mode = 0;
	int		 rc, pfd;

	if (!tunefix_path_ok(file)) {
		xasprintf(err, "'%.80s' is not a path inside the skill",
		    file != NULL ? file : "");
		return -1;
	}
	rc = tunefix_read(sfd, file, &text, &len, &mode, err);
	if (rc == -1)
		return -1;
	if (strcmp(act, "delete") == 0) {
		free(text);
		if (rc == 1) {
			xasprintf(err, "%s: delete: no such file", file);
			return -1;
		}
		if ((pfd = tunefix_parent(sfd, file, 0, &base, err)) < 0) {
			if (pfd == -2)
				xasprintf(err, "%s: delete: no such file", file);
			return -1;
		}
		rc = unlinkat(pfd, base, 0);
		if (rc == -1)
			xasprintf(err, "%s: %s", file, strerror(errno));
		close(pfd);
		return rc;
	}
	if (newc == NULL) {
		free(text);
		xasprintf(err, "%s: %s without new_content", file, act);
		return -1;
	}
	if (strcmp(act, "create") == 0 && rc == 0) {
		free(text);
		xasprintf(err, "%s: create: the file exists", file);
		return -1;
	}
	if (strcmp(act, "modify") == 0 && rc == 1) {
		xasprintf(err, "%s: modify: no such file", file);
		return -1;
	}
	if (strcmp(act, "modify") == 0 && oldc != NULL) {
		out = tunefix_splice(text, oldc, newc, &len);
		free(text);
		if (out == NULL) {
			xasprintf(err, "%s: old_content not found in the file",
			    file);
			return -1;
		}
	} else {
		free(text);
		out = xstrdup(newc);
		len = strlen(out);
	}
	rc = tunefix_write(sfd, file, out, len, mode, err);
	free(out);
	return rc;
}

/* Every change in order; on failure the caller rolls back. */
int
tunefix_apply(int sfd, const json_t *fix, char **err)
{
	const json_t	*c;
	char		*why = NULL;
	size_t		 i;

	*err = NULL;
	json_array_foreach(json_object_get(fix, "changes"), i, c)
		if (tunefix_change(sfd, c, &why) != 0) {
			xasprintf(err, "changes[%zu]: %s", i, why);
			free(why);
			return -1;
		}
	return 0;
}

/*
 * The skill's files as the backup holds them: each that existed copied
 * back, each the fix created removed.  No manifest: nothing was touched
 * yet (the backup is written before any change), so nothing to undo.
 */
int
tunefix_rollback(int sfd, const char *backup_dir, const char *id,
    char **err)
{
	json_t		*man, *e;
	const char	*file, *base;
	char		*text, *bpath;
	size_t		 i, len;
	int		 bfd, fd, pfd, rc = 0;

	*err = NULL;
	if ((bfd = tunefix_dir(backup_dir, id, 0, err)) == -1)
		return -1;
	if ((fd = openat(bfd, "manifest.json", O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		close(bfd);
		return 0;
	}
	man = json_loadfd(fd, 0, NULL);
	close(fd);
	json_array_foreach(man, i, e) {
		file = json_string_value(json_object_get(e, "file"));
		if (!tunefix_path_ok(file))
			continue;
		if (!json_is_true(json_object_get(e, "existed"))) {
			pfd = tunefix_parent(sfd, file, 0, &base, err);
			if (pfd >= 0) {
				if (unlinkat(pfd, base, 0) == -1 &&
				    errno != ENOENT)
					xasprintf(err, "%s: %s", file,
					    strerror(errno));
				close(pfd);
			}
			if (pfd == -1 || *err != NULL)
				rc = -1;
			if (rc != 0)
				break;
			continue;
		}
		xasprintf(&bpath, "files/%s", file);
		if ((rc = tunefix_read(bfd, bpath, &text, &len, NULL,
		    err)) == 1)
			xasprintf(err, "%s: missing from the backup", bpath);
		if (rc != 0 || tunefix_write(sfd, file, text, len, (mode_t)
		    json_integer_value(json_object_get(e, "mode")), err) != 0)
			rc = -1;
		free(text);
		free(bpath);
		if (rc != 0)
			break;
	}
	json_decref(man);
	close(bfd);
	return rc;
}
