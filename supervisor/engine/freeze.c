/*
 * freeze.c: a local worker stopped where it is and let go on later: its
 * turn's cgroup frozen (cgroup.freeze), or without one SIGSTOP of the
 * worker and of every process under it (SIGCONT to thaw).  While it is
 * frozen the agent's own deadlines stand still (the hooks' frozen call).
 */
#include <config.h>

#include <sys/types.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent.h"
#include "chan.h"
#include "clock.h"
#include "freeze.h"
#include "log.h"
#include "reap.h"
#include "xmalloc.h"

#define FREEZE_MAX	4096	/* processes of one worker, at most */
#define FREEZE_ROUNDS	20	/* walks while new processes turn up */
#define FREEZE_POLL_MS	20	/* cgroup.events read this often */
#define FREEZE_SLOW_MS	2000	/* not frozen by then: said once */

/* Is (pid, start) one of the tree's already? */
static int
freeze_has(const struct freeze_tree *t, pid_t pid, unsigned long long start)
{
	int	i;

	for (i = 0; i < t->n; i++)
		if (t->pid[i] == pid && t->start[i] == start)
			return 1;
	return 0;
}

/*
 * One walk from the worker down (breadth first: a parent before its
 * children), each running process not stopped yet given SIGSTOP and
 * recorded; one its tool stopped itself is left as it is (and so is
 * left stopped by the thaw).  The worker is a child subreaper: whatever
 * its tools abandon stays under it.  How many were new.
 */
static int
freeze_walk(struct freeze_tree *t, pid_t worker, unsigned long long wstart)
{
	struct reap_stat	st;
	pid_t			kids[256], *q;
	int			i, k, n, nq = 0, added = 0;

	q = xcalloc(FREEZE_MAX, sizeof *q);
	q[nq++] = worker;
	for (i = 0; i < nq; i++) {
		if (reap_stat(q[i], &st) != 0 || st.state == 'Z' ||
		    (i == 0 && st.start != wstart))
			continue;
		if (st.state != 'T' && st.state != 't' &&
		    !freeze_has(t, q[i], st.start) && t->n < FREEZE_MAX) {
			(void)reap_signal(q[i], st.start, SIGSTOP, 0);
			t->pid[t->n] = q[i];
			t->start[t->n++] = st.start;
			added++;
		}
		n = reap_children(q[i], kids, 256);
		for (k = 0; k < n && nq < FREEZE_MAX; k++)
			q[nq++] = kids[k];
	}
	free(q);
	return added;
}

/*
 * Every process of the worker stopped, walking again while new ones
 * turn up (forked before they were stopped): what was stopped.
 */
static struct freeze_tree *
freeze_stop_tree(const struct agent *a)
{
	struct freeze_tree	*t = xcalloc(1, sizeof *t);
	int			 round;

	t->pid = xcalloc(FREEZE_MAX, sizeof *t->pid);
	t->start = xcalloc(FREEZE_MAX, sizeof *t->start);
	for (round = 0; round < FREEZE_ROUNDS; round++)
		if (freeze_walk(t, a->pid, a->start) == 0)
			break;
	return t;
}

/* What a freeze stopped goes on, the worker last; the record freed. */
static void
freeze_cont_tree(struct freeze_tree *t)
{
	int	i;

	for (i = t->n - 1; i >= 0; i--)
		(void)reap_signal(t->pid[i], t->start[i], SIGCONT, 0);
	free(t->start);
	free(t->pid);
	free(t);
}

/* cgroup.events says frozen 1 (or the cgroup is gone). */
static int
freeze_cgroup_frozen(const char *dir)
{
	char	 path[4096], line[128];
	FILE	*fp;
	int	 frozen = -1;

	snprintf(path, sizeof path, "%s/cgroup.events", dir);
	if ((fp = fopen(path, "re")) == NULL)
		return 1;
	while (fgets(line, sizeof line, fp) != NULL)
		if (strncmp(line, "frozen ", 7) == 0)
			frozen = atoi(line + 7);
	fclose(fp);
	return frozen != 0;
}

