/*
 * main.c: the ccw-supervisor command line.  Owns option parsing for the
 * global flags, the table that maps a subcommand name to its handler,
 * and the process-wide settings every command starts with (signals,
 * malloc's arenas and mmap threshold).
 */
#include <config.h>

#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "log.h"
#include "proto.h"
#include "sigfd.h"
#include "stopbound.h"
#include "sup.h"

/*
 * handlers: the command installs its own SIGTERM/SIGINT/SIGHUP handlers
 * and calls sigfd_release() once they are in place; until then those
 * signals stay pending.  Every other command gets them at once.
 */
struct subcmd {
	const char	*name;
	int		(*fn)(int, char **);
	const char	*summary;
	int		 handlers;
};

static int	cmd_version(int, char **);

static const struct subcmd subcmds[] = {
	{ "acp", cmd_acp,
	    "an Agent Client Protocol agent on stdio (editors: Zed ...)", 1 },
	{ "agent", cmd_agent,
	    "run one agent: spawn, wait, nudge, close; print JSON", 1 },
	{ "answer", cmd_answer,
	    "answer a loop's open question (the queue of questions)", 0 },
	{ "batch", cmd_batch,
	    "run many loops headlessly: JSONL or a CCW issue queue", 1 },
	{ "capsule", cmd_capsule, "print the resume capsule of a loop", 0 },
	{ "control", cmd_control,
	    "the verb table as JSON lines on stdin/stdout", 1 },
	{ "doctor", cmd_doctor,
	    "which tools, credentials and settings a loop here would use", 0 },
	{ "mcp", cmd_mcp,
	    "an MCP server on stdio: agents and loops as tools", 1 },
	{ "run", cmd_run,
	    "run a loop: auto, parallel or interactive; resume one", 1 },
	{ "serve", cmd_serve,
	    "host every loop of the roots; HTTP/JSON, SSE, metrics", 1 },
	{ "state", cmd_state,
	    "list, show, validate, rebuild, create or export loop state",
	    0 },
	{ "tune", cmd_tune,
	    "diagnose and fix a Claude Code skill (skill-tune workflow)", 1 },
	{ "version", cmd_version, "print the program and protocol versions",
	    0 },
};

/* The --help text; every subcommand in the table is listed. */
static void
usage(FILE *fp)
{
	size_t	i;

	fprintf(fp,
	    "usage: ccw-supervisor [-v] [--version] [--help] COMMAND [ARGS]\n"
	    "\n"
	    "Runs CCW-style agent loops as real Unix processes.\n"
	    "\n"
	    "commands:\n");
	for (i = 0; i < sizeof subcmds / sizeof subcmds[0]; i++)
		fprintf(fp, "  %-10s %s\n", subcmds[i].name,
		    subcmds[i].summary);
	fprintf(fp,
	    "\n"
	    "options:\n"
	    "  -v, --verbose  more diagnostics on stderr (twice for debug)\n"
	    "  --version      same as the version command\n"
	    "  -h, --help     this text\n"
	    "\n"
	    "See ccw-supervisor(1).\n");
}

/* Print "ccw-supervisor VERSION (protocol N)". */
static int
cmd_version(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "ccw-supervisor: version takes no arguments\n");
		return EXIT_USAGE;
	}
	printf("ccw-supervisor %s (protocol %d)\n", PACKAGE_VERSION,
	    PROTO_VERSION);
	return 0;
}

/*
 * malloc tuned for hosts that live for weeks (tests/bench/soak.py, the
 * soak figure of `make bench`), unless the environment says otherwise:
 * - One arena.  A host starts and ends threads all its life (a committer
 *   per loop's state, its side files, its opener: serve under churn makes
 *   several a second), and glibc gives each new thread one of up to 8
 *   per core arenas, each a heap of its own that keeps the holes its
 *   threads left: a soak saw 14 arenas holding 2.2 MB after 6 minutes
 *   and still climbing, the main heap flat beside them.  Those threads
 *   wait on disks, not on the allocator: sharing one arena costs nothing
 *   measurable.
 * - A fixed mmap threshold (glibc's default, 128 KiB).  Left dynamic, the
 *   first large block freed raises it (and the trim threshold, to twice
 *   that) for good, so later large blocks come from the heap, leave holes
 *   under newer small ones and are never given back.
 */
static void
main_malloc_setup(void)
{
#ifdef M_ARENA_MAX
	if (getenv("MALLOC_ARENA_MAX") == NULL)
		(void)mallopt(M_ARENA_MAX, 1);
#endif
#ifdef M_MMAP_THRESHOLD
	if (getenv("MALLOC_MMAP_THRESHOLD_") == NULL)
		(void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

int
main(int argc, char **argv)
{
	int	verbose = 0, i, rc;
	size_t	k;

	/* Over `ulimit -f` a write fails with EFBIG (a commit reports it and
	 * removes its temp file) instead of killing us half-way. */
	signal(SIGXFSZ, SIG_IGN);
	main_malloc_setup();
	sigfd_defer();
	log_init(argv[0], 0);
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--version") == 0)
			return cmd_version(1, argv + i);
		if (strcmp(argv[i], "-v") == 0 ||
		    strcmp(argv[i], "--verbose") == 0) {
			verbose++;
			continue;
		}
		fprintf(stderr, "ccw-supervisor: unknown option '%s'\n",
		    argv[i]);
		usage(stderr);
		return EXIT_USAGE;
	}
	log_init(argv[0], verbose);
	if (i >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (k = 0; k < sizeof subcmds / sizeof subcmds[0]; k++)
		if (strcmp(argv[i], subcmds[k].name) == 0) {
			if (!subcmds[k].handlers)
				sigfd_release();
			rc = subcmds[k].fn(argc - i, argv + i);
			stopbound_end();	/* it ended within its bound */
			return rc;
		}
	fprintf(stderr, "ccw-supervisor: unknown command '%s' (see --help)\n",
	    argv[i]);
	return EXIT_USAGE;
}
