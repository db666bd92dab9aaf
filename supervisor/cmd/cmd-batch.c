/*
 * cmd-batch.c: `ccw-supervisor batch`: its options, the input read and
 * checked before anything starts, one host per project root (one bus,
 * one reaper), signals, and the outputs: --json events, the terminal
 * view (batch-view.c), the summary, the JUnit report, the exit status.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "batch.h"
#include "batch-junit.h"
#include "batch-view.h"
#include "batch-worker.h"
#include "batchstate.h"
#include "bqinput.h"
#include "bus.h"
#include "flowdef.h"
#include "workflows.h"
#include "chan.h"
#include "clock.h"
#include "cmdutil.h"
#include "gate.h"
#include "host.h"
#include "log.h"
#include "roots.h"
#include "sigfd.h"
#include "sup.h"
#include "xmalloc.h"

#define BATCH_MAX_JOBS	1024

struct batch_cmd {
	struct event_base	*base;
	struct bus		*bus;
	struct gate		*gate;		/* one per provider for every root */
	struct roots		 roots;		/* one host per project root */
	struct batch		*b;
	struct batch_view	*view;
	int			 json;
	int			 code;
	struct cmd_opts		 lo;		/* --launcher, --remote-worker */
	struct plan_overrides	 over;		/* lo's launcher, every root's */
};

/* The --help text. */
static void
batch_usage(FILE *fp)
{
	fprintf(fp,
"usage: ccw-supervisor batch FILE [-C ROOT] [--jobs N] [--json] [--junit F]\n"
"           [--max-cost-usd X] [--max-tokens N] [--config F]\n"
"           [--launcher WORDS [--remote-worker PATH]]\n"
"       ccw-supervisor batch --resume ID [-C ROOT] [options]\n"
"\n"
"Runs many loops headlessly: FILE is JSONL (one loop a line: title,\n"
"description, mode, max_iterations, tool, model, root) or a CCW issue\n"
"queue (.workflow/issues/queues/QUE-*.json).  The batch's state is\n"
"ROOT/.workflow/.batch/ID/state.json; --resume ID continues a batch that\n"
"was killed or stopped: no completed item runs again.\n"
"\n"
"  -C ROOT            the project (default .); item roots may differ\n"
"  --jobs N           items at once (default 4)\n"
"  --json             NDJSON events on stdout\n"
"  --junit F          a JUnit XML report, one testcase per item\n"
"  --max-cost-usd X   stop starting work and stop loops at X USD\n"
"  --max-tokens N     the same for input plus output tokens\n"
"  --config F         the configuration file for every root\n"
"  --resume ID        continue batch ID (FILE may be left out)\n"
"\n"
"Exit status: 0 every item completed, 1 some did not, 2 usage or bad\n"
"input (nothing started), 4 stopped by a signal, 70 internal error.\n");
}

/* batch_cfg's host_for: the side's host, and where it keeps loops. */
static struct host *
batch_host_for(void *arg, const char *root, const char *sd, const char **used,
    char **err)
{
	struct batch_cmd	*bc = arg;
	struct root		*r;

	if ((r = roots_get(&bc->roots, root, sd, err)) == NULL)
		return NULL;
	*used = r->o.state_dir;
	return r->host;
}

/* batch_cfg's worker_start: one worker on the root's side (batch-worker.c). */
static void *
batch_worker_start(void *arg, const char *root, const char *sd,
    const char **used, const struct bq_item *it, const char *id,
    void (*done)(void *, const char *, const char *, const json_t *, int),
    void *done_arg, char **err)
{
	struct batch_cmd	*bc = arg;
	struct root		*r;

	if ((r = roots_get(&bc->roots, root, sd, err)) == NULL)
		return NULL;
	*used = r->o.state_dir;
	return bworker_start(bc->base, host_children(r->host), bc->gate, &r->o,
	    id, it, done, done_arg, err);
}

static void
batch_worker_stop(void *arg, void *w)
{
	(void)arg;
	bworker_stop(w);
}

static void
batch_worker_free(void *arg, void *w)
{
	(void)arg;
	bworker_free(w);
}

/* The terminal view's, and NDJSON on stdout with --json. */
static void
batch_cmd_event(void *arg, const char *name, const json_t *fields)
{
	struct batch_cmd	*bc = arg;

	if (bc->view != NULL)
		batch_view_event(bc->view, name, fields);
	if (bc->json)
		cmd_emit_event(name, fields);
}

/* The gate's provider_hold and provider_open, numbered on the bus. */
static void
batch_cmd_gate_event(void *arg, const char *name, const json_t *fields)
{
	struct batch_cmd	*bc = arg;

	bus_publish(bc->bus, name, json_deep_copy(fields));
}

