/*
 * roots.h: one engine host per project root (and loop directory) on one
 * event base, each loaded with that root's configuration as run's -C
 * loads it: batch's items and acp's sessions name their projects.
 */
#ifndef CCW_ROOTS_H
#define CCW_ROOTS_H

#include <stddef.h>

#include "cmdutil.h"

#define ROOTS_MAX	64	/* distinct project roots in one process */

struct bus;
struct event_base;
struct gate;
struct host;

/* One project root's host and the options it was loaded with. */
struct root {
	struct cmd_opts	 o;		/* o.cwd: the real path; o.state_dir */
	struct plan_base plan;		/* its single workers' (batch items) */
	struct host	*host;
	char		*given, *sd;	/* o.root and o.state_dir_opt's */
};

/* The roots of one process; set base (and the rest) before roots_get. */
struct roots {
	struct event_base	*base;
	const char		*config_path;	/* every root's, or NULL */
	struct bus		*bus;		/* shared; NULL: each its own */
	struct gate		*gate;		/* likewise */
	const struct plan_overrides *over;	/* above every root's config */
	struct root		 r[ROOTS_MAX];
	size_t			 n;
};

struct root	*roots_get(struct roots *, const char *, const char *, char **);
void		 roots_free(struct roots *);

#endif
