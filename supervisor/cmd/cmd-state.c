/*
 * cmd-state.c: `ccw-supervisor state VERB`, its verbs in state_verbs:
 * inspecting, exporting and repairing loop state files.  The
 * reading, checking and writing are state.c's and progress.c's; this file
 * owns the options and what is printed.  A write takes the loop's run
 * lock (loopguard.c): never while a driver runs the loop.
 */
#include <config.h>

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdutil.h"
#include "flowdef.h"
#include "loopdriver.h"
#include "loopguard.h"
#include "progress.h"
#include "state.h"
#include "state-export.h"
#include "state-wt.h"
#include "sup.h"
#include "workflows.h"
#include "xmalloc.h"

struct state_opts {
	const char	*state_dir, *root, *description, *loop_id;
	char		*dir;		/* the state directory's path */
	const char	*out;		/* export -o FILE */
	int64_t		 max_iter;
	int		 json, html;
	int		 dirfd;
};

/* The --help text of the state command. */
static void
state_usage(FILE *fp)
{
	fprintf(fp,
"usage: ccw-supervisor state list [--json]\n"
"       ccw-supervisor state show ID [--json]\n"
"       ccw-supervisor state validate ID|FILE\n"
"       ccw-supervisor state rebuild ID\n"
"       ccw-supervisor state create TITLE [--description D]\n"
"                                  [--max-iterations N] [--loop-id ID]\n"
"       ccw-supervisor state export ID [--html] [-o FILE]\n"
"options: [-C ROOT] [--state-dir DIR]\n"
"rebuild and create refuse a loop a run (or agent, control) drives.\n"
"Exit: 0 done (validate: valid), 1 not found, invalid, failed or driven\n"
"by another process, 2 usage.\n");
}

/* Report a failure and pick the exit status. */
static int
state_fail(const char *what, char *err)
{
	fprintf(stderr, "ccw-supervisor state %s: %s\n", what,
	    err != NULL ? err : "failed");
	free(err);
	return EXIT_FAILED;
}

/*
 * Open the state directory the options name: --state-dir, else the one
 * holding loop ID (NULL: none named), else where new loops go.
 */
static int
state_open(struct state_opts *so, const char *id, int create, char **err)
{
	char	cwd[PATH_MAX];

	if (so->state_dir != NULL)
		so->dir = xstrdup(so->state_dir);
	else {
		if (so->root == NULL && getcwd(cwd, sizeof cwd) == NULL) {
			xasprintf(err, "getcwd: %s", strerror(errno));
			return -1;
		}
		so->dir = state_dir_for(so->root != NULL ? so->root : cwd, id);
	}
	so->dirfd = state_dir_open(so->dir, create, err);
	return so->dirfd < 0 ? -1 : 0;
}

/*
 * Before a write: the loop's run lock, so no driver (run, agent,
 * control) commits its state while we do.  Held until loopguard_close.
 */
static int
state_lock(struct state_opts *so, const char *verb, const char *id,
    struct loop_guard *g)
{
	char	*err = NULL, *why;
	int	 rc;

	if ((rc = loopguard_open(g, so->dir, id, &err)) == 0)
		return 0;
	if (rc == 1) {
		xasprintf(&why, "refusing to write while it runs: %s", err);
		free(err);
		err = why;
	}
	loopguard_close(g);
	state_fail(verb, err);
	return -1;
}

/* Load a loop for show/rebuild, with a message for every failure. */
static json_t *
state_get(struct state_opts *so, const char *id, int flags, char **err)
{
	json_t		*st = NULL;
	char		*why = NULL;

	switch (state_load_at(so->dirfd, id, ".json", flags, &st, NULL, &why)) {
	case STATE_OK:
		free(why);
		return st;
	case STATE_ENOENT:
		xasprintf(err, "no loop '%s' in this state directory", id);
		break;
	case STATE_EAGAIN:
		xasprintf(err, "%s.json is being written; try again (%s)", id,
		    why ? why : "unparseable");
		break;
	default:
		xasprintf(err, "%s", why != NULL ? why : "cannot read it");
		break;
	}
	free(why);
	return NULL;
}

