/*
 * test-loops.c: one process, one event base, one child reaper hosting
 * many ccw-loop loops of fake agents at once, half in auto mode, half in
 * parallel: every loop must end completed with a valid state file and
 * each of its actions recorded once.  This is what `serve` will do, and
 * it links no CLI code: the engine's loopopen, plan and loop API only.
 */
#include <config.h>

#include <sys/stat.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "children.h"
#include "log.h"
#include "loop.h"
#include "loopopen.h"
#include "state.h"
#include "sup.h"
#include "tap.h"
#include "xmalloc.h"

#define NLOOPS_MAX	64

/* One hosted loop and what the test needs to check its end. */
struct hosted {
	struct host		*h;
	char			 id[32];
	enum loop_mode		 mode;
	struct loop_opened	 lo;
	struct loop		*l;
	int			 code;		/* -1 until hooks.done */
};

/* Everything the loops share: the base, the reaper, the configuration. */
struct host {
	struct event_base	*base;
	struct children		*ch;
	struct config		 cfg;
	const char		*root;
	char			*state_dir;
	int			 dirfd;
	int			 ndone, n;
};

/* A loop ended; the last one stops the event loop. */
static void
hosted_done(void *arg, int code)
{
	struct hosted	*x = arg;

	x->code = code;
	if (++x->h->ndone == x->h->n)
		event_base_loopbreak(x->h->base);
}

/* The fake agent's command for a role: a result after a short sleep. */
static void
write_config(const char *path, const char *fake)
{
	static const char *const roles[] = { "init", "develop", "debug",
	    "validate", "complete" };
	json_t	*r = json_object(), *c;
	size_t	 i;
	char	*cmd;

	for (i = 0; i < 5; i++) {
		xasprintf(&cmd, "exec '%s' sleep %d result success '%s done'",
		    fake, 50 + (int)i * 20, roles[i]);
		json_object_set_new(r, roles[i], json_pack("{s:s}", "command",
		    cmd));
		free(cmd);
	}
	c = json_pack("{s:s, s:o}", "default_tool", "bash", "roles", r);
	if (json_dump_file(c, path, 0) != 0)
		fatalx("cannot write %s", path);
	json_decref(c);
}

/* Create, open and start one loop, as `run` does; 0 or -1. */
static int
hosted_start(struct host *h, struct hosted *x, int i)
{
	const char		*step[] = { loop_roles[LOOP_DEVELOP],
				    loop_roles[LOOP_DEBUG],
				    loop_roles[LOOP_VALIDATE], NULL };
	struct loop_spec	 spec;
	struct loop_cfg		 cfg;
	enum loopopen_status	 s;
	char			*err = NULL;

	x->h = h;
	x->code = -1;
	snprintf(x->id, sizeof x->id, "many-%02d", i);
	x->mode = i % 2 ? LOOP_PARALLEL : LOOP_AUTO;
	memset(&spec, 0, sizeof spec);
	spec.id = x->id;
	spec.task = "Host many loops";
	spec.mode = loop_mode_name(x->mode);
	if ((s = loopopen_open(&x->lo, h->base, h->dirfd, h->state_dir, &spec,
	    &err)) != LOOPOPEN_RUN || !x->lo.created) {
		tap_ok(0, "%s: loopopen_open: status %d: %s", x->id, (int)s,
		    err != NULL ? err : "not created");
		free(err);
		return -1;
	}
	memset(&cfg, 0, sizeof cfg);
	cfg.id = x->id;
	cfg.state_dir = h->state_dir;
	cfg.dirfd = h->dirfd;
	cfg.mode = x->mode;
	cfg.resumed = x->lo.resumed;
	cfg.batch_ms = 60000;
	cfg.batch_nudge_ms = 5000;
	cfg.guard = &x->lo.guard;
	cfg.children = h->ch;
	loopopen_retry(&h->cfg, step, &cfg.retry);
	cfg.config = &h->cfg;
	cfg.root = h->root;
	cfg.hooks.done = hosted_done;
	cfg.hooks.arg = x;
	if ((x->l = loop_new(h->base, x->lo.store, &cfg, &err)) == NULL) {
		tap_ok(0, "%s: loop_new: %s", x->id, err);
		free(err);
		return -1;
	}
	loop_start(x->l);
	return 0;
}

