/*
 * children.c: owns the process's SIGCHLD handling: one registry on the
 * caller's event base, pid -> owner callback, reaping with
 * waitpid(-1, WNOHANG) until nothing is left.  Children nobody registered
 * are orphans the process adopted as a child subreaper; they are reaped
 * and dropped.  At free, whatever is left is killed and reaped.
 */
#include <config.h>

#include <sys/prctl.h>
#include <sys/queue.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "children.h"
#include "log.h"
#include "reap.h"
#include "xmalloc.h"

struct child {
	TAILQ_ENTRY(child)	 entry;
	pid_t			 pid;
	children_cb		 cb;
	void			*arg;
};

TAILQ_HEAD(child_list, child);

struct children {
	struct event_base	*base;
	struct event		*sigchld_ev;
	struct child_list	 watched;
	children_leak_cb	 leak;		/* a host's (leak.c); NULL: logged */
	void			*leak_arg;
};

/*
 * The one process-global: which registry exists.  waitpid(-1) and SIGCHLD
 * are process-wide, so a second reaper would silently steal (and drop) the
 * first one's children; refusing to create it is the only way to say so.
 * Nothing else of a registry is global.
 */
static struct children	*children_live;

/* The watch for pid, or NULL. */
static struct child *
children_find(const struct children *ch, pid_t pid)
{
	struct child	*c;

	TAILQ_FOREACH(c, &ch->watched, entry)
		if (c->pid == pid)
			return c;
	return NULL;
}

/*
 * Reap every child that has exited.  Its owner's callback runs after the
 * watch is dropped, so the callback may watch or forget other pids (a
 * finished agent starting its next turn).
 */
void
children_reap(struct children *ch)
{
	struct child	*c;
	children_cb	 cb;
	void		*arg;
	pid_t		 pid;
	int		 st;

	for (;;) {
		pid = waitpid(-1, &st, WNOHANG);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid <= 0)
			break;
		if ((c = children_find(ch, pid)) == NULL)
			continue;	/* an adopted orphan: reaped is all */
		TAILQ_REMOVE(&ch->watched, c, entry);
		cb = c->cb;
		arg = c->arg;
		free(c);
		cb(pid, st, arg);
	}
}

/* SIGCHLD, delivered through the event base: reap. */
static void
children_sigchld(evutil_socket_t sig, short ev, void *arg)
{
	(void)sig;
	(void)ev;
	children_reap(arg);
}

/*
 * The process's registry on base: it becomes a child subreaper (so every
 * descendant a tool abandons is ours to reap and to kill) and watches
 * SIGCHLD.  NULL with *err set if it cannot, or if a registry exists.
 */
struct children *
children_new(struct event_base *base, char **err)
{
	struct children	*ch;

	if (children_live != NULL) {
		*err = xstrdup("a child registry already exists in this "
		    "process (there is one SIGCHLD reaper per process)");
		return NULL;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
		xasprintf(err, "PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
		return NULL;
	}
	ch = xcalloc(1, sizeof *ch);
	ch->base = base;
	TAILQ_INIT(&ch->watched);
	ch->sigchld_ev = evsignal_new(base, SIGCHLD, children_sigchld, ch);
	if (ch->sigchld_ev == NULL || evsignal_add(ch->sigchld_ev, NULL) != 0) {
		if (ch->sigchld_ev != NULL)
			event_free(ch->sigchld_ev);
		free(ch);
		*err = xstrdup("cannot watch SIGCHLD");
		return NULL;
	}
	children_live = ch;
	return ch;
}

/*
 * Tell cb, once, how pid ended.  pid must be an unreaped child started by
 * the caller; it cannot have been reaped yet, since reaping happens only
 * here, on this event base.  -1 if pid is watched already.
 */
int
children_watch(struct children *ch, pid_t pid, children_cb cb, void *arg)
{
	struct child	*c;

	if (pid <= 0 || children_find(ch, pid) != NULL)
		return -1;
	c = xcalloc(1, sizeof *c);
	c->pid = pid;
	c->cb = cb;
	c->arg = arg;
	TAILQ_INSERT_TAIL(&ch->watched, c, entry);
	return 0;
}

/*
 * Is pid a child someone here started and watches (arg: the registry)?
 * Then it is no orphan: reap_orphans' skip callback.
 */
int
children_watched(pid_t pid, void *arg)
{
	return children_find(arg, pid) != NULL;
}

/* The owner is going away: pid is reaped as an orphan when it ends. */
void
children_forget(struct children *ch, pid_t pid)
{
	struct child	*c;

	if ((c = children_find(ch, pid)) != NULL) {
		TAILQ_REMOVE(&ch->watched, c, entry);
		free(c);
	}
}

/*
 * The one listener for leaks (a host: counted, published): every agent
 * table on the registry shares it, whichever front end made the table.
 * The first one asking gets it (serve's hosts share one bus and /metrics
 * sums their meters); -1 if another has it.
 */
int
children_on_leak(struct children *ch, children_leak_cb cb, void *arg)
{
	if (ch->leak != NULL)
		return -1;
	ch->leak = cb;
	ch->leak_arg = arg;
	return 0;
}

/* The listener with arg is going: leaks are logged only, until another. */
void
children_off_leak(struct children *ch, void *arg)
{
	if (ch->leak != NULL && ch->leak_arg == arg) {
		ch->leak = NULL;
		ch->leak_arg = NULL;
	}
}

/*
 * A worker's death left n processes, which were ended: to the listener,
 * or, with none (agent, a bare table), to the log.
 */
void
children_leaked(struct children *ch, const char *loop_id,
    const char *agent_id, unsigned n, const char *how)
{
	if (n == 0)
		return;
	if (ch != NULL && ch->leak != NULL) {
		ch->leak(loop_id, agent_id, n, how, ch->leak_arg);
		return;
	}
	log_warnx("%s: %u process%s outlived the worker and %s ended: %s",
	    agent_id, n, n == 1 ? "" : "es", n == 1 ? "was" : "were",
	    how != NULL ? how : "");
}

/*
 * The process is done with children: kill and reap every one left (owners
 * are not told; they are gone), then stop watching SIGCHLD.
 */
void
children_free(struct children *ch)
{
	struct child	*c;

	if (ch == NULL)
		return;
	reap_sweep(0, NULL, NULL);
	while ((c = TAILQ_FIRST(&ch->watched)) != NULL) {
		TAILQ_REMOVE(&ch->watched, c, entry);
		free(c);
	}
	event_free(ch->sigchld_ev);
	if (children_live == ch)
		children_live = NULL;
	free(ch);
}
