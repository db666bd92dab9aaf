/*
 * bqforecast.c: the conflict forecast: the files each batch item names
 * (a JSONL line's "files", a queue item's solution tasks' files[] or
 * modification_points[]) and which items overlap on them: those never
 * run at the same time (batch.c), disjoint ones still do.  Pure.
 */
#include <config.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bqforecast.h"
#include "bqinput.h"
#include "xmalloc.h"

/*
 * A hint as compared: "./" prefixes, doubled and trailing slashes
 * dropped ("." and "" name the whole tree: they overlap everything).
 */
static char *
bqforecast_norm(const char *p)
{
	char	*o = xmalloc(strlen(p) + 1), *d = o;

	while (p[0] == '.' && (p[1] == '/' || p[1] == '\0'))
		for (p++; *p == '/'; p++)
			;
	for (; *p != '\0'; p++) {
		if (*p == '/' && (d == o || d[-1] == '/'))
			continue;
		*d++ = *p;
	}
	while (d > o && d[-1] == '/')
		d--;
	*d = '\0';
	return o;
}

/* One hint into the item's list (a duplicate once). */
static void
bqforecast_add(struct bq_item *it, const char *path)
{
	char	*n = bqforecast_norm(path);
	size_t	 i;

	for (i = 0; i < it->nfiles; i++)
		if (strcmp(it->files[i], n) == 0) {
			free(n);
			return;
		}
	it->files = xreallocarray(it->files, it->nfiles + 1,
	    sizeof *it->files);
	it->files[it->nfiles++] = n;
}

/*
 * A JSONL line's "files": an array of paths relative to the item's root
 * (at most BQ_HINTS_MAX, each 1 to PATH_MAX bytes).  0, or -1 and *err.
 */
int
bqforecast_jsonl(struct bq_item *it, const json_t *v, const char *where,
    char **err)
{
	const json_t	*e;
	size_t		 i;

	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > BQ_HINTS_MAX) {
		xasprintf(err, "%s: \"files\" must be an array of at most %d "
		    "paths", where, BQ_HINTS_MAX);
		return -1;
	}
	json_array_foreach(v, i, e) {
		if (!json_is_string(e) || json_string_length(e) == 0 ||
		    json_string_length(e) > PATH_MAX ||
		    json_string_value(e)[0] == '/') {
			xasprintf(err, "%s: \"files\"[%zu] must be a relative "
			    "path", where, i);
			return -1;
		}
		bqforecast_add(it, json_string_value(e));
	}
	return 0;
}

/*
 * A solution task's hints: files[] (CCW's SolutionTask) or the legacy
 * modification_points[], each a path or an object with "path" or
 * "file" (what bqdesc.c prints).  What is not a path is skipped: CCW's
 * data, never refused for a hint.
 */
void
bqforecast_task(struct bq_item *it, const json_t *task)
{
	const json_t	*f, *e;
	const char	*p;
	size_t		 i;

	f = json_object_get(task, "files");
	if (json_array_size(f) == 0)
		f = json_object_get(task, "modification_points");
	json_array_foreach(f, i, e) {
		if (it->nfiles == BQ_HINTS_MAX)
			return;
		p = json_is_string(e) ? json_string_value(e) :
		    json_string_value(json_object_get(e, "path"));
		if (p == NULL)
			p = json_string_value(json_object_get(e, "file"));
		if (p != NULL && p[0] != '\0' && strlen(p) <= PATH_MAX)
			bqforecast_add(it, p);
	}
}

/* Do two hints overlap: the same path, or one a directory of the other? */
static int
bqforecast_hit(const char *a, const char *b)
{
	size_t	la = strlen(a), lb = strlen(b);

	if (la == 0 || lb == 0)
		return 1;
	if (la > lb)
		return bqforecast_hit(b, a);
	return strncmp(a, b, la) == 0 && (b[la] == '\0' || b[la] == '/');
}

/* The same root (NULL: the batch's)? Items of two roots never clash. */
static int
bqforecast_same_root(const struct bq_item *a, const struct bq_item *b)
{
	if (a->root == NULL || b->root == NULL)
		return a->root == b->root;
	return strcmp(a->root, b->root) == 0;
}

/*
 * The hints a and b share (a's spelling; the shorter of two that are
 * a directory and a file in it), as a new array: empty when disjoint.
 */
json_t *
bqforecast_shared(const struct bq_item *a, const struct bq_item *b)
{
	json_t	*o = json_array();
	size_t	 i, j;

	if (!bqforecast_same_root(a, b))
		return o;
	for (i = 0; i < a->nfiles; i++)
		for (j = 0; j < b->nfiles; j++)
			if (bqforecast_hit(a->files[i], b->files[j])) {
				json_array_append_new(o, json_string(
				    strlen(a->files[i]) <= strlen(b->files[j]) ?
				    (a->files[i][0] != '\0' ? a->files[i] :
				    ".") : b->files[j]));
				break;
			}
	return o;
}

/*
 * The forecast of a whole input: [{"items": [a, b], "files": [..]}],
 * one entry per pair that must never run at once, in item order; and
 * for each item the indices of the items it clashes with (clash[i],
 * nclash[i]: the caller frees them).
 */
json_t *
bqforecast_make(const struct bq_input *in, size_t ***clash, size_t **nclash)
{
	json_t	*out = json_array(), *sh;
	size_t	 i, j;

	*clash = xcalloc(in->nitems > 0 ? in->nitems : 1, sizeof **clash);
	*nclash = xcalloc(in->nitems > 0 ? in->nitems : 1, sizeof **nclash);
	for (i = 0; i < in->nitems; i++) {
		if (in->items[i].nfiles == 0)
			continue;
		for (j = i + 1; j < in->nitems; j++) {
			if (in->items[j].nfiles == 0)
				continue;
			sh = bqforecast_shared(&in->items[i], &in->items[j]);
			if (json_array_size(sh) == 0) {
				json_decref(sh);
				continue;
			}
			json_array_append_new(out, json_pack("{s:[s,s], s:o}",
			    "items", in->items[i].id, in->items[j].id,
			    "files", sh));
			(*clash)[i] = xreallocarray((*clash)[i],
			    (*nclash)[i] + 1, sizeof(size_t));
			(*clash)[i][(*nclash)[i]++] = j;
			(*clash)[j] = xreallocarray((*clash)[j],
			    (*nclash)[j] + 1, sizeof(size_t));
			(*clash)[j][(*nclash)[j]++] = i;
		}
	}
	return out;
}
