/*
 * serve-config.h: one root's configuration under `serve`, live: read
 * again as each loop starts (as `run` reads it) and on SIGHUP; a file
 * that does not parse leaves the one in force, said on the bus and log.
 */
#ifndef CCW_SERVE_CONFIG_H
#define CCW_SERVE_CONFIG_H

#include <stddef.h>

struct bus;
struct config;
struct host;

struct serve_config {
	/* given, borrowed */
	const char		*file;		/* --config, or NULL */
	const char		*root;		/* the project */
	struct host		*host;		/* its loops keep their own */
	struct bus		*bus;		/* CONFIG_WARNING */
	/* the one in force: the start-up one (the caller's) or own */
	const struct config	*now;
	struct config		*own;		/* read here, in force */
	struct config		**old;		/* replaced, maybe still used */
	size_t			 nold;
};

void	servecfg_init(struct serve_config *, const struct config *);
int	servecfg_reload(struct serve_config *, const char *);
void	servecfg_collect(struct serve_config *);
void	servecfg_free(struct serve_config *);

#endif
