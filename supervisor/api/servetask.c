/*
 * servetask.c: CCW's task routes (ccw-api.md section 1): a loop's list,
 * add and reorder, and one task by its id alone (get, update, delete);
 * the request checked here with CCW's words and error shapes, the file
 * work a job on serve's I/O thread (servetaskio.c).
 */
#include <config.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adapter.h"
#include "clock.h"
#include "httphead.h"
#include "serveint.h"
#include "servetask.h"
#include "state.h"
#include "toolconfig.h"
#include "xmalloc.h"

/* A task field: required on POST; a word list, or free text. */
struct serve_task_field {
	const char		*key;
	const char *const	*words;		/* NULL: text */
	const char		*one_of;	/* the words, for the error */
	int			 required;	/* by POST */
	int			 trim;		/* POST trims it (CCW) */
};

static const char *const serve_modes[] = { "analysis", "write", "review",
    NULL };
static const char *const serve_on_error[] = { "continue", "pause",
    "fail_fast", NULL };

/* The fields a task route takes; any other member of a body is ignored. */
static const struct serve_task_field serve_task_fields[] = {
	{ "description", NULL, NULL, 1, 1 },
	/* words NULL and one_of set: the root's enabled tools, or bash */
	{ "tool", NULL, "tool must be one of enabled tools: ", 1, 0 },
	{ "mode", serve_modes, "mode must be one of: analysis, write, "
	    "review", 1, 0 },
	{ "prompt_template", NULL, NULL, 1, 1 },
	{ "command", NULL, NULL, 0, 0 },
	{ "on_error", serve_on_error, "on_error must be one of: continue, "
	    "pause, fail_fast", 0, 0 },
};
#define SERVE_NFIELDS	(sizeof serve_task_fields / sizeof serve_task_fields[0])

/* Only blanks (CCW's trim().length === 0)? */
static int
serve_blank(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return *s == '\0';
}

/* s without its leading and trailing blanks, as CCW's trim(). */
static json_t *
serve_trimmed(const char *s)
{
	size_t	n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	return json_stringn(s, n);
}

/* A command tool (bash), or an agent the configuration enables. */
static int
serve_tool_enabled(const struct config *cfg, const char *name)
{
	size_t	i;

	if (adapter_find(name) != NULL && !adapter_is_agent(name))
		return 1;
	for (i = 0; cfg != NULL && i < cfg->ntools; i++)
		if (strcmp(cfg->tools[i].name, name) == 0)
			return cfg->tools[i].enabled;
	return 0;
}

/*
 * The error for a tool refused: the words, then every row of the tool
 * table serve would take (the command tools, the enabled agents).
 */
static void
serve_tools_list(const struct config *cfg, const char *lead, char *buf,
    size_t len)
{
	const char	*name;
	size_t		 i, n;
	int		 first = 1;

	n = (size_t)snprintf(buf, len, "%s", lead);
	for (i = 0; i < adapter_count() && n < len; i++) {
		name = adapter_at(i)->name;
		if (!serve_tool_enabled(cfg, name))
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s",
		    first ? "" : ", ", name);
		first = 0;
	}
}

/*
 * A body's task fields checked as CCW's POST checks them (post: the
 * required ones present; a PUT checks only those given, null meaning
 * absent as CCW's "??" reads it): a new object of the fields, or NULL
 * with the reply sent (400).  The tool is bash or one the loop's root
 * enables (its configuration, CCW's cli-tools.json included), as CCW
 * checks it against its enabled tools.
 */
