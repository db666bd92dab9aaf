/*
 * follow.c: following the tool's stdout.  The tool writes to a regular
 * file, its spool (spool.c; Node-based CLIs truncate output on pipes);
 * we read what it wrote, pass it on to the log (logcap.c), cut it into
 * lines for the adapter, and keep the last FOLLOW_TAIL bytes for the
 * final answer.  Memory stays flat however much the tool prints, and so
 * does the disk.  stderr reaches the log apart (errtail.c): the answer
 * is stdout.
 * Reading is paced by an adaptive timer rather than inotify: closing an
 * inotify instance blocks the exiting worker ~15 ms in the kernel, which
 * halved lifecycle throughput, while a poll that backs off to 1 s costs
 * an idle worker next to nothing.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "chan.h"
#include "log.h"
#include "worker.h"
#include "xmalloc.h"

#define LINE_MAX_KEEP	(8u * 1024 * 1024)	/* longer lines are cut */
#define POLL_FAST_MS	10	/* while output flows */
#define POLL_SLOW_MS	1000	/* after a second of silence */
#define BACKLOG_HIGH	(16u * 1024 * 1024)	/* unread: stop the tool */
#define BACKLOG_LOW	(8u * 1024 * 1024)	/* unread: let it go on */
#define FOLLOW_BUDGET	(4u * 1024 * 1024)	/* read in one turn */

/* Append bytes to the tail ring. */
static void
follow_keep(struct follow *f, const char *p, size_t n)
{
	size_t	chunk;

	if (n >= FOLLOW_TAIL) {
		p += n - FOLLOW_TAIL;
		n = FOLLOW_TAIL;
	}
	while (n > 0) {
		chunk = FOLLOW_TAIL - f->tail_pos;
		if (chunk > n)
			chunk = n;
		memcpy(f->tail + f->tail_pos, p, chunk);
		f->tail_pos = (f->tail_pos + chunk) % FOLLOW_TAIL;
		f->tail_len += chunk;
		if (f->tail_len > FOLLOW_TAIL)
			f->tail_len = FOLLOW_TAIL;
		p += chunk;
		n -= chunk;
	}
}

/* The last max bytes of output, NUL-terminated and valid UTF-8 (owned). */
char *
follow_tail(const struct follow *f, size_t max)
{
	size_t	 n = f->tail_len < max ? f->tail_len : max, start, first;
	char	*out = xmalloc(n + 1);

	start = (f->tail_pos + FOLLOW_TAIL - n) % FOLLOW_TAIL;
	first = FOLLOW_TAIL - start < n ? FOLLOW_TAIL - start : n;
	memcpy(out, f->tail + start, first);
	memcpy(out + first, f->tail, n - first);
	out[n] = '\0';
	utf8_sanitize(out, n);
	return out;
}

/* Hand complete lines to the worker; a huge line is cut, never buffered whole. */
static void
follow_lines(struct worker *w)
{
	struct follow	*f = &w->fol;
	struct evbuffer_ptr p;
	size_t		 len;
	char		*line;

	for (;;) {
		p = evbuffer_search_eol(f->partial, NULL, &len, EVBUFFER_EOL_LF);
		if (p.pos < 0) {
			if (evbuffer_get_length(f->partial) <= LINE_MAX_KEEP)
				return;
			len = LINE_MAX_KEEP;
			line = (char *)evbuffer_pullup(f->partial, (ev_ssize_t)len);
			worker_line(w, line, len);
			evbuffer_drain(f->partial, len);
			continue;
		}
		line = (char *)evbuffer_pullup(f->partial, p.pos + (ev_ssize_t)len);
		worker_line(w, line, (size_t)p.pos);
		evbuffer_drain(f->partial, (size_t)p.pos + len);
	}
}

/*
 * A file has no backpressure: a tool that writes faster than we read
 * would grow the spool without end.  Past BACKLOG_HIGH unread bytes its
 * process group is stopped, as a full pipe would block it, and continued
 * once at most BACKLOG_LOW are left.  Looked at before each read of 64
 * KiB (an fstat): the spool holds BACKLOG_HIGH plus what the tool writes
 * while we handle one read.  (A descendant that left the group with
 * setsid is not stopped.)  What was read goes back to the disk.
 */
