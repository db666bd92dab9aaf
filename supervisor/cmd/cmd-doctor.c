/*
 * cmd-doctor.c: `ccw-supervisor doctor`: gathers what a loop here would
 * use (configuration files, state directory, each tool's path, version
 * and credential sources, each role's tool, model, deadlines and argv)
 * into one JSON report, printed as JSON or as tables (doctor-print.c).
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapter.h"
#include "flowdef.h"
#include "workflows.h"
#include "cmdutil.h"
#include "doctor.h"
#include "sup.h"
#include "state.h"
#include "xmalloc.h"

/* What one doctor run holds while it builds the report. */
struct doctor {
	struct cmd_opts	 o;
	const char	*home;		/* NULL: no $HOME */
	uint64_t	 probe_ms;
	json_t		*ccw_tools;	/* CCW's cli-tools.json "tools", or NULL */
	json_t		*report;
	json_t		*warnings;	/* borrowed from report */
	char		*config_err;	/* why config_load failed, or NULL */
	int		 chosen_err;	/* it failed on our chosen file */
};

/* The --help text. */
static void
doctor_usage(FILE *fp)
{
	fprintf(fp,
"usage: ccw-supervisor doctor [-C ROOT] [--config F] [--state-dir DIR]\n"
"           [--probe-ms N] [--json]\n"
"\n"
"Report what a loop in ROOT would use: the configuration files read, the\n"
"state directory, each tool (enabled, path, `--version`, which credential\n"
"sources are present; never their values), the default tool and why, and\n"
"per role the tool, model, deadlines and argv.  --probe-ms: deadline of\n"
"each `--version` run (default %d).  --json: one JSON object.\n"
"Exit: 0 the default tool can run, 1 it cannot (or the configuration\n"
"does not load), 2 usage.\n", DOCTOR_VERSION_MS);
}

/* A warning goes into the report; the human output lists them. */
static void
doctor_warn(struct doctor *d, const char *msg)
{
	json_array_append_new(d->warnings, json_string(msg));
}

/* One file of the report's "config.files": what it is and what became of it. */
static void
doctor_file(json_t *files, const char *what, const char *path,
    const char *status, const char *error)
{
	json_t	*f = json_pack("{s:s, s:s, s:s}", "what", what, "path", path,
	    "status", status);

	if (error != NULL)
		json_object_set_new(f, "error", json_string(error));
	json_array_append_new(files, f);
}

/*
 * Is something at path for config_load's stat?  It reads the first such
 * candidate and fails on that one only: which file an error is about is
 * known from the files, never from the error's words.
 */
static int
doctor_is_there(const char *path)
{
	struct stat	sb;

	return stat(path, &sb) == 0 || errno != ENOENT;
}

