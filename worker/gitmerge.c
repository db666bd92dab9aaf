/*
 * gitmerge.c: the --git merge verb, the merge queue's one step: each
 * agent branch in role order into the loop worktree (merge, or rebase
 * then fast-forward), a conflict recorded (files, hunks) and aborted,
 * the check command after each merge (a failing one undoes it).  A run
 * killed anywhere is undone or finished by the next one: a mark holds
 * the head before an unchecked merge, a ledger the merges that passed.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gitwt.h"
#include "xmalloc.h"

#define HUNKS_FILE	4096	/* conflict hunks kept of one file */
#define HUNKS_ALL	16384	/* ... and of all */
#define CHECK_TAIL	2048	/* a failing check's output kept */
#define CHECK_MS	600000u	/* check_ms unset */

/* One merge: the request's item and where the loop worktree is. */
struct gitmerge {
	const char	*repo, *loop, *check;
	char		*loop_branch;
	uint64_t	 check_ms;
	int		 rebase;
	const char	*agent, *role, *branch, *path;
	char		*pre, *tip;
};

/* The ledger line of a merge that passed: "branch tip pre post". */
static void
gitmerge_ledger_add(const struct gitmerge *m, const char *post)
{
	char	*p = gitwt_gitpath(m->loop, "ccw-merged");
	FILE	*fp;

	if (p != NULL && (fp = fopen(p, "a")) != NULL) {
		fprintf(fp, "%s %s %s %s\n", m->branch, m->tip, m->pre, post);
		fclose(fp);
	}
	free(p);
}

/* The pre and post of this branch at this tip in the ledger (owned). */
static int
gitmerge_ledger_find(const struct gitmerge *m, char **pre, char **post)
{
	char	*p = gitwt_gitpath(m->loop, "ccw-merged");
	char	 line[1024], b[512], t[128], a[128], z[128];
	FILE	*fp;
	int	 found = 0;

	if (p != NULL && (fp = fopen(p, "r")) != NULL) {
		while (fgets(line, sizeof line, fp) != NULL)
			if (sscanf(line, "%511s %127s %127s %127s", b, t, a,
			    z) == 4 && strcmp(b, m->branch) == 0 &&
			    strcmp(t, m->tip) == 0) {
				free(*pre);
				free(*post);
				*pre = xstrdup(a);
				*post = xstrdup(z);
				found = 1;
			}
		fclose(fp);
	}
	free(p);
	return found;
}

/* The item's files and stat of pre..post into r. */
static void
gitmerge_diff(const struct gitmerge *m, const char *pre, const char *post,
    json_t *r)
{
	json_object_set_new(r, "files", gitwt_files(m->loop, pre, post));
	json_object_set_new(r, "stat", gitwt_stat(m->loop, pre, post));
}

/* What the branch would bring (conflict, failed check): fork..tip. */
static void
gitmerge_branch_diff(const struct gitmerge *m, json_t *r)
{
	char	*mb = NULL;

	if (m->tip != NULL)
		mb = gitexec_line(m->loop, "merge-base", m->pre, m->tip, NULL);
	if (mb != NULL)
		gitmerge_diff(m, mb, m->tip, r);
	else
		gitmerge_diff(m, m->pre, m->pre, r);
	free(mb);
}

/*
 * The agent's worktree, if it is still there: what it left uncommitted
 * is committed on its branch, then the worktree goes (its branch stays).
 */
static void
gitmerge_fold(const struct gitmerge *m)
{
	char	*msg = NULL, *err = NULL;

	if (m->path == NULL || access(m->path, F_OK) != 0)
		return;
	if (gitwt_is_tree(m->path, m->branch)) {
		xasprintf(&msg, "ccw: %s (%s)", m->agent, m->role);
		gitwt_commit_all(m->path, msg, &err);
		free(msg);
		free(err);
	}
	gitwt_remove(m->repo, m->path);
}

/* The conflict: the unmerged files and their hunks, capped. */
static json_t *
gitmerge_conflict(const struct gitmerge *m)
{
	struct gitout	 o, d;
	json_t		*files = json_array(), *c;
	char		*hunks = xstrdup(""), *t, *p, *nl;
	size_t		 n;

	gitexec_git(m->loop, &o, "diff", "--name-only", "--diff-filter=U",
	    NULL);
	for (p = o.out; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		*nl = '\0';
		json_array_append_new(files, json_string(p));
		if (strlen(hunks) >= HUNKS_ALL)
			continue;
		gitexec_git(m->loop, &d, "diff", "--no-ext-diff", "--", p,
		    NULL);
		n = d.len < HUNKS_FILE ? d.len : HUNKS_FILE;
		if (n > HUNKS_ALL - strlen(hunks))
			n = HUNKS_ALL - strlen(hunks);
		xasprintf(&t, "%s%.*s", hunks, (int)n, d.out);
		free(hunks);
		hunks = t;
		gitexec_clear(&d);
	}
	gitexec_clear(&o);
	c = json_pack("{s:o, s:s%}", "files", files, "hunks", hunks,
	    strlen(hunks));
	free(hunks);
	return c;
}

