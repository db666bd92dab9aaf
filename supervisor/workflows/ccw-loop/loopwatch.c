/*
 * loopwatch.c: what a running loop does when its state file changes under
 * it: a front end's status change (pause, resume, a final value) seen by
 * the watch, and the file deleted by its owner (the workers closed, the
 * loop's files removed, exit 4).
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "loop.h"
#include "loopint.h"
#include "state.h"
#include "xmalloc.h"

/*
 * The owner deleted the state file: the loop is not ours to go on with.
 * Its workers are closed now, its end commits nothing (the file is never
 * made again) and loop_sides_done removes its files: exit 4.
 */
void
loop_deleted(struct loop *l)
{
	if (l->deleted)
		return;
	l->deleted = 1;
	log_warnx("loop %s: the state file was deleted: stopping its workers "
	    "and removing its files", l->cfg.id);
	state_store_nowait(l->store);
	if (l->phase == LP_DONE)	/* its last commit found it gone */
		l->exit_code = EXIT_STOPPED;
	else
		loop_end(l, EXIT_STOPPED, NULL, NULL);
}

/* A commit failed because the file is gone (the watch may not know yet). */
int
loop_file_gone(struct loop *l)
{
	struct stat	 sb;
	char		*name;
	int		 gone;

	xasprintf(&name, "%s.json", l->cfg.id);
	gone = fstatat(state_store_dirfd(l->store), name, &sb,
	    AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT;
	free(name);
	return gone;
}

/*
 * Another program changed the status: paused stops new workers (and
 * with --pause-policy interrupt closes the running ones); running again
 * cancels a pause not yet done; anything else is a stop.
 */
void
loop_watch_cb(const char *status, const json_t *st, void *arg)
{
	struct loop	*l = arg;

	(void)st;
	if (status == NULL) {
		loop_deleted(l);
		return;
	}
	log_info("loop %s: status is now %s", l->cfg.id, status);
	if (strcmp(status, "running") == 0) {
		if (loop_transition(l, LE_RESUME, 0) == 0)
			loop_kick(l);
	} else if (strcmp(status, "paused") == 0) {
		/* nobody answers a paused loop's questions: it ends now */
		if (l->cfg.pause_interrupt || l->phase == LP_ASKING)
			loop_end(l, EXIT_PAUSED, NULL, NULL);
		else {
			if (l->phase == LP_RUNNING)
				(void)loop_transition(l, LE_PAUSE, 0);
			loop_kick(l);
		}
	} else
		loop_stop(l, "the status was set to a final value by another "
		    "program");
}
