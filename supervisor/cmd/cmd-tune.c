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

#include "chan.h"
#include "cmdutil.h"
#include "log.h"
#include "sigfd.h"
#include "sup.h"
#include "tune.h"
#include "tuneint.h"
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

/* --focus a,b: each a diagnosis role; the list in out. */
static int
tune_cli_focus(const char *arg, struct strv *out)
{
	const char	*p = arg, *e;
	char		*w;
	size_t		 n;
	int		 r, ok;

	while (*p != '\0') {
		e = p + strcspn(p, ",");
		n = (size_t)(e - p);
		w = xstrndup(p, n);
		for (r = 0, ok = 0; r < TUNE_NDIAG && !ok; r++)
			ok = strcmp(w, tune_categories[r].role) == 0;
		if (!ok) {
			fprintf(stderr, "ccw-supervisor tune: --focus: '%s' is "
			    "no diagnosis area (context, memory, dataflow, "
			    "agent, docs, token_consumption)\n", w);
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
	struct plan_overrides	 over;
	struct tune_spec	 sp;
	struct strv		 focus = { NULL, 0 };
	char			 skill[PATH_MAX], sdir[PATH_MAX];
	char			*err = NULL;
	struct stat		 sb;
	int			 ch, json = 0, rc = EXIT_USAGE;

	cmd_opts_init(&o);
	o.wf = &skill_tune_workflow;
	memset(&sp, 0, sizeof sp);
	sp.max_iterations = 5;
	sp.max_errors = 3;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:m:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			json = 1;
			break;
		case 'h':
			tune_usage(stdout);
			cmd_opts_free(&o);
			return EXIT_OK;
		case 'M':
			o.model = optarg;
			break;
		case 'S':
			sp.state_dir = optarg;
			break;
		case 'R':
			sp.resume_id = optarg;
			break;
		case 'F':
			if (tune_cli_focus(optarg, &focus) != 0)
				goto usage;
			break;
		case 'm':
			if (strcmp(optarg, "interactive") == 0)
				sp.interactive = 1;
			else if (strcmp(optarg, "auto") != 0) {
				fprintf(stderr, "ccw-supervisor tune: -m: '%s': "
				    "auto or interactive\n", optarg);
				goto usage;
			}
			break;
		case 'I':
			if (tune_cli_count("--max-iterations", optarg,
			    &sp.max_iterations) != 0)
				goto usage;
			break;
		case 'E':
			if (tune_cli_count("--max-errors", optarg,
			    &sp.max_errors) != 0)
				goto usage;
			break;
		default:
			if (cmd_opts_set(&o, ch, optarg) != 0)
				goto usage;
		}
	}
	if (argc - optind != (sp.resume_id != NULL ? 1 : 2)) {
		fprintf(stderr, "ccw-supervisor tune: need SKILL_DIR and %s\n",
		    sp.resume_id != NULL ? "nothing else with --resume" :
		    "a description of what is wrong");
		goto usage;
	}
	if (realpath(argv[optind], skill) == NULL || stat(skill, &sb) != 0 ||
	    !S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "ccw-supervisor tune: %s: not a directory\n",
		    argv[optind]);
		goto out;
	}
	if (sp.state_dir != NULL) {
		if (mkdir(sp.state_dir, 0755) == -1 && errno != EEXIST) {
			fprintf(stderr, "ccw-supervisor tune: --state-dir %s: "
			    "%s\n", sp.state_dir, strerror(errno));
			goto out;
		}
		if (realpath(sp.state_dir, sdir) == NULL) {
			fprintf(stderr, "ccw-supervisor tune: --state-dir %s: "
			    "%s\n", sp.state_dir, strerror(errno));
			goto out;
		}
		sp.state_dir = sdir;
	}
	sp.skill_dir = skill;
	sp.description = sp.resume_id == NULL ? argv[optind + 1] : NULL;
	if (sp.description != NULL && *sp.description == '\0') {
		fprintf(stderr, "ccw-supervisor tune: the description is "
		    "empty\n");
		goto usage;
	}
	cmd_opts_overrides(&o, &over);
	if (cmd_opts_load(&o, &err) != 0) {
		fprintf(stderr, "ccw-supervisor tune: %s\n", err);
		free(err);
		goto out;
	}
	sp.focus = (const char *const *)focus.v;
	sp.nfocus = focus.n;
	sp.cfg = &o.cfg;
	sp.root = o.cwd;
	sp.over = &over;
	rc = tune_cli_run(&o, &sp, json);
	goto out;
usage:
	tune_usage(stderr);
	rc = EXIT_USAGE;
out:
	strv_clear(&focus);
	cmd_opts_free(&o);
	return rc;
}
