/*
 * statemarks.c: the write marks a store keeps of the files its commits
 * wrote (device, inode, size, mtime), so that its watch can tell its own
 * writes from a front end's, and whether a front end's write reverted
 * the engine's fields.  One set per store, no process-wide ring.
 */
#include <config.h>

#include <sys/stat.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
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

/* A status the engine's own end transition leaves. */
static int
marks_terminal(const char *st)
{
	return st != NULL && (strcmp(st, "completed") == 0 ||
	    strcmp(st, "failed") == 0);
}

/*
 * Did a write of the other side (DISK) revert what the engine owns, as
 * its last commit (LAST) has it: skill_state, current_iteration, or an
 * ended loop's status back to running (a rewrite from a read taken
 * before the end)?  The front end's own fields are not looked at.
 */
int
state_owned_reverted(const json_t *disk, const json_t *last)
{
	const char	*ls, *ds;

	if (!json_is_object(last))
		return 0;
	if (!json_is_object(disk))
		return 1;
	if (!json_equal(json_object_get(disk, "skill_state"),
	    json_object_get(last, "skill_state")) &&
	    json_object_get(last, "skill_state") != NULL)
		return 1;
	if (!json_equal(json_object_get(disk, "current_iteration"),
	    json_object_get(last, "current_iteration")) &&
	    json_object_get(last, "current_iteration") != NULL)
		return 1;
	ls = json_string_value(json_object_get(last, "status"));
	ds = json_string_value(json_object_get(disk, "status"));
	return marks_terminal(ls) && ds != NULL && strcmp(ds, "running") == 0;
}
