/*
 * wtclean.c: what a deleted loop's isolation left (issue 27): the
 * cleanup request {repo, side, loop_branch, remove_branches} from its
 * state's skill_state.worktree, and the log line that says how it went.
 * A live loop cleans up itself (isolate.c); this is for a file deleted
 * with no loop behind it.
 */
#include <config.h>

#include <string.h>

#include "log.h"
#include "wtclean.h"

/*
 * Where a loop's isolation lives, as isolate.c recorded it in
 * skill_state.worktree: its repository, its side directory and its
 * branch (each NULL when absent or not a string; any out-pointer may be
 * NULL).  The one reader of that record for the delete's cleanup and
 * `state show`'s worktree list, so both read the same fields.
 */
void
wtclean_where(const json_t *state, const char **repo, const char **side,
    const char **loop_branch)
{
	const json_t	*w = json_object_get(json_object_get(state,
			    "skill_state"), "worktree");

	if (repo != NULL)
		*repo = json_string_value(json_object_get(w, "repo"));
	if (side != NULL)
		*side = json_string_value(json_object_get(w, "side"));
	if (loop_branch != NULL)
		*loop_branch = json_string_value(json_object_get(w,
		    "loop_branch"));
}

/*
 * The cleanup of a loop's worktrees and every branch under ccw/<loop>, made
 * from the state as read before its file goes; NULL when the loop was
 * never isolated (no skill_state.worktree, or one without its repo,
 * side or branch): then the delete is what it always was.
 */
json_t *
wtclean_request(const json_t *state)
{
	const char	*repo, *side, *br;

	wtclean_where(state, &repo, &side, &br);
	if (repo == NULL || side == NULL || br == NULL || *repo != '/' ||
	    *side != '/' || strncmp(br, "ccw/", 4) != 0)
		return NULL;
	return json_pack("{s:s, s:s, s:s, s:b}", "repo", repo, "side", side,
	    "loop_branch", br, "remove_branches", 1);
}

/*
 * A cleanup's end in the log: what went, or why nothing did.  A failed
 * one never fails the delete (the loop's files are gone already), so
 * this line is all the user hears of it.
 */
void
wtclean_said(const char *id, int rc, const json_t *reply, const char *err)
{
	if (rc != 0) {
		log_warnx("loop %s deleted, but its worktrees and branches "
		    "were not removed: %s", id, err != NULL ? err : "failed");
		return;
	}
	log_info("loop %s deleted: %zu worktrees and %zu branches removed",
	    id, json_array_size(json_object_get(reply, "removed")),
	    json_array_size(json_object_get(reply, "branches")));
}
