/*
 * apiint.h: what the verb table's files share: the api object, a call
 * waiting for its reply, and the handlers the table names.
 */
#ifndef CCW_APIINT_H
#define CCW_APIINT_H

#include <sys/queue.h>
#include <stdatomic.h>

#include "api.h"

struct committer;
struct api_group;
TAILQ_HEAD(api_groups, api_group);

/* A call whose reply is still to come; answered exactly once. */
struct api_pending {
	TAILQ_ENTRY(api_pending)	 entry;
	struct api			*api;
	json_t				*id;	/* the request's, or null */
	api_reply_cb			 cb;
	void				*arg;
	const char			*via;	/* the front end (static) */
};
TAILQ_HEAD(api_pendings, api_pending);

struct api {
	struct api_host		 host;
	struct verbs		*verbs;
	struct api_pendings	 pending;
	struct committer	*committer;	/* loop verbs' blocking work */
	int			 dirfd;		/* the state directory, -1 */
	char			*dir_error;	/* why there is none */
	atomic_int		 stopping;	/* a held state lock is not waited for */
	int			 freeing;	/* replies are dropped */
	struct api_groups	 groups;	/* spawns with "attempts" */
	unsigned		 ngroups;	/* made so far: their ids */
};

/* A handler: the request is valid by its table row; answer p once. */
typedef void	(*api_handler_fn)(struct api_pending *, const json_t *);

/* apireply.c: the replies */
void	api_reply(struct api_pending *, json_t *);	/* takes the body */
/* Answer a call with an error of a kind: api_fail(p, ERR_..., fmt, ...). */
#define api_fail(p, code, ...)	api_reply((p), api_error_new(NULL, (code), \
				    __VA_ARGS__))

/* api.c: spawn's request, shared with its attempts */
void	api_spawn_fill(const json_t *, struct api_spawn *);
int	api_spawn_cwd(struct api_pending *, const char *, char *);

/* apiattempts.c: spawn with "attempts" (best-of-N), its wait and close */
void	api_attempts_spawn(struct api_pending *, const json_t *);
int	api_attempts_wait(struct api_pending *, const json_t *, uint64_t);
int	api_attempts_close(struct api_pending *, const json_t *);
int	api_attempts_busy(const struct api *);
void	api_attempts_end(struct api *);
void	api_attempts_free(struct api *);

/* apiloop.c: the loop verbs */
void	api_loop_open(struct api_pending *, const json_t *);
void	api_loop_status(struct api_pending *, const json_t *);
void	api_loop_pause(struct api_pending *, const json_t *);
void	api_loop_resume(struct api_pending *, const json_t *);
void	api_loop_stop(struct api_pending *, const json_t *);
void	api_loop_update(struct api_pending *, const json_t *);
int	api_loop_init(struct api *);
void	api_loop_free(struct api *);
int	api_loop_dir(struct api *, int);
int	api_loop_committer(struct api_pending *);

/* apiquestion.c: the queue of questions */
void	api_questions_list(struct api_pending *, const json_t *);
void	api_question_answer(struct api_pending *, const json_t *);

#endif
