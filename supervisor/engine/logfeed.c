/*
 * logfeed.c: following a loop's workers' logs for LOOP_LOG_ENTRY.  The
 * log file is the faithful source (every line the tool wrote, PROGRESS
 * is a throttled summary); it is read on a timer with pread, a bounded
 * amount a tick, so the loop never waits on it.  A second's lines and
 * bytes are capped per loop: past the cap lines are counted, not kept,
 * and a backlog past a tick's read is skipped; a line says how many.
 */
#include <config.h>

#include <sys/queue.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "logfeed.h"
#include "xmalloc.h"

#define LOGFEED_TICK_MS		250
#define LOGFEED_READ_MAX	(64 * 1024)	/* a tick's read of one log */
#define LOGFEED_LINE_MAX	2048		/* longer lines are cut */

struct logfeed_src {
	TAILQ_ENTRY(logfeed_src) entry;
	char			*agent, *step, *path;
	int			 fd;		/* -1: not there yet */
	off_t			 off;
	int			 ending;	/* its worker ended: drain, go */
	int			 skip_partial;	/* after a skip: mid-line */
	char			 part[LOGFEED_LINE_MAX];
	size_t			 npart;
	unsigned long long	 dropped, skipped;	/* lines, bytes */
};
TAILQ_HEAD(logfeed_srcs, logfeed_src);

struct logfeed {
	struct event		*tick;
	struct logfeed_srcs	 srcs;
	unsigned		 max_lines;
	size_t			 max_bytes;
	uint64_t		 window;	/* its second began (mono ms) */
	unsigned		 lines;		/* sent in this second */
	size_t			 bytes;
	logfeed_cb		 cb;
	void			*arg;
	char			*out;		/* a tick's lines of one src */
	size_t			 nout;
};

static void	logfeed_tick(evutil_socket_t, short, void *);
static void	logfeed_src_tick(struct logfeed *, struct logfeed_src *, int);

/* The feed of one loop: LINES and BYTES a second at most. */
struct logfeed *
logfeed_new(struct event_base *base, unsigned lines, size_t bytes,
    logfeed_cb cb, void *arg)
{
	struct logfeed	*f = xcalloc(1, sizeof *f);

	TAILQ_INIT(&f->srcs);
	f->max_lines = lines;
	f->max_bytes = bytes;
	f->cb = cb;
	f->arg = arg;
	f->out = xmalloc(bytes + LOGFEED_LINE_MAX + 2);
	f->tick = event_new(base, -1, EV_PERSIST, logfeed_tick, f);
	return f;
}

/* One source gone: its file closed. */
static void
logfeed_src_free(struct logfeed *f, struct logfeed_src *s)
{
	TAILQ_REMOVE(&f->srcs, s, entry);
	if (s->fd >= 0)
		close(s->fd);
	free(s->agent);
	free(s->step);
	free(s->path);
	free(s);
	if (TAILQ_EMPTY(&f->srcs))
		event_del(f->tick);
}

/* Everything followed stops: nothing more is told. */
void
logfeed_free(struct logfeed *f)
{
	if (f == NULL)
		return;
	while (!TAILQ_EMPTY(&f->srcs))
		logfeed_src_free(f, TAILQ_FIRST(&f->srcs));
	event_free(f->tick);
	free(f->out);
	free(f);
}

/* Follow AGENT's log at PATH from its start; its lines are STEP's. */
void
logfeed_add(struct logfeed *f, const char *agent, const char *step,
    const char *path)
{
	struct logfeed_src	*s;
	struct timeval		 tv = { 0, LOGFEED_TICK_MS * 1000 };

	if (agent == NULL || path == NULL)
		return;
	s = xcalloc(1, sizeof *s);
	s->agent = xstrdup(agent);
	s->step = xstrdup(step != NULL ? step : "");
	s->path = xstrdup(path);
	s->fd = -1;
	if (TAILQ_EMPTY(&f->srcs)) {
		f->window = clock_mono_ms();
		evtimer_add(f->tick, &tv);
	}
	TAILQ_INSERT_TAIL(&f->srcs, s, entry);
}

/* A new second: a new budget; 1 when the last one's drops are told. */
static int
logfeed_window(struct logfeed *f)
{
	uint64_t	now = clock_mono_ms();

	if (now - f->window < 1000)
		return 0;
	f->window = now;
	f->lines = 0;
	f->bytes = 0;
	return 1;
}

/*
 * AGENT's worker ended: what its log holds yet is read now (one bounded
 * read: the loop may end before the next tick), then it goes.
 */
void
logfeed_end(struct logfeed *f, const char *agent)
{
	struct logfeed_src	*s, *next;
	int			 report = logfeed_window(f);

	for (s = TAILQ_FIRST(&f->srcs); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (agent != NULL && strcmp(s->agent, agent) == 0) {
			s->ending = 1;
			logfeed_src_tick(f, s, report);
		}
	}
}

