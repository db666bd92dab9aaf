/*
 * gitprep.c: the --git verbs around a loop's merge queue: prepare (the
 * loop branch and its worktree, the dirty-tree rule, the pruning of what
 * a killed run left), cleanup (worktrees and branches) and land (a
 * fast-forward of the user's branch, only when it is safe).
 */
#include <config.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gitwt.h"
#include "xmalloc.h"

/* The reply of a verb that failed: exit 1, {"error", "kind"}. */
static json_t *
gitprep_fail(int *rc, const char *kind, char *msg)
{
	json_t	*r = json_pack("{s:s, s:s}", "error", msg, "kind", kind);

	free(msg);
	*rc = 1;
	return r;
}

/* Is name in the request's "keep" list? */
static int
gitprep_kept(const json_t *keep, const char *name)
{
	size_t	 i;
	json_t	*v;

	json_array_foreach(keep, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
			return 1;
	return 0;
}

/*
 * Remove every worktree under <side>/wt but those named in keep (and
 * "loop" unless all), then forget the missing ones.  The names removed.
 */
static json_t *
gitprep_sweep(const char *repo, const char *side, const json_t *keep,
    int all)
{
	json_t		*gone = json_array();
	struct dirent	*de;
	char		*wt = NULL, *p;
	DIR		*d;
	struct gitout	 o;
	int		 lk;

	xasprintf(&wt, "%s/wt", side);
	if ((d = opendir(wt)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.' || (!all &&
			    strcmp(de->d_name, "loop") == 0) ||
			    gitprep_kept(keep, de->d_name))
				continue;
			xasprintf(&p, "%s/%s", wt, de->d_name);
			if (gitwt_remove(repo, p) == 0)
				json_array_append_new(gone,
				    json_string(de->d_name));
			free(p);
		}
		closedir(d);
	}
	free(wt);
	lk = gitwt_lock(repo);
	gitexec_git(repo, &o, "worktree", "prune", NULL);
	gitwt_unlock(lk);
	gitexec_clear(&o);
	return gone;
}

/*
 * The commit the loop branch starts from: HEAD, or with from_worktree a
 * commit of the tracked changes (`git stash create`: the checkout is not
 * touched).  A dirty tree without it is refused: NULL and *fail set.
 */
static char *
gitprep_base(const char *top, int from_wt, json_t *reply, int *rc,
    json_t **fail)
{
	int	 n, untracked = 0;
	char	*sha, *msg = NULL;

	n = gitwt_dirty(top, from_wt ? &untracked : NULL);
	if (n > 0 && !from_wt) {
		xasprintf(&msg, "the work tree has uncommitted changes (%d "
		    "file%s): commit or stash them, or pass --from-worktree "
		    "to start from them", n, n == 1 ? "" : "s");
		*fail = gitprep_fail(rc, "dirty", msg);
		return NULL;
	}
	if (untracked > 0) {
		xasprintf(&msg, "%d untracked file%s not carried into the "
		    "loop: add them to git to include them", untracked,
		    untracked == 1 ? " is" : "s are");
		json_object_set_new(reply, "warning", json_string(msg));
		free(msg);
	}
	if (n > 0 && (sha = gitexec_line(top, "stash", "create",
	    "ccw: the work tree at the loop's start", NULL)) != NULL)
		return sha;
	return gitexec_line(top, "rev-parse", "-q", "--verify",
	    "HEAD^{commit}", NULL);
}

/* The loop branch (made from the start unless it exists) and worktree. */
static json_t *
gitprep_loop(const char *top, const char *branch, const char *path,
    const json_t *req, json_t *reply, int *rc)
{
	json_t		*fail = NULL;
	char		*ref = NULL, *have, *base, *err = NULL;
	struct gitout	 o;
	int		 made, lk;

	xasprintf(&ref, "refs/heads/%s", branch);
	have = gitexec_line(top, "rev-parse", "-q", "--verify", ref, NULL);
	free(ref);
	if (have == NULL) {
		base = gitprep_base(top, json_is_true(json_object_get(req,
		    "from_worktree")), reply, rc, &fail);
		if (base == NULL)
			return fail != NULL ? fail : gitprep_fail(rc, "git",
			    xstrdup("no commit to start from"));
		lk = gitwt_lock(top);
		if (gitexec_git(top, &o, "branch", branch, base, NULL) != 0)
			err = gitexec_why(&o);
		gitwt_unlock(lk);
		gitexec_clear(&o);
		free(base);
		if (err != NULL)
			return gitprep_fail(rc, "git", err);
	}
	free(have);
	if ((made = gitwt_ensure(top, path, branch, NULL, &err)) < 0)
		return gitprep_fail(rc, "git", err);
	if (made == 1 && gitwt_recover(path, branch, &err) != 0)
		return gitprep_fail(rc, "git", err);
	return NULL;
}

