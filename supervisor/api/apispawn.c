/*
 * apispawn.c: spawn's request read once, for a plain spawn (api.c) and
 * for its attempts (apiattempts.c): its members and its cwd.
 */
#include <config.h>

#include <sys/stat.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "apiint.h"

/* A string member or NULL (the verb's row checked its type). */
static const char *
spawn_str(const json_t *req, const char *key)
{
	return json_string_value(json_object_get(req, key));
}

/*
 * spawn's cwd: an absolute path to a directory, resolved into dir (the
 * agent's request borrows it): 0, or -1 with the reply sent.
 */
int
api_spawn_cwd(struct api_pending *p, const char *cwd, char *dir)
{
	struct stat	sb;

	if (*cwd != '/') {
		api_fail(p, ERR_INVALID,
		    "spawn: \"cwd\" must be an absolute path");
		return -1;
	}
	if (realpath(cwd, dir) == NULL || stat(dir, &sb) != 0 ||
	    !S_ISDIR(sb.st_mode)) {
		api_fail(p, ERR_INVALID, "spawn: cwd %s: not a directory", cwd);
		return -1;
	}
	return 0;
}

/*
 * A checked spawn request's members into sp (borrowed from req; cwd
 * left to the caller): one reading for spawn and its attempts.
 */
void
api_spawn_fill(const json_t *req, struct api_spawn *sp)
{
	memset(sp, 0, sizeof *sp);
	sp->role = spawn_str(req, "role");
	sp->message = spawn_str(req, "message") != NULL ? spawn_str(req,
	    "message") : "";
	sp->tool = spawn_str(req, "tool");
	sp->command = spawn_str(req, "command");
	sp->model = spawn_str(req, "model");
}
