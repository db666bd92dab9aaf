/*
 * test-invalid.c: every file tests/proto/invalid/CASE.bin must be refused
 * with the error named in CASE.err (a fuzz find may say ANY: it must only
 * be survived).
 */
#include <config.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/feed.h"
#include "tap.h"

/* Read a whole file; NULL on error. */
static uint8_t *
slurp(const char *path, size_t *len)
{
	FILE	*fp = fopen(path, "rb");
	uint8_t	*buf;
	long	 n;

	if (fp == NULL)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = malloc((size_t)n + 1);
	*len = fread(buf, 1, (size_t)n, fp);
	buf[*len] = '\0';
	fclose(fp);
	return buf;
}

/* Judge one case. */
static void
run_case(const char *dir, const char *name)
{
	char		 path[4096 + 512];
	uint8_t		*bin, *want;
	size_t		 blen, wlen;
	enum proto_err	 e;
	int		 n;

	snprintf(path, sizeof path, "%s/%s.bin", dir, name);
	bin = slurp(path, &blen);
	snprintf(path, sizeof path, "%s/%s.err", dir, name);
	want = slurp(path, &wlen);
	if (bin == NULL || want == NULL) {
		tap_ok(0, "%s: missing .bin or .err", name);
		free(bin);
		free(want);
		return;
	}
	want[strcspn((char *)want, " \r\n")] = '\0';
	e = feed_stream(bin, blen, PROTO_MAX_BODY, &n);
	if (strcmp((char *)want, "ANY") == 0)
		tap_ok(1, "%s survived (%s)", name, proto_errname(e));
	else
		tap_is_str(proto_errname(e), (char *)want, "%s", name);
	free(bin);
	free(want);
}

int
main(void)
{
	const char	*srcdir = getenv("srcdir");
	char		 dir[4096], name[256];
	struct dirent	*de;
	DIR		*d;
	size_t		 len;
	int		 count = 0;

	snprintf(dir, sizeof dir, "%s/tests/proto/invalid",
	    srcdir != NULL ? srcdir : ".");
	if ((d = opendir(dir)) == NULL) {
		tap_ok(0, "open %s", dir);
		return tap_done();
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 5 || len - 4 >= sizeof name ||
		    strcmp(de->d_name + len - 4, ".bin") != 0)
			continue;
		memcpy(name, de->d_name, len - 4);
		name[len - 4] = '\0';
		run_case(dir, name);
		count++;
	}
	closedir(d);
	tap_ok(count >= 11, "corpus holds the %d required cases or more", count);
	return tap_done();
}