/* The start of the reply: where the user's checkout is. */
static json_t *
gitprep_where(const char *top, const char *head)
{
	char	*b = gitexec_line(top, "symbolic-ref", "-q", "--short",
	    "HEAD", NULL);
	json_t	*r;

	r = json_pack("{s:s, s:s, s:o, s:s}", "isolation", "worktree",
	    "repo", top, "start_branch", b != NULL ? json_string(b) :
	    json_null(), "start_head", head);
	free(b);
	return r;
}

/* prepare: see i27-contract.md and ccw-worker(8). */
json_t *
gitprep_prepare(const json_t *req, int *rc, char **err)
{
	const char	*root, *side, *loop;
	char		*top, *head, *branch = NULL, *path = NULL, *base;
	json_t		*reply, *fail;

	root = gitwt_str(req, "root", 1, err);
	side = gitwt_str(req, "side", 1, err);
	loop = gitwt_str(req, "loop", 0, err);
	if (*err == NULL && !gitwt_name_ok(loop))
		xasprintf(err, "\"loop\" is not a safe branch component");
	if (*err != NULL)
		return NULL;
	if ((top = gitexec_line(root, "rev-parse", "--show-toplevel",
	    NULL)) == NULL)
		return json_pack("{s:s, s:s}", "isolation", "none", "reason",
		    "not a git repository");
	if ((head = gitexec_line(top, "rev-parse", "-q", "--verify",
	    "HEAD^{commit}", NULL)) == NULL) {
		free(top);
		return json_pack("{s:s, s:s}", "isolation", "none", "reason",
		    "the repository has no commit yet");
	}
	reply = gitprep_where(top, head);
	xasprintf(&branch, "ccw/%s/loop", loop);
	xasprintf(&path, "%s/wt/loop", side);
	if ((fail = gitprep_loop(top, branch, path, req, reply, rc)) != NULL) {
		json_decref(reply);
		reply = fail;
	} else {
		base = gitexec_line(top, "rev-parse", branch, NULL);
		json_object_set_new(reply, "loop_branch", json_string(branch));
		json_object_set_new(reply, "loop_path", json_string(path));
		json_object_set_new(reply, "base", json_string(base ? base :
		    head));
		json_object_set_new(reply, "pruned", gitprep_sweep(top, side,
		    json_object_get(req, "keep"), 0));
		free(base);
	}
	free(top);
	free(head);
	free(branch);
	free(path);
	return reply;
}

/* The branches named ccw/<loop>/... (owned list). */
static json_t *
gitprep_agent_branches(const char *repo, const char *loop_branch)
{
	struct gitout	 o;
	json_t		*l = json_array();
	char		*pat = NULL, *p, *nl;

	xasprintf(&pat, "refs/heads/%s/", loop_branch);
	if (gitexec_git(repo, &o, "for-each-ref", "--format=%(refname:short)",
	    pat, NULL) == 0)
		for (p = o.out; *p != '\0'; p = nl + 1) {
			if ((nl = strchr(p, '\n')) == NULL)
				break;
			*nl = '\0';
			json_array_append_new(l, json_string(p));
		}
	gitexec_clear(&o);
	free(pat);
	return l;
}

/*
 * cleanup: every worktree of the loop, and when asked its branches
 * ccw/<loop>/... (the loop branch too unless keep_loop_branch).
 */
