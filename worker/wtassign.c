/*
 * wtassign.c: a worker's own git worktree (ASSIGN's options.worktree):
 * made or adopted before the first turn on branch <prefix>/<agent> from
 * base, the configured files copied in, setup run under its deadline, a
 * branch merged in for a resolve step; the tool then runs there.  After
 * the last turn every change is committed and RESULT tells the exact
 * name-status of base..HEAD.
 */
#include <config.h>

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gitwt.h"
#include "worker.h"
#include "xmalloc.h"

#define SETUP_MS	600000u	/* setup_ms unset */
#define SETUP_TAIL	512	/* a failed setup's output in the reason */

/* The spec's fields into w->wt, checked; *err when one is wrong. */
static void
wtassign_spec(struct worker *w, const json_t *o, char **err)
{
	const struct msg_assign	*a = &w->assign.u.assign;
	const char		*base, *dir, *prefix, *repo;
	char			*agent = NULL;

	repo = gitwt_str(o, "repo", 1, err);
	base = gitwt_str(o, "base", 0, err);
	dir = gitwt_str(o, "dir", 1, err);
	prefix = gitwt_str(o, "branch_prefix", 0, err);
	(void)gitwt_str(o, "setup", -1, err);
	(void)gitwt_str(o, "merge_from", -1, err);
	if (a->agent_id != NULL)
		agent = xstrdup(a->agent_id);
	else
		xasprintf(&agent, "%s-%u", w->role, w->index);
	if (*err == NULL && (!gitwt_branch_ok(prefix) ||
	    !gitwt_name_ok(agent)))
		xasprintf(err, "the branch %s/%s is not safe", prefix, agent);
	if (*err == NULL && strspn(base, "0123456789abcdef") != strlen(base))
		xasprintf(err, "\"base\" must be a commit id");
	if (*err == NULL) {
		w->wt.repo = xstrdup(repo);
		w->wt.base = xstrdup(base);
		xasprintf(&w->wt.path, "%s/%s", dir, agent);
		xasprintf(&w->wt.branch, "%s/%s", prefix, agent);
		xasprintf(&w->wt.msg, "ccw: %s (%s)", agent, w->role);
		w->wt.keep = !json_is_false(json_object_get(o, "keep"));
	}
	free(agent);
}

/*
 * A copied file the base does not track (.env) is never committed: it
 * is named in the worktree's own ccw-copied file, which every commit of
 * ours leaves out (gitwt_commit_all).
 */
static void
wtassign_keep_out(struct worker *w, const char *rel)
{
	char	*spec = NULL, *p;
	FILE	*fp;
	struct gitout	 o;
	int	 tracked;

	xasprintf(&spec, "%s:%s", w->wt.base, rel);
	tracked = gitexec_git(w->wt.path, &o, "cat-file", "-e", spec,
	    NULL) == 0;
	gitexec_clear(&o);
	free(spec);
	if (tracked || (p = gitwt_gitpath(w->wt.path, "ccw-copied")) == NULL)
		return;
	if ((fp = fopen(p, "a")) != NULL) {
		fprintf(fp, "%s\n", rel);
		fclose(fp);
	}
	free(p);
}

/* Copy the copy entries from the repository (missing ones skipped). */
static int
wtassign_copy(struct worker *w, const json_t *list, char **err)
{
	const char	*av[] = { "cp", "-a", "--", NULL, NULL, NULL };
	struct gitout	 o;
	struct stat	 sb;
	char		*src = NULL, *dst = NULL;
	json_t		*v;
	size_t		 i;
	int		 rc = 0;

	json_array_foreach(list, i, v) {
		if (!gitwt_rel_ok(json_string_value(v))) {
			xasprintf(err, "copy: \"%s\" must be a relative path "
			    "without \"..\"", json_string_value(v) ?
			    json_string_value(v) : "?");
			return -1;
		}
		xasprintf(&src, "%s/%s", w->wt.repo, json_string_value(v));
		xasprintf(&dst, "%s/%s", w->wt.path, json_string_value(v));
		if (lstat(src, &sb) == 0) {
			gitwt_mkparent(dst);
			av[3] = src;
			av[4] = dst;
			if (gitexec_argv(NULL, av, 600000, &o) != 0 && rc == 0) {
				xasprintf(err, "copy %s: %s",
				    json_string_value(v), o.err);
				rc = -1;
			}
			gitexec_clear(&o);
			wtassign_keep_out(w, json_string_value(v));
		}
		free(src);
		free(dst);
		src = dst = NULL;
	}
	return rc;
}

/* The setup command in the worktree under its deadline. */
static int
wtassign_setup(struct worker *w, const json_t *o, char **err)
{
	const char	*cmd = json_string_value(json_object_get(o, "setup"));
	json_int_t	 ms = json_integer_value(json_object_get(o,
	    "setup_ms"));
	struct gitout	 out;
	char		*tail;
	int		 rc;

	if (cmd == NULL || *cmd == '\0')
		return 0;
	rc = gitexec_sh(w->wt.path, cmd, ms > 0 ? (uint64_t)ms : SETUP_MS,
	    &out);
	if (rc != 0) {
		tail = gitexec_tail(&out, SETUP_TAIL);
		if (out.timed_out)
			xasprintf(err, "worktree setup failed: timed out after "
			    "%llu ms: %s", (unsigned long long)out.ms, tail);
		else
			xasprintf(err, "worktree setup failed: exit %d: %s",
			    rc, tail);
		free(tail);
	}
	gitexec_clear(&out);
	return rc == 0 ? 0 : -1;
}

