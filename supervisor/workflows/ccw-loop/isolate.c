/*
 * isolate.c: a parallel step's writers each in a git worktree of their
 * own and the merge queue after the step (issue 27): prepare before the
 * step, options.worktree for each writer (cwd the loop's worktree for a
 * reader), merge in role order after it, the records in skill_state
 * (worktree, parallel_results), the resolve step's bookkeeping, land and
 * clean-up at the end.  All git work is `ccw-worker --git VERB`
 * (gitrun.c); the run engine polls these calls from its kick.
 */
#include <config.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapter.h"
#include "ccw-loop.h"
#include "gitrun.h"
#include "isolate.h"
#include "launch.h"
#include "log.h"
#include "loopint.h"
#include "plan.h"
#include "sup.h"
#include "toolconfig.h"
#include "xmalloc.h"

#define ISO_PREPARE_MS	120000		/* prepare, cleanup, land */
#define ISO_MERGE_MS	120000		/* a merge's git work, per item */

struct isolate {
	struct isolate_cfg	 cfg;
	struct gitrun		*run;		/* in flight */
	char			*side;		/* <state_dir>/<id>, absolute */
	int			 none;		/* not isolated: never again */
	int			 prepared;	/* this step's prepare done */
	int			 merged;	/* this step's merge done */
	int			 finished;	/* land and clean-up done */
	int			 landed;
	char			*err;		/* a run that failed: why */
	json_t			*wt;		/* the prepare's reply, kept */
	json_t			*reply;		/* the step's merge's reply */
	json_t			*landing;	/* land's reply */
	json_t			*tried;		/* best-of-N's try reply */
	json_t			*remote;	/* roles run behind a launcher */
	struct isolate_item	*items;		/* the merge's, copied */
	size_t			 nitems;
};

/* The loop's branch, or that of its agent. */
static char *
isolate_branch(const struct isolate *iso, const char *agent)
{
	char	*b;

	if (agent == NULL)
		xasprintf(&b, "ccw/%s", iso->cfg.id);
	else
		xasprintf(&b, "ccw/%s/%s", iso->cfg.id, agent);
	return b;
}

/* A member of the kept prepare reply. */
static const char *
isolate_s(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* An event on the loop's stream (the cfg's hook takes it). */
static void
isolate_event(struct isolate *iso, const char *name, json_t *o)
{
	iso->cfg.event(iso->cfg.arg, name, o);
}

/* The isolate of one loop; nothing runs until a step asks. */
struct isolate *
isolate_new(const struct isolate_cfg *cfg)
{
	struct isolate	*iso = xcalloc(1, sizeof *iso);
	char		 abs[PATH_MAX];

	iso->cfg = *cfg;
	if (realpath(cfg->state_dir, abs) != NULL)
		xasprintf(&iso->side, "%s/%s", abs, cfg->id);
	else
		xasprintf(&iso->side, "%s/%s", cfg->state_dir, cfg->id);
	return iso;
}

/* A git run in flight is killed (a pause, a stop): the next one recovers. */
void
isolate_cancel(struct isolate *iso)
{
	if (iso == NULL || iso->run == NULL)
		return;
	log_info("loop %s: git run killed", iso->cfg.id);
	gitrun_cancel(iso->run);
	iso->run = NULL;
}

/* Everything, a run in flight killed. */
void
isolate_free(struct isolate *iso)
{
	if (iso == NULL)
		return;
	isolate_cancel(iso);
	free(iso->side);
	free(iso->err);
	free(iso->items);
	json_decref(iso->wt);
	json_decref(iso->reply);
	json_decref(iso->landing);
	json_decref(iso->tried);
	json_decref(iso->remote);
	free(iso);
}

/* Start VERB; a failure to start is a failed run. */
static void
isolate_git(struct isolate *iso, const char *verb, json_t *req,
    uint64_t ms, gitrun_cb cb)
{
	char	*tag, *err = NULL;

	xasprintf(&tag, "loop %s: git %s", iso->cfg.id, verb);
	iso->run = gitrun_start(iso->cfg.base, iso->cfg.children, verb, req,
	    ms, tag, cb, iso, &err);
	json_decref(req);
	free(tag);
	if (iso->run == NULL) {
		free(iso->err);
		iso->err = err;
	}
}

