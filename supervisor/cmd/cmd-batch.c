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
#include "batch-isolate.h"
#include "batch-junit.h"
#include "batch-view.h"
#include "batchworker.h"
#include "batchstate.h"
#include "bqinput.h"
#include "budget.h"
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
#include "stopbound.h"
#include "sup.h"
#include "xmalloc.h"

#define BATCH_MAX_JOBS	1024
#define BATCH_HOLD_TIMEOUT	3600	/* s, --hold-timeout's default */

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
	struct batchiso		 iso;		/* --worktree, "worktree": true */
};

/* The --help text. */
static void
batch_usage(FILE *fp)
{
	fprintf(fp,
"usage: ccw-supervisor batch FILE [-C ROOT] [--jobs N] [--json] [--junit F]\n"
"           [--max-cost-usd X] [--max-tokens N] [--max-time MS]\n"
"           [--hold-timeout S]\n"
"           [--config F]\n"
"           [--launcher WORDS [--remote-worker PATH]]\n"
"           [--worktree [--from-worktree]]\n"
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
"  --max-cost-usd X   at X USD start nothing more and hold every running\n"
"                     item where it is (loops paused, workers frozen)\n"
"  --max-tokens N     the same for input plus output tokens\n"
"  --max-time MS      the same for the batch's running time (not while\n"
"                     it is held)\n"
"  --hold-timeout S   how long the budget holds them (default 3600 s):\n"
"                     then they are stopped (exit 1); 0 stops at once\n"
"  --config F         the configuration file for every root\n"
"  --resume ID        continue batch ID (FILE may be left out); with\n"
"                     a --max-... budget on a batch another\n"
"                     process runs: its budget raised there (a held batch\n"
"                     goes on if the new budget allows), exit 0\n"
"  --worktree         every worker item in a git worktree of its own, on\n"
"                     branch ccw/ID/ITEM/AGENT (as an item's \"worktree\":\n"
"                     true); the branches are left for you to merge\n"
"  --from-worktree    start them from your uncommitted changes (a dirty\n"
"                     tree is refused otherwise)\n"
"\n"
"Items whose \"files\" hints (a queue task's files) overlap never run at\n"
"the same time (the conflict forecast); disjoint ones still do.\n"
"\n"
"Exit status: 0 every item completed, 1 some did not, 2 usage or bad\n"
"input or a refused worktree start (nothing started), 4 stopped by a signal (within 3 s whatever\n"
"the disk does), 70 internal error.\n");
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

/* batch_cfg's worker_start: one worker on the root's side (batchworker.c). */
static void *
batch_worker_start(void *arg, const char *root, const char *sd,
    const char **used, const struct bq_item *it, const char *id,
    void (*done)(void *, const char *, const char *, const json_t *, int),
    void *done_arg, char **err)
{
	struct batch_cmd	*bc = arg;
	struct root		*r;
	json_t			*wt;
	void			*w;

	if ((r = roots_get(&bc->roots, root, sd, err)) == NULL)
		return NULL;
	*used = r->o.state_dir;
	wt = batchiso_options(&bc->iso, it);
	w = batchworker_start(bc->base, host_children(r->host), bc->gate,
	    &r->plan, r->o.state_dir, id, it, wt, done, done_arg, err);
	json_decref(wt);
	return w;
}

static void
batch_worker_stop(void *arg, void *w)
{
	(void)arg;
	batchworker_stop(w);
}

static int
batch_worker_hold(void *arg, void *w, const char *why)
{
	(void)arg;
	return batchworker_hold(w, why);
}

static void
batch_worker_unhold(void *arg, void *w)
{
	(void)arg;
	batchworker_unhold(w);
}

static void
batch_worker_free(void *arg, void *w)
{
	(void)arg;
	batchworker_free(w);
}

/* The terminal view's, and NDJSON on stdout with --json. */
static void
batch_cmd_event(void *arg, const char *name, const json_t *fields)
{
	struct batch_cmd	*bc = arg;

	/* the batch's own events on the bus too: its hosts notify them */
	if (json_object_get(fields, "batch_id") != NULL &&
	    json_object_get(fields, "loop_id") == NULL)
		bus_publish(bc->bus, name, json_deep_copy(fields));
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

/* The batch's last notifications ended: on to the exit. */
static void
batch_cmd_notified(void *arg)
{
	event_base_loopbreak(((struct batch_cmd *)arg)->base);
}

static void
batch_cmd_done(void *arg, int code)
{
	struct batch_cmd	*bc = arg;

	bc->code = code;
	event_base_loopbreak(bc->base);
}

/*
 * SIGINT, SIGTERM, SIGHUP: every loop stopped; the batch is resumable.
 * The stop is bounded (stopbound.c) whatever the disk does.
 */
static void
batch_cmd_signal(evutil_socket_t sig, short ev, void *arg)
{
	struct batch_cmd	*bc = arg;
	char			 why[32];

	(void)ev;
	snprintf(why, sizeof why, "signal %d", (int)sig);
	batch_stop(bc->b, why);
	(void)stopbound_arm(SUP_STOP_GRACE_MS + STOPBOUND_MS, EXIT_STOPPED,
	    "batch");
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
	batchiso_free(&bc->iso);
	roots_free(&bc->roots);
	if (bc->gate != NULL)
		gate_free(bc->gate);	/* after the hosts: their loops leave it */
	bus_free(bc->bus);
	if (bc->base != NULL)
		event_base_free(bc->base);
	launch_clear(&bc->lo.launch);
}

/* What the command line gives besides the launcher (bc.lo). */
struct batch_args {
	const char	*root, *junit, *resume;
	double		 jobs, cost, tokens, wall, hold;
};

/* One option into bc or ba: 0 read, 1 help, -1 usage (said). */
static int
batch_opt(struct batch_cmd *bc, struct batch_args *ba, int ch,
    const char *arg)
{
	switch (ch) {
	case 'C':
		ba->root = arg;
		return 0;
	case 'j':
		return cmd_num("batch", "--jobs", arg, BATCH_MAX_JOBS,
		    &ba->jobs) != 0 || ba->jobs != floor(ba->jobs) ? -1 : 0;
	case 'J':
		bc->json = 1;
		return 0;
	case 'U':
		ba->junit = arg;
		return 0;
	case 'c':
		return cmd_num("batch", "--max-cost-usd", arg, 1e9, &ba->cost);
	case 't':
		return cmd_num("batch", "--max-tokens", arg, 1e15,
		    &ba->tokens) != 0 || ba->tokens != floor(ba->tokens) ?
		    -1 : 0;
	case 'T':
		return cmd_num("batch", "--max-time", arg, 1e12, &ba->wall);
	case 'r':
		ba->resume = arg;
		return 0;
	case 'H':
		if (strcmp(arg, "0") == 0)
			return ba->hold = 0, 0;
		return cmd_num("batch", "--hold-timeout", arg, 1e8, &ba->hold);
	case 'f':
		bc->roots.config_path = arg;
		return 0;
	case 'W':
		bc->iso.all = 1;
		return 0;
	case 'F':
		bc->iso.from_worktree = 1;
		return 0;
	case 'h':
		return 1;
	case CMD_OPT_LAUNCHER:
	case CMD_OPT_REMOTE_WORKER:
		if (cmd_opts_set(&bc->lo, ch, arg) == 0)
			return 0;
		launch_clear(&bc->lo.launch);
		return -1;
	default:
		launch_clear(&bc->lo.launch);
		batch_usage(stderr);
		return -1;
	}
}

/* The options and the operands' count: -1 to go on, else the exit. */
static int
batch_parse(int argc, char **argv, struct batch_cmd *bc,
    struct batch_args *ba)
{
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "json", no_argument, NULL, 'J' },
		{ "junit", required_argument, NULL, 'U' },
		{ "max-cost-usd", required_argument, NULL, 'c' },
		{ "max-tokens", required_argument, NULL, 't' },
		{ "max-time", required_argument, NULL, 'T' },
		{ "resume", required_argument, NULL, 'r' },
		{ "hold-timeout", required_argument, NULL, 'H' },
		{ "config", required_argument, NULL, 'f' },
		{ "worktree", no_argument, NULL, 'W' },
		{ "from-worktree", no_argument, NULL, 'F' },
		CMD_LAUNCH_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int	 ch, r;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1)
		if ((r = batch_opt(bc, ba, ch, optarg)) != 0) {
			if (r > 0)
				batch_usage(stdout);
			return r > 0 ? EXIT_OK : EXIT_USAGE;
		}
	if (argc - optind > 1 || (argc - optind == 0 && ba->resume == NULL) ||
	    (bc->lo.launch.remote_worker != NULL && !bc->lo.launch.set)) {
		if (bc->lo.launch.remote_worker != NULL && !bc->lo.launch.set)
			fprintf(stderr, "ccw-supervisor batch: --remote-worker "
			    "needs --launcher\n");
		launch_clear(&bc->lo.launch);
		batch_usage(stderr);
		return EXIT_USAGE;
	}
	if (bc->lo.launch.set) {
		bc->over.launch = &bc->lo.launch;
		bc->roots.over = &bc->over;
	}
	return -1;
}

