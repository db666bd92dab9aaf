/*
 * control.h: a `control` session (cmd-control.c): its host of loops and
 * api, which tests/sock-serve.c also mounts a control socket on; and
 * the control socket's client (control-connect.c).
 */
#ifndef CCW_CONTROL_H
#define CCW_CONTROL_H

#include <stdint.h>

#include "cmdutil.h"
#include "loopguard.h"
#include "plan.h"
#include "sup.h"

struct event;
struct linein;

struct control {
	struct event_base	*base;
	struct sup		 sup;
	struct host		*host;		/* the loops loop_open starts */
	struct loop_guard	 guard;		/* the run lock, fresh logs */
	struct api		*api;
	struct retire		*retire;	/* sup's finished agents */
	struct plan_base	 plan;		/* the api's spawns (cmd_plan_base) */
	struct linein		*in;		/* stdin's requests */
	struct event		*sigs[CMD_NSIG];
	int			 eof;
	int			 exit_code;
	uint64_t		 grace_ms;	/* close's default */
};

int	control_open(struct control *, struct cmd_opts *);
void	control_close(struct control *);
void	control_stop(struct control *, const char *);	/* why: the loops' */
void	control_maybe_exit(struct control *);
int	control_connect(const char *);

#endif