/* Whether a writer is to be isolated at all (config, --isolation). */
static int
isolate_wanted(const struct isolate *iso)
{
	const char	*i = iso->cfg.over != NULL &&
			    iso->cfg.over->isolation != NULL ?
			    iso->cfg.over->isolation :
			    iso->cfg.config->git.isolation;

	return i == NULL || strcmp(i, "none") != 0;
}

/* prepare ended: the loop worktree ready, or not a git repository. */
static void
isolate_prepared(int rc, const json_t *reply, const char *err, void *arg)
{
	struct isolate	*iso = arg;
	const char	*how = isolate_s(reply, "isolation");

	iso->run = NULL;
	if (rc != 0) {
		free(iso->err);
		iso->err = xstrdup(err);
	} else if (how == NULL || strcmp(how, "worktree") != 0) {
		log_info("loop %s: no worktrees: %s", iso->cfg.id,
		    isolate_s(reply, "reason") != NULL ? isolate_s(reply,
		    "reason") : "isolation none");
		iso->none = 1;
	} else {
		json_decref(iso->wt);
		iso->wt = json_deep_copy(reply);
		iso->prepared = 1;
		if (isolate_s(reply, "warning") != NULL)
			log_warnx("loop %s: %s", iso->cfg.id,
			    isolate_s(reply, "warning"));
	}
	iso->cfg.kick(iso->cfg.arg);
}

/*
 * The prepare's reply into skill_state.worktree, the start's branch and
 * head kept from the loop's first prepare (later ones see the user's
 * checkout as it is then).
 */
static void
isolate_keep(struct isolate *iso, json_t *ss)
{
	json_t	*old = json_object_get(ss, "worktree"), *w;

	w = json_pack("{s:s, s:O?, s:O?, s:O?, s:O?, s:O?, s:s}",
	    "isolation", "worktree", "repo", json_object_get(iso->wt, "repo"),
	    "loop_branch", json_object_get(iso->wt, "loop_branch"),
	    "loop_path", json_object_get(iso->wt, "loop_path"),
	    "base", json_object_get(iso->wt, "base"),
	    "start_head", json_object_get(json_is_object(old) ? old : iso->wt,
	    "start_head"), "side", iso->side);
	json_object_set(w, "start_branch", json_object_get(
	    json_is_object(old) ? old : iso->wt, "start_branch") != NULL ?
	    json_object_get(json_is_object(old) ? old : iso->wt,
	    "start_branch") : json_null());
	if (json_is_object(old) && json_object_get(old, "resolve") != NULL)
		json_object_set(w, "resolve", json_object_get(old, "resolve"));
	json_object_set_new(ss, "worktree", w);
}

/*
 * A git run that failed has its why handed over once (failed), one in
 * flight is waited for (busy); else ready to start the next.
 */
static enum isolate_st
isolate_inflight(struct isolate *iso, char **why)
{
	if (iso->err != NULL) {
		*why = iso->err;
		iso->err = NULL;
		return ISO_FAILED;
	}
	return iso->run != NULL ? ISO_BUSY : ISO_READY;
}

/*
 * Before a parallel step (or a resolve step): the loop's branch and
 * worktree made or adopted, what an interrupted step left pruned.
 * start: the loop's first prepare (a dirty tree refused).
 */
enum isolate_st
isolate_prepare(struct isolate *iso, json_t *ss, char **why)
{
	const json_t	*old = json_object_get(ss, "worktree");
	json_t		*req;
	enum isolate_st	 st;

	if (iso->none || (!iso->prepared && iso->run == NULL &&
	    iso->err == NULL && !isolate_wanted(iso))) {
		iso->none = 1;
		return ISO_READY;
	}
	if (iso->prepared) {
		isolate_keep(iso, ss);
		return ISO_READY;
	}
	if ((st = isolate_inflight(iso, why)) != ISO_READY)
		return st;
	req = json_pack("{s:s, s:s, s:s, s:b, s:b, s:[]}", "root",
	    iso->cfg.root, "side", iso->side, "loop", iso->cfg.id,
	    "from_worktree", iso->cfg.over != NULL &&
	    iso->cfg.over->from_worktree, "start", !json_is_object(old),
	    "keep");
	isolate_git(iso, "prepare", req, ISO_PREPARE_MS, isolate_prepared);
	return iso->run != NULL ? ISO_BUSY : isolate_prepare(iso, ss, why);
}