/*
 * --resume ID with a budget, on a batch another process drives: the
 * budget written into its state file for it (batchstore_raise), as run
 * --loop-id does for a driven loop.  An exit status, or -1: no live
 * process drives it, this one resumes it.
 */
static int
batch_cmd_raise(const struct batch_args *ba, const char *real)
{
	double	 limit[BUDGET_NKINDS] = { 0 };
	json_t	*given;
	char	*err = NULL;
	int	 rc;

	limit[BUDGET_COST] = ba->cost;
	limit[BUDGET_TOKENS] = ba->tokens;
	limit[BUDGET_WALL] = ba->wall;
	if (ba->resume == NULL || !budget_any(limit))
		return -1;
	given = budget_json(limit);
	rc = batchstore_raise(real, ba->resume, given, &err);
	json_decref(given);
	if (rc == 1)
		return -1;
	if (rc == 0) {
		cmd_budget_relayed("batch", "batch", ba->resume,
		    "running batch");
		return EXIT_OK;
	}
	fprintf(stderr, "ccw-supervisor batch: %s\n", err);
	free(err);
	return EXIT_FAILED;
}

/*
 * The input file: the one the resumed batch ran, or FILE (the same one
 * when both are given); *file its real path.  0, or -1 and *err.
 */
static int
batch_input_path(const struct batch_args *ba, const char *real,
    const char *given_arg, char **file, char **err)
{
	char	*given;

	if (ba->resume != NULL &&
	    (*file = batchstate_input_path(real, ba->resume, err)) == NULL)
		return -1;
	if (given_arg == NULL)
		return 0;
	if ((given = realpath(given_arg, NULL)) == NULL) {
		xasprintf(err, "%s: %s", given_arg, strerror(errno));
		return -1;
	}
	if (*file != NULL && strcmp(*file, given) != 0) {
		xasprintf(err, "batch %s ran %s, not %s", ba->resume, *file,
		    given);
		free(given);
		return -1;
	}
	free(*file);
	*file = given;
	return 0;
}

