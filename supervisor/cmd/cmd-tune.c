/*
 * cmd-tune.c: `ccw-supervisor tune`: the skill-tune workflow on one skill
 * folder from the command line: options, the configuration of its roles
 * (.tune/config.json), a terminal's questions in interactive mode, its
 * steps as lines (or NDJSON with --json), signals, the exit status.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "buf.h"
#include "chan.h"
#include "cmdutil.h"
#include "log.h"
#include "sigfd.h"
#include "sup.h"
#include "flowdef.h"
#include "tune.h"
#include "workflows.h"
#include "xmalloc.h"

struct tune_cli {
	struct event_base	*base;
	struct tune		*t;
	int			 json, exit_status;
};

/* The --help text of the tune command. */
static void
tune_usage(FILE *fp)
{
	fprintf(fp,
"usage: ccw-supervisor tune SKILL_DIR \"what is wrong\" [--focus AREA,...]\n"
"           [-m auto|interactive] [--max-iterations N] [--max-errors N]\n"
"           [--json] [--state-dir DIR] [-C ROOT] [--config F] [--tool T]\n"
"           [--model M] [--timeout-ms N] [--nudge-ms N] [--grace-ms N]\n"
"       ccw-supervisor tune SKILL_DIR --resume ID [--json] ...\n"
"\n"
"Diagnose a Claude Code skill (SKILL.md, phases/, specs/), propose fixes,\n"
"apply each with a backup, verify it by diagnosing again (rolled back\n"
"when it did not help) and gate on quality (seed 002's skill-tuning).\n"
"The diagnosis roles context, memory, dataflow, agent, docs and\n"
"token_consumption run at once (--focus: only these); the fix role\n"
"proposes.  Roles come from ROOT/.tune/config.json (--config).  State:\n"
"SKILL_DIR/.tune/ID/state.json (TuningState), report.md, backups/.\n"
"-m interactive asks about an ambiguous description on the terminal.\n"
"Exit: 0 completed (gate pass or review), 1 failed or gate fail,\n"
"2 usage, 4 stopped (resume with --resume ID), 70 internal.\n");
}

/* A run's step on stderr, or as one NDJSON line on stdout. */
static void
tune_cli_event(void *arg, const char *name, const json_t *data)
{
	struct tune_cli	*c = arg;
	const char	*s;

	if (c->json) {
		cmd_emit_event(name, data);
		return;
	}
	if (strcmp(name, "action_started") == 0)
		fprintf(stderr, "tune: %s\n", cmd_json_str(data, "action",
		    "?"));
	else if (strcmp(name, "worker_ended") == 0)
		fprintf(stderr, "tune:   %s %s: %s%s\n", cmd_json_str(data,
		    "role", "?"), cmd_json_str(data, "agent_id", "?"),
		    cmd_json_str(data, "status", "?"), json_is_true(
		    json_object_get(data, "timed_out")) ? " (timed out)" : "");
	else if (strcmp(name, "diagnosed") == 0)
		fprintf(stderr, "tune:   quality %lld, gate %s\n",
		    (long long)json_integer_value(json_object_get(data,
		    "quality_score")), cmd_json_str(data, "quality_gate", "?"));
	else if (strcmp(name, "fix_verified") == 0 ||
	    strcmp(name, "fix_applied") == 0)
		fprintf(stderr, "tune:   %s %s\n", cmd_json_str(data, "fix_id",
		    "?"), name + 4);
	else if (strcmp(name, "fix_failed") == 0)
		fprintf(stderr, "tune:   %s did not help (%s)\n",
		    cmd_json_str(data, "fix_id", "?"), cmd_json_str(data, "why",
		    "?"));
	else if (strcmp(name, "fix_rolled_back") == 0)
		fprintf(stderr, "tune:   %s rolled back\n", cmd_json_str(data,
		    "fix_id", "?"));
	else if (strcmp(name, "error") == 0 && (s = cmd_json_str(data,
	    "message", NULL)) != NULL)
		fprintf(stderr, "tune:   error: %s\n", s);
}

/*
 * An ambiguity on the terminal: the options numbered, the first the
 * recommended one; an empty line or end of input takes it.
 */
static int
tune_cli_ask(void *arg, const char *question, const json_t *options)
{
	const json_t	*o;
	char		 line[64];
	size_t		 i;
	long		 k;

	(void)arg;
	fprintf(stderr, "tune: the description is ambiguous: %s\n", question);
	json_array_foreach(options, i, o)
		fprintf(stderr, "  %zu) %s%s\n", i + 1, json_string_value(o),
		    i == 0 ? " (recommended)" : "");
	for (;;) {
		fprintf(stderr, "choose 1-%zu [1]: ", json_array_size(options));
		if (fgets(line, sizeof line, stdin) == NULL || *line == '\n')
			return 0;
		k = strtol(line, NULL, 10);
		if (k >= 1 && (size_t)k <= json_array_size(options))
			return (int)k - 1;
		fprintf(stderr, "tune: '%.*s' is not a choice\n",
		    (int)strcspn(line, "\n"), line);
	}
}

