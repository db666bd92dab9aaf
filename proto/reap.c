/*
 * reap.c: shared by the supervisor and the worker, both child
 * subreapers: anything a tool forks and abandons becomes their child, so
 * killing every descendant /proc shows under them really is killing the
 * whole tree, given a few rounds for what is forked meanwhile.  Also the
 * supervisor's sweep of a dead worker's session (reap_orphans): only what
 * /proc proves is of that session, or descends from it.
 */
#include <config.h>

#include <sys/syscall.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "reap.h"
#include "xmalloc.h"

#define REAP_ROUNDS	20
#define REAP_MAX	4096
#define REAP_BUF	65536

/* A process a sweep found: its pid and start time (who it is). */
struct reap_node {
	pid_t			pid;
	unsigned long long	start;
};

/* A sweep's processes: those found this round, and those killed so far. */
struct reap_set {
	struct reap_node	*v;
	int			 n;
};

/* Read the identity fields of /proc/PID/stat; -1 if pid is gone. */
int
reap_stat(pid_t pid, struct reap_stat *ps)
{
	char	 path[64], buf[1024], *p, *q, *tok, *save = NULL;
	FILE	*fp;
	size_t	 n;
	int	 i;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	/* the command name may hold anything: the fields follow its last ) */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ' ||
	    (q = strchr(buf, '(')) == NULL || q > p)
		return -1;
	snprintf(ps->comm, sizeof ps->comm, "%.*s", (int)(p - q - 1), q + 1);
	/* fields 3 (state) .. 22 (starttime), counting from pid = 1 */
	for (i = 3, tok = strtok_r(p + 2, " ", &save); tok != NULL && i <= 22;
	    i++, tok = strtok_r(NULL, " ", &save)) {
		if (i == 3)
			ps->state = tok[0];
		else if (i == 4)
			ps->ppid = (pid_t)strtol(tok, NULL, 10);
		else if (i == 5)
			ps->pgrp = (pid_t)strtol(tok, NULL, 10);
		else if (i == 6)
			ps->sid = (pid_t)strtol(tok, NULL, 10);
		else if (i == 22)
			ps->start = strtoull(tok, NULL, 10);
	}
	return i <= 22 ? -1 : 0;
}

/* The pids in one children file, appended to out[n..max); the new n. */
static int
reap_children_file(const char *path, char *buf, pid_t *out, int n, int max)
{
	FILE	*fp;
	size_t	 len;
	char	*p, *end;

	if ((fp = fopen(path, "re")) == NULL)
		return n;
	len = fread(buf, 1, REAP_BUF - 1, fp);
	fclose(fp);
	buf[len] = '\0';
	for (p = buf; n < max; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		out[n++] = (pid_t)v;
	}
	return n;
}

/*
 * The children of pid (0: ours), from /proc/PID/task/TID/children of
 * each of its threads; at most max.
 */
int
reap_children(pid_t pid, pid_t *out, int max)
{
	char		 dir[64], path[128], *buf;
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	if (pid > 0)
		snprintf(dir, sizeof dir, "/proc/%ld/task", (long)pid);
	else
		snprintf(dir, sizeof dir, "/proc/self/task");
	if ((d = opendir(dir)) == NULL)
		return 0;
	buf = xmalloc(REAP_BUF);
	while ((de = readdir(d)) != NULL && n < max) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%.20s/children", dir,
		    de->d_name);
		n = reap_children_file(path, buf, out, n, max);
	}
	free(buf);
	closedir(d);
	return n;
}

/*
 * The children of our main thread only: where the kernel hands a
 * subreaper its orphans (find_new_reaper: the first live thread, the
 * leader).  A host with hundreds of threads read every one's file per
 * dead worker, for orphans that only ever come here.
 */
static int
reap_leader_children(pid_t *out, int max)
{
	char	path[64], *buf;
	int	n;

	snprintf(path, sizeof path, "/proc/self/task/%ld/children",
	    (long)getpid());
	/* a /proc of another pid namespace: every thread, as before */
	if (access(path, R_OK) != 0)
		return reap_children(0, out, max);
	buf = xmalloc(REAP_BUF);
	n = reap_children_file(path, buf, out, 0, max);
	free(buf);
	return n;
}

/* Ours, on every thread or (leader) on the main thread's list only. */
static int
reap_read(pid_t *out, int max, int leader)
{
	return leader ? reap_leader_children(out, max) :
	    reap_children(0, out, max);
}

/*
 * Our children (leader: the main thread's only, see above).  The
 * kernel's children files can miss a child while the list changes under
 * the read (proc(5): reliable only when the children are stopped), and
 * orphans are being handed to us right now: read until two reads in a
 * row agree (a few at most).
 */
int
reap_list(pid_t *out, int max, int leader)
{
	pid_t	*again = xcalloc((size_t)max, sizeof *again);
	int	 n, m, tries;

	n = reap_read(out, max, leader);
	for (tries = 0; tries < 4; tries++) {
		m = reap_read(again, max, leader);
		if (m == n && memcmp(again, out, (size_t)n * sizeof *out) == 0)
			break;
		memcpy(out, again, (size_t)m * sizeof *out);
		n = m;
	}
	free(again);
	return n;
}

