/*
 * bqfix.c: the issue-queue tests' fixtures (bqfix.h): a scratch copy of
 * the CCW project under tests/fixtures/queue, files written and read.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bqfix.h"
#include "xmalloc.h"

/* A scratch copy of tests/fixtures/queue; the caller frees and removes. */
char *
bqfix_project(void)
{
	char	*dir, *cmd;
	const char *t = getenv("TMPDIR");

	xasprintf(&dir, "%s/bqfix.XXXXXX", t != NULL ? t : "/tmp");
	if (mkdtemp(dir) == NULL) {
		printf("Bail out! mkdtemp\n");
		exit(1);
	}
	xasprintf(&cmd, "cp -R '%s/queue/.' '%s'", FIXTURES, dir);
	if (system(cmd) != 0) {
		printf("Bail out! %s\n", cmd);
		exit(1);
	}
	free(cmd);
	return dir;
}

/* The scratch directory removed. */
void
bqfix_rm(const char *dir)
{
	char	*cmd;

	xasprintf(&cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	free(cmd);
}

/* dir/rel written with text. */
void
bqfix_put(const char *dir, const char *rel, const char *text)
{
	char	*p;
	FILE	*f;

	xasprintf(&p, "%s/%s", dir, rel);
	if ((f = fopen(p, "w")) == NULL || fputs(text, f) < 0 ||
	    fclose(f) != 0) {
		printf("Bail out! write %s\n", p);
		exit(1);
	}
	free(p);
}

/* dir/rel written with j (indented). */
void
bqfix_put_json(const char *dir, const char *rel, const json_t *j)
{
	char	*s = json_dumps(j, JSON_INDENT(2));

	bqfix_put(dir, rel, s);
	free(s);
}

/* dir/rel read as JSON (NULL when it does not parse). */
json_t *
bqfix_load(const char *dir, const char *rel)
{
	char	*p;
	json_t	*j;

	xasprintf(&p, "%s/%s", dir, rel);
	j = json_load_file(p, 0, NULL);
	free(p);
	return j;
}

/* A JSON value from text; aborts the test on a typo. */
json_t *
bqfix_J(const char *text)
{
	json_error_t	 e;
	json_t		*j = json_loads(text, JSON_DECODE_ANY, &e);

	if (j == NULL) {
		printf("Bail out! fixture: %s: %s\n", e.text, text);
		exit(1);
	}
	return j;
}