static json_t *
serve_task_check(struct http_req *r, const json_t *b, int post,
    const struct config *cfg)
{
	const struct serve_task_field	*f;
	const json_t			*v;
	const char			*s;
	json_t				*out = json_object();
	char				 msg[512];
	size_t				 i, k;

	for (i = 0; i < SERVE_NFIELDS; i++) {
		f = &serve_task_fields[i];
		v = json_object_get(b, f->key);
		if (v == NULL || json_is_null(v)) {
			if (!post || !f->required)
				continue;
			snprintf(msg, sizeof msg, "%s is required", f->key);
			goto bad;
		}
		s = json_string_value(v);
		if (f->words == NULL && f->one_of != NULL) {
			if (s == NULL || !serve_tool_enabled(cfg, s)) {
				serve_tools_list(cfg, f->one_of, msg,
				    sizeof msg);
				goto bad;
			}
		} else if (f->words != NULL) {
			for (k = 0; s != NULL && f->words[k] != NULL; k++)
				if (strcmp(s, f->words[k]) == 0)
					break;
			if (s == NULL || f->words[k] == NULL) {
				snprintf(msg, sizeof msg, "%s", f->one_of);
				goto bad;
			}
		} else if (s == NULL || (f->required && serve_blank(s))) {
			snprintf(msg, sizeof msg, post && f->required ?
			    "%s is required" : f->required ?
			    "%s must be a non-empty string" :
			    "%s must be a string", f->key);
			goto bad;
		}
		json_object_set_new(out, f->key, post && f->trim ?
		    serve_trimmed(s) : json_string(s));
	}
	return out;
bad:
	serve_ccw_error(r, 400, 1, msg);
	json_decref(out);
	return NULL;
}

/*
 * The root of an existing loop, or the reply sent: 400 (CCW writes it
 * {success:false} on every task route), 404 in the route's shape.
 */
static struct serve_root *
serve_tasks_root(struct serve *s, struct http_req *r, const char *id,
    int body_route)
{
	struct serve_root	*root;

	if (!state_id_valid(id)) {
		serve_ccw_error(r, 400, 0, "Invalid loop ID format");
		return NULL;
	}
	if ((root = serve_root_of(s, id)) == NULL)
		serve_ccw_error(r, 404, body_route, "Loop not found");
	return root;
}

/* A job for op on the task id (may be NULL) and arg (taken). */
static struct serve_task_job *
serve_task_job(enum serve_task_op op, const char *tid, json_t *arg)
{
	struct serve_task_job	*j = xcalloc(1, sizeof *j);

	j->op = op;
	j->task_id = tid != NULL ? xstrdup(tid) : NULL;
	j->arg = arg;
	return j;
}

/* The task id of the path, or the reply sent (400, CCW's words). */
static const char *
serve_task_id(struct http_req *r, const struct serve_match *m)
{
	if (state_id_valid(m->cap[0]))
		return m->cap[0];
	serve_ccw_error(r, 400, 0, "Invalid task ID format");
	return NULL;
}

/* GET /api/loops/v2/:id/tasks: {success, data (by order), total, ...} */
void
serve_tasks_list(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	struct serve_root	*root;

	if ((root = serve_tasks_root(s, r, m->cap[0], 0)) != NULL)
		serve_task_submit(s, r, root, m->cap[0],
		    serve_task_job(STO_LIST, NULL, NULL));
}

/*
 * POST /api/loops/v2/:id/tasks {description, tool, mode, prompt_template,
 * command?, on_error?}: a task line with CCW's id and order.
 */
void
serve_tasks_add(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	struct serve_root	*root;
	struct timespec		 ts;
	json_t			*b, *t;
	char			*gen, tid[64], now[40];

	if ((root = serve_tasks_root(s, r, m->cap[0], 1)) == NULL ||
	    (b = serve_body(r, 0)) == NULL)
		return;
	t = serve_task_check(r, b, 1, root->config);
	json_decref(b);
	if (t == NULL)
		return;
	/* CCW's id: task-<ms since the epoch>-<8 hex> */
	clock_gettime(CLOCK_REALTIME, &ts);
	gen = state_id_generate();
	snprintf(tid, sizeof tid, "task-%lld-%s", (long long)ts.tv_sec * 1000 +
	    ts.tv_nsec / 1000000, gen + strlen(gen) - 8);
	free(gen);
	clock_iso(NULL, 1, now, sizeof now);
	/* CCW's member order: the line reads as CCW writes it */
	b = json_pack("{s:s,s:O,s:O,s:O,s:O,s:s,s:s,s:O?,s:O?}", "task_id",
	    tid, "description", json_object_get(t, "description"), "tool",
	    json_object_get(t, "tool"), "mode", json_object_get(t, "mode"),
	    "prompt_template", json_object_get(t, "prompt_template"),
	    "created_at", now, "updated_at", now, "command",
	    json_object_get(t, "command"), "on_error", json_object_get(t,
	    "on_error"));
	json_decref(t);
	serve_task_submit(s, r, root, m->cap[0], serve_task_job(STO_ADD, NULL,
	    b));
}

