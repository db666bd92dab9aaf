/*
 * state-export.c: `ccw-supervisor state export ID [--html] [-o FILE]`:
 * what replay.c gathers of a loop, as JSON, or as its one self-contained
 * HTML document, to FILE (written whole, then renamed) or to stdout.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "replay.h"
#include "state-export.h"
#include "sup.h"
#include "xmalloc.h"

/*
 * FILE whole or not at all: written beside it, then renamed over it, so
 * a browser never opens half a document.
 */
static int
state_export_write(const char *path, const char *p, size_t len, char **err)
{
	char	*tmp;
	int	 fd, rc = -1;

	xasprintf(&tmp, "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	if (fd < 0)
		xasprintf(err, "%s: %s", tmp, strerror(errno));
	else if (fd_write_all(fd, p, len) != 0 || close(fd) != 0) {
		xasprintf(err, "%s: %s", tmp, strerror(errno));
		fd = -1;
	} else if (rename(tmp, path) != 0)
		xasprintf(err, "%s: %s", path, strerror(errno));
	else
		rc = 0;
	if (rc != 0) {
		if (fd >= 0)
			close(fd);
		(void)unlink(tmp);
	}
	free(tmp);
	return rc;
}

/* state export: the loop's replay data or document; the exit status. */
int
state_export(int dirfd, const char *id, int html, const char *out)
{
	json_t	*data;
	char	*err = NULL, *doc;
	size_t	 len;
	int	 rc = 0;

	if ((data = replay_collect(dirfd, id, &err)) == NULL) {
		fprintf(stderr, "ccw-supervisor state export: %s\n", err);
		free(err);
		return EXIT_FAILED;
	}
	if (html)
		doc = replay_render(data, 1, &len);
	else {
		doc = json_dumps(data, JSON_INDENT(2));
		len = strlen(doc);
	}
	json_decref(data);
	if (out != NULL)
		rc = state_export_write(out, doc, len, &err);
	else if (fwrite(doc, 1, len, stdout) != len || (!html &&
	    putchar('\n') == EOF) || fflush(stdout) != 0) {
		xasprintf(&err, "stdout: %s", strerror(errno));
		rc = -1;
	}
	free(doc);
	if (rc != 0) {
		fprintf(stderr, "ccw-supervisor state export: %s\n", err);
		free(err);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}
