/*
 * test-planreq.c: plan_request, a front end's spawn over the plan_base
 * its command line filled once: the request's members above the base's
 * overrides, its NULL members leaving them, and the base never changed,
 * so that one request's tool, directory or launcher never leaks into the
 * next (the api used to plan on a copy of the CLI's options).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ccw-loop.h"
#include "plan.h"
#include "tap.h"
#include "xmalloc.h"

static char	tmp[] = "/tmp/ccw-test-planreq-XXXXXX";

/* A configuration with two tools and a role on each. */
static void
load(struct config *cfg)
{
	static const char text[] =
	    "{\"default_tool\": \"claude\","
	    " \"roles\": {\"develop\": {\"tool\": \"codex\", \"model\": \"m1\","
	    "   \"timeout_ms\": 1234}}}";
	char	*path, *err = NULL;
	FILE	*fp;

	xasprintf(&path, "%s/config.json", tmp);
	if ((fp = fopen(path, "w")) == NULL)
		exit(99);
	fputs(text, fp);
	fclose(fp);
	if (config_load(&ccw_loop_workflow, path, tmp, tmp, cfg, &err) != 0) {
		printf("Bail out! config: %s\n", err);
		exit(99);
	}
	unlink(path);
	free(path);
}

int
main(void)
{
	struct config		 cfg;
	struct plan_base	 base, base0;
	struct plan_request	 rq;
	struct plan_deadlines	 dl;
	struct agent_req	 req;
	struct launch_cfg	 mine, theirs;
	char			*err = NULL;
	int			 rc;

	if (mkdtemp(tmp) == NULL)
		return 99;
	load(&cfg);
	memset(&mine, 0, sizeof mine);
	memset(&theirs, 0, sizeof theirs);
	memset(&base, 0, sizeof base);
	base.config = &cfg;
	base.root = "/root";
	base.over.model = "base-model";
	base.over.launch = &mine;
	base.over.have_timeout = 1;	/* as cmd_plan_base: no role deadline */
	base0 = base;

	/* a request of a role only: the base's overrides, the root */
	memset(&rq, 0, sizeof rq);
	rq.role = "develop";
	rq.prompt = "hello";
	tap_ok(plan_request(&base, &rq, &req, &dl, &err) == 0,
	    "a role only: planned (%s)", err != NULL ? err : "ok");
	tap_is_str(req.tool, "codex", "the role's tool");
	tap_is_str(req.model, "base-model", "the base's model over the role's");
	tap_is_str(req.cwd, "/root", "the base's root");
	tap_is_str(req.prompt, "hello", "the prompt");
	tap_ok(req.launch == &mine, "the base's launcher");
	tap_ok(dl.timeout_ms == 0 && req.timeout_ms == 0,
	    "the base's deadline, not the role's");
	json_decref(req.options);

	/* every member given: each above the base */
	rq.tool = "bash";
	rq.command = "true";
	rq.model = "req-model";
	rq.cwd = "/elsewhere";
	rq.launch = &theirs;
	tap_ok(plan_request(&base, &rq, &req, NULL, &err) == 0,
	    "every member: planned, no deadlines asked (%s)",
	    err != NULL ? err : "ok");
	tap_is_str(req.tool, "bash", "the request's tool");
	tap_is_str(req.command, "true", "the request's command");
	tap_is_str(req.model, "req-model", "the request's model");
	tap_is_str(req.cwd, "/elsewhere", "the request's directory");
	tap_ok(req.launch == &theirs, "the request's launcher");
	json_decref(req.options);
	tap_ok(memcmp(&base, &base0, sizeof base) == 0,
	    "the base is unchanged by the requests");

	/* the next request leaves the members unset: nothing leaked */
	memset(&rq, 0, sizeof rq);
	rq.role = "develop";
	rq.prompt = "again";
	tap_ok(plan_request(&base, &rq, &req, NULL, &err) == 0 &&
	    strcmp(req.tool, "codex") == 0 && strcmp(req.cwd, "/root") == 0 &&
	    req.launch == &mine, "the next request: the base's again");
	json_decref(req.options);

	/* a refusal names the reason */
	rq.role = "nope";
	rc = plan_request(&base, &rq, &req, NULL, &err);
	tap_ok(rc == -1 && err != NULL && strstr(err, "unknown role") != NULL,
	    "an unknown role: refused (%s)", err != NULL ? err : "no error");
	free(err);

	config_free(&cfg);
	rmdir(tmp);
	return tap_done();
}
