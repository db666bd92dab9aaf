/*
 * logcap.c: the log file and its cap (ASSIGN options.log_max_bytes).
 * The worker is the log's only writer: the tool's stdout (read from its
 * spool, spool.c) and stderr (errtail.c) come through here in the order
 * they were read.  At the cap the file is compacted in place: its head
 * stays, then a marker line saying how many bytes were dropped there,
 * then the latest output, so the log never passes the cap and always
 * ends with the end of the output (WORKER_RESULT, TAP).  Why a spool and
 * a single writer rather than compacting the file the tool writes: see
 * spool.c.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "worker.h"
#include "xmalloc.h"

#define LOGCAP_SEEK	(64u * 1024)	/* looked at for a line's end */

/*
 * ASSIGN options.log_max_bytes: a non-negative integer, 0 for no cap;
 * absent or anything else gives the default, so an older supervisor's
 * workers are capped too.  A cap below LOGCAP_MIN counts as LOGCAP_MIN:
 * the head, the marker and the latest output need room.
 */
uint64_t
logcap_max(const json_t *options)
{
	json_t		*v = json_object_get(options, "log_max_bytes");
	json_int_t	 n;

	if (!json_is_integer(v) || (n = json_integer_value(v)) < 0)
		return LOGCAP_DEFAULT;
	if (n == 0)
		return 0;
	return (uint64_t)n < LOGCAP_MIN ? LOGCAP_MIN : (uint64_t)n;
}

/*
 * Open (create) the log for our writes; bytes already there count as
 * output (an append, as before the cap).
 */
int
logcap_open(struct logcap *lc, const char *path, uint64_t cap, char **err)
{
	off_t	end;

	memset(lc, 0, sizeof *lc);
	lc->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (lc->fd < 0 || (end = lseek(lc->fd, 0, SEEK_END)) < 0) {
		xasprintf(err, "%s", strerror(errno));
		if (lc->fd >= 0)
			close(lc->fd);
		lc->fd = -1;
		return -1;
	}
	lc->cap = cap;
	lc->size = lc->written = (uint64_t)end;
	return 0;
}

/* Close the log; what is in it stays. */
void
logcap_close(struct logcap *lc)
{
	if (lc->fd >= 0)
		close(lc->fd);
	lc->fd = -1;
}

/* Write at off, all of it, or -1. */
static int
logcap_pwrite(int fd, const char *p, size_t n, uint64_t off)
{
	ssize_t	wr;

	while (n > 0) {
		wr = pwrite(fd, p, n, (off_t)off);
		if (wr < 0 && errno == EINTR)
			continue;
		if (wr <= 0)
			return -1;
		p += wr;
		n -= (size_t)wr;
		off += (uint64_t)wr;
	}
	return 0;
}

/* Append n bytes at the end; -1 when the disk refused them. */
static int
logcap_put(struct logcap *lc, const char *p, size_t n)
{
	if (logcap_pwrite(lc->fd, p, n, lc->size) != 0) {
		if (!lc->failed)
			log_warnx("log: %s", strerror(errno));
		lc->failed = 1;
		return -1;
	}
	lc->size += n;
	lc->written += n;
	return 0;
}

/*
 * The offset just past the first newline in [from, from + LOGCAP_SEEK)
 * and before limit (last: the last newline instead, looking back from
 * from); from itself when there is none.
 */
static uint64_t
logcap_line(const struct logcap *lc, uint64_t from, uint64_t limit, int last)
{
	char		 buf[LOGCAP_SEEK];
	uint64_t	 start = from, len;
	ssize_t		 n;
	char		*nl;

	if (last) {
		start = from > LOGCAP_SEEK ? from - LOGCAP_SEEK : 0;
		len = from - start;
	} else
		len = limit - from < LOGCAP_SEEK ? limit - from : LOGCAP_SEEK;
	if (len == 0 || (n = pread(lc->fd, buf, (size_t)len, (off_t)start))
	    <= 0)
		return from;
	if (last) {
		nl = memrchr(buf, '\n', (size_t)n);
		return nl != NULL ? start + (uint64_t)(nl - buf) + 1 : from;
	}
	nl = memchr(buf, '\n', (size_t)n);
	if (nl == NULL || start + (uint64_t)(nl - buf) + 1 >= limit)
		return from;
	return start + (uint64_t)(nl - buf) + 1;
}

/*
 * The marker line, always mark_len bytes (the count padded with blanks
 * at the line's end), so that the next compaction rewrites it in place.
 */