json_t *
gitprep_cleanup(const json_t *req, int *rc, char **err)
{
	const char	*repo, *side, *lb;
	json_t		*reply, *br, *v;
	struct gitout	 o;
	char		*loop, *prefix;
	size_t		 i;
	int		 lk;

	repo = gitwt_str(req, "repo", 1, err);
	side = gitwt_str(req, "side", 1, err);
	lb = gitwt_str(req, "loop_branch", 0, err);
	if (*err == NULL && (!gitwt_branch_ok(lb) || strncmp(lb, "ccw/",
	    4) != 0))
		xasprintf(err, "\"loop_branch\" must be a ccw/ branch");
	if (*err != NULL)
		return NULL;
	*rc = 0;
	reply = json_pack("{s:o}", "removed", gitprep_sweep(repo, side, NULL,
	    1));
	if (!json_is_true(json_object_get(req, "remove_branches")))
		return reply;
	loop = gitwt_loopref(lb);
	prefix = xstrndup(loop, strlen(loop) - 5);
	br = gitprep_agent_branches(repo, prefix);
	for (i = json_array_size(br); i-- > 0;)
		if (json_is_true(json_object_get(req, "keep_loop_branch")) &&
		    strcmp(json_string_value(json_array_get(br, i)), loop) == 0)
			json_array_remove(br, i);
	lk = gitwt_lock(repo);
	json_array_foreach(br, i, v) {
		gitexec_git(repo, &o, "branch", "-D", json_string_value(v),
		    NULL);
		gitexec_clear(&o);
	}
	gitwt_unlock(lk);
	json_object_set_new(reply, "branches", br);
	free(loop);
	free(prefix);
	return reply;
}

/* Why land may not fast-forward the checkout at root (owned), or NULL. */
static char *
gitprep_unsafe(const char *root, const char *sb, const char *lb)
{
	char		*cur, *why = NULL;
	struct gitout	 o;
	int		 rc;

	cur = gitexec_line(root, "symbolic-ref", "-q", "--short", "HEAD",
	    NULL);
	if (cur == NULL || strcmp(cur, sb) != 0)
		xasprintf(&why, "the checkout is on %s, not %s", cur != NULL ?
		    cur : "a detached HEAD", sb);
	else if (gitwt_dirty(root, NULL) != 0)
		xasprintf(&why, "the work tree has uncommitted changes");
	else {
		rc = gitexec_git(root, &o, "merge-base", "--is-ancestor", sb,
		    lb, NULL);
		gitexec_clear(&o);
		if (rc != 0)
			xasprintf(&why, "%s has moved on: it is not an "
			    "ancestor of %s", sb, lb);
	}
	free(cur);
	return why;
}

/* land: fast-forward the starting branch to the loop's, only if safe. */
json_t *
gitprep_land(const json_t *req, int *rc, char **err)
{
	const char	*root, *lb0, *sb;
	char		*why, *head, *msg = NULL, *lb;
	struct gitout	 o;
	json_t		*reply;
	int		 ok;

	(void)gitwt_str(req, "repo", 1, err);
	root = gitwt_str(req, "root", 1, err);
	lb0 = gitwt_str(req, "loop_branch", 0, err);
	sb = gitwt_str(req, "start_branch", 0, err);
	if (*err == NULL && (!gitwt_branch_ok(lb0) || !gitwt_branch_ok(sb)))
		xasprintf(err, "a branch name is not safe");
	if (*err != NULL)
		return NULL;
	*rc = 0;
	lb = gitwt_loopref(lb0);
	if ((why = gitprep_unsafe(root, sb, lb)) == NULL) {
		ok = gitexec_git(root, &o, "merge", "-q", "--ff-only", lb,
		    NULL) == 0;
		if (!ok)
			why = gitexec_why(&o);
		gitexec_clear(&o);
		if (ok)
			xasprintf(&msg, "fast-forwarded %s to %s", sb, lb);
	}
	head = gitexec_line(root, "rev-parse", "HEAD", NULL);
	reply = json_pack("{s:b, s:s, s:s}", "landed", why == NULL, "reason",
	    why != NULL ? why : msg, "head", head != NULL ? head : "");
	free(why);
	free(msg);
	free(head);
	free(lb);
	return reply;
}
