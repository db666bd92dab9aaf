/*
 * contain.c: the containment mode of a table of workers: cgroup (a v2
 * cgroup a worker, cgroup.c) where the machine gives us one, else the
 * sweep (process groups, spawn.c); forced by containment = cgroup |
 * sweep | auto ($CCW_CONTAINMENT, set from the configuration and the
 * command line), with the reason doctor and /metrics show.
 */
#include <config.h>

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "xmalloc.h"

/* The modes' words, indexed by enum contain_mode; "auto" is a choice. */
static const char *const contain_names[] = { "sweep", "cgroup" };

const char *
contain_mode_name(enum contain_mode m)
{
	return contain_names[m];
}

/* A word the configuration or --containment may give: "auto" too. */
int
contain_mode_valid(const char *w)
{
	return w != NULL && (strcmp(w, "auto") == 0 ||
	    strcmp(w, contain_names[CONTAIN_SWEEP]) == 0 ||
	    strcmp(w, contain_names[CONTAIN_CGROUP]) == 0);
}

void
contain_clear(struct containment *c)
{
	free(c->why);
	free(c->mount);
	free(c->base);
	free(c->controllers);
	memset(c, 0, sizeof *c);
}

/*
 * The cgroups of a supervisor that died without ending them (SIGKILL, a
 * crash): ccw-<pid> directories under our own cgroup whose pid no longer
 * exists.  What is still in them is a leak: counted (said, returned),
 * killed, and the directories removed.  A live pid, ours or reused, is
 * left alone.
 */
static unsigned
contain_sweep_stale(const struct containment *c, const char *own)
{
	struct cgroup_usage	 u;
	struct dirent		*de;
	char			*path, *end;
	unsigned		 n, total = 0;
	long			 pid;
	DIR			*d;

	if ((d = opendir(own)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "ccw-", 4) != 0 ||
		    de->d_type != DT_DIR)
			continue;
		errno = 0;
		pid = strtol(de->d_name + 4, &end, 10);
		if (*end != '\0' || errno != 0 || pid <= 1 ||
		    pid == (long)getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		xasprintf(&path, "%s/%s", own, de->d_name);
		if ((n = cgroup_end(path, c->has_kill, 0, &u)) > 0)
			log_warnx("%u process%s left by supervisor %ld, gone, "
			    "in %s: killed", n, n == 1 ? "" : "es", pid, path);
		total += n;
		free(path);
	}
	closedir(d);
	return total;
}

/*
 * Can we make cgroups under own?  Tried by making ours (ccw-<pid>); make
 * 0 (doctor) removes it again unless it was there before (a table of
 * ours uses it).  cgroup.kill is looked for in it (the root has none).
 */
static int
contain_try(struct containment *c, const char *own, int make, char **why)
{
	char	*kill;
	int	 made;

	xasprintf(&c->base, "%s/ccw-%ld", own, (long)getpid());
	made = mkdir(c->base, 0755) == 0;
	if (!made && errno != EEXIST) {
		xasprintf(why, "cannot make a cgroup under %s: %s (run as "
		    "root, or in a delegated subtree)", own, strerror(errno));
		return -1;
	}
	xasprintf(&kill, "%s/cgroup.kill", c->base);
	c->has_kill = access(kill, W_OK) == 0;
	free(kill);
	if (!make && made)
		(void)rmdir(c->base);
	else if (made)
		(void)contain_sweep_stale(c, own);
	return 0;
}

/*
 * Choose the mode: want ("cgroup", "sweep", "auto"; NULL: the
 * environment's, else auto).  Auto takes a cgroup when one can be made;
 * a forced cgroup that cannot be had falls back to the sweep, said in
 * why.  make: keep the process's cgroup directory (a table), or not
 * (doctor).  Returns the mode.
 */
int
contain_choose(struct containment *c, const char *want, int make)
{
	char	*own = NULL, *why = NULL;

	memset(c, 0, sizeof *c);
	if (want == NULL || *want == '\0')
		want = getenv("CCW_CONTAINMENT");
	if (!contain_mode_valid(want))
		want = "auto";
	if (cgroup_find_v2(&c->mount, &own) != 0)
		why = xstrdup("no cgroup v2 hierarchy we are in "
		    "(/proc/self/mountinfo, /proc/self/cgroup)");
	else
		c->controllers = cgroup_read_line(own,
		    "cgroup.subtree_control");
	if (strcmp(want, "sweep") == 0) {
		free(why);
		xasprintf(&c->why, "containment=sweep asked");
	} else if (why == NULL && contain_try(c, own, make, &why) == 0) {
		c->mode = CONTAIN_CGROUP;
		xasprintf(&c->why, "%s: a cgroup v2 each worker, under %s%s",
		    strcmp(want, "auto") == 0 ? "auto" : "containment=cgroup "
		    "asked", own, c->has_kill ? "" : " (no cgroup.kill: "
		    "frozen, then killed)");
	} else {
		xasprintf(&c->why, "%s%s", strcmp(want, "auto") == 0 ?
		    "auto, " : "containment=cgroup asked but ", why);
		free(why);
		/* asked for and not had: said as the table starts, not only
		 * by doctor (auto's fallback is no surprise, and doctor, make
		 * 0, prints it itself) */
		if (make && strcmp(want, "cgroup") == 0)
			log_warnx("%s; the sweep contains workers", c->why);
	}
	if (c->mode != CONTAIN_CGROUP) {
		free(c->base);
		c->base = NULL;
	}
	free(own);
	return c->mode;
}
