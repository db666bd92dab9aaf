/*
 * streamfeed.c: read a file of tests/streams/ under $srcdir and feed it
 * line by line, as the worker does: stdout to the adapter's parser,
 * a *.stderr file to adapter_stderr_line.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamfeed.h"
#include "tap.h"
#include "xmalloc.h"

/* Feed through an exact-size copy: valgrind sees any read past a line. */
void
feed_line(const struct adapter *ad, struct tool_stream *ts, const char *s,
    size_t n)
{
	char	*buf;

	buf = xmalloc(n);
	memcpy(buf, s, n);
	if (ad != NULL)
		ad->line(ts, buf, n);
	else
		adapter_stderr_line(ts, buf, n);
	free(buf);
}

/* Each line of tests/streams/NAME to ad (NULL: the stderr reader). */
static int
feed_file(const struct adapter *ad, const char *name, struct tool_stream *ts)
{
	const char	*srcdir;
	char		*path, *line = NULL;
	size_t		 cap = 0;
	ssize_t		 n;
	FILE		*fp;

	if ((srcdir = getenv("srcdir")) == NULL)
		srcdir = ".";
	xasprintf(&path, "%s/tests/streams/%s", srcdir, name);
	fp = fopen(path, "r");
	free(path);
	if (fp == NULL) {
		tap_diag("cannot open %s (set srcdir)", name);
		return -1;
	}
	while ((n = getline(&line, &cap, fp)) != -1) {
		if (n > 0 && line[n - 1] == '\n')
			n--;
		feed_line(ad, ts, line, (size_t)n);
	}
	free(line);
	fclose(fp);
	return 0;
}

/* A fresh stream state fed tests/streams/NAME through tool's parser. */
int
feed(const char *tool, const char *name, struct tool_stream *ts)
{
	const struct adapter	*ad;

	memset(ts, 0, sizeof *ts);
	if ((ad = adapter_find(tool)) == NULL)
		return -1;
	return feed_file(ad, name, ts);
}

/* The tool's stderr (NAME.stderr) into the same stream state. */
int
feed_stderr(const char *name, struct tool_stream *ts)
{
	return feed_file(NULL, name, ts);
}
