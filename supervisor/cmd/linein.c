/*
 * linein.c: the JSON-lines reader `control` and `control --connect`
 * share: complete lines out of a non-blocking descriptor, a line over
 * the limit dropped (and said so), the last line without its LF, then
 * the end; a file or /dev/null (which epoll refuses) read a chunk per
 * loop turn instead; and a line judged as a request object.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "api.h"
#include "linein.h"
#include "xmalloc.h"

struct linein {
	struct evbuffer	*in;
	struct event	*ev;
	linein_line_fn	 line;
	linein_eof_fn	 eof;
	void		*arg;
	unsigned long	 lineno;
	int		 fd;
	int		 file;		/* not pollable: a chunk per loop turn */
	int		 stopped;
	int		 discarding;
	size_t		 scanned;	/* bytes of `in` known to hold no LF */
};

/*
 * Read what the descriptor has and hand over every complete line; 1
 * once the input ended (eof called: li may be gone), else 0.
 */
static int
linein_take(struct linein *li)
{
	struct evbuffer_ptr	 pos;
	char			*line;
	size_t			 len;
	int			 n;

	n = evbuffer_read(li->in, li->fd, 65536);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	/* only the new bytes are searched: a long line costs linear time */
	if (evbuffer_ptr_set(li->in, &pos, li->scanned, EVBUFFER_PTR_SET) == 0)
		pos = evbuffer_search_eol(li->in, &pos, NULL, EVBUFFER_EOL_LF);
	else
		pos.pos = -1;
	while (pos.pos >= 0 &&
	    (line = evbuffer_readln(li->in, &len, EVBUFFER_EOL_LF)) != NULL) {
		li->lineno++;
		if (li->discarding)
			li->discarding = 0;
		else
			li->line(li->arg, li->lineno, line, len);
		free(line);
	}
	li->scanned = evbuffer_get_length(li->in);
	if (evbuffer_get_length(li->in) > LINEIN_MAX) {
		li->line(li->arg, ++li->lineno, NULL, 0);
		evbuffer_drain(li->in, evbuffer_get_length(li->in));
		li->scanned = 0;
		li->discarding = 1;
	}
	if (n <= 0) {
		if (evbuffer_get_length(li->in) > 0 && !li->discarding) {
			line = (char *)evbuffer_pullup(li->in, -1);
			li->line(li->arg, ++li->lineno, line,
			    evbuffer_get_length(li->in));
		}
		linein_stop(li);
		li->eof(li->arg);
		return 1;
	}
	return 0;
}

/*
 * The descriptor is readable (a pipe, socket or terminal), or it is a
 * file's turn: one chunk, then the next on the next loop turn (a zero
 * timeout), so a big file shares the loop with the replies it causes.
 */
static void
linein_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct linein		*li = arg;
	static const struct timeval now = { 0, 0 };

	(void)fd;
	(void)what;
	if (linein_take(li) == 0 && li->file && !li->stopped)
		evtimer_add(li->ev, &now);
}

/*
 * Whether epoll can watch fd: not a regular file or block device, nor a
 * character device other than a terminal (/dev/null); those never block.
 */
static int
linein_pollable(int fd)
{
	struct stat	st;

	if (fstat(fd, &st) != 0)
		return 1;
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		return 0;
	return !S_ISCHR(st.st_mode) || isatty(fd);
}

/*
 * Read lines from fd on base, a pipe's way (made non-blocking) or a
 * file's (chunk by chunk, the same lines and end); NULL on failure.
 */
struct linein *
linein_new(struct event_base *base, int fd, linein_line_fn line,
    linein_eof_fn eof, void *arg)
{
	struct linein		*li = xcalloc(1, sizeof *li);
	static const struct timeval now = { 0, 0 };
	int			 rc;

	li->line = line;
	li->eof = eof;
	li->arg = arg;
	li->fd = fd;
	li->file = !linein_pollable(fd);
	li->in = evbuffer_new();
	if (li->file) {		/* a file never blocks: its flags stay */
		li->ev = evtimer_new(base, linein_read_cb, li);
		rc = li->ev == NULL ? -1 : evtimer_add(li->ev, &now);
	} else {
		evutil_make_socket_nonblocking(fd);
		li->ev = event_new(base, fd, EV_READ | EV_PERSIST,
		    linein_read_cb, li);
		rc = li->ev == NULL ? -1 : event_add(li->ev, NULL);
	}
	if (rc != 0) {
		linein_free(li);
		return NULL;
	}
	return li;
}

/* No more reading (the input ended, or the caller is going). */
void
linein_stop(struct linein *li)
{
	li->stopped = 1;
	if (li->ev != NULL)
		event_del(li->ev);
}

/* The reader and what it buffered. */
void
linein_free(struct linein *li)
{
	if (li == NULL)
		return;
	if (li->ev != NULL)
		event_free(li->ev);
	evbuffer_free(li->in);
	free(li);
}

/*
 * A line as a request: the object (a new reference), or NULL with
 * *errbody (a new error reply naming the line) for what is no request.
 * An empty line is neither: NULL and *errbody NULL.
 */
json_t *
linein_request(unsigned long lineno, const char *line, size_t len,
    json_t **errbody)
{
	json_error_t	 jerr;
	json_t		*req;

	*errbody = NULL;
	if (line == NULL) {
		*errbody = api_error_new(NULL, ERR_INVALID, "line %lu: longer "
		    "than %u bytes, ignored", lineno, LINEIN_MAX);
		return NULL;
	}
	if (len == 0)
		return NULL;
	req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (req == NULL || !json_is_object(req)) {
		*errbody = api_error_new(NULL, ERR_INVALID, "line %lu: %s", lineno,
		    req == NULL ? jerr.text : "a request must be a JSON object");
		json_decref(req);
		return NULL;
	}
	return req;
}