static size_t
logcap_marker(const struct logcap *lc, uint64_t dropped, char *buf,
    size_t size)
{
	int	n;

	n = snprintf(buf, size, "%s[ccw-worker: %" PRIu64 " bytes dropped "
	    "here; the log keeps its first %" PRIu64 " bytes and its latest "
	    "output under its cap of %" PRIu64 " bytes]", lc->mark_nl ? "\n" :
	    "", dropped, lc->head, lc->cap);
	if (n < 0)
		n = 0;
	if (lc->mark_len == 0)
		return (size_t)n + 1;	/* dropped: UINT64_MAX, the widest */
	memset(buf + n, ' ', lc->mark_len - 1 - (size_t)n);
	buf[lc->mark_len - 1] = '\n';
	return lc->mark_len;
}

/* Copy [src, src + n) of the log to dst (the ranges do not overlap). */
static int
logcap_copy(struct logcap *lc, uint64_t src, uint64_t dst, uint64_t n)
{
	char	 buf[65536];
	loff_t	 in = (loff_t)src, out = (loff_t)dst;
	ssize_t	 got;

	/* In the kernel (a reflink where the filesystem has them)... */
	while (n > 0) {
		got = copy_file_range(lc->fd, &in, lc->fd, &out, (size_t)n, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n -= (uint64_t)got;
	}
	/* ...else (an old kernel, a filesystem without it) by hand. */
	src = (uint64_t)in;
	dst = (uint64_t)out;
	while (n > 0) {
		got = pread(lc->fd, buf, n < sizeof buf ? (size_t)n :
		    sizeof buf, (off_t)src);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || logcap_pwrite(lc->fd, buf, (size_t)got, dst) != 0)
			return -1;
		src += (uint64_t)got;
		dst += (uint64_t)got;
		n -= (uint64_t)got;
	}
	return 0;
}

/*
 * The log reached its cap: keep the head (cut after its last newline),
 * the marker, and the latest quarter of the rest from a line's start, so
 * that no reader takes the tail of "not ok 3" for "ok 3".  Amortised,
 * a byte past the cap is copied a third of a time more (keeping half
 * would copy each once more: `make bench`'s capture figure).
 */
static void
logcap_compact(struct logcap *lc)
{
	char		 mark[512], c = 0;
	uint64_t	 head, keep, src, dst, n;

	if (lc->mark_len == 0) {
		head = lc->cap / 4 < LOGCAP_HEAD ? lc->cap / 4 : LOGCAP_HEAD;
		lc->head = logcap_line(lc, head, 0, 1);
		/* the marker on a line of its own */
		lc->mark_nl = lc->head == head && head > 0 &&
		    (pread(lc->fd, &c, 1, (off_t)head - 1) != 1 || c != '\n');
		lc->mark_len = logcap_marker(lc, UINT64_MAX, mark, sizeof mark);
	}
	keep = (lc->cap - lc->head - lc->mark_len) / 4;
	src = logcap_line(lc, lc->size - keep, lc->size, 0);
	dst = lc->head + lc->mark_len;
	n = lc->size - src;
	if (logcap_copy(lc, src, dst, n) != 0)
		n = 0;		/* the head and the marker at least */
	lc->size = dst + n;
	logcap_marker(lc, lc->written - (lc->size - lc->mark_len), mark,
	    sizeof mark);
	if (logcap_pwrite(lc->fd, mark, lc->mark_len, lc->head) != 0 ||
	    ftruncate(lc->fd, (off_t)lc->size) != 0) {
		if (!lc->failed)
			log_warnx("log: %s", strerror(errno));
		lc->failed = 1;
	}
}

/*
 * Output for the log: appended while under the cap, the file compacted
 * each time it reaches it.  Bytes the disk refuses are lost (said once
 * on our stderr): the run goes on.
 */
void
logcap_write(struct logcap *lc, const char *p, size_t n)
{
	uint64_t	room;

	if (lc->fd < 0)
		return;
	while (n > 0) {
		if (lc->cap == 0 || lc->size + n <= lc->cap) {
			(void)logcap_put(lc, p, n);
			return;
		}
		room = lc->size < lc->cap ? lc->cap - lc->size : 0;
		if (room > 0 && logcap_put(lc, p, (size_t)room) != 0)
			return;
		p += room;
		n -= (size_t)room;
		logcap_compact(lc);
	}
}
