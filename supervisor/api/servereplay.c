/*
 * servereplay.c: GET /loops/:id/replay: the loop's replay document
 * (replay.c), read and rendered on serve's I/O thread, answered with
 * its Content-Security-Policy.  The same document `state export --html`
 * writes, its data embedded: the route asks for the token or its cookie.
 */
#include <config.h>

#include <stdlib.h>
#include <unistd.h>

#include "committer.h"
#include "http.h"
#include "replay.h"
#include "serveint.h"
#include "state.h"
#include "xmalloc.h"

/* One replay being read: the request, the loop's directory, the answer. */
struct serve_replay_job {
	struct serve_call	*c;
	char			*dir;
	char			*doc;		/* the document, or NULL */
	size_t			 len;
	char			*err;		/* why not */
};

/* Off the loop: the directory opened, the loop gathered and rendered. */
static void
serve_replay_run(void *arg)
{
	struct serve_replay_job	*j = arg;
	json_t			*data;
	int			 fd;

	if ((fd = state_dir_open(j->dir, 0, &j->err)) < 0)
		return;
	if ((data = replay_collect(fd, j->c->id, &j->err)) != NULL) {
		j->doc = replay_render(data, 0, &j->len);
		json_decref(data);
	}
	close(fd);
}

/* Back on the loop: the document, or 404 (gone meanwhile, unreadable). */
static void
serve_replay_done(void *arg)
{
	struct serve_replay_job	*j = arg;

	if (j->c->r != NULL && j->doc != NULL)
		http_reply(j->c->r, 200, "text/html; charset=utf-8",
		    replay_csp_header, j->doc, j->len);
	else if (j->c->r != NULL)
		serve_ccw_error(j->c->r, 404, 0, j->err != NULL ? j->err :
		    "Loop not found");
	serve_call_end(j->c);
	free(j->doc);
	free(j->err);
	free(j->dir);
	free(j);
}

/* GET /loops/:id/replay: 400 a bad id, 404 no such loop, else the page. */
void
serve_replay(struct serve *s, struct http_req *r, const struct serve_match *m)
{
	struct serve_replay_job	*j;
	struct serve_root	*root;

	if (!state_id_valid(m->cap[0])) {
		serve_ccw_error(r, 400, 0, "Invalid loop ID format");
		return;
	}
	if ((root = serve_root_of(s, m->cap[0])) == NULL) {
		serve_ccw_error(r, 404, 0, "Loop not found");
		return;
	}
	j = xcalloc(1, sizeof *j);
	j->c = serve_call_new(s, r, root, m->cap[0]);
	j->dir = xstrdup(root->state_dir);
	if (committer_submit(s->io, serve_replay_run, serve_replay_done,
	    j) != 0) {
		serve_replay_run(j);
		serve_replay_done(j);
	}
}