/*
 * The kernel freezes a cgroup's tasks asynchronously: cgroup.events is
 * read every FREEZE_POLL_MS (the event loop never waits) until it says
 * frozen, and a cgroup still not frozen after FREEZE_SLOW_MS is said.
 */
static void
freeze_check_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct agent	*a = arg;
	uint64_t	 took = clock_mono_ms() - a->t_frozen;

	(void)fd;
	(void)ev;
	if (!a->frozen || a->cg_path == NULL)
		return;
	if (freeze_cgroup_frozen(a->cg_path)) {
		log_debug("%s: cgroup frozen in %llu ms", a->id,
		    (unsigned long long)took);
		return;
	}
	if (took >= FREEZE_SLOW_MS && took < FREEZE_SLOW_MS + FREEZE_POLL_MS)
		log_warnx("%s: cgroup %s not frozen after %llu ms", a->id,
		    a->cg_path, (unsigned long long)took);
	chan_arm_ms(a->freeze_ev, FREEZE_POLL_MS);
}

/*
 * Freeze a's worker and its tool where they are (why: for the log).  A
 * remote worker (behind a launcher) is not ours to stop, nor one not
 * running: -1, said in the log.  Its deadlines stop until agent_thaw.
 */
int
agent_freeze(struct agent *a, const char *why)
{
	if (a->frozen)
		return 0;
	if (a->launch.argv.n > 0) {
		log_warnx("%s: a remote worker (behind a launcher) cannot be "
		    "frozen from here: it goes on", a->id);
		return -1;
	}
	if (agent_final(a) || a->pid <= 0 || a->reaped ||
	    a->phase == AP_CLOSING) {
		log_info("%s: not running: nothing to freeze", a->id);
		return -1;
	}
	a->frozen = 1;
	a->t_frozen = clock_mono_ms();
	free(a->frozen_why);
	a->frozen_why = xstrdup(why != NULL ? why : "held");
	if (a->cg_path != NULL &&
	    cgroup_write(a->cg_path, "cgroup.freeze", "1") == 0) {
		if (a->freeze_ev == NULL)
			a->freeze_ev = evtimer_new(a->sup->base,
			    freeze_check_cb, a);
		chan_arm_ms(a->freeze_ev, 0);
		log_info("%s: freezing its cgroup: %s", a->id, a->frozen_why);
	} else {
		a->frozen_tree = freeze_stop_tree(a);
		log_info("%s: %d processes stopped: %s", a->id,
		    a->frozen_tree->n, a->frozen_why);
	}
	/* should we die now, the guard lets them go on (and end) */
	a->freeze_guard = freeze_guard_start(a->frozen_tree, a->frozen_tree ==
	    NULL ? a->cg_path : NULL);
	if (a->sup->hooks.frozen != NULL)
		a->sup->hooks.frozen(a, 1, a->sup->hooks_arg);
	return 0;
}

/*
 * Let a frozen worker go on, its deadlines with what they had left:
 * its cgroup thawed, or what the freeze stopped continued.
 */
void
agent_thaw(struct agent *a)
{
	uint64_t	held;

	if (!a->frozen)
		return;
	held = clock_mono_ms() - a->t_frozen;
	a->frozen = 0;
	a->frozen_ms += held;
	a->t_activity += held;	/* silence counts running time only */
	if (a->freeze_ev != NULL)
		event_del(a->freeze_ev);
	if (a->frozen_tree != NULL)
		freeze_cont_tree(a->frozen_tree);
	else if (a->cg_path != NULL)
		(void)cgroup_write(a->cg_path, "cgroup.freeze", "0");
	a->frozen_tree = NULL;
	freeze_guard_end(a->freeze_guard);
	a->freeze_guard = -1;
	log_info("%s: thawed after %llu ms", a->id, (unsigned long long)held);
	if (a->sup->hooks.frozen != NULL)
		a->sup->hooks.frozen(a, 0, a->sup->hooks_arg);
}

/* How long a has been frozen, every freeze of it summed, ms. */
uint64_t
agent_frozen_ms(const struct agent *a)
{
	return a->frozen_ms + (a->frozen ? clock_mono_ms() - a->t_frozen : 0);
}