/* The run ended: leave the loop. */
static void
tune_cli_done(void *arg, int exit_status)
{
	struct tune_cli	*c = arg;

	c->exit_status = exit_status;
	event_base_loopbreak(c->base);
}

/* SIGINT/SIGTERM/SIGHUP: the workers closed, the run left resumable. */
static void
tune_cli_signal(evutil_socket_t sig, short ev, void *arg)
{
	struct tune_cli	*c = arg;

	(void)ev;
	log_warnx("signal %d: closing the workers of %s", (int)sig,
	    tune_id(c->t));
	tune_stop(c->t);
}

/*
 * --focus AREA,...: each one of the workflow's diagnosis group (its
 * table's parallel roles), so the list and the message follow the table.
 */
static int
tune_cli_focus(const struct workflow *wf, const char *arg, struct strv *out)
{
	const struct workflow_group	*g = wf->parallel;
	struct sbuf			 names = { NULL, 0, 0 };
	const char			*p = arg, *e;
	char				*w;
	size_t				 n, r;
	int				 ok;

	while (*p != '\0') {
		e = p + strcspn(p, ",");
		n = (size_t)(e - p);
		w = xstrndup(p, n);
		for (r = 0, ok = 0; r < g->nroles && !ok; r++)
			ok = strcmp(w, wf->roles[g->roles[r]].name) == 0;
		if (!ok) {
			for (r = 0; r < g->nroles; r++)
				sbuf_printf(&names, "%s%s", r > 0 ? ", " : "",
				    wf->roles[g->roles[r]].name);
			fprintf(stderr, "ccw-supervisor tune: --focus: '%s' is "
			    "no diagnosis area (%s)\n", w, names.p);
			free(names.p);
			free(w);
			return -1;
		}
		strv_push(out, w);
		free(w);
		p = *e != '\0' ? e + 1 : e;
	}
	return out->n > 0 ? 0 : -1;
}

/* A positive count. */
static int
tune_cli_count(const char *opt, const char *arg, long long *out)
{
	char	*end;

	errno = 0;
	*out = strtoll(arg, &end, 10);
	if (errno == 0 && *arg != '\0' && *end == '\0' && *out >= 1 &&
	    *out <= 1000)
		return 0;
	fprintf(stderr, "ccw-supervisor tune: %s: '%s' is not a count from 1 "
	    "to 1000\n", opt, arg);
	return -1;
}

/* Open the run, drive it to its end, print where it is. */
static int
tune_cli_run(struct cmd_opts *o, struct tune_spec *sp, int json)
{
	struct tune_hooks	 h = { tune_cli_event, tune_cli_ask,
	    tune_cli_done, NULL };
	struct tune_cli		 c;
	struct event		*sig[3];
	static const int	 signo[3] = { SIGINT, SIGTERM, SIGHUP };
	char			*err = NULL;
	int			 busy, i;

	memset(&c, 0, sizeof c);
	c.json = json;
	h.arg = &c;
	if ((c.base = chan_base_new()) == NULL)
		fatalx("cannot create the event loop");
	c.t = tune_new(c.base, NULL, sp, &h, &busy, &err);
	if (c.t == NULL) {
		fprintf(stderr, "ccw-supervisor tune: %s\n", err);
		free(err);
		event_base_free(c.base);
		return busy ? EXIT_FAILED : EXIT_USAGE;
	}
	for (i = 0; i < 3; i++) {
		sig[i] = evsignal_new(c.base, signo[i], tune_cli_signal, &c);
		evsignal_add(sig[i], NULL);
	}
	sigfd_release();
	c.exit_status = EXIT_INTERNAL;
	tune_start(c.t);
	event_base_dispatch(c.base);
	if (!json)
		printf("tune %s: %s, quality %lld (%s), %zu fixes proposed, "
		    "%zu applied; state %s/state.json\n", tune_id(c.t),
		    cmd_json_str(tune_state(c.t), "status", "?"),
		    (long long)json_integer_value(json_object_get(
		    tune_state(c.t), "quality_score")),
		    cmd_json_str(tune_state(c.t), "quality_gate", "?"),
		    json_array_size(json_object_get(tune_state(c.t),
		    "proposed_fixes")), json_array_size(json_object_get(
		    tune_state(c.t), "applied_fixes")), tune_work_dir(c.t));
	for (i = 0; i < 3; i++)
		event_free(sig[i]);
	tune_free(c.t);
	event_base_free(c.base);
	(void)o;
	return c.exit_status;
}

/* What a tune command line gathers besides cmd_opts. */
struct tune_args {
	struct tune_spec	 sp;
	struct strv		 focus;
	char			 skill[PATH_MAX], sdir[PATH_MAX];
	int			 json;
};