/*
 * merge_from: that branch merged in without a commit, conflict markers
 * left for the resolve step.  A merge already pending (an adopted
 * worktree) is left as it is.
 */
static int
wtassign_merge_from(struct worker *w, const char *from, char **err)
{
	const char	*av[24];
	struct gitout	 o;
	char		*u = NULL, *why;
	int		 n, rc;

	if (from == NULL)
		return 0;
	if (!gitwt_branch_ok(from)) {
		xasprintf(err, "merge_from: \"%s\" is not a safe branch", from);
		return -1;
	}
	if ((u = gitexec_line(w->wt.path, "rev-parse", "-q", "--verify",
	    "MERGE_HEAD", NULL)) != NULL) {
		free(u);
		return 0;
	}
	n = gitwt_commit_args(w->wt.path, av, 24);
	av[n++] = "merge";
	av[n++] = "-q";
	av[n++] = "--no-commit";
	av[n++] = "--no-ff";
	av[n++] = from;
	av[n] = NULL;
	rc = gitexec_argv(NULL, av, GITX_DEADLINE_MS, &o);
	/* A conflict is what the resolve step is for; a bad name is not. */
	if (rc != 0 && (u = gitexec_line(w->wt.path, "rev-parse", "-q",
	    "--verify", "MERGE_HEAD", NULL)) == NULL) {
		why = gitexec_why(&o);
		xasprintf(err, "merge_from %s: %s", from, why);
		free(why);
	}
	free(u);
	gitexec_clear(&o);
	return *err == NULL ? 0 : -1;
}

/*
 * options.worktree: make or adopt the worktree and point the tool's cwd
 * at it.  0 (also when there is none), -1 with *err: the run fails.
 */
int
wtassign_start(struct worker *w, char **err)
{
	const json_t	*o = json_object_get(w->assign.u.assign.options,
	    "worktree");
	char		*top, *gerr = NULL;

	if (o == NULL || json_is_null(o))
		return 0;
	if (!json_is_object(o))
		return (*err = xstrdup("options.worktree must be an object")),
		    -1;
	wtassign_spec(w, o, &gerr);
	if (gerr == NULL && (top = gitexec_line(w->wt.repo, "rev-parse",
	    "--show-toplevel", NULL)) == NULL)
		xasprintf(&gerr, "%s is not a git repository", w->wt.repo);
	else if (gerr == NULL) {
		free(top);
		if (gitwt_ensure(w->wt.repo, w->wt.path, w->wt.branch,
		    w->wt.base, &gerr) < 0)
			w->wt.made = 0;
		else
			w->wt.made = 1;
	}
	if (gerr == NULL && wtassign_copy(w, json_object_get(o, "copy"),
	    &gerr) == 0 && wtassign_setup(w, o, &gerr) == 0)
		wtassign_merge_from(w, json_string_value(json_object_get(o,
		    "merge_from")), &gerr);
	if (gerr != NULL) {
		w->wt.failed = 1;
		if (strncmp(gerr, "worktree setup", 14) == 0)
			*err = gerr;
		else {
			xasprintf(err, "options.worktree: %s", gerr);
			free(gerr);
		}
		return -1;
	}
	free(w->assign.u.assign.cwd);
	w->assign.u.assign.cwd = xstrdup(w->wt.path);
	return 0;
}

/*
 * After the last turn: commit everything, and RESULT's files_changed
 * from base..HEAD (deletions and renames too), files_source "worktree"
 * and the worktree object.  keep false removes the directory (the branch
 * stays).  A message when the commit failed (owned), else NULL.
 */
char *
wtassign_finish(struct worker *w, struct msg_result *r)
{
	char	*err = NULL, *head = NULL;
	json_t	*files, *f;
	size_t	 i;

	if (w->wt.path == NULL || !w->wt.made)
		return NULL;
	if (!w->wt.failed) {
		gitwt_commit_all(w->wt.path, w->wt.msg, &err);
		head = gitexec_line(w->wt.path, "rev-parse", "HEAD", NULL);
	}
	r->worktree = json_pack("{s:s, s:s, s:s, s:s?}", "path", w->wt.path,
	    "branch", w->wt.branch, "base", w->wt.base, "head", head);
	if (head != NULL) {
		files = gitwt_files(w->wt.path, w->wt.base, head);
		json_array_foreach(files, i, f)
			strv_push(&r->files_changed, json_string_value(
			    json_object_get(f, "path")));
		json_object_set_new(r->worktree, "files", files);
		json_object_set_new(r->worktree, "stat",
		    gitwt_stat(w->wt.path, w->wt.base, head));
		free(r->files_source);
		r->files_source = xstrdup("worktree");
	}
	free(head);
	if (!w->wt.keep && !w->wt.failed && err == NULL)
		gitwt_remove(w->wt.repo, w->wt.path);
	return err;
}

/* Release the worktree's names. */
void
wtassign_free(struct worker *w)
{
	free(w->wt.repo);
	free(w->wt.path);
	free(w->wt.branch);
	free(w->wt.base);
	free(w->wt.msg);
	memset(&w->wt, 0, sizeof w->wt);
}