/* A string member for printing, "-" when absent. */
static const char *
state_s(const json_t *o, const char *k)
{
	return cmd_json_str(o, k, "-");
}

/*
 * One loop of state list: a running loop says who drives it, or that
 * nobody does (interrupted) and why, from loopdriver_view's members.
 */
static void
state_list_line(const json_t *st)
{
	const char	*why = json_string_value(json_object_get(json_object_get(
			    st, "interrupted"), "reason"));
	json_int_t	 pid = json_integer_value(json_object_get(st,
			    "driver_pid"));
	int		 bad = json_object_get(st, "error") != NULL;
	char		*tail;

	if (!bad && why != NULL)
		xasprintf(&tail, " (interrupted: %s)", why);
	else if (!bad && pid > 0 &&
	    strcmp(state_s(st, "status"), "running") == 0)
		xasprintf(&tail, " (driven by pid %lld)", (long long)pid);
	else
		tail = xstrdup("");
	printf("%-44s %-11s %3lld/%-3lld %s%s\n", state_s(st, "loop_id"),
	    bad ? "unreadable" : why != NULL ? "interrupted" :
	    state_s(st, "status"),
	    (long long)json_integer_value(json_object_get(st,
	    "current_iteration")),
	    (long long)json_integer_value(json_object_get(st,
	    "max_iterations")), bad ? state_s(st, "error") :
	    state_s(st, "title"), tail);
	free(tail);
}

/* state list: every {id}.json in the directory, who drives each. */
static int
state_list(struct state_opts *so, const char *none)
{
	struct dirent	*de;
	DIR		*d;
	json_t		*all = json_array(), *st;
	char		 id[STATE_ID_MAX + 8], *err = NULL;
	size_t		 len, i;
	int		 fd = fcntl(so->dirfd, F_DUPFD_CLOEXEC, 0);

	(void)none;
	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		json_decref(all);
		return state_fail("list", xstrdup(strerror(errno)));
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len <= 5 || len - 5 > STATE_ID_MAX ||
		    strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		memcpy(id, de->d_name, len - 5);
		id[len - 5] = '\0';
		/* config.json shares the directory (DESIGN.md section 5). */
		if (!state_id_valid(id) || strcmp(id, "config") == 0)
			continue;
		st = state_get(so, id, STATE_LOAD_NOQUARANTINE, &err);
		if (st == NULL) {
			st = json_pack("{s:s, s:s}", "loop_id", id, "error",
			    err != NULL ? err : "unreadable");
			free(err);
			err = NULL;
		}
		else
			loopdriver_view(so->dirfd, id, st);
		json_array_append_new(all, st);
	}
	closedir(d);
	if (so->json)
		cmd_print_json(all, 0);
	else {
		for (i = 0; i < json_array_size(all); i++)
			state_list_line(json_array_get(all, i));
		fflush(stdout);
	}
	json_decref(all);
	return EXIT_OK;
}

/*
 * The state table of the workflow a loop's file names (its sections and
 * rules); a loop with no readable file is the default workflow's.
 */
static int
state_table(struct state_opts *so, const char *id, const json_t *st,
    const struct workflow_state **ws, char **err)
{
	json_t	*peek = NULL;
	char	*why = NULL;

	/* a look that moves no unparseable file aside (the verb decides) */
	if (st == NULL && state_load_at(so->dirfd, id, ".json",
	    STATE_LOAD_NOQUARANTINE, &peek, NULL, &why) == STATE_OK)
		st = peek;
	free(why);
	*ws = workflow_state_of(st, err);
	json_decref(peek);
	return *err != NULL ? -1 : 0;
}

