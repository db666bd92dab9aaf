/*
 * gitwt.c: worktrees, commits and diffs for the --git verbs and a
 * worker's own worktree: create or adopt a worktree on a branch, remove
 * one (a killed run's too), commit every change, the exact name-status
 * and stat of a range, and the recovery of an interrupted merge.
 */
#include <config.h>

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gitwt.h"
#include "xmalloc.h"

/*
 * The string at key of req, or NULL with *err set: a missing one (when
 * required) or a path that is not absolute (abs).  Every path of a
 * request is checked here.
 */
const char *
gitwt_str(const json_t *req, const char *key, int abs, char **err)
{
	json_t		*v = json_object_get(req, key);
	const char	*s = json_string_value(v);

	if (*err != NULL)
		return NULL;
	if (s == NULL || *s == '\0') {
		if (v == NULL || json_is_null(v)) {
			if (abs >= 0)
				xasprintf(err, "\"%s\" is missing", key);
		} else
			xasprintf(err, "\"%s\" must be a string", key);
		return NULL;
	}
	if (abs > 0 && (s[0] != '/' || strstr(s, "/../") != NULL ||
	    (strlen(s) >= 3 && strcmp(s + strlen(s) - 3, "/..") == 0))) {
		xasprintf(err, "\"%s\" must be an absolute path", key);
		return NULL;
	}
	return s;
}

/*
 * A loop or agent id as one branch component and directory name: no
 * path, option or ref syntax can come through it.
 */
int
gitwt_name_ok(const char *s)
{
	size_t	n = s != NULL ? strlen(s) : 0;

	if (n == 0 || n > 200 || s[0] == '.' || s[0] == '-' ||
	    strstr(s, "..") != NULL || (n >= 5 && strcmp(s + n - 5,
	    ".lock") == 0))
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") == n;
}

/* A branch name: components each a safe name, joined by '/'. */
int
gitwt_branch_ok(const char *b)
{
	char	*s, *p, *c;
	int	 ok = 1;

	if (b == NULL || *b == '\0' || strlen(b) > 400)
		return 0;
	s = xstrdup(b);
	for (c = s; ok && (p = strsep(&c, "/")) != NULL;)
		ok = gitwt_name_ok(p);
	free(s);
	return ok;
}

/*
 * The loop branch (owned): ccw/<loop>/loop.  git cannot hold ccw/<loop>
 * beside the agents' ccw/<loop>/<agent>, so a caller's ccw/<loop> means
 * it.
 */
char *
gitwt_loopref(const char *b)
{
	size_t	 n = strlen(b);
	char	*s = NULL;

	if (n >= 5 && strcmp(b + n - 5, "/loop") == 0)
		return xstrdup(b);
	xasprintf(&s, "%s/loop", b);
	return s;
}

/* A copy entry: relative, no "..", nothing empty. */
int
gitwt_rel_ok(const char *rel)
{
	char	*s, *p, *c;
	int	 ok = 1;

	if (rel == NULL || *rel == '\0' || *rel == '/' || strlen(rel) > 4000)
		return 0;
	s = xstrdup(rel);
	for (c = s; ok && (p = strsep(&c, "/")) != NULL;)
		ok = strcmp(p, "..") != 0;
	free(s);
	return ok;
}

/*
 * Is path the top of a work tree on branch (any branch when NULL)?  The
 * test for adopting what a killed run left.
 */
int
gitwt_is_tree(const char *path, const char *branch)
{
	char	*top, *head, *want = NULL;
	char	 a[PATH_MAX], b[PATH_MAX];
	int	 ok;

	if (access(path, F_OK) != 0)
		return 0;
	if ((top = gitexec_line(path, "rev-parse", "--show-toplevel",
	    NULL)) == NULL)
		return 0;
	ok = realpath(top, a) != NULL && realpath(path, b) != NULL &&
	    strcmp(a, b) == 0;
	free(top);
	if (!ok || branch == NULL)
		return ok;
	head = gitexec_line(path, "symbolic-ref", "-q", "HEAD", NULL);
	xasprintf(&want, "refs/heads/%s", branch);
	ok = head != NULL && strcmp(head, want) == 0;
	free(head);
	free(want);
	return ok;
}

/* nftw's visitor for gitwt_rmrf. */
static int
gitwt_rm1(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	remove(p);
	return 0;
}

