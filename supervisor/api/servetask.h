/*
 * servetask.h: what the task routes (servetask.c) hand the jobs that run
 * them on serve's I/O thread (servetaskio.c).
 */
#ifndef CCW_SERVETASK_H
#define CCW_SERVETASK_H

#include <jansson.h>

struct http_req;
struct serve;
struct serve_call;
struct serve_root;

/* What a job does to a loop's tasks file. */
enum serve_task_op {
	STO_LIST,	/* GET :id/tasks */
	STO_ADD,	/* POST :id/tasks */
	STO_FIND,	/* GET tasks/:taskId: every loop of every root */
	STO_UPDATE,	/* PUT tasks/:taskId */
	STO_DELETE,	/* DELETE tasks/:taskId?loop_id= */
	STO_REORDER	/* PUT :id/tasks/reorder */
};

/* One job; the route fills op, task_id and arg, the submit the rest. */
struct serve_task_job {
	struct serve_call	*c;		/* c->id: the loop (FIND: NULL) */
	enum serve_task_op	 op;
	char			*dir;		/* the loop's state directory */
	char			*task_id;	/* FIND, UPDATE, DELETE */
	json_t			*arg;		/* ADD: the task; UPDATE: the */
						/* fields; REORDER: the ids */
	json_t			*task;		/* added, found or updated */
	json_t			*tasks;		/* the list read or written */
	int			 code;		/* 0, or the error's status */
	char			*err;
};

void	serve_task_submit(struct serve *, struct http_req *,
	    struct serve_root *, const char *, struct serve_task_job *);
int	serve_task_body_route(enum serve_task_op);

#endif
