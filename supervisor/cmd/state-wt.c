/*
 * state-wt.c: the git worktrees a loop keeps (issue 27), for `state
 * show`: `git worktree list --porcelain` in the loop's repository,
 * filtered to the loop's <side>/wt (skill_state.worktree read by
 * wtclean_where), read without a shell.
 */
#include <config.h>

#include <sys/wait.h>

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state-wt.h"
#include "wtclean.h"
#include "xmalloc.h"

extern char	**environ;

/* git's porcelain output, or NULL when git could not run. */
static char *
state_wt_porcelain(const char *repo)
{
	char		*argv[] = { (char *)"git", (char *)"-C", (char *)repo,
			    (char *)"worktree", (char *)"list",
			    (char *)"--porcelain", NULL };
	posix_spawn_file_actions_t fa;
	char		*out = NULL, buf[4096];
	size_t		 len = 0;
	ssize_t		 n;
	int		 p[2], st;
	pid_t		 pid;

	if (pipe(p) != 0)
		return NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", 0, 0);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	if (posix_spawnp(&pid, "git", &fa, NULL, argv, environ) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	while (pid > 0 && (n = read(p[0], buf, sizeof buf)) > 0) {
		out = xreallocarray(out, len + (size_t)n + 1, 1);
		memcpy(out + len, buf, (size_t)n);
		len += (size_t)n;
		out[len] = '\0';
	}
	close(p[0]);
	if (pid > 0)
		(void)waitpid(pid, &st, 0);
	return out;
}

/*
 * The loop's worktrees (skill_state.worktree.side/wt/...): a list of
 * {path, branch, head}; NULL when the loop is not isolated.
 */
json_t *
state_worktrees(const json_t *st)
{
	const char	*repo, *side;
	json_t		*list, *cur = NULL;
	char		*out, *line, *save = NULL, *pre;

	wtclean_where(st, &repo, &side, NULL);
	if (repo == NULL || side == NULL)
		return NULL;
	list = json_array();
	if ((out = state_wt_porcelain(repo)) == NULL)
		return list;
	xasprintf(&pre, "%s/wt/", side);
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "worktree ", 9) == 0) {
			cur = strncmp(line + 9, pre, strlen(pre)) == 0 ?
			    json_pack("{s:s}", "path", line + 9) : NULL;
			if (cur != NULL)
				json_array_append_new(list, cur);
		} else if (cur != NULL && strncmp(line, "HEAD ", 5) == 0)
			json_object_set_new(cur, "head", json_string(line + 5));
		else if (cur != NULL && strncmp(line, "branch refs/heads/",
		    18) == 0)
			json_object_set_new(cur, "branch",
			    json_string(line + 18));
	}
	free(pre);
	free(out);
	return list;
}
