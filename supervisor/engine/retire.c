/*
 * retire.c: finished agents leave a long-lived host's memory.  Past the
 * newest `keep` finished agents of a table, each older one's report
 * (report_agent) goes to {id}.result.json beside its log and its record
 * is freed (agent_retire); `result` of a retired agent reads that file.
 * And a table's workers directory keeps the files of its newest
 * RETIRE_LOGS_KEEP agents (retire_logs).
 */
#include <config.h>

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent.h"
#include "log.h"
#include "retire.h"
#include "rotate.h"
#include "xmalloc.h"

struct retire {
	struct sup	*sup;
	unsigned	 keep;
	struct event	*ev;		/* the sweep, on the next loop turn */
	unsigned	 logs_at;	/* next agent index at the last trim */
};

/* How many agents' files a workers directory keeps. */
static unsigned long
retire_logs_keep(void)
{
	/* $CCW_WORKER_LOGS_KEEP: a test's seam */
	return (unsigned long)rotate_env("CCW_WORKER_LOGS_KEEP",
	    RETIRE_LOGS_KEEP);
}

/* Where a retired agent's report lives: beside its log (agent.c). */
static char *
retire_path(const struct sup *s, const char *id)
{
	char	*p;

	xasprintf(&p, "%s/%s.workers/%s.result.json", s->state_dir,
	    s->loop_id, id);
	return p;
}

/*
 * The report written whole (a temporary file renamed over), so that a
 * reader sees the old file or the new one; no fsync: the state file and
 * the log are the record, this is what `result` answers from.
 */
static int
retire_save(const struct agent *a)
{
	json_t	*rep = report_agent(a);
	char	*path = retire_path(a->sup, a->id), *tmp;
	int	 rc;

	xasprintf(&tmp, "%s.%ld.tmp", path, (long)getpid());
	rc = json_dump_file(rep, tmp, JSON_COMPACT);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -1;
	if (rc != 0) {
		log_warnx("%s: cannot save its result to %s: %s", a->id, path,
		    strerror(errno));
		(void)unlink(tmp);
	}
	json_decref(rep);
	free(tmp);
	free(path);
	return rc;
}

/* Can this agent go (final, nothing queued on it)? */
static int
retire_ready(const struct agent *a)
{
	return agent_final(a) && a->next_turn == NULL && a->chan == NULL &&
	    a->kill_ev == NULL;
}

/*
 * The sweep: the oldest finished agents beyond `keep` saved and freed.
 * It runs from its own event, never inside an agent's completion, so
 * no caller up the stack holds a record it frees.
 */
static void
retire_sweep(evutil_socket_t fd, short ev, void *arg)
{
	struct retire	*r = arg;
	struct agent	*a, *next;
	size_t		 n = 0;

	(void)fd;
	(void)ev;
	TAILQ_FOREACH(a, &r->sup->agents, entry)
		n += retire_ready(a);
	for (a = TAILQ_FIRST(&r->sup->agents); a != NULL && n > r->keep;
	    a = next) {
		next = TAILQ_NEXT(a, entry);
		if (!retire_ready(a) || retire_save(a) != 0)
			continue;
		log_debug("%s: retired (%u finished kept)", a->id, r->keep);
		if (agent_retire(a) == 0)
			n--;
	}
	/*
	 * Trimming reads the whole workers directory: once per keep/8 new
	 * agents, not per finished one (a control run of 1000 short workers
	 * read its 512-file directory 1000 times).  At most keep + keep/8
	 * agents' files stay.
	 */
	if (r->sup->next_index - r->logs_at >= retire_logs_keep() / 8) {
		r->logs_at = r->sup->next_index;
		(void)retire_logs(r->sup);
	}
}

/* A table's retention: keep its newest `keep` finished agents. */
struct retire *
retire_new(struct sup *s, unsigned keep)
{
	struct retire	*r = xcalloc(1, sizeof *r);

	r->sup = s;
	r->keep = keep;
	r->ev = event_new(s->base, -1, 0, retire_sweep, r);
	return r;
}

/* An agent of the table finished: sweep on the next loop turn. */
void
retire_soon(struct retire *r)
{
	if (r != NULL && r->ev != NULL)
		event_active(r->ev, EV_TIMEOUT, 0);
}

/* The retention is gone (the table is freed after it). */
void
retire_free(struct retire *r)
{
	if (r == NULL)
		return;
	if (r->ev != NULL)
		event_free(r->ev);
	free(r);
}

/*
 * The report a retired agent left, as `result` gave it before; NULL
 * when there is none (an id never spawned, or its file removed).
 */
json_t *
retire_read(const struct sup *s, const char *id)
{
	json_t	*j;
	char	*path;

	if (strchr(id, '/') != NULL || strncmp(id, "agent-", 6) != 0)
		return NULL;
	path = retire_path(s, id);
	j = json_load_file(path, 0, NULL);
	free(path);
	if (j != NULL && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

/* N of a name "agent-N.anything", else 0. */
static unsigned long
retire_file_index(const char *name)
{
	char		*end;
	unsigned long	 n;

	if (strncmp(name, "agent-", 6) != 0 || name[6] < '1' || name[6] > '9')
		return 0;
	n = strtoul(name + 6, &end, 10);
	return *end == '.' ? n : 0;
}

/* Is agent-N still in the table (running, or kept finished)? */
static int
retire_in_table(const struct sup *s, unsigned long n)
{
	const struct agent	*a;

	TAILQ_FOREACH(a, &s->agents, entry)
		if (a->index == n)
			return 1;
	return 0;
}

/*
 * The files (logs, turn logs, saved reports) of agents older than the
 * newest `keep` in the table's workers directory go, except those of an
 * agent still in the table: a host retried for weeks writes a log per
 * worker, each up to log_max_bytes.  The newest stay, so ids never
 * repeat (loopguard.c starts above every agent-N.* file).  Returns how
 * many files went.
 */
size_t
retire_logs(const struct sup *s)
{
	unsigned long	 keep, n, max = 0, below;
	struct dirent	*de;
	size_t		 gone = 0, count = 0;
	char		*path;
	DIR		*d;

	keep = retire_logs_keep();
	xasprintf(&path, "%s/%s.workers", s->state_dir, s->loop_id);
	if ((d = opendir(path)) == NULL) {
		free(path);
		return 0;
	}
	while ((de = readdir(d)) != NULL)
		if ((n = retire_file_index(de->d_name)) > 0) {
			count++;
			max = n > max ? n : max;
		}
	below = max > keep ? max - keep : 0;	/* ids are dense: agent-1.. */
	rewinddir(d);
	while (below > 0 && count > keep && (de = readdir(d)) != NULL) {
		n = retire_file_index(de->d_name);
		if (n == 0 || n > below || retire_in_table(s, n))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			gone++;
	}
	closedir(d);
	free(path);
	return gone;
}
