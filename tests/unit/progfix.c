/*
 * progfix.c: the side-file tests' fixture: a private state directory
 * made and removed, a file's bytes read and written under it.
 */
#include <config.h>

#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "progfix.h"
#include "tap.h"
#include "xmalloc.h"

char	*pf_top;
char	*pf_sdir;
int	 pf_sfd = -1;

/* The private directory and its state directory, open as pf_sfd. */
int
pf_setup(void)
{
	char	tmpl[] = "/tmp/ccw-progress.XXXXXX";

	if (mkdtemp(tmpl) == NULL)
		return -1;
	pf_top = xstrdup(tmpl);
	xasprintf(&pf_sdir, "%s/state", pf_top);
	mkdir(pf_sdir, 0755);
	pf_sfd = open(pf_sdir, O_RDONLY | O_DIRECTORY);
	return pf_sfd < 0 ? -1 : 0;
}

/* Everything made under the private directory goes. */
void
pf_teardown(void)
{
	char	cmd[64];

	close(pf_sfd);
	snprintf(cmd, sizeof cmd, "rm -rf %s", pf_top);
	if (system(cmd) != 0)
		tap_diag("cannot remove %s", pf_top);
	free(pf_sdir);
	free(pf_top);
}

/* A file's whole content, or NULL if it cannot be read. */
char *
pf_read(const char *path)
{
	char	*buf;
	FILE	*f;
	long	 n;

	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = xmalloc(n + 1);
	buf[fread(buf, 1, n, f)] = '\0';
	fclose(f);
	return buf;
}

/* A file under the state directory, whole, or NULL. */
char *
pf_slurp(const char *rel)
{
	char	*path, *buf;

	xasprintf(&path, "%s/%s", pf_sdir, rel);
	buf = pf_read(path);
	free(path);
	return buf;
}

/* Put exact bytes in a file under the state directory. */
void
pf_spew(const char *rel, const char *s)
{
	char	*path;
	FILE	*f;

	xasprintf(&path, "%s/%s", pf_sdir, rel);
	if ((f = fopen(path, "wb")) != NULL) {
		fputs(s, f);
		fclose(f);
	}
	free(path);
}


/* Whether a strv holds a string. */
int
pf_has(const struct strv *sv, const char *s)
{
	size_t	i;

	for (i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return 1;
	return 0;
}

