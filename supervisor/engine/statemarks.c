/*
 * statemarks.c: the write marks a store keeps of the files its commits
 * wrote (device, inode, size, mtime), so that its watch can tell its own
 * writes from a front end's.  One set per store, no process-wide ring.
 */
#include <config.h>

#include <sys/stat.h>

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "state.h"
#include "xmalloc.h"

#define MARKS_N		16	/* files remembered per store */

/*
 * The files one store's commits wrote, so that its watch can tell its
 * own.  Written by the committer thread before the rename makes a file
 * visible, read by the watch on the loop: hence the mutex.
 */
struct state_marks {
	pthread_mutex_t	 mu;
	struct {
		dev_t		 dev;
		ino_t		 ino;
		off_t		 size;
		struct timespec	 mtim;
		enum state_mark	 kind;
	}		 ring[MARKS_N];
	unsigned	 n;
};

/* An empty set of marks, for one store. */
struct state_marks *
state_marks_new(void)
{
	struct state_marks	*m = xcalloc(1, sizeof *m);

	pthread_mutex_init(&m->mu, NULL);
	return m;
}

/* The marks die with their store. */
void
state_marks_free(struct state_marks *m)
{
	if (m == NULL)
		return;
	pthread_mutex_destroy(&m->mu);
	free(m);
}

/* The slot remembering this file as written, or -1. */
static int
marks_slot(const struct state_marks *m, const struct stat *st)
{
	int	i;

	for (i = 0; i < MARKS_N; i++)
		if (m->ring[i].ino != 0 && m->ring[i].dev == st->st_dev &&
		    m->ring[i].ino == st->st_ino &&
		    m->ring[i].size == st->st_size &&
		    m->ring[i].mtim.tv_sec == st->st_mtim.tv_sec &&
		    m->ring[i].mtim.tv_nsec == st->st_mtim.tv_nsec)
			return i;
	return -1;
}

/* A commit remembers the file it puts in place (again: a new kind). */
void
state_marks_add(struct state_marks *m, const struct stat *st,
    enum state_mark kind)
{
	int	i;

	if (m == NULL)
		return;
	pthread_mutex_lock(&m->mu);
	if ((i = marks_slot(m, st)) < 0)
		i = (int)(m->n++ % MARKS_N);
	m->ring[i].dev = st->st_dev;
	m->ring[i].ino = st->st_ino;
	m->ring[i].size = st->st_size;
	m->ring[i].mtim = st->st_mtim;
	m->ring[i].kind = kind;
	pthread_mutex_unlock(&m->mu);
}

/*
 * Whether this store wrote the file (untouched since), and where its
 * status came from: a watcher reports only the other side's changes.
 */
enum state_mark
state_marks_find(struct state_marks *m, const struct stat *st)
{
	enum state_mark	kind = STATE_MARK_NONE;
	int		i;

	if (m == NULL)
		return kind;
	pthread_mutex_lock(&m->mu);
	if ((i = marks_slot(m, st)) >= 0)
		kind = m->ring[i].kind;
	pthread_mutex_unlock(&m->mu);
	return kind;
}
