/*
 * apiattempts.c: spawn with "attempts": N (best-of-N through the front
 * ends): a group of N agents of one request, each in its own git
 * worktree; wait on the group's id runs `try` on them and picks one by
 * engine/bestof.c's rule; close of the group removes its branches.
 */
#include <config.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apiint.h"
#include "bestof.h"
#include "gitrun.h"
#include "log.h"
#include "retire.h"
#include "sup.h"
#include "toolconfig.h"
#include "xmalloc.h"

#define ATT_GIT_MS	120000u		/* prepare and cleanup's deadline */
#define ATT_TRY_MS	600000u		/* try, its checks included */

/* One spawn's attempts; its id names its branches ccw/<id>/<agent>. */
struct api_group {
	TAILQ_ENTRY(api_group)	 entry;
	struct api		*api;
	char			 id[48];
	json_t			*req;		/* the spawn, until spawned */
	json_t			*wt;		/* prepare's reply */
	char			*side, *root, *check;	/* check: NULL none */
	struct strv		 ids;
	struct api_pending	*p;		/* the call its git run answers */
	struct gitrun		*run;
	json_t			*answer;	/* wait's, sent after cleanup */
	int			 closing;	/* freed after its cleanup */
};

/* A string member of the group's prepare reply. */
static const char *
att_s(const struct api_group *g, const char *key)
{
	return json_string_value(json_object_get(g->wt, key));
}

/* The group named id, or NULL. */
static struct api_group *
att_find(struct api *api, const char *id)
{
	struct api_group	*g;

	if (id == NULL)
		return NULL;
	TAILQ_FOREACH(g, &api->groups, entry)
		if (strcmp(g->id, id) == 0)
			return g;
	return NULL;
}

/* A group unlinked and freed (its run cancelled). */
static void
att_free(struct api_group *g)
{
	TAILQ_REMOVE(&g->api->groups, g, entry);
	if (g->run != NULL)
		gitrun_cancel(g->run);
	json_decref(g->req);
	json_decref(g->wt);
	json_decref(g->answer);
	free(g->side);
	free(g->root);
	free(g->check);
	strv_clear(&g->ids);
	free(g);
}

/* Start a git verb for the group; 0, or -1 with the call answered. */
static int
att_git(struct api_group *g, const char *verb, json_t *req, uint64_t ms,
    gitrun_cb cb)
{
	struct sup	*s = g->api->host.sup;
	char		*tag, *err = NULL;

	xasprintf(&tag, "spawn %s: git %s", g->id, verb);
	g->run = gitrun_start(s->base, s->children, verb, req, ms, tag, cb, g,
	    &err);
	json_decref(req);
	free(tag);
	if (g->run != NULL)
		return 0;
	if (g->p != NULL)
		api_fail(g->p, ERR_UNAVAILABLE, "spawn %s: git %s: %s", g->id,
		    verb, err != NULL ? err : "could not start");
	else
		log_warnx("spawn %s: git %s: %s", g->id, verb, err != NULL ?
		    err : "could not start");
	free(err);
	g->p = NULL;
	return -1;
}

/* The worktree every attempt works in (options.worktree). */
static json_t *
att_worktree(const struct api_group *g)
{
	char	*dir, *prefix;
	json_t	*w;

	xasprintf(&dir, "%s/wt", g->side);
	xasprintf(&prefix, "ccw/%s", g->id);
	w = json_pack("{s:s?, s:s?, s:s, s:s, s:[], s:b}", "repo", att_s(g,
	    "repo"), "base", att_s(g, "base"), "dir", dir, "branch_prefix",
	    prefix, "copy", "keep", 1);
	free(dir);
	free(prefix);
	return w;
}

/*
 * The N agents planned and started, each a real spawn (the host's plan
 * counts it against the budgets and the gate); 0, or -1 and why.
 */
static int
att_start(struct api_group *g, char **err)
{
	struct api		*api = g->api;
	struct api_spawn	 sp;
	struct agent_req	 ar;
	struct agent		*a;
	json_int_t		 i, n;

	n = json_integer_value(json_object_get(g->req, "attempts"));
	api_spawn_fill(g->req, &sp);
	sp.cwd = g->root;
	for (i = 0; i < n; i++) {
		memset(&ar, 0, sizeof ar);
		if (api->host.plan(api->host.plan_arg, &sp, &ar, err) != 0)
			return -1;
		json_object_set_new(ar.options, "worktree", att_worktree(g));
		a = agent_spawn(api->host.sup, &ar);
		json_decref(ar.options);
		strv_push(&g->ids, a->id);
	}
	return 0;
}

