/*
 * run.h: what the run command's files share: its options
 * (cmd-run.c parses them) and opening the loop it drives (run-open.c).
 */
#ifndef CCW_RUN_H
#define CCW_RUN_H

#include <stdint.h>

#include "cmdutil.h"
#include "loop.h"

struct state_store;

struct run_args {
	struct cmd_opts	 o;
	const char	*task, *mode_arg;
	enum loop_mode	 mode;
	long long	 max_iter;
	int		 have_max, json, clarify_fail, interrupt;
	uint64_t	 batch_ms, batch_nudge_ms;
};

/* --- run-open.c: the loop's state file created or resumed, under its lock */
int	run_open(struct run_args *, int, const char *, int *);
int	run_start(struct state_store *, const char *);
int	run_guard(struct loop_guard *, const char *, const char *);
int	run_workers(struct loop_guard *, const char *);
void	run_retry_policy(const struct config *, struct retry_cfg *);

#endif
