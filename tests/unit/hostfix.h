/*
 * hostfix.h: what the engine-hosting tests share: a temp project whose
 * roles are fake agents, one event base and one host (host.h: the
 * reaper, the bus), and loops opened and started through host_loop_open.
 */
#ifndef CCW_HOSTFIX_H
#define CCW_HOSTFIX_H

#include <stdint.h>

#include <jansson.h>

#include "host.h"
#include "loop.h"
#include "toolconfig.h"

struct bus;
struct event_base;

struct hostfix {
	struct event_base	*base;
	struct host		*host;
	struct config		 cfg;
	char			*dir, *state_dir, *cfgpath;
	int			 dirfd;		/* the tests' own, to read files */
	int			 ndone, n;	/* n ended: the base breaks */
	struct bus		*bus;		/* the host's: every loop's events */
	long long		 max_iter;	/* new loops'; 0: the default */
};

/* The event callback's last call: the host reported the loop's end. */
#define HOSTFIX_DONE	"hostfix_done"

struct hostfix_loop;
typedef void (*hostfix_event_cb)(struct hostfix_loop *, const char *,
    const json_t *);

/* One hosted loop; embed it first to hang a test's own figures on it. */
struct hostfix_loop {
	struct hostfix		*h;
	char			 id[32];
	enum loop_mode		 mode;
	int			 opened;	/* and started (on dispatch) */
	int			 code;		/* -1 until its done */
	uint64_t		 t_done;
	hostfix_event_cb	 event;		/* NULL: none */
};

/* 1: SKIP printed (not in the build tree); each role sleeps ms, plus step */
int	 hostfix_init(struct hostfix *, const char *, int, int);
int	 hostfix_init_cmd(struct hostfix *, const char *, int, int,
	    const char *);	/* every role runs this command */
int	 hostfix_init_asking(struct hostfix *, const char *);	/* roles ask */
int	 hostfix_open(struct hostfix *, struct hostfix_loop *, const char *,
	    enum loop_mode, hostfix_event_cb);	/* runs on dispatch */
void	 hostfix_free(struct hostfix *);
uint64_t hostfix_slack(void);
char	*hostfix_summary(struct hostfix *, const char *, const char *);	/* ROLE.output.json's */	/* tests/regress/lib.sh's t_slack */

#endif