/* rm -rf path, following no symlink. */
void
gitwt_rmrf(const char *path)
{
	nftw(path, gitwt_rm1, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * Serialize what changes or lists a repository's worktrees (worktree
 * add, remove, prune; a branch made, deleted or checked out): git reads
 * every worktree's admin directory for these, and one half made by a
 * concurrent `worktree add` (three writers of a step start at once)
 * fails it, or a concurrent prune deletes it.  flock on the common git
 * dir's ccw-worktree.lock, released by gitwt_unlock or our death.  -1
 * (run unlocked) when it cannot be had.
 */
int
gitwt_lock(const char *repo)
{
	char	*dir, *p = NULL;
	int	 fd;

	if ((dir = gitexec_line(repo, "rev-parse", "--path-format=absolute",
	    "--git-common-dir", NULL)) == NULL)
		return -1;
	xasprintf(&p, "%s/ccw-worktree.lock", dir);
	free(dir);
	fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	free(p);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) != 0)
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	return fd;
}

/* Let the next one in. */
void
gitwt_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

/*
 * Was the worktree at path killed while `git worktree add` made it?
 * git keeps a "locked" file in its admin dir until the checkout is
 * done; such a tree is half checked out and made again, never adopted.
 */
static int
gitwt_half_made(const char *path)
{
	char	*p = gitwt_gitpath(path, "locked");
	int	 half = p != NULL && access(p, F_OK) == 0;

	free(p);
	return half;
}

/*
 * May what is left at path go with rm -rf?  Only a linked worktree's
 * remains (its .git a file saying "gitdir:"), never a directory of the
 * user's that a request happened to name.  An empty one may go too.
 */