/* The loop's file: completed, valid, each auto action once. */
static int
hosted_check(struct hosted *x, int dirfd)
{
	json_t		*st = NULL, *ca;
	char		*err = NULL;
	const char	*status;
	size_t		 n;
	int		 good;

	if (state_load(dirfd, x->id, &st, &err) != STATE_OK) {
		tap_diag("%s: %s", x->id, err);
		free(err);
		return 0;
	}
	status = json_string_value(json_object_get(st, "status"));
	ca = json_object_get(json_object_get(st, "skill_state"),
	    "completed_actions");
	n = json_array_size(ca);
	good = x->code == EXIT_OK && status != NULL &&
	    strcmp(status, "completed") == 0 && state_validate(st, NULL) == 0;
	/* auto: init develop debug validate complete, once each */
	if (x->mode == LOOP_AUTO && n != 5)
		good = 0;
	if (!good)
		tap_diag("%s: exit %d, status %s, %zu actions", x->id, x->code,
		    status != NULL ? status : "?", n);
	json_decref(st);
	return good;
}

int
main(int argc, char **argv)
{
	struct host	 h;
	struct hosted	*xs;
	char		 tmpl[] = "/tmp/ccw-loops.XXXXXX", *dir, *cfgpath;
	char		 cwd[PATH_MAX], *worker, *fake, *err = NULL;
	int		 i, n = argc > 1 ? atoi(argv[1]) : 50, nok = 0, auto_ok = 0;

	if (n < 2 || n > NLOOPS_MAX)
		n = 50;
	if (getcwd(cwd, sizeof cwd) == NULL || (dir = mkdtemp(tmpl)) == NULL)
		fatal("tmp");
	xasprintf(&worker, "%s/ccw-worker", cwd);
	xasprintf(&fake, "%s/tests/fake-agent", cwd);
	if (access(worker, X_OK) != 0 || access(fake, X_OK) != 0) {
		printf("1..0 # SKIP run from the build tree (%s)\n", worker);
		return 0;
	}
	setenv("CCW_WORKER", worker, 1);
	xasprintf(&cfgpath, "%s/config.json", dir);
	write_config(cfgpath, fake);

	memset(&h, 0, sizeof h);
	h.n = n;
	if ((h.base = event_base_new()) == NULL ||
	    (h.ch = children_new(h.base, &err)) == NULL)
		fatalx("base: %s", err != NULL ? err : "?");
	h.root = dir;
	h.state_dir = state_dir_default(dir);
	if (config_load(cfgpath, dir, NULL, &h.cfg, &err) != 0 ||
	    (h.dirfd = state_dir_open(h.state_dir, 1, &err)) < 0)
		fatalx("setup: %s", err);

	xs = xcalloc((size_t)n, sizeof *xs);
	for (i = 0; i < n; i++)
		if (hosted_start(&h, &xs[i], i) != 0)
			break;
	tap_ok(i == n, "%d loops started on one event base (%d of them)", n, i);
	if (i == n)
		event_base_dispatch(h.base);
	tap_ok(h.ndone == n, "every loop ended (%d of %d)", h.ndone, n);
	for (i = 0; i < n; i++)
		if (xs[i].l != NULL && hosted_check(&xs[i], h.dirfd)) {
			nok++;
			auto_ok += xs[i].mode == LOOP_AUTO;
		}
	tap_ok(nok == n, "%d of %d loops completed with a valid state file",
	    nok, n);
	tap_ok(auto_ok == (n + 1) / 2, "auto loops: each action once (%d)",
	    auto_ok);
	tap_ok(nok - auto_ok == n / 2, "parallel loops completed (%d)",
	    nok - auto_ok);

	for (i = 0; i < n; i++) {
		loop_free(xs[i].l);
		loopopen_close(&xs[i].lo);
	}
	free(xs);
	children_free(h.ch);
	event_base_free(h.base);
	close(h.dirfd);
	config_free(&h.cfg);
	free(h.state_dir);
	free(cfgpath);
	free(worker);
	free(fake);
	if (getenv("CCW_TEST_KEEP") == NULL) {
		char	*rm;

		xasprintf(&rm, "rm -rf '%s'", dir);
		if (system(rm) != 0)
			tap_diag("cannot remove %s", dir);
		free(rm);
	}
	return tap_done();
}
