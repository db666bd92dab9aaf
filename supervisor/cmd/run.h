/*
 * run.h: what the run command's files share: its options (cmd-run.c
 * parses them), what it says around the engine's loop open
 * (run-open.c) and the plain lines of its events (run-lines.c).
 */
#ifndef CCW_RUN_H
#define CCW_RUN_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "budget.h"
#include "cmdutil.h"
#include "loop.h"
#include "loopopen.h"

struct event_base;

struct run_args {
	struct cmd_opts	 o;
	const char	*task, *mode_arg;
	enum loop_mode	 mode;
	long long	 max_iter;
	int		 have_max, json, clarify_fail, interrupt, quiet;
	int		 freeze;	/* --pause-policy freeze */
	uint64_t	 batch_ms, batch_nudge_ms;
	const char	*isolation;	/* --isolation worktree|none */
	int		 from_worktree, land;
	unsigned	 attempts;	/* --attempts N: develop's, 0 unset */
	double		 budget[BUDGET_NKINDS];	/* --max-cost-usd ...: 0 unset */
};

/* --- run-open.c: the loop opened by the engine, its words on stderr */
int	run_check_roles(struct run_args *, char **);
int	run_open(struct run_args *, struct event_base *, int, const char *,
	    struct loop_opened *);
void	run_loop_cfg(struct run_args *, struct loop_opened *, int,
	    struct loop_cfg *);

/* --- run-lines.c: an event's line on stderr, and the view chosen */
enum run_view {
	RUN_VIEW_LIVE,		/* a terminal: status lines redrawn */
	RUN_VIEW_PLAIN,		/* a line per event, no escapes */
	RUN_VIEW_QUIET		/* --quiet, --json: the first and last lines */
};

int	run_line_print(FILE *, const char *, const json_t *);
enum run_view run_view_pick(int, int);

#endif
