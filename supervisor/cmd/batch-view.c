/*
 * batch-view.c: what a person sees of a batch on a terminal: a line per
 * running item (id, title, role, elapsed, last progress) and a totals
 * line, redrawn in place twice a second; a line that stays for each item
 * that ended; and the summary table printed at the end.
 */
#include "config.h"

#include <sys/ioctl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "batch.h"
#include "batch-view.h"
#include "xmalloc.h"

#define VIEW_TICK_MS	500
#define VIEW_WIDTH	80	/* when the terminal does not say */

struct batch_view {
	struct event_base	*base;
	FILE			*fp;
	struct batch		*b;
	struct event		*tick;
	int			 drawn;		/* lines to clear */
};

/* The terminal's width, or a safe one. */
static int
batch_view_width(FILE *fp)
{
	struct winsize	ws;

	if (ioctl(fileno(fp), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return VIEW_WIDTH;
}

/* The live lines taken off the screen before anything else is written. */
static void
batch_view_clear(struct batch_view *v)
{
	for (; v->drawn > 0; v->drawn--)
		fputs("\033[1A\033[2K", v->fp);
}

/* A duration as a person reads it: 7s, 2m05s, 1h02m. */
static void
batch_view_dur(long long ms, char *buf, size_t len)
{
	long long	s = ms / 1000;

	if (s < 60)
		snprintf(buf, len, "%llds", s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm%02llds", s / 60, s % 60);
	else
		snprintf(buf, len, "%lldh%02lldm", s / 3600, s / 60 % 60);
}

/* One line, cut at the width, control characters shown as spaces. */
static void
batch_view_line(FILE *fp, const char *s, int width)
{
	int	n;

	for (n = 0; *s != '\0' && n < width - 1; s++, n++)
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, fp);
	fputc('\n', fp);
}

/* The totals of a state: what the last line says. */
static void
batch_view_totals(const json_t *st, size_t running, char *buf, size_t len)
{
	const json_t	*ctx = json_object_get(st, "context");
	const json_t	*u = json_object_get(ctx, "usage");
	size_t		 n = json_array_size(json_object_get(st, "queue"));
	long long	 ok, bad, blk;

	ok = json_integer_value(json_object_get(ctx, "completed_count"));
	bad = json_integer_value(json_object_get(ctx, "failed_count"));
	blk = json_integer_value(json_object_get(ctx, "blocked_count"));
	snprintf(buf, len, "%lld/%zu completed, %lld failed, %lld blocked, "
	    "%zu running; %lld tokens, $%.4f", ok, n, bad, blk, running,
	    json_integer_value(json_object_get(u, "input_tokens")) +
	    json_integer_value(json_object_get(u, "output_tokens")),
	    json_number_value(json_object_get(u, "cost_usd")));
}

/* The live block drawn again. */
static void
batch_view_draw(struct batch_view *v)
{
	json_t		*live, *e;
	char		 line[1024], dur[32], tot[256];
	const char	*role, *prog;
	size_t		 i;
	int		 width = batch_view_width(v->fp);

	if (v->b == NULL)
		return;
	batch_view_clear(v);
	live = batch_live(v->b);
	json_array_foreach(live, i, e) {
		role = json_string_value(json_object_get(e, "role"));
		prog = json_string_value(json_object_get(e, "progress"));
		batch_view_dur(json_integer_value(json_object_get(e,
		    "elapsed_ms")), dur, sizeof dur);
		snprintf(line, sizeof line, "  %-10s %-28.28s %-9s %7s  %s",
		    json_string_value(json_object_get(e, "item_id")),
		    json_string_value(json_object_get(e, "title")),
		    role != NULL ? role : "-", dur, prog != NULL ? prog : "");
		batch_view_line(v->fp, line, width);
		v->drawn++;
	}
	batch_view_totals(batch_state(v->b), json_array_size(live), tot,
	    sizeof tot);
	snprintf(line, sizeof line, "%s: %s", batch_id(v->b), tot);
	batch_view_line(v->fp, line, width);
	v->drawn++;
	json_decref(live);
	fflush(v->fp);
}

static void
batch_view_tick(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	batch_view_draw(arg);
}

/* A view on fp (a terminal), drawing once the batch is attached. */
struct batch_view *
batch_view_new(struct event_base *base, FILE *fp)
{
	struct batch_view	*v = xcalloc(1, sizeof *v);

	v->base = base;
	v->fp = fp;
	return v;
}

void
batch_view_attach(struct batch_view *v, struct batch *b)
{
	struct timeval	tv = { 0, VIEW_TICK_MS * 1000 };

	if (v == NULL)
		return;
	v->b = b;
	v->tick = event_new(v->base, -1, EV_PERSIST, batch_view_tick, v);
	event_add(v->tick, &tv);
}

/* An item that ended gets a line that stays above the live block. */
void
batch_view_event(struct batch_view *v, const char *name, const json_t *o)
{
	const char	*st, *why, *br;
	char		 line[1024], dur[32];

	if (v == NULL || v->b == NULL || strcmp(name, "item_done") != 0)
		return;
	batch_view_clear(v);
	st = json_string_value(json_object_get(o, "status"));
	why = json_string_value(json_object_get(o, "failure_reason"));
	batch_view_dur(json_integer_value(json_object_get(o, "duration_ms")),
	    dur, sizeof dur);
	br = json_string_value(json_object_get(json_object_get(o,
	    "worktree"), "branch"));
	snprintf(line, sizeof line, "%s %s %s (%s)%s%s%s%s", st != NULL &&
	    strcmp(st, "completed") == 0 ? "ok  " : "FAIL",
	    json_string_value(json_object_get(o, "item_id")),
	    st != NULL ? st : "?", dur, why != NULL ? ": " : "",
	    why != NULL ? why : "", br != NULL ? " on branch " : "",
	    br != NULL ? br : "");
	batch_view_line(v->fp, line, batch_view_width(v->fp));
	batch_view_draw(v);
}

/* The live block goes; what stays is the ended items' lines. */
void
batch_view_end(struct batch_view *v)
{
	if (v == NULL)
		return;
	if (v->tick != NULL)
		event_del(v->tick);
	batch_view_clear(v);
	fflush(v->fp);
}

void
batch_view_free(struct batch_view *v)
{
	if (v == NULL)
		return;
	if (v->tick != NULL)
		event_free(v->tick);
	free(v);
}

/*
 * An item's worktree under its summary line: its branch, head, the diff
 * stat and the exact files (STATUS PATH), for the user to merge.
 */
static void
batch_view_worktree(FILE *fp, const json_t *wt)
{
	const json_t	*st = json_object_get(wt, "stat"), *f;
	const char	*head = json_string_value(json_object_get(wt, "head"));
	size_t		 i;

	if (!json_is_object(wt))
		return;
	fprintf(fp, "%-12s branch %s at %.12s: %lld files, +%lld -%lld",
	    "", json_string_value(json_object_get(wt, "branch")) != NULL ?
	    json_string_value(json_object_get(wt, "branch")) : "?",
	    head != NULL ? head : "?", (long long)json_integer_value(
	    json_object_get(st, "files")), (long long)json_integer_value(
	    json_object_get(st, "insertions")), (long long)json_integer_value(
	    json_object_get(st, "deletions")));
	json_array_foreach(json_object_get(wt, "files"), i, f)
		fprintf(fp, "%s %s %s", i > 0 ? "," : ":",
		    json_string_value(json_object_get(f, "status")),
		    json_string_value(json_object_get(f, "path")));
	fprintf(fp, "\n");
}

/* The table printed at the end: one row per item, then the totals. */
void
batch_view_summary(FILE *fp, const json_t *st)
{
	const json_t	*e;
	const char	*why;
	char		 dur[32], tot[256];
	size_t		 i;

	fprintf(fp, "%-12s %-10s %8s  %-34s %s\n", "ITEM", "STATUS",
	    "TIME", "LOOP", "TITLE / REASON");
	json_array_foreach(json_object_get(st, "queue"), i, e) {
		why = json_string_value(json_object_get(e, "failure_reason"));
		batch_view_dur(json_integer_value(json_object_get(e,
		    "duration_ms")), dur, sizeof dur);
		fprintf(fp, "%-12s %-10s %8s  %-34s %s\n",
		    json_string_value(json_object_get(e, "item_id")),
		    json_string_value(json_object_get(e, "status")), dur,
		    json_is_string(json_object_get(e, "loop_id")) ?
		    json_string_value(json_object_get(e, "loop_id")) : "-",
		    why != NULL ? why : json_string_value(json_object_get(e,
		    "title")));
		batch_view_worktree(fp, json_object_get(e, "worktree"));
	}
	batch_view_totals(st, 0, tot, sizeof tot);
	fprintf(fp, "%s\n", tot);
	fflush(fp);
}
