/*
 * hostfix.c: the set-up and tear-down of a host of loops for the tests
 * (test-loops, test-hostlock, test-host): a project in a temp directory
 * whose five roles are fake agents, the base, the host, the configuration.
 */
#include <config.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "ccw-loop.h"
#include "clock.h"
#include "hostfix.h"
#include "log.h"
#include "state.h"
#include "tap.h"
#include "xmalloc.h"

/*
 * The fake agent's command for each role: a result after a short sleep;
 * or the test's own command, the same for every role.
 */
static void
hostfix_config(const char *path, const char *fake, int ms, int step,
    const char *command)
{
	json_t		*r = json_object(), *c;
	const char	*name;
	size_t		 i;
	char		*cmd;

	for (i = 0; i < ccw_loop_workflow.nroles; i++) {
		name = ccw_loop_workflow.roles[i].name;
		if (command != NULL)
			cmd = xstrdup(command);
		else
			xasprintf(&cmd, "exec '%s' sleep %d result success "
			    "'%s done'", fake, ms + (int)i * step, name);
		json_object_set_new(r, name, json_pack("{s:s}", "command",
		    cmd));
		free(cmd);
	}
	c = json_pack("{s:s, s:o}", "default_tool", "bash", "roles", r);
	if (json_dump_file(c, path, 0) != 0)
		fatalx("cannot write %s", path);
	json_decref(c);
}

/* A loop ended (the host freed its engine); the last one stops the base. */
static void
hostfix_done(void *arg, struct host_loop *hl, int code)
{
	struct hostfix_loop	*x = arg;

	(void)hl;
	x->code = code;
	x->t_done = clock_mono_ms();
	if (x->event != NULL)
		x->event(x, HOSTFIX_DONE, NULL);
	if (++x->h->ndone == x->h->n)
		event_base_loopbreak(x->h->base);
}

/*
 * The open (on the host's thread) ended: a refused one fails the test
 * and counts as ended, so the base still stops.
 */
static void
hostfix_opened(void *arg, struct host_loop *hl, int code, const char *err)
{
	struct hostfix_loop	*x = arg;

	if (err == NULL) {	/* runs (a completed loop is refused, code 0) */
		x->opened = 1;
		return;
	}
	tap_ok(0, "%s: host_loop_open: %s", x->id, err);
	hostfix_done(arg, hl, code);
}

/* The loop's events (numbered on the host's bus): to the test's callback. */
static void
hostfix_event(void *arg, struct host_loop *hl, uint64_t seq,
    const char *name, const json_t *fields)
{
	struct hostfix_loop	*x = arg;

	(void)hl;
	(void)seq;
	if (x->event != NULL)
		x->event(x, name, fields);
}

/*
 * The host: tests run from the build tree, where ccw-worker and the fake
 * agent are; anywhere else the test is skipped (1).
 */
int
hostfix_init(struct hostfix *h, const char *tag, int ms, int step)
{
	return hostfix_init_cmd(h, tag, ms, step, NULL);
}

/* hostfix_init, every role running command (NULL: the fake agent's). */
int
hostfix_init_cmd(struct hostfix *h, const char *tag, int ms, int step,
    const char *command)
{
	struct host_cfg	 hc;
	char		 cwd[PATH_MAX], *worker, *fake, *tmpl, *err = NULL;

	memset(h, 0, sizeof *h);
	if (getcwd(cwd, sizeof cwd) == NULL)
		fatal("getcwd");
	xasprintf(&worker, "%s/ccw-worker", cwd);
	xasprintf(&fake, "%s/tests/fake-agent", cwd);
	if (access(worker, X_OK) != 0 || access(fake, X_OK) != 0) {
		printf("1..0 # SKIP run from the build tree (%s)\n", worker);
		free(worker);
		free(fake);
		return 1;
	}
	setenv("CCW_WORKER", worker, 1);
	xasprintf(&tmpl, "/tmp/ccw-%s.XXXXXX", tag);
	if ((h->dir = mkdtemp(tmpl)) == NULL)
		fatal("mkdtemp");
	xasprintf(&h->cfgpath, "%s/config.json", h->dir);
	hostfix_config(h->cfgpath, fake, ms, step, command);
	free(worker);
	free(fake);
	if ((h->base = event_base_new()) == NULL)
		fatalx("base");
	h->state_dir = state_dir_default(h->dir);
	if (config_load(&ccw_loop_workflow, h->cfgpath, h->dir, NULL, &h->cfg,
	    &err) != 0)
		fatalx("setup: %s", err);
	memset(&hc, 0, sizeof hc);
	hc.config = &h->cfg;
	hc.state_dir = h->state_dir;
	hc.root = h->dir;
	if ((h->host = host_new(h->base, &hc, &err)) == NULL ||
	    (h->dirfd = state_dir_open(h->state_dir, 1, &err)) < 0)
		fatalx("setup: %s", err);
	h->bus = host_bus(h->host);
	return 0;
}