/* The agents' ids as a JSON list. */
static json_t *
att_ids(const struct api_group *g)
{
	json_t	*l = json_array();
	size_t	 i;

	for (i = 0; i < g->ids.n; i++)
		json_array_append_new(l, json_string(g->ids.v[i]));
	return l;
}

/* prepare answered: refused outside git, else the N agents started. */
static void
att_prepared(int rc, const json_t *reply, const char *err, void *arg)
{
	struct api_group	*g = arg;
	struct api_pending	*p = g->p;
	char			*why = NULL;

	g->run = NULL;
	g->p = NULL;
	if (rc != 0 || !json_is_object(reply)) {
		api_fail(p, ERR_UNAVAILABLE, "spawn: git prepare: %s",
		    err != NULL ? err : "no reply");
		att_free(g);
	} else if (strcmp(json_string_value(json_object_get(reply,
	    "isolation")) ? json_string_value(json_object_get(reply,
	    "isolation")) : "", "worktree") != 0) {
		api_fail(p, ERR_INVALID, "spawn: \"attempts\" above 1 needs a "
		    "git repository for the attempts' worktrees: %s: %s",
		    g->root, json_string_value(json_object_get(reply,
		    "reason")) ? json_string_value(json_object_get(reply,
		    "reason")) : "no isolation");
		att_free(g);
	} else {
		g->wt = json_deep_copy(reply);
		if (att_start(g, &why) != 0)
			api_fail(p, ERR_INVALID, "spawn: attempt %zu refused: "
			    "%s (close %s to remove its branches)",
			    g->ids.n + 1, why != NULL ? why : "?", g->id);
		else
			api_reply(p, json_pack("{s:b, s:s, s:s, s:o}", "ok", 1,
			    "agent_id", g->ids.v[0], "group", g->id,
			    "attempts", att_ids(g)));
		free(why);
		json_decref(g->req);
		g->req = NULL;
	}
}

/*
 * spawn with "attempts" N > 1: a group named after this front end's
 * process and count, its loop-like side directory under the state
 * directory; prepare (ccw-worker --git) finds the repository and base
 * (the checkout's tracked changes included: from_worktree), then the N
 * agents start.  Answered once they did (or why not).
 */
void
api_attempts_spawn(struct api_pending *p, const json_t *req)
{
	struct api		*api = p->api;
	struct api_group	*g;
	const char		*sd = api->host.state_dir;
	char			 dir[PATH_MAX], cwd[PATH_MAX];

	if (json_string_value(json_object_get(req, "cwd")) != NULL) {
		if (api_spawn_cwd(p, json_string_value(json_object_get(req,
		    "cwd")), dir) != 0)
			return;
	} else if (api->host.root == NULL || realpath(api->host.root, dir) ==
	    NULL) {
		api_fail(p, ERR_UNAVAILABLE, "spawn: \"attempts\" needs the "
		    "project's directory (give \"cwd\")");
		return;
	}
	if (sd == NULL || getcwd(cwd, sizeof cwd) == NULL) {
		api_fail(p, ERR_UNAVAILABLE, "spawn: \"attempts\" needs a "
		    "state directory for its worktrees");
		return;
	}
	g = xcalloc(1, sizeof *g);
	g->api = api;
	snprintf(g->id, sizeof g->id, "spawn-%ld-%u", (long)getpid(),
	    ++api->ngroups);
	g->req = json_deep_copy(req);
	g->root = xstrdup(dir);
	if (json_string_value(json_object_get(req, "check")) != NULL)
		g->check = xstrdup(json_string_value(json_object_get(req,
		    "check")));
	xasprintf(&g->side, "%s%s%s/spawn/%s", *sd == '/' ? "" : cwd,
	    *sd == '/' ? "" : "/", sd, g->id);
	g->p = p;
	TAILQ_INSERT_TAIL(&api->groups, g, entry);
	if (att_git(g, "prepare", json_pack("{s:s, s:s, s:s, s:b, s:b}",
	    "root", g->root, "side", g->side, "loop", g->id, "start", 0,
	    "from_worktree", 1), ATT_GIT_MS,
	    att_prepared) != 0)
		att_free(g);
}

/* An agent's report, live or retired (NULL: neither). */
static json_t *
att_report(const struct api_group *g, const char *id)
{
	struct agent	*a = agent_find(g->api->host.sup, id);

	return a != NULL ? report_agent(a) : retire_read(g->api->host.sup, id);
}