/* The step was taken (or abandoned): the next prepares and merges again. */
void
isolate_step_end(struct isolate *iso)
{
	iso->prepared = iso->merged = 0;
	json_decref(iso->reply);
	iso->reply = NULL;
	json_decref(iso->tried);
	iso->tried = NULL;
	free(iso->items);
	iso->items = NULL;
	iso->nitems = 0;
}

/* Whether this step's workers are isolated. */
int
isolate_active(const struct isolate *iso)
{
	return iso != NULL && iso->prepared && !iso->none;
}

/* Whether a role only reads (its permission in the configuration). */
static int
isolate_reads(const struct isolate *iso, const char *role)
{
	const struct config	*c = iso->cfg.config;
	int			 ri = config_role_index(c, role);

	return ri >= 0 && c->roles[ri].permission != NULL &&
	    strcmp(c->roles[ri].permission, "read-only") == 0;
}

/*
 * Whether a role's worker runs behind a launcher (ssh, srun: launch.c):
 * on another host, where the loop's worktrees (local paths) are not.
 * Such a role runs unisolated, as with isolation none; the loop says so
 * once for the role (an isolation_skipped event and a warning).
 */
static int
isolate_remote(struct isolate *iso, const char *role,
    const struct agent_req *req)
{
	char	*how;

	if (req->launch == NULL || req->launch->argv.n == 0)
		return 0;
	if (iso->remote == NULL)
		iso->remote = json_object();
	if (json_object_get(iso->remote, role) != NULL)
		return 1;
	json_object_set_new(iso->remote, role, json_true());
	how = launch_describe(req->launch);
	log_warnx("loop %s: role %s runs behind a launcher (%s): not "
	    "isolated, it works in the project itself", iso->cfg.id, role,
	    how);
	isolate_event(iso, "isolation_skipped", json_pack("{s:s, s:s, s:s}",
	    "role", role, "launcher", how, "reason", "remote launcher: "
	    "worktrees are local"));
	free(how);
	return 1;
}

/* Whether a role was left unisolated for its launcher (isolate_remote). */
static int
isolate_is_remote(const struct isolate *iso, const char *role)
{
	return role != NULL && json_object_get(iso->remote, role) != NULL;
}

/*
 * A reader outside the parallel step (complete) of a loop whose work is
 * merged on its branch: it reads the loop's worktree, where that work
 * is, not the user's checkout.
 */
void
isolate_reader(struct isolate *iso, const json_t *ss, const char *role,
    struct agent_req *req)
{
	const char	*p = isolate_s(json_object_get(ss, "worktree"),
			    "loop_path");

	if (p != NULL && !iso->none && isolate_reads(iso, role) &&
	    access(p, F_OK) == 0 && !isolate_remote(iso, role, req))
		req->cwd = p;
}

/*
 * A worker of an isolated step: a writer (a role not read-only) gets
 * options.worktree, made from the loop branch's head (with merge_from's
 * merge left in it: the resolve step); a reader works in the loop's
 * worktree.
 */
void
isolate_request(struct isolate *iso, const char *role, struct agent_req *req,
    const char *merge_from)
{
	const struct git_cfg	*g = &iso->cfg.config->git;
	json_t			*w;
	char			*dir, *prefix;

	if (!isolate_active(iso) || isolate_remote(iso, role, req))
		return;
	if (isolate_reads(iso, role)) {
		req->cwd = isolate_s(iso->wt, "loop_path");
		return;
	}
	xasprintf(&dir, "%s/wt", iso->side);
	prefix = isolate_branch(iso, NULL);
	w = json_pack("{s:O?, s:O?, s:s, s:s, s:O, s:s?, s:I, s:b, s:s?}",
	    "repo", json_object_get(iso->wt, "repo"), "base",
	    json_object_get(iso->wt, "base"), "dir", dir, "branch_prefix",
	    prefix, "copy", g->copy != NULL ? g->copy : json_array(),
	    "setup", g->setup, "setup_ms", (json_int_t)g->setup_ms,
	    "keep", 0, "merge_from", merge_from);
	if (g->copy == NULL)	/* the packed empty list: ours to release */
		json_decref(json_object_get(w, "copy"));
	json_object_set_new(req->options, "worktree", w);
	free(dir);
	free(prefix);
}

