/*
 * gitfiles.c: which files the tool changed, as git sees them (RESULT's
 * files_changed, whatever the answer claims).  A snapshot of `git status
 * --porcelain -z` (plus each listed file's size and mtime, and HEAD) is
 * taken before the first turn and compared with one after the last.
 * git runs without a shell; a directory that is no work tree gives none.
 */
#include <config.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gitfiles.h"
#include "sigfd.h"
#include "xmalloc.h"

#define GIT_OUT_MAX	(16u << 20)	/* more output than this: give up */

/* Run git with args in dir; its stdout (owned, NUL-terminated) or NULL. */
static char *
gitfiles_run(const char *dir, const char *const *args, size_t *lenp)
{
	const char	*av[16];
	char		*out = NULL;
	size_t		 len = 0, cap = 0, i, n = 0;
	ssize_t		 r;
	pid_t		 pid;
	int		 p[2], st, devnull;

	av[n++] = "git";
	av[n++] = "-C";
	av[n++] = dir;
	for (i = 0; args[i] != NULL && n < 15; i++)
		av[n++] = args[i];
	av[n] = NULL;
	if (pipe2(p, O_CLOEXEC) != 0)
		return NULL;
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return NULL;
	}
	if (pid == 0) {
		sigfd_child_reset();
		devnull = open("/dev/null", O_RDWR);
		if (dup2(p[1], 1) < 0 || devnull < 0 || dup2(devnull, 0) < 0 ||
		    dup2(devnull, 2) < 0)
			_exit(127);
		/* Not the channel, not the tool's pipes: only 0, 1, 2. */
		sigfd_close_from(3, -1);
		/* Never take the index lock from under the user's own git. */
		setenv("GIT_OPTIONAL_LOCKS", "0", 1);
		execvp("git", (char *const *)av);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 65536;
			out = xreallocarray(out, 1, cap + 1);
		}
		r = read(p[0], out + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len > GIT_OUT_MAX)
			break;
	}
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (len > GIT_OUT_MAX || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		free(out);
		return NULL;
	}
	if (out == NULL)
		out = xmalloc(1);
	out[len] = '\0';
	if (lenp != NULL)
		*lenp = len;
	return out;
}

/* The first line of git's output (owned), or NULL. */
static char *
gitfiles_line(const char *dir, const char *const *args)
{
	char	*s = gitfiles_run(dir, args, NULL);

	if (s != NULL)
		s[strcspn(s, "\n")] = '\0';
	return s;
}

/* Add one entry: its porcelain status and what stat says of it now. */
void
gitfiles_add(struct gitsnap *g, const char *xy, const char *path)
{
	struct gitent	*e;
	struct stat	 sb;
	char		*full;

	g->v = xreallocarray(g->v, g->n + 1, sizeof *g->v);
	e = &g->v[g->n++];
	memset(e, 0, sizeof *e);
	e->path = xstrdup(path);
	memcpy(e->xy, xy, 2);
	xasprintf(&full, "%s/%s", g->top, path);
	if (lstat(full, &sb) == 0) {
		e->size = (long long)sb.st_size;
		e->mtime_ns = (long long)sb.st_mtim.tv_sec * 1000000000LL +
		    sb.st_mtim.tv_nsec;
	} else
		e->size = -1;
	free(full);
}