/* An isolated loop's branch, what became of it, its worktrees left. */
static void
state_show_wt(const json_t *ss, const json_t *wts)
{
	const json_t	*w = json_object_get(ss, "worktree"), *e;
	size_t		 i;

	if (!json_is_object(w))
		return;
	printf("branch:      %s\n", state_s(w, "loop_branch"));
	if (json_object_get(w, "summary") != NULL)
		printf("worktrees:   %s\n", state_s(w, "summary"));
	json_array_foreach(wts, i, e)
		printf("worktree:    %s [%s]\n", state_s(e, "path"),
		    json_object_get(e, "branch") != NULL ? state_s(e,
		    "branch") : "detached");
}

/* state show: the loop and its derived progress figures. */
static int
state_show(struct state_opts *so, const char *id)
{
	const struct workflow_state *ws;
	json_t		*st, *der, *ss, *wts;
	char		*err = NULL, *status;

	if ((st = state_get(so, id, 0, &err)) == NULL)
		return state_fail("show", err);
	if (state_table(so, id, st, &ws, &err) != 0) {
		json_decref(st);
		return state_fail("show", err);
	}
	der = ws != NULL && ws->derived != NULL ? ws->derived(st) :
	    json_object();
	loopdriver_view(so->dirfd, id, st);	/* who drives it */
	status = loopdriver_status(st);
	wts = state_worktrees(st);
	if (so->json) {
		json_object_set(st, "derived", der);
		if (wts != NULL)
			json_object_set(st, "worktrees", wts);
		cmd_print_json(st, 0);
	} else {
		ss = json_object_get(st, "skill_state");
		printf("loop:        %s\ntitle:       %s\nstatus:      %s\n"
		    "iteration:   %lld of %lld\nupdated:     %s\n"
		    "action:      %s (mode %s)\n",
		    state_s(st, "loop_id"), state_s(st, "title"), status,
		    (long long)json_integer_value(json_object_get(st,
		    "current_iteration")),
		    (long long)json_integer_value(json_object_get(st,
		    "max_iterations")), state_s(st, "updated_at"),
		    state_s(ss, "current_action"), state_s(ss, "mode"));
		printf("develop:     %.1f%%\noverall:     %.1f%%\n"
		    "validation:  %s\n",
		    json_number_value(json_object_get(der, "develop_progress")),
		    json_number_value(json_object_get(der, "overall_progress")),
		    json_is_true(json_object_get(der, "validation_passed")) ?
		    "passed" : "not passed");
		if (json_object_get(st, "failure_reason") != NULL)
			printf("failure:     %s\n", state_s(st, "failure_reason"));
		state_show_wt(ss, wts);
		fflush(stdout);
	}
	free(status);
	json_decref(der);
	json_decref(wts);
	json_decref(st);
	return EXIT_OK;
}

/* state validate: an id in the directory, or any file by path. */
static int
state_check(struct state_opts *so, const char *what)
{
	const struct workflow_state *ws;
	struct strv	 errs = { NULL, 0 };
	json_error_t	 jerr;
	json_t		*st;
	char		*err = NULL;
	size_t		 i;
	int		 byfile = strchr(what, '/') != NULL || !state_id_valid(what);

	if (byfile) {
		st = json_load_file(what, 0, &jerr);
		if (st == NULL) {
			fprintf(stderr, "%s: line %d, column %d: %s\n", what,
			    jerr.line, jerr.column, jerr.text);
			return EXIT_FAILED;
		}
	} else if (state_open(so, what, 0, &err) != 0 ||
	    (st = state_get(so, what, STATE_LOAD_NOQUARANTINE, &err)) == NULL)
		return state_fail("validate", err);
	if (state_table(so, what, st, &ws, &err) != 0) {
		json_decref(st);
		return state_fail("validate", err);
	}
	if (state_validate(ws, st, &errs) == 0)
		printf("%s: valid\n", what);
	for (i = 0; i < errs.n; i++)
		printf("%s: %s\n", what, errs.v[i]);
	fflush(stdout);
	json_decref(st);
	i = errs.n;
	strv_clear(&errs);
	return i == 0 ? EXIT_OK : EXIT_FAILED;
}