/* The gate's provider_hold and provider_open: on the bus, no loop's. */
static void
batch_cmd_bus(void *arg, uint64_t seq, const char *name, const json_t *fields)
{
	(void)seq;
	if (strcmp(name, "provider_hold") == 0 ||
	    strcmp(name, "provider_open") == 0)
		batch_cmd_event(arg, name, fields);
}

static void
batch_cmd_done(void *arg, int code)
{
	struct batch_cmd	*bc = arg;

	bc->code = code;
	event_base_loopbreak(bc->base);
}

/* SIGINT, SIGTERM, SIGHUP: every loop stopped; the batch is resumable. */
static void
batch_cmd_signal(evutil_socket_t sig, short ev, void *arg)
{
	struct batch_cmd	*bc = arg;
	char			 why[32];

	(void)ev;
	snprintf(why, sizeof why, "signal %d", (int)sig);
	batch_stop(bc->b, why);
}

/* A positive number option, or a usage error. */
static int
batch_num(const char *opt, const char *s, double max, double *out)
{
	char	*end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(*out) ||
	    *out <= 0 || *out > max) {
		fprintf(stderr, "ccw-supervisor batch: %s: \"%s\" is not a "
		    "number above 0 (at most %.0f)\n", opt, s, max);
		return -1;
	}
	return 0;
}

/* The items as the JUnit report and the summary take them. */
static json_t *
batch_cmd_items(const json_t *st)
{
	json_t		*a = json_array(), *e;
	const json_t	*q = json_object_get(st, "queue");
	size_t		 i;

	json_array_foreach(q, i, e)
		json_array_append_new(a, json_pack("{s:O, s:O, s:O, s:O?,"
		    " s:I}", "id", json_object_get(e, "item_id"), "title",
		    json_object_get(e, "title"), "status",
		    json_object_get(e, "status"), "failure_reason",
		    json_object_get(e, "failure_reason"), "duration_ms",
		    json_integer_value(json_object_get(e, "duration_ms"))));
	return a;
}

/* Everything the command opened, in reverse. */
static void
batch_cmd_free(struct batch_cmd *bc)
{
	batch_view_free(bc->view);
	batch_free(bc->b);
	roots_free(&bc->roots);
	if (bc->gate != NULL)
		gate_free(bc->gate);	/* after the hosts: their loops leave it */
	bus_free(bc->bus);
	if (bc->base != NULL)
		event_base_free(bc->base);
	launch_clear(&bc->lo.launch);
}

