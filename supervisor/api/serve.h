/*
 * serve.h: `serve`'s HTTP front end: one server object on the caller's
 * event base over the hosts of one or more project roots (one host and
 * one api each, every host publishing on one bus): the route table, the
 * bearer token, /health, /metrics, /api/events, /api/agents and CCW's
 * /api/loops/v2 routes.
 */
#ifndef CCW_SERVE_H
#define CCW_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "http.h"

struct api;
struct bus;
struct event_base;
struct host;
struct serve;
struct sock;
struct sup;

struct config;

/* One project root: its state directory, the host and api on it. */
struct serve_root {
	const char	*root;		/* the project (workers' cwd) */
	const char	*state_dir;	/* its loops' directory */
	struct host	*host;		/* runs its loops */
	struct api	*api;		/* the verb table on that directory */
	struct sup	*sup;		/* its agent table (counts for metrics) */
	const struct config *config;	/* its tools (a task's tool checked) */
};

/* What serve_new is given; all borrowed for the server's life. */
struct serve_cfg {
	struct serve_root	*roots;		/* [0]: new loops, /api/agents */
	size_t			 nroots;
	struct bus		*bus;		/* every host's events */
	const char		*token;		/* the bearer token */
	size_t			 jobs;		/* loops run at once; 0: any */
	struct sock		*sock;		/* the control socket or NULL */
	struct http_limits	 limits;
	const char *const	*allowed_hosts;	/* --allowed-host NAME[:PORT] */
	size_t			 nallowed;
};

struct serve	*serve_new(struct event_base *, const struct serve_cfg *,
		    char **);
int		 serve_listen(struct serve *, const char *, char **);
int		 serve_port(const struct serve *);
int		 serve_loopback(const struct serve *);
size_t		 serve_hosted(const struct serve *);
int		 serve_resume(struct serve *);
void		 serve_loop_done(struct serve *, const char *, int);
void		 serve_free(struct serve *);
int		 servehost_valid(const char *, char **);

#endif