/* Is (pid, start) in the set? */
static int
reap_has(const struct reap_set *s, pid_t pid, unsigned long long start)
{
	int	i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].pid == pid && s->v[i].start == start)
			return 1;
	return 0;
}

/* Add (pid, start) to the set, if there is room and it is new. */
static int
reap_add(struct reap_set *s, pid_t pid, unsigned long long start)
{
	if (s->n >= REAP_MAX || reap_has(s, pid, start))
		return 0;
	s->v[s->n].pid = pid;
	s->v[s->n].start = start;
	s->n++;
	return 1;
}

/*
 * Signal the process pid if it is still the one that started at start,
 * then (then not 0) send it then too.  Through a pidfd when there is
 * one, opened before the check, so a pid reused after the check cannot
 * be reached.  -1 if it is gone.
 */
int
reap_signal(pid_t pid, unsigned long long start, int sig, int then)
{
	struct reap_stat	st;
	int			fd = -1;

#ifdef SYS_pidfd_open
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0 && errno == ESRCH)
		return -1;
#endif
	if (reap_stat(pid, &st) != 0 || st.start != start || st.state == 'Z') {
		if (fd >= 0)
			close(fd);
		return -1;
	}
#ifdef SYS_pidfd_send_signal
	if (fd >= 0) {
		(void)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
		if (then != 0)
			(void)syscall(SYS_pidfd_send_signal, fd, then, NULL, 0);
		close(fd);
		return 0;
	}
#endif
	if (fd >= 0)
		close(fd);
	kill(pid, sig);
	if (then != 0)
		kill(pid, then);
	return 0;
}

/* Signal it, then SIGCONT it (a stopped process gets no SIGTERM until
 * continued). */
static int
reap_kill(pid_t pid, unsigned long long start, int sig)
{
	return reap_signal(pid, start, sig, SIGCONT);
}

/*
 * Add the live descendants of the set's members from index from on (the
 * set grows as it is walked: breadth first).  Zombies are dead: skipped.
 */
static void
reap_descend(struct reap_set *s, int from, unsigned long long min_start)
{
	struct reap_stat	st;
	pid_t			kids[256];
	int			i, k, n;

	for (i = from; i < s->n; i++) {
		n = reap_children(s->v[i].pid, kids, 256);
		for (k = 0; k < n; k++)
			if (reap_stat(kids[k], &st) == 0 && st.state != 'Z' &&
			    st.start >= min_start)
				(void)reap_add(s, kids[k], st.start);
	}
}

/* Is any process of the set still alive (not a zombie)? */
static int
reap_alive(const struct reap_set *s)
{
	struct reap_stat	st;
	int			i;

	for (i = 0; i < s->n; i++)
		if (reap_stat(s->v[i].pid, &st) == 0 &&
		    st.start == s->v[i].start && st.state != 'Z')
			return 1;
	return 0;
}

/* A millisecond for SIGKILLed processes to finish dying. */
static void
reap_pause(void)
{
	struct timespec	ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
}

/* Reap the listed children; watch's status goes to *st, *got. */
static void
reap_wait(const pid_t *pids, int n, pid_t watch, int *st, int *got)
{
	pid_t	pid;
	int	i, status;

	for (i = 0; i < n; i++) {
		while ((pid = waitpid(pids[i], &status, 0)) < 0 &&
		    errno == EINTR)
			;
		if (pid > 0 && pid == watch && got != NULL) {
			*st = status;
			*got = 1;
		}
	}
}

/* A sweep's working lists: our children, the tree found, those killed. */
struct reap_round {
	pid_t			*pids;
	int			 n;
	struct reap_set		 tree, killed;
};

/* The lists, empty, for one sweep. */
static void
reap_round_init(struct reap_round *r)
{
	r->pids = xcalloc(REAP_MAX, sizeof *r->pids);
	r->n = 0;
	r->tree.v = xcalloc(REAP_MAX, sizeof *r->tree.v);
	r->tree.n = 0;
	r->killed.v = xcalloc(REAP_MAX, sizeof *r->killed.v);
	r->killed.n = 0;
}

/* The sweep is over. */
static void
reap_round_free(struct reap_round *r)
{
	free(r->killed.v);
	free(r->tree.v);
	free(r->pids);
}

/*
 * One round's picture, taken whole before anything is killed (a process
 * killed first would hand its children to us, and the link that proves
 * whose they are would be gone): our children in r->pids, and in r->tree
 * the live ones of session sid (0: any) started at start or later, with
 * every live process under them.
 */