/* Run git with our commit arguments (hooks off, identity) in the loop. */
static int
gitmerge_git(const struct gitmerge *m, struct gitout *o, const char *a,
    const char *b, const char *c, const char *d)
{
	const char	*av[24];
	int		 n = gitwt_commit_args(m->loop, av, 24);

	av[n++] = a;
	av[n++] = b;
	av[n++] = c;
	av[n++] = d;
	av[n] = NULL;
	return gitexec_argv(NULL, av, GITX_DEADLINE_MS, o);
}

/*
 * Bring the branch in: 0 merged, 1 a conflict (recorded in r, aborted),
 * -1 git failed otherwise (*err).  The loop worktree is on its branch
 * at pre after anything but 0.
 */
static int
gitmerge_apply(const struct gitmerge *m, json_t *r, char **err)
{
	struct gitout	 o;
	char		*u, *rerr = NULL;
	int		 rc, conflicted, lk = -1;

	/* A rebase checks the agent branch out: worktrees are read. */
	if (m->rebase)
		lk = gitwt_lock(m->repo);
	if (!m->rebase)
		rc = gitmerge_git(m, &o, "merge", "-q", "--no-edit", m->branch);
	else if ((rc = gitmerge_git(m, &o, "rebase", "-q", m->loop_branch,
	    m->branch)) == 0) {
		gitexec_clear(&o);
		if ((rc = gitexec_git(m->loop, &o, "checkout", "-q",
		    m->loop_branch, NULL)) == 0) {
			gitexec_clear(&o);
			rc = gitexec_git(m->loop, &o, "merge", "-q",
			    "--ff-only", m->branch, NULL);
		}
	}
	gitwt_unlock(lk);
	if (rc == 0) {
		gitexec_clear(&o);
		return 0;
	}
	u = gitexec_line(m->loop, "diff", "--name-only", "--diff-filter=U",
	    NULL);
	conflicted = u != NULL;
	free(u);
	if (conflicted)
		json_object_set_new(r, "conflict", gitmerge_conflict(m));
	else
		*err = gitexec_why(&o);
	gitexec_clear(&o);
	if (gitwt_recover(m->loop, m->loop_branch, &rerr) != 0) {
		free(*err);
		*err = rerr;
		return -1;
	}
	return conflicted ? 1 : -1;
}

/*
 * The check command in dir under ms: its record ({rc, ms, tail,
 * timed_out}) into r["check"]; 0 passed, 1 failed.  The merge's check
 * and try's (gittry.c) alike.
 */
int
gitmerge_check_in(const char *dir, const char *check, uint64_t ms, json_t *r)
{
	struct gitout	 o;
	char		*tail;
	int		 rc;

	rc = gitexec_sh(dir, check, ms, &o);
	tail = gitexec_tail(&o, CHECK_TAIL);
	json_object_set_new(r, "check", json_pack("{s:i, s:I, s:s, s:b}",
	    "rc", rc, "ms", (json_int_t)o.ms, "tail", tail, "timed_out",
	    o.timed_out));
	free(tail);
	gitexec_clear(&o);
	return rc == 0 ? 0 : 1;
}

/* The check after a merge: 0 passed (or none), 1 failed (r has it). */
static int
gitmerge_check(const struct gitmerge *m, json_t *r)
{
	if (m->check == NULL)
		return 0;
	return gitmerge_check_in(m->loop, m->check, m->check_ms, r);
}

/* A branch already in the loop: merged before (the ledger), or empty. */
static const char *
gitmerge_known(const struct gitmerge *m, json_t *r)
{
	char	*pre = NULL, *post = NULL;

	if (!gitmerge_ledger_find(m, &pre, &post)) {
		gitmerge_diff(m, m->pre, m->pre, r);
		return "empty";
	}
	gitmerge_diff(m, pre, post, r);
	free(pre);
	free(post);
	return "merged";
}

