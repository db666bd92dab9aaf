/*
 * filewatch.c: inotify on a directory, for one name in it: the caller
 * is told at once that the file was written by another process (a front
 * end's answer appended to a loop's {id}.answers.jsonl, a raised budget
 * in a batch's state.json).  Without inotify (failing, or asked off for
 * a network file system) there is no watch and the caller polls.
 */
#include <config.h>

#include <sys/inotify.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "filewatch.h"
#include "state.h"
#include "xmalloc.h"

struct filewatch {
	int		 ifd;
	struct event	*ev;
	char		*name;
	void		(*cb)(void *);
	void		*arg;
};

/* The inotify events each kind of watch asks for. */
static const uint32_t filewatch_masks[] = {
	[FILEWATCH_WRITES] = IN_CLOSE_WRITE | IN_MODIFY | IN_CREATE |
	    IN_MOVED_TO,
	[FILEWATCH_WHOLE] = IN_CLOSE_WRITE | IN_MOVED_TO,
};

/*
 * The queue drained (statewatch.c's way); the name among those written:
 * the callback, last (it may free the watch).
 */
static void
filewatch_cb(evutil_socket_t fd, short what, void *arg)
{
	struct filewatch	*w = arg;
	int			 gone = 0;

	(void)fd;
	(void)what;
	if (state_watch_drain(w->ifd, w->name, &gone))
		w->cb(w->arg);
}

/*
 * Watch NAME in the directory dirfd: cb(arg) on its writes of the kind
 * asked.  NULL and *err when inotify cannot (the caller polls then).
 */
struct filewatch *
filewatch_new(struct event_base *base, int dirfd, const char *name,
    enum filewatch_what what, void (*cb)(void *), void *arg, char **err)
{
	struct filewatch	*w = xcalloc(1, sizeof *w);
	char			 path[64];

	snprintf(path, sizeof path, "/proc/self/fd/%d", dirfd);
	w->name = xstrdup(name);
	w->cb = cb;
	w->arg = arg;
	if ((w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0 ||
	    inotify_add_watch(w->ifd, path, filewatch_masks[what]) < 0 ||
	    (w->ev = event_new(base, w->ifd, EV_READ | EV_PERSIST,
	    filewatch_cb, w)) == NULL || event_add(w->ev, NULL) != 0) {
		xasprintf(err, "inotify: %s", strerror(errno));
		filewatch_free(w);
		return NULL;
	}
	return w;
}

/* Stop watching (from inside its own callback too). */
void
filewatch_free(struct filewatch *w)
{
	if (w == NULL)
		return;
	if (w->ev != NULL)
		event_free(w->ev);
	if (w->ifd >= 0)
		close(w->ifd);
	free(w->name);
	free(w);
}
