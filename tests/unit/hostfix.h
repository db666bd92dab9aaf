/*
 * hostfix.h: what the engine-hosting tests share: a temp project whose
 * roles are fake agents, one event base and child reaper, and loops
 * opened on them through the engine's API (loopopen, loop_new).
 */
#ifndef CCW_HOSTFIX_H
#define CCW_HOSTFIX_H

#include <stdint.h>

#include <jansson.h>

#include "loop.h"
#include "loopopen.h"
#include "toolconfig.h"

struct bus;
struct children;
struct event_base;

struct hostfix {
	struct event_base	*base;
	struct children		*ch;
	struct config		 cfg;
	char			*dir, *state_dir, *cfgpath;
	int			 dirfd;
	int			 ndone, n;	/* n ended: the base breaks */
	struct bus		*bus;		/* every loop's events; NULL: none */
};

struct hostfix_loop;
typedef void (*hostfix_event_cb)(struct hostfix_loop *, const char *,
    const json_t *);

/* One hosted loop; embed it first to hang a test's own figures on it. */
struct hostfix_loop {
	struct hostfix		*h;
	char			 id[32];
	enum loop_mode		 mode;
	struct loop_opened	 lo;
	struct loop		*l;
	int			 code;		/* -1 until hooks.done */
	uint64_t		 t_done;
	hostfix_event_cb	 event;		/* NULL: none */
};

/* 1: SKIP printed (not in the build tree); each role sleeps ms, plus step */
int	 hostfix_init(struct hostfix *, const char *, int, int);
int	 hostfix_open(struct hostfix *, struct hostfix_loop *, const char *,
	    enum loop_mode, hostfix_event_cb);	/* opened, not started */
void	 hostfix_loop_free(struct hostfix_loop *);
void	 hostfix_free(struct hostfix *);
uint64_t hostfix_slack(void);	/* tests/regress/lib.sh's t_slack */

#endif
