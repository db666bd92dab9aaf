/*
 * askwatch.c: while a loop waits for answers, inotify on its state
 * directory tells it at once that {id}.answers.jsonl was written (a
 * front end in another process appended an answer).  Without inotify
 * (asked off for a network file system, or failing) there is no watch
 * and the loop polls the file instead (loop.c).
 */
#include <config.h>

#include <sys/inotify.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "askwatch.h"
#include "log.h"
#include "question.h"
#include "state.h"
#include "xmalloc.h"

#define ASKWATCH_MASK	(IN_CLOSE_WRITE | IN_MODIFY | IN_CREATE | IN_MOVED_TO)

struct askwatch {
	int		 ifd;
	struct event	*ev;
	char		*name;		/* {id}.answers.jsonl */
	void		(*cb)(void *);
	void		*arg;
};

/*
 * The queue drained (statewatch.c's way); the answers file among the
 * names: the callback, last (it may free the watch).
 */
static void
askwatch_cb(evutil_socket_t fd, short what, void *arg)
{
	struct askwatch	*w = arg;
	int		 gone = 0;

	(void)fd;
	(void)what;
	if (state_watch_drain(w->ifd, w->name, &gone))
		w->cb(w->arg);
}

/*
 * Watch the state directory (dirfd) for loop_id's answers file; cb on
 * each write.  NULL when inotify cannot (the caller polls).
 */
struct askwatch *
askwatch_new(struct event_base *base, int dirfd, const char *loop_id,
    void (*cb)(void *), void *arg)
{
	struct askwatch	*w = xcalloc(1, sizeof *w);
	char		 path[64];

	snprintf(path, sizeof path, "/proc/self/fd/%d", dirfd);
	w->name = question_answers_name(loop_id);
	w->cb = cb;
	w->arg = arg;
	if ((w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0 ||
	    inotify_add_watch(w->ifd, path, ASKWATCH_MASK) < 0 ||
	    (w->ev = event_new(base, w->ifd, EV_READ | EV_PERSIST,
	    askwatch_cb, w)) == NULL || event_add(w->ev, NULL) != 0) {
		log_warnx("loop %s: answers: inotify: %s; polling instead",
		    loop_id, strerror(errno));
		askwatch_free(w);
		return NULL;
	}
	return w;
}

/* Stop watching (from inside its own callback too). */
void
askwatch_free(struct askwatch *w)
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