/*
 * The event loop, bus and gate every root's host shares; the root's
 * configuration checked before anything is made (its host comes with the
 * first item, after the batch's directory: a new .workflow/ makes
 * .workflow/.loop the loops' directory).  0, or -1 and *err.
 */
static int
batch_cmd_setup(struct batch_cmd *bc, const char *real, char **err)
{
	struct cmd_opts	 probe;
	int		 rc;

	signal(SIGPIPE, SIG_IGN);
	if ((bc->base = chan_base_new()) == NULL)
		fatalx("cannot create the event loop");
	bc->bus = bus_new(HOST_BUS_KEEP);
	bus_observe(bc->bus, batch_cmd_bus, bc);
	bc->gate = gate_new(bc->base, batch_cmd_gate_event, bc);
	bc->roots.base = bc->base;
	bc->roots.bus = bc->bus;
	bc->roots.gate = bc->gate;
	cmd_opts_init(&probe);
	probe.root = real;
	probe.config_path = bc->roots.config_path;
	rc = cmd_opts_load(&probe, err);
	cmd_opts_free(&probe);
	return rc;
}

/* The workflow's configuration: the input, limits, and our callbacks. */
static void
batch_cfg_fill(struct batch_cfg *cfg, struct batch_cmd *bc,
    const struct batch_args *ba, struct bq_input *in, const char *real)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->in = in;
	cfg->root = real;
	cfg->resume_id = ba->resume;
	cfg->jobs = (unsigned)ba->jobs;
	cfg->max_cost_usd = ba->cost;
	cfg->max_tokens = (long long)ba->tokens;
	cfg->max_wall_ms = ba->wall;
	cfg->hold_timeout = ba->hold;
	/* every item is a loop of the default workflow (CCW's loops) */
	cfg->wf = workflow_default();
	cfg->host_for = batch_host_for;
	cfg->worker_start = batch_worker_start;
	cfg->worker_stop = batch_worker_stop;
	cfg->worker_hold = batch_worker_hold;
	cfg->worker_unhold = batch_worker_unhold;
	cfg->worker_free = batch_worker_free;
	cfg->event = batch_cmd_event;
	cfg->done = batch_cmd_done;
	cfg->arg = bc;
}