/* One whole line (cut at LINE_MAX): kept for the tick, or counted. */
static void
logfeed_line(struct logfeed *f, struct logfeed_src *s, const char *p,
    size_t len)
{
	if (len > 0 && p[len - 1] == '\r')
		len--;
	if (f->lines >= f->max_lines || f->bytes + len + 1 > f->max_bytes) {
		s->dropped++;
		return;
	}
	if (f->nout > 0)
		f->out[f->nout++] = '\n';
	memcpy(f->out + f->nout, p, len);
	f->nout += len;
	f->lines++;
	f->bytes += len + 1;
}

/* BUF's lines after S's partial one; the tail stays partial. */
static void
logfeed_split(struct logfeed *f, struct logfeed_src *s, const char *buf,
    size_t n)
{
	const char	*p = buf, *nl;
	size_t		 k;

	while ((nl = memchr(p, '\n', (size_t)(buf + n - p))) != NULL) {
		k = (size_t)(nl - p);
		if (s->skip_partial)
			s->skip_partial = 0;
		else if (s->npart > 0) {
			k = k < sizeof s->part - s->npart ? k :
			    sizeof s->part - s->npart;
			memcpy(s->part + s->npart, p, k);
			logfeed_line(f, s, s->part, s->npart + k);
		} else
			logfeed_line(f, s, p, k < LOGFEED_LINE_MAX ? k :
			    LOGFEED_LINE_MAX);
		s->npart = 0;
		p = nl + 1;
	}
	k = (size_t)(buf + n - p);
	if (s->skip_partial)
		return;
	if (k > sizeof s->part - s->npart)
		k = sizeof s->part - s->npart;
	memcpy(s->part + s->npart, p, k);
	s->npart += k;
	if (s->npart == sizeof s->part) {	/* a line too long: its cut */
		logfeed_line(f, s, s->part, s->npart);
		s->npart = 0;
		s->skip_partial = 1;
	}
}

/*
 * What S's log gained since the last tick, LOGFEED_READ_MAX at most: a
 * backlog beyond is skipped (counted), so a flood never holds the loop
 * nor makes the feed fall behind.  1 when the file is read to its end.
 */
static int
logfeed_read(struct logfeed *f, struct logfeed_src *s)
{
	struct stat	 sb;
	char		 buf[LOGFEED_READ_MAX];
	ssize_t		 n;

	if (s->fd < 0 && (s->fd = open(s->path, O_RDONLY | O_NONBLOCK |
	    O_CLOEXEC)) < 0)
		return 1;
	if (fstat(s->fd, &sb) != 0)
		return 1;
	if (sb.st_size < s->off) {	/* rewritten (capped): from its start */
		s->off = 0;
		s->npart = 0;
	}
	if (sb.st_size - s->off > LOGFEED_READ_MAX) {
		s->skipped += (unsigned long long)(sb.st_size - s->off -
		    LOGFEED_READ_MAX);
		s->off = sb.st_size - LOGFEED_READ_MAX;
		s->npart = 0;
		s->skip_partial = 1;
	}
	if ((n = pread(s->fd, buf, sizeof buf, s->off)) <= 0)
		return 1;
	s->off += n;
	logfeed_split(f, s, buf, (size_t)n);
	return s->off >= sb.st_size;
}

/* S's tick: its new lines as one entry; at its end, its last ones. */
static void
logfeed_src_tick(struct logfeed *f, struct logfeed_src *s, int report)
{
	char	*msg;
	int	 eof;

	f->nout = 0;
	eof = logfeed_read(f, s);
	if (s->ending && eof && s->npart > 0) {
		logfeed_line(f, s, s->part, s->npart);
		s->npart = 0;
	}
	if (f->nout > 0) {
		f->out[f->nout] = '\0';
		f->cb(f->arg, s->agent, s->step, f->out);
	}
	if ((report || (s->ending && eof)) && (s->dropped > 0 ||
	    s->skipped > 0)) {
		xasprintf(&msg, "[ccw-supervisor: %llu lines and %llu bytes "
		    "of this log not sent: over %u lines or %zu bytes a "
		    "second]", s->dropped, s->skipped, f->max_lines,
		    f->max_bytes);
		f->cb(f->arg, s->agent, s->step, msg);
		free(msg);
		s->dropped = s->skipped = 0;
	}
	if (s->ending && eof)
		logfeed_src_free(f, s);
}

/* Every LOGFEED_TICK_MS: each log read; a new second, a new budget. */
static void
logfeed_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct logfeed		*f = arg;
	struct logfeed_src	*s, *next;
	int			 report = logfeed_window(f);

	(void)fd;
	(void)ev;
	for (s = TAILQ_FIRST(&f->srcs); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		logfeed_src_tick(f, s, report);
	}
}
