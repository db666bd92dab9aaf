/*
 * control.h: a `control` session (cmd-control.c): its host of loops and
 * api, which tests/sock-serve.c also mounts a control socket on; and
 * the control socket's client (control-connect.c).
 */
#ifndef CCW_CONTROL_H
#define CCW_CONTROL_H

#include <stdint.h>

#include <event2/util.h>

#include "loopguard.h"
#include "sup.h"

#define CONTROL_NSIG	3

struct cmd_opts;
struct event;
struct linein;

struct control {
	struct event_base	*base;
	struct sup		 sup;
	struct host		*host;		/* the loops loop_open starts */
	struct loop_guard	 guard;		/* the run lock, fresh logs */
	struct api		*api;
	struct cmd_opts		*opts;
	struct linein		*in;		/* stdin's requests */
	struct event		*sigs[CONTROL_NSIG];
	int			 eof;
	int			 exit_code;
	uint64_t		 grace_ms;	/* close's default */
};

int	control_open(struct control *, struct cmd_opts *);
void	control_close(struct control *);
void	control_stop(struct control *);
void	control_maybe_exit(struct control *);
int	control_connect(const char *);
void	control_signals(struct event_base *, struct event **,
	    void (*)(evutil_socket_t, short, void *), void *);

#endif