/* The conflict forecast on stderr: the pairs that never run at once. */
static void
batch_cmd_forecast(const json_t *st)
{
	const json_t	*p, *f;
	size_t		 i, j;

	json_array_foreach(json_object_get(json_object_get(st, "context"),
	    "forecast"), i, p) {
		fprintf(stderr, "ccw-supervisor batch: forecast: %s and %s both "
		    "name", json_string_value(json_array_get(json_object_get(p,
		    "items"), 0)), json_string_value(json_array_get(
		    json_object_get(p, "items"), 1)));
		json_array_foreach(json_object_get(p, "files"), j, f)
			fprintf(stderr, "%s %s", j > 0 ? "," : "",
			    json_string_value(f));
		fprintf(stderr, ": never at once\n");
	}
}

/*
 * The batch's prepare when some worker item runs in a worktree: on the
 * batch's root's host's reaper, before anything runs.  0, or -1 said
 * (the exit is 2: nothing started).
 */
static int
batch_cmd_isolate(struct batch_cmd *bc, const struct batch_args *ba,
    const struct batch_cfg *cfg)
{
	struct root	*r;
	char		*err = NULL;
	int		 w;

	if ((w = batchiso_wanted(&bc->iso, cfg->in, cfg->root, &err)) == 0)
		return 0;
	if (w < 0 || (r = roots_get(&bc->roots, cfg->root, NULL, &err)) ==
	    NULL || batchiso_prepare(&bc->iso, bc->base,
	    host_children(r->host), &r->o.cfg, cfg->root, batch_dir(bc->b),
	    batch_id(bc->b), ba->resume == NULL, &err) != 0) {
		fprintf(stderr, "ccw-supervisor batch: %s\n", err);
		free(err);
		bc->code = EXIT_USAGE;
		return -1;
	}
	return 0;
}

/* The end: worktree directories removed (unless stopped: --resume). */
static void
batch_cmd_unisolate(struct batch_cmd *bc, const struct batch_cfg *cfg)
{
	struct root	*r;
	char		*err = NULL;

	if (!bc->iso.on || bc->code == EXIT_STOPPED)
		return;
	if ((r = roots_get(&bc->roots, cfg->root, NULL, &err)) == NULL) {
		free(err);
		return;
	}
	batchiso_cleanup(&bc->iso, bc->base, host_children(r->host));
}