/* Snapshot dir's work tree; g->valid stays 0 when it is none. */
void
gitfiles_snap(const char *dir, struct gitsnap *g)
{
	static const char *const top_args[] = { "rev-parse", "--show-toplevel",
		NULL };
	static const char *const head_args[] = { "rev-parse", "-q", "--verify",
		"HEAD", NULL };
	static const char *const st_args[] = { "status", "--porcelain", "-z",
		"--untracked-files=all", NULL };
	char	*out, *p, *end;
	size_t	 len = 0;

	memset(g, 0, sizeof *g);
	if (dir == NULL || (g->top = gitfiles_line(dir, top_args)) == NULL)
		return;
	g->head = gitfiles_line(dir, head_args);
	if ((out = gitfiles_run(dir, st_args, &len)) == NULL) {
		gitfiles_clear(g);
		return;
	}
	for (p = out, end = out + len; p < end; p += strlen(p) + 1) {
		if (strlen(p) < 4)
			continue;
		gitfiles_add(g, p, p + 3);
		/* A rename or copy carries its old name in the next field. */
		if ((p[0] == 'R' || p[0] == 'C') && p + strlen(p) + 1 < end)
			p += strlen(p) + 1;
	}
	free(out);
	gitfiles_sort(g);
	g->valid = 1;
}

/* Order of entries by path (qsort and bsearch). */
static int
gitfiles_cmp(const void *a, const void *b)
{
	return strcmp(((const struct gitent *)a)->path,
	    ((const struct gitent *)b)->path);
}

/* Sort a snapshot so that a diff of 20000 entries is no square. */
void
gitfiles_sort(struct gitsnap *g)
{
	if (g->n > 1)
		qsort(g->v, g->n, sizeof *g->v, gitfiles_cmp);
}

/* Find path in a (sorted) snapshot, or NULL. */
static const struct gitent *
gitfiles_find(const struct gitsnap *g, const char *path)
{
	struct gitent	key;

	if (g->n == 0)
		return NULL;
	key.path = (char *)path;
	return bsearch(&key, g->v, g->n, sizeof *g->v, gitfiles_cmp);
}

/* Append path unless already there. */
static void
gitfiles_push(struct strv *sv, const char *path)
{
	size_t	i;

	for (i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], path) == 0)
			return;
	strv_push(sv, path);
}

/*
 * What changed between two snapshots: entries that appeared, vanished or
 * differ in status, size or mtime, plus what commits made since.  A scan
 * cut at SCAN_MAX cannot tell a vanished entry from one past the cut:
 * then only entries that differ, or appeared with an mtime after the
 * first scan began, count.
 * Returns 0 and fills out (paths relative to the top), -1 if unknown.
 */
int
gitfiles_diff(const struct gitsnap *a, const struct gitsnap *b,
    struct strv *out)
{
	const struct gitent	*e, *o;
	const char		*args[8];
	char			*list, *p, *end;
	size_t			 i, len = 0;
	int			 cut = a->truncated || b->truncated;

	if (!a->valid || !b->valid || a->scan != b->scan ||
	    strcmp(a->top, b->top) != 0)
		return -1;
	for (i = 0; i < b->n; i++) {
		e = &b->v[i];
		o = gitfiles_find(a, e->path);
		if (o == NULL && cut && e->mtime_ns < a->t0_ns)
			continue;
		if (o == NULL || memcmp(o->xy, e->xy, 2) != 0 ||
		    o->size != e->size || o->mtime_ns != e->mtime_ns)
			gitfiles_push(out, e->path);
	}
	for (i = 0; !cut && i < a->n; i++)
		if (gitfiles_find(b, a->v[i].path) == NULL)
			gitfiles_push(out, a->v[i].path);
	if (a->head != NULL && b->head != NULL &&
	    strcmp(a->head, b->head) != 0) {
		args[0] = "diff";
		args[1] = "--name-only";
		args[2] = "-z";
		args[3] = a->head;
		args[4] = b->head;
		args[5] = "--";
		args[6] = NULL;
		if ((list = gitfiles_run(b->top, args, &len)) != NULL) {
			for (p = list, end = list + len; p < end;
			    p += strlen(p) + 1)
				if (*p != '\0')
					gitfiles_push(out, p);
			free(list);
		}
	}
	return 0;
}

/* Free a snapshot. */
void
gitfiles_clear(struct gitsnap *g)
{
	size_t	i;

	for (i = 0; i < g->n; i++)
		free(g->v[i].path);
	free(g->v);
	free(g->top);
	free(g->head);
	memset(g, 0, sizeof *g);
}