/*
 * The merge's check: merge.check, else the validate role's command when
 * it is a command tool's (the project's tests), else none.
 */
static const char *
isolate_check(const struct isolate *iso)
{
	const struct config	*c = iso->cfg.config;
	const struct plan_overrides *o = iso->cfg.over;
	int			 ri;
	const char		*tool, *cmd;

	if (c->git.check_set)
		return c->git.check;
	if ((ri = config_role_index(c, loop_role_name(LOOP_VALIDATE))) < 0)
		return NULL;
	tool = o != NULL && o->tool != NULL ? o->tool : c->roles[ri].tool !=
	    NULL ? c->roles[ri].tool : c->default_tool;
	cmd = o != NULL && o->command != NULL ? o->command :
	    c->roles[ri].command;
	return tool != NULL && !adapter_is_agent(tool) ? cmd : NULL;
}

/* An item's list of paths (files_changed) from its name-status list. */
static json_t *
isolate_paths(const json_t *files)
{
	json_t		*out = json_array();
	const json_t	*f;
	size_t		 i;

	json_array_foreach(files, i, f)
		if (isolate_s(f, "path") != NULL)
			json_array_append_new(out, json_string(isolate_s(f,
			    "path")));
	return out;
}

/* merge ended: each writer's files_changed made exact, told as events. */
static void
isolate_merged(int rc, const json_t *reply, const char *err, void *arg)
{
	struct isolate	*iso = arg;
	const json_t	*it;
	json_t		*e;
	size_t		 i, k;

	iso->run = NULL;
	if (rc != 0) {
		free(iso->err);
		xasprintf(&iso->err, "the merge failed: %s", err);
		iso->cfg.kick(iso->cfg.arg);
		return;
	}
	json_decref(iso->reply);
	iso->reply = json_deep_copy(reply);
	json_array_foreach(json_object_get(reply, "items"), i, it) {
		for (k = 0; k < iso->nitems; k++)
			if (isolate_s(it, "agent") != NULL && strcmp(isolate_s(
			    it, "agent"), iso->items[k].agent) == 0 &&
			    !isolate_is_remote(iso, iso->items[k].role))
				json_object_set_new(iso->items[k].result,
				    "files_changed", isolate_paths(
				    json_object_get(it, "files")));
		e = json_deep_copy(it);
		json_object_set(e, "head", json_object_get(reply, "head"));
		isolate_event(iso, "merge_result", e);
	}
	iso->merged = 1;
	iso->cfg.kick(iso->cfg.arg);
}

/* An agent's item of a merge or try request: its branch, its worktree. */
static json_t *
isolate_item(const struct isolate *iso, const char *agent, const char *role)
{
	char	*b = isolate_branch(iso, agent), *p;
	json_t	*o;

	xasprintf(&p, "%s/wt/%s", iso->side, agent);
	o = json_pack("{s:s, s:s, s:s, s:s}", "agent", agent, "role", role,
	    "branch", b, "path", p);
	free(b);
	free(p);
	return o;
}

/*
 * After the step's runs: each writer's branch merged into the loop's, in
 * role order (items), the check after each.  Ready when done (or not
 * isolated); failed when git failed (not a conflict: that is recorded).
 */