/* state rebuild: skill_state from the side files, into the state file. */
static int
state_rebuild(struct state_opts *so, const char *id)
{
	const struct workflow_state *ws;
	struct strv	 lost = { NULL, 0 };
	json_t		*ss = NULL, *st, *patch;
	char		*err = NULL;
	unsigned	 nfsync = 0;
	size_t		 i;
	int		 rc, kept;

	if (state_table(so, id, NULL, &ws, &err) != 0 ||
	    progress_rebuild(ws, so->dirfd, id, &ss, &lost, &err) != 0)
		return state_fail("rebuild", err);
	if (err != NULL) {
		/* A warning: malformed lines skipped, an output unreadable. */
		fprintf(stderr, "ccw-supervisor state rebuild: %s\n", err);
		free(err);
		err = NULL;
	}
	st = state_get(so, id, STATE_LOAD_FORCE, &err);
	free(err);
	err = NULL;
	/* With a readable file its API fields stay; only skill_state is new. */
	kept = st != NULL;
	if (st != NULL) {
		patch = json_pack("{s:O}", "skill_state", ss);
		rc = state_commit(ws, so->dirfd, id, patch, NULL,
		    NULL, NULL, &nfsync, &err);
		json_decref(patch);
		json_decref(st);
	} else {
		/* No usable file: a new one, its API fields marked as lost. */
		st = state_new(ws, id, id, "", 10);
		json_object_set(st, "skill_state", ss);
		rc = st != NULL ? state_create(ws, so->dirfd,
		    id, st, &nfsync, &err) : -1;
		json_decref(st);
	}
	json_decref(ss);
	if (rc != 0) {
		strv_clear(&lost);
		return state_fail("rebuild", err);
	}
	printf("%s: skill_state rebuilt\n", id);
	for (i = 0; i < lost.n; i++)
		if (!kept || strncmp(lost.v[i], "skill_state.", 12) == 0)
			printf("%s: could not recover %s\n", id, lost.v[i]);
	fflush(stdout);
	strv_clear(&lost);
	return EXIT_OK;
}

/* state create: a new loop in status created. */
static int
state_make(struct state_opts *so, const char *title)
{
	const struct workflow_state *ws;
	struct loop_guard g;
	json_t		*st;
	char		*id, *err = NULL;
	unsigned	 nfsync = 0;
	int		 rc;

	id = so->loop_id != NULL ? xstrdup(so->loop_id) : state_id_generate();
	if (!state_id_valid(id)) {
		fprintf(stderr, "ccw-supervisor state create: invalid loop id "
		    "'%s': use [A-Za-z0-9][A-Za-z0-9._-]{0,127}, no '..'\n", id);
		free(id);
		return EXIT_USAGE;
	}
	if (state_lock(so, "create", id, &g) != 0) {
		free(id);
		return EXIT_FAILED;
	}
	/* a new loop is the default workflow's (CCW's loops) */
	ws = workflow_default()->state;
	st = state_new(ws, id, title, so->description ?
	    so->description : "", so->max_iter);
	rc = st != NULL ? state_create(ws, so->dirfd, id, st,
	    &nfsync, &err) : -1;
	json_decref(st);
	loopguard_close(&g);
	if (rc != 0) {
		free(id);
		return state_fail("create", err);
	}
	puts(id);
	fflush(stdout);
	free(id);
	return EXIT_OK;
}

/* The options into so; -1 to go on, else the exit status (help, usage). */
static int
state_parse(int argc, char **argv, struct state_opts *so)
{
	static const struct option longopts[] = {
		{ "state-dir", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "description", required_argument, NULL, 'd' },
		{ "max-iterations", required_argument, NULL, 'n' },
		{ "loop-id", required_argument, NULL, 'l' },
		{ "html", no_argument, NULL, 'H' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char	*end;
	int	 ch;

	memset(so, 0, sizeof *so);
	so->max_iter = 10;
	so->dirfd = -1;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:ho:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'C': so->root = optarg; break;
		case 's': so->state_dir = optarg; break;
		case 'j': so->json = 1; break;
		case 'd': so->description = optarg; break;
		case 'l': so->loop_id = optarg; break;
		case 'H': so->html = 1; break;
		case 'o': so->out = optarg; break;
		case 'n':
			errno = 0;
			so->max_iter = strtoll(optarg, &end, 10);
			if (errno == 0 && *end == '\0' && so->max_iter > 0)
				break;
			fprintf(stderr, "ccw-supervisor state: --max-iterations "
			    "needs a positive integer\n");
			return EXIT_USAGE;
		case 'h':
			state_usage(stdout);
			return EXIT_OK;
		default:
			state_usage(stderr);
			return EXIT_USAGE;
		}
	}
	return -1;
}

