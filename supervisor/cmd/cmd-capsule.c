/*
 * cmd-capsule.c: `ccw-supervisor capsule ID`: the resume capsule a
 * re-spawned worker of the loop would get, as prompt text or JSON.  The
 * building and checking are capsule.c's; this file owns the options,
 * loading the state and what is printed.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capsule.h"
#include "cmdutil.h"
#include "state.h"
#include "sup.h"
#include "xmalloc.h"

/* The --help text of the capsule command. */
static void
capsule_usage(FILE *fp)
{
	fprintf(fp,
"usage: ccw-supervisor capsule ID [--json] [-C ROOT] [--state-dir DIR]\n"
"Prints the resume capsule of loop ID: the context a re-spawned worker\n"
"gets (hard denies, open questions, resume point, gate, writes, file\n"
"hashes, stop hook).  Warnings go to stderr.\n"
"Exit: 0 printed, 1 no such loop or the capsule is invalid, 2 usage.\n");
}

/* Report a failure and give the exit status for it. */
static int
capsule_fail(const char *msg, char *err)
{
	fprintf(stderr, "ccw-supervisor capsule: %s%s%s\n", msg,
	    err != NULL ? ": " : "", err != NULL ? err : "");
	free(err);
	return EXIT_FAILED;
}

/*
 * Load the state; a file caught half-written by a front end is read
 * again a few times before giving up.
 */
static int
capsule_load(int dirfd, const char *id, json_t **stp)
{
	struct timespec	 ts = { 0, 20 * 1000 * 1000 };
	enum state_load_rc rc;
	char		*err = NULL;
	int		 tries;

	for (tries = 0; tries < 10; tries++) {
		free(err);
		err = NULL;
		rc = state_load(dirfd, id, stp, &err);
		if (rc != STATE_EAGAIN)
			break;
		nanosleep(&ts, NULL);
	}
	switch (rc) {
	case STATE_OK:
		free(err);
		return EXIT_OK;
	case STATE_ENOENT:
		free(err);
		fprintf(stderr, "ccw-supervisor capsule: no loop '%s' in this "
		    "state directory\n", id);
		return EXIT_FAILED;
	case STATE_EINVAL:
		free(err);
		fprintf(stderr, "ccw-supervisor capsule: invalid loop id "
		    "'%s'\n", id);
		return EXIT_USAGE;
	default:
		return capsule_fail("cannot read the loop", err);
	}
}

/* The capsule command: load the loop, build, check, print. */
/*
 * The capsule checked (what is missing and the warnings on stderr) and
 * printed, as JSON or rendered: EXIT_OK when valid, else EXIT_FAILED.
 */
static int
capsule_print(const json_t *cap, int json)
{
	struct strv	 missing = { NULL, 0 }, warnings = { NULL, 0 };
	char		*text, *r;
	size_t		 i;
	int		 rc;

	rc = capsule_validate(cap, &missing, &warnings) == 0 ? EXIT_OK :
	    EXIT_FAILED;
	for (i = 0; i < warnings.n; i++)
		fprintf(stderr, "ccw-supervisor capsule: warning: %s\n",
		    warnings.v[i]);
	for (i = 0; i < missing.n; i++)
		fprintf(stderr, "ccw-supervisor capsule: invalid: missing %s\n",
		    missing.v[i]);
	if (json)
		cmd_print_json(cap, 0);
	else {
		text = capsule_render(cap);
		r = text + strlen(text);
		fputs(text, stdout);
		if (r == text || r[-1] != '\n')
			putchar('\n');
		fflush(stdout);
		free(text);
	}
	strv_clear(&missing);
	strv_clear(&warnings);
	return rc;
}

int
cmd_capsule(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "state-dir", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*root = NULL, *sdir = NULL, *id;
	json_t		*st = NULL, *cap;
	char		 cwd[PATH_MAX], *dir, *err = NULL;
	int		 ch, json = 0, dirfd, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'C': root = optarg; break;
		case 's': sdir = optarg; break;
		case 'j': json = 1; break;
		case 'h':
			capsule_usage(stdout);
			return EXIT_OK;
		default:
			capsule_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		capsule_usage(stderr);
		return EXIT_USAGE;
	}
	id = argv[optind];
	if (!state_id_valid(id)) {
		fprintf(stderr, "ccw-supervisor capsule: invalid loop id '%s': "
		    "use [A-Za-z0-9][A-Za-z0-9._-]{0,127}, no '..'\n", id);
		return EXIT_USAGE;
	}
	if (root == NULL && sdir == NULL) {
		if (getcwd(cwd, sizeof cwd) == NULL)
			return capsule_fail("getcwd", xstrdup(strerror(errno)));
		root = cwd;
	}
	dir = sdir != NULL ? xstrdup(sdir) : state_dir_for(root, id);
	if ((dirfd = state_dir_open(dir, 0, &err)) < 0) {
		free(dir);
		return capsule_fail("no state directory", err);
	}
	rc = capsule_load(dirfd, id, &st);
	close(dirfd);
	if (rc != EXIT_OK) {
		free(dir);
		return rc;
	}
	/* Files are read relative to the root named, else the state dir's. */
	cap = capsule_build_root(st, dir, root);
	json_decref(st);
	free(dir);
	rc = capsule_print(cap, json);
	json_decref(cap);
	return rc;
}