enum isolate_st
isolate_merge(struct isolate *iso, struct isolate_item *items, size_t n,
    char **why)
{
	const struct git_cfg	*g = &iso->cfg.config->git;
	json_t			*req, *list, *ev;
	size_t			 i;
	enum isolate_st		 st;

	if (!isolate_active(iso) || iso->merged)
		return ISO_READY;
	if ((st = isolate_inflight(iso, why)) != ISO_READY)
		return st;
	list = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(list, isolate_item(iso, items[i].agent,
		    items[i].role));
	free(iso->items);
	iso->items = xcalloc(n + 1, sizeof *items);
	memcpy(iso->items, items, n * sizeof *items);
	iso->nitems = n;
	ev = json_pack("{s:O}", "items", list);
	isolate_event(iso, "merge_started", ev);
	req = json_pack("{s:O?, s:O?, s:O?, s:s, s:s?, s:I, s:o}", "repo",
	    json_object_get(iso->wt, "repo"), "loop_path",
	    json_object_get(iso->wt, "loop_path"), "loop_branch",
	    json_object_get(iso->wt, "loop_branch"), "strategy",
	    g->strategy != NULL ? g->strategy : "merge", "check",
	    isolate_check(iso), "check_ms", (json_int_t)g->check_ms, "items",
	    list);
	isolate_git(iso, "merge", req, (g->check_ms + ISO_MERGE_MS) *
	    (n + 1), isolate_merged);
	return iso->run != NULL ? ISO_BUSY : isolate_merge(iso, items, n, why);
}

/* try ended: best-of-N's attempts judged (attempts.c picks). */
static void
isolate_tried(int rc, const json_t *reply, const char *err, void *arg)
{
	struct isolate	*iso = arg;

	iso->run = NULL;
	if (rc != 0) {
		free(iso->err);
		xasprintf(&iso->err, "the attempts' check failed: %s", err);
	} else
		iso->tried = json_deep_copy(reply);
	iso->cfg.kick(iso->cfg.arg);
}

/*
 * Best-of-N (attempts.c): each attempt's worktree (kept) has its
 * leftovers committed, the merge's check run in it, its diff against
 * the base read; *reply is try's reply (borrowed) once ready.
 */
enum isolate_st
isolate_try(struct isolate *iso, const char *role, const char *const *agents,
    size_t n, const json_t **reply, char **why)
{
	const struct git_cfg	*g = &iso->cfg.config->git;
	json_t			*list;
	size_t			 i;
	enum isolate_st		 st;

	if ((*reply = iso->tried) != NULL || !isolate_active(iso))
		return ISO_READY;
	if ((st = isolate_inflight(iso, why)) != ISO_READY)
		return st;
	list = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(list, isolate_item(iso, agents[i], role));
	isolate_git(iso, "try", json_pack("{s:O?, s:O?, s:s?, s:I, s:o}",
	    "repo", json_object_get(iso->wt, "repo"), "base",
	    json_object_get(iso->wt, "base"), "check", isolate_check(iso),
	    "check_ms", (json_int_t)g->check_ms, "items", list),
	    (g->check_ms + ISO_MERGE_MS) * (n + 1), isolate_tried);
	return iso->run != NULL ? ISO_BUSY : isolate_try(iso, role, agents, n,
	    reply, why);
}

/* The list o[key], made when it is not one yet. */
static json_t *
isolate_list(json_t *o, const char *key)
{
	json_t	*l = json_object_get(o, key);

	if (!json_is_array(l)) {
		l = json_array();
		json_object_set_new(o, key, l);
	}
	return l;
}

/* A git conflict as parallel_results.conflicts keeps it. */
static json_t *
isolate_conflict(const json_t *it)
{
	const json_t	*c = json_object_get(it, "conflict");

	return json_pack("{s:s, s:O?, s:[O?], s:O?, s:O?, s:O?, s:s}",
	    "source", "git", "files", json_object_get(c, "files"), "workers",
	    json_object_get(it, "role"), "agent", json_object_get(it, "agent"),
	    "branch", json_object_get(it, "branch"), "hunks",
	    json_object_get(c, "hunks"), "resolution", "resolve");
}

/* One merged item's record beside its role's brief. */
static void
isolate_brief(json_t *b, const json_t *it)
{
	if (!json_is_object(b))
		return;
	json_object_set(b, "branch", json_object_get(it, "branch"));
	json_object_set(b, "merge", json_object_get(it, "outcome"));
	json_object_set(b, "stat", json_object_get(it, "stat"));
	json_object_set(b, "files", json_object_get(it, "files"));
	if (json_object_get(it, "check") != NULL)
		json_object_set(b, "check", json_object_get(it, "check"));
}

