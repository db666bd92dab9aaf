/*
 * configgit.c: the configuration's keys for isolation and the merge
 * queue (issue 27), checked as strictly as the rest of config.c:
 *
 *	"isolation": "worktree" | "none",
 *	"worktree": { "copy": [".env"], "setup": "npm ci",
 *	              "setup_ms": 600000 },
 *	"merge": { "strategy": "merge" | "rebase", "check": "make check",
 *	           "check_ms": 600000, "max_resolve": 2 }
 *
 * isolation	"worktree" (the default in a git repository): each writing
 *		worker of a parallel step in its own git worktree and
 *		branch, merged after the step; "none": one shared checkout.
 * worktree.copy	files copied from the project into each worktree
 *		(relative paths, no ".."); missing ones are skipped.
 * worktree.setup	a command run with sh -c in each new worktree,
 *		under setup_ms (default 600000); failing fails the worker.
 * merge.strategy	"merge" (git merge --no-edit, the default) or
 *		"rebase" (the branch rebased, then merged --ff-only).
 * merge.check	run with sh -c in the loop's worktree after each merge;
 *		failing undoes that merge.  Default: the validate role's
 *		command when its tool is bash; null: none.
 * merge.check_ms	its deadline (default 600000).
 * merge.max_resolve	resolve steps after a conflict before the loop
 *		fails (default 2; 0: a conflict fails the loop).
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolconfig.h"
#include "xmalloc.h"

static int	config_git_error(char **, const char *, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

/* A message naming the file first, as config.c's do. */
static int
config_git_error(char **err, const char *file, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg = NULL;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	free(*err);
	xasprintf(err, "%s: %s", file, msg != NULL ? msg : "error");
	free(msg);
	return -1;
}

/* The defaults: worktrees where git is, merge, the check found later. */
void
config_git_defaults(struct git_cfg *g)
{
	memset(g, 0, sizeof *g);
	g->setup_ms = CONFIG_GIT_SETUP_MS;
	g->check_ms = CONFIG_GIT_CHECK_MS;
	g->max_resolve = CONFIG_GIT_MAX_RESOLVE;
}

/* Everything owned, freed. */
void
config_git_free(struct git_cfg *g)
{
	free(g->isolation);
	json_decref(g->copy);
	free(g->setup);
	free(g->strategy);
	free(g->check);
	memset(g, 0, sizeof *g);
}

/*
 * A string key that must be one of WORDS (NULL: any non-empty string):
 * 1 set, 0 absent or null (*dst cleared when null), -1 wrong.
 */
static int
config_git_str(const char *file, json_t *obj, const char *where,
    const char *key, const char *const *words, char **dst, char **err)
{
	json_t		*v = json_object_get(obj, key);
	const char	*s;
	size_t		 i;

	if (v == NULL)
		return 0;
	if (json_is_null(v)) {
		free(*dst);
		*dst = NULL;
		return 0;
	}
	s = json_string_value(v);
	if (s == NULL || *s == '\0' || strlen(s) != json_string_length(v))
		return config_git_error(err, file, "%s%s: expected %s", where,
		    key, words != NULL ? "a string" : "a non-empty string or "
		    "null");
	for (i = 0; words != NULL && words[i] != NULL; i++)
		if (strcmp(s, words[i]) == 0)
			break;
	if (words != NULL && words[i] == NULL)
		return config_git_error(err, file, "%s%s: expected \"%s\" or "
		    "\"%s\"", where, key, words[0], words[1]);
	free(*dst);
	*dst = xstrdup(s);
	return 1;
}

/* A non-negative integer key. */
static int
config_git_num(const char *file, json_t *obj, const char *where,
    const char *key, uint64_t *dst, char **err)
{
	json_t	*v = json_object_get(obj, key);

	if (v == NULL)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return config_git_error(err, file, "%s%s: expected a "
		    "non-negative integer", where, key);
	*dst = (uint64_t)json_integer_value(v);
	return 0;
}

/* Only the keys we know: a typo must not lose a setting. */
static int
config_git_keys(const char *file, json_t *obj, const char *where,
    const char *const *known, char **err)
{
	const char	*key;
	json_t		*v;
	size_t		 i;

	if (!json_is_object(obj))
		return config_git_error(err, file, "%s: expected an object",
		    where);
	json_object_foreach(obj, key, v) {
		for (i = 0; known[i] != NULL; i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (known[i] == NULL)
			return config_git_error(err, file, "%s.%s: unknown key",
			    where, key);
	}
	return 0;
}

/* worktree.copy: relative paths without "..", as the worker demands. */
static int
config_git_copy(const char *file, json_t *w, struct git_cfg *g, char **err)
{
	json_t		*v = json_object_get(w, "copy"), *e;
	const char	*s;
	size_t		 i;

	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return config_git_error(err, file, "worktree.copy: expected "
		    "a list of relative paths");
	json_array_foreach(v, i, e) {
		s = json_string_value(e);
		if (s == NULL || *s == '\0' || *s == '/' ||
		    strcmp(s, "..") == 0 || strncmp(s, "../", 3) == 0 ||
		    strstr(s, "/../") != NULL || (strlen(s) >= 3 &&
		    strcmp(s + strlen(s) - 3, "/..") == 0))
			return config_git_error(err, file, "worktree.copy[%zu]: "
			    "expected a relative path without \"..\"", i);
	}
	json_decref(g->copy);
	g->copy = json_incref(v);
	return 0;
}

/* The file's isolation, worktree and merge keys over the defaults. */
int
config_git_apply(const char *file, json_t *root, struct git_cfg *g,
    char **err)
{
	static const char *const iso[] = { "worktree", "none", NULL };
	static const char *const strat[] = { "merge", "rebase", NULL };
	static const char *const wkeys[] = { "copy", "setup", "setup_ms",
	    NULL };
	static const char *const mkeys[] = { "strategy", "check", "check_ms",
	    "max_resolve", NULL };
	json_t	*w = json_object_get(root, "worktree");
	json_t	*m = json_object_get(root, "merge");

	if (config_git_str(file, root, "", "isolation", iso, &g->isolation,
	    err) < 0)
		return -1;
	if (w != NULL && (config_git_keys(file, w, "worktree", wkeys,
	    err) != 0 || config_git_copy(file, w, g, err) != 0 ||
	    config_git_str(file, w, "worktree.", "setup", NULL, &g->setup,
	    err) < 0 || config_git_num(file, w, "worktree.", "setup_ms",
	    &g->setup_ms, err) != 0))
		return -1;
	if (m == NULL)
		return 0;
	if (config_git_keys(file, m, "merge", mkeys, err) != 0 ||
	    config_git_str(file, m, "merge.", "strategy", strat, &g->strategy,
	    err) < 0 || config_git_str(file, m, "merge.", "check", NULL,
	    &g->check, err) < 0 || config_git_num(file, m, "merge.",
	    "check_ms", &g->check_ms, err) != 0 || config_git_num(file, m,
	    "merge.", "max_resolve", &g->max_resolve, err) != 0)
		return -1;
	g->check_set |= json_object_get(m, "check") != NULL;
	return 0;
}
