/*
 * tap.c: reads workers' log files: the TAP a validate run's test command
 * printed, into the state's test_results, failed_tests, pass_rate and
 * passed (tolerant: what is not TAP is skipped, indented subtests are
 * left to their summary line); and a log's last line, for status lines.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "loop.h"
#include "xmalloc.h"

#define TAP_MAX_TESTS	10000		/* more are counted, not listed */
#define TAP_MAX_READ	(16 << 20)	/* bytes of a log read */
#define TAP_MAX_TEXT	500		/* bytes of one name or message */
#define TAP_TAIL	4096		/* bytes read for a log's last line */

/* The counts and lists while a stream is read. */
struct tap_run {
	json_t		*results;
	json_t		*failed;
	json_t		*last;		/* last failure, for diagnostics */
	long long	 planned;	/* -1: no plan */
	long long	 count, npass, nfail, nskip;
	int		 bail, yaml;
	int		 block;		/* a WORKER_RESULT block was printed */
};

/* A piece of a line as a JSON string, cut at a sane length. */
static json_t *
tap_str(const char *p, size_t n)
{
	json_t	*j;

	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	while (n > 0 && (*p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	if (n > TAP_MAX_TEXT) {
		n = TAP_MAX_TEXT;
		while (n > 0 && ((unsigned char)p[n] & 0xc0) == 0x80)
			n--;	/* not in the middle of a character */
	}
	if ((j = json_stringn(p, n)) == NULL)
		j = json_string("(not UTF-8)");
	return j;
}

/* Does the line start with this word (followed by a space or its end)? */
static int
tap_word(const char *p, size_t n, const char *w)
{
	size_t	wl = strlen(w);

	return n >= wl && strncmp(p, w, wl) == 0 &&
	    (n == wl || p[wl] == ' ' || p[wl] == '\t');
}

/* Record one test point in the lists. */
static void
tap_add(struct tap_run *r, json_t *name, const char *status, json_t *error)
{
	json_t	*t;

	r->count++;
	if (strcmp(status, "passed") == 0)
		r->npass++;
	else if (strcmp(status, "failed") == 0) {
		r->nfail++;
		if (json_array_size(r->failed) < TAP_MAX_TESTS)
			json_array_append(r->failed, name);
	} else
		r->nskip++;
	r->last = NULL;
	if (json_array_size(r->results) >= TAP_MAX_TESTS) {
		json_decref(name);
		json_decref(error);
		return;
	}
	t = json_pack("{s:o, s:s, s:s, s:i, s:o, s:n}", "test_name", name,
	    "suite", "tap", "status", status, "duration_ms", 0,
	    "error_message", error != NULL ? error : json_null(),
	    "stack_trace");
	json_array_append_new(r->results, t);
	if (strcmp(status, "failed") == 0)
		r->last = t;
}

/*
 * "ok 3 - name # SKIP why" and "not ok 4 name # TODO later": the number,
 * the dash and the directive are optional.  A TODO that fails is
 * expected to: it is reported skipped, not failed.
 */
static void
tap_point(struct tap_run *r, const char *p, size_t n)
{
	const char	*d, *hash = NULL, *status;
	json_t		*name, *err = NULL;
	size_t		 i, dn;
	int		 ok, skip = 0, todo = 0;
	char		 gen[32];

	ok = tap_word(p, n, "ok");
	i = ok ? 2 : 6;
	while (i < n && (p[i] == ' ' || p[i] == '\t'))
		i++;
	while (i < n && p[i] >= '0' && p[i] <= '9')
		i++;
	while (i < n && (p[i] == ' ' || p[i] == '\t'))
		i++;
	if (i < n && p[i] == '-')
		i++;
	d = p + i;
	dn = n - i;
	for (i = 0; i < dn; i++)
		if (d[i] == '#' && (i == 0 || d[i - 1] != '\\')) {
			hash = d + i;
			break;
		}
	if (hash != NULL) {
		const char	*k = hash + 1;
		size_t		 kn = (size_t)(d + dn - k);

		while (kn > 0 && (*k == ' ' || *k == '\t')) {
			k++;
			kn--;
		}
		skip = kn >= 4 && strncasecmp(k, "skip", 4) == 0;
		todo = kn >= 4 && strncasecmp(k, "todo", 4) == 0;
		if (skip || todo) {
			err = tap_str(k, kn);
			dn = (size_t)(hash - d);
		}
	}
	name = tap_str(d, dn);
	if (json_string_length(name) == 0) {
		json_decref(name);
		snprintf(gen, sizeof gen, "test %lld", r->count + 1);
		name = json_string(gen);
	}
	if (skip || (todo && !ok))
		status = "skipped";
	else
		status = ok ? "passed" : "failed";
	if (!skip && !todo) {
		json_decref(err);
		err = NULL;
	}
	tap_add(r, name, status, err);
}

/* A diagnostic ("# text", or a YAML "message:") explains the last failure. */
static void
tap_diag(struct tap_run *r, const char *p, size_t n)
{
	if (r->last == NULL || !json_is_null(json_object_get(r->last,
	    "error_message")))
		return;
	while (n > 0 && (*p == '#' || *p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	if (n > 0)
		json_object_set_new(r->last, "error_message", tap_str(p, n));
}

/* "WORKER_RESULT:", maybe decorated as Markdown: the worker's own verdict. */
static int
tap_is_block(const char *p, size_t n)
{
	while (n > 0 && strchr(" \t#>*-`_", *p) != NULL) {
		p++;
		n--;
	}
	return n >= 13 && strncmp(p, "WORKER_RESULT", 13) == 0;
}

/* One line of the stream. */
static void
tap_line(struct tap_run *r, const char *p, size_t n)
{
	const char	*t = p;
	size_t		 tn = n, ind = 0;
	long long	 plan;
	char		 buf[32];

	if (tap_is_block(p, n))
		r->block = 1;

	while (tn > 0 && (*t == ' ' || *t == '\t')) {
		t++;
		tn--;
		ind++;
	}
	if (r->yaml) {
		if (tn >= 3 && strncmp(t, "...", 3) == 0)
			r->yaml = 0;
		else if (tn > 8 && strncmp(t, "message:", 8) == 0)
			tap_diag(r, t + 8, tn - 8);
		return;
	}
	if (ind > 0) {
		/* a YAML block after a failure, else a subtest's own lines */
		if (tn >= 3 && strncmp(t, "---", 3) == 0 && r->last != NULL)
			r->yaml = 1;
		return;
	}
	if (tap_word(p, n, "ok") || tap_word(p, n, "not ok"))
		tap_point(r, p, n);
	else if (n >= 9 && strncasecmp(p, "Bail out!", 9) == 0) {
		r->bail = 1;
		tap_add(r, json_string("Bail out!"), "failed",
		    tap_str(p + 9, n - 9));
	} else if (n > 3 && strncmp(p, "1..", 3) == 0 && p[3] >= '0' &&
	    p[3] <= '9') {
		snprintf(buf, sizeof buf, "%.*s", (int)(n - 3 < 20 ? n - 3 :
		    20), p + 3);
		plan = strtoll(buf, NULL, 10);
		if (r->planned < 0 && plan >= 0)
			r->planned = plan;
	} else if (n > 0 && p[0] == '#') {
		if (!(n >= 10 && strncmp(p, "# Subtest:", 10) == 0))
			tap_diag(r, p, n);
	} else if (n >= 3 && strncmp(p, "---", 3) == 0 && r->last != NULL)
		r->yaml = 1;
}

/*
 * The whole stream.  passed needs at least one passing test, no failure,
 * no bail out and no planned test missing; pass_rate counts a missing
 * test as a failure and leaves skipped ones out.  count 0 and planned
 * null: there was no TAP in the text.  worker_result: the text also had
 * a WORKER_RESULT block, whose status then decides the action.
 */
json_t *
tap_parse_text(const char *text, size_t len)
{
	struct tap_run	 r;
	const char	*p = text, *end = text + len, *nl;
	long long	 missing, denom;
	double		 rate = 0;
	size_t		 n;

	memset(&r, 0, sizeof r);
	r.results = json_array();
	r.failed = json_array();
	r.planned = -1;
	while (p < end) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		n = (size_t)(nl - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		tap_line(&r, p, n);
		p = nl + 1;
	}
	missing = r.planned > r.count ? r.planned - r.count : 0;
	denom = r.npass + r.nfail + missing;
	if (denom > 0)
		rate = round((double)r.npass * 1000.0 / (double)denom) / 10.0;
	return json_pack("{s:o, s:o, s:f, s:b, s:o, s:I, s:I, s:I, s:I, s:b,"
	    " s:b}",
	    "test_results", r.results, "failed_tests", r.failed,
	    "pass_rate", rate,
	    "passed", r.nfail == 0 && r.npass > 0 && !r.bail && missing == 0,
	    "planned", r.planned >= 0 ? json_integer(r.planned) : json_null(),
	    "count", (json_int_t)r.count, "npassed", (json_int_t)r.npass,
	    "nfailed", (json_int_t)r.nfail, "nskipped", (json_int_t)r.nskip,
	    "bail_out", r.bail, "worker_result", r.block);
}

/*
 * The TAP a worker put in its answer (DETAILED_OUTPUT, then the summary),
 * where a model indents it, bullets it or fences it: each line loses its
 * leading blanks, one "- " or "* " and backquotes first.  NULL when the
 * answer holds no TAP.  worker_result is true: the answer is the block.
 */
json_t *
tap_parse_answer(const char *detail, const char *summary)
{
	const char	*parts[2] = { detail, summary }, *p, *nl;
	char		*buf, *o;
	size_t		 total = 0, i, n;
	json_t		*j;

	for (i = 0; i < 2; i++)
		total += parts[i] != NULL ? strlen(parts[i]) + 1 : 0;
	if (total == 0)
		return NULL;
	o = buf = xmalloc(total + 1);
	for (i = 0; i < 2; i++) {
		for (p = parts[i]; p != NULL && *p != '\0'; p = nl) {
			if ((nl = strchr(p, '\n')) == NULL)
				nl = p + strlen(p);
			while (p < nl && (*p == ' ' || *p == '\t' ||
			    *p == '`'))
				p++;
			if (nl - p > 2 && (*p == '-' || *p == '*') &&
			    p[1] == ' ' && p[2] != '-')
				p += 2;
			n = (size_t)(nl - p);
			memcpy(o, p, n);
			o += n;
			*o++ = '\n';
			if (*nl == '\n')
				nl++;
		}
	}
	j = tap_parse_text(buf, (size_t)(o - buf));
	free(buf);
	if (json_integer_value(json_object_get(j, "count")) == 0 &&
	    !json_is_integer(json_object_get(j, "planned"))) {
		json_decref(j);
		return NULL;
	}
	json_object_set_new(j, "worker_result", json_true());
	return j;
}

/* A log file's TAP; NULL if it has none, with a reason if unreadable. */
json_t *
tap_parse_file(const char *path, char **err)
{
	struct stat	 sb;
	json_t		*j;
	char		*buf;
	size_t		 len = 0;
	size_t		 want;
	ssize_t		 n;
	int		 fd;

	*err = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) < 0) {
		xasprintf(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		xasprintf(err, "%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	/* a huge log: its end holds the test points that matter most */
	if (sb.st_size > TAP_MAX_READ)
		(void)lseek(fd, sb.st_size - TAP_MAX_READ, SEEK_SET);
	/*
	 * A buffer the size of the log, not of the bound: 16 MiB for every
	 * validate step made a serve's heap grow under churn (glibc raised
	 * its mmap and trim thresholds to that size after the first free,
	 * so the buffer came from the heap, left a 16 MiB hole below newer
	 * blocks and was never given back; bench soak figure, heaptrack).
	 */
	want = sb.st_size < TAP_MAX_READ ? (size_t)sb.st_size : TAP_MAX_READ;
	buf = xmalloc(want + 1);
	while (len < want) {
		n = read(fd, buf + len, want - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			xasprintf(err, "%s: read: %s", path, strerror(errno));
			free(buf);
			close(fd);
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	j = tap_parse_text(buf, len);
	free(buf);
	if (json_integer_value(json_object_get(j, "count")) == 0 &&
	    !json_is_integer(json_object_get(j, "planned"))) {
		json_decref(j);
		return NULL;	/* no TAP in it: no error either */
	}
	return j;
}

/* A log's last non-empty line: printable UTF-8 of at most len-1 bytes. */
void
tap_last_line(const char *path, char *out, size_t len)
{
	char		 buf[TAP_TAIL + 1], *p, *e;
	unsigned char	 c;
	off_t		 end;
	ssize_t		 n;
	size_t		 k, i, cl;
	int		 fd;

	out[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return;
	end = lseek(fd, 0, SEEK_END);
	n = pread(fd, buf, TAP_TAIL, end > TAP_TAIL ? end - TAP_TAIL : 0);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (e = buf + n; e > buf && (e[-1] == '\n' || e[-1] == '\r' ||
	    e[-1] == ' '); e--)
		;
	*e = '\0';
	p = strrchr(buf, '\n');
	p = p != NULL ? p + 1 : buf;
	for (k = 0; *p != '\0' && k + 1 < len; p += cl) {
		c = (unsigned char)*p;
		cl = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 &&
		    c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		for (i = 1; i < cl; i++)
			if (((unsigned char)p[i] & 0xc0) != 0x80)
				cl = 0;		/* (stops at the NUL too) */
		if (cl == 0 || k + cl >= len) {
			if (cl != 0)
				break;		/* no room for the character */
			out[k++] = '?';		/* not UTF-8 */
			cl = 1;
			continue;
		}
		if (cl == 1 && (c < 0x20 || c == 0x7f))
			out[k++] = ' ';
		else {
			memcpy(out + k, p, cl);
			k += cl;
		}
	}
	out[k] = '\0';
}