/* A regular file exists at path. */
static int
doctor_is_file(const char *path)
{
	struct stat	sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/*
 * Our config files in search order, each read, absent, skipped (a file
 * before it was read) or in error.  Returns the one that was (or would
 * have been) read, owned by the caller, or NULL.
 */
static char *
doctor_our_files(struct doctor *d, json_t *files)
{
	char	*cand[2] = { NULL, NULL }, *chosen = NULL;
	size_t	 i;
	int	 loaded = 0;

	if (d->o.config_path != NULL) {
		chosen = xstrdup(d->o.config_path);
		d->chosen_err = d->config_err != NULL;
		doctor_file(files, "config (--config)", chosen,
		    d->chosen_err ? "error" : "read", d->chosen_err ?
		    d->config_err : NULL);
		return chosen;
	}
	xasprintf(&cand[0], "%s/.loop/config.json", d->o.cwd);
	if (d->home != NULL)
		xasprintf(&cand[1], "%s/.config/ccw-supervisor/config.json",
		    d->home);
	for (i = 0; i < 2; i++) {
		if (cand[i] == NULL)
			continue;
		if (d->config_err != NULL && !loaded &&
		    doctor_is_there(cand[i])) {
			doctor_file(files, "config", cand[i], "error",
			    d->config_err);
			d->chosen_err = chosen == NULL &&
			    doctor_is_file(cand[i]);
		} else if (!doctor_is_file(cand[i]))
			doctor_file(files, "config", cand[i], "absent", NULL);
		else
			doctor_file(files, "config", cand[i],
			    chosen != NULL ? "skipped" : "read", NULL);
		loaded |= doctor_is_there(cand[i]);
		if (chosen == NULL && doctor_is_file(cand[i]))
			chosen = xstrdup(cand[i]);
	}
	free(cand[0]);
	free(cand[1]);
	return chosen;
}

/*
 * CCW's own files, read as CCW reads them: cli-tools.json for the tools
 * it knows (kept for the extra tools and envFile) and cli-settings.json
 * for its default tool.  A malformed file is a warning.
 */
static void
doctor_ccw_files(struct doctor *d, json_t *files, json_t *cfgrep)
{
	json_error_t	 jerr;
	json_t		*j, *v;
	char		*p, *msg;
	int		 k;

	for (k = 0; k < 2; k++) {
		if ((p = config_ccw_path(d->home, k == 0 ?
		    "cli-tools.json" : "cli-settings.json")) == NULL)
			continue;
		if (!doctor_is_file(p)) {
			doctor_file(files, k == 0 ? "ccw tools" :
			    "ccw settings", p, "absent", NULL);
			free(p);
			continue;
		}
		j = json_load_file(p, 0, &jerr);
		if (j == NULL || !json_is_object(j)) {
			xasprintf(&msg, "%s: line %d: %s", p, j == NULL ?
			    jerr.line : 1, j == NULL ? jerr.text :
			    "expected a JSON object");
			doctor_file(files, k == 0 ? "ccw tools" :
			    "ccw settings", p, "malformed", msg);
			doctor_warn(d, msg);
			free(msg);
		} else if (k == 0) {
			doctor_file(files, "ccw tools", p, "read", NULL);
			v = json_object_get(j, "tools");
			if (json_is_object(v))
				d->ccw_tools = json_incref(v);
		} else {
			doctor_file(files, "ccw settings", p, "read", NULL);
			v = json_object_get(j, "defaultTool");
			if (json_is_string(v))
				json_object_set(cfgrep, "ccw_default_tool", v);
		}
		json_decref(j);
		free(p);
	}
}

/*
 * Load the configuration as run and agent would.  If it does not load,
 * that is a warning: the report goes on with the file that did parse (or
 * the built-in defaults) so the rest is still useful.  Returns -1 only
 * for usage errors (-C not a directory, a bad loop id).
 */
static int
doctor_config(struct doctor *d)
{
	json_t	*cfgrep, *files;
	char	*err = NULL, *chosen, *msg;

	if (cmd_opts_load(&d->o, &err) != 0) {
		if (d->o.cwd == NULL) {
			fprintf(stderr, "ccw-supervisor doctor: %s\n", err);
			free(err);
			return -1;
		}
		d->config_err = err;
		err = NULL;
	}
	files = json_array();
	cfgrep = json_pack("{s:o}", "files", files);
	json_object_set_new(d->report, "config", cfgrep);
	chosen = doctor_our_files(d, files);
	doctor_ccw_files(d, files, cfgrep);
	if (d->config_err != NULL) {
		xasprintf(&msg, "the configuration does not load, so run and "
		    "agent refuse to start: %s", d->config_err);
		doctor_warn(d, msg);
		free(msg);
		json_object_set_new(cfgrep, "error",
		    json_string(d->config_err));
		/* Our file alone if it is fine, else the built-ins. */
		if (chosen == NULL || d->chosen_err ||
		    config_load(workflow_default(), chosen, NULL, "",
		    &d->o.cfg, &err) != 0) {
			free(err);
			err = NULL;
			(void)config_load(workflow_default(), NULL, NULL, "",
			    &d->o.cfg, &err);
		}
		free(err);
		d->o.cfg_loaded = 1;
	}
	free(chosen);
	json_object_set_new(cfgrep, "source", json_string(d->o.cfg.source));
	return 0;
}

/*
 * The state directory a new loop here would use, and why: --state-dir,
 * CCW's ROOT/.workflow/.loop in a CCW project, else ROOT/.loop.
 */
static void
doctor_state_dir(struct doctor *d)
{
	struct stat	 sb;
	const char	*kind;
	char		*alt;

	xasprintf(&alt, "%s/.workflow/.loop", d->o.cwd);
	if (d->o.state_dir == NULL)	/* the configuration did not load */
		d->o.state_dir = d->o.state_dir_opt != NULL ?
		    xstrdup(d->o.state_dir_opt) : state_dir_for(d->o.cwd,
		    d->o.loop_id);
	if (d->o.state_dir_opt != NULL)
		kind = "--state-dir";
	else if (strcmp(d->o.state_dir, alt) == 0)
		kind = ".workflow/.loop";
	else
		kind = ".loop";
	json_object_set_new(d->report, "state_dir", json_pack(
	    "{s:s, s:s, s:b}", "path", d->o.state_dir, "kind", kind,
	    "exists", stat(d->o.state_dir, &sb) == 0 && S_ISDIR(sb.st_mode)));
	free(alt);
}

/*
 * The containment mode a worker started here would get, and why
 * (contain.c: the configuration's, $CCW_CONTAINMENT, else auto).  The
 * probe's cgroup is removed again.  Limits need controllers in the v2
 * hierarchy: which are enabled below us is said too.
 */
static void
doctor_containment(struct doctor *d)
{
	struct containment	c;

	(void)contain_choose(&c, NULL, 0);
	json_object_set_new(d->report, "containment", json_pack(
	    "{s:s, s:s, s:s?, s:b, s:s?}", "mode", contain_mode_name(c.mode),
	    "why", c.why, "cgroup_v2", c.mount, "cgroup_kill", c.has_kill,
	    "controllers", c.controllers));
	contain_clear(&c);
}

/* CCW's entry for a tool, when cli-tools.json has one. */
static json_t *
doctor_ccw_tool(struct doctor *d, const char *name)
{
	json_t	*t = json_object_get(d->ccw_tools, name);

	return json_is_object(t) ? t : NULL;
}

/* CCW's envFile for a tool, with ~ expanded; owned, or NULL. */
static char *
doctor_env_file(struct doctor *d, const char *name)
{
	json_t	*v = json_object_get(doctor_ccw_tool(d, name), "envFile");
	char	*p;

	if (!json_is_string(v) || json_string_length(v) == 0)
		return NULL;
	if (strncmp(json_string_value(v), "~/", 2) == 0 && d->home != NULL)
		xasprintf(&p, "%s/%s", d->home, json_string_value(v) + 2);
	else
		p = xstrdup(json_string_value(v));
	return p;
}

/*
 * Resolve the tool on PATH and start its --version run; a tool not
 * found is recorded at once and *started is 0.
 */
static void
doctor_probe_start(struct doctor *d, json_t *t, const char *binary,
    const char *arg, struct doctor_run *r, int *started)
{
	char	*path;

	*started = 0;
	memset(r, 0, sizeof *r);
	r->fd = r->pidfd = -1;
	r->done = 1;		/* nothing to wait for unless started */
	path = config_resolve_path(binary, NULL);
	json_object_set_new(t, "path", path != NULL ? json_string(path) :
	    json_null());
	if (path == NULL) {
		json_object_set_new(t, "version", json_null());
		json_object_set_new(t, "runnable", json_false());
		json_object_set_new(t, "problem", json_string("not found on "
		    "PATH"));
		return;
	}
	doctor_run_start(r, path, arg, d->o.cwd);
	*started = 1;
	free(path);
}

/* A finished --version run into the tool's object. */
static void
doctor_probe_end(json_t *t, struct doctor_run *r)
{
	char	*why;

	json_object_set_new(t, "version", r->first_line != NULL &&
	    r->first_line[0] != '\0' && doctor_run_ok(r) ?
	    json_string(r->first_line) : json_null());
	json_object_set_new(t, "version_ms", json_integer((json_int_t)r->ms));
	json_object_set_new(t, "runnable", json_boolean(doctor_run_ok(r)));
	if ((why = doctor_run_describe(r)) != NULL) {
		json_object_set_new(t, "problem", json_string(why));
		free(why);
	}
	doctor_run_free(r);
}

/* Facts a user would otherwise learn from a failed loop. */
static void
doctor_tool_notes(json_t *t, const struct adapter *ad)
{
	json_t		*notes = json_object_get(t, "notes");
	const char	*sb;

	if (ad->root_refuses != NULL && geteuid() == 0) {
		sb = getenv(ad->root_unless_env);
		if (sb != NULL && strcmp(sb, "1") == 0)
			json_array_append_new(notes, json_sprintf("running as "
			    "root: %s=1 is set, so %s accepts %s",
			    ad->root_unless_env, ad->name, ad->root_refuses));
		else
			json_array_append_new(notes, json_sprintf("running as "
			    "root: %s refuses %s unless %s=1 is set", ad->name,
			    ad->root_refuses, ad->root_unless_env));
	}
}

/* One adapter tool from the configuration; its --version is started. */
static json_t *
doctor_tool(struct doctor *d, const struct tool_cfg *tc,
    struct doctor_run *r, int *started)
{
	const struct adapter	*ad = adapter_find(tc->name);
	json_t			*t;
	char			*env_file;

	t = json_pack("{s:s, s:b, s:b, s:s, s:s?, s:[]}", "name", tc->name,
	    "adapter", 1, "enabled", tc->enabled, "binary", tc->path != NULL ?
	    tc->path : tc->name, "model", tc->model, "notes");
	doctor_probe_start(d, t, tc->path != NULL ? tc->path : tc->name,
	    ad->version_arg != NULL ? ad->version_arg : "--version", r,
	    started);
	env_file = doctor_env_file(d, tc->name);
	json_object_set_new(t, "credentials", ad->creds == NULL ?
	    json_pack("{s:b, s:b, s:[]}", "needed", 0, "configured", 0,
	    "sources") : doctor_credentials(ad, d->home, env_file));
	json_object_set_new(t, "base_urls", doctor_base_urls(ad));
	if (env_file != NULL)
		json_array_append_new(json_object_get(t, "notes"), json_pack(
		    "s", "CCW's envFile is loaded by CCW, not by ccw-supervisor"));
	free(env_file);
	doctor_tool_notes(t, ad);
	return t;
}

/* Tools CCW knows that have no adapter here: listed, never run. */
static void
doctor_extra_tools(struct doctor *d, json_t *tools)
{
	const char	*name;
	json_t		*v, *t;
	char		*path;

	json_object_foreach(d->ccw_tools, name, v) {
		if (config_tool(&d->o.cfg, name) != NULL || !json_is_object(v))
			continue;
		path = config_resolve_path(name, NULL);
		t = json_pack("{s:s, s:b, s:b, s:s, s:s?, s:n, s:b, s:s, s:[s]}",
		    "name", name, "adapter", 0, "enabled",
		    json_is_true(json_object_get(v, "enabled")), "binary", name,
		    "path", path, "version", "runnable", 0, "problem",
		    "no ccw-supervisor adapter (defined in CCW's cli-tools.json)",
		    "notes", "not run by ccw-supervisor");
		json_array_append_new(tools, t);
		free(path);
	}
}

/*
 * Every tool: the configuration's adapters, their --version runs all at
 * once, then CCW's other tools.
 */
static void
doctor_tools(struct doctor *d)
{
	struct doctor_run	*runs;
	json_t			*tools = json_array();
	size_t			 i, n = d->o.cfg.ntools;
	int			*started;

	runs = xcalloc(n, sizeof *runs);
	started = xcalloc(n, sizeof *started);
	for (i = 0; i < n; i++)
		json_array_append_new(tools, doctor_tool(d, &d->o.cfg.tools[i],
		    &runs[i], &started[i]));
	doctor_run_wait(runs, n, d->probe_ms);
	for (i = 0; i < n; i++) {
		if (started[i])
			doctor_probe_end(json_array_get(tools, i), &runs[i]);
	}
	free(runs);
	free(started);
	doctor_extra_tools(d, tools);
	json_object_set_new(d->report, "tools", tools);
}

/* The argv the worker would exec, from the same adapter it uses. */
static json_t *
doctor_argv(const struct agent_req *req, int *stdin_prompt)
{
	const struct adapter	*ad = adapter_find(req->tool);
	struct tool_spec	 spec;
	struct strv		 argv;
	json_t			*arr;
	size_t			 i;

	*stdin_prompt = 0;
	if (ad == NULL)
		return json_null();
	memset(&spec, 0, sizeof spec);
	memset(&argv, 0, sizeof argv);
	spec.tool = req->tool;
	spec.binary = json_string_value(json_object_get(req->options, "path"));
	spec.model = req->model;
	spec.command = req->command;
	spec.prompt = "PROMPT";
	spec.options = req->options;
	ad->build_argv(&spec, NULL, NULL, &argv);
	arr = json_array();
	for (i = 0; i < argv.n; i++)
		json_array_append_new(arr, json_string(argv.v[i]));
	strv_clear(&argv);
	*stdin_prompt = ad->prompt_stdin;
	return arr;
}

/* run checks every role before it starts: one that cannot run stops it. */
static void
doctor_role_warn(struct doctor *d, const char *role, const char *why)
{
	char	*msg;

	xasprintf(&msg, "run refuses to start a loop here: role %s: %s",
	    role, why);
	doctor_warn(d, msg);
	free(msg);
}

/* What a loop here would run, role by role, as `run` resolves it. */
static void
doctor_roles(struct doctor *d)
{
	struct agent_req	 req;
	json_t			*roles = json_array(), *r, *argv;
	char			*err = NULL;
	size_t			 i;
	int			 stdin_prompt;

	for (i = 0; i < d->o.cfg.nroles; i++) {
		d->o.role = d->o.cfg.wf->roles[i].name;
		d->o.message = "";
		r = json_pack("{s:s}", "role", d->o.role);
		if (cmd_opts_resolve(&d->o, &req, &err) != 0) {
			json_object_set_new(r, "tool", json_string(
			    d->o.cfg.roles[i].tool != NULL ?
			    d->o.cfg.roles[i].tool : d->o.cfg.default_tool));
			json_object_update_new(r, json_pack("{s:I, s:I, s:I, "
			    "s:I, s:s}", "timeout_ms", (json_int_t)
			    d->o.cfg.roles[i].timeout_ms, "nudge_ms",
			    (json_int_t)d->o.cfg.roles[i].nudge_ms, "grace_ms",
			    (json_int_t)d->o.cfg.roles[i].grace_ms, "idle_ms",
			    (json_int_t)d->o.cfg.roles[i].idle_ms, "problem",
			    err));
			doctor_role_warn(d, d->o.cfg.wf->roles[i].name, err);
			free(err);
			err = NULL;
			json_array_append_new(roles, r);
			continue;
		}
		argv = doctor_argv(&req, &stdin_prompt);
		json_object_update_new(r, json_pack("{s:s, s:s?, s:s?, s:s?, "
		    "s:I, s:I, s:I, s:I, s:o, s:s}", "tool", req.tool, "model",
		    req.model, "permission", d->o.cfg.roles[i].permission,
		    "command", req.command, "timeout_ms",
		    (json_int_t)d->o.timeout_ms, "nudge_ms",
		    (json_int_t)d->o.nudge_ms, "grace_ms",
		    (json_int_t)d->o.grace_ms, "idle_ms",
		    (json_int_t)req.idle_ms, "argv", argv, "prompt_via",
		    stdin_prompt ? "stdin" : "argv"));
		json_decref(req.options);
		json_array_append_new(roles, r);
	}
	d->o.role = NULL;
	d->o.message = NULL;
	json_object_set_new(d->report, "roles", roles);
}

/* The tool's entry in the report, by name. */
static json_t *
doctor_find_tool(json_t *report, const char *name)
{
	json_t	*t;
	size_t	 i;

	json_array_foreach(json_object_get(report, "tools"), i, t) {
		if (strcmp(json_string_value(json_object_get(t, "name")),
		    name) == 0)
			return t;
	}
	return NULL;
}

/*
 * The default tool, why it is the default, and whether it can run: that
 * decides the exit status.  Returns EXIT_OK or EXIT_FAILED.
 */
static int
doctor_default(struct doctor *d)
{
	const char	*name = d->o.cfg.default_tool, *problem = NULL;
	json_t		*t, *dt;
	char		*why;
	int		 ok;

	why = xstrdup(d->o.cfg.default_reason != NULL ?
	    d->o.cfg.default_reason : "built-in default");
	t = doctor_find_tool(d->report, name);
	ok = t != NULL && json_is_true(json_object_get(t, "enabled")) &&
	    json_is_true(json_object_get(t, "runnable"));
	if (t == NULL)
		problem = "not a known tool";
	else if (!json_is_true(json_object_get(t, "enabled")))
		problem = "disabled in the configuration";
	else if (!ok)
		problem = json_string_value(json_object_get(t, "problem"));
	if (ok && d->config_err != NULL) {
		ok = 0;
		problem = "the configuration does not load";
	}
	dt = json_pack("{s:s, s:s, s:b, s:s?}", "name", name, "reason", why,
	    "runnable", ok, "problem", problem);
	json_object_set_new(d->report, "default_tool", dt);
	free(why);
	return ok ? EXIT_OK : EXIT_FAILED;
}

/* Options: 0 to go on, -1 after --help, else EXIT_USAGE. */
static int
doctor_options(struct doctor *d, int argc, char **argv, int *json)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "probe-ms", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char	*end;
	int	 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1) {
		if (ch == 'j')
			*json = 1;
		else if (ch == 'h') {
			doctor_usage(stdout);
			return -1;	/* help printed: exit 0 */
		} else if (ch == 'p') {
			errno = 0;
			d->probe_ms = strtoull(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end != '\0' ||
			    errno != 0 || d->probe_ms == 0 ||
			    d->probe_ms > 600000) {
				fprintf(stderr, "ccw-supervisor doctor: "
				    "--probe-ms: '%s' is not 1..600000\n",
				    optarg);
				return EXIT_USAGE;
			}
		} else if (cmd_opts_set(&d->o, ch, optarg) != 0) {
			doctor_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ccw-supervisor doctor: unexpected argument "
		    "'%s'\n", argv[optind]);
		doctor_usage(stderr);
		return EXIT_USAGE;
	}
	return 0;
}

