/*
 * cgroup.c: the kernel's cgroup v2 interface for containment: where the
 * v2 hierarchy is mounted (/proc/self/mountinfo, never assumed) and our
 * own place in it (/proc/self/cgroup), a worker's directory made under
 * it, the procs file its child writes itself into before exec, and its
 * end: what was left counted, killed whole (cgroup.kill, or freeze, kill,
 * thaw), measured (cpu.stat, memory.peak) and removed.
 */
#include <config.h>

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "xmalloc.h"

/* rmdir is tried this often, the wait growing to CGROUP_WAIT_MAX_MS. */
#define CGROUP_RMDIR_TRIES	200
#define CGROUP_WAIT_MAX_MS	10

/* The limits a role may set: the cgroup file and its controller. */
static const struct cgroup_limit {
	const char	*file, *controller;
} cgroup_limits[] = {
	{ "memory.max",	"memory" },
	{ "pids.max",	"pids" },
	{ "cpu.weight",	"cpu" },
};
#define CGROUP_NLIMITS	(sizeof cgroup_limits / sizeof cgroup_limits[0])

/* What cgroup_walk does to each process of a subtree. */
enum cgroup_act {
	CGROUP_COUNT,		/* count the live ones */
	CGROUP_KILL,		/* SIGKILL each (the frozen fallback) */
};

/*
 * The first line of DIR/FILE without its newline, or NULL: the kernel's
 * one-line files (cgroup.controllers, memory.peak, the "0::" of ours).
 */
char *
cgroup_read_line(const char *dir, const char *file)
{
	char	 path[PATH_MAX], buf[1024];
	FILE	*fp;
	size_t	 n;

	snprintf(path, sizeof path, "%s/%s", dir, file);
	if ((fp = fopen(path, "re")) == NULL)
		return NULL;
	if (fgets(buf, sizeof buf, fp) == NULL)
		buf[0] = '\0';
	fclose(fp);
	n = strcspn(buf, "\n");
	buf[n] = '\0';
	return xstrdup(buf);
}

/* Write a short string to DIR/FILE (cgroup.kill, cgroup.freeze). */
int
cgroup_write(const char *dir, const char *file, const char *s)
{
	char	path[PATH_MAX];
	int	fd, rc;

	snprintf(path, sizeof path, "%s/%s", dir, file);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -1;
	rc = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
	close(fd);
	return rc;
}

/*
 * Our cgroup in the v2 hierarchy: the "0::PATH" line of /proc/self/cgroup
 * (the only line on a unified host, the last on a hybrid one).
 */
static char *
cgroup_own(void)
{
	char	 line[PATH_MAX + 8], *own = NULL;
	FILE	*fp;

	if ((fp = fopen("/proc/self/cgroup", "re")) == NULL)
		return NULL;
	while (fgets(line, sizeof line, fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "0::", 3) == 0 && line[3] == '/') {
			free(own);
			own = xstrdup(line + 3);
		}
	}
	fclose(fp);
	return own;
}

/*
 * The mount point of a cgroup2 file system and the root it shows (its
 * field 4), from /proc/self/mountinfo: "ID PARENT MAJ:MIN ROOT POINT
 * OPTIONS... - cgroup2 SOURCE SUPER".  The first one found.
 */
static int
cgroup_mount(char **point, char **root)
{
	char	 line[4096], *f[5], *sep, *save;
	FILE	*fp;
	int	 i, found = -1;

	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	while (found != 0 && fgets(line, sizeof line, fp) != NULL) {
		if ((sep = strstr(line, " - cgroup2 ")) == NULL)
			continue;
		*sep = '\0';
		save = NULL;
		for (i = 0; i < 5; i++)
			if ((f[i] = strtok_r(i == 0 ? line : NULL, " ",
			    &save)) == NULL)
				break;
		if (i < 5 || strchr(f[4], '\\') != NULL)
			continue;	/* an escaped blank: not ours to parse */
		*point = xstrdup(f[4]);
		*root = xstrdup(f[3]);
		found = 0;
	}
	fclose(fp);
	return found;
}

/*
 * The v2 hierarchy (*mount) and our own directory in it (*dir, a path
 * under *mount).  -1: no v2 hierarchy mounted, or we are not in it.
 */
int
cgroup_find_v2(char **mount, char **dir)
{
	char	*point = NULL, *root = NULL, *own;
	size_t	 rl;
	int	 rc = -1;

	*mount = *dir = NULL;
	if (cgroup_mount(&point, &root) != 0)
		return -1;
	if ((own = cgroup_own()) != NULL) {
		/* a mount of a subtree shows paths below its root */
		rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
		if (rl == 0 || (strncmp(own, root, rl) == 0 &&
		    (own[rl] == '/' || own[rl] == '\0'))) {
			xasprintf(dir, "%s%s", point,
			    strcmp(own + rl, "/") == 0 ? "" : own + rl);
			*mount = point;
			point = NULL;
			rc = 0;
		}
	}
	free(own);
	free(root);
	free(point);
	return rc;
}

