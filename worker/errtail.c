/*
 * errtail.c: the tool's stderr, kept apart from stdout.  It arrives on a
 * pipe; every byte still goes to the log (the human reads one file, under
 * one cap with stdout: logcap.c), and the last STDERR_KEEP bytes stay
 * here so RESULT's stderr_tail is really stderr and a failure can name
 * the tool's own last words.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "worker.h"
#include "xmalloc.h"

/* Keep the last STDERR_KEEP bytes: older ones slide out. */
static void
errtail_keep(struct errtail *e, const char *p, size_t n)
{
	if (n >= STDERR_KEEP) {
		memcpy(e->buf, p + n - STDERR_KEEP, STDERR_KEEP);
		e->len = STDERR_KEEP;
		return;
	}
	if (e->len + n > STDERR_KEEP) {
		memmove(e->buf, e->buf + (e->len + n - STDERR_KEEP),
		    STDERR_KEEP - n);
		e->len = STDERR_KEEP - n;
	}
	memcpy(e->buf + e->len, p, n);
	e->len += n;
}

/* Cut stderr into lines: CLIs log their API retries there. */
static void
errtail_lines(struct worker *w, const char *p, size_t n)
{
	size_t	i;

	if (w->ad == NULL || w->ad->line == NULL)
		return;
	for (i = 0; i < n; i++) {
		if (p[i] != '\n') {
			if (w->err_line_len < sizeof w->err_line)
				w->err_line[w->err_line_len++] = p[i];
			continue;
		}
		if (adapter_stderr_line(&w->ts, w->err_line, w->err_line_len))
			worker_retry_progress(w);
		w->err_line_len = 0;
	}
}

/*
 * Into the log, after the stdout the tool wrote before (read from the
 * spool first), so that the log keeps the order the tool wrote in as
 * far as we can tell it.
 */
static void
errtail_copy(struct worker *w, const char *p, size_t n)
{
	follow_drain(w, 0);
	logcap_write(&w->log, p, n);
}

/* Read what the pipe holds now; copy it to the log too. */
void
errtail_drain(struct worker *w)
{
	struct errtail	*e = &w->err;
	char		 buf[16384];
	ssize_t		 n;

	while (e->fd >= 0) {
		n = read(e->fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
				errtail_close(w);
			return;
		}
		errtail_copy(w, buf, (size_t)n);
		errtail_keep(e, buf, (size_t)n);
		errtail_lines(w, buf, (size_t)n);
	}
}

/* The pipe became readable. */
static void
errtail_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	errtail_drain(arg);
}

/* Watch the read side of a new turn's stderr pipe (we own fd now). */
void
errtail_open(struct worker *w, int fd)
{
	struct errtail	*e = &w->err;

	errtail_close(w);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	e->fd = fd;
	e->ev = event_new(w->base, fd, EV_READ | EV_PERSIST, errtail_cb, w);
	event_add(e->ev, NULL);
}

/* Stop reading; what was kept stays for the result. */
void
errtail_close(struct worker *w)
{
	struct errtail	*e = &w->err;

	if (e->ev != NULL)
		event_free(e->ev);
	e->ev = NULL;
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
}

/* The last max bytes of stderr, NUL-terminated valid UTF-8 (owned). */
char *
errtail_text(const struct errtail *e, size_t max)
{
	size_t	 n = e->len < max ? e->len : max;
	char	*out = xmalloc(n + 1);

	memcpy(out, e->buf + e->len - n, n);
	out[n] = '\0';
	utf8_sanitize(out, n);
	return out;
}
