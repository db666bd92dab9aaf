/*
 * isolate.h: a parallel step's writers in git worktrees and the merge
 * queue after it (isolate.c), for the run engine (loop.c), which polls
 * it from its kick: each call answers ready, busy (a `ccw-worker --git`
 * run in flight; the kick hook is called when it ends) or failed.
 */
#ifndef CCW_ISOLATE_H
#define CCW_ISOLATE_H

#include <stddef.h>

#include <jansson.h>

struct agent_req;
struct children;
struct config;
struct event_base;
struct isolate;
struct plan_overrides;

enum isolate_st { ISO_READY, ISO_BUSY, ISO_FAILED };

/* Borrowed for the isolate's life. */
struct isolate_cfg {
	struct event_base		*base;
	struct children			*children;
	const char			*id, *root, *state_dir;
	const struct config		*config;
	const struct plan_overrides	*over;
	void	(*kick)(void *);			/* a git run ended */
	void	(*event)(void *, const char *, json_t *); /* given away */
	void	*arg;
};

/* One writer of the step to merge, in role order. */
struct isolate_item {
	const char	*role, *agent;
	json_t		*result;	/* files_changed set from the merge */
};

struct isolate	*isolate_new(const struct isolate_cfg *);
void		 isolate_free(struct isolate *);
void		 isolate_cancel(struct isolate *);
enum isolate_st	 isolate_prepare(struct isolate *, json_t *, char **);
void		 isolate_step_end(struct isolate *);
int		 isolate_active(const struct isolate *);
void		 isolate_reader(struct isolate *, const json_t *,
		    const char *, struct agent_req *);
void		 isolate_request(struct isolate *, const char *,
		    struct agent_req *, const char *);
enum isolate_st	 isolate_merge(struct isolate *, struct isolate_item *,
		    size_t, char **);
enum isolate_st	 isolate_try(struct isolate *, const char *,
		    const char *const *, size_t, const json_t **, char **);
void		 isolate_record(struct isolate *, json_t *, int);
const char	*isolate_resolve_branch(const json_t *);
char		*isolate_resolve_prompt(const json_t *, const char *);
int		 isolate_resolved(struct isolate *, json_t *, int, char **);
char		*isolate_unresolved(struct isolate *, const json_t *);
enum isolate_st	 isolate_finish(struct isolate *, json_t *, int, int);

#endif