/*
 * A directory name from an id: [A-Za-z0-9_-] kept, anything else '_',
 * so no name can be a control file's (they all hold a dot) or climb.
 */
static char *
cgroup_name(const char *id)
{
	char	*s = xstrdup(id != NULL && *id != '\0' ? id : "none"), *p;

	for (p = s; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			*p = '_';
	return s;
}

/*
 * Make the worker's cgroup <base>/<loop>/<agent> (and its parents), the
 * names sanitised.  Its path, or NULL and *err.  One left by an earlier
 * turn that could not be removed is used again.
 */
char *
cgroup_make(const struct containment *c, const char *loop,
    const char *agent, char **err)
{
	char	*l = cgroup_name(loop), *a = cgroup_name(agent);
	char	*mid, *path = NULL;

	xasprintf(&mid, "%s/%s", c->base, l);
	if ((mkdir(c->base, 0755) != 0 && errno != EEXIST) ||
	    (mkdir(mid, 0755) != 0 && errno != EEXIST))
		xasprintf(err, "mkdir %s: %s", mid, strerror(errno));
	else {
		xasprintf(&path, "%s/%s", mid, a);
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			xasprintf(err, "mkdir %s: %s", path, strerror(errno));
			free(path);
			path = NULL;
		}
	}
	free(mid);
	free(l);
	free(a);
	return path;
}

/*
 * The procs file of a worker's cgroup, opened before the fork: the child
 * writes "0" (itself) to it before exec, so the worker and all it starts
 * are in the cgroup from their first instruction.  -1 on failure.
 */
int
cgroup_procs_open(const char *path)
{
	char	p[PATH_MAX];

	snprintf(p, sizeof p, "%s/cgroup.procs", path);
	return open(p, O_WRONLY | O_CLOEXEC);
}

/*
 * Is pid alive and not already dying?  A process with SIGKILL pending
 * (its group was killed by the worker a moment ago) is on its way out,
 * not a leak.
 */
static int
cgroup_pid_live(pid_t pid)
{
	char			 path[64], line[256];
	unsigned long long	 pend;
	FILE			*fp;
	int			 live = 0;

	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof line, fp) != NULL) {
		if (strncmp(line, "State:", 6) == 0)
			live = strpbrk(line + 6, "ZX") == NULL;
		else if (strncmp(line, "ShdPnd:", 7) == 0 &&
		    sscanf(line + 7, "%llx", &pend) == 1 &&
		    (pend & (1ULL << (SIGKILL - 1))) != 0)
			live = 0;
	}
	fclose(fp);
	return live;
}

/*
 * Each process in the subtree at dir: counted (the live ones but the
 * worker) or killed.  Returns how many were counted or signalled.
 */
static unsigned
cgroup_walk(const char *dir, enum cgroup_act act, pid_t worker,
    unsigned depth)
{
	char		 path[PATH_MAX];
	struct dirent	*de;
	DIR		*d;
	FILE		*fp;
	long		 pid;
	unsigned	 n = 0;

	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	if ((fp = fopen(path, "re")) != NULL) {
		while (fscanf(fp, "%ld", &pid) == 1)
			if (pid > 1 && pid != worker && (act == CGROUP_KILL ?
			    kill((pid_t)pid, SIGKILL) == 0 :
			    cgroup_pid_live((pid_t)pid)))
				n++;
		fclose(fp);
	}
	if (depth >= 16 || (d = opendir(dir)) == NULL)
		return n;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		n += cgroup_walk(path, act, worker, depth + 1);
	}
	closedir(d);
	return n;
}

/*
 * Remove the subtree at dir, its children first (a tool may have made
 * cgroups of its own).  A directory still populated is EBUSY: its killed
 * processes are still exiting, so it is tried again, a bounded time.
 */
static int
cgroup_rmtree(const char *dir, unsigned depth)
{
	char		 path[PATH_MAX];
	struct dirent	*de;
	DIR		*d;
	struct timespec	 ts;
	unsigned	 i, ms = 1;

	if (depth < 16 && (d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
			(void)cgroup_rmtree(path, depth + 1);
		}
		closedir(d);
	}
	for (i = 0; i < CGROUP_RMDIR_TRIES; i++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			break;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)ms * 1000000L;
		nanosleep(&ts, NULL);
		if (ms < CGROUP_WAIT_MAX_MS)
			ms *= 2;
	}
	log_warn("rmdir %s", dir);
	return -1;
}

/* The cgroup's CPU time (no controller needed) and peak memory (one is). */
static void
cgroup_measure(const char *dir, struct cgroup_usage *u)
{
	char			 path[PATH_MAX], key[64], *peak;
	unsigned long long	 v;
	FILE			*fp;

	memset(u, 0, sizeof *u);
	snprintf(path, sizeof path, "%s/cpu.stat", dir);
	if ((fp = fopen(path, "re")) != NULL) {
		while (fscanf(fp, "%63s %llu", key, &v) == 2)
			if (strcmp(key, "usage_usec") == 0) {
				u->cpu_usec = v;
				u->ok = 1;
			}
		fclose(fp);
	}
	if ((peak = cgroup_read_line(dir, "memory.peak")) != NULL) {
		u->mem_peak = strtoull(peak, NULL, 10);
		free(peak);
	}
}