/* GET /api/loops/v2/tasks/:taskId: found in any loop of any root. */
void
serve_tasks_get(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	const char	*tid;

	if ((tid = serve_task_id(r, m)) != NULL)
		serve_task_submit(s, r, NULL, NULL, serve_task_job(STO_FIND,
		    tid, NULL));
}

/*
 * PUT /api/loops/v2/tasks/:taskId {loop_id, description?, tool?, mode?,
 * prompt_template?, command?, on_error?}: the fields given, checked as
 * POST checks them; other members ignored (CCW ignores them).
 */
void
serve_tasks_update(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	struct serve_root	*root;
	const char		*tid, *lid;
	json_t			*b, *f;

	if ((tid = serve_task_id(r, m)) == NULL ||
	    (b = serve_body(r, 0)) == NULL)
		return;
	lid = json_string_value(json_object_get(b, "loop_id"));
	if (lid == NULL || *lid == '\0')
		serve_ccw_error(r, 400, 1, "loop_id is required");
	else if (!state_id_valid(lid))
		serve_ccw_error(r, 400, 1, "Invalid loop_id format");
	else if ((root = serve_root_of(s, lid)) == NULL)
		serve_ccw_error(r, 404, 1, "Loop not found");
	else if ((f = serve_task_check(r, b, 0, root->config)) == NULL)
		;	/* answered */
	else
		serve_task_submit(s, r, root, lid, serve_task_job(STO_UPDATE,
		    tid, f));
	json_decref(b);
}

/* DELETE /api/loops/v2/tasks/:taskId?loop_id=ID: the rest renumbered. */
void
serve_tasks_delete(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	struct serve_root	*root;
	const char		*tid;
	char			 lid[STATE_ID_MAX + 1];

	if ((tid = serve_task_id(r, m)) == NULL)
		return;
	if (http_query_get(http_req_head(r)->query, "loop_id", lid,
	    sizeof lid) != 1 || !state_id_valid(lid)) {
		serve_ccw_error(r, 400, 0, "loop_id query parameter is "
		    "required");
		return;
	}
	if ((root = serve_tasks_root(s, r, lid, 0)) != NULL)
		serve_task_submit(s, r, root, lid, serve_task_job(STO_DELETE,
		    tid, NULL));
}

/*
 * PUT /api/loops/v2/:id/tasks/reorder {ordered_task_ids}: every id a
 * task of the loop (else 400 "Task not found: X"), none twice.
 */
void
serve_tasks_reorder(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	struct serve_root	*root;
	json_t			*b, *ids, *seen, *set, *v;
	char			 msg[STATE_ID_MAX + 32];
	const char		*bad = NULL;
	size_t			 i;

	if ((root = serve_tasks_root(s, r, m->cap[0], 1)) == NULL ||
	    (b = serve_body(r, 0)) == NULL)
		return;
	ids = json_object_get(b, "ordered_task_ids");
	seen = json_array();
	set = json_object();
	if (!json_is_array(ids))
		bad = "ordered_task_ids must be an array";
	else if (json_array_size(ids) == 0)
		bad = "ordered_task_ids cannot be empty";
	json_array_foreach(bad == NULL ? ids : NULL, i, v) {
		if (!json_is_string(v)) {
			bad = "ordered_task_ids must hold task id strings";
			break;
		}
		if (json_object_get(set, json_string_value(v)) != NULL) {
			snprintf(msg, sizeof msg, "Task listed twice: %s",
			    json_string_value(v));
			bad = msg;
			break;
		}
		json_object_set_new(set, json_string_value(v), json_true());
		json_array_append(seen, v);
	}
	json_decref(set);
	if (bad != NULL) {
		serve_ccw_error(r, 400, 1, bad);
		json_decref(seen);
	} else
		serve_task_submit(s, r, root, m->cap[0], serve_task_job(
		    STO_REORDER, NULL, seen));
	json_decref(b);
}