int
cmd_doctor(int argc, char **argv)
{
	struct doctor	 d;
	char		*worker;
	int		 json = 0, rc;

	memset(&d, 0, sizeof d);
	cmd_opts_init(&d.o);
	d.o.quiet_warnings = 1;
	d.probe_ms = DOCTOR_VERSION_MS;
	if ((rc = doctor_options(&d, argc, argv, &json)) != 0)
		return rc < 0 ? EXIT_OK : rc;
	d.home = getenv("HOME");
	if (d.home != NULL && *d.home == '\0')
		d.home = NULL;
	d.report = json_pack("{s:s, s:i, s:[]}", "version", PACKAGE_VERSION,
	    "euid", (int)geteuid(), "warnings");
	d.warnings = json_object_get(d.report, "warnings");
	if (doctor_config(&d) != 0) {
		json_decref(d.report);
		cmd_opts_free(&d.o);
		return EXIT_USAGE;
	}
	json_object_set_new(d.report, "root", json_string(d.o.cwd));
	doctor_state_dir(&d);
	doctor_containment(&d);
	worker = spawn_worker_path(NULL);
	json_object_set_new(d.report, "worker", json_pack("{s:s, s:b}",
	    "path", worker, "found", access(worker, X_OK) == 0));
	free(worker);
	doctor_tools(&d);
	doctor_roles(&d);
	rc = doctor_default(&d);
	json_object_set_new(d.report, "exit", json_integer(rc));
	if (json)
		cmd_print_json(d.report, 0);
	else
		doctor_print(d.report, stdout);
	json_decref(d.report);
	json_decref(d.ccw_tools);
	free(d.config_err);
	cmd_opts_free(&d.o);
	return rc;
}