/* The batch run to its end with signals caught; then the outputs. */
static void
batch_cmd_run(struct batch_cmd *bc, const struct batch_args *ba,
    const struct batch_cfg *cfg)
{
	static const int signos[3] = { SIGINT, SIGTERM, SIGHUP };
	struct event	*sigs[3];
	json_t		*items;
	char		*err = NULL;
	int		 i;

	if (!bc->json && isatty(STDERR_FILENO))
		bc->view = batch_view_new(bc->base, stderr);
	if ((bc->b = batch_new(bc->base, cfg, &err)) == NULL) {
		fprintf(stderr, "ccw-supervisor batch: %s\n", err);
		free(err);
		bc->code = EXIT_FAILED;
		return;
	}
	batch_view_attach(bc->view, bc->b);
	fprintf(stderr, "ccw-supervisor batch: %s %s: %zu items, state in "
	    "%s/state.json\n", ba->resume != NULL ? "resuming" : "started",
	    batch_id(bc->b), cfg->in->nitems, batch_dir(bc->b));
	batch_cmd_forecast(batch_state(bc->b));
	if (batch_cmd_isolate(bc, ba, cfg) != 0)
		return;
	for (i = 0; i < 3; i++) {
		sigs[i] = evsignal_new(bc->base, signos[i], batch_cmd_signal,
		    bc);
		evsignal_add(sigs[i], NULL);
	}
	sigfd_release();
	bc->code = EXIT_INTERNAL;
	batch_start(bc->b);
	event_base_dispatch(bc->base);
	if (bc->roots.n > 0 && host_notify_wait(bc->roots.r[0].host,
	    batch_cmd_notified, bc))
		event_base_dispatch(bc->base);	/* its last notifications */
	batch_cmd_unisolate(bc, cfg);
	batch_view_end(bc->view);
	items = batch_cmd_items(batch_state(bc->b));
	if (!bc->json)
		batch_view_summary(stdout, batch_state(bc->b));
	if (ba->junit != NULL && junit_write(ba->junit, batch_id(bc->b),
	    items, &err) != 0) {
		fprintf(stderr, "ccw-supervisor batch: --junit %s: %s\n",
		    ba->junit, err);
		free(err);
		if (bc->code == EXIT_OK)
			bc->code = EXIT_FAILED;
	}
	json_decref(items);
	for (i = 0; i < 3; i++)
		event_free(sigs[i]);
}

int
cmd_batch(int argc, char **argv)
{
	struct batch_cmd	 bc;
	struct batch_args	 ba = { .root = ".", .jobs = 4,
				    .hold = BATCH_HOLD_TIMEOUT };
	struct batch_cfg	 cfg;
	struct bq_input		 in;
	char			*file = NULL, *err = NULL, *real;
	int			 rc, loaded = 0;

	memset(&bc, 0, sizeof bc);
	memset(&in, 0, sizeof in);
	if ((rc = batch_parse(argc, argv, &bc, &ba)) != -1)
		return rc;
	if ((real = realpath(ba.root, NULL)) == NULL) {
		fprintf(stderr, "ccw-supervisor batch: -C %s: %s\n", ba.root,
		    strerror(errno));
		launch_clear(&bc.lo.launch);
		return EXIT_USAGE;
	}
	if ((rc = batch_cmd_raise(&ba, real)) != -1) {
		launch_clear(&bc.lo.launch);
		free(real);
		return rc;
	}
	if (batch_input_path(&ba, real, argc - optind == 1 ? argv[optind] :
	    NULL, &file, &err) != 0 || bqinput_load(file, real, &in,
	    &err) != 0)
		goto usage_err;
	loaded = 1;
	if (batch_cmd_setup(&bc, real, &err) != 0)
		goto usage_err;
	batch_cfg_fill(&cfg, &bc, &ba, &in, real);
	batch_cmd_run(&bc, &ba, &cfg);
	goto out;
usage_err:
	fprintf(stderr, "ccw-supervisor batch: %s\n", err);
	free(err);
	bc.code = EXIT_USAGE;
out:
	batch_cmd_free(&bc);
	if (loaded)
		bqinput_free(&in);
	free(file);
	free(real);
	return bc.code;
}