/*
 * The step's merge into skill_state: parallel_results gets each writer's
 * branch, outcome, diff stat and files, and the git conflicts (with
 * their hunks) beside the claimed paths' ones; each conflict is queued
 * for a resolve step (worktree.resolve).  resolving: the merge was a
 * resolve step's (isolate_resolved records it).
 */
void
isolate_record(struct isolate *iso, json_t *ss, int resolving)
{
	json_t		*pr = json_object_get(ss, "parallel_results");
	json_t		*w = json_object_get(ss, "worktree"), *cf;
	const json_t	*it;
	const char	*out;
	size_t		 i;

	if (!isolate_active(iso) || iso->reply == NULL || resolving)
		return;
	if (json_is_object(w))
		json_object_set(w, "head", json_object_get(iso->reply,
		    "head"));
	if (!json_is_object(pr))
		return;
	cf = isolate_list(pr, "conflicts");
	json_array_foreach(json_object_get(iso->reply, "items"), i, it) {
		isolate_brief(json_object_get(pr, isolate_s(it, "role")), it);
		out = isolate_s(it, "outcome");
		if (out == NULL || strcmp(out, "conflict") != 0 ||
		    !json_is_object(w))
			continue;
		json_array_append_new(cf, isolate_conflict(it));
		json_array_append_new(isolate_list(w, "resolve"), json_pack(
		    "{s:O?, s:O?, s:O?, s:O?, s:O?, s:i}", "role",
		    json_object_get(it, "role"), "agent", json_object_get(it,
		    "agent"), "branch", json_object_get(it, "branch"), "files",
		    json_object_get(json_object_get(it, "conflict"), "files"),
		    "hunks", json_object_get(json_object_get(it, "conflict"),
		    "hunks"), "attempts", 0));
	}
}

/* The conflict a resolve step is to fix next, or NULL. */
static json_t *
isolate_pending(const json_t *ss)
{
	return json_array_get(json_object_get(json_object_get(ss,
	    "worktree"), "resolve"), 0);
}

/* The branch a resolve step merges into its worktree, NULL: none. */
const char *
isolate_resolve_branch(const json_t *ss)
{
	return isolate_s(isolate_pending(ss), "branch");
}

/* A conflict's files, comma-separated. */
static char *
isolate_files(const json_t *c)
{
	const json_t	*f;
	char		*s = xstrdup(""), *t;
	size_t		 i;

	json_array_foreach(json_object_get(c, "files"), i, f) {
		xasprintf(&t, "%s%s%s", s, i > 0 ? ", " : "",
		    json_string_value(f));
		free(s);
		s = t;
	}
	return s;
}

/* The resolve step's words, appended to the develop prompt. */
char *
isolate_resolve_prompt(const json_t *ss, const char *id)
{
	const json_t	*c = isolate_pending(ss);
	char		*files = isolate_files(c), *p;

	xasprintf(&p, "\n\n## Resolve a merge conflict\n\nMerging %s's branch "
	    "%s into the loop's branch ccw/%s conflicted in: %s.\nYour working "
	    "tree holds that merge in progress, with git's conflict markers "
	    "(<<<<<<< ======= >>>>>>>) in those files.  Resolve every "
	    "conflict keeping both sides' intent, remove the markers and "
	    "leave the files as they should be; your changes are committed "
	    "and merged for you.\n\nBoth sides' hunks:\n\n```diff\n%s\n```\n",
	    isolate_s(c, "role") != NULL ? isolate_s(c, "role") : "a worker",
	    isolate_s(c, "branch"), id, files, isolate_s(c, "hunks") != NULL ?
	    isolate_s(c, "hunks") : "");
	free(files);
	return p;
}

/*
 * A resolve step's run and merge: 0 resolved (the conflict leaves the
 * queue), 1 not (its attempts counted).  Recorded in
 * parallel_results.resolves.
 */
