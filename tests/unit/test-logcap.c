/*
 * test-logcap.c: the worker's log under its cap (worker/logcap.c), fed
 * directly: never past the cap after any write, and at the end a prefix
 * of the output ending a line, one marker line whose count adds up, and
 * a suffix of the output starting a line; with and without newlines,
 * with writes larger than the cap, with no cap; options.log_max_bytes.
 */
#include <config.h>

#include <sys/stat.h>

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "worker.h"

#define CAP	(256u * 1024)

/* The whole file, NUL-terminated; *n its size. */
static char *
slurp(const char *path, size_t *n)
{
	struct stat	 sb;
	char		*p;
	int		 fd;

	if ((fd = open(path, O_RDONLY)) < 0 || fstat(fd, &sb) != 0)
		abort();
	p = malloc((size_t)sb.st_size + 1);
	if (p == NULL || read(fd, p, (size_t)sb.st_size) != sb.st_size)
		abort();
	p[sb.st_size] = '\0';
	close(fd);
	*n = (size_t)sb.st_size;
	return p;
}

/*
 * Feed out[0..total) in chunks of up to chunk bytes (varying) under cap,
 * checking the size after every write; then check the file's shape.
 */
static void
run(const char *name, const char *dir, const char *out, size_t total,
    size_t chunk, uint64_t cap, int lines)
{
	struct logcap	 lc;
	char		 path[512], *err = NULL, *f, *m, *e;
	size_t		 off = 0, n, fn, head, kept, tail, mlen;
	uint64_t	 dropped, over = 0;
	unsigned	 k = 0;

	snprintf(path, sizeof path, "%s/%s.log", dir, name);
	if (logcap_open(&lc, path, cap, &err) != 0)
		abort();
	while (off < total) {
		n = chunk / (1 + k++ % 7) + 1;
		if (n > total - off)
			n = total - off;
		logcap_write(&lc, out + off, n);
		off += n;
		if (cap > 0 && lc.size > cap)
			over++;
	}
	logcap_close(&lc);
	tap_ok(over == 0, "%s: never past the cap", name);
	f = slurp(path, &fn);
	tap_ok(fn <= cap && (uint64_t)fn == lc.size, "%s: %zu bytes, the "
	    "size it counts", name, fn);
	m = strstr(f, "[ccw-worker: ");
	if (m == NULL || (e = strchr(m, '\n')) == NULL) {
		tap_ok(0, "%s: a marker line", name);
		free(f);
		return;
	}
	head = (size_t)(m - f);
	mlen = (size_t)(e + 1 - m);
	/* a newline the worker added before the marker is the marker's */
	if (lc.mark_nl)
		head--, mlen++;
	dropped = strtoull(m + 13, NULL, 10);
	kept = fn - mlen;
	tail = fn - head - mlen;
	tap_ok(head <= 1024 * 1024 && head <= cap / 4 &&
	    memcmp(f, out, head) == 0, "%s: the head (%zu bytes) is the "
	    "output's start", name, head);
	tap_ok(memcmp(f + head + mlen, out + total - tail, tail) == 0,
	    "%s: the rest (%zu bytes) is the output's end", name, tail);
	tap_ok(dropped + kept == total, "%s: %" PRIu64 " dropped + %zu "
	    "kept = %zu", name, dropped, kept, total);
	/* (less the start of a line: these lines are short) */
	tap_ok(tail + 4096 >= (cap - head - mlen) / 4, "%s: at least a "
	    "quarter of the rest of the cap is the latest output", name);
	if (lines)
		tap_ok(f[head - 1] == '\n' && out[total - tail - 1] == '\n' &&
		    !lc.mark_nl, "%s: the head ends a line, the rest starts "
		    "one", name);
	else
		tap_ok(lc.mark_nl && f[head] == '\n', "%s: no newline: the "
		    "marker brings its own", name);
	free(f);
}

/* options.log_max_bytes as the worker reads it. */
static void
test_max(void)
{
	json_t	*o = json_object();

	tap_is_int((long long)logcap_max(o), (long long)LOGCAP_DEFAULT,
	    "log_max_bytes absent: the default");
	json_object_set_new(o, "log_max_bytes", json_integer(0));
	tap_is_int((long long)logcap_max(o), 0, "0: no cap");
	json_object_set_new(o, "log_max_bytes", json_integer(1000));
	tap_is_int((long long)logcap_max(o), LOGCAP_MIN, "1000: the minimum");
	json_object_set_new(o, "log_max_bytes", json_integer(-1));
	tap_is_int((long long)logcap_max(o), (long long)LOGCAP_DEFAULT,
	    "-1: the default");
	json_object_set_new(o, "log_max_bytes", json_string("4M"));
	tap_is_int((long long)logcap_max(o), (long long)LOGCAP_DEFAULT,
	    "a string: the default");
	json_object_set_new(o, "log_max_bytes", json_integer(100 << 20));
	tap_is_int((long long)logcap_max(o), 100 << 20, "100 MiB");
	json_decref(o);
}

int
main(void)
{
	char	 dir[] = "/tmp/test-logcap.XXXXXX", path[600], *out;
	size_t	 total = 20 * CAP, i, j = 0;
	struct logcap lc;
	char	*err = NULL, *f;
	size_t	 fn;
	int	 fd;

	if (mkdtemp(dir) == NULL || (out = malloc(total)) == NULL)
		abort();
	/* numbered lines of varying length */
	for (i = 0; i < total; i++) {
		if (i % 97 == 96 || (j > 0 && i % (j * 13 % 300 + 20) == 0)) {
			out[i] = '\n';
			j++;
		} else
			out[i] = (char)('a' + (i + j) % 26);
	}
	run("lines", dir, out, total, 40000, CAP, 1);
	run("big-writes", dir, out, total, 3 * CAP, CAP, 1);
	memset(out, 'x', total);
	run("no-newline", dir, out, total, 70000, CAP, 0);

	/* no cap: all of it */
	snprintf(path, sizeof path, "%s/nocap.log", dir);
	if (logcap_open(&lc, path, 0, &err) != 0)
		abort();
	logcap_write(&lc, out, total);
	logcap_close(&lc);
	f = slurp(path, &fn);
	tap_ok(fn == total && strstr(f, "[ccw-worker") == NULL,
	    "no cap: every byte, no marker");
	free(f);

	/* a log already past the cap when opened: cut at the first write */
	snprintf(path, sizeof path, "%s/before.log", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT, 0600)) < 0 ||
	    write(fd, out, 2 * CAP) != (ssize_t)(2 * CAP))
		abort();
	close(fd);
	if (logcap_open(&lc, path, CAP, &err) != 0)
		abort();
	logcap_write(&lc, "last\n", 5);
	logcap_close(&lc);
	f = slurp(path, &fn);
	tap_ok(fn <= CAP && fn > 5 && memcmp(f + fn - 5, "last\n", 5) == 0,
	    "an old log past the cap: cut, the new line at its end");
	free(f);

	test_max();
	free(out);
	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	if (system(path) != 0)
		tap_diag("cannot remove %s", dir);
	return tap_done();
}