/* One tune option (the shared ones to cmd_opts): 0, 1 help, -1 usage. */
static int
tune_cli_opt(struct cmd_opts *o, struct tune_args *ta, int ch,
    const char *arg)
{
	switch (ch) {
	case 'j':
		ta->json = 1;
		return 0;
	case 'h':
		return 1;
	case 'M':
		o->model = arg;
		return 0;
	case 'S':
		ta->sp.state_dir = arg;
		return 0;
	case 'R':
		ta->sp.resume_id = arg;
		return 0;
	case 'F':
		return tune_cli_focus(o->wf, arg, &ta->focus);
	case 'm':
		if (strcmp(arg, "interactive") == 0)
			ta->sp.interactive = 1;
		else if (strcmp(arg, "auto") != 0) {
			fprintf(stderr, "ccw-supervisor tune: -m: '%s': "
			    "auto or interactive\n", arg);
			return -1;
		}
		return 0;
	case 'I':
		return tune_cli_count("--max-iterations", arg,
		    &ta->sp.max_iterations);
	case 'E':
		return tune_cli_count("--max-errors", arg,
		    &ta->sp.max_errors);
	default:
		return cmd_opts_set(o, ch, arg) != 0 ? -1 : 0;
	}
}

/*
 * SKILL_DIR (a directory) and --state-dir (made, then absolute) into the
 * spec: 0, or -1 said on stderr.
 */
static int
tune_cli_dirs(struct tune_args *ta, const char *dir)
{
	struct stat	 sb;

	if (realpath(dir, ta->skill) == NULL || stat(ta->skill, &sb) != 0 ||
	    !S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "ccw-supervisor tune: %s: not a directory\n",
		    dir);
		return -1;
	}
	if (ta->sp.state_dir != NULL) {
		if (mkdir(ta->sp.state_dir, 0755) == -1 && errno != EEXIST) {
			fprintf(stderr, "ccw-supervisor tune: --state-dir %s: "
			    "%s\n", ta->sp.state_dir, strerror(errno));
			return -1;
		}
		if (realpath(ta->sp.state_dir, ta->sdir) == NULL) {
			fprintf(stderr, "ccw-supervisor tune: --state-dir %s: "
			    "%s\n", ta->sp.state_dir, strerror(errno));
			return -1;
		}
		ta->sp.state_dir = ta->sdir;
	}
	ta->sp.skill_dir = ta->skill;
	return 0;
}

/* The run once the command line is read: configuration, then the run. */
static int
tune_cli_go(struct cmd_opts *o, struct tune_args *ta)
{
	struct plan_overrides	 over;
	char			*err = NULL;

	cmd_opts_overrides(o, &over);
	if (cmd_opts_load(o, &err) != 0) {
		fprintf(stderr, "ccw-supervisor tune: %s\n", err);
		free(err);
		return EXIT_USAGE;
	}
	ta->sp.focus = (const char *const *)ta->focus.v;
	ta->sp.nfocus = ta->focus.n;
	ta->sp.cfg = &o->cfg;
	ta->sp.root = o->cwd;
	ta->sp.over = &over;
	return tune_cli_run(o, &ta->sp, ta->json);
}

int
cmd_tune(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "tool", required_argument, NULL, 't' },
		{ "model", required_argument, NULL, 'M' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "nudge-ms", required_argument, NULL, 'N' },
		{ "grace-ms", required_argument, NULL, 'G' },
		{ "config", required_argument, NULL, 'f' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "focus", required_argument, NULL, 'F' },
		{ "mode", required_argument, NULL, 'm' },
		{ "max-iterations", required_argument, NULL, 'I' },
		{ "max-errors", required_argument, NULL, 'E' },
		{ "resume", required_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct cmd_opts		 o;
	struct tune_args	 ta;
	int			 ch, r, rc = EXIT_USAGE;

	cmd_opts_init(&o);
	/* the workflow the tune command runs, by its table's name */
	o.wf = workflow_find("skill-tune");
	memset(&ta, 0, sizeof ta);
	ta.sp.max_iterations = 5;
	ta.sp.max_errors = 3;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:m:h", longopts, NULL)) != -1)
		if ((r = tune_cli_opt(&o, &ta, ch, optarg)) != 0) {
			if (r > 0) {
				tune_usage(stdout);
				cmd_opts_free(&o);
				strv_clear(&ta.focus);
				return EXIT_OK;
			}
			goto usage;
		}
	if (argc - optind != (ta.sp.resume_id != NULL ? 1 : 2)) {
		fprintf(stderr, "ccw-supervisor tune: need SKILL_DIR and %s\n",
		    ta.sp.resume_id != NULL ? "nothing else with --resume" :
		    "a description of what is wrong");
		goto usage;
	}
	if (tune_cli_dirs(&ta, argv[optind]) != 0)
		goto out;
	ta.sp.description = ta.sp.resume_id == NULL ? argv[optind + 1] : NULL;
	if (ta.sp.description != NULL && *ta.sp.description == '\0') {
		fprintf(stderr, "ccw-supervisor tune: the description is "
		    "empty\n");
		goto usage;
	}
	rc = tune_cli_go(&o, &ta);
	goto out;
usage:
	tune_usage(stderr);
	rc = EXIT_USAGE;
out:
	strv_clear(&ta.focus);
	cmd_opts_free(&o);
	return rc;
}