int
isolate_resolved(struct isolate *iso, json_t *ss, int run_failed,
    char **what)
{
	json_t		*c = isolate_pending(ss), *pr;
	const json_t	*it = json_array_get(json_object_get(iso->reply,
			    "items"), 0);
	const char	*out = isolate_s(it, "outcome");
	int		 ok = !run_failed && out != NULL &&
			    strcmp(out, "merged") == 0;

	*what = NULL;
	if (c == NULL)
		return 0;
	if (json_is_object(pr = json_object_get(ss, "parallel_results")))
		json_array_append_new(isolate_list(pr, "resolves"), json_pack(
		    "{s:O?, s:O?, s:s?, s:s?, s:O?, s:O?}", "agent",
		    json_object_get(it, "agent"), "branch", json_object_get(it,
		    "branch"), "merge_from", isolate_s(c, "branch"), "merge",
		    run_failed ? "not merged: the worker failed" : out, "files",
		    json_object_get(it, "files"), "conflict",
		    json_object_get(it, "conflict")));
	if (ok) {
		json_array_remove(json_object_get(json_object_get(ss,
		    "worktree"), "resolve"), 0);
		return 0;
	}
	json_object_set_new(c, "attempts", json_integer(json_integer_value(
	    json_object_get(c, "attempts")) + 1));
	return 1;
}

/*
 * The conflict in the queue has had its max_resolve resolve steps: the
 * loop's failure reason naming its files, else NULL.
 */
char *
isolate_unresolved(struct isolate *iso, const json_t *ss)
{
	const json_t	*c = isolate_pending(ss);
	json_int_t	 n = json_integer_value(json_object_get(c, "attempts"));
	char		*files, *why;

	if (c == NULL || (uint64_t)n < iso->cfg.config->git.max_resolve)
		return NULL;
	files = isolate_files(c);
	xasprintf(&why, "merge conflict in %s (%s's branch %s) not resolved "
	    "after %lld resolve step%s; worktrees and branches kept under "
	    "ccw/%s", files, isolate_s(c, "role") != NULL ? isolate_s(c,
	    "role") : "a worker", isolate_s(c, "branch"), (long long)n,
	    n == 1 ? "" : "s", iso->cfg.id);
	free(files);
	return why;
}

/* land or cleanup ended: the next stage on the next poll. */
static void
isolate_ended(int rc, const json_t *reply, const char *err, void *arg)
{
	struct isolate	*iso = arg;

	iso->run = NULL;
	if (rc != 0)
		log_warnx("loop %s: %s", iso->cfg.id, err);
	if (iso->landing == NULL) {	/* it was land's */
		iso->landing = rc == 0 && reply != NULL ? json_deep_copy(reply) :
		    json_pack("{s:b, s:s}", "landed", 0, "reason", err != NULL ?
		    err : "land failed");
		iso->landed = json_is_true(json_object_get(iso->landing,
		    "landed"));
	} else
		iso->finished = 1;
	iso->cfg.kick(iso->cfg.arg);
}

/* The summary's words: landed, or where the work is left. */
static void
isolate_summary(struct isolate *iso, json_t *w, int code, int deleted)
{
	const char	*reason = isolate_s(iso->landing, "reason");
	char		*s;

	if (deleted)
		s = xstrdup("the loop was deleted: its worktrees and branches "
		    "removed");
	else if (code == EXIT_PAUSED || code == EXIT_STOPPED)
		xasprintf(&s, "worktrees and branches kept for the resume "
		    "(ccw/%s)", iso->cfg.id);
	else if (code != EXIT_OK)
		xasprintf(&s, "worktrees and branches kept for inspection "
		    "(ccw/%s)", iso->cfg.id);
	else if (iso->landed)
		xasprintf(&s, "landed on %s", isolate_s(w, "start_branch"));
	else
		xasprintf(&s, "left on branch %s%s%s%s", isolate_s(w,
		    "loop_branch"), reason != NULL ? " (not landed: " : "",
		    reason != NULL ?
		    reason : "", reason != NULL ? ")" : "");
	json_object_set_new(w, "summary", json_string(s));
	isolate_event(iso, "merge_landed", json_pack("{s:b, s:s, s:O?}",
	    "landed", iso->landed, "summary", s, "branch",
	    json_object_get(w, "loop_branch")));
	free(s);
}

