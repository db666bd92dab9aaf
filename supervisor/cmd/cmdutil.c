/*
 * cmdutil.c: shared option handling for the agent, control and run
 * commands: the configuration and state directory they name, the
 * command line as plan_spawn's overrides and the api's plan_base; the
 * stop signals of the long-running commands; JSON output.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "flowdef.h"
#include "workflows.h"
#include "clock.h"
#include "cgroup.h"
#include "cmdutil.h"
#include "log.h"
#include "retire.h"
#include "sigfd.h"
#include "state.h"
#include "xmalloc.h"

/* Empty options. */
void
cmd_opts_init(struct cmd_opts *o)
{
	memset(o, 0, sizeof *o);
}

/* Parse a millisecond count: digits only, no overflow. */
static int
cmd_parse_ms(const char *s, uint64_t *out)
{
	char			*end;
	unsigned long long	 v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

/*
 * --log-max: bytes, with an optional K, M or G (KiB, MiB, GiB) as people
 * write log sizes; 0 for no cap.  At most INT64_MAX: it travels as JSON.
 */
static int
cmd_parse_bytes(const char *s, struct log_max *out)
{
	static const char	 units[] = "KMG";
	char			*end;
	const char		*u;
	unsigned long long	 v;
	unsigned		 shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	if (*end != '\0') {
		if ((u = strchr(units, *end)) == NULL || end[1] != '\0')
			return -1;
		shift = 10 * (unsigned)(u - units + 1);
	}
	if (v > (unsigned long long)INT64_MAX >> shift)
		return -1;
	out->bytes = (uint64_t)v << shift;
	out->set = 1;
	return 0;
}

/*
 * One option character (as the subcommands' getopt tables assign them;
 * CMD_OPT_LAUNCHER and CMD_OPT_REMOTE_WORKER for the launcher's).
 */
int
cmd_opts_set(struct cmd_opts *o, int ch, const char *arg)
{
	char	*err = NULL;

	switch (ch) {
	case CMD_OPT_LAUNCHER:
		if (launch_parse_string(arg, &o->launch.argv, &err) != 0) {
			fprintf(stderr, "ccw-supervisor: --launcher: %s\n", err);
			free(err);
			return -1;
		}
		o->launch.set = 1;
		return 0;
	case CMD_OPT_REMOTE_WORKER:
		if (*arg == '\0' || strpbrk(arg, " \t\n'\"\\$;&|<>`") != NULL) {
			fprintf(stderr, "ccw-supervisor: --remote-worker '%s': "
			    "a path without blanks or shell characters\n", arg);
			return -1;
		}
		free(o->launch.remote_worker);
		o->launch.remote_worker = xstrdup(arg);
		return 0;
	case CMD_OPT_CONTAINMENT:
		if (contain_mode_valid(arg)) {
			o->containment = arg;
			return 0;
		}
		fprintf(stderr, "ccw-supervisor: --containment '%s': cgroup, "
		    "sweep or auto\n", arg);
		return -1;
	case CMD_OPT_LOG_MAX:
		if (cmd_parse_bytes(arg, &o->log_max) == 0)
			return 0;
		fprintf(stderr, "ccw-supervisor: --log-max '%s': a number of "
		    "bytes, with K, M or G\n", arg);
		return -1;
	case 't': o->tool = arg; return 0;
	case 'c': o->command = arg; return 0;
	case 'm': o->model = arg; return 0;
	case 'f': o->config_path = arg; return 0;
	case 's': o->state_dir_opt = arg; return 0;
	case 'l': o->loop_id = arg; return 0;
	case 'C': o->root = arg; return 0;
	case 'T':
		o->have_timeout = 1;
		if (cmd_parse_ms(arg, &o->timeout_ms) == 0)
			return 0;
		break;
	case 'N':
		o->have_nudge = 1;
		if (cmd_parse_ms(arg, &o->nudge_ms) == 0)
			return 0;
		break;
	case 'G':
		o->have_grace = 1;
		if (cmd_parse_ms(arg, &o->grace_ms) == 0)
			return 0;
		break;
	case 'i':
		o->have_idle = 1;
		if (cmd_parse_ms(arg, &o->idle_ms) == 0)
			return 0;
		break;
	default:
		return -1;
	}
	fprintf(stderr, "ccw-supervisor: '%s' is not a number of "
	    "milliseconds\n", arg);
	return -1;
}

/*
 * Load the configuration and settle the root and state directory, once.
 * --state-dir wins; else the directory holding --loop-id's state file
 * (CCW's .workflow/.loop, then .loop); else where a new loop goes
 * (state_dir_default).
 */
int
cmd_opts_load(struct cmd_opts *o, char **err)
{
	char		 buf[PATH_MAX];
	struct stat	 sb;
	size_t		 i;

	if (o->cfg_loaded)
		return 0;
	if (o->launch.remote_worker != NULL && o->launch.argv.n == 0) {
		xasprintf(err, "--remote-worker needs --launcher (the "
		    "configuration's launcher takes \"remote_worker\")");
		return -1;
	}
	if (o->loop_id != NULL && !state_id_valid(o->loop_id)) {
		xasprintf(err, "invalid loop id '%s': use [A-Za-z0-9]"
		    "[A-Za-z0-9._-]{0,127}, no '..'", o->loop_id);
		return -1;
	}
	if (o->root != NULL) {
		if (realpath(o->root, buf) == NULL ||
		    stat(buf, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			xasprintf(err, "-C %s: not a directory", o->root);
			return -1;
		}
	} else if (getcwd(buf, sizeof buf) == NULL) {
		xasprintf(err, "getcwd: %s", strerror(errno));
		return -1;
	}
	o->cwd = xstrdup(buf);
	if (config_load(o->wf != NULL ? o->wf : workflow_default(),
	    o->config_path, o->cwd, NULL, &o->cfg, err) != 0)
		return -1;
	o->cfg_loaded = 1;
	/*
	 * The containment mode, --containment's, else the configuration's:
	 * every table of the process (sup_init, contain.c) reads it from
	 * the environment, as its workers' children would.
	 */
	if (o->containment != NULL || o->cfg.containment != NULL)
		setenv("CCW_CONTAINMENT", o->containment != NULL ?
		    o->containment : o->cfg.containment, 1);
	/* Never fatal (a malformed CCW file): said once, on stderr. */
	for (i = 0; i < o->cfg.nwarnings && !o->quiet_warnings; i++)
		fprintf(stderr, "ccw-supervisor: warning: %s\n",
		    o->cfg.warnings[i]);
	o->state_dir = o->state_dir_opt != NULL ?
	    xstrdup(o->state_dir_opt) : state_dir_for(o->cwd, o->loop_id);
	return 0;
}

/* The command line's part of a spawn plan (strings borrowed from o). */
void
cmd_opts_overrides(const struct cmd_opts *o, struct plan_overrides *over)
{
	memset(over, 0, sizeof *over);
	over->tool = o->tool;
	over->command = o->command;
	over->model = o->model;
	over->timeout_ms = o->timeout_ms;
	over->nudge_ms = o->nudge_ms;
	over->grace_ms = o->grace_ms;
	over->idle_ms = o->idle_ms;
	over->have_timeout = o->have_timeout;
	over->have_nudge = o->have_nudge;
	over->have_grace = o->have_grace;
	over->have_idle = o->have_idle;
	over->launch = o->launch.set ? &o->launch : NULL;
	over->log_max = o->log_max;
}

/*
 * A spawn request for o->role with o->message as its prompt: plan_spawn
 * over the loaded configuration and the command line.  The options
 * object in req is a new reference the caller releases.  The engine
 * changes nothing; this CLI wrapper writes the deadlines it did not set
 * back into o (timeout, nudge, grace), because `agent` and `control`
 * read them there for their ladders.
 */
int
cmd_opts_resolve(struct cmd_opts *o, struct agent_req *req, char **err)
{
	struct plan_overrides	over;
	struct plan_deadlines	dl;

	if (cmd_opts_load(o, err) != 0)
		return -1;
	cmd_opts_overrides(o, &over);
	if (plan_spawn(&o->cfg, o->cwd, o->role, &over, o->message, req, &dl,
	    err) != 0)
		return -1;
	o->timeout_ms = dl.timeout_ms;
	o->nudge_ms = dl.nudge_ms;
	o->grace_ms = dl.grace_ms;
	return 0;
}

/*
 * What control and serve plan the api's spawns from, filled once: the
 * loaded configuration, the root, the command line's overrides.  The
 * deadlines are the command line's (none unless given: the api's wait
 * and close bound the agent), never the role's.  Borrows from o.
 */
void
cmd_plan_base(const struct cmd_opts *o, struct plan_base *base)
{
	base->config = &o->cfg;
	base->root = o->cwd;
	cmd_opts_overrides(o, &base->over);
	base->over.have_timeout = base->over.have_nudge =
	    base->over.have_grace = 1;
}

/*
 * The front end's loop (guard) for its agents' ids and logs, opened at
 * its first spawn: a session that spawns nothing leaves no run lock and
 * no {id}.workers for a loop that does not exist.  0, or -1 with *err.
 */
int
cmd_guard_open(struct loop_guard *guard, const struct sup *sup, char **err)
{
	int	rc;

	if (guard->id != NULL)
		return 0;
	if ((rc = loopguard_open(guard, sup->state_dir, sup->loop_id,
	    err)) == 0 && (rc = loopguard_workers(guard, NULL, err)) == 0)
		return 0;
	loopguard_close(guard);
	return rc;
}

/*
 * The api's spawn plan for control and serve: the request planned over
 * the front end's base (plan_request), then the agent's id reserved in
 * the front end's loop (guard, opened at the first spawn).
 */
int
cmd_plan_spawn(const struct plan_base *base, struct loop_guard *guard,
    struct sup *sup, const struct api_spawn *sp, struct agent_req *ar,
    char **err)
{
	struct plan_request	rq;

	memset(&rq, 0, sizeof rq);
	rq.role = sp->role;
	rq.prompt = sp->message;
	rq.tool = sp->tool;
	rq.command = sp->command;
	rq.model = sp->model;
	rq.cwd = sp->cwd;
	if (plan_request(base, &rq, ar, NULL, err) != 0)
		return -1;
	if (cmd_guard_open(guard, sup, err) != 0 ||
	    loopguard_reserve(guard, sup, err) != 0) {
		json_decref(ar->options);
		ar->options = NULL;
		return -1;
	}
	return 0;
}

/* Release what cmd_opts_load derived. */
void
cmd_opts_free(struct cmd_opts *o)
{
	if (o->cfg_loaded)
		config_free(&o->cfg);
	free(o->state_dir);
	free(o->cwd);
	launch_clear(&o->launch);
	memset(o, 0, sizeof *o);
}

/*
 * SIGTERM, SIGINT and SIGHUP as events calling fn (the long-running
 * commands': control, its --connect, serve, mcp, acp), then the
 * deferred ones may come in.
 */
void
cmd_signals(struct event_base *base, struct event **sigs,
    void (*fn)(evutil_socket_t, short, void *), void *arg)
{
	static const int	signos[CMD_NSIG] = { SIGTERM, SIGINT, SIGHUP };
	int			i;

	for (i = 0; i < CMD_NSIG; i++) {
		sigs[i] = evsignal_new(base, signos[i], fn, arg);
		if (sigs[i] == NULL || evsignal_add(sigs[i], NULL) != 0)
			fatalx("cannot handle signal %d", signos[i]);
	}
	sigfd_release();
}

/*
 * What a command that got signal SIG records in the loops it leaves
 * running (host_loop_interrupt): "WHO got signal 15 (Terminated)".
 */
void
cmd_signal_why(char *buf, size_t len, const char *who, int sig)
{
	snprintf(buf, len, "%s got signal %d (%s)", who, sig, strsignal(sig));
}

/* Print a JSON value on stdout: indented, or one line with compact. */
void
cmd_print_json(const json_t *j, int compact)
{
	char	*s;

	s = json_dumps(j, compact ? JSON_COMPACT : JSON_INDENT(2));
	if (s != NULL) {
		puts(s);
		free(s);
	}
	fflush(stdout);
}

/* An event as one NDJSON line on stdout: {"event": NAME, ...fields,
 * "timestamp"}, flushed at once (a front end reads it live). */
void
cmd_emit_event(const char *name, const json_t *fields)
{
	json_t	*o;
	char	 now[40], *s;

	o = json_pack("{s:s}", "event", name);
	json_object_update(o, (json_t *)fields);
	clock_iso(NULL, 1, now, sizeof now);
	json_object_set_new(o, "timestamp", json_string(now));
	if ((s = json_dumps(o, JSON_COMPACT)) != NULL) {
		puts(s);
		fflush(stdout);
		free(s);
	}
	json_decref(o);
}

/*
 * The retention of a long-lived front end's agent table (serve's
 * /api/agents, control, mcp): config keep_agents, clamped to what
 * retire.c counts in.  Call retire_soon in the table's done hook and
 * retire_free before sup_free.
 */
struct retire *
cmd_retire_new(const struct cmd_opts *o, struct sup *sup)
{
	return retire_new(sup, (unsigned)(o->cfg.keep_agents > UINT_MAX ?
	    UINT_MAX : o->cfg.keep_agents));
}

/*
 * A positive number option (a budget, a count), or a usage error said
 * as the command's: batch's and run's alike.
 */
int
cmd_num(const char *cmd, const char *opt, const char *s, double max,
    double *out)
{
	char	*end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(*out) ||
	    *out <= 0 || *out > max) {
		fprintf(stderr, "ccw-supervisor %s: %s: \"%s\" is not a "
		    "number above 0 (at most %.0f)\n", cmd, opt, s, max);
		return -1;
	}
	return 0;
}

/*
 * A raised budget written for the process that drives the loop or batch
 * (its lock held): said once, the same words for both (run --loop-id,
 * batch --resume); what the driver does with it is its own.
 */
void
cmd_budget_relayed(const char *cmd, const char *kind, const char *id,
    const char *driver)
{
	fprintf(stderr, "ccw-supervisor %s: %s %s: budget set for its %s (a "
	    "%s its budget paused goes on there)\n", cmd, kind, id, driver,
	    kind);
}