static int
gitwt_leftover(const char *path)
{
	char		*p = NULL, buf[8] = "";
	struct stat	 sb;
	FILE		*fp;

	xasprintf(&p, "%s/.git", path);
	if (lstat(p, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (fp = fopen(p, "r")) != NULL) {
		if (fread(buf, 1, 7, fp) != 7)
			buf[0] = '\0';
		fclose(fp);
	}
	free(p);
	if (strncmp(buf, "gitdir:", 7) == 0)
		return 1;
	rmdir(path);
	return 0;
}

/* gitwt_remove with the lock held. */
static int
gitwt_remove_locked(const char *repo, const char *path)
{
	struct gitout	o;

	gitexec_git(repo, &o, "worktree", "remove", "--force", "--force",
	    path, NULL);
	gitexec_clear(&o);
	if (access(path, F_OK) == 0 && gitwt_leftover(path)) {
		gitwt_rmrf(path);
		gitexec_git(repo, &o, "worktree", "prune", NULL);
		gitexec_clear(&o);
	}
	return access(path, F_OK) == 0 ? -1 : 0;
}

/*
 * Remove the worktree at path (uncommitted changes go with it), or what
 * is left of one, and forget it.  Its branch stays.  -1 when something
 * else is there (left alone).
 */
int
gitwt_remove(const char *repo, const char *path)
{
	int	lk = gitwt_lock(repo), rc;

	rc = gitwt_remove_locked(repo, path);
	gitwt_unlock(lk);
	return rc;
}

/* mkdir -p of path's parent. */
void
gitwt_mkparent(const char *path)
{
	char	*s = xstrdup(path), *p;

	for (p = s + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(s, 0777);
		*p = '/';
	}
	free(s);
}

/*
 * The worktree at path on branch: adopted when it is there already (a
 * resumed run), else made, the branch from base when it does not exist.
 * 1 adopted, 0 made, -1 failed (*err owned).
 */
int
gitwt_ensure(const char *repo, const char *path, const char *branch,
    const char *base, char **err)
{
	struct gitout	 o;
	char		*ref = NULL, *have;
	int		 rc, lk;

	if (gitwt_is_tree(path, branch) && !gitwt_half_made(path))
		return 1;
	lk = gitwt_lock(repo);
	if (access(path, F_OK) == 0)
		gitwt_remove_locked(repo, path);
	gitexec_git(repo, &o, "worktree", "prune", NULL);
	gitexec_clear(&o);
	gitwt_mkparent(path);
	xasprintf(&ref, "refs/heads/%s", branch);
	have = gitexec_line(repo, "rev-parse", "-q", "--verify", ref, NULL);
	free(ref);
	if (have != NULL)
		rc = gitexec_git(repo, &o, "worktree", "add", path, branch,
		    NULL);
	else
		rc = gitexec_git(repo, &o, "worktree", "add", "-b", branch,
		    path, base, NULL);
	gitwt_unlock(lk);
	free(have);
	if (rc != 0)
		*err = gitexec_why(&o);
	gitexec_clear(&o);
	return rc == 0 ? 0 : -1;
}

/*
 * av = git -C dir with hooks off and, when the repo names nobody, our
 * identity: the start of every commit (and merge) we make.  The count.
 */
int
gitwt_commit_args(const char *dir, const char **av, size_t max)
{
	struct gitout	o;
	size_t		n = 0, lines = 0, i;

	(void)max;
	gitexec_git(dir, &o, "config", "--get-regexp",
	    "^user\\.(name|email)$", NULL);
	for (i = 0; i < o.len; i++)
		lines += o.out[i] == '\n';
	gitexec_clear(&o);
	av[n++] = "git";
	av[n++] = "-C";
	av[n++] = dir;
	av[n++] = "-c";
	av[n++] = "core.hooksPath=/dev/null";
	if (lines < 2) {
		av[n++] = "-c";
		av[n++] = "user.name=" GITWT_ME;
		av[n++] = "-c";
		av[n++] = "user.email=" GITWT_MAIL;
	}
	return (int)n;
}

/*
 * git add -A in dir, but for the files named in its ccw-copied (copied
 * in from the user's checkout, such as .env: never committed).
 */
static int
gitwt_add_all(const char *dir, struct gitout *o)
{
	const char	*av[GITWT_COPIES + 8];
	char		 line[4096], *p, *keep[GITWT_COPIES];
	size_t		 n = 0, k = 0, i;
	FILE		*fp;
	int		 rc;

	av[n++] = "git";
	av[n++] = "-C";
	av[n++] = dir;
	av[n++] = "add";
	av[n++] = "-A";
	av[n++] = "--";
	av[n++] = ".";
	if ((p = gitwt_gitpath(dir, "ccw-copied")) != NULL &&
	    (fp = fopen(p, "r")) != NULL) {
		while (k < GITWT_COPIES && fgets(line, sizeof line, fp)) {
			line[strcspn(line, "\n")] = '\0';
			if (line[0] == '\0')
				continue;
			xasprintf(&keep[k], ":(exclude,literal)%s", line);
			av[n++] = keep[k++];
		}
		fclose(fp);
	}
	free(p);
	av[n] = NULL;
	rc = gitexec_argv(NULL, av, GITX_DEADLINE_MS, o);
	for (i = 0; i < k; i++)
		free(keep[i]);
	return rc;
}

/*
 * Commit every change in the work tree dir with msg (a pending merge is
 * concluded by it).  1 committed, 0 nothing to commit, -1 failed.
 */
int
gitwt_commit_all(const char *dir, const char *msg, char **err)
{
	struct gitout	 o;
	const char	*av[16];
	char		*merging;
	int		 n, rc;

	if (gitwt_add_all(dir, &o) != 0) {
		*err = gitexec_why(&o);
		gitexec_clear(&o);
		return -1;
	}
	gitexec_clear(&o);
	merging = gitexec_line(dir, "rev-parse", "-q", "--verify",
	    "MERGE_HEAD", NULL);
	rc = gitexec_git(dir, &o, "diff", "--cached", "--quiet", NULL);
	gitexec_clear(&o);
	if (rc == 0 && merging == NULL)
		return 0;
	free(merging);
	n = gitwt_commit_args(dir, av, 16);
	av[n++] = "commit";
	av[n++] = "-q";
	av[n++] = "--no-verify";
	av[n++] = "-m";
	av[n++] = msg;
	av[n] = NULL;
	if (gitexec_argv(NULL, av, GITX_DEADLINE_MS, &o) != 0) {
		*err = gitexec_why(&o);
		gitexec_clear(&o);
		return -1;
	}
	gitexec_clear(&o);
	return 1;
}

/*
 * The exact name-status of a..b (renames found): [{status, path,
 * from?}], one letter a status.  Deletions and renames are in it.
 */
json_t *
gitwt_files(const char *dir, const char *a, const char *b)
{
	struct gitout	 o;
	json_t		*files = json_array(), *f;
	const char	*p, *end, *st;
	char		 s[2] = { 0, 0 };

	if (gitexec_git(dir, &o, "diff", "--name-status", "-z", "-M",
	    "--no-ext-diff", a, b, NULL) == 0) {
		for (p = o.out, end = o.out + o.len; p < end;) {
			st = p;
			p += strlen(p) + 1;
			if (p >= end)
				break;
			s[0] = st[0];
			f = json_pack("{s:s}", "status", s);
			if (st[0] == 'R' || st[0] == 'C') {
				json_object_set_new(f, "from", json_string(p));
				p += strlen(p) + 1;
				if (p >= end) {
					json_decref(f);
					break;
				}
			}
			json_object_set_new(f, "path", json_string(p));
			p += strlen(p) + 1;
			json_array_append_new(files, f);
		}
	}
	gitexec_clear(&o);
	return files;
}

/* The stat of a..b: {files, insertions, deletions}. */
json_t *
gitwt_stat(const char *dir, const char *a, const char *b)
{
	struct gitout	 o;
	long long	 v[3] = { 0, 0, 0 }, x;
	char		*p, *end;

	if (gitexec_git(dir, &o, "diff", "--shortstat", "-M", a, b,
	    NULL) == 0) {
		for (p = o.out; *p != '\0'; p = end) {
			x = strtoll(p, &end, 10);
			if (end == p) {
				end = p + 1;
				continue;
			}
			while (*end == ' ')
				end++;
			if (strncmp(end, "file", 4) == 0)
				v[0] = x;
			else if (strncmp(end, "insertion", 9) == 0)
				v[1] = x;
			else if (strncmp(end, "deletion", 8) == 0)
				v[2] = x;
		}
	}
	gitexec_clear(&o);
	return json_pack("{s:I, s:I, s:I}", "files", v[0], "insertions", v[1],
	    "deletions", v[2]);
}

/* The absolute path of git's file name for the work tree dir (owned). */
char *
gitwt_gitpath(const char *dir, const char *name)
{
	char	*p, *abs = NULL;

	if ((p = gitexec_line(dir, "rev-parse", "--git-path", name,
	    NULL)) == NULL)
		return NULL;
	if (p[0] == '/')
		return p;
	xasprintf(&abs, "%s/%s", dir, p);
	free(p);
	return abs;
}

/*
 * Mark (sha: the head before a merge whose check has not passed yet) or
 * unmark (NULL) the loop worktree dir: a run killed in between is undone
 * by the next recovery.  0, or -1 when the mark could not be written.
 */
int
gitwt_pending(const char *dir, const char *sha)
{
	char	*p = gitwt_gitpath(dir, "ccw-merge-pending");
	FILE	*fp;
	int	 rc = 0;

	if (p == NULL)
		return -1;
	if (sha == NULL)
		unlink(p);
	else if ((fp = fopen(p, "w")) == NULL)
		rc = -1;
	else {
		fprintf(fp, "%s\n", sha);
		rc = fclose(fp) == 0 ? 0 : -1;
	}
	free(p);
	return rc;
}

/* The sha a pending mark names (owned), or NULL. */
static char *
gitwt_pending_sha(const char *dir)
{
	char	*p = gitwt_gitpath(dir, "ccw-merge-pending");
	char	 line[128];
	FILE	*fp;
	char	*sha = NULL;

	if (p != NULL && (fp = fopen(p, "r")) != NULL) {
		if (fgets(line, sizeof line, fp) != NULL) {
			line[strcspn(line, "\n")] = '\0';
			if (strlen(line) >= 40 && strspn(line,
			    "0123456789abcdef") == strlen(line))
				sha = xstrdup(line);
		}
		fclose(fp);
	}
	free(p);
	return sha;
}

/*
 * The loop worktree dir back to a clean checkout of branch, whatever a
 * killed run left: its index lock (only we run git there), a merge or
 * rebase in progress (aborted), a merge not yet checked (undone), stray
 * files.  0, or -1 (*err owned).
 */
int
gitwt_recover(const char *dir, const char *branch, char **err)
{
	struct gitout	 o;
	char		*p, *sha;
	int		 rc, lk;

	if ((p = gitwt_gitpath(dir, "index.lock")) != NULL)
		unlink(p);
	free(p);
	if ((p = gitwt_gitpath(dir, "rebase-merge")) != NULL &&
	    access(p, F_OK) == 0) {
		gitexec_git(dir, &o, "rebase", "--abort", NULL);
		gitexec_clear(&o);
	}
	free(p);
	gitexec_git(dir, &o, "merge", "--abort", NULL);
	gitexec_clear(&o);
	lk = gitwt_lock(dir);
	rc = gitexec_git(dir, &o, "checkout", "-q", "-f", branch, NULL);
	gitwt_unlock(lk);
	if (rc == 0) {
		gitexec_clear(&o);
		sha = gitwt_pending_sha(dir);
		rc = gitexec_git(dir, &o, "reset", "-q", "--hard",
		    sha != NULL ? sha : "HEAD", NULL);
		free(sha);
	}
	if (rc != 0)
		*err = gitexec_why(&o);
	gitexec_clear(&o);
	if (rc != 0)
		return -1;
	gitwt_pending(dir, NULL);
	gitexec_git(dir, &o, "clean", "-q", "-f", "-d", NULL);
	gitexec_clear(&o);
	return 0;
}

/*
 * Count the changed tracked files of the checkout dir (and the untracked
 * ones in *untracked when not NULL).  -1 when git cannot tell.
 */
int
gitwt_dirty(const char *dir, int *untracked)
{
	struct gitout	 o;
	const char	*p;
	int		 n = 0, u = 0;

	if (gitexec_git(dir, &o, "status", "--porcelain", untracked != NULL ?
	    "--untracked-files=normal" : "--untracked-files=no", NULL) != 0) {
		gitexec_clear(&o);
		return -1;
	}
	for (p = o.out; *p != '\0'; p = strchr(p, '\n') ? strchr(p, '\n') + 1 :
	    p + strlen(p)) {
		if (strncmp(p, "??", 2) == 0)
			u++;
		else if (*p != '\n')
			n++;
	}
	gitexec_clear(&o);
	if (untracked != NULL)
		*untracked = u;
	return n;
}