/*
 * hostfix_init whose every role asks once (CLARIFICATION_NEEDED: which
 * database?), then says in its summary which one it was told ("used X").
 */
int
hostfix_init_asking(struct hostfix *h, const char *tag)
{
	char	cwd[PATH_MAX], *cmd;
	int	rc;

	if (getcwd(cwd, sizeof cwd) == NULL)
		fatal("getcwd");
	xasprintf(&cmd, "p=$(timeout 0.5 cat); case \"$p\" in "
	    "*'Which database? -> '*) db=${p##*Which database? -> }; "
	    "db=${db%%%%[!a-z]*}; exec '%s/tests/fake-agent' result success "
	    "\"used $db\";; *) exec '%s/tests/fake-agent' clarify;; esac",
	    cwd, cwd);
	rc = hostfix_init_cmd(h, tag, 0, 0, cmd);
	free(cmd);
	return rc;
}

/*
 * Create one loop and start it on the host: its open runs on the host's
 * thread, the loop on dispatch; 0, -1 (refused at once).
 */
int
hostfix_open(struct hostfix *h, struct hostfix_loop *x, const char *id,
    enum loop_mode mode, hostfix_event_cb event)
{
	struct loop_spec	 spec;
	struct host_observer	 obs;
	char			*err = NULL;

	x->h = h;
	x->code = -1;
	x->mode = mode;
	x->event = event;
	snprintf(x->id, sizeof x->id, "%s", id);
	memset(&spec, 0, sizeof spec);
	spec.id = x->id;
	spec.task = "Host many loops";
	spec.mode = loop_mode_name(mode);
	spec.max_iterations = h->max_iter;
	spec.state = &ccw_loop_state;
	memset(&obs, 0, sizeof obs);
	obs.opened = hostfix_opened;
	obs.event = hostfix_event;
	obs.done = hostfix_done;
	obs.arg = x;
	if (host_loop_open(h->host, &spec, NULL, &obs, &err) == NULL) {
		tap_ok(0, "%s: host_loop_open: %s", x->id, err);
		free(err);
		return -1;
	}
	return 0;
}

/* The summary of a role's last output ({id}.workers/ROLE.output.json). */
char *
hostfix_summary(struct hostfix *h, const char *id, const char *role)
{
	json_t	*o;
	char	*path, *out;

	xasprintf(&path, "%s/%s.workers/%s.output.json", h->state_dir, id,
	    role);
	o = json_load_file(path, 0, NULL);
	free(path);
	out = xstrdup(json_string_value(json_object_get(o, "summary")) !=
	    NULL ? json_string_value(json_object_get(o, "summary")) : "");
	json_decref(o);
	return out;
}

/* The host, and its directory unless CCW_TEST_KEEP is set. */
void
hostfix_free(struct hostfix *h)
{
	char	*rm;

	host_free(h->host);
	event_base_free(h->base);
	close(h->dirfd);
	config_free(&h->cfg);
	free(h->state_dir);
	free(h->cfgpath);
	if (getenv("CCW_TEST_KEEP") == NULL) {
		xasprintf(&rm, "rm -rf '%s'", h->dir);
		if (system(rm) != 0)
			tap_diag("cannot remove %s", h->dir);
		free(rm);
	}
	free(h->dir);
}

/*
 * The regress tests' allowance (tests/regress/lib.sh, t_slack): a loaded
 * 2-core machine delays a wake-up by hundreds of milliseconds.
 */
uint64_t
hostfix_slack(void)
{
	const char	*s = getenv("CCW_TEST_SLACK"), *w;
	uint64_t	 slack = s != NULL && *s != '\0' ? strtoull(s, NULL, 10) :
			    1500;

	if ((s = getenv("CCW_SANITIZERS")) != NULL && strcmp(s, "yes") == 0)
		slack += 1500;
	if ((w = getenv("TESTS_WRAPPER")) != NULL && *w != '\0')
		slack += 4000;
	return slack;
}