/* The worktrees' directories removed (branches kept): wait answered. */
static void
att_cleaned(int rc, const json_t *reply, const char *err, void *arg)
{
	struct api_group	*g = arg;
	struct api_pending	*p = g->p;

	(void)reply;
	g->run = NULL;
	g->p = NULL;
	if (rc != 0)
		json_object_set_new(g->answer, "cleanup_error", json_string(
		    err != NULL ? err : "failed"));
	api_reply(p, g->answer);
	g->answer = NULL;
}

/*
 * try answered: every attempt's report and try's record judged by the
 * one rule (bestof.c); the answer is the picked agent's result with all
 * N recorded, sent once the worktree directories are gone.
 */
static void
att_tried(int rc, const json_t *reply, const char *err, void *arg)
{
	struct api_group	*g = arg;
	const json_t		*res[CONFIG_MAX_ATTEMPTS];
	json_t			*rep[CONFIG_MAX_ATTEMPTS], *list, *e;
	int			 ok[CONFIG_MAX_ATTEMPTS];
	size_t			 i, w, npass;

	g->run = NULL;
	if (rc != 0 || !json_is_object(reply)) {
		api_fail(g->p, ERR_UNAVAILABLE, "wait: git try: %s",
		    err != NULL ? err : "no reply");
		g->p = NULL;
		return;
	}
	for (i = 0; i < g->ids.n; i++) {
		if ((rep[i] = att_report(g, g->ids.v[i])) == NULL)
			rep[i] = json_pack("{s:s, s:s}", "agent_id",
			    g->ids.v[i], "status", "failed");
		res[i] = rep[i];
		ok[i] = strcmp(json_string_value(json_object_get(rep[i],
		    "status")) ? json_string_value(json_object_get(rep[i],
		    "status")) : "failed", "failed") != 0;
	}
	w = bestof_pick(res, ok, g->ids.n, reply, &list, &npass);
	json_array_foreach(list, i, e)
		if (json_object_get(e, "agent") == NULL)
			json_object_set_new(e, "agent", json_string(
			    g->ids.v[i]));
	g->answer = json_pack("{s:b, s:b, s:s, s:s, s:O, s:O?, s:I, s:o}",
	    "ok", 1, "timed_out", 0, "group", g->id, "picked", g->ids.v[w],
	    "result", rep[w], "branch", json_object_get(json_array_get(list,
	    w), "branch"), "passed", (json_int_t)npass, "attempts", list);
	for (i = 0; i < g->ids.n; i++)
		json_decref(rep[i]);
	if (att_git(g, "cleanup", json_pack("{s:s?, s:s, s:s?, s:b}", "repo",
	    att_s(g, "repo"), "side", g->side, "loop_branch", att_s(g,
	    "loop_branch"), "remove_branches", 0), ATT_GIT_MS, att_cleaned) !=
	    0) {
		json_decref(g->answer);
		g->answer = NULL;
	}
}

/* The group's agents all ended (or the wait timed out). */
static void
att_waited(json_t *status, int timed_out, void *arg)
{
	struct api_group	*g = arg;
	json_t			*items = json_array();
	char			*br, *path;
	size_t			 i;

	if (timed_out) {
		api_reply(g->p, json_pack("{s:b, s:O, s:b, s:s}", "ok", 1,
		    "status", status, "timed_out", 1, "group", g->id));
		g->p = NULL;
		json_decref(items);
		return;
	}
	for (i = 0; i < g->ids.n; i++) {
		xasprintf(&br, "ccw/%s/%s", g->id, g->ids.v[i]);
		xasprintf(&path, "%s/wt/%s", g->side, g->ids.v[i]);
		json_array_append_new(items, json_pack("{s:s, s:s, s:s}",
		    "agent", g->ids.v[i], "branch", br, "path", path));
		free(br);
		free(path);
	}
	(void)att_git(g, "try", json_pack("{s:s?, s:s?, s:s?, s:I, s:o}",
	    "repo", att_s(g, "repo"), "base", att_s(g, "base"), "check",
	    g->check, "check_ms", (json_int_t)ATT_TRY_MS, "items", items),
	    ATT_TRY_MS + ATT_GIT_MS, att_tried);
}

/*
 * wait on a group's id (alone in "targets"): all N waited for, then
 * tried and picked.  Returns 0 when the targets are not a group's.
 */
