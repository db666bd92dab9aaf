/*
 * loopopen.h: opening a loop for a driver: its run lock, its state file
 * created or resumed, the workers directory, the store on the caller's
 * event base, the transition to running.  A status and a message for the
 * caller; nothing printed.
 */
#ifndef CCW_LOOPOPEN_H
#define CCW_LOOPOPEN_H

#include <jansson.h>

#include "errcode.h"
#include "loopguard.h"
#include "toolconfig.h"

struct event_base;
struct state_store;
struct workflow_state;

/* What a host asks for: a loop to create if absent, else to resume. */
struct loop_spec {
	const char	*id;
	const char	*task;		/* creates the loop; NULL: resume only */
	const char	*mode;		/* a new loop's skill_state.mode */
	long long	 max_iterations; /* a new loop's; 0: 10 */
	const struct workflow_state *state; /* its workflow's (flowdef.h) */
	const char	*tool, *model;	/* this loop's, above the host's; NULL: theirs */
	const json_t	*budget;	/* its "budget" to set (a front end's
					   write), the kinds given; NULL: kept */
};

/* Why a loop cannot be driven now (LOOPOPEN_RUN: it can). */
enum loopopen_status {
	LOOPOPEN_RUN,		/* open and running: hand it to loop_new */
	LOOPOPEN_COMPLETED,	/* already completed: nothing to drive */
	LOOPOPEN_BUSY,		/* another process drives it */
	LOOPOPEN_NOENT,		/* no such loop, and no task to create it */
	LOOPOPEN_PAUSED,	/* paused, and the store keeps it so */
	LOOPOPEN_REFUSED,	/* unreadable, a link, or a status not run */
	LOOPOPEN_ERROR,		/* the system failed: write, lock, memory */
};

/* An open loop: the driver's hold on it, and what was found. */
struct loop_opened {
	struct loop_guard	 guard;		/* lock, workers, agent ids */
	struct state_store	*store;		/* on the caller's base; opened
						   off the loop's thread: NULL
						   base, state_store_attach */
	int			 created;	/* by this open */
	int			 found;		/* it existed: loaded */
	int			 resumed;	/* it has history */
	char			*mode;		/* skill_state.mode, or NULL */
	char			*was;		/* its status before the open */
	char			*failure_reason; /* a failed loop's, resumed */
};

enum loopopen_status loopopen_open(struct loop_opened *, struct event_base *,
		    int, const char *, const struct loop_spec *, char **);
void		 loopopen_close(struct loop_opened *);
int		 loopopen_budget(int, const struct loop_spec *, int, char **);
char		*loopopen_title(const char *);
int		 loopopen_exit(enum loopopen_status);
enum err_code	 loopopen_code(enum loopopen_status);	/* the api's kind */
void		 loopopen_retry(const struct config *,
		    struct retry_cfg *);

#endif