static void
follow_pace(struct worker *w)
{
	struct follow	*f = &w->fol;
	struct stat	 sb;
	uint64_t	 backlog = 0;

	if (!f->no_free && spool_free(f->fd, &f->freed, f->total) != 0) {
		log_warnx("spool: %s: the tool's output is spooled whole",
		    strerror(errno));
		f->no_free = 1;
	}
	if (fstat(f->fd, &sb) == 0 && (uint64_t)sb.st_size > f->total)
		backlog = (uint64_t)sb.st_size - f->total;
	if (!f->stopped && backlog > BACKLOG_HIGH && !w->finished) {
		tool_signal(w, SIGSTOP);
		f->stopped = 1;
	} else if (f->stopped && backlog <= BACKLOG_LOW)
		tool_signal(w, SIGCONT);
}

/*
 * Read what the tool has written, at our own offset (the tool's
 * descriptor shares the file's): at most FOLLOW_BUDGET bytes, so that a
 * flood leaves the event loop its turns, or (all) everything written
 * before this call.  The bytes go to the log, then to the adapter.
 * Bytes read.
 */
size_t
follow_drain(struct worker *w, int all)
{
	struct follow	*f = &w->fol;
	struct stat	 sb;
	char		 buf[65536];
	uint64_t	 limit;
	size_t		 got = 0;
	ssize_t		 n;

	if (f->fd < 0)
		return 0;
	follow_pace(w);
	limit = f->total + FOLLOW_BUDGET;
	if (all)
		limit = fstat(f->fd, &sb) == 0 && (uint64_t)sb.st_size >
		    f->total ? (uint64_t)sb.st_size : f->total;
	while (f->total < limit) {
		n = pread(f->fd, buf, limit - f->total < sizeof buf ?
		    (size_t)(limit - f->total) : sizeof buf, (off_t)f->total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		f->total += (uint64_t)n;
		logcap_write(&w->log, buf, (size_t)n);
		follow_keep(f, buf, (size_t)n);
		evbuffer_add(f->partial, buf, (size_t)n);
		follow_lines(w);
		follow_pace(w);
	}
	return got;
}

/* Arm the next poll in ms. */
static void
follow_arm(struct follow *f, unsigned ms)
{
	f->interval = ms;
	chan_arm_ms(f->poll_ev, ms);
}

/* Poll fast while the tool writes, back off while it is silent. */
static void
follow_poll_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct worker	*w = arg;
	unsigned	 next;
	size_t		 got;

	(void)fd;
	(void)ev;
	if ((got = follow_drain(w, 0)) >= FOLLOW_BUDGET)
		next = 0;	/* more is there: after one turn of the loop */
	else if (got > 0 || w->fol.interval == 0)
		next = POLL_FAST_MS;
	else
		next = w->fol.interval * 2 > POLL_SLOW_MS ? POLL_SLOW_MS :
		    w->fol.interval * 2;
	follow_arm(&w->fol, next);
}

/*
 * Create the spool the tool's stdout goes to (next to the log at path)
 * and start following it.
 */
int
follow_open(struct worker *w, const char *path, char **err)
{
	struct follow	*f = &w->fol;

	if ((f->fd = spool_open(path, &f->no_free, err)) < 0)
		return -1;
	f->partial = evbuffer_new();
	f->tail = xmalloc(FOLLOW_TAIL);
	f->poll_ev = evtimer_new(w->base, follow_poll_cb, w);
	follow_arm(f, POLL_FAST_MS);
	return 0;
}

/* Stop watching and free the buffers. */
void
follow_close(struct follow *f)
{
	if (f->poll_ev != NULL)
		event_free(f->poll_ev);
	if (f->fd >= 0)
		close(f->fd);
	if (f->partial != NULL)
		evbuffer_free(f->partial);
	free(f->tail);
	memset(f, 0, sizeof *f);
	f->fd = -1;
}
