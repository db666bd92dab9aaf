/*
 * serveint.h: what serve's files share: the server object, a request
 * waiting for a verb's reply (its client may leave first), the route
 * handlers' shape and CCW's error shapes.
 */
#ifndef CCW_SERVEINT_H
#define CCW_SERVEINT_H

#include <sys/queue.h>

#include <jansson.h>

#include "serve.h"

struct committer;
struct gitrun;
struct servemcp;
struct serveccw;
struct sse;
struct ws;

#define SERVE_CAPTURES	2	/* ":id" segments a pattern may hold */
#define SERVE_MCP_SESSIONS 64	/* /mcp sessions open at once; beyond: */
				/* the LRU idle one evicted, else 503 */
#define SERVE_MCP_IDLE_S 1800	/* an idle /mcp session lives (CCW_MCP_IDLE_S) */
#define SERVE_MCP_IDLE_MAX_S 86400	/* the most CCW_MCP_IDLE_S may say */

struct serve_call;
TAILQ_HEAD(serve_calls, serve_call);

struct serve {
	struct event_base	*base;
	struct serve_cfg	 cfg;
	struct http_server	*http;
	struct sse		*sse;
	struct ws		*ws;		/* /ws: sse's events, WebSocket */
	struct committer	*io;		/* scans, deletes: off the loop */
	struct servemcp		*mcp;		/* /mcp's sessions */
	struct serveccw		*ccw;		/* CCW's CSRF tokens */
	char			 listen_host[64]; /* --http's host: a name */
	struct serve_calls	 calls;		/* waiting for a verb's reply */
	uint64_t		 writes;	/* front-end commits made here */
	uint64_t		 jobs_refused;	/* starts, resumes over --jobs */
	int			 freeing;
};

/*
 * What a route does, from its row: a handler serving several routes
 * reads it here and never parses the path again.
 */
enum serve_op {
	SOP_NONE = 0,		/* the handler serves one route */
	SOP_LIST,		/* agents: the verbs of /api/agents */
	SOP_SPAWN,
	SOP_WAIT,
	SOP_RESULT,
	SOP_INPUT,
	SOP_CLOSE,
	SOP_START,		/* loops: the actions of /api/loops/v2/:id */
	SOP_PAUSE,
	SOP_RESUME,
	SOP_STOP,
};

/* One matched request: its row's op and captures (":id"), borrowed. */
struct serve_match {
	enum serve_op	 op;
	const char	*cap[SERVE_CAPTURES];
	char		 buf[1024];
};

typedef void	(*serve_route_fn)(struct serve *, struct http_req *,
		    const struct serve_match *);

/*
 * A request waiting for one or more api_call replies.  next: what to do
 * with a reply (the request still open); the call is freed by
 * serve_call_end, or when the client leaves (r is then NULL).
 */
typedef void	(*serve_next_fn)(struct serve_call *, json_t *);
struct serve_call {
	TAILQ_ENTRY(serve_call)	 entry;
	struct serve		*s;
	struct http_req		*r;
	struct serve_root	*root;
	serve_next_fn		 next;
	char			*id;		/* the loop's */
	enum serve_op		 op;		/* the route's action, or none */
	int			 step;
	int			 body;		/* CCW's body route: {"error"} */
	json_t			*keep;		/* a reply kept for later */
	const char		*via;		/* the front end: NULL "http" */
	struct gitrun		*git;		/* delete: its cleanup running */
};

struct serve_call *serve_call_new(struct serve *, struct http_req *,
		    struct serve_root *, const char *);
void		 serve_call_api(struct serve_call *, json_t *, serve_next_fn);
void		 serve_call_end(struct serve_call *);
json_t		*serve_body(struct http_req *, int);
void		 serve_ccw_error(struct http_req *, int, int, const char *);
void		 serve_ok(struct http_req *, json_t *);

/* serveloop.c: CCW's /api/loops/v2 */
void	serve_loops_list(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serve_loops_create(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serve_loops_get(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serve_loops_update(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serve_loops_delete(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serve_loops_action(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serve_loops_status(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serve_loop_dispatch(struct serve_call *, enum serve_op);
/* servetask.c: CCW's task routes */
void	serve_tasks_list(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serve_tasks_add(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serve_tasks_get(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serve_tasks_update(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serve_tasks_delete(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serve_tasks_reorder(struct serve *, struct http_req *,
	    const struct serve_match *);
struct serve_root *serve_root_of(struct serve *, const char *);
/* servereplay.c: a loop's replay page */
void	serve_replay(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serve_scan_dir(const char *, json_t *);
/* servelog.c: a loop's workers and their logs, for the loop page */
void	serve_loop_log(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serve_loop_workers(struct serve *, struct http_req *,
	    const struct serve_match *);
/* servepageloop.c: the loop page at /loops/:id */
void	serve_page_loop(struct serve *, struct http_req *,
	    const struct serve_match *);
/* servepage.c: the status page at / */
void	serve_page(struct serve *, struct http_req *,
	    const struct serve_match *);
/* servemcp.c: /mcp, MCP's Streamable HTTP; servemcphead.c its checks */
void	serve_mcp(struct serve *, struct http_req *,
	    const struct serve_match *);
struct servemcp_stats {
	size_t		 open;		/* sessions now */
	size_t		 max;		/* the cap */
	uint64_t	 idle_s;	/* an idle session's life */
	uint64_t	 opened;	/* initialized and kept */
	uint64_t	 deleted;	/* ended by their client's DELETE */
	uint64_t	 expired;	/* ended idle */
	uint64_t	 evicted;	/* ended at the cap for a new one */
	uint64_t	 refused;	/* initializes refused (503) */
};
struct servemcp *servemcp_new(struct serve *, size_t);
void	servemcp_stats(const struct servemcp *, struct servemcp_stats *);
void	servemcp_free(struct servemcp *);
int	servemcp_accepts(const struct http_head *, const char *);
int	servemcp_is_json(const struct http_head *);
int	servemcp_version_ok(const struct http_head *);
/* servehost.c: the names serve answers to, the guard of every route */
const char *servehost_refused(const struct serve *, const struct http_head *,
	    int *);
/* serveccw.c: CCW's dashboard (its v1 loop routes, CSRF, workspace) */
struct serveccw *serveccw_new(void);
void	serveccw_free(struct serveccw *);
void	serveccw_switch_path(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serveccw_csrf_token(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serveccw_loops_list(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serveccw_loops_create(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serveccw_loops_action(struct serve *, struct http_req *,
	    const struct serve_match *);
/* servequestions.c: the queue of questions */
void	serve_questions_list(struct serve *, struct http_req *,
	    const struct serve_match *);
void	serve_questions_answer(struct serve *, struct http_req *,
	    const struct serve_match *);
/* servemetrics.c: GET /metrics */
void	serve_metrics(struct serve *, struct http_req *,
	    const struct serve_match *);

#endif