/*
 * The end of a worker's cgroup, once the worker itself has ended (or is
 * killed: worker, not counted; 0 when reaped): every process still in it
 * is counted (a leak: the number returned), killed
 * whole (cgroup.kill; before 5.14 frozen, each killed, thawed so they
 * can die), measured into *u, and the directory removed.  This count is
 * the one the leak counter takes.
 */
unsigned
cgroup_end(const char *dir, int has_kill, pid_t worker,
    struct cgroup_usage *u)
{
	unsigned	n = cgroup_walk(dir, CGROUP_COUNT, worker, 0);

	if (has_kill)
		(void)cgroup_write(dir, "cgroup.kill", "1");
	else {
		(void)cgroup_write(dir, "cgroup.freeze", "1");
		(void)cgroup_walk(dir, CGROUP_KILL, 0, 0);
		(void)cgroup_write(dir, "cgroup.freeze", "0");
	}
	cgroup_measure(dir, u);
	(void)cgroup_rmtree(dir, 0);
	return n;
}

/* Is file a limit a role may set (the configuration checks)? */
int
cgroup_limit_known(const char *file)
{
	size_t	i;

	for (i = 0; i < CGROUP_NLIMITS; i++)
		if (strcmp(cgroup_limits[i].file, file) == 0)
			return 1;
	return 0;
}

/* Is word one of the blank-separated words of list? */
static int
cgroup_has_word(const char *list, const char *word)
{
	size_t	n = strlen(word);
	const char *p;

	for (p = list; p != NULL && (p = strstr(p, word)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return 1;
	return 0;
}

/*
 * One limit into the worker's cgroup at path: its controller enabled on
 * the way down from ours (ccw-<pid> and the loop's directory hold no
 * process, so they may), then the value written.  -1 when the
 * controller is not there (a hybrid host's v2 has none) or the kernel
 * refused the value.
 */
static int
cgroup_limit_one(const struct containment *c, const char *path,
    const struct cgroup_limit *l, const json_t *v)
{
	char	 on[32], val[32], *mid, *slash, *ctl;
	int	 rc;

	snprintf(on, sizeof on, "+%s", l->controller);
	mid = xstrdup(path);
	if ((slash = strrchr(mid, '/')) != NULL)
		*slash = '\0';
	(void)cgroup_write(c->base, "cgroup.subtree_control", on);
	(void)cgroup_write(mid, "cgroup.subtree_control", on);
	free(mid);
	ctl = cgroup_read_line(path, "cgroup.controllers");
	rc = cgroup_has_word(ctl, l->controller) ? 0 : -1;
	free(ctl);
	if (json_is_integer(v))
		snprintf(val, sizeof val, "%lld", (long long)json_integer_value(v));
	else
		snprintf(val, sizeof val, "%s", json_string_value(v));
	return rc == 0 ? cgroup_write(path, l->file, val) : -1;
}

/*
 * A role's limits ({file: value}, checked by the configuration) on the
 * worker's cgroup at path.  NULL when all applied, else what could not
 * be, for a warning: never a reason to fail the worker.
 */
char *
cgroup_limits_apply(const struct containment *c, const char *path,
    const json_t *limits)
{
	const char	*key;
	const json_t	*v;
	char		*miss = NULL, *t;
	size_t		 i;

	json_object_foreach((json_t *)limits, key, v) {
		for (i = 0; i < CGROUP_NLIMITS &&
		    strcmp(cgroup_limits[i].file, key) != 0; i++)
			;
		if (i == CGROUP_NLIMITS ||
		    cgroup_limit_one(c, path, &cgroup_limits[i], v) == 0)
			continue;
		xasprintf(&t, "%s%s%s", miss != NULL ? miss : "",
		    miss != NULL ? ", " : "", key);
		free(miss);
		miss = t;
	}
	if (miss == NULL)
		return NULL;
	xasprintf(&t, "limits not applied (%s): their controllers are not "
	    "enabled in the cgroup v2 hierarchy %s", miss,
	    c->mount != NULL ? c->mount : "");
	free(miss);
	return t;
}

/*
 * A table is freed: its loop's directory goes, and the process's own
 * (ccw-<pid>) when no other table of ours still has one in it.
 */
void
cgroup_release(const struct containment *c, const char *loop)
{
	char	*l, *mid;

	if (c->mode != CONTAIN_CGROUP || c->base == NULL)
		return;
	l = cgroup_name(loop);
	xasprintf(&mid, "%s/%s", c->base, l);
	(void)rmdir(mid);
	(void)rmdir(c->base);
	free(mid);
	free(l);
}