/*
 * At the loop's end: completed, --land fast-forwards the starting branch
 * (only when that checkout is clean), then every worktree and agent
 * branch goes (the loop's branch too once landed, else it is left for
 * the user); deleted, all goes; failed, paused or stopped, all is kept.
 */
enum isolate_st
isolate_finish(struct isolate *iso, json_t *ss, int code, int deleted)
{
	json_t		*w = json_object_get(ss, "worktree");
	int		 land = iso->cfg.over != NULL && iso->cfg.over->land;
	char		*lb;

	if (!json_is_object(w) || iso->run != NULL)
		return iso->run != NULL ? ISO_BUSY : ISO_READY;
	if (iso->finished || (code != EXIT_OK && !deleted)) {
		if (!iso->finished++)
			isolate_summary(iso, w, code, deleted);
		return ISO_READY;
	}
	lb = isolate_s(w, "loop_branch") != NULL ? xstrdup(isolate_s(w,
	    "loop_branch")) : isolate_branch(iso, NULL);
	if (iso->landing == NULL && land && !deleted)
		isolate_git(iso, "land", json_pack("{s:O?, s:s, s:s, s:O?,"
		    " s:O?}", "repo", json_object_get(w, "repo"), "root",
		    iso->cfg.root, "loop_branch", lb, "start_branch",
		    json_object_get(w, "start_branch"), "start_head",
		    json_object_get(w, "start_head")), ISO_PREPARE_MS,
		    isolate_ended);
	else {
		if (iso->landing == NULL)
			iso->landing = json_object();
		isolate_summary(iso, w, code, deleted);
		isolate_git(iso, "cleanup", json_pack("{s:O?, s:s, s:s, s:b,"
		    " s:b}", "repo", json_object_get(w, "repo"), "side",
		    iso->side, "loop_branch", lb, "remove_branches", 1,
		    "keep_loop_branch", !iso->landed && !deleted),
		    ISO_PREPARE_MS, isolate_ended);
	}
	free(lb);
	if (iso->run == NULL)
		iso->finished = 1;
	return iso->run != NULL ? ISO_BUSY : ISO_READY;
}

/*
 * A run's worktree, as its step wants it: its own for a parallel step's
 * writer, a resolve step's run (on the conflicted merge) and an auto
 * loop's step; the loop's as cwd for a parallel step's reader.  A
 * best-of-N attempt's is kept after its run, for try.
 */
void
isolate_run(const struct loop *l, const struct loop_run *r,
    const char *role, struct agent_req *req)
{
	if (l->batch || l->resolving || l->cfg.mode == LOOP_AUTO)
		isolate_request(l->iso, role, req, l->resolving ?
		    isolate_resolve_branch(l->ss) : NULL);
	else if (l->cfg.mode == LOOP_PARALLEL)
		isolate_reader(l->iso, l->ss, role, req);
	if (l->attempting && r->role == l->att_role)
		json_object_set_new(json_object_get(req->options, "worktree"),
		    "keep", json_true());
}

/*
 * An isolated step's writers merged into the loop's branch, in role
 * order, before the step is taken (their files_changed made exact); a
 * resolve step's failed run is not merged (it counts as unresolved).
 * Ready at once for an isolated auto step's reader.
 */
enum isolate_st
isolate_merge_step(const struct loop *l, char **why)
{
	struct isolate_item	 items[LOOP_MAX_RUNS];
	const struct loop_run	*r;
	const char		*role;
	size_t			 n = 0;
	int			 i;

	for (i = 0; i < l->ncur; i++) {
		r = l->cur[i];
		role = loop_role(l, r->role);
		if (r->a != NULL && r->result != NULL && json_object_get(
		    r->a->options, "worktree") != NULL && !(l->resolving &&
		    strcmp(l->wf->outcome(role, r->result), "failed") == 0)) {
			items[n].role = role;
			items[n].agent = r->a->id;
			items[n++].result = r->result;
		}
	}
	if (n == 0 && !l->batch && !l->resolving)
		return ISO_READY;	/* an isolated auto step's reader */
	return isolate_merge(l->iso, items, n, why);
}
