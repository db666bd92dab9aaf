/*
 * main.c: the ccw-worker command line.  The worker is started by the
 * supervisor with its channel on fd 3; a person only ever runs it for
 * --version or --help.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "proto.h"

/* The --help text. */
static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: ccw-worker -R ROLE -I INDEX\n"
	    "       ccw-worker --version | --help\n"
	    "\n"
	    "Drives one agent tool for ccw-supervisor, which starts it with\n"
	    "the protocol channel on descriptor 3.  See ccw-worker(8).\n");
}

int
main(int argc, char **argv)
{
	log_init(argv[0], 0);
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("ccw-worker %s (protocol %d)\n", PACKAGE_VERSION,
		    PROTO_VERSION);
		return 0;
	}
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}