/* One item: its outcome into r; -1 when git failed (*err). */
static int
gitmerge_one(struct gitmerge *m, json_t *r, char **err)
{
	const char	*outcome = "merged";
	char		*ref = NULL, *post;
	struct gitout	 o;
	int		 rc;

	gitmerge_fold(m);
	xasprintf(&ref, "refs/heads/%s", m->branch);
	m->tip = gitexec_line(m->repo, "rev-parse", "-q", "--verify", ref,
	    NULL);
	free(ref);
	m->pre = gitexec_line(m->loop, "rev-parse", "HEAD", NULL);
	if (m->pre == NULL)
		return (*err = xstrdup("the loop worktree has no HEAD")), -1;
	rc = m->tip == NULL ? 0 : gitexec_git(m->loop, &o, "merge-base",
	    "--is-ancestor", m->tip, m->pre, NULL);
	if (m->tip != NULL)
		gitexec_clear(&o);
	if (m->tip == NULL || rc == 0)
		outcome = m->tip == NULL ? "empty" : gitmerge_known(m, r);
	else if (gitwt_pending(m->loop, m->pre) != 0)
		return (*err = xstrdup("cannot mark the merge")), -1;
	else if ((rc = gitmerge_apply(m, r, err)) < 0)
		return -1;
	else if (rc == 1)
		outcome = "conflict";
	else if (gitmerge_check(m, r) != 0) {
		outcome = "check_failed";
		if (gitwt_recover(m->loop, m->loop_branch, err) != 0)
			return -1;
	} else {
		post = gitexec_line(m->loop, "rev-parse", "HEAD", NULL);
		gitmerge_ledger_add(m, post != NULL ? post : m->pre);
		gitwt_pending(m->loop, NULL);
		gitmerge_diff(m, m->pre, post != NULL ? post : m->pre, r);
		free(post);
	}
	if (json_object_get(r, "files") == NULL)
		gitmerge_branch_diff(m, r);
	json_object_set_new(r, "outcome", json_string(outcome));
	return 0;
}

/* The request's item i into m, or *err. */
static void
gitmerge_item(const json_t *it, struct gitmerge *m, char **err)
{
	m->agent = gitwt_str(it, "agent", 0, err);
	m->role = gitwt_str(it, "role", 0, err);
	m->branch = gitwt_str(it, "branch", 0, err);
	m->path = gitwt_str(it, "path", -1, err);
	if (*err == NULL && m->path != NULL && m->path[0] != '/')
		xasprintf(err, "an item's \"path\" must be absolute");
	if (*err == NULL && (!gitwt_name_ok(m->agent) ||
	    !gitwt_branch_ok(m->branch)))
		xasprintf(err, "an item's agent or branch is not safe");
}

/* The request into m (everything but the items), or *err. */
static void
gitmerge_req(const json_t *req, struct gitmerge *m, char **err)
{
	const char	*s;
	json_t		*ms = json_object_get(req, "check_ms");

	memset(m, 0, sizeof *m);
	m->repo = gitwt_str(req, "repo", 1, err);
	m->loop = gitwt_str(req, "loop_path", 1, err);
	s = gitwt_str(req, "loop_branch", 0, err);
	if (s != NULL && !gitwt_branch_ok(s))
		xasprintf(err, "\"loop_branch\" is not safe");
	m->loop_branch = s != NULL ? gitwt_loopref(s) : NULL;
	m->check = gitwt_str(req, "check", -1, err);
	s = gitwt_str(req, "strategy", -1, err);
	m->rebase = s != NULL && strcmp(s, "rebase") == 0;
	m->check_ms = json_integer_value(ms) > 0 ?
	    (uint64_t)json_integer_value(ms) : CHECK_MS;
	if (*err == NULL && s != NULL && !m->rebase && strcmp(s, "merge"))
		xasprintf(err, "\"strategy\" is merge or rebase");
	if (*err == NULL && !json_is_array(json_object_get(req, "items")))
		xasprintf(err, "\"items\" must be an array");
}

/* merge: see i27-contract.md and ccw-worker(8). */
json_t *
gitmerge_merge(const json_t *req, int *rc, char **err)
{
	struct gitmerge	 m;
	json_t		*items, *it, *r, *out;
	size_t		 i;
	char		*head, *gerr = NULL;

	gitmerge_req(req, &m, err);
	items = json_object_get(req, "items");
	json_array_foreach(items, i, it)
		gitmerge_item(it, &m, err);
	if (*err != NULL) {
		free(m.loop_branch);
		return NULL;
	}
	if (!gitwt_is_tree(m.loop, NULL))
		gerr = xstrdup("the loop worktree is missing: run prepare");
	if (gerr != NULL || gitwt_recover(m.loop, m.loop_branch, &gerr) != 0)
		goto fail;
	out = json_array();
	json_array_foreach(items, i, it) {
		gitmerge_item(it, &m, err);
		r = json_pack("{s:s, s:s, s:s}", "agent", m.agent, "role",
		    m.role, "branch", m.branch);
		json_array_append_new(out, r);
		if (gitmerge_one(&m, r, &gerr) != 0) {
			json_decref(out);
			goto fail;
		}
		free(m.pre);
		free(m.tip);
		m.pre = m.tip = NULL;
	}
	head = gitexec_line(m.loop, "rev-parse", "HEAD", NULL);
	free(m.loop_branch);
	*rc = 0;
	r = json_pack("{s:s, s:o}", "head", head != NULL ? head : "",
	    "items", out);
	free(head);
	return r;
fail:
	free(m.pre);
	free(m.tip);
	free(m.loop_branch);
	*rc = 1;
	r = json_pack("{s:s, s:s}", "error", gerr != NULL ? gerr : "git "
	    "failed", "kind", "git");
	free(gerr);
	return r;
}