int
cmd_batch(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "json", no_argument, NULL, 'J' },
		{ "junit", required_argument, NULL, 'U' },
		{ "max-cost-usd", required_argument, NULL, 'c' },
		{ "max-tokens", required_argument, NULL, 't' },
		{ "resume", required_argument, NULL, 'r' },
		{ "config", required_argument, NULL, 'f' },
		CMD_LAUNCH_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const int signos[3] = { SIGINT, SIGTERM, SIGHUP };
	struct batch_cmd	 bc;
	struct batch_cfg	 cfg;
	struct bq_input		 in;
	struct event		*sigs[3] = { NULL, NULL, NULL };
	const char		*root = ".", *junit = NULL, *resume = NULL;
	char			*file = NULL, *err = NULL, *real;
	struct cmd_opts		 probe;
	int			 rc;
	double			 jobs = 4, cost = 0, tokens = 0;
	json_t			*items;
	int			 ch, i, loaded = 0;

	memset(&bc, 0, sizeof bc);
	memset(&in, 0, sizeof in);
	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'C':
			root = optarg;
			break;
		case 'j':
			if (batch_num("--jobs", optarg, BATCH_MAX_JOBS,
			    &jobs) != 0 || jobs != floor(jobs))
				return EXIT_USAGE;
			break;
		case 'J':
			bc.json = 1;
			break;
		case 'U':
			junit = optarg;
			break;
		case 'c':
			if (batch_num("--max-cost-usd", optarg, 1e9, &cost) != 0)
				return EXIT_USAGE;
			break;
		case 't':
			if (batch_num("--max-tokens", optarg, 1e15,
			    &tokens) != 0 || tokens != floor(tokens))
				return EXIT_USAGE;
			break;
		case 'r':
			resume = optarg;
			break;
		case 'f':
			bc.roots.config_path = optarg;
			break;
		case 'h':
			batch_usage(stdout);
			return EXIT_OK;
		case CMD_OPT_LAUNCHER:
		case CMD_OPT_REMOTE_WORKER:
			if (cmd_opts_set(&bc.lo, ch, optarg) == 0)
				break;
			launch_clear(&bc.lo.launch);
			return EXIT_USAGE;
		default:
			launch_clear(&bc.lo.launch);
			batch_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind > 1 || (argc - optind == 0 && resume == NULL) ||
	    (bc.lo.launch.remote_worker != NULL && !bc.lo.launch.set)) {
		if (bc.lo.launch.remote_worker != NULL && !bc.lo.launch.set)
			fprintf(stderr, "ccw-supervisor batch: --remote-worker "
			    "needs --launcher\n");
		launch_clear(&bc.lo.launch);
		batch_usage(stderr);
		return EXIT_USAGE;
	}
	if (bc.lo.launch.set) {
		bc.over.launch = &bc.lo.launch;
		bc.roots.over = &bc.over;
	}
	if ((real = realpath(root, NULL)) == NULL) {
		fprintf(stderr, "ccw-supervisor batch: -C %s: %s\n", root,
		    strerror(errno));
		launch_clear(&bc.lo.launch);
		return EXIT_USAGE;
	}
	if (resume != NULL &&
	    (file = batchstate_input_path(real, resume, &err)) == NULL)
		goto usage_err;
	if (argc - optind == 1) {
		char *given = realpath(argv[optind], NULL);

		if (given == NULL) {
			xasprintf(&err, "%s: %s", argv[optind],
			    strerror(errno));
			goto usage_err;
		}
		if (file != NULL && strcmp(file, given) != 0) {
			xasprintf(&err, "batch %s ran %s, not %s", resume,
			    file, given);
			free(given);
			goto usage_err;
		}
		free(file);
		file = given;
	}
	if (bqinput_load(file, real, &in, &err) != 0)
		goto usage_err;
	loaded = 1;
	signal(SIGPIPE, SIG_IGN);
	if ((bc.base = chan_base_new()) == NULL)
		fatalx("cannot create the event loop");
	bc.bus = bus_new(HOST_BUS_KEEP);
	bus_observe(bc.bus, batch_cmd_bus, &bc);
	bc.gate = gate_new(bc.base, batch_cmd_gate_event, &bc);
	bc.roots.base = bc.base;
	bc.roots.bus = bc.bus;
	bc.roots.gate = bc.gate;
	/* the root's configuration checked before anything is made; its
	 * host comes with the first item, after the batch's directory: a
	 * new .workflow/ makes .workflow/.loop the loops' directory */
	cmd_opts_init(&probe);
	probe.root = real;
	probe.config_path = bc.roots.config_path;
	rc = cmd_opts_load(&probe, &err);
	cmd_opts_free(&probe);
	if (rc != 0)
		goto usage_err;
	memset(&cfg, 0, sizeof cfg);
	cfg.in = &in;
	cfg.root = real;
	cfg.resume_id = resume;
	cfg.jobs = (unsigned)jobs;
	cfg.max_cost_usd = cost;
	cfg.max_tokens = (long long)tokens;
	cfg.wf = workflow_default();
	cfg.host_for = batch_host_for;
	cfg.worker_start = batch_worker_start;
	cfg.worker_stop = batch_worker_stop;
	cfg.worker_free = batch_worker_free;
	cfg.event = batch_cmd_event;
	cfg.done = batch_cmd_done;
	cfg.arg = &bc;
	if (!bc.json && isatty(STDERR_FILENO))
		bc.view = batch_view_new(bc.base, stderr);
	if ((bc.b = batch_new(bc.base, &cfg, &err)) == NULL) {
		fprintf(stderr, "ccw-supervisor batch: %s\n", err);
		free(err);
		bc.code = EXIT_FAILED;
		goto out;
	}
	batch_view_attach(bc.view, bc.b);
	fprintf(stderr, "ccw-supervisor batch: %s %s: %zu items, state in "
	    "%s/state.json\n", resume != NULL ? "resuming" : "started",
	    batch_id(bc.b), in.nitems, batch_dir(bc.b));
	for (i = 0; i < 3; i++) {
		sigs[i] = evsignal_new(bc.base, signos[i], batch_cmd_signal,
		    &bc);
		evsignal_add(sigs[i], NULL);
	}
	sigfd_release();
	bc.code = EXIT_INTERNAL;
	batch_start(bc.b);
	event_base_dispatch(bc.base);
	batch_view_end(bc.view);
	items = batch_cmd_items(batch_state(bc.b));
	if (!bc.json)
		batch_view_summary(stdout, batch_state(bc.b));
	if (junit != NULL && junit_write(junit, batch_id(bc.b), items,
	    &err) != 0) {
		fprintf(stderr, "ccw-supervisor batch: --junit %s: %s\n",
		    junit, err);
		free(err);
		if (bc.code == EXIT_OK)
			bc.code = EXIT_FAILED;
	}
	json_decref(items);
	goto out;
usage_err:
	fprintf(stderr, "ccw-supervisor batch: %s\n", err);
	free(err);
	bc.code = EXIT_USAGE;
out:
	for (i = 0; i < 3; i++)
		if (sigs[i] != NULL)
			event_free(sigs[i]);
	batch_cmd_free(&bc);
	if (loaded)
		bqinput_free(&in);
	free(file);
	free(real);
	return bc.code;
}
