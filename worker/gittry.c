/*
 * gittry.c: the --git try verb, best-of-N's judge: each attempt's
 * worktree has its leftovers committed, the check command run in it
 * under a deadline, and its exact files and diff stat against the base
 * read.  The worktrees are never removed: the merge verb takes the
 * winner's, clean-up the rest.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "gitwt.h"
#include "xmalloc.h"

#define TRY_MS		600000u	/* check_ms unset */

/* One attempt's request, checked; -1 with *err when it is not safe. */
static int
gittry_item(const json_t *it, const char **agent, const char **role,
    const char **branch, const char **path, char **err)
{
	*agent = gitwt_str(it, "agent", 0, err);
	*role = gitwt_str(it, "role", -1, err);
	*branch = gitwt_str(it, "branch", 0, err);
	*path = gitwt_str(it, "path", 1, err);
	if (*err == NULL && (!gitwt_name_ok(*agent) ||
	    !gitwt_branch_ok(*branch)))
		xasprintf(err, "an item's agent or branch is not safe");
	return *err == NULL ? 0 : -1;
}

/*
 * One attempt: leftovers committed on its branch (as the merge would),
 * files and stat of base..tip, then the check in its worktree.
 * outcome: passed, failed, unchecked (no check) or missing (no branch,
 * or no worktree left to run the check in).
 */
static json_t *
gittry_one(const char *repo, const char *base, const char *check,
    uint64_t ms, const json_t *it, char **err)
{
	const char	*agent, *role, *branch, *path, *outcome;
	char		*msg, *ref, *tip, *cerr = NULL;
	int		 tree;
	json_t		*r;

	if (gittry_item(it, &agent, &role, &branch, &path, err) != 0)
		return NULL;
	r = json_pack("{s:s, s:s, s:s}", "agent", agent, "branch", branch,
	    "path", path);
	if ((tree = gitwt_is_tree(path, branch))) {
		xasprintf(&msg, "ccw: %s (%s)", agent, role != NULL ? role :
		    "attempt");
		if (gitwt_commit_all(path, msg, &cerr) < 0)
			json_object_set_new(r, "error", json_string(cerr));
		free(msg);
		free(cerr);
	}
	xasprintf(&ref, "refs/heads/%s", branch);
	tip = gitexec_line(repo, "rev-parse", "-q", "--verify", ref, NULL);
	free(ref);
	if (tip == NULL) {
		json_object_set_new(r, "outcome", json_string("missing"));
		return r;
	}
	json_object_set_new(r, "head", json_string(tip));
	json_object_set_new(r, "files", gitwt_files(repo, base, tip));
	json_object_set_new(r, "stat", gitwt_stat(repo, base, tip));
	free(tip);
	if (check == NULL)
		outcome = "unchecked";
	else if (!tree)
		outcome = "missing";
	else
		outcome = gitmerge_check_in(path, check, ms, r) == 0 ?
		    "passed" :
		    "failed";
	json_object_set_new(r, "outcome", json_string(outcome));
	return r;
}

/* try: see i27-contract.md and ccw-worker(8). */
json_t *
gittry_try(const json_t *req, int *rc, char **err)
{
	const char	*repo, *base, *check;
	json_t		*items = json_object_get(req, "items"), *out, *r;
	json_t		*ms = json_object_get(req, "check_ms");
	const json_t	*it;
	size_t		 i;

	repo = gitwt_str(req, "repo", 1, err);
	base = gitwt_str(req, "base", 0, err);
	check = gitwt_str(req, "check", -1, err);
	if (*err == NULL && !json_is_array(items))
		xasprintf(err, "\"items\" must be an array");
	if (*err != NULL)
		return NULL;
	out = json_array();
	json_array_foreach(items, i, it) {
		if ((r = gittry_one(repo, base, check, json_integer_value(ms) >
		    0 ? (uint64_t)json_integer_value(ms) : TRY_MS, it,
		    err)) == NULL) {
			json_decref(out);
			return NULL;
		}
		json_array_append_new(out, r);
	}
	*rc = 0;
	return json_pack("{s:o}", "items", out);
}
