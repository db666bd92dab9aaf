/*
 * gitcmd.c: `ccw-worker --git VERB`, the supervisor's git helper: one
 * JSON request on stdin, one JSON reply on stdout.  Exit 0 when the
 * verb ran (a conflict is a normal reply), 2 for a bad request (the
 * message on stderr), 1 when git failed ({"error", "kind"}).  The verbs
 * are the rows of one table; the supervisor runs this as a child so its
 * event loop never waits on git.
 */
#include <config.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gitwt.h"
#include "xmalloc.h"

#define GITCMD_MAX_REQ	(1u << 20)	/* a request's bytes */

static const struct gitverb {
	const char	*name;
	json_t		*(*run)(const json_t *, int *, char **);
} gitverbs[] = {
	{ "prepare", gitprep_prepare },
	{ "merge", gitmerge_merge },
	{ "cleanup", gitprep_cleanup },
	{ "land", gitprep_land },
	{ "try", gittry_try },
};

/* The verb names, for the usage message (owned). */
static char *
gitcmd_names(void)
{
	char	*s = xstrdup(""), *t;
	size_t	 i;

	for (i = 0; i < sizeof gitverbs / sizeof gitverbs[0]; i++) {
		xasprintf(&t, "%s%s%s", s, i ? "|" : "", gitverbs[i].name);
		free(s);
		s = t;
	}
	return s;
}

/* Read the request: one JSON object on stdin. */
static json_t *
gitcmd_read(char **err)
{
	json_error_t	 je;
	json_t		*req;

	req = json_loadf(stdin, JSON_REJECT_DUPLICATES, &je);
	if (req == NULL)
		xasprintf(err, "the request is not JSON: %s", je.text);
	else if (!json_is_object(req)) {
		xasprintf(err, "the request must be a JSON object");
		json_decref(req);
		req = NULL;
	}
	return req;
}

/* ccw-worker --git VERB: see the file's comment.  The exit status. */
int
gitcmd_main(int argc, char **argv)
{
	const struct gitverb	*v = NULL;
	json_t			*req, *reply = NULL;
	char			*err = NULL, *names;
	size_t			 i;
	int			 rc = 0;

	signal(SIGPIPE, SIG_IGN);
	for (i = 0; argc == 3 && i < sizeof gitverbs / sizeof gitverbs[0]; i++)
		if (strcmp(argv[2], gitverbs[i].name) == 0)
			v = &gitverbs[i];
	if (v == NULL) {
		names = gitcmd_names();
		fprintf(stderr, "usage: ccw-worker --git %s < request.json\n",
		    names);
		free(names);
		return 2;
	}
	if ((req = gitcmd_read(&err)) != NULL)
		reply = v->run(req, &rc, &err);
	json_decref(req);
	if (reply == NULL) {
		fprintf(stderr, "ccw-worker --git %s: %s\n", v->name,
		    err != NULL ? err : "bad request");
		free(err);
		return 2;
	}
	free(err);
	json_dumpf(reply, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	json_decref(reply);
	return fflush(stdout) == 0 ? rc : 1;
}