int
api_attempts_wait(struct api_pending *p, const json_t *req, uint64_t ms)
{
	const json_t		*t = json_object_get(req, "targets");
	struct api_group	*g;
	char			*err = NULL;
	enum err_code		 code;

	if (json_array_size(t) != 1 || (g = att_find(p->api,
	    json_string_value(json_array_get(t, 0)))) == NULL)
		return 0;
	if (g->p != NULL || g->ids.n == 0 || g->closing) {
		api_fail(p, ERR_CONFLICT, "wait: group %s is busy, not "
		    "started or closing", g->id);
		return 1;
	}
	g->p = p;
	if ((code = verbs_wait(p->api->verbs, g->ids.v, g->ids.n, ms, 1,
	    att_waited, g, &err)) != ERR_NONE) {
		g->p = NULL;
		api_fail(p, code, "%s", err);
		free(err);
	}
	return 1;
}

/*
 * The side directory's now empty folders (wt, the group's, spawn/ when
 * no other group is left in it) removed: a closed group leaves nothing.
 */
static void
att_rmdirs(const char *side)
{
	char	*d, *slash;

	xasprintf(&d, "%s/wt", side);
	(void)rmdir(d);
	(void)rmdir(side);
	if ((slash = strrchr(d, '/')) != NULL) {
		*slash = '\0';
		if ((slash = strrchr(d, '/')) != NULL) {
			*slash = '\0';
			(void)rmdir(d);
		}
	}
	free(d);
}

/* close's clean-up ended: the group's branches are gone. */
static void
att_removed(int rc, const json_t *reply, const char *err, void *arg)
{
	struct api_group	*g = arg;
	struct api_pending	*p = g->p;

	struct api		*api = g->api;

	g->run = NULL;
	g->p = NULL;
	if (rc == 0)
		att_rmdirs(g->side);
	if (p == NULL) {	/* the session's end: nobody asked */
		if (rc != 0)
			log_warnx("spawn %s: git cleanup: %s", g->id,
			    err != NULL ? err : "failed");
	} else if (rc != 0)
		api_fail(p, ERR_UNAVAILABLE, "close %s: git cleanup: %s",
		    g->id, err != NULL ? err : "failed");
	else
		api_reply(p, json_pack("{s:b, s:s, s:s, s:O?}", "ok", 1,
		    "previous_status", "closed", "group", g->id, "removed",
		    json_object_get(reply, "branches")));
	att_free(g);
	if (api->host.settled != NULL)
		api->host.settled(api->host.settled_arg);
}

/*
 * A group's end: its agents still open closed, then its worktrees and
 * every branch ccw/<group>/... removed (g->p answered, if any).
 */
static void
att_close(struct api_group *g)
{
	struct agent	*a;
	char		*err = NULL;
	size_t		 i;

	for (i = 0; i < g->ids.n; i++)
		if ((a = agent_find(g->api->host.sup, g->ids.v[i])) != NULL &&
		    !agent_final(a) && agent_close(a, g->api->host.grace_ms,
		    &err) != 0) {
			free(err);
			err = NULL;
		}
	g->closing = 1;
	if (att_git(g, "cleanup", json_pack("{s:s?, s:s, s:s?, s:b}", "repo",
	    att_s(g, "repo"), "side", g->side, "loop_branch", att_s(g,
	    "loop_branch"), "remove_branches", 1), ATT_GIT_MS, att_removed) !=
	    0)
		att_free(g);
}

/*
 * close on a group's id: its agents still open closed, its worktrees
 * and every branch ccw/<group>/... removed.  0: not a group's id.
 */
int
api_attempts_close(struct api_pending *p, const json_t *req)
{
	struct api_group	*g;

	if ((g = att_find(p->api, json_string_value(json_object_get(req,
	    "target")))) == NULL)
		return 0;
	if (g->p != NULL || g->closing) {
		api_fail(p, ERR_CONFLICT, "close: group %s is busy", g->id);
		return 1;
	}
	g->p = p;
	att_close(g);
	return 1;
}

/* A group's git run is in flight (the front end waits for it). */
int
api_attempts_busy(const struct api *api)
{
	const struct api_group	*g;

	TAILQ_FOREACH(g, &api->groups, entry)
		if (g->run != NULL)
			return 1;
	return 0;
}

/*
 * The session ends (end of input, a signal): every group not busy is
 * closed as its close would (branches removed); one waited on or closing
 * ends as it goes.  The host is told when each clean-up ended.
 */
void
api_attempts_end(struct api *api)
{
	struct api_group	*g, *next;

	for (g = TAILQ_FIRST(&api->groups); g != NULL; g = next) {
		next = TAILQ_NEXT(g, entry);
		if (g->p == NULL && g->run == NULL && !g->closing)
			att_close(g);
	}
}

/* Every group forgotten, runs killed (the host is going). */
void
api_attempts_free(struct api *api)
{
	while (!TAILQ_EMPTY(&api->groups))
		att_free(TAILQ_FIRST(&api->groups));
}
