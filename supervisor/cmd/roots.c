/*
 * roots.c: the hosts of the project roots one process drives (batch,
 * acp): a root is opened on first use with its own configuration and
 * loop directory; every host shares the first one's reaper (one SIGCHLD
 * registry per process), and the caller's bus and gate when given.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "roots.h"
#include "xmalloc.h"

/* A root's options and strings (its host freed before). */
static void
roots_clear(struct root *r)
{
	cmd_opts_free(&r->o);
	free(r->given);
	free(r->sd);
	r->given = r->sd = NULL;
}

/*
 * A root and loop directory's side (its options and host), opened on
 * first use with the root's configuration; sd NULL takes the root's
 * default directory (.workflow/.loop when present, else .loop).
 */
struct root *
roots_get(struct roots *rs, const char *root, const char *sd, char **err)
{
	struct root	*r;
	struct host_cfg	 hc;
	char		*real;
	size_t		 i;

	*err = NULL;
	if ((real = realpath(root, NULL)) == NULL) {
		xasprintf(err, "%s: %s", root, strerror(errno));
		return NULL;
	}
	for (i = 0; i < rs->n; i++)
		if (strcmp(rs->r[i].o.cwd, real) == 0 && (sd == NULL ||
		    strcmp(rs->r[i].o.state_dir, sd) == 0)) {
			free(real);
			return &rs->r[i];
		}
	free(real);
	if (rs->n == ROOTS_MAX) {
		xasprintf(err, "more than %d project roots in one process",
		    ROOTS_MAX);
		return NULL;
	}
	r = &rs->r[rs->n];
	cmd_opts_init(&r->o);
	/* the options borrow their strings: the root keeps its own copies */
	r->given = xstrdup(root);
	r->sd = sd != NULL ? xstrdup(sd) : NULL;
	r->o.root = r->given;
	r->o.config_path = rs->config_path;
	r->o.state_dir_opt = r->sd;
	/* the command line's launcher, for the root's single workers too */
	if (rs->over != NULL && rs->over->launch != NULL)
		launch_copy(&r->o.launch, rs->over->launch);
	if (cmd_opts_load(&r->o, err) != 0) {
		roots_clear(r);
		return NULL;
	}
	memset(&hc, 0, sizeof hc);
	hc.config = &r->o.cfg;
	hc.state_dir = r->o.state_dir;
	hc.root = r->o.cwd;
	hc.bus = rs->bus;
	hc.gate = rs->gate;
	if (rs->over != NULL)
		hc.over = *rs->over;
	/* a single worker plans over the root's config and our launcher */
	r->plan.config = &r->o.cfg;
	r->plan.root = r->o.cwd;
	memset(&r->plan.over, 0, sizeof r->plan.over);
	r->plan.over.launch = r->o.launch.set ? &r->o.launch : NULL;
	hc.children = rs->n > 0 ? host_children(rs->r[0].host) : NULL;
	if ((r->host = host_new(rs->base, &hc, err)) == NULL) {
		roots_clear(r);
		return NULL;
	}
	rs->n++;
	return r;
}

/* Every root's host (its loops' workers killed) and options, in reverse. */
void
roots_free(struct roots *rs)
{
	size_t	i;

	/* root 0's host owns the reaper the others share: freed last */
	for (i = rs->n; i-- > 0;) {
		host_free(rs->r[i].host);
		roots_clear(&rs->r[i]);
	}
	rs->n = 0;
}