/* state export: the loop's replay, as JSON or (--html) one document. */
static int
state_export_verb(struct state_opts *so, const char *id)
{
	return state_export(so->dirfd, id, so->html, so->out);
}

#define SV_NOARG	0x1	/* takes no argument (list) */
#define SV_NOID		0x2	/* its argument is no loop id */
#define SV_OWNDIR	0x4	/* opens its own directory (validate: a file) */
#define SV_CREATE	0x8	/* may create the directory (--loop-id's) */
#define SV_LOCK		0x10	/* writes: holds the loop's run lock */

/* The verbs of `state`: what each takes and asks. */
static const struct state_verb {
	const char	*name;
	int		(*fn)(struct state_opts *, const char *);
	unsigned	 flags;
} state_verbs[] = {
	{ "list", state_list, SV_NOARG },
	{ "show", state_show, 0 },
	{ "validate", state_check, SV_NOID | SV_OWNDIR },
	{ "rebuild", state_rebuild, SV_LOCK },
	{ "create", state_make, SV_NOID | SV_CREATE },
	{ "export", state_export_verb, 0 },
};
#define STATE_NVERBS	(sizeof state_verbs / sizeof state_verbs[0])

/* One verb on an open state directory, under the run lock if it writes. */
static int
state_verb(struct state_opts *so, const struct state_verb *v, const char *arg)
{
	struct loop_guard	 guard;
	int			 rc;

	if (!(v->flags & SV_LOCK))
		return v->fn(so, arg);
	if (state_lock(so, v->name, arg, &guard) != 0)
		return EXIT_FAILED;
	rc = v->fn(so, arg);
	loopguard_close(&guard);
	return rc;
}

int
cmd_state(int argc, char **argv)
{
	const struct state_verb	*v = NULL;
	struct state_opts	 so;
	const char		*verb, *arg;
	char			*err = NULL;
	size_t			 i;
	int			 rc, nargs;

	if ((rc = state_parse(argc, argv, &so)) != -1)
		return rc;
	nargs = argc - optind;
	verb = nargs > 0 ? argv[optind] : NULL;
	arg = nargs > 1 ? argv[optind + 1] : NULL;
	for (i = 0; verb != NULL && i < STATE_NVERBS; i++)
		if (strcmp(verb, state_verbs[i].name) == 0)
			v = &state_verbs[i];
	if (verb != NULL && v == NULL) {
		fprintf(stderr, "ccw-supervisor state: unknown verb '%s'\n", verb);
		state_usage(stderr);
		return EXIT_USAGE;
	}
	if (v == NULL || nargs > 2 || !(v->flags & SV_NOARG) != (arg != NULL)) {
		state_usage(stderr);
		return EXIT_USAGE;
	}
	if (!(v->flags & (SV_NOARG | SV_NOID)) && !state_id_valid(arg)) {
		fprintf(stderr, "ccw-supervisor state %s: invalid loop id '%s'\n",
		    verb, arg);
		return EXIT_USAGE;
	}
	if (!(v->flags & SV_OWNDIR) && state_open(&so, (v->flags &
	    SV_CREATE) ? so.loop_id : arg, (v->flags & SV_CREATE) != 0,
	    &err) != 0) {
		free(so.dir);
		return state_fail(verb, err);
	}
	if (!(v->flags & SV_OWNDIR))
		state_clean_temps(so.dirfd, NULL);
	rc = state_verb(&so, v, arg);
	if (so.dirfd >= 0)
		close(so.dirfd);
	free(so.dir);
	return rc;
}