static void
reap_round_find(struct reap_round *r, pid_t sid, unsigned long long start,
    reap_skip_cb skip, void *arg)
{
	struct reap_stat	ps;
	int			i;

	/* a dead session's orphans all came to the main thread */
	r->n = reap_list(r->pids, REAP_MAX, sid != 0);
	r->tree.n = 0;
	for (i = 0; i < r->n; i++)
		if ((skip == NULL || !skip(r->pids[i], arg)) &&
		    reap_stat(r->pids[i], &ps) == 0 && ps.state != 'Z' &&
		    (sid == 0 || ps.sid == sid) && ps.start >= start)
			(void)reap_add(&r->tree, r->pids[i], ps.start);
	reap_descend(&r->tree, 0, start);
}

/*
 * SIGKILL every descendant (each child and its process group, and every
 * process under them, all found before any is killed: a stopped
 * grandchild in a session of its own under a dying parent included),
 * reap the children, and repeat while new orphans arrive or a killed
 * process is still dying.  When watch is one of them, its wait status is
 * stored in *st and *got set, so its caller does not lose it.
 */
void
reap_sweep(pid_t watch, int *st, int *got)
{
	struct reap_round	r;
	pid_t			pid;
	int			i, round, status;

	reap_round_init(&r);
	for (round = 0; round < REAP_ROUNDS; round++) {
		reap_round_find(&r, 0, 0, NULL, NULL);
		if (r.n == 0 && !reap_alive(&r.killed))
			break;
		for (i = 0; i < r.n; i++)
			kill(-r.pids[i], SIGKILL);
		for (i = 0; i < r.tree.n; i++)
			if (reap_kill(r.tree.v[i].pid, r.tree.v[i].start,
			    SIGKILL) == 0)
				(void)reap_add(&r.killed, r.tree.v[i].pid,
				    r.tree.v[i].start);
		reap_wait(r.pids, r.n, watch, st, got);
		if (r.n == 0)
			reap_pause();
	}
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		if (pid == watch && got != NULL) {
			*st = status;
			*got = 1;
		}
	reap_round_free(&r);
}

/*
 * End a process found for the first time: SIGKILL, SIGCONT; counted in
 * killed and its "comm[pid]" appended to how (named before the kill,
 * while /proc still has it) if it was alive.
 */
static void
reap_end(struct reap_set *killed, const struct reap_node *p, char *how,
    size_t len)
{
	struct reap_stat	st;
	size_t			at = how != NULL ? strlen(how) : 0;

	if (reap_stat(p->pid, &st) != 0)
		return;
	if (how != NULL && at + strlen(st.comm) + 24 < len)
		snprintf(how + at, len - at, "%s%s[%ld]", at > 0 ? " " : "",
		    st.comm, (long)p->pid);
	if (reap_kill(p->pid, p->start, SIGKILL) != 0 ||
	    !reap_add(killed, p->pid, p->start)) {
		if (how != NULL && at < len)
			how[at] = '\0';
	}
}

/*
 * A worker that led session sid, started at start, is dead (reaped): end
 * the processes it left, which we adopted as a subreaper.  Proven ours:
 * a child of ours in session sid (a session keeps its id in use, so sid
 * names no other session while one of them lives) started no earlier
 * than the worker, and every live process under such a one (a setsid
 * grandchild under the tool's child).  Nothing else is touched.  Each is
 * SIGKILLed (then SIGCONTed) through a pidfd after its start time is
 * checked again; rounds catch what they fork meanwhile.  The zombies are
 * left to the caller's reaper.  Returns how many were ended; how gets
 * their names.  skip(pid, arg), when given, names children known to be
 * in no such session (the caller's live workers, each leading its own):
 * their /proc/PID/stat is not read, which was most of a sweep's cost
 * with many workers alive.
 */
unsigned
reap_orphans(pid_t sid, unsigned long long start, reap_skip_cb skip,
    void *arg, char *how, size_t len)
{
	struct reap_round	r;
	struct reap_node	*p;
	unsigned		n;
	int			i, round;

	if (how != NULL && len > 0)
		how[0] = '\0';
	if (sid <= 1)
		return 0;
	reap_round_init(&r);
	for (round = 0; round < REAP_ROUNDS; round++) {
		reap_round_find(&r, sid, start, skip, arg);
		if (r.tree.n == 0 && !reap_alive(&r.killed))
			break;
		for (i = 0; i < r.tree.n; i++) {
			p = &r.tree.v[i];
			if (reap_has(&r.killed, p->pid, p->start))
				(void)reap_kill(p->pid, p->start, SIGKILL);
			else
				reap_end(&r.killed, p, how, len);
		}
		reap_pause();
	}
	n = (unsigned)r.killed.n;
	reap_round_free(&r);
	return n;
}

/*
 * The child writes its errno to a close-on-exec pipe when exec fails; EOF
 * means the exec happened.  A failed child is reaped here.  Returns 0 or
 * the child's errno.
 */
int
reap_exec_status(int fd, pid_t pid)
{
	ssize_t	n;
	int	e = 0;

	do
		n = read(fd, &e, sizeof e);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n != (ssize_t)sizeof e)
		return 0;
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return e != 0 ? e : EIO;
}
