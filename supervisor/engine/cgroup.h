/*
 * cgroup.h: containment of a worker and everything its tool starts.
 * cgroup.c is the kernel interface (cgroup v2: one directory a worker,
 * entered between fork and exec, ended by cgroup.kill and rmdir);
 * contain.c chooses the mode (cgroup, else the sweep) once a table.
 */
#ifndef CCW_CGROUP_H
#define CCW_CGROUP_H

#include <sys/types.h>
#include <stdint.h>

#include <jansson.h>

/* How a worker's processes are kept and ended (HACKING.md, Containment). */
enum contain_mode {
	CONTAIN_SWEEP,		/* process groups, signalled by spawn.c */
	CONTAIN_CGROUP,		/* a v2 cgroup a worker, killed whole */
};

/* What a table (struct sup) contains its workers with. */
struct containment {
	enum contain_mode	 mode;
	char			*why;		/* the mode's reason, for doctor */
	char			*mount;		/* the v2 hierarchy; NULL none */
	char			*base;		/* <mount><own>/ccw-<pid>, cgroup
						   mode only */
	char			*controllers;	/* its cgroup.controllers */
	int			 has_kill;	/* cgroup.kill (kernel >= 5.14) */
};

/* What a worker's cgroup measured before it went. */
struct cgroup_usage {
	uint64_t		 cpu_usec;	/* cpu.stat usage_usec */
	uint64_t		 mem_peak;	/* memory.peak; 0 unknown */
	int			 ok;		/* cpu.stat was read */
};

/* supervisor/engine/contain.c */
int		 contain_choose(struct containment *, const char *, int);
void		 contain_clear(struct containment *);
const char	*contain_mode_name(enum contain_mode);
int		 contain_mode_valid(const char *);

/* supervisor/engine/cgroup.c */
int		 cgroup_find_v2(char **, char **);
char		*cgroup_make(const struct containment *, const char *,
		    const char *, char **);
int		 cgroup_procs_open(const char *);
unsigned	 cgroup_end(const char *, int, pid_t, struct cgroup_usage *);
void		 cgroup_release(const struct containment *, const char *);
char		*cgroup_read_line(const char *, const char *);
int		 cgroup_write(const char *, const char *, const char *);
int		 cgroup_limit_known(const char *);
char		*cgroup_limits_apply(const struct containment *, const char *,
		    const json_t *);

#endif
