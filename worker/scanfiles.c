/*
 * scanfiles.c: the files a tool changed, as observed: git's snapshots in a
 * work tree, elsewhere a walk of sizes and mtimes, before the first turn
 * and after the last (compared by gitfiles_diff).  The walk skips .git,
 * .loop and .workflow/.loop, follows no symlink, stops at SCAN_MAX entries.
 */
#include <config.h>

#include <sys/stat.h>

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gitfiles.h"
#include "xmalloc.h"

#define SCAN_DEPTH	64	/* deeper directories are not walked */

/* Directories whose changes are the loops' own or git's, not the tool's. */
static int
scanfiles_skip(const char *rel)
{
	static const char *const skip[] = { ".git", ".loop", ".workflow/.loop",
		NULL };
	const char	*base = strrchr(rel, '/');
	size_t		 i;

	base = base != NULL ? base + 1 : rel;
	if (strcmp(base, ".git") == 0)
		return 1;
	for (i = 0; skip[i] != NULL; i++)
		if (strcmp(rel, skip[i]) == 0)
			return 1;
	return 0;
}

/* Order of names in a directory, so that a cut walk is the same walk. */
static int
scanfiles_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir (owned, sorted), without . and .. */
static struct strv
scanfiles_names(const char *dir)
{
	struct strv	 names = { NULL, 0 };
	struct dirent	*de;
	DIR		*d;

	if ((d = opendir(dir)) == NULL)
		return names;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			strv_push(&names, de->d_name);
	closedir(d);
	if (names.n > 1)
		qsort(names.v, names.n, sizeof *names.v, scanfiles_cmp);
	return names;
}

/*
 * Walk rel (relative to g->top, "" for the top) into g: SCAN_MAX entries
 * (directories count too), so that a node_modules costs a bounded time.
 */
static void
scanfiles_walk(struct gitsnap *g, const char *rel, int depth, size_t *seen)
{
	struct strv	 names;
	struct stat	 sb;
	char		*full, *sub;
	size_t		 i;

	xasprintf(&full, "%s%s%s", g->top, *rel ? "/" : "", rel);
	names = scanfiles_names(full);
	free(full);
	for (i = 0; i < names.n && !g->truncated; i++) {
		xasprintf(&sub, "%s%s%s", rel, *rel ? "/" : "", names.v[i]);
		xasprintf(&full, "%s/%s", g->top, sub);
		if (scanfiles_skip(sub) || lstat(full, &sb) != 0)
			;
		else if (++*seen > SCAN_MAX)
			g->truncated = 1;
		else if (S_ISDIR(sb.st_mode) && depth < SCAN_DEPTH)
			scanfiles_walk(g, sub, depth + 1, seen);
		else if (!S_ISDIR(sb.st_mode))
			gitfiles_add(g, "  ", sub);
		free(full);
		free(sub);
	}
	strv_clear(&names);
}

/* Snapshot dir by a walk; g->valid stays 0 when dir cannot be read. */
void
scanfiles_snap(const char *dir, struct gitsnap *g)
{
	struct timespec	ts;
	struct stat	sb;
	size_t		seen = 0;

	memset(g, 0, sizeof *g);
	if (dir == NULL || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return;
#ifdef CLOCK_REALTIME_COARSE
	/* the clock the kernel stamps mtimes with: never ahead of them */
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
#else
	clock_gettime(CLOCK_REALTIME, &ts);
#endif
	g->t0_ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	g->top = xstrdup(dir);
	g->scan = 1;
	scanfiles_walk(g, "", 0, &seen);
	gitfiles_sort(g);
	g->valid = 1;
}

/*
 * Whether git could call dir part of a work tree: some ancestor holds a
 * .git, or the environment names one.  Only git decides that it is (an
 * empty .git is none); this spares a git process per worker where none
 * can be (a loop's workers in a scratch directory, thousands a minute).
 */
static int
scanfiles_maybe_git(const char *dir)
{
	struct stat	 sb;
	char		*p, *cut, *dot;
	int		 found = 0;

	if (getenv("GIT_DIR") != NULL || getenv("GIT_WORK_TREE") != NULL)
		return 1;
	if ((p = realpath(dir, NULL)) == NULL)
		return 1;
	for (;;) {
		xasprintf(&dot, "%s/.git", strcmp(p, "/") == 0 ? "" : p);
		found = lstat(dot, &sb) == 0;
		free(dot);
		if (found || strcmp(p, "/") == 0 ||
		    (cut = strrchr(p, '/')) == NULL)
			break;
		cut[cut == p ? 1 : 0] = '\0';	/* "/a" -> "/", "/a/b" -> "/a" */
	}
	free(p);
	return found;
}

/* Before the first turn: git's view of dir's work tree, else a walk. */
void
scanfiles_observe(const char *dir, struct gitsnap *g)
{
	memset(g, 0, sizeof *g);
	if (scanfiles_maybe_git(dir))
		gitfiles_snap(dir, g);
	if (!g->valid)
		scanfiles_snap(dir, g);
}

/*
 * A path in a loop's state directory (.loop, .workflow/.loop) at any
 * depth: the worker's own log and the loop's files, not the tool's work,
 * even where no .gitignore hides them from git.
 */
static int
scanfiles_loops(const char *path)
{
	return strncmp(path, ".loop/", 6) == 0 ||
	    strstr(path, "/.loop/") != NULL;
}

/* Whether top/path is the file own (the worker's log) names. */
static int
scanfiles_is(const char *top, const char *path, const char *own)
{
	char	*full, *a, *b;
	int	 same;

	if (own == NULL)
		return 0;
	xasprintf(&full, "%s/%s", top, path);
	a = realpath(full, NULL);
	b = realpath(own, NULL);
	same = a != NULL && b != NULL && strcmp(a, b) == 0;
	free(full);
	free(a);
	free(b);
	return same;
}

/*
 * After the last turn: what changed since before, into out, less the
 * worker's own log (own, may be NULL).  Returns the source ("git" or
 * "mtime"), or NULL when nothing could be observed.
 */
const char *
scanfiles_changed(const struct gitsnap *before, const char *own,
    struct strv *out)
{
	struct gitsnap	after;
	struct strv	all = { NULL, 0 };
	size_t		i;
	int		rc;

	if (!before->valid)
		return NULL;
	if (before->scan)
		scanfiles_snap(before->top, &after);
	else
		gitfiles_snap(before->top, &after);
	rc = gitfiles_diff(before, &after, &all);
	gitfiles_clear(&after);
	for (i = 0; i < all.n; i++)
		if (!scanfiles_loops(all.v[i]) &&
		    !scanfiles_is(before->top, all.v[i], own))
			strv_push(out, all.v[i]);
	strv_clear(&all);
	if (rc != 0)
		return NULL;
	return before->scan ? "mtime" : "git";
}
